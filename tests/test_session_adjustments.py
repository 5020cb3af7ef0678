"""The adjustment API (controller.session.adjustments): what the console writes, score reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from controller.session import (
    Adjustment,
    SessionError,
    load_session,
    parse_adjustment,
    read_results,
    remove_adjustment,
    set_adjustment,
    with_adjustments,
)
from controller.session.report import pairs_report

SESSION = ('# the club\'s Monday session\n[session]\nevent = "E"\ndate = "2026-12-01"\n'
           '[movement]\ntype = "mitchell"\ntables = 3\nboards_per_round = 2\n'
           '[[adjustment]]   # a slow play penalty\ntable = "1"\nboard = 1\nns = "A-"\n'
           '[pairs]\n1 = ["Ann", "Bob"]\n')


def test_set_replace_and_remove_an_adjustment(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SESSION)
    session = set_adjustment(path, Adjustment("2", 3, ns="55%", ew="45%"))
    assert {(a.table, a.board, a.ns, a.ew) for a in session.adjustments} == {
        ("1", 1, "A-", "A="), ("2", 3, "55%", "45%")}
    assert load_session(path).adjustments == session.adjustments
    session = set_adjustment(path, Adjustment("1", 1, split=(620, 650)))
    assert {(a.table, a.board, a.split) for a in session.adjustments} == {
        ("1", 1, (620, 650)), ("2", 3, None)}
    text = path.read_text()
    assert text.startswith("# the club's Monday session\n") and "[pairs]" in text
    assert "slow play" not in text               # the replaced entry went, with its comment
    session = remove_adjustment(path, "2", 3)
    assert [(a.table, a.board) for a in session.adjustments] == [("1", 1)]
    # the scores follow: table 1's split is scored, table 2's result again
    lines = [json.dumps({"table": t, "board": 1, "contract": "4S", "declarer": "N",
                         "tricks": 10, "score_ns": s}) for t, s in (("1", 420), ("2", 450),
                                                                      ("3", 420))]
    report = pairs_report(load_session(path), read_results(lines))
    (board1,) = [b for b in report["boards"] if b["board"] == 1]
    assert {r["table"]: r["score"] for r in board1["results"]} == {
        "1": "+620/+650", "2": "+450", "3": "+420"}


@pytest.mark.parametrize("row", [
    {"table": "9", "board": 1, "ns": "A+"},
    {"table": "1", "board": 1, "ns": "120%"},
    {"table": "1", "board": 1, "ns": "A+++"},
    {"table": "1", "board": 1, "nss": "A+"},
])
def test_a_bad_adjustment_is_refused_and_the_file_kept(tmp_path: Path,
                                                       row: dict[str, object]) -> None:
    path = tmp_path / "s.toml"
    path.write_text(SESSION)
    session = load_session(path)
    with pytest.raises(SessionError):
        parse_adjustment(session, row)
    adj = Adjustment(str(row["table"]), 1, ns=str(row.get("ns", "A+")))
    if "nss" not in row:
        with pytest.raises(SessionError):
            set_adjustment(path, adj)
        with pytest.raises(SessionError):
            with_adjustments(session, [adj])
    assert path.read_text() == SESSION
