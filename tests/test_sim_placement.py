"""The simulated table built from a geometry (firmware_bridge/sim/placement.py): a card is
read where the field model says, so each shipped geometry plays whole boards with nothing
read twice (here, and end to end in tests/test_e2e.py's whole-boards test), and a geometry
whose trick row lies within its play spot's reach makes the table do what a real one would:
the quitted card read again on the spot, every later card of that seat a collision."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from broker import Mosquitto
from test_e2e import rig

from controller.demo import load_board
from controller.formats.events import record_events
from firmware_bridge.layout.geometry import Geometry, load_geometry
from firmware_bridge.sim.placement import geometry_layout, geometry_readers, geometry_table

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = sorted((ROOT / "hw_configs").glob("geometry-*.toml"))
ROW_IN_RANGE = ROOT / "tests" / "data" / "layout" / "row-in-range.toml"
DUMMY_OVER_BOARD = ROOT / "tests" / "data" / "layout" / "dummy-over-board.toml"
WALLET_IN_RANGE = ROOT / "tests" / "data" / "layout" / "wallet-in-range.toml"


def _geometry(path: Path) -> Geometry:
    geometry, problems = load_geometry(path)
    assert geometry is not None, problems
    return geometry


def _board_events() -> list[dict[str, Any]]:
    record = load_board()
    return record_events(record, sensing="spot", scans=True, deck=str(record.board))


def test_the_simulated_readers_are_the_geometrys() -> None:
    club = _geometry(ROOT / "hw_configs" / "geometry-club.toml")
    names = [spec.name for spec in geometry_layout(club)]
    assert sorted(names) == sorted(["north", "east", "south", "west", "north-call",
                                    "east-call", "south-call", "west-call", "board"])
    readers = {r["name"]: r for r in geometry_readers(club)}
    assert readers["north-call"]["antennas"] == {"0": {"zone": "bid", "seat": "N"}}
    assert readers["board"] == {"name": "board", "url": "sim://1/board", "kind": "tap",
                                "antennas": {"0": {"zone": "board"}}}
    boards = {r["name"]: r for r in geometry_readers(_geometry(SHIPPED[0]))}
    assert boards["west"]["antennas"] == {"0": {"zone": "spot", "seat": "W"},
                                          "1": {"zone": "bid", "seat": "W"}}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
async def test_a_shipped_geometry_reads_each_card_only_where_it_is_laid(path: Path) -> None:
    events = _board_events()
    async with geometry_table(_geometry(path), heartbeat_interval=None) as table:
        report = await table.play(events, strict=True)
        reads = table.reads()
        placement = table.placement
    assert report.played == len(events)
    assert placement is not None and placement.cross_reads == 0  # type: ignore[attr-defined]
    assert (reads["peak_tags"], reads["collisions"]) == (1, 0)
    # the quitted cards did go to the rows, and dummy's hand was spread in dummy's area (a
    # positive control for the placement)
    assert sum(len(row) for row in placement.rows.values()) > 0  # type: ignore[attr-defined]
    assert placement.dummy_cards == 13  # type: ignore[attr-defined]


async def test_dummys_hand_spread_over_the_board_reader_is_read_by_it() -> None:
    """Law 41D: dummy's hand lies face up from the opening lead; spread over the board
    reader, the card lying on its loop is read by it, as the board reader would."""
    events = _board_events()
    async with geometry_table(_geometry(DUMMY_OVER_BOARD), heartbeat_interval=None) as table:
        await table.play(events, strict=True)
        placement = table.placement
        registry = table.registry
    log = placement.read_log  # type: ignore[attr-defined]
    assert [antenna for _, antenna in log] == ["board"]
    uid, _ = log[0]
    dummy_plays = {registry.uid_for_card(str(e["deck"]), str(e["card"])) for e in events
                   if e["zone"] == "spot" and e["seat"] == "N" and e["action"] == "present"}
    assert uid in dummy_plays


async def test_the_wallet_rests_in_its_place_read_only_where_the_check_says() -> None:
    """Tapped, the wallet lies in its place in the centre (Law 7A): on a shipped geometry no
    antenna reads it there; 22 mm nearer the board reader (the planted wallet-in-range), the
    board reader does."""
    events = _board_events()
    for path, read_by in ((SHIPPED[1], []), (WALLET_IN_RANGE, ["board"])):
        async with geometry_table(_geometry(path), heartbeat_interval=None) as table:
            await table.play(events, strict=True)
            placement = table.placement
        wallets = placement.rows[("wallet", "")]  # type: ignore[attr-defined]
        assert len(wallets) == 1
        assert placement.read_log == [(wallets[0], name)  # type: ignore[attr-defined]
                                      for name in read_by], path.name


async def test_a_row_within_its_spots_reach_is_read_on_the_spot_again() -> None:
    geometry = _geometry(ROW_IN_RANGE)
    events = _board_events()
    async with geometry_table(geometry, heartbeat_interval=None) as table:
        await table.play(events, strict=True)
        reads = table.reads()
        placement = table.placement
    # North's first quitted card, in the row's first place, lies in the spot's field: read
    # there, it holds the spot, and every card North plays after it collides with it
    assert placement.cross_reads == 1  # type: ignore[attr-defined]
    assert (reads["peak_tags"], reads["collisions"]) == (2, 12)


async def test_a_row_within_reach_raises_at_the_table_what_a_real_one_would(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    record = load_board()
    deals = {record.board: record.deal_info}
    events = record_events(record, sensing="spot", scans=False, deck=str(record.board))
    async with rig(mosquitto, tmp_path, deals=deals, geometry=ROW_IN_RANGE) as r:
        report = await r.table.play(events, strict=True)
        assert report.played == len(events)
        alert = await r.watch.wait(lambda m: m.kind == "alert" and m.table == "1", timeout=30)
        reads = r.table.reads()
    # North's first quitted card, read again on his spot, reached the controller as laid
    # there once more; North's next card collided with it and went unread, so the trick
    # never completed and the others' cards, quitted, looked withdrawn (Law 47): a false
    # alert, as at a real table so built
    quitted = next(e for e in events if e["zone"] == "spot" and e["seat"] == "N"
                   and e["action"] == "removed")
    laid = [m for m in r.watch.of("event", "1") if m.payload.get("card") == quitted["card"]
            and m.payload["zone"] == "spot" and m.payload["action"] == "present"]
    assert len(laid) == 2
    assert reads["collisions"] > 0
    assert (alert.payload["code"], alert.payload["law"]) == ("CARD_WITHDRAWN", "47")
