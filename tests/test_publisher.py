from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from broker import Mosquitto
from private_files import assert_made_private, assert_private, permissive_umask

from firmware_bridge.config import BridgeConfig, config_from_dict
from firmware_bridge.errors import SpoolError
from firmware_bridge.publisher import Publisher, Spool

pytestmark = pytest.mark.timeout(120)


def make_config(tmp_path: Path, broker: Mosquitto, table: str = "9") -> BridgeConfig:
    return config_from_dict({
        "table": {"id": table, "src": f"pi-{table}"},
        "broker": {"url": broker.url, "keepalive": 5},
        # these tests watch the broker side only: the PUBACK empties the spool (version 1);
        # tests/test_delivery.py runs the controller's acknowledgements
        "spool": {"path": "spool.sqlite", "acknowledge": "broker"},
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
    }, tmp_path / "table.toml")


class Collector:
    """A subscriber with a persistent session that reconnects across broker restarts."""

    def __init__(self, broker: Mosquitto, topic: str, name: str = "collector") -> None:
        self.broker = broker
        self.topic = topic
        self.name = name
        self.messages: list[tuple[str, dict[str, Any], bool]] = []
        self.subscribed = asyncio.Event()
        self.arrived = asyncio.Event()

    def payloads(self, topic_suffix: str = "") -> list[dict[str, Any]]:
        return [p for t, p, _ in self.messages if t.endswith(topic_suffix)]

    async def run(self) -> None:
        while True:
            try:
                async with aiomqtt.Client("127.0.0.1", self.broker.port, identifier=self.name,
                                          clean_session=False) as client:
                    await client.subscribe(self.topic, qos=1)
                    self.subscribed.set()
                    async for m in client.messages:
                        assert isinstance(m.payload, bytes)
                        self.messages.append((str(m.topic), json.loads(m.payload), m.retain))
                        self.arrived.set()
            except aiomqtt.MqttError:
                await asyncio.sleep(0.1)

    async def wait_for(self, predicate: Any, timeout: float = 30.0) -> None:
        async def loop() -> None:
            while not predicate():
                self.arrived.clear()
                await self.arrived.wait()
        await asyncio.wait_for(loop(), timeout)


@contextlib.asynccontextmanager
async def collecting(broker: Mosquitto, topic: str, name: str = "collector"
                     ) -> AsyncIterator[Collector]:
    collector = Collector(broker, topic, name)
    task = asyncio.create_task(collector.run())
    await asyncio.wait_for(collector.subscribed.wait(), 10)
    try:
        yield collector
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


@contextlib.asynccontextmanager
async def running(publisher: Publisher) -> AsyncIterator[asyncio.Event]:
    stop = asyncio.Event()
    task = asyncio.create_task(publisher.run(stop))
    try:
        yield stop
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)


def tag_body(i: int) -> dict[str, Any]:
    return {"ts": 1700000000.0 + i, "type": "tag", "zone": "tray", "seat": "N",
            "action": "present", "uid": f"04A1{i:04X}", "card": "SA", "deck": "1"}


# -- the spool on its own -----------------------------------------------------------

def test_spool_seq_increases_and_survives_reopen(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.sqlite")
    seqs = [spool.append_event("t/1/event", {"v": 1, "src": "x"}, {"n": i})[0] for i in range(5)]
    assert seqs == sorted(seqs) and len(set(seqs)) == 5
    assert all(b - a == 1 for a, b in zip(seqs, seqs[1:], strict=False))
    for message in spool.pending():
        spool.delete(message.id)
    assert spool.depth() == 0
    boot = spool.boot
    spool.close()
    again = Spool(tmp_path / "s.sqlite")
    seq, payload = again.append_event("t/1/event", {"v": 1, "src": "x"}, {"n": 9})
    assert seq == seqs[-1] + 1 and again.boot == boot
    assert json.loads(payload) == {"v": 1, "src": "x", "seq": seq, "boot": boot, "n": 9}


def test_the_spool_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    """Every event of the table is in it (controller/sqlitefile.py): 0600, its WAL too;
    one found open to others is closed to them."""
    with permissive_umask():
        spool = Spool(tmp_path / "s.sqlite")
        spool.append_event("t/1/event", {"v": 1, "src": "x"}, {"n": 1})
        assert_private(tmp_path, "s.sqlite")
        spool.close()
    assert_made_private(tmp_path / "s.sqlite", Spool)


def test_spool_keeps_order_and_field_order(tmp_path: Path) -> None:
    spool = Spool(tmp_path / "s.sqlite")
    for i in range(30):
        spool.append_event("t/1/event", {"v": 1, "src": "x"}, {"ts": float(i), "type": "tag"})
    first = spool.pending(limit=10)
    rest = spool.pending(after_id=first[-1].id, limit=100)
    seqs = [m.seq for m in first + rest]
    assert len(seqs) == 30 and seqs == sorted(seqs)
    assert list(json.loads(first[0].payload)) == ["v", "src", "seq", "boot", "ts", "type"]
    assert spool.depth() == 30 and spool.next_seq == seqs[-1] + 1  # type: ignore[operator]


def test_spool_keeps_each_readers_last_line_with_its_event(tmp_path: Path) -> None:
    """The reader line an event came from is written in the event's transaction and survives
    a reopen (a restarted bridge asks the reader to replay from it); a refused event leaves
    the mark where it was."""
    spool = Spool(tmp_path / "s.sqlite", max_events=2)
    head = {"v": 1, "src": "x"}
    assert spool.mark("north") is None
    spool.append_event("t/1/event", head, {"n": 1}, lying=("north", "0", "04A1", "present"),
                       mark=("north", 7, "0", "+", "04A1"))
    spool.append_event("t/1/event", head, {"n": 2}, mark=("bidbox", 3, "2", "INV", "04B2 04B3"))
    with pytest.raises(SpoolError):  # full: the event and its mark are refused together
        spool.append_event("t/1/event", head, {"n": 3}, mark=("north", 8, "0", "-", "04A1"))
    spool.set_mark("board", (5, "-", "PONG", "synced"))  # a line with no event of its own
    spool.close()
    again = Spool(tmp_path / "s.sqlite")
    assert again.mark("north") == (7, "0", "+", "04A1")
    assert again.mark("bidbox") == (3, "2", "INV", "04B2 04B3")
    assert again.mark("board") == (5, "-", "PONG", "synced")
    assert again.lying("north") == {"0": {"04A1"}}


def test_spool_uses_wal(tmp_path: Path) -> None:
    Spool(tmp_path / "s.sqlite").close()
    mode = sqlite3.connect(tmp_path / "s.sqlite").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_corrupt_spool_is_moved_aside_not_fatal(tmp_path: Path) -> None:
    path = tmp_path / "s.sqlite"
    path.write_bytes(b"this is not a database" * 100)
    spool = Spool(path)
    seq, payload = spool.append_event("t", {"v": 1}, {})
    # a new boot, from seq 1: the controller tells it from what the old spool sent
    assert seq == 1 and json.loads(payload)["boot"] == spool.boot
    aside = list(tmp_path.glob("s.sqlite.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes().startswith(b"this is not")


# -- against a real broker ---------------------------------------------------------

async def test_events_arrive_in_order_with_status_online(tmp_path: Path,
                                                         mosquitto: Mosquitto) -> None:
    config = make_config(tmp_path, mosquitto)
    publisher = Publisher(config, Spool(config.spool.path))
    async with collecting(mosquitto, "bridge/9/#") as sub, running(publisher):
        seqs = [publisher.publish_event(tag_body(i)) for i in range(50)]
        await sub.wait_for(lambda: len(sub.payloads("/event")) >= 50)
        await asyncio.wait_for(publisher.drained.wait(), 10)
    events = sub.payloads("/event")
    assert [e["seq"] for e in events] == seqs
    assert [e["uid"] for e in events] == [f"04A1{i:04X}" for i in range(50)]
    assert all(e["v"] == 1 and e["src"] == "pi-9" for e in events)
    statuses = [(p["status"], r) for t, p, r in sub.messages if t == "bridge/9/bridge"]
    assert statuses[0] == ("online", False) or statuses[0] == ("online", True)
    assert statuses[-1][0] == "offline"  # said on a clean stop
    assert publisher.spool.depth() == 0


async def test_status_is_retained(tmp_path: Path, mosquitto: Mosquitto) -> None:
    config = make_config(tmp_path, mosquitto)
    publisher = Publisher(config, Spool(config.spool.path))
    async with running(publisher):
        await asyncio.wait_for(publisher.connected.wait(), 10)
        async with collecting(mosquitto, "bridge/9/bridge", "late") as sub:
            await sub.wait_for(lambda: len(sub.messages) >= 1)
    topic, payload, retained = sub.messages[0]
    assert retained and payload == {"v": 1, "src": "pi-9", "status": "online"}


async def test_nothing_lost_across_a_broker_restart(tmp_path: Path, mosquitto: Mosquitto,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    config = make_config(tmp_path, mosquitto)
    publisher = Publisher(config, Spool(config.spool.path), reconnect_max=0.5)
    async with collecting(mosquitto, "bridge/9/event") as sub, running(publisher):
        before = [publisher.publish_event(tag_body(i)) for i in range(10)]
        await sub.wait_for(lambda: len(sub.messages) >= 10)
        await asyncio.wait_for(publisher.drained.wait(), 10)
        mosquitto.stop()
        during = [publisher.publish_event(tag_body(100 + i)) for i in range(40)]
        async with asyncio.timeout(20):   # the bridge notices the broker gone
            while publisher.connected.is_set():
                await asyncio.sleep(0.02)
        assert publisher.spool.depth() == 40
        mosquitto.start()
        after = [publisher.publish_event(tag_body(200 + i)) for i in range(5)]
        await sub.wait_for(lambda: {p["seq"] for p in sub.payloads()} >= set(during + after))
        await asyncio.wait_for(publisher.drained.wait(), 15)
    seqs = [p["seq"] for p in sub.payloads()]
    first_seen = list(dict.fromkeys(seqs))
    assert first_seen == before + during + after  # in order
    # The bridge sent each once: what was spooled during the outage arrives exactly once.
    # (mosquitto may deliver some of `before` twice to this persistent-session subscriber:
    # the ones whose subscriber-side PUBACK it had not saved when it stopped. That is the
    # broker's own QoS 1 leg, not the bridge's.)
    assert all(seqs.count(s) == 1 for s in during + after)
    assert publisher.spool.depth() == 0 and publisher.connect_count >= 2
    # the outage said once and its end said, as every client says them (OutageLog)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert sum("retrying in" in m for m in said) == 1, said
    assert any("(spooling): reachable again after" in m for m in said), said


async def test_spooled_events_survive_a_bridge_restart(tmp_path: Path,
                                                       mosquitto: Mosquitto) -> None:
    config = make_config(tmp_path, mosquitto)
    mosquitto.stop()
    first = Publisher(config, Spool(config.spool.path))
    seqs = [first.publish_event(tag_body(i)) for i in range(7)]
    first.spool.close()  # the bridge dies here, nothing was sent
    mosquitto.start()
    second = Publisher(config, Spool(config.spool.path))
    assert second.spool.depth() == 7
    async with collecting(mosquitto, "bridge/9/event") as sub, running(second):
        more = second.publish_event(tag_body(99))
        await sub.wait_for(lambda: len(sub.messages) >= 8)
    assert [p["seq"] for p in sub.payloads()] == seqs + [more]
    assert more == seqs[-1] + 1


async def test_indicator_messages_reach_the_handler(tmp_path: Path,
                                                    mosquitto: Mosquitto) -> None:
    config = make_config(tmp_path, mosquitto)
    got: list[tuple[str, bytes]] = []
    arrived = asyncio.Event()

    def handler(topic: str, payload: bytes) -> None:
        got.append((topic, payload))
        if len(got) >= 2:
            arrived.set()
        if payload == b"boom":
            raise ValueError("a handler bug must not drop the connection")

    publisher = Publisher(config, Spool(config.spool.path), on_message=handler)
    async with running(publisher):
        await asyncio.wait_for(publisher.connected.wait(), 10)
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as controller:
            await controller.publish("bridge/9/indicator", b"boom", qos=1, retain=True)
            await controller.publish("bridge/9/indicator", b'{"v":1}', qos=1, retain=True)
        await asyncio.wait_for(arrived.wait(), 10)
        assert publisher.connected.is_set()
    assert got == [("bridge/9/indicator", b"boom"), ("bridge/9/indicator", b'{"v":1}')]


async def test_health_goes_out_when_connected(tmp_path: Path, mosquitto: Mosquitto) -> None:
    config = make_config(tmp_path, mosquitto)
    publisher = Publisher(config, Spool(config.spool.path))
    publisher.publish_health({"v": 1, "src": "pi-9", "spool_depth": 0})  # before connecting
    async with collecting(mosquitto, "bridge/9/health") as sub, running(publisher):
        await sub.wait_for(lambda: len(sub.messages) >= 1)
        publisher.publish_health({"v": 1, "src": "pi-9", "spool_depth": 3})
        await sub.wait_for(lambda: len(sub.messages) >= 2)
    assert [p["spool_depth"] for p in sub.payloads()] == [0, 3]
    assert not any(retained for _, _, retained in sub.messages)
