"""End to end with simulated players (firmware_bridge/sim/players.py): whole boards through
the serial chain (virtual readers on ptys, the bridge, mosquitto, the daemon) as people play
them: the face-down lead faced, every trick's cards turned before they are slid off, cards
and calls laid on the previous one (collisions), pauses. The readers stamp the players'
times (``hardware_time``), so the controller judges each turn by them (docs/sensing.md "A
card turned"): every result right, no alert."""

from __future__ import annotations

import asyncio
import random
from pathlib import Path
from typing import Any

import pytest
from broker import Mosquitto
from test_e2e import check_results, kind_is, rig

from controller.boards.generate import random_board
from controller.demo import load_board
from controller.formats.events import record_events
from controller.laws.cards import Seat
from controller.laws.record import BoardRecord
from controller.laws.table import TURN_WINDOW
from controller.service.intake import Intake
from firmware_bridge.collisions import collision_row
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
    gaps = [b["ts"] - a["ts"] for a, b in zip(published, published[1:], strict=False)
            if a["action"] == "removed" and b["action"] == "present"
            and a["uid"] == b["uid"] and a["zone"] == "spot"]
    assert len(gaps) >= turns * 0.9   # the turns reached the controller (none debounced)
    # the threshold against the players: every turn well inside the window
    assert 0.19 <= min(gaps) and max(gaps) <= 1.51 < TURN_WINDOW   # (ms rounding)
    assert r.watch.of("alert", "1") == []
    check_results(records, {m.payload["board"]: m.payload for m in r.watch.of("result", "1")})


async def test_a_card_laid_on_the_last_one_is_shown_to_its_seat_until_the_spot_is_clear(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """The leader lays his card on his last trick's card: at once his alert light and the
    display ask him to slide the old card off; once it is off, both are as before."""
    record = load_board()
    assert record.deal is not None
    events = record_events(record, sensing="spot", scans=False)
    first = next(i for i, e in enumerate(events) if e["zone"] == "spot"
                 and e["action"] == "removed")
    block, lead = events[first:first + 4], events[first + 4]
    at = next(k for k, e in enumerate(block) if e["seat"] == lead["seat"])
    seat = lead["seat"]
    async with rig(mosquitto, tmp_path, deals={record.board: record.deal_info}) as r:
        await r.play(events[:first] + block[:at] + block[at + 1:])
        assert not r.leds(seat)[1] and not any("slide" in row for row in r.display.lines)
        report = await r.table.play([lead], strict=True)     # laid on the old card
        assert report.played == 1
        assert await r.alert_led_lit(seat, within=5)
        assert await _shows(r.display, lambda rows: rows[-1] == collision_row(seat, "spot", "en"))
        await r.play([block[at]])                            # the old card slid off
        await r.watch.wait(lambda m: m.kind == "event" and m.table == "1"
                           and m.payload.get("card") == lead["card"], timeout=15)
        assert not r.leds(seat)[1]
        assert await _shows(r.display, lambda rows: not any("slide" in row for row in rows))
    assert r.watch.of("alert", "1") == []


async def _shows(display: Any, check: Any, within: float = 5.0) -> bool:
    """Whether the display's rows pass ``check`` within ``within`` s (it draws from its own
    thread, the latest indicator winning)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + within
    while loop.time() < end:
        if check(list(display.lines)):
            return True
        await asyncio.sleep(0.02)
    return False


@pytest.mark.timeout(1200)
async def test_soak_200_boards_played_by_people_through_the_serial_chain(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Issue 41's soak: 200 random boards played by the simulated players (turns at every
    trick, cards and calls laid on the previous ones, early slides, pauses) through the
    virtual readers, the bridge, mosquitto and the daemon: every result right, no alert.
    Six sessions of 34 boards (the simulated table's tags name 36 boards; a board played
    twice at a table is Law 15's); every tenth board's hands are passed across the spots
    (no deal for it), the others' deals are the controller's deal file. As fast as the
    chain takes it."""
    rng = random.Random(4141)
    played = collisions = 0
    for session in range(6):
        count = 34 if session < 5 else 200 - 5 * 34
        records = [random_board(rng, n).record for n in range(1, count + 1)]
        events: list[dict[str, Any]] = []
        for record in records:
            events += record_events(record, sensing="spot", scans=record.board % 10 == 0,
                                    deck=str(record.board))
        events = humanize_boards(events, PlayerHabits(**{**HABITS.__dict__,
                                                         "seed": 4141 + session}))
        deals = {r.board: r.deal_info for r in records if r.board % 10 and r.deal is not None}
        async with rig(mosquitto, tmp_path / str(session),
                       physics=Physics(tag_limit=1, seed=session),
                       deals=deals, intake=UNBOUNDED) as r:
            report = await r.table.play(events, strict=True, hardware_time=True)
            assert report.played == len(events) and not report.skipped
            last = records[-1].board
            try:
                # (not the last session's result, retained by the broker)
                await r.watch.wait(lambda m, last=last: m.kind == "result" and m.table == "1"
                                   and m.payload["board"] == last and not m.retain,
                                   timeout=120)
            except TimeoutError:
                seen = {m.payload["board"] for m in r.watch.of("result", "1")
                        if not m.retain}
                pytest.fail(f"session {session}: no result for boards "
                            f"{sorted(set(range(1, count + 1)) - seen)}; alerts "
                            f"{[m.payload for m in r.watch.of('alert', '1')][:3]}; "
                            f"reads {r.table.reads()}")
            collisions += r.table.reads()["collisions"]
        assert r.watch.of("alert", "1") == [], session
        results = {m.payload["board"]: m.payload for m in r.watch.of("result", "1")
                   if not m.retain}
        assert len(results) == count
        check_results(records, results)
        played += count
    assert played == 200 and collisions > 100


async def test_a_card_lifted_and_held_is_shown_withdrawn_by_the_controllers_clock(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Law 47 through the daemon: a played card lifted from its spot and held (no other
    event follows) is read as withdrawn once the turn window has passed, by the daemon's
    clock (``Engine.settle``); laid again, the alert is resolved."""
    record = load_board()
    assert record.deal is not None
    events = record_events(record, sensing="spot", scans=False)
    plays = [i for i, e in enumerate(events) if e["zone"] == "spot" and e["action"] == "present"]
    second = events[plays[5]]           # the second card of trick 2, on its spot
    async with rig(mosquitto, tmp_path, deals={record.board: record.deal_info}) as r:
        await r.play(events[:plays[5] + 1])
        assert r.watch.of("alert", "1") == []
        await r.play([dict(second, action="removed")])
        alert = await r.watch.wait(kind_is("alert"), timeout=15)
        assert (alert.payload["code"], alert.payload["law"], alert.payload["status"],
                alert.payload["seat"]) == ("CARD_WITHDRAWN", "47", "open", second["seat"])
        await r.play([second])
        await r.watch.wait(lambda m: m.kind == "alert" and m.table == "1"
                           and m.payload["status"] == "resolved", timeout=15)


async def test_a_played_card_lifted_and_another_laid_is_what_the_laws_say(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Laws 45/47 through the chain: a played card lifted and another card of the same
    hand laid on the spot is no turn: the card lifted was withdrawn and stays played
    (Law 47), as on a tray (tests/test_law65_turned_cards.py compares the two in the
    core, both editions)."""
    record = load_board()
    assert record.deal is not None
    events = record_events(record, sensing="spot", scans=False)
    plays = [i for i, e in enumerate(events) if e["zone"] == "spot" and e["action"] == "present"]
    second = events[plays[5]]
    seat = second["seat"]
    played = {e.get("card") for e in events[:plays[5] + 1]}
    other = next(str(c) for c in sorted(record.deal[Seat[seat]]) if str(c) not in played)
    async with rig(mosquitto, tmp_path, deals={record.board: record.deal_info}) as r:
        await r.play(events[:plays[5] + 1])
        await r.play([dict(second, action="removed"), dict(second, card=other, uid="")])
        alert = await r.watch.wait(kind_is("alert"), timeout=15)
    assert (alert.payload["code"], alert.payload["law"], alert.payload["seat"]) == (
        "CARD_WITHDRAWN", "47", seat)
