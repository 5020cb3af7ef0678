"""MQTT side of the bridge: a SQLite spool in front of an aiomqtt client.

Every event goes to the spool first (one SQLite transaction that also takes the next
``seq``), and only then to the broker; it leaves the spool when the broker's PUBACK
comes back. So an event survives a broker outage and a crash of the bridge alike,
and the broker sees events in spool order. Delivery is at least once: an event whose
PUBACK was lost is sent again with the same ``src`` and ``seq``, as the contract allows.

The client connects with a will (``{"v":1,"src":..,"status":"offline"}``, retained) on
``{root}/{t}/bridge`` and publishes ``online`` there once connected; it subscribes to
``{root}/{t}/indicator`` and hands those messages to a callback.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
import os
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt

from firmware_bridge.config import BridgeConfig
from firmware_bridge.errors import SpoolError

log = logging.getLogger(__name__)

#: QoS 1 messages in flight at once; paho's own default, so paho never queues behind us.
SEND_WINDOW = 20
#: reconnect back-off bounds, seconds
RECONNECT_MIN = 0.1
RECONNECT_MAX = 5.0


async def wait_event(event: asyncio.Event, timeout: float) -> bool:
    """Wait until ``event`` is set or ``timeout`` seconds pass; True if it is set.

    Not ``asyncio.wait_for(event.wait(), timeout)``: on Python 3.11 that can turn a
    cancellation arriving together with the timeout into a TimeoutError, and a task that
    swallows its own cancellation never stops.
    """
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()
    return event.is_set()


def encode_json(obj: Mapping[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


@dataclass(frozen=True)
class SpooledMessage:
    id: int
    topic: str
    payload: bytes
    qos: int
    retain: bool
    seq: int | None


class Spool:
    """SQLite (WAL) outbox of messages not yet acknowledged, plus the persistent ``seq``.

    ``sync="normal"`` survives a crash of the bridge process (WAL commits are in the OS
    before ``append`` returns); ``sync="full"`` also survives a power cut, at the cost of
    an fsync per event (milliseconds on an SD card).
    """

    def __init__(self, path: Path, *, sync: str = "normal") -> None:
        self.path = Path(path)
        if sync not in ("normal", "full"):
            raise SpoolError(f"{self.path}: sync must be 'normal' or 'full', not {sync!r}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise SpoolError(f"{self.path}: cannot create its directory: {e}") from None
        try:
            self._db = self._open(sync)
        except sqlite3.DatabaseError as e:
            # A broken spool must not keep the table from running: keep the file for
            # whoever wants to recover it, and start a fresh one.
            aside = self.path.with_name(f"{self.path.name}.corrupt-{int(time.time())}")
            log.error("spool %s is unreadable (%s): moved aside to %s", self.path, e, aside)
            with contextlib.suppress(OSError):
                os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(OSError):
                    os.replace(f"{self.path}{suffix}", f"{aside}{suffix}")
            try:
                self._db = self._open(sync)
            except sqlite3.Error as e2:
                raise SpoolError(f"{self.path}: cannot open the spool: {e2}") from None
        except sqlite3.Error as e:
            raise SpoolError(f"{self.path}: cannot open the spool: {e}") from None

    def _open(self, sync: str) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(f"PRAGMA synchronous={sync.upper()}")
            db.execute("CREATE TABLE IF NOT EXISTS meta ("
                       " key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            # AUTOINCREMENT: ids are never reused, so id order is send order for good.
            db.execute("CREATE TABLE IF NOT EXISTS outbox ("
                       " id INTEGER PRIMARY KEY AUTOINCREMENT, topic TEXT NOT NULL,"
                       " payload BLOB NOT NULL, qos INTEGER NOT NULL, retain INTEGER NOT NULL,"
                       " seq INTEGER, created REAL NOT NULL)")
            db.execute("SELECT count(*) FROM outbox").fetchone()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _next_seq(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='next_seq'").fetchone()
        if row is not None:
            return int(row[0])
        # A fresh spool (first start, or the old file was lost) starts at the clock in
        # milliseconds, so seq keeps increasing for this src even then.
        return max(1, int(time.time() * 1000))

    @property
    def next_seq(self) -> int:
        """The seq the next event will get."""
        return self._next_seq()

    def append_event(self, topic: str, head: Mapping[str, Any],
                     body: Mapping[str, Any]) -> tuple[int, bytes]:
        """Spool one event: takes the next seq, stores ``head + {seq} + body``.

        Returns ``(seq, payload)``. One transaction: seq and message are kept together.
        """
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                seq = self._next_seq()
                payload = encode_json({**head, "seq": seq, **body})
                self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', ?)",
                                 (seq + 1,))
                self._db.execute("INSERT INTO outbox(topic, payload, qos, retain, seq, created)"
                                 " VALUES(?, ?, 1, 0, ?, ?)", (topic, payload, seq, time.time()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise SpoolError(f"{self.path}: cannot spool an event: {e}") from None
        return seq, payload

    def pending(self, after_id: int = 0, limit: int = SEND_WINDOW) -> list[SpooledMessage]:
        """Messages not yet acknowledged, oldest first, with id > after_id."""
        rows = self._db.execute(
            "SELECT id, topic, payload, qos, retain, seq FROM outbox WHERE id > ?"
            " ORDER BY id LIMIT ?", (after_id, limit)).fetchall()
        return [SpooledMessage(int(r[0]), str(r[1]), bytes(r[2]), int(r[3]), bool(r[4]),
                               None if r[5] is None else int(r[5])) for r in rows]

    def delete(self, message_id: int) -> None:
        try:
            self._db.execute("DELETE FROM outbox WHERE id = ?", (message_id,))
        except sqlite3.Error as e:
            # Not fatal: the message goes out again later, with its seq (a duplicate).
            log.error("spool %s: cannot delete an acknowledged message: %s", self.path, e)

    def depth(self) -> int:
        """How many messages wait for their PUBACK."""
        return int(self._db.execute("SELECT count(*) FROM outbox").fetchone()[0])

    def close(self) -> None:
        self._db.close()


MessageHandler = Callable[[str, bytes], None]


class Publisher:
    """Keeps one bridge connected to its broker and drains the spool into it.

    ``publish_event`` is synchronous (a spool write) and may be called at any time; the
    sending happens in ``run()``, which reconnects until ``stop`` is set.
    """

    def __init__(self, config: BridgeConfig, spool: Spool, *,
                 on_message: MessageHandler | None = None,
                 on_connection: Callable[[bool], None] | None = None,
                 reconnect_min: float = RECONNECT_MIN,
                 reconnect_max: float = RECONNECT_MAX) -> None:
        self.reconnect_min = reconnect_min
        self.reconnect_max = reconnect_max
        self.config = config
        self.spool = spool
        self.src = config.table.src
        self.event_topic = config.topic("event")
        self.status_topic = config.topic("bridge")
        self.health_topic = config.topic("health")
        self.indicator_topic = config.topic("indicator")
        self._on_message = on_message
        self._on_connection = on_connection
        self._wake = asyncio.Event()
        self._client: aiomqtt.Client | None = None
        self._health: bytes | None = None
        self._health_sent = True
        self.connected = asyncio.Event()
        self.drained = asyncio.Event()
        self.connect_count = 0
        self._send_tasks: set[asyncio.Task[None]] = set()
        if spool.depth() == 0:
            self.drained.set()

    # -- producer side ---------------------------------------------------------------

    def publish_event(self, body: Mapping[str, Any]) -> int:
        """Spool one event (``body`` holds ts, type, ...) and wake the sender; returns seq."""
        seq, _ = self.spool.append_event(self.event_topic, {"v": 1, "src": self.src}, body)
        self.drained.clear()
        self._wake.set()
        return seq

    def publish_health(self, payload: Mapping[str, Any]) -> None:
        """Send a health message now if connected, else the latest one on (re)connect."""
        self._health = encode_json(payload)
        self._health_sent = False
        self._wake.set()

    def status_payload(self, status: str) -> bytes:
        return encode_json({"v": 1, "src": self.src, "status": status})

    # -- connection ------------------------------------------------------------------

    def _make_client(self) -> aiomqtt.Client:
        b = self.config.broker
        return aiomqtt.Client(
            b.host, b.port, username=b.username, password=b.password,
            identifier=b.client_id, keepalive=b.keepalive,
            tls_context=b.settings().tls_context(),  # CA file and client certificate
            clean_session=True,
            will=aiomqtt.Will(self.status_topic, self.status_payload("offline"), qos=1,
                              retain=True),
            max_inflight_messages=SEND_WINDOW,
        )

    async def run(self, stop: asyncio.Event) -> None:
        """Connect, drain, reconnect on failure, until ``stop`` is set; then go offline."""
        delay = self.reconnect_min
        outage_logged = False
        while not stop.is_set():
            try:
                client = self._make_client()
                async with client:
                    self._client = client
                    delay = self.reconnect_min
                    outage_logged = False
                    await self._connected_session(client, stop)
                    # stop was set: say goodbye explicitly (a will only fires on failure)
                    with contextlib.suppress(aiomqtt.MqttError):
                        await client.publish(self.status_topic, self.status_payload("offline"),
                                             qos=1, retain=True, timeout=2.0)
            except aiomqtt.MqttError as e:
                if not outage_logged:
                    log.warning("broker %s unreachable (%s); spooling, retrying",
                                self.config.broker.url, e)
                    outage_logged = True
            finally:
                self._client = None
                if self.connected.is_set():
                    self.connected.clear()
                    if self._on_connection:
                        self._on_connection(False)
            if stop.is_set():
                break
            await wait_event(stop, delay)
            delay = min(self.reconnect_max, delay * 2)

    async def _connected_session(self, client: aiomqtt.Client, stop: asyncio.Event) -> None:
        await client.publish(self.status_topic, self.status_payload("online"), qos=1,
                             retain=True)
        await client.subscribe(self.indicator_topic, qos=1)
        self.connect_count += 1
        self.connected.set()
        log.info("connected to %s as %s", self.config.broker.url, self.config.broker.client_id)
        if self._on_connection:
            self._on_connection(True)
        self._health_sent = self._health is None
        try:
            async with asyncio.TaskGroup() as tg:
                receiver = tg.create_task(self._receive(client))
                sender = tg.create_task(self._send(client, tg))
                await stop.wait()
                # Leaving: give what is in flight a moment to be acknowledged (whatever is
                # not stays in the spool for next time), then stop everything.
                await wait_event(self.drained, 2.0)
                sender.cancel()
                receiver.cancel()
                for task in self._send_tasks:
                    task.cancel()
        except BaseExceptionGroup as group:
            # A lost connection surfaces as MqttError inside the task group: unwrap it so
            # run() sees the plain error and reconnects.
            mqtt_errors = group.subgroup(aiomqtt.MqttError)
            if mqtt_errors is not None and mqtt_errors.exceptions:
                first = mqtt_errors.exceptions[0]
                while isinstance(first, BaseExceptionGroup):
                    first = first.exceptions[0]
                raise first from group
            raise

    async def _receive(self, client: aiomqtt.Client) -> None:
        async for message in client.messages:
            payload = message.payload
            data = payload if isinstance(payload, bytes | bytearray) else \
                str(payload if payload is not None else "").encode()
            if self._on_message is not None:
                try:
                    self._on_message(str(message.topic), bytes(data))
                except Exception:  # a bad handler must not drop the connection
                    log.exception("handler failed on a message on %s", message.topic)

    async def _send(self, client: aiomqtt.Client, tg: asyncio.TaskGroup) -> None:
        window = asyncio.Semaphore(SEND_WINDOW)
        in_flight: set[int] = set()
        last_id = 0
        while True:
            if not self._health_sent and self._health is not None:
                self._health_sent = True
                tg.create_task(client.publish(self.health_topic, self._health, qos=0))
            batch = self.spool.pending(after_id=last_id, limit=SEND_WINDOW)
            if not batch:
                if not in_flight:
                    self.drained.set()
                self._wake.clear()
                # look again after clearing: an event spooled in between must not wait
                if self.spool.pending(after_id=last_id, limit=1) or \
                        (not self._health_sent and self._health is not None):
                    continue
                await self._wake.wait()
                continue
            for message in batch:
                await window.acquire()
                in_flight.add(message.id)
                # Tasks start in creation order and client.publish hands the message to
                # paho before its first await, so the broker gets them in spool order.
                task = tg.create_task(self._send_one(client, message, window, in_flight))
                self._send_tasks.add(task)
                task.add_done_callback(self._send_tasks.discard)
                last_id = message.id

    async def _send_one(self, client: aiomqtt.Client, message: SpooledMessage,
                        window: asyncio.Semaphore, in_flight: set[int]) -> None:
        try:
            await client.publish(message.topic, message.payload, qos=message.qos,
                                 retain=message.retain, timeout=math.inf)
            self.spool.delete(message.id)
        finally:
            in_flight.discard(message.id)
            window.release()
        if not in_flight and self.spool.depth() == 0:
            self.drained.set()
