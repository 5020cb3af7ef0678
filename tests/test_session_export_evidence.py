"""``bridge-table export`` writes the director's evidence into the session's records: the
time of every call and card and the tempo flags (PBN supplemental tags, a LIN note), and a
claim's double-dummy check (controller/session/export.py; docs/tempo.md, docs/claims.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from boardevents import BoardScript, clean_board
from test_evidence import stamped
from test_session_export import _outs, write_session

from controller.evidence.claims import check_claim
from controller.formats.lin import read_lin
from controller.formats.pbn import read_pbn
from controller.laws.cards import Seat, Suit
from controller.service.engines import build_engine

ep_pbn = pytest.importorskip("endplay.parsers.pbn")
STEM = "club-pairs-2026-11-30-1"


def export(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    session = write_session(tmp_path)
    engine = build_engine(session=session)
    lines: list[dict[str, Any]] = []
    # table 1, board 9: played out; E's pass after N's skip to 4H takes 20 s, a card 30 s
    for ev in stamped(clean_board(9), {5: 20.0}, {9: 30.0}):
        lines += _outs(engine.handle("bridge/1/event", {**ev, "src": "table-1-pi"}))
    # table 2, board 11: six tricks, then declarer claims all seven left
    full = clean_board(11)
    played = [str(c) for _, c in full.full_play()[:24]]
    script = BoardScript(board=11, deal=full.deal, calls=full.calls, play=played,
                         auto=False, trump=Suit.H, declarer=Seat.S)
    for ev in stamped(script, hands_back=False):
        lines += _outs(engine.handle("bridge/2/event", {**ev, "src": "table-2-pi"}))
    lines += _outs(engine.handle("bridge/2/ruling", {"v": 1, "src": "td", "seq": 1, "ts": 9.0,
                                                     "ruling": "claim", "tricks": 7}))
    path = tmp_path / "published.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(path), "--out", str(out)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return out, lines


def test_tempo_and_claim_in_the_pbn_and_lin_records(tmp_path: Path) -> None:
    out, lines = export(tmp_path)
    text = (out / f"{STEM}.pbn").read_text(encoding="utf-8")
    ours = read_pbn(text)
    assert ours.errors == []
    records = {(r.table, r.board): r for r in ours.records()}
    played = records[("1", 9)].tags
    # every call and card with its time, the flags marked
    rows = played["TempoTable"].split("\n")
    assert rows[0] == "Seat;Call;Trick;Card;Seconds;Flag"
    assert len(rows) == 1 + len(records[("1", 9)].auction) + 52
    assert "E Pass - - 20.0 slow_pass_after_skip" in rows
    assert sum(1 for r in rows if r.endswith("slow_card")) == 1
    assert "slow pass after skip, Law 16B" in played["TempoFlag"]
    assert "Law 73D1" in played["TempoFlag"]
    assert "ClaimCheck" not in played
    # the claim, checked double dummy here; the same answer as on the evidence topic
    claim = [line["payload"] for line in lines if line["topic"] == "bridge/2/evidence"][-1]
    expected = check_claim(claim["claim"])
    assert records[("2", 11)].tags["ClaimCheck"] == expected.describe()
    assert f"double dummy {expected.makeable}" in records[("2", 11)].tags["ClaimCheck"]
    assert "TempoFlag" not in records[("2", 11)].tags
    # endplay reads the file with the new tags
    with open(out / f"{STEM}.pbn", encoding="utf-8") as fp:
        assert len(ep_pbn.load(fp)) == 2
    # LIN: one note at the end of each board's line, read back as before
    lin_text = (out / f"{STEM}.lin").read_text(encoding="utf-8")
    assert "nt|Tempo: E Pass" in lin_text and "Law 16B" in lin_text
    assert f"nt|Claim: S 7 of 7; double dummy {expected.makeable}" in lin_text
    assert read_lin(lin_text).errors == []


BLOCKED = """
import sys
sys.modules["endplay"] = None          # the dd extra not installed
sys.argv = ["bridge-table", "export", {session!r}, "--results", {results!r}, "--out", {out!r},
            "--format", "pbn"]
from controller.cli import main
sys.exit(main())
"""


def test_without_endplay_the_export_says_the_claim_was_not_checked(tmp_path: Path) -> None:
    out, _ = export(tmp_path)
    again = tmp_path / "again"
    code = BLOCKED.format(session=str(tmp_path / "session.toml"),
                          results=str(tmp_path / "published.jsonl"), out=str(again))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    records = {(r.table, r.board): r for r in read_pbn(
        (again / f"{STEM}.pbn").read_text(encoding="utf-8")).records()}
    assert records[("2", 11)].tags["ClaimCheck"].startswith(
        "claim not checked: endplay is not installed")
    assert "slow_card" in records[("1", 9)].tags["TempoTable"]
