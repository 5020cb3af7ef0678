"""End to end delivery (contract 1.2): a bridge keeps each event until the controller has
applied it, so a broker that loses what it acknowledged loses nothing; reconnects are quick.

Real parts: a mosquitto on loopback, the controller daemon with its journal, the bridge's
publisher and spool. Each test failed before 1.2 (the spool emptied on the broker's PUBACK).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from boardevents import EventWriter, t08_revoke
from broker import Mosquitto

from controller.broker.settings import BrokerSettings
from controller.engine import Engine
from controller.service.daemon import ControllerDaemon
from controller.service.engines import build_engine
from controller.service.journal import Journal
from firmware_bridge.config import config_from_dict
from firmware_bridge.publisher import Publisher, Spool

pytestmark = pytest.mark.timeout(180)

SRC = "table-1-pi"


def board_events() -> list[dict[str, Any]]:
    return list(EventWriter(SRC).board(t08_revoke()))


def body(event: dict[str, Any]) -> dict[str, Any]:
    """What the bridge's readers give the publisher: the event without v, src and seq."""
    return {k: v for k, v in event.items() if k not in ("v", "src", "seq")}


def reference(events: Sequence[dict[str, Any]]) -> Engine:
    """Every event applied exactly once, in order: what the daemon must end up with."""
    engine = Engine()
    for e in events:
        engine.handle("bridge/1/event", json.dumps(e).encode())
    return engine


def make_publisher(tmp_path: Path, broker: Mosquitto, *, ack_timeout: float = 10.0
                   ) -> Publisher:
    config = config_from_dict({
        "table": {"id": "1", "src": SRC},
        "broker": {"url": broker.url, "keepalive": 5},
        "spool": {"path": "spool.sqlite", "ack_timeout": ack_timeout},
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
    }, tmp_path / "table.toml")
    return Publisher(config, Spool(config.spool.path))


@contextlib.asynccontextmanager
async def running_publisher(publisher: Publisher) -> AsyncIterator[None]:
    stop = asyncio.Event()
    task = asyncio.create_task(publisher.run(stop))
    try:
        yield
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)


class Daemon:
    """The controller daemon in this process, started and stopped at will."""

    def __init__(self, broker: Mosquitto, journal: Path) -> None:
        self.broker = broker
        self.journal_path = journal
        self.daemon: ControllerDaemon | None = None
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> ControllerDaemon:
        self.daemon = ControllerDaemon(broker=BrokerSettings.from_url(self.broker.url),
                                       engine=build_engine(), journal=Journal(self.journal_path),
                                       status_interval=60.0)
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self.daemon.run(self._stop))
        await asyncio.wait_for(self.daemon.ready.wait(), 20)
        return self.daemon

    async def stop(self) -> None:
        assert self.daemon is not None and self._task is not None
        self._stop.set()
        await asyncio.wait_for(self._task, 20)
        assert self.daemon.journal is not None
        self.daemon.journal.close()


async def until(predicate: Any, timeout: float = 60.0) -> None:
    async with asyncio.timeout(timeout):
        while not predicate():
            await asyncio.sleep(0.02)


def last_seq(daemon: ControllerDaemon, table: str = "1") -> int | None:
    engine = daemon.engine
    assert isinstance(engine, Engine)
    last = engine.snapshot(table).get("last") or {}
    seq = last.get("seq")
    return seq if isinstance(seq, int) else None


def applied_once(daemon: ControllerDaemon, events: Sequence[dict[str, Any]]) -> None:
    engine = daemon.engine
    assert isinstance(engine, Engine)
    want = reference(events)
    assert engine.stats["events"] == len(events)  # every event applied, none twice
    assert engine.snapshot("1") == want.snapshot("1")
    assert [o.payload for o in engine.retained()] == [o.payload for o in want.retained()]


async def test_a_broker_crash_without_persistence_loses_no_event(tmp_path: Path) -> None:
    events = board_events()
    half = len(events) // 2
    with Mosquitto(tmp_path / "broker", persistence=False) as broker:
        controller = Daemon(broker, tmp_path / "journal.sqlite")
        daemon = await controller.start()
        publisher = make_publisher(tmp_path, broker)
        async with running_publisher(publisher):
            for e in events[:half]:
                publisher.publish_event(body(e))
            await until(lambda: last_seq(daemon) == half)
            await until(lambda: publisher.spool.depth() == 0)  # acknowledged by the controller
            await controller.stop()
            # the broker queues these for the controller's session and acknowledges them...
            sent = publisher.sent
            for e in events[half:]:
                publisher.publish_event(body(e))
            await until(lambda: publisher.sent >= sent + len(events) - half)
            # ...then crashes, without persistence: the queue is gone
            broker.kill()
            broker.start()
            daemon = await controller.start()
            await until(lambda: last_seq(daemon) == len(events))
            await until(lambda: publisher.spool.depth() == 0)
        applied_once(daemon, events)
        await controller.stop()


async def test_an_overflowing_broker_queue_loses_no_event_and_keeps_the_order(
        tmp_path: Path) -> None:
    events = board_events()
    # a tiny queue: while the controller is away the broker drops most of what it is sent
    with Mosquitto(tmp_path / "broker", extra=("max_queued_messages 10",)) as broker:
        controller = Daemon(broker, tmp_path / "journal.sqlite")
        daemon = await controller.start()
        publisher = make_publisher(tmp_path, broker)
        async with running_publisher(publisher):
            for e in events[:20]:
                publisher.publish_event(body(e))
            await until(lambda: last_seq(daemon) == 20)
            await controller.stop()
            sent = publisher.sent
            for e in events[20:]:
                publisher.publish_event(body(e))
            await until(lambda: publisher.sent >= sent + len(events) - 20)
            # back: it applies the 10 queued (in order), then the bridge sends the rest again
            daemon = await controller.start()
            await until(lambda: last_seq(daemon) == len(events))
            await until(lambda: publisher.spool.depth() == 0)
        applied_once(daemon, events)
        await controller.stop()


async def test_events_stay_spooled_until_the_controller_acknowledges_them(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    events = board_events()[:30]
    publisher = make_publisher(tmp_path, mosquitto)
    async with running_publisher(publisher):
        for e in events:
            publisher.publish_event(body(e))
        await until(lambda: publisher.sent >= len(events))
        # the broker has them all; no controller has applied them: all still in the spool
        assert publisher.spool.depth() == len(events)
        controller = Daemon(mosquitto, tmp_path / "journal.sqlite")
        daemon = await controller.start()
        await until(lambda: publisher.spool.depth() == 0)
        assert publisher.acked_seq == len(events)
    applied_once(daemon, events)
    await controller.stop()


async def test_an_unacknowledged_event_is_sent_again_after_the_timeout(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    events = board_events()[:10]
    controller = Daemon(mosquitto, tmp_path / "journal.sqlite")
    daemon = await controller.start()
    publisher = make_publisher(tmp_path, mosquitto, ack_timeout=0.5)
    async with running_publisher(publisher):
        publisher.publish_event(body(events[0]))
        await until(lambda: last_seq(daemon) == 1)
        # the second event never reaches the controller (as if a broker dropped it)
        seq, _ = publisher.spool.append_event("bridge/1/dropped", {"v": 1, "src": SRC},
                                              body(events[1]))
        assert seq == 2
        message = publisher.spool.pending()[0]
        for e in events[2:]:
            publisher.publish_event(body(e))
        await until(lambda: publisher.sent >= len(events))
        # the controller holds 3..10 back (out of order); the bridge, unacknowledged, resends
        assert last_seq(daemon) == 1
        publisher.spool._db.execute("UPDATE outbox SET topic = 'bridge/1/event' WHERE id = ?",
                                    (message.id,))
        await until(lambda: last_seq(daemon) == len(events))
        await until(lambda: publisher.spool.depth() == 0)
        assert publisher.resends >= 1
    engine = daemon.engine
    assert isinstance(engine, Engine) and engine.stats["out_of_order"] >= 1
    applied_once(daemon, events)
    await controller.stop()


async def test_the_daemon_reconnects_at_once_after_each_broker_restart(
        tmp_path: Path, mosquitto: Mosquitto, caplog: pytest.LogCaptureFixture) -> None:
    controller = Daemon(mosquitto, tmp_path / "journal.sqlite")
    daemon = await controller.start()
    caplog.set_level(logging.WARNING, logger="bridge_table.controller")
    for _ in range(4):
        await asyncio.to_thread(mosquitto.restart)
        await until(lambda: not daemon.ready.is_set() or daemon.counters.connects > 1)
        await asyncio.wait_for(daemon.ready.wait(), 20)
    # each outage is said once (controller/commandline.py, OutageLog), with its first retry
    delays = [r.getMessage().split("retrying in ", 1)[1].split(",")[0] for r in caplog.records
              if "retrying in" in r.getMessage()]
    # every restart is a fresh outage: the back-off starts small again each time (it used
    # to double across restarts, to 5 s)
    assert delays and set(delays) == {"0.1 s"}
    assert daemon.reconnect_max <= 1.0
    await controller.stop()


async def test_health_reports_the_spool_and_the_acks(tmp_path: Path,
                                                    mosquitto: Mosquitto) -> None:
    from firmware_bridge.bridge import Bridge

    config = config_from_dict({
        "table": {"id": "1", "src": SRC},
        "broker": {"url": mosquitto.url, "keepalive": 5},
        "spool": {"path": "spool.sqlite", "max_events": 100},
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
    }, tmp_path / "table.toml")
    bridge = Bridge(config)
    bridge.publisher = Publisher(config, Spool(config.spool.path, max_events=100))
    for e in board_events()[:100]:
        bridge._publish(body(e))
    # full: the next event is refused, loudly, and nothing already spooled is dropped
    assert bridge._publish(body(board_events()[100])) is None
    health = bridge.health_payload()
    assert (health["spool_depth"], health["spool_max"], health["spool_refused"]) == (100, 100, 1)
    assert health["boot"] == bridge.publisher.boot and health["acked_seq"] is None
    bridge.publisher.on_ack(json.dumps({"v": 1, "src": SRC, "boot": bridge.publisher.boot,
                                        "seq": 60}).encode())
    health = bridge.health_payload()
    assert (health["spool_depth"], health["acked_seq"]) == (40, 60)


async def test_a_publish_waiting_for_its_puback_ends_when_the_connection_is_lost(
        tmp_path: Path) -> None:
    """The daemon waits for the PUBACKs of a board's outputs; a broker that dies then must
    not keep it waiting for the publish timeout (it stalled ~10 s before reconnecting)."""
    import math
    import signal

    import aiomqtt

    from controller.service.daemon import until_disconnected

    with Mosquitto(tmp_path / "broker") as broker:
        async with aiomqtt.Client("127.0.0.1", broker.port) as client:
            assert broker.proc is not None
            broker.proc.send_signal(signal.SIGSTOP)  # alive, but no PUBACK will come
            waiting = asyncio.ensure_future(until_disconnected(
                client, client.publish("t/x", b"1", qos=1, timeout=math.inf)))
            await asyncio.sleep(0.2)
            assert not waiting.done()
            broker.kill()
            with pytest.raises(aiomqtt.MqttError, match="connection lost"):
                await asyncio.wait_for(waiting, 30)


async def test_an_idle_gap_is_no_resend(tmp_path: Path, mosquitto: Mosquitto,
                                        caplog: pytest.LogCaptureFixture) -> None:
    """Issues 24 and 29: after an idle gap longer than ack_timeout, the next event is sent
    once; neither the counter nor the log says it was sent again."""
    events = board_events()[:3]
    controller = Daemon(mosquitto, tmp_path / "journal.sqlite")
    daemon = await controller.start()
    publisher = make_publisher(tmp_path, mosquitto, ack_timeout=0.3)
    caplog.set_level(logging.INFO, logger="firmware_bridge.publisher")
    async with running_publisher(publisher):
        await until(lambda: publisher.connected.is_set())
        for n, e in enumerate(events, 1):
            await asyncio.sleep(1.0)  # the table is idle for more than ack_timeout
            publisher.publish_event(body(e))
            await until(lambda n=n: publisher.acked_seq == n)
        await until(lambda: publisher.spool.depth() == 0)
    assert publisher.resends == 0
    assert "sending again" not in caplog.text
    applied_once(daemon, events)
    await controller.stop()


async def test_a_controller_coming_online_with_nothing_waiting_is_no_resend(
        tmp_path: Path, mosquitto: Mosquitto) -> None:
    events = board_events()[:2]
    controller = Daemon(mosquitto, tmp_path / "journal.sqlite")
    daemon = await controller.start()
    publisher = make_publisher(tmp_path, mosquitto)
    async with running_publisher(publisher):
        for e in events:
            publisher.publish_event(body(e))
        await until(lambda: publisher.spool.depth() == 0)
        await controller.stop()
        await until(lambda: not publisher._controllers_online)  # it saw the controller go
        daemon = await controller.start()  # online again: nothing of ours waits
        await until(lambda: daemon.ready.is_set())
        # it saw the controller come back, which asks for a resend, and its sender has
        # looked at that request: a resend would have been counted by now
        await until(lambda: bool(publisher._controllers_online))
        await until(lambda: not publisher._resend_now)
    assert publisher.resends == 0
    await controller.stop()
