"""The ruling log in SQLite: every ruling sent, by whom, on which alert, and the answer.

The ruling record (Law 93 asks for one a committee can read): the facts as the director
found them, the Law applied, a note, the director, the appeal status, the round and the
pairs; what a ruling did (the controller's answer: applied, no change, refused) and, for
one that can be reversed, the ruling that reverses it and whether it was.

It also keeps the console's ``seq`` (the contract's per-``src`` increasing number), so a
restarted console goes on from the last number and the controller never takes a new
ruling for a duplicate.
"""

from __future__ import annotations

import csv
import io
import json
import threading
import time
from pathlib import Path
from typing import Any

from controller.formats.csvcell import csv_cell
from controller.sqlitefile import private_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rulings (
    seq INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    director TEXT NOT NULL,
    table_id TEXT NOT NULL,
    board INTEGER,
    alert INTEGER,
    code TEXT,
    ruling TEXT NOT NULL,
    payload TEXT NOT NULL,
    answer TEXT,
    answer_ts REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""
#: the record's columns added since the first log (an older file gets them on opening)
_ADDED = (("law", "TEXT"), ("facts", "TEXT"), ("note", "TEXT"),
          ("appeal", "TEXT NOT NULL DEFAULT 'none'"), ("round", "INTEGER"),
          ("pairs", "TEXT"), ("reversal", "TEXT"), ("reverses", "INTEGER"),
          ("reversed_by", "INTEGER"))
#: the appeal status of a ruling (Law 92, 93)
APPEALS = ("none", "appealed", "upheld", "changed", "withdrawn")

COLUMNS = ("seq", "ts", "director", "table_id", "board", "alert", "code", "ruling",
           "payload", "answer", "answer_ts", *(name for name, _ in _ADDED))
#: the CSV's columns: readable times, the Law, round and pairs before the payload
CSV_COLUMNS = ("seq", "time", "director", "table_id", "round", "board", "pairs", "alert",
               "code", "ruling", "law", "facts", "note", "appeal", "answer", "answer_time",
               "reverses", "reversed_by", "payload")


class RulingLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = private_sqlite(path, check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._db.execute("PRAGMA journal_mode=WAL")
        have = {row[1] for row in self._db.execute("PRAGMA table_info(rulings)")}
        with self._db:
            for name, kind in _ADDED:
                if name not in have:
                    self._db.execute(f"ALTER TABLE rulings ADD COLUMN {name} {kind}")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def next_seq(self) -> int:
        """Reserve the next ``seq``: stored before the ruling is published."""
        with self._lock, self._db:
            row = self._db.execute("SELECT value FROM meta WHERE key='seq'").fetchone()
            top = self._db.execute("SELECT MAX(seq) FROM rulings").fetchone()[0] or 0
            seq = max(int(row[0]) if row else 0, top) + 1
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('seq', ?)", (str(seq),))
        return seq

    def add(self, *, seq: int, ts: float, director: str, table: str, board: int | None,
            alert: int | None, code: str | None, ruling: str, payload: dict[str, Any],
            law: str | None = None, facts: str | None = None, note: str | None = None,
            round_no: int | None = None, pairs: str | None = None,
            reversal: dict[str, Any] | None = None, reverses: int | None = None,
            answer: str | None = None) -> None:
        """Log a ruling; ``reversal``: the ruling's fields that would undo it (None: it
        cannot be reversed from the console); ``answer`` for one decided at once (an
        adjusted score the console writes itself)."""
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO rulings (seq, ts, director, table_id, board, alert, code, ruling,"
                " payload, law, facts, note, round, pairs, reversal, reverses, answer,"
                " answer_ts) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (seq, ts, director, table, board, alert, code, ruling,
                 json.dumps(payload, separators=(",", ":")), law, facts, note, round_no,
                 pairs, json.dumps(reversal, separators=(",", ":")) if reversal else None,
                 reverses, answer, ts if answer is not None else None))
            if reverses is not None:
                self._db.execute("UPDATE rulings SET reversed_by=? WHERE seq=?",
                                 (seq, reverses))

    def record(self, seq: int, *, facts: str | None = None, note: str | None = None,
               appeal: str | None = None) -> bool:
        """The director completes the record: facts, note, appeal status."""
        if appeal is not None and appeal not in APPEALS:
            raise ValueError(f"appeal must be one of {', '.join(APPEALS)}")
        with self._lock, self._db:
            cur = self._db.execute(
                "UPDATE rulings SET facts=COALESCE(?, facts), note=COALESCE(?, note), "
                "appeal=COALESCE(?, appeal) WHERE seq=?", (facts, note, appeal, seq))
            return cur.rowcount > 0

    def latest(self, table: str, since: float) -> int | None:
        """The last ruling given on ``table`` since ``since`` (what closed a call)."""
        with self._lock:
            row = self._db.execute("SELECT MAX(seq) FROM rulings WHERE table_id=? AND ts>=?",
                                   (table, since)).fetchone()
        return int(row[0]) if row and row[0] is not None else None

    def get(self, seq: int) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM rulings WHERE seq=?",
                                   (seq,)).fetchone()
        return dict(zip(COLUMNS, row, strict=True)) if row else None

    def answer(self, seq: int, answer: str, ts: float) -> bool:
        """Record the controller's answer once (the first one wins)."""
        with self._lock, self._db:
            cur = self._db.execute("UPDATE rulings SET answer=?, answer_ts=? "
                                   "WHERE seq=? AND answer IS NULL", (answer, ts, seq))
            return cur.rowcount > 0

    def unanswered(self) -> dict[int, str]:
        with self._lock:
            rows = self._db.execute("SELECT seq, table_id FROM rulings WHERE answer IS NULL")
            return {int(seq): str(table) for seq, table in rows}

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM rulings ORDER BY seq")
            return [dict(zip(COLUMNS, row, strict=True)) for row in cur]

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(CSV_COLUMNS)
        for row in self.rows():
            row["time"] = readable_time(row["ts"])
            row["answer_time"] = readable_time(row["answer_ts"])
            writer.writerow([csv_cell(row[c]) for c in CSV_COLUMNS])
        return out.getvalue()



def readable_time(ts: float | None) -> str:
    """``2026-12-01 15:08:03 +0000``: the console machine's local time, with its offset."""
    if ts is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(ts))
