"""Reader boards, as ``bridge-table firmware flash`` sets them up, feeding the real bridge:
the firmware on emulated chips (a tray reader, a four-antenna bidding box), their serial lines
through ptys, the bridge (serial readers, tag registry, spool) and a private mosquitto, where the
contract's events arrive with their zone, seat and card or call."""

from __future__ import annotations

import asyncio
from pathlib import Path

from broker import Mosquitto
from mqttwatch import Watch

from firmware_bridge.bridge import Bridge
from firmware_bridge.config import config_from_dict
from firmware_bridge.display import NullDisplay
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.flash import settings_for
from firmware_bridge.sim.chips import EmuMFRC522, Field
from firmware_bridge.sim.mcu import EmulatedBoard, Wiring
from firmware_bridge.tags import TagRegistry

REGISTRY = EXAMPLES / "tags-sim.toml"


def board(reader: str, antennas: int, field: Field, link: Path) -> EmulatedBoard:
    settings = settings_for(reader, antennas, link="uart", rate_ms=20)
    wiring = Wiring()
    for i, chip in enumerate(settings["chips"]):
        wiring.spi[(0, chip["cs"])] = EmuMFRC522(field, (reader, i))
    return EmulatedBoard(settings, wiring, link=link)


async def test_reader_boards_to_contract_events(tmp_path: Path, mosquitto: Mosquitto) -> None:
    registry = TagRegistry.load([REGISTRY])
    ace, pass_, one_nt = (registry.uid_for_card("1", "SA"), registry.uid_for_call("Pass"),
                          registry.uid_for_call("1NT"))
    assert ace and pass_ and one_nt
    field = Field()
    config = config_from_dict({
        "table": {"id": "1", "src": "test-pi"},
        "broker": {"url": mosquitto.url},
        "registry": {"files": [str(REGISTRY)]},
        "spool": {"path": str(tmp_path / "spool.sqlite")},
        "readers": [
            {"name": "north", "url": f"serial://{tmp_path / 'ttyN'}", "kind": "inventory",
             "antennas": {"0": {"seat": "N", "zone": "tray"}}, "options": {"reader_id": "N"}},
            {"name": "bidbox", "url": f"serial://{tmp_path / 'ttyBOX'}", "kind": "inventory",
             "antennas": {str(i): {"seat": s, "zone": "bid"} for i, s in enumerate("NESW")},
             "options": {"reader_id": "BOX"}}],
        "gpio": {"factory": "mock"}, "display": {"type": "none"},
        "health": {"interval": 3600.0}}, tmp_path / "table.toml")
    with board("N", 1, field, tmp_path / "ttyN"), board("BOX", 4, field, tmp_path / "ttyBOX"):
        async with Watch(mosquitto.url) as watch:
            bridge = Bridge(config, display=NullDisplay())
            stop = asyncio.Event()
            task = asyncio.create_task(bridge.run(stop))
            try:
                field.place(("BOX", 1), one_nt)      # East bids 1NT
                field.place(("BOX", 2), pass_)       # South passes
                field.place(("N", 0), ace)           # North plays the ace of spades
                await watch.wait(lambda m: m.kind == "event" and m.payload.get("uid") == ace)
                await watch.wait(lambda m: m.kind == "event" and m.payload.get("uid") == pass_)
                await watch.wait(lambda m: m.kind == "event" and m.payload.get("uid") == one_nt)
                field.lift(("N", 0), ace)
                await watch.wait(lambda m: m.kind == "event" and m.payload.get("uid") == ace
                                 and m.payload.get("action") == "removed")
            finally:
                stop.set()
                await task
    events = {(e.payload["uid"], e.payload["action"]): e.payload for e in watch.of("event", "1")}
    played = events[(ace, "present")]
    assert (played["type"], played["zone"], played["seat"], played["card"], played["deck"]) == \
        ("tag", "tray", "N", "SA", "1")
    assert (events[(one_nt, "present")]["seat"], events[(one_nt, "present")]["call"]) == \
        ("E", "1NT")
    assert (events[(pass_, "present")]["seat"], events[(pass_, "present")]["call"]) == \
        ("S", "Pass")
    assert (ace, "removed") in events
