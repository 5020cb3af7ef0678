"""``bridge-table demo``: the whole table on one machine, run as a user would."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
from pathlib import Path

import pytest
from boardevents import t08_revoke

from controller.demo import load_board, plan_board
from controller.laws.cards import Card, Seat, Suit

REPO = Path(__file__).resolve().parent.parent


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", "demo", *args],
                          cwd=REPO, capture_output=True, text=True, timeout=240,
                          stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})


@pytest.mark.timeout(300)
def test_demo_without_a_terminal_prints_plain_lines_and_the_result() -> None:
    proc = run_demo("--speed", "40")
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "\x1b[" not in out  # no terminal drawing when stdout is not a tty
    # through the firmware bridge and the virtual readers, not published directly
    assert "publishing the events directly" not in out
    assert "did not report" not in out
    # the revoke opens, gets established, and Law 64A1 moves two tricks: 9 -> 11, +650
    alerts = [line for line in out.splitlines() if line.startswith("[alert]")]
    assert any("REVOKE" in a and "open" in a for a in alerts)
    assert any("REVOKE" in a and "established" in a for a in alerts)
    # each alert after the card that caused it (the controller publishes the alert first)
    lines = out.splitlines()
    revoke = lines.index("[card] Trick 6: East ♥9")
    assert "REVOKE" in lines[revoke + 1] and "open" in lines[revoke + 1], lines[revoke:revoke + 3]
    lead = lines.index("[card] Trick 7: East ♣2")
    assert "established" in lines[lead + 1], lines[lead:lead + 3]
    assert "[result] Board 10: 4H by S, 11 tricks (as played 9), Score NS +650" in out
    assert "[score] NS +650" in out
    pbn = out.split("[pbn]", 1)[1]
    assert '[Board "10"]' in pbn and '[Result "' in pbn and "REVOKE" in pbn
    assert '[South "Sam"]' in pbn


@pytest.mark.timeout(300)
def test_demo_speaks_the_chosen_language() -> None:
    proc = run_demo("--speed", "60", "--lang", "vi")
    assert proc.returncode == 0, proc.stderr[-3000:]
    alerts = [line for line in proc.stdout.splitlines() if line.startswith("[báo lỗi]")]
    assert alerts and all("Điều" in a for a in alerts)
    assert any(line.startswith("[ván] Ván 10") for line in proc.stdout.splitlines())


def test_the_demo_board_is_the_t08_revoke() -> None:
    """The injected revoke reproduces laws.md vector T08 card for card."""
    plan = plan_board(load_board())
    assert plan.revoke == (6, Seat.E, Card.parse("H9"), Suit.D)
    assert [(s, str(c)) for s, c in plan.play] == \
        [(s, str(c)) for s, c in t08_revoke().full_play()]


def test_without_a_revoke_the_demo_plays_the_record() -> None:
    record = load_board()
    plan = plan_board(record, revoke_trick=None)
    assert plan.revoke is None
    assert list(plan.play) == [sc for t in record.tricks for sc in t.cards]
    events = plan.events()
    # the board; each hand passed across its play spot (a present and a removed a card); 7
    # calls, 3 slid off their spot for the seat's next call and 4 tidied away at the end;
    # each card laid on its play spot and quitted
    assert len(events) == 1 + 2 * 52 + 7 + 3 + 4 + 2 * 52
    assert len(plan.events(scans=False)) == len(events) - 2 * 52


def test_revoke_moves_to_a_trick_where_a_defender_can_revoke() -> None:
    record = dataclasses.replace(load_board(), tricks=())  # played out by AUTO
    plan = plan_board(record, revoke_trick=6)
    assert plan.revoke is not None and 6 <= plan.revoke[0] <= 11
    trick, seat, card, led = plan.revoke
    assert seat in (Seat.E, Seat.W) and card.suit is not led


def test_broken_board_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.pbn"
    bad.write_text('[Board "1"]\n[Deal "N:AKQ"]\n')
    proc = run_demo("--board", str(bad))
    assert proc.returncode == 2
    assert "bridge-table demo:" in proc.stderr and "Traceback" not in proc.stderr


def test_the_plans_events_are_the_records_events() -> None:
    """The plan does not write events of its own: as recorded, they are
    ``formats.events.record_events``'s, less what the bridge adds from its readers."""
    from controller.formats.events import record_events

    record = load_board()
    bridge_adds = {"v", "src", "seq", "ts", "uid"}
    assert plan_board(record, revoke_trick=None).events() == [
        {k: v for k, v in e.items() if k not in bridge_adds}
        for e in record_events(record, sensing="spot")]


def test_the_revoking_ruff_wins_its_trick_and_play_goes_on_from_it() -> None:
    plan = plan_board(load_board(), revoke_trick=6)
    tricks = plan.tricks()
    assert len(tricks) == 13 and all(len(t.cards) == 4 for t in tricks)
    assert tricks[5].winner is Seat.E  # ♥9 ruffs the diamond lead: hearts are trumps
    assert tricks[6].leader is Seat.E
    events = plan.events()
    assert [e["card"] for e in events if e["zone"] == "spot" and e["action"] == "present"
            ][52:] == [str(c) for _, c in plan.play]


@pytest.mark.parametrize(("lang", "expected"), [
    ("en", "board 10: 4H by South; East will revoke on trick 6 (♥9 on a lead in diamonds)"),
    ("vi", "ván 10: 4H của Nam; Đông sẽ đánh sai ở nước 6 (♥9 khi cái rô)"),
    ("zh", "第10副：4H 庄家南；东将在第6墩藏牌（方块引牌时出♥9）"),
])
def test_the_plan_line_names_the_card_and_seats_as_the_card_lines_do(
        lang: str, expected: str) -> None:
    from controller.demo.view import plan_text

    assert plan_text(plan_board(load_board()), lang) == expected
