from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from broker import Mosquitto
from gpiozero.pins.mock import MockFactory

from controller import wire
from firmware_bridge.bridge import Bridge, parse_indicator
from firmware_bridge.config import BridgeConfig, config_from_dict
from firmware_bridge.display import NullDisplay
from firmware_bridge.errors import IndicatorError
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.gpio import SeatLights
from firmware_bridge.readers.base import Action, Reader
from firmware_bridge.readers.memory import MemoryReader
from firmware_bridge.taginfo import TagInfo as Info

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).parent.parent


# -- the package's memory:// readers (firmware_bridge.readers.memory), a dict registry -----

class ScriptedReader(MemoryReader):
    """A memory reader whose reads carry a fixed time unless the test gives one."""

    def see(self, antenna: str, uid: str, action: Action = "present",
            ts: float | None = 1.7e9) -> None:
        super().see(antenna, uid, action, ts)


class Readers:
    def __init__(self, failing: set[str] | None = None) -> None:
        self.by_name: dict[str, ScriptedReader] = {}
        self.failing = failing or set()
        self.attempts: dict[str, int] = {}
        self.opened = asyncio.Event()

    def __call__(self, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> Reader:
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if name in self.failing:
            raise OSError(f"no such device {url}")
        reader = ScriptedReader(name, f"test-bridge/{name}", kind=kind or "inventory",  # type: ignore[arg-type]
                                debounce=0)
        self.by_name[name] = reader
        self.opened.set()
        return reader


class Registry:
    def __init__(self) -> None:
        self.tags = {i.uid: i for i in (
            Info("04A1", "card", card="SA", deck="7"),
            Info("04A2", "card", card="HT", deck="7"),
            Info("04B1", "call", call="1NT"),
            Info("04B2", "call", call="Pass"),
            Info("04C1", "marker", marker="STOP"),
            Info("04D7", "board", board=7),
        )}

    def lookup(self, uid: str) -> Info | None:
        return self.tags.get(uid)


def make_config(tmp_path: Path, broker: Mosquitto, **extra: Any) -> BridgeConfig:
    data: dict[str, Any] = {
        "table": {"id": "5", "src": "pi-5", "language": "en"},
        "broker": {"url": broker.url, "keepalive": 5},
        "spool": {"path": "spool.sqlite"},
        "readers": [
            {"name": "north", "url": "sim://5/north", "kind": "inventory",
             "antennas": {"0": {"seat": "N", "zone": "tray"}}},
            {"name": "east", "url": "sim://5/east", "kind": "inventory",
             "antennas": {"0": {"seat": "E", "zone": "tray"}}},
            {"name": "bidbox", "url": "sim://5/bidbox",
             "antennas": {str(i): {"seat": s, "zone": "bid"} for i, s in enumerate("NESW")}},
            {"name": "board", "url": "sim://5/board", "kind": "tap",
             "antennas": {"0": {"zone": "board"}}},
        ],
        "gpio": {"factory": "mock", "bounce_time": 0.0,
                 "seats": {"N": {"turn_led": 17, "alert_led": 27, "claim": 26},
                           "E": {"turn_led": 22, "alert_led": 23}},
                 "buttons": {"director": 5, "undo": 13}, "alert_blink": False},
        "display": {"type": "none"},
        "health": {"interval": 60.0},
    }
    data.update(extra)
    return config_from_dict(data, tmp_path / "table.toml")


class Subscriber:
    def __init__(self, broker: Mosquitto, topic: str) -> None:
        self.broker, self.topic = broker, topic
        self.messages: list[tuple[str, Any, bool]] = []
        self.arrived = asyncio.Event()
        self.ready = asyncio.Event()

    async def run(self) -> None:
        async with aiomqtt.Client("127.0.0.1", self.broker.port) as client:
            await client.subscribe(self.topic, qos=1)
            self.ready.set()
            async for m in client.messages:
                assert isinstance(m.payload, bytes)
                payload = json.loads(m.payload) if m.payload else None
                self.messages.append((str(m.topic), payload, m.retain))
                self.arrived.set()

    def on(self, suffix: str) -> list[Any]:
        return [p for t, p, _ in self.messages if t.endswith(suffix)]

    async def wait_for(self, predicate: Any, timeout: float = 20.0) -> None:
        async def loop() -> None:
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()
        await asyncio.wait_for(loop(), timeout)


@contextlib.asynccontextmanager
async def subscribed(broker: Mosquitto, topic: str) -> AsyncIterator[Subscriber]:
    sub = Subscriber(broker, topic)
    task = asyncio.create_task(sub.run())
    await asyncio.wait_for(sub.ready.wait(), 10)
    try:
        yield sub
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def running(bridge: Bridge) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    task = asyncio.create_task(bridge.run(stop))
    await asyncio.wait_for(bridge.ready.wait(), 10)
    assert bridge.publisher is not None
    await asyncio.wait_for(bridge.publisher.connected.wait(), 10)
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


async def handled(bridge: Bridge, action: Any) -> None:
    """Do ``action`` (a reader sees something) and wait until the bridge has handled it."""
    before = (bridge.health.events, bridge.health.unmapped_antennas)
    action()
    while (bridge.health.events, bridge.health.unmapped_antennas) == before:
        await asyncio.sleep(0.005)


async def all_open(readers: Readers, names: set[str]) -> None:
    while set(readers.by_name) < names:
        await asyncio.sleep(0.01)


# -- indicator parsing --------------------------------------------------------------------

def test_parse_indicator() -> None:
    payload = json.dumps({"v": 1, "table": "5", "seats": {"N": {"turn": True, "alert": False},
                                                          "E": {"alert": True}},
                          "display": {"en": ["North to call"], "vi": ["Lượt của Bắc"]}})
    indicator = parse_indicator(payload.encode(), "5")
    assert indicator.seats == {"N": SeatLights(turn=True), "E": SeatLights(alert=True)}
    assert indicator.display["vi"] == ("Lượt của Bắc",)
    assert parse_indicator(b"", "5").seats == {}


def test_a_partial_indicator_is_read_through_the_wire_module() -> None:
    # what the controller sends is whole; a partial one (no table, seats or display, a seat
    # naming one light) is read as dark where nothing is said
    indicator = parse_indicator(b'{"v": 1, "seats": {"S": {"alert": true}}, "x": 0}', "5")
    assert indicator.seats == {"S": SeatLights(turn=False, alert=True)}
    assert indicator.display == {}
    whole = wire.Indicator(v=1, table="5", board=3, seats={
        s: wire.SeatLights(turn=s == "N", alert=False) for s in "NESW"}, alerts=[],
        display={"en": ["a", "b", "c", "d"]})
    read = parse_indicator(wire.encode(whole), "5")
    assert read.seats["N"] == SeatLights(turn=True) and read.seats["E"] == SeatLights()
    assert read.display == {"en": ("a", "b", "c", "d")}


@pytest.mark.parametrize(("payload", "problem"), [
    (b"\xff\xfe garbage", "not JSON"),
    (b"{not json", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b"{}", "missing required field `v`"),
    (b'{"v": 2}', "unsupported contract version"),
    (b'{"v": 1, "table": "6"}', "for table '6'"),
    (b'{"v": 1, "table": 5}', r"got `int` - at `\$.table`"),
    (b'{"v": 1, "seats": {"X": {"turn": true}}}', r"'X' - at `key` in `\$.seats`"),
    (b'{"v": 1, "seats": {"N": {"turn": "yes"}}}', r"got `str` - at `\$.seats\[...\].turn`"),
    (b'{"v": 1, "seats": ["N"]}', r"Expected `object`, got `array` - at `\$.seats`"),
    (b'{"v": 1, "display": {"en": "one line"}}', r"got `str` - at `\$.display\[...\]`"),
    (b'{"v": 1, "display": {"en": [1, 2]}}', r"got `int` - at `\$.display\[...\]\[0\]`"),
    (b"{" * 2000, "not JSON|nested too deeply"),
])
def test_malformed_indicators_are_named(payload: bytes, problem: str) -> None:
    with pytest.raises(IndicatorError, match=problem):
        parse_indicator(payload, "5")


# -- against the real broker ----------------------------------------------------------------

async def test_tags_become_contract_events_in_order(tmp_path: Path, mosquitto: Mosquitto) -> None:
    readers = Readers()
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=readers,
                    pin_factory=MockFactory(), display=NullDisplay())
    async with subscribed(mosquitto, "bridge/5/event") as sub, running(bridge):
        await asyncio.wait_for(all_open(readers, {"north", "east", "bidbox", "board"}), 10)
        r = readers.by_name
        # each reader has its own task: across readers, order is the order they are handled
        await handled(bridge, lambda: r["board"].see("0", "04d7", ts=1.0))  # lower-case hex
        await handled(bridge, lambda: r["north"].see("0", "04A1", ts=2.0))
        await handled(bridge, lambda: r["bidbox"].see("2", "04B1", ts=3.0))
        await handled(bridge, lambda: r["bidbox"].see("3", "04C1", ts=4.0))
        await handled(bridge, lambda: r["north"].see("0", "04A1", "removed", ts=5.0))
        await handled(bridge, lambda: r["east"].see("0", "DEADBEEF", ts=6.0))
        await sub.wait_for(lambda: len(sub.messages) >= 6)
    events = [p for _, p, _ in sub.messages]
    seqs = [e.pop("seq") for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == 6
    assert bridge.publisher is not None
    assert {e.pop("boot") for e in events} == {bridge.publisher.boot}  # contract 1.2
    assert all(0 <= e.pop("acked") < seq for e, seq in zip(events, seqs, strict=True))
    assert events == [
        {"v": 1, "src": "pi-5", "ts": 1.0, "type": "tag", "zone": "board", "action": "present",
         "uid": "04D7", "board": 7},
        {"v": 1, "src": "pi-5", "ts": 2.0, "type": "tag", "zone": "tray", "seat": "N",
         "action": "present", "uid": "04A1", "card": "SA", "deck": "7"},
        {"v": 1, "src": "pi-5", "ts": 3.0, "type": "tag", "zone": "bid", "seat": "S",
         "action": "present", "uid": "04B1", "call": "1NT"},
        {"v": 1, "src": "pi-5", "ts": 4.0, "type": "tag", "zone": "bid", "seat": "W",
         "action": "present", "uid": "04C1", "call": "STOP"},
        {"v": 1, "src": "pi-5", "ts": 5.0, "type": "tag", "zone": "tray", "seat": "N",
         "action": "removed", "uid": "04A1", "card": "SA", "deck": "7"},
        {"v": 1, "src": "pi-5", "ts": 6.0, "type": "tag", "zone": "tray", "seat": "E",
         "action": "present", "uid": "DEADBEEF", "unknown": True},
    ]
    assert bridge.health.unknown_tags == 1 and bridge.health.events == 6


async def test_unmapped_antenna_and_reader_anomalies_go_to_health(tmp_path: Path,
                                                                  mosquitto: Mosquitto) -> None:
    readers = Readers()
    bridge = Bridge(make_config(tmp_path, mosquitto, health={"interval": 60.0}),
                    registry=Registry(), open_reader=readers, pin_factory=MockFactory(),
                    display=NullDisplay())
    async with subscribed(mosquitto, "bridge/5/#") as sub, running(bridge):
        await asyncio.wait_for(all_open(readers, {"north", "bidbox"}), 10)
        readers.by_name["bidbox"].see("7", "04B2")          # antenna 7 is not wired
        readers.by_name["north"]._health("crc_error", "line 3")
        readers.by_name["north"]._health("crc_error", "line 9")
        readers.by_name["north"].see("0", "04A2")
        await sub.wait_for(lambda: any(
            h["unmapped_antennas"] == 1 and h["readers"]["north"]["anomalies"].get("crc_error")
            == 2 for h in sub.on("/health")))
        await sub.wait_for(lambda: len(sub.on("/event")) >= 1)
    assert [e["uid"] for e in sub.on("/event")] == ["04A2"]
    health = sub.on("/health")[-1]
    assert health["src"] == "pi-5" and health["readers"]["bidbox"]["kind"] == "inventory"
    assert health["last_unmapped"] == {"reader": "bidbox", "antenna": "7", "uid": "04B2",
                                       "action": "present", "ts": 1.7e9}
    assert not any(retained for t, _, retained in sub.messages if t.endswith("/health"))


async def test_a_tag_seen_by_two_readers_is_counted_and_still_published(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    readers = Readers()
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=readers,
                    pin_factory=MockFactory(), display=NullDisplay())
    async with subscribed(mosquitto, "bridge/5/event") as sub, running(bridge):
        await asyncio.wait_for(all_open(readers, {"north", "east"}), 10)
        r = readers.by_name
        await handled(bridge, lambda: r["north"].see("0", "04A1", ts=10.0))
        await handled(bridge, lambda: r["east"].see("0", "04A1", ts=10.1))  # on two trays
        await handled(bridge, lambda: r["north"].see("0", "04A2", ts=11.0))
        await handled(bridge, lambda: r["north"].see("0", "04A2", "removed", ts=12.0))
        await handled(bridge, lambda: r["east"].see("0", "04A2", ts=13.0))  # moved: no dup
        await sub.wait_for(lambda: len(sub.messages) >= 5)
    assert [(p["seat"], p["uid"]) for _, p, _ in sub.messages] == [
        ("N", "04A1"), ("E", "04A1"), ("N", "04A2"), ("N", "04A2"), ("E", "04A2")]
    assert bridge.health.duplicate_sightings == 1
    assert bridge.health.last_duplicate == {"uid": "04A1", "ts": 10.1, "at": "east/0",
                                            "also": ["north/0"]}


async def test_buttons_become_events(tmp_path: Path, mosquitto: Mosquitto) -> None:
    factory = MockFactory()
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(),
                    open_reader=Readers(), pin_factory=factory, display=NullDisplay())
    async with subscribed(mosquitto, "bridge/5/event") as sub, running(bridge):
        for pin in (26, 5):  # N's claim, the table's director
            factory.pin(pin).drive_low()
            factory.pin(pin).drive_high()
        await sub.wait_for(lambda: len(sub.messages) >= 2)
    first, second = (p for _, p, _ in sub.messages)
    assert (first["type"], first["button"], first["seat"]) == ("button", "claim", "N")
    assert (second["type"], second["button"]) == ("button", "director")
    assert "seat" not in second and second["seq"] > first["seq"]
    assert first["ts"] > 1e9


async def test_indicator_drives_leds_and_display_and_bad_ones_do_not_crash(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    factory = MockFactory()
    display = NullDisplay()
    config = make_config(tmp_path, mosquitto, table={"id": "5", "src": "pi-5", "language": "vi"})
    bridge = Bridge(config, registry=Registry(), open_reader=Readers(), pin_factory=factory,
                    display=display)
    good = {"v": 1, "table": "5", "seats": {"N": {"turn": True, "alert": False},
                                            "E": {"turn": False, "alert": True}},
            "display": {"en": ["North to call"], "vi": ["Lượt của Bắc"], "zh": ["轮到北叫牌"]}}
    later = {"v": 1, "table": "5", "seats": {"E": {"turn": True, "alert": False}},
             "display": {"en": ["East to call"], "vi": ["Lượt của Đông"]}}
    bad = [b"garbage\xff", b"[]", b'{"v":1,"seats":{"N":{"turn":1}}}', b'{"v":7}', b"null",
           json.dumps({"v": 1, "table": "6"}).encode()]
    readers = Readers()
    bridge._open_reader = readers
    async with subscribed(mosquitto, "bridge/5/health") as health, running(bridge):
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as controller:
            await controller.publish("bridge/5/indicator", json.dumps(good), qos=1, retain=True)
            while display.lines != ["Lượt của Bắc"]:
                await asyncio.sleep(0.02)
            assert factory.pin(17).state and factory.pin(23).state and not factory.pin(22).state
            for payload in bad:
                await controller.publish("bridge/5/indicator", payload, qos=1, retain=True)
            await health.wait_for(lambda: any(h["bad_indicators"] == len(bad)
                                              for h in health.on("/health")))
            # still standing: the LEDs kept the last good state, and the next good one applies
            assert factory.pin(17).state and display.lines == ["Lượt của Bắc"]
            await controller.publish("bridge/5/indicator", json.dumps(later), qos=1, retain=True)
            while display.lines != ["Lượt của Đông"]:
                await asyncio.sleep(0.02)
        assert not factory.pin(17).state and factory.pin(22).state and not factory.pin(23).state
        assert bridge.publisher is not None and bridge.publisher.connected.is_set()
    assert bridge.health.bad_indicators == len(bad)
    assert "for table '6'" in (bridge.health.last_bad_indicator or "")
    # a clean stop leaves the LEDs dark
    assert not any(factory.pin(p).state for p in (17, 22, 23, 27))


async def test_a_reader_that_cannot_open_is_retried_and_the_rest_run(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    readers = Readers(failing={"east"})
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=readers,
                    pin_factory=MockFactory(), display=NullDisplay())
    async with subscribed(mosquitto, "bridge/5/event") as sub, running(bridge):
        await asyncio.wait_for(all_open(readers, {"north"}), 10)
        readers.by_name["north"].see("0", "04A1")
        await sub.wait_for(lambda: len(sub.messages) >= 1)
        while readers.attempts.get("east", 0) < 2:
            await asyncio.sleep(0.05)
    assert bridge.health.readers["east"].anomalies["open_failed"] >= 2
    assert not bridge.health.readers["east"].open


# -- the command, in a subprocess -------------------------------------------------------------

def write_toml(tmp_path: Path, broker: Mosquitto) -> Path:
    path = tmp_path / "table.toml"
    path.write_text(f"""
[table]
id = "5"
src = "pi-5"
[broker]
url = "{broker.url}"
keepalive = 5
[spool]
path = "spool.sqlite"
[gpio]
factory = "mock"
[gpio.buttons]
director = 5
[display]
type = "terminal"
""")
    return path


def start_bridge(config: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "controller.cli", "bridge", "--config",
                             str(config)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env, cwd=ROOT)


async def retained_status(broker: Mosquitto, want: str) -> dict[str, Any]:
    """Subscribe afresh until the retained status is ``want`` (new subscribers see it)."""
    while True:
        async with aiomqtt.Client("127.0.0.1", broker.port) as client:
            await client.subscribe("bridge/5/bridge", qos=1)
            async for m in client.messages:
                assert isinstance(m.payload, bytes)
                if not m.retain:  # a live one while we subscribed: ask afresh
                    break
                status: dict[str, Any] = json.loads(m.payload)
                if status["status"] == want:
                    return status
                break
        await asyncio.sleep(0.1)


async def test_the_will_says_offline_when_the_bridge_is_killed(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    proc = start_bridge(write_toml(tmp_path, mosquitto))
    try:
        online = await asyncio.wait_for(retained_status(mosquitto, "online"), 30)
        assert online == {"v": 1, "src": "pi-5", "status": "online"}
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # keepalive 5 s: the broker notices the dead TCP connection at once on loopback
        offline = await asyncio.wait_for(retained_status(mosquitto, "offline"), 30)
        assert offline == {"v": 1, "src": "pi-5", "status": "offline"}
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


async def test_sigterm_stops_cleanly_and_says_offline(tmp_path: Path,
                                                      mosquitto: Mosquitto) -> None:
    proc = start_bridge(write_toml(tmp_path, mosquitto))
    try:
        await asyncio.wait_for(retained_status(mosquitto, "online"), 30)
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.get_running_loop().run_in_executor(None, proc.wait, 20)
        assert code == 0, proc.stderr.read().decode() if proc.stderr else ""
        assert (await asyncio.wait_for(retained_status(mosquitto, "offline"), 10))["status"] \
            == "offline"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_a_bad_config_exits_2_with_the_reason(tmp_path: Path) -> None:
    from firmware_bridge.cli_bridge import main
    path = tmp_path / "bad.toml"
    path.write_text('[table]\nid = "5"\n[gpio.seats.Q]\nturn_led = 3\n')
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "bridge", "--config",
                           str(path)], capture_output=True, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert proc.returncode == 2
    assert "gpio.seats.Q" in proc.stderr.decode() and str(path) in proc.stderr.decode()
    assert main(["--config", str(tmp_path / "absent.toml")]) == 2


def test_a_spool_it_cannot_create_exits_2_so_systemd_stops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Restart=always with RestartPreventExitStatus=2 (systemd/): a spool path that cannot be
    # made is set-up, and would fail again on every restart
    from firmware_bridge.cli_bridge import main
    (tmp_path / "a-file").write_text("not a directory")
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "5"\n[spool]\npath = "a-file/spool.sqlite"\n'
                    '[gpio]\nfactory = "mock"\n[display]\ntype = "terminal"\n')
    assert main(["--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "a-file/spool.sqlite" in err and "Traceback" not in err


# -- end to end through the real serial path ------------------------------------------------

async def test_virtual_reader_firmware_to_subscriber(tmp_path: Path, mosquitto: Mosquitto) -> None:
    """Reader firmware lines on a pty -> SerialReader -> bridge -> broker, with faults."""
    from firmware_bridge.sim.firmware import VirtualFirmware

    trays = VirtualFirmware("north", 1, link=tmp_path / "north.tty")
    bidbox = VirtualFirmware("bidbox", 4, link=tmp_path / "bidbox.tty")
    await trays.start()
    await bidbox.start()
    config = make_config(tmp_path, mosquitto, readers=[
        {"name": "north", "url": f"serial://{tmp_path / 'north.tty'}", "kind": "inventory",
         "options": {"debounce": 0.0}, "antennas": {"0": {"seat": "N", "zone": "tray"}}},
        {"name": "bidbox", "url": f"serial://{tmp_path / 'bidbox.tty'}", "kind": "inventory",
         "options": {"debounce": 0.0},
         "antennas": {str(i): {"seat": s, "zone": "bid"} for i, s in enumerate("NESW")}},
    ])
    registry = Registry()
    for short in ("04A1", "04B1", "04A2"):  # reader UIDs are 4..10 bytes
        info = registry.tags[short]
        registry.tags[short + "C0DE"] = Info(short + "C0DE", info.kind, card=info.card,
                                             deck=info.deck, call=info.call)
    bridge = Bridge(config, registry=registry, pin_factory=MockFactory(),
                    display=NullDisplay())
    try:
        async with subscribed(mosquitto, "bridge/5/#") as sub, running(bridge):
            await asyncio.wait_for(trays.host_seen.wait(), 10)
            await asyncio.wait_for(bidbox.host_seen.wait(), 10)
            trays.place(0, "04A1C0DE", hw_time=1700000000.5)
            bidbox.place(1, "04B1C0DE")
            trays.write_raw(b"\x00\xffnoise on the line\r\n")
            trays.send_bad_crc(0, "04A2C0DE")  # the tag is there; the inventory it asks for says so
            await sub.wait_for(lambda: {e["uid"] for e in sub.on("/event")}
                               >= {"04A1C0DE", "04B1C0DE", "04A2C0DE"})
            await sub.wait_for(lambda: any(sum(h["readers"]["north"]["anomalies"].values()) >= 2
                                           for h in sub.on("/health")))
        events = {e["uid"]: e for e in sub.on("/event")}
        assert events["04A1C0DE"]["ts"] == 1700000000.5
        assert (events["04A1C0DE"]["seat"], events["04A1C0DE"]["card"]) == ("N", "SA")
        bid = events["04B1C0DE"]
        assert (bid["seat"], bid["zone"], bid["call"]) == ("E", "bid", "1NT")
        assert events["04A2C0DE"]["card"] == "HT"
    finally:
        trays.close()
        bidbox.close()


async def test_cancelling_run_cleans_up(tmp_path: Path, mosquitto: Mosquitto) -> None:
    factory = MockFactory()
    readers = Readers()
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=readers,
                    pin_factory=factory, display=NullDisplay())
    task = asyncio.create_task(bridge.run())
    await asyncio.wait_for(bridge.ready.wait(), 10)
    await asyncio.wait_for(all_open(readers, {"north"}), 10)
    bridge.show(parse_indicator(b'{"v":1,"seats":{"N":{"turn":true}}}', "5"))
    assert factory.pin(17).state
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not factory.pin(17).state
    assert all(not state.open for state in bridge.health.readers.values())
    # the spool file is closed and consistent: a new bridge takes it over
    again = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=Readers(),
                   pin_factory=MockFactory(), display=NullDisplay())
    async with running(again):
        assert again.press("director", None) is not None


# -- end to end with the simulated table (sim:// readers, the shipped sim.toml) ---------------

async def test_simulated_table_round_trip(tmp_path: Path, mosquitto: Mosquitto) -> None:
    """Events played on the simulated table come out of the bridge as the same events."""
    import dataclasses

    from firmware_bridge.config import load_config
    from firmware_bridge.sim.table import SimTable

    config = load_config(EXAMPLES / "sim.toml", broker_url=mosquitto.url)
    config = dataclasses.replace(config, spool=dataclasses.replace(
        config.spool, path=tmp_path / "spool.sqlite"))
    t = config.table.id
    played: list[dict[str, Any]] = [
        {"type": "tag", "zone": "board", "action": "present", "board": 3},
        {"type": "tag", "zone": "spot", "seat": "N", "action": "present", "card": "SA",
         "deck": "3"},
        {"type": "tag", "zone": "spot", "seat": "W", "action": "present", "card": "C2",
         "deck": "3"},
        {"type": "tag", "zone": "bid", "seat": "E", "action": "present", "call": "1NT"},
        {"type": "tag", "zone": "bid", "seat": "S", "action": "present", "call": "STOP"},
        # one card on a call spot at a time (docs/sensing.md): the STOP card off first
        {"type": "tag", "zone": "bid", "seat": "S", "action": "removed", "call": "STOP"},
        {"type": "tag", "zone": "bid", "seat": "S", "action": "present", "call": "2C"},
        {"type": "tag", "zone": "spot", "seat": "N", "action": "removed", "card": "SA",
         "deck": "3"},
        {"type": "tag", "zone": "spot", "seat": "E", "action": "present",
         "uid": "0499887766554433"},
    ]
    for i, event in enumerate(played):
        event["ts"] = 1700000100.0 + i
    async with SimTable.from_config(EXAMPLES / "sim.toml",
                                    link_dir=tmp_path / "ttys") as table:
        bridge = Bridge(config, pin_factory=MockFactory(), display=NullDisplay())
        async with subscribed(mosquitto, f"bridge/{t}/event") as sub, running(bridge):
            assert await table.wait_hosts(10)
            report = await table.play(played, hardware_time=True, strict=True)
            assert report.played == len(played)
            await sub.wait_for(lambda: len(sub.messages) >= len(played))
    received = [p for _, p, _ in sub.messages]
    seqs = [e.pop("seq") for e in received]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert all(e.pop("src") == config.table.src and e.pop("v") == 1 for e in received)
    assert len({e.pop("boot") for e in received}) == 1  # contract 1.2: one boot, seq from 1
    assert all(0 <= e.pop("acked") < seq for e, seq in zip(received, seqs, strict=True))
    uids = [e.pop("uid") for e in received]
    assert uids[-1] == "0499887766554433" and received[-1].pop("unknown") is True
    assert received == [{k: v for k, v in e.items() if k != "uid"} for e in played]
    registry = bridge._registry
    assert registry is not None and registry.lookup(uids[1]).card == "SA"  # type: ignore[union-attr]


async def test_tags_read_while_the_broker_is_down_arrive_once_in_order(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    from test_publisher import collecting

    readers = Readers()
    # no controller here: the broker's PUBACK empties the spool (tests/test_delivery.py has
    # the controller's acknowledgements)
    config = make_config(tmp_path, mosquitto,
                         spool={"path": "spool.sqlite", "acknowledge": "broker"})
    bridge = Bridge(config, registry=Registry(), open_reader=readers,
                    pin_factory=MockFactory(), display=NullDisplay())
    async with collecting(mosquitto, "bridge/5/event", "bridge-restart") as sub, \
            running(bridge):
        await asyncio.wait_for(all_open(readers, {"north"}), 10)
        mosquitto.stop()
        uids = [f"0400{i:04X}" for i in range(25)]
        for i, uid in enumerate(uids):
            await handled(bridge, lambda uid=uid, i=i: readers.by_name["north"].see(
                "0", uid, ts=2000.0 + i))
        assert bridge.publisher is not None and bridge.publisher.spool.depth() == 25
        mosquitto.start()
        await sub.wait_for(lambda: len(sub.payloads()) >= 25)
        await asyncio.wait_for(bridge.publisher.drained.wait(), 20)
    events = sub.payloads()
    assert [e["uid"] for e in events] == uids
    assert [e["seq"] for e in events] == sorted({e["seq"] for e in events})
    assert all(e["unknown"] is True and e["seat"] == "N" for e in events)


def test_a_broken_tag_registry_stops_the_start_with_its_reason(
        tmp_path: Path, mosquitto: Mosquitto, capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_bridge.cli_bridge import main
    (tmp_path / "tags.toml").write_text("version = 1\n[decks.1]\nSA = 12\n[[[broken\n")
    path = write_toml(tmp_path, mosquitto)
    path.write_text(path.read_text() + '[registry]\nfiles = ["tags.toml"]\n')
    assert main(["--config", str(path)]) == 1
    err = capsys.readouterr().err
    assert "tag registry" in err and "tags.toml" in err


class StuckDisplay(NullDisplay):
    """A display whose drawing hangs until released (an I2C bus in trouble)."""

    def __init__(self) -> None:
        super().__init__()
        import threading
        self.release = threading.Event()
        self.entered = threading.Event()

    def show(self, lines: Any) -> None:
        self.entered.set()
        self.release.wait(30)
        super().show(lines)


async def test_a_slow_display_does_not_hold_up_events(tmp_path: Path,
                                                      mosquitto: Mosquitto) -> None:
    readers = Readers()
    display = StuckDisplay()
    bridge = Bridge(make_config(tmp_path, mosquitto), registry=Registry(), open_reader=readers,
                    pin_factory=MockFactory(), display=display)
    async with subscribed(mosquitto, "bridge/5/event") as sub, running(bridge):
        await asyncio.wait_for(all_open(readers, {"north"}), 10)
        bridge.show(parse_indicator(b'{"v":1,"display":{"en":["one"]}}', "5"))
        bridge.show(parse_indicator(b'{"v":1,"display":{"en":["two"]}}', "5"))
        while not display.entered.is_set():
            await asyncio.sleep(0.01)
        readers.by_name["north"].see("0", "04A1")
        await sub.wait_for(lambda: len(sub.messages) >= 1)  # while the display hangs
        assert display.lines == []
        display.release.set()
        while display.lines != ["two"]:
            await asyncio.sleep(0.01)
    assert sub.messages[0][1]["uid"] == "04A1"
