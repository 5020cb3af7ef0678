"""End to end with simulated players (firmware_bridge/sim/players.py): whole boards through
the serial chain (virtual readers on ptys, the bridge, mosquitto, the daemon) as people play
them: the face-down lead faced, every trick's cards turned before they are slid off, cards
and calls laid on the previous one (collisions), pauses. The readers stamp the players'
times (``hardware_time``), so the controller judges each turn by them (docs/sensing.md "A
card turned"): every result right, no alert."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from broker import Mosquitto
from test_e2e import rig

from controller.boards.generate import random_board
from controller.formats.events import record_events
from controller.laws.record import BoardRecord
from controller.laws.scoring import score_ns
from controller.service.intake import Intake
from firmware_bridge.sim.players import PlayerHabits, humanize_boards
from firmware_bridge.sim.table import Physics

pytestmark = pytest.mark.timeout(300)

#: the players' events go as fast as the chain takes them, faster than the daemon's bound
#: for a table at play (controller/service/intake.py), which is not under test here
UNBOUNDED = Intake(burst=1_000_000, rate=1_000_000.0)

HABITS = PlayerHabits(seed=41, turn_rate=1.0, late_slide_rate=0.2, early_slide_rate=0.3,
                      hesitate_rate=0.1)


def played_boards(count: int, seed: int) -> tuple[list[BoardRecord], list[dict[str, Any]]]:
    """``count`` random boards, each hand passed across its spot (no deal file), played by
    the simulated players of ``HABITS``."""
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, count + 1)]
    events: list[dict[str, Any]] = []
    for record in records:
        events += record_events(record, sensing="spot", scans=True, deck=str(record.board))
    return records, humanize_boards(events, HABITS)


def check_results(records: list[BoardRecord], results: dict[int, dict[str, Any]]) -> None:
    for record in records:
        result = results[record.board]
        contract, declarer = record.contract, record.declarer
        assert contract is not None
        if declarer is None:
            assert (result["contract"], result["score_ns"]) == ("Pass", 0)
            continue
        won = sum(1 for t in record.tricks if t.winner is not None
                  and t.winner.side is declarer.side)
        assert (result["contract"], result["declarer"], result["tricks"], result["score_ns"]) \
            == (str(contract), declarer.name, won,
                score_ns(contract, declarer, record.vulnerability, won)), record.board
        assert result["irregularities"] == [], record.board


async def test_boards_played_by_people_who_turn_cards_give_no_alert(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    records, events = played_boards(6, seed=41)
    turns = sum(1 for a, b in zip(events, events[1:], strict=False)
                if a["action"] == "removed" and b["action"] == "present"
                and a["uid"] == b["uid"] and a["zone"] == "spot")
    assert turns >= sum(4 * len(r.tricks) for r in records) > 0   # every card turned
    async with rig(mosquitto, tmp_path, physics=Physics(tag_limit=1, seed=41),
                   intake=UNBOUNDED) as r:
        report = await r.table.play(events, strict=True, hardware_time=True)
        assert report.played == len(events) and not report.skipped
        await r.watch.wait(lambda m: m.kind == "result" and m.table == "1"
                           and m.payload["board"] == records[-1].board, timeout=60)
        reads = r.table.reads()
    assert reads["collisions"] > 0 and reads["peak_tags"] == 2   # cards laid on cards
    published = [m.payload for m in r.watch.of("event", "1")]
    seen_turns = sum(1 for a, b in zip(published, published[1:], strict=False)
                     if a["action"] == "removed" and b["action"] == "present"
                     and a["uid"] == b["uid"] and a["zone"] == "spot")
    assert seen_turns >= turns * 0.9   # the turns reached the controller (none debounced)
    assert r.watch.of("alert", "1") == []
    check_results(records, {m.payload["board"]: m.payload for m in r.watch.of("result", "1")})
