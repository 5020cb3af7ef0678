"""MQTT side of the bridge: a SQLite spool in front of an aiomqtt client.

Every event goes to the spool first (one SQLite transaction that also takes the next
``seq``), and only then to the broker. It leaves the spool when the **controller** has
applied it: the controller publishes, retained, ``{root}/{t}/ack/{src}`` =
``{"v":1,"src":..,"boot":..,"seq":N}`` once every event of this boot up to ``N`` is journaled
and applied (contract 1.2). A broker's PUBACK is not enough: a broker that crashes without
persistence, or drops a queue that grew too long, loses events it has acknowledged. What is
not acknowledged is sent again (same ``boot`` and ``seq``; the controller applies each once,
in order) after every reconnect, when a controller comes online, and after ``ack_timeout``
seconds without progress (doubling up to ``ACK_TIMEOUT_MAX``). With ``acknowledge =
"broker"`` the spool behaves as in version 1: the PUBACK deletes.

``boot`` (1.2) is a random id the spool takes when it starts a sequence (a fresh or lost
spool, or ``seq`` reaching ``MAX_SEQ``); ``seq`` counts 1, 2, 3... within it. A reflashed
bridge is a new boot, so the controller never mistakes its events for old ones.

The spool is bounded (``max_events``): beyond it new events are refused with a SpoolError
(the bridge counts and logs them), never the oldest dropped (that would leave a gap the
controller waits for).

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
import secrets
import sqlite3
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import aiomqtt
import msgspec

from controller import wire
from controller.broker.login import LoginWatch
from controller.commandline import OutageLog
from controller.sqlitefile import private_sqlite
from firmware_bridge.config import BridgeConfig
from firmware_bridge.errors import BridgeError, SpoolError

log = logging.getLogger(__name__)

#: QoS 1 messages in flight at once; paho's own default, so paho never queues behind us.
SEND_WINDOW = 20
#: reconnect back-off bounds, seconds: a restarted broker is found again within a second
RECONNECT_MIN = 0.1
RECONNECT_MAX = 1.0
#: seconds the MQTT connect may take (a broker shutting down can accept and never answer)
CONNECT_TIMEOUT = 2.0
#: largest seq (contract 1.2: 2^53 - 1); the spool starts a new boot beyond it
MAX_SEQ = 2**53 - 1
#: the longest wait for an ack before sending the unacknowledged events again
ACK_TIMEOUT_MAX = 300.0


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
    boot: str | None = None


def with_acked(payload: bytes, acked: int) -> bytes:
    """The event with ``acked`` (1.2) set, right after its ``boot``."""
    data = json.loads(payload)
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key != "acked":
            out[key] = value
        if key == "boot":
            out["acked"] = acked
    return encode_json(out)


def new_boot() -> str:
    """A boot id: 16 random hex digits."""
    return secrets.token_hex(8)


class Spool:
    """SQLite (WAL) outbox of messages not yet acknowledged, plus the persistent ``seq``.

    ``sync="normal"`` survives a crash of the bridge process (WAL commits are in the OS
    before ``append`` returns); ``sync="full"`` also survives a power cut, at the cost of
    an fsync per event (milliseconds on an SD card).
    """

    def __init__(self, path: Path, *, sync: str = "normal", max_events: int = 200_000) -> None:
        self.path = Path(path)
        self.max_events = max_events
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
            except (sqlite3.Error, OSError) as e2:
                raise SpoolError(f"{self.path}: cannot open the spool: {e2}") from None
        except (sqlite3.Error, OSError) as e:
            raise SpoolError(f"{self.path}: cannot open the spool: {e}") from None

    def _open(self, sync: str) -> sqlite3.Connection:
        # every event of the table is in it: 0600, as the controller's journal
        db = private_sqlite(self.path, isolation_level=None)
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
            columns = {str(r[1]) for r in db.execute("PRAGMA table_info(outbox)")}
            if "boot" not in columns:  # a spool of a version-1 bridge
                db.execute("ALTER TABLE outbox ADD COLUMN boot TEXT")
            db.execute("CREATE TABLE IF NOT EXISTS text_meta ("
                       " key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            # What lies on each antenna of the inventory readers, so that a restarted bridge
            # reports only what changed while it was down (firmware_bridge.bridge).
            db.execute("CREATE TABLE IF NOT EXISTS lying ("
                       " reader TEXT NOT NULL, antenna TEXT NOT NULL, uid TEXT NOT NULL,"
                       " PRIMARY KEY (reader, antenna, uid))")
            # The last line of each reader passed on (its events in the outbox): a restarted
            # bridge asks the reader to replay its lines from there (firmware_bridge.protocol).
            db.execute("CREATE TABLE IF NOT EXISTS reader_mark ("
                       " reader TEXT PRIMARY KEY, seq INTEGER NOT NULL, antenna TEXT NOT NULL,"
                       " op TEXT NOT NULL, args TEXT NOT NULL)")
            db.execute("SELECT count(*) FROM outbox").fetchone()
        except sqlite3.Error:
            db.close()
            raise
        return db

    def _next_seq(self) -> int:
        row = self._db.execute("SELECT value FROM meta WHERE key='next_seq'").fetchone()
        # A fresh spool (first start, or the old file was lost) starts at 1 with a new boot.
        return int(row[0]) if row is not None else 1

    def _boot(self) -> str | None:
        row = self._db.execute("SELECT value FROM text_meta WHERE key='boot'").fetchone()
        return str(row[0]) if row is not None else None

    def _start_boot(self, seq: int) -> str:
        boot = new_boot()
        self._db.execute("INSERT OR REPLACE INTO text_meta(key, value) VALUES('boot', ?)",
                         (boot,))
        self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', ?)", (seq,))
        return boot

    @property
    def next_seq(self) -> int:
        """The seq the next event will get."""
        return self._next_seq()

    @property
    def boot(self) -> str:
        """This spool's boot id (taken now if it has none yet)."""
        boot = self._boot()
        if boot is None:
            try:
                # a version-1 spool keeps counting where it was, under a boot of its own
                boot = self._start_boot(self._next_seq())
            except sqlite3.Error as e:
                raise SpoolError(f"{self.path}: cannot start a boot: {e}") from None
        return boot

    def append_event(self, topic: str, head: wire.Event | Mapping[str, Any],
                     body: Mapping[str, Any] | None = None, *,
                     lying: tuple[str, str, str, str] | None = None,
                     mark: tuple[str, int, str, str, str] | None = None) -> tuple[int, bytes]:
        """Spool one event: takes the next seq, stores ``head`` (a ``controller.wire``
        event) with that seq and the boot, or the mapping ``head + {seq, boot} + body``.

        Returns ``(seq, payload)``. One transaction: seq, boot, message and, with ``lying``
        = (reader, antenna, uid, action), what lies on that antenna, and with ``mark`` =
        (reader, seq, antenna, op, args), the reader line it came from, are kept together.
        Raises SpoolError when the spool is full (``max_events``) or cannot be written.
        """
        try:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if self.depth() >= self.max_events:
                    raise SpoolError(f"{self.path}: the spool is full ({self.max_events} "
                                     f"events not acknowledged): event refused")
                seq = self._next_seq()
                boot = self._boot()
                if boot is None or seq > MAX_SEQ:
                    seq = 1
                    boot = self._start_boot(seq)
                if isinstance(head, wire.TagEvent | wire.ButtonEvent):
                    payload = wire.encode(msgspec.structs.replace(head, seq=seq, boot=boot))
                else:
                    payload = encode_json({**head, "seq": seq, "boot": boot, **(body or {})})
                self._db.execute("INSERT OR REPLACE INTO meta(key, value) VALUES('next_seq', ?)",
                                 (seq + 1,))
                self._db.execute("INSERT INTO outbox(topic, payload, qos, retain, seq, created,"
                                 " boot) VALUES(?, ?, 1, 0, ?, ?, ?)",
                                 (topic, payload, seq, time.time(), boot))
                if lying is not None:
                    self._note_lying(*lying)
                if mark is not None:
                    self._set_mark(mark)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
        except sqlite3.Error as e:
            raise SpoolError(f"{self.path}: cannot spool an event: {e}") from None
        return seq, payload

    def _note_lying(self, reader: str, antenna: str, uid: str, action: str) -> None:
        if action == "present":
            self._db.execute("INSERT OR IGNORE INTO lying(reader, antenna, uid) VALUES(?, ?, ?)",
                             (reader, antenna, uid))
        else:
            self._db.execute("DELETE FROM lying WHERE reader = ? AND antenna = ? AND uid = ?",
                             (reader, antenna, uid))

    def note_lying(self, reader: str, antenna: str, uid: str, action: str) -> None:
        """Record a tag put on or taken off an inventory antenna (no event with it)."""
        try:
            self._note_lying(reader, antenna, uid, action)
        except sqlite3.Error as e:
            log.error("spool %s: cannot record what lies on %s/%s: %s", self.path, reader,
                      antenna, e)

    def lying(self, reader: str) -> dict[str, set[str]]:
        """What lay on each antenna of ``reader`` when the bridge last saw it."""
        out: dict[str, set[str]] = {}
        for antenna, uid in self._db.execute(
                "SELECT antenna, uid FROM lying WHERE reader = ?", (reader,)):
            out.setdefault(str(antenna), set()).add(str(uid))
        return out

    def _set_mark(self, mark: tuple[str, int, str, str, str]) -> None:
        self._db.execute("INSERT OR REPLACE INTO reader_mark(reader, seq, antenna, op, args)"
                         " VALUES(?, ?, ?, ?, ?)", mark)

    def set_mark(self, reader: str, line: tuple[int, str, str, str]) -> None:
        """``reader``'s line ``line`` (seq, antenna, op, args) is passed on, with no event of
        its own (everything before it is spooled)."""
        try:
            self._set_mark((reader, *line))
        except sqlite3.Error as e:  # not fatal: the replay starts earlier, harmlessly
            log.error("spool %s: cannot record the last line of %s: %s", self.path, reader, e)

    def mark(self, reader: str) -> tuple[int, str, str, str] | None:
        """The last line of ``reader`` passed on: (seq, antenna, op, args)."""
        row = self._db.execute("SELECT seq, antenna, op, args FROM reader_mark"
                               " WHERE reader = ?", (reader,)).fetchone()
        return None if row is None else (int(row[0]), str(row[1]), str(row[2]), str(row[3]))

    def acknowledge(self, boot: str, seq: int) -> int:
        """The controller applied every event of ``boot`` up to ``seq``: drop them from the
        spool. Returns how many were dropped."""
        try:
            cur = self._db.execute("DELETE FROM outbox WHERE boot = ? AND seq <= ?",
                                   (boot, seq))
        except sqlite3.Error as e:
            log.error("spool %s: cannot drop acknowledged events: %s", self.path, e)
            return 0
        return int(cur.rowcount)

    def pending(self, after_id: int = 0, limit: int = SEND_WINDOW) -> list[SpooledMessage]:
        """Messages not yet acknowledged, oldest first, with id > after_id."""
        rows = self._db.execute(
            "SELECT id, topic, payload, qos, retain, seq, boot FROM outbox WHERE id > ?"
            " ORDER BY id LIMIT ?", (after_id, limit)).fetchall()
        return [SpooledMessage(int(r[0]), str(r[1]), bytes(r[2]), int(r[3]), bool(r[4]),
                               None if r[5] is None else int(r[5]),
                               None if r[6] is None else str(r[6])) for r in rows]

    def acked_through(self, boot: str) -> int:
        """Every seq of ``boot`` up to this one has left the spool, i.e. was acknowledged
        (with ``acknowledge = "controller"``): the ``acked`` the events carry (1.2)."""
        row = self._db.execute("SELECT min(seq) FROM outbox WHERE boot = ?", (boot,)).fetchone()
        if row is not None and row[0] is not None:
            return int(row[0]) - 1
        return self._next_seq() - 1 if self._boot() == boot else 0

    def delete(self, message_id: int) -> None:
        try:
            self._db.execute("DELETE FROM outbox WHERE id = ?", (message_id,))
        except sqlite3.Error as e:
            # Not fatal: the message goes out again later, with its seq (a duplicate).
            log.error("spool %s: cannot delete an acknowledged message: %s", self.path, e)

    def depth(self, *, through_id: int | None = None) -> int:
        """How many messages wait for their acknowledgement (with ``through_id``: of those
        with an id up to it)."""
        if through_id is not None:
            return int(self._db.execute("SELECT count(*) FROM outbox WHERE id <= ?",
                                        (through_id,)).fetchone()[0])
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
        self.end_to_end = config.spool.acknowledge == "controller"
        self.ack_timeout = config.spool.ack_timeout
        self.spool = spool
        self.src = config.table.src
        self.event_topic = config.topic("event")
        self.status_topic = config.topic("bridge")
        self.health_topic = config.topic("health")
        self.indicator_topic = config.topic("indicator")
        self.ack_topic = config.topic(f"ack/{self.src}")
        root = config.broker.root.strip("/")
        #: the controllers' status topics (every table's daemon, and this table's own)
        self.controller_topics = (wire.status_topic(root=root),
                                  wire.status_topic(config.table.id, root=root))
        self.boot = spool.boot
        #: the last ack of this boot (seq), and counters for health
        self.acked_seq: int | None = None
        self.resends = 0
        #: events the broker has acknowledged (PUBACK), resends included
        self.sent = 0
        self._ack_progress = time.monotonic()
        self._resend_now = False
        self._controllers_online: set[str] = set()
        self._status_seen = False
        self._ack_wait = 0.0
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

    def publish_event(self, event: wire.Event | Mapping[str, Any], *,
                      lying: tuple[str, str, str, str] | None = None,
                      mark: tuple[str, int, str, str, str] | None = None) -> int:
        """Spool one event and wake the sender; returns seq. ``event`` is a
        ``controller.wire`` event (its ``src`` this bridge's, ``seq`` and ``boot`` set here),
        or the fields after ``seq`` (ts, type, zone, ...), as a recording holds them.

        ``lying`` (reader, antenna, uid, action) records, in the same transaction, what lies
        on an inventory antenna, and ``mark`` the reader line it came from
        (``Spool.append_event``). Raises BridgeError for a body that is no contract event."""
        if not isinstance(event, wire.TagEvent | wire.ButtonEvent):
            try:
                event = msgspec.convert({**event, "v": wire.VERSION, "src": self.src, "seq": 0},
                                        wire.Event)
            except msgspec.ValidationError as exc:
                raise BridgeError(f"not a contract event: {exc}") from None
        if self.drained.is_set():
            # nothing was waiting for an ack: the wait for this one starts now, not at the
            # last ack (however long the table was idle since)
            self._ack_progress = time.monotonic()
        seq, payload = self.spool.append_event(self.event_topic, event, lying=lying,
                                               mark=mark)
        if b'"boot":"' + self.boot.encode() + b'"' not in payload:  # seq wrapped: a new boot
            self.boot = self.spool.boot
        self.drained.clear()
        self._wake.set()
        return seq

    def publish_health(self, payload: Mapping[str, Any]) -> None:
        """Send a health message now if connected, else the latest one on (re)connect."""
        self._health = encode_json(payload)
        self._health_sent = False
        self._wake.set()

    def status_payload(self, status: Literal["online", "offline"]) -> bytes:
        return wire.encode(wire.BridgeStatus(v=wire.VERSION, src=self.src, status=status))

    # -- connection ------------------------------------------------------------------

    def _make_client(self) -> aiomqtt.Client:
        b = self.config.broker
        client = aiomqtt.Client(
            b.host, b.port, username=b.username, password=b.password,
            identifier=b.client_id, keepalive=b.keepalive,
            tls_context=b.settings().tls_context(),  # CA file and client certificate
            clean_session=True, timeout=CONNECT_TIMEOUT,
            will=aiomqtt.Will(self.status_topic, self.status_payload("offline"), qos=1,
                              retain=True),
            max_inflight_messages=SEND_WINDOW,
        )
        # a full send window plus health and status: not a "concerning number" of calls
        client.pending_calls_threshold = 2 * SEND_WINDOW
        return client

    async def run(self, stop: asyncio.Event) -> None:
        """Connect, drain, reconnect on failure, until ``stop`` is set; then go offline."""
        delay = self.reconnect_min
        b = self.config.broker
        # said once, again at growing intervals, and its end with how long it lasted, as
        # every client of the project says it (controller.commandline.OutageLog)
        outage = OutageLog(log, f"broker {b.url} (spooling)")
        login = LoginWatch(log, b.url, b.username,
                           who=f"the bridge of table {self.config.table.id}")
        while not stop.is_set():
            try:
                client = self._make_client()
                async with client:
                    self._client = client
                    login.up()
                    delay = self.reconnect_min
                    outage.recovered()
                    await self._connected_session(client, stop)
                    # stop was set: say goodbye explicitly (a will only fires on failure)
                    with contextlib.suppress(aiomqtt.MqttError):
                        await client.publish(self.status_topic, self.status_payload("offline"),
                                             qos=1, retain=True, timeout=2.0)
            except aiomqtt.MqttError as e:
                if login.lost(e):
                    delay = max(delay, 10.0)
                login.failed(e)   # refused at start: LoginRefused, the command exits 2
                outage.failed(e, delay)
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
        if self.end_to_end:
            await client.subscribe([(self.ack_topic, 1),
                                    *((topic, 1) for topic in self.controller_topics)])
        self.connect_count += 1
        self._ack_progress = time.monotonic()
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
            topic = str(message.topic)
            if topic == self.ack_topic:
                self.on_ack(bytes(data))
                continue
            if topic in self.controller_topics:
                self._on_controller_status(topic, bytes(data), retained=bool(message.retain))
                continue
            if self._on_message is not None:
                try:
                    self._on_message(str(message.topic), bytes(data))
                except Exception:  # a bad handler must not drop the connection
                    log.exception("handler failed on a message on %s", message.topic)

    # -- acknowledgements (contract 1.2) ---------------------------------------------------

    def on_ack(self, payload: bytes) -> None:
        """``{root}/{t}/ack/{src}``: drop what the controller has applied."""
        if not payload.strip():  # a cleared retained message
            return
        try:
            ack = wire.decode(payload, wire.Ack)
        except (msgspec.ValidationError, msgspec.DecodeError, UnicodeDecodeError) as e:
            log.warning("ack ignored, not a contract ack (%s): %r", e, payload[:200])
            return
        boot, seq = ack.boot, ack.seq
        if boot is None:
            log.warning("ack ignored, no boot: %r", payload[:200])
            return
        # an ack of an earlier boot drops what is left of that boot (after a seq wrap)
        dropped = self.spool.acknowledge(boot, seq)
        if boot == self.boot:
            if self.acked_seq is None or seq > self.acked_seq:
                self.acked_seq = seq
                self._ack_progress = time.monotonic()
                self._ack_wait = self.ack_timeout
        if dropped:
            self._ack_progress = time.monotonic()
        if self.spool.depth() == 0:
            self.drained.set()

    def _on_controller_status(self, topic: str, payload: bytes, *,
                              retained: bool = False) -> None:
        try:
            status = json.loads(payload).get("status") if payload.strip() else None
        except (UnicodeDecodeError, json.JSONDecodeError, AttributeError):
            status = None
        was = bool(self._controllers_online)
        self._status_seen = True
        if status == "online":
            self._controllers_online.add(topic)
        else:
            self._controllers_online.discard(topic)
        if self._controllers_online and not was and not retained:
            # a controller (re)started: its broker session may be new and have lost what we
            # sent; everything not acknowledged goes again (duplicates are dropped there). A
            # retained status is what we find on connecting, when everything not
            # acknowledged is being sent anyway.
            self.resend()

    def resend(self) -> None:
        """Send everything not yet acknowledged again, from the oldest."""
        self._resend_now = True
        self._wake.set()

    def _ack_overdue(self) -> bool:
        """Nothing acknowledged for a while although events wait: time to send them again.
        The while is counted from the last ack, or from the spooling of the first event that
        waits when nothing waited before (``publish_event``): an idle table is no delay.

        Not while every controller says it is offline (its broker session queues what we
        sent; sending again would only fill that queue)."""
        if not self.end_to_end or self.spool.depth() == 0:
            return False
        wait = self._ack_wait or self.ack_timeout
        if time.monotonic() - self._ack_progress < wait:
            return False
        return bool(self._controllers_online) or not self._status_seen

    async def _send(self, client: aiomqtt.Client, tg: asyncio.TaskGroup) -> None:
        window = asyncio.Semaphore(SEND_WINDOW)
        in_flight: set[int] = set()
        last_id = 0
        self._resend_now = False
        while True:
            if not self._health_sent and self._health is not None:
                self._health_sent = True
                tg.create_task(client.publish(self.health_topic, self._health, qos=0))
            if self._resend_now or self._ack_overdue():
                # a resend only if something sent on this connection is still waiting
                oldest = self.spool.pending(limit=1)
                again = bool(oldest) and oldest[0].id <= last_id
                if again and not self._resend_now:
                    # no progress since the last time either: wait longer before the next
                    self._ack_wait = min(ACK_TIMEOUT_MAX, 2 * (self._ack_wait or
                                                               self.ack_timeout))
                self._resend_now = False
                self._ack_progress = time.monotonic()
                if again:
                    self.resends += 1
                    log.info("sending again what the controller has not acknowledged "
                             "(%d event(s))", self.spool.depth(through_id=last_id))
                last_id = 0
            batch = self.spool.pending(after_id=last_id, limit=SEND_WINDOW)
            if not batch:
                if not in_flight and self.spool.depth() == 0:
                    self.drained.set()
                self._wake.clear()
                # look again after clearing: an event spooled in between must not wait
                if self.spool.pending(after_id=last_id, limit=1) or \
                        (not self._health_sent and self._health is not None) or \
                        self._resend_now:
                    continue
                if self.end_to_end and self.spool.depth():
                    await wait_event(self._wake, max(0.05, (self._ack_wait or self.ack_timeout)
                                                     - (time.monotonic() - self._ack_progress)))
                else:
                    await self._wake.wait()
                continue
            acked = self.spool.acked_through(self.boot) if self.end_to_end else None
            for message in batch:
                if acked is not None and message.boot == self.boot and message.seq is not None:
                    # where the controller may start if it has never heard of this boot (a
                    # new journal): everything up to ``acked`` was applied by a controller
                    message = replace(message, payload=with_acked(message.payload, acked))
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
            self.sent += 1
            if not self.end_to_end:
                self.spool.delete(message.id)
        finally:
            in_flight.discard(message.id)
            window.release()
        if not in_flight and self.spool.depth() == 0:
            self.drained.set()
