"""controller/web/console/store.py: the ruling log and the console's seq survive a restart."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from controller.web.console.store import RulingLog


def _add(log: RulingLog, seq: int) -> None:
    log.add(seq=seq, ts=1.0, director="Ada", table="7", board=10, alert=1, code="REVOKE",
            ruling="adjust", payload={"ruling": "adjust", "tricks": 10, "seq": seq})


def test_seq_goes_on_after_a_restart(tmp_path: Path) -> None:
    log = RulingLog(tmp_path / "c.sqlite")
    assert log.next_seq() == 1
    _add(log, 1)
    assert log.next_seq() == 2      # reserved even if never logged (publish failed)
    log.close()
    log = RulingLog(tmp_path / "c.sqlite")
    assert log.next_seq() == 3
    assert [r["seq"] for r in log.rows()] == [1]
    log.close()


def test_answers_and_csv(tmp_path: Path) -> None:
    log = RulingLog(tmp_path / "c.sqlite")
    _add(log, 1)
    _add(log, 2)
    assert log.unanswered() == {1: "7", 2: "7"}
    assert log.answer(1, "applied", 2.0)
    assert not log.answer(1, "refused: late", 3.0)   # the first answer stands
    assert log.unanswered() == {2: "7"}
    rows = list(csv.DictReader(io.StringIO(log.csv())))
    assert [r["answer"] for r in rows] == ["applied", ""]
    assert rows[0]["director"] == "Ada" and rows[0]["code"] == "REVOKE"
    assert '"tricks":10' in rows[0]["payload"]
    log.close()


def test_an_older_log_gets_the_record_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    import sqlite3
    db = tmp_path / "old.sqlite"
    con = sqlite3.connect(db)
    con.executescript("""CREATE TABLE rulings (seq INTEGER PRIMARY KEY, ts REAL NOT NULL,
        director TEXT NOT NULL, table_id TEXT NOT NULL, board INTEGER, alert INTEGER,
        code TEXT, ruling TEXT NOT NULL, payload TEXT NOT NULL, answer TEXT, answer_ts REAL);
        INSERT INTO rulings VALUES (4, 1.0, 'Ada', '7', 10, NULL, NULL, 'undo', '{}', NULL,
        NULL);""")
    con.commit()
    con.close()
    log = RulingLog(db)
    assert log.next_seq() == 5
    assert log.record(4, facts="a misread", appeal="upheld")
    assert not log.record(99, note="none such")
    row = log.get(4)
    assert row is not None and row["facts"] == "a misread" and row["appeal"] == "upheld"
    try:
        log.record(4, appeal="lost")
    except ValueError:
        pass
    else:
        raise AssertionError("an unknown appeal status was taken")
    rows = list(csv.DictReader(io.StringIO(log.csv())))
    # a readable local time with its offset (1970-01-01 or, west of Greenwich, the day before)
    assert rows[0]["time"][:4] in ("1970", "1969") and rows[0]["time"][-5] in "+-"
    assert rows[0]["appeal"] == "upheld"
    log.close()


def test_the_last_ruling_on_a_table_since_a_call(tmp_path: Path) -> None:
    log = RulingLog(tmp_path / "c.sqlite")
    _add(log, 1)                               # table 7 at ts 1.0
    assert log.latest("7", 0.5) == 1 and log.latest("7", 2.0) is None
    assert log.latest("8", 0.0) is None
    log.close()


def test_csv_cells_that_start_a_formula_are_neutralised_and_the_log_is_private(
        tmp_path: Path) -> None:
    log = RulingLog(tmp_path / "c.sqlite")
    assert (tmp_path / "c.sqlite").stat().st_mode & 0o777 == 0o600
    typed = ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)",
             "\tx", "\rx", "plain"]
    for seq, text in enumerate(typed, 1):
        log.add(seq=seq, ts=1.0, director=text, table="7", board=10, alert=None,
                code="REVOKE", ruling="adjust", payload={"seq": seq})
        log.record(seq, facts=text, note=text)
    rows = list(csv.DictReader(io.StringIO(log.csv())))
    for row, text in zip(rows, typed, strict=True):
        for column in ("director", "facts", "note"):
            expected = text if text == "plain" else "'" + text
            assert row[column] == expected, (column, row[column])
    assert rows[0]["board"] == "10" and rows[0]["seq"] == "1"   # numbers stay numbers
    log.close()
