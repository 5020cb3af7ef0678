"""firmware_bridge/sim/players.py: simulated players turn cards, slide late or early and
hesitate; the controller reads their boards with no alert and the same results."""

from __future__ import annotations

import random
from typing import Any

from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import record_events
from firmware_bridge.sim.players import OFF, PlayerHabits, humanize

HABITS = PlayerHabits(seed=7, turn_rate=1.0, late_slide_rate=0.3, early_slide_rate=0.3,
                      hesitate_rate=0.2)


def _run(events: list[dict[str, Any]]) -> tuple[list[Any], list[Any]]:
    engine = Engine()
    out = []
    for seq, event in enumerate(events, start=1):
        out += engine.handle("bridge/1/event", dict(event, seq=seq, src="pi", v=1))
    alerts = [o.payload for o in out if o.topic.endswith("/alert")]
    results = [(r["board"], r["tricks"], r["score_ns"])
               for r in (o.payload for o in out if o.topic.endswith("/result"))]
    return alerts, results


def test_players_who_turn_and_slide_late_raise_nothing_and_score_the_same() -> None:
    rng = random.Random(41)
    turns = 0
    for number in range(1, 25):
        events = record_events(random_board(rng, number).record, sensing="spot",
                               ts_start=1_700_000_000.0 + 10_000 * number)
        played = humanize(events, PlayerHabits(**{**HABITS.__dict__, "seed": number}))
        turns += sum(1 for a, b in zip(played, played[1:], strict=False)
                     if a.get("uid") == b.get("uid") and a["action"] == "removed"
                     and b["action"] == "present")
        alerts, results = _run(played)
        assert alerts == [], (number, alerts)
        assert results == _run(events)[1], number
    assert turns > 24 * 40   # the lead faced and the cards of (nearly) every trick turned


def test_without_habits_the_events_are_the_boards_own_and_seeded_runs_repeat() -> None:
    events = record_events(random_board(random.Random(3), 3).record, sensing="spot")
    plain = humanize(events, OFF)
    assert [(e["zone"], e["action"], e["uid"]) for e in plain] == \
        [(e["zone"], e["action"], e["uid"]) for e in events]
    assert humanize(events, HABITS) == humanize(events, HABITS)
    assert humanize(events, HABITS) != humanize(events, PlayerHabits(seed=8))
    # every turn is back within the human range, on the same spot
    played = humanize(events, HABITS)
    gaps = [b["ts"] - a["ts"] for a, b in zip(played, played[1:], strict=False)
            if a.get("uid") == b.get("uid") and a["action"] == "removed"
            and b["action"] == "present" and a["zone"] == "spot"]
    assert gaps and all(0.2 <= g <= 1.5 for g in gaps)


def test_habits_out_of_range_are_named() -> None:
    assert PlayerHabits().problems() == []
    assert PlayerHabits(turn_rate=2.0, turn_time=(1.0, 0.5)).problems() == [
        "turn_rate must be from 0 to 1, not 2.0",
        "turn_time must be 0 <= low <= high, not 1.0..0.5"]


def test_a_file_of_boards_is_played_board_by_board() -> None:
    from firmware_bridge.sim.players import humanize_boards
    rng = random.Random(5)
    events = [e for n in (1, 2, 3) for e in record_events(
        random_board(rng, n).record, sensing="spot", ts_start=1_700_000_000.0 + 1000 * n)]
    played = humanize_boards(events, HABITS)
    assert [e["ts"] for e in played] == sorted(e["ts"] for e in played)
    alerts, results = _run(played)
    assert alerts == [] and results == _run(events)[1] and len(results) == 3


def test_dummys_cards_are_laid_on_dummys_spot_and_read_as_dummys() -> None:
    """docs/sensing.md, "Dummy's cards": declarer plays each of dummy's cards onto dummy's
    play spot; the players turn them there too; the controller has them as dummy's."""
    rng = random.Random(12)
    record = next(r for r in (random_board(rng, n).record for n in range(1, 40))
                  if r.declarer is not None and r.deal is not None)
    assert record.declarer is not None and record.deal is not None
    dummy = record.declarer.partner
    events = humanize(record_events(record, sensing="spot", scans=False), HABITS)
    dummy_cards = {str(c) for c in record.deal[dummy]}
    laid = [e for e in events if e["zone"] == "spot" and e.get("card") in dummy_cards]
    assert laid and all(e["seat"] == dummy.name for e in laid)
    engine = Engine()
    for seq, event in enumerate(events, start=1):
        engine.handle("bridge/1/event", dict(event, seq=seq, src="pi", v=1))
    board = engine._tables["1"].table.board
    assert board is not None and board.play is not None
    played = {str(c) for t in board.play.tricks for s, c in t.cards if s is dummy}
    assert played == dummy_cards
