"""The rules daemon on an MQTT broker (``bridge-table controller``: ``cli_controller``).

It subscribes ``{root}/+/event`` and ``{root}/+/ruling`` (QoS 1; with ``--tables`` or
``--partition``, those of its own tables only: ``controller.service.partition``, ``docs/scale.md``),
feeds every message to the Engine (``controller.engine``) and publishes what the Engine
answers, with the retain flags it gives.

The hot path is two threads: paho-mqtt's network thread (``controller.service.mqtt``, the one MQTT
adapter) and one worker (:meth:`ControllerDaemon._serve`). The worker takes a batch of what
has arrived, and for the batch:

1. one journal transaction (``controller.service.journal``: group commit), written: a
   batch the journal cannot write never reaches the Engine;
2. the Engine;
3. the outputs handed to paho without waiting for their PUBACKs; paho reports each one sent
   (QoS 0) or acknowledged (QoS 1) and the worker advances the journal's published-through
   mark, which rides on the next commit. Retained ``state`` and ``indicator`` go out at QoS
   0 (wire contract 1.3): each replaces the last, and the retained copy and the journal keep
   them consistent. They are built once per table per batch (``Engine.defer``/``flush``,
   wire contract 1.4), after the batch's other outputs;
4. the batch made durable (``Journal.sync``: the ``fsync`` of ``--journal-sync full``),
   after its outputs are on their way, so that no table's display waits for the disk;
5. the PUBACKs (**manual acknowledgements**, paho-mqtt 2's ``manual_ack_set``/``ack``) and
   the end-to-end acknowledgements (retained at QoS 0, 1.4): a message is acknowledged only
   once it is durable in the journal, so a kill or a power cut at any moment loses nothing
   the broker considers delivered: what was not acknowledged is redelivered to the next
   session (and an event applied before the cut is dropped as a duplicate when it comes
   again, ``Engine`` by ``src``/``boot``/``seq``).

Only incoming events are journaled: the Engine is deterministic, so a restart rebuilds
every table by re-feeding them to a fresh Engine, publishes the outputs after the
published-through mark, then the retained messages. Nothing accepted is lost, nothing is
applied twice:

- persistent session (``clean_session=False``, a fixed client id): while the daemon is
  down, the broker queues the events for it;
- duplicates (a redelivery, a bridge that resent from its spool: same ``src``, ``boot``
  and ``seq``) are dropped by the Engine and counted in ``engine.stats["duplicates"]``;
- **end-to-end acknowledgements** (contract 1.2): once a batch is journaled and applied the
  daemon publishes, retained, ``{root}/{t}/ack/{src}`` with the last ``seq`` applied of that
  source's ``boot`` (``Engine.acks_due``), and every source's after each (re)connect. A
  bridge keeps each event in its spool until that ack covers it, and sends the rest again
  after a reconnect or a timeout: an event the broker lost (a crash without persistence, a
  full queue) is sent again, never lost;
- outputs handed to a connection that was lost before paho confirmed them are published
  again on the next one;
- reconnects start at ``reconnect_min`` (0.1 s), double up to ``reconnect_max`` (1 s), and
  start small again after every connection that got through; the MQTT connect itself gives
  up after ``connect_timeout`` (2 s: a broker shutting down may accept the TCP connection and
  never answer it).

A restart restores each table from its newest snapshot in the journal (taken at each
board start: ``controller.service.snapshot``) and re-feeds only what follows it; a table without
one, all its messages. Start each session with a new journal (``--journal
var/session-2026-11-29.sqlite``, or move the old one away): the old file stays the
session's complete record, and ``python -m controller.service.journal export`` turns it into
``bridge-table replay`` input.

The daemon's status is retained on ``{root}/controller/status`` (``online`` with counters,
refreshed every ``status_interval`` seconds; the will says ``offline``); a partitioned
controller's on ``{root}/controller/{name}/status``.

Payloads above ``max_payload`` bytes (64 KiB by default; an event is ~200 bytes) are not
journaled nor applied: the daemon answers them on ``{root}/{t}/error`` and logs them.
Before the journal too, each message is screened (``_screen``, docs/security.md): an event
over its table's intake bound (``controller.service.intake``) is dropped, reported on
``{root}/{t}/error`` at most once a second, and a flooding table's events paused; with
``--identities`` (``controller.broker.identity``) an input whose ``src`` may not speak on its topic
is answered on ``{root}/{t}/error``. Neither is journaled, applied, or given a seat among
the table's sources.

asyncio stays outside the hot path: :meth:`ControllerDaemon.run` is a coroutine that starts
the threads, reports ``ready`` and stops them (``bridge-table run`` and the demo run it in
their event loop); ``until_disconnected`` and ``cancel_until_done`` remain for the aiomqtt
clients of the other commands.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import queue
import signal
import socket
import threading
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

import aiomqtt
import msgspec

from controller import wire
from controller.broker.identity import Identities
from controller.broker.login import LoginWatch
from controller.broker.settings import BrokerSettings
from controller.commandline import OutageLog
from controller.service import snapshot
from controller.service.gcpolicy import GcPolicy
from controller.service.intake import PAUSE, PAUSE_AFTER, Intake
from controller.service.journal import IncomingEntry, Journal, JournalError
from controller.service.latency import LatencyTally
from controller.service.mqtt import LOST, Connection, MqttError, Received, check_versions

__all__ = ["ControllerDaemon", "EngineLike", "OutgoingLike", "install_stop_signals",
           "run_until_signalled"]

log = logging.getLogger("bridge_table.controller")

T = TypeVar("T")

DEFAULT_MAX_PAYLOAD = wire.MAX_PAYLOAD
#: seconds to wait for the PUBACKs of what the daemon publishes (a board's outputs at once)
PUBLISH_TIMEOUT = 30.0
NODELAY = (socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
#: messages per journal transaction at most (the broker's in-flight window to the daemon,
#: ``max_inflight_messages``, usually bounds it first)
MAX_BATCH = 1000
#: seconds the idle worker waits before it looks at the PUBACKs and the status again
IDLE = 0.2
DEFAULT_GATHER = 0.002
#: a batch this large commits at once; a smaller one waits ``gather`` seconds for more
GATHER_ENOUGH = 32
#: put in the inbox to wake the worker (a stop)
WAKE = "wake"


class OutgoingLike(Protocol):
    @property
    def topic(self) -> str: ...
    @property
    def payload(self) -> Mapping[str, Any]: ...
    @property
    def retain(self) -> bool: ...
    @property
    def qos(self) -> int: ...


class EngineLike(Protocol):
    """What the daemon needs of ``controller.engine.Engine``."""

    stats: dict[str, int]

    def handle(self, topic: str, payload: bytes | str | Mapping[str, Any]
               ) -> Sequence[OutgoingLike]: ...
    def retained(self) -> Sequence[OutgoingLike]: ...
    @property
    def tables(self) -> list[str]: ...


@dataclass(frozen=True)
class _Out:
    """An output of the daemon itself (errors it answers before the Engine)."""

    topic: str
    payload: Mapping[str, Any]
    retain: bool = False
    qos: int = 1


#: the Engine's canonical JSON (``wire.encode``), so that the daemon and replay agree byte
#: for byte
_encode = wire.encode
#: an event over its table's intake bound, dropped without a word (``_screen``)
_DROP = _Out("", {})


class _Src(msgspec.Struct):
    """Only the ``src`` of an input (the rest is the Engine's to decode)."""

    src: str


_src_of = msgspec.json.Decoder(_Src).decode


@dataclass
class _Counters:
    received: int = 0
    applied: int = 0
    oversize: int = 0
    #: events over their table's intake bound, and inputs whose src may not speak there
    throttled: int = 0
    foreign_src: int = 0
    engine_failures: int = 0
    published: int = 0
    connects: int = 0
    rebuilt: int = 0
    acks: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class ControllerDaemon:
    """The rules daemon: ``await ControllerDaemon(broker=..., engine=...).run(stop)``."""

    broker: BrokerSettings
    engine: EngineLike
    journal: Journal | None = None
    root: str = "bridge"
    client_id: str = ""
    max_payload: int = DEFAULT_MAX_PAYLOAD
    status_interval: float = 30.0
    reconnect_min: float = 0.1
    reconnect_max: float = 1.0
    connect_timeout: float = 2.0
    #: seconds a small batch waits for more events to share its journal commit (2 ms: at
    #: 1,024 tables -23% CPU per event and a lower p99, docs/benchmarks-archive.md)
    gather: float = DEFAULT_GATHER
    info: Mapping[str, Any] = field(default_factory=dict)  # extra fields for the status
    #: serve only these tables (``bridge-table run``: one Pi, one table); empty: every table
    only_tables: Sequence[str] = ()
    #: a partitioned controller's name (``controller.service.partition.scope_name``): its client id
    #: and its status topic ``{root}/controller/{name}/status``
    name: str = ""
    #: who is who (``controller.broker.identity``, broker-config's ``identities.toml``): an input
    #: whose ``src`` may not speak on its topic is answered with an ``error``, never
    #: journaled nor applied; None: any ``src``
    identities: Identities | None = None
    #: each table's events taken in at most (``controller.service.intake``); None: no bound
    intake: Intake | None = field(default_factory=Intake)
    counters: _Counters = field(default_factory=_Counters)
    #: the daemon's own event -> outputs times since it started (``controller.service.latency``),
    #: in each ``online`` status (wire 1.16)
    latency: LatencyTally = field(default_factory=LatencyTally)
    #: no full garbage collection in the middle of a round (controller/service/gcpolicy.py); None:
    #: Python's own collector as it is
    gc_policy: GcPolicy | None = field(default_factory=GcPolicy)
    #: set while connected and subscribed (for ``run``, tests and the demo)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    _outbox: list[tuple[int, OutgoingLike]] = field(default_factory=list)
    _rebuilt: bool = False
    #: the Engine takes a snapshot at each board start, journaled (controller.service.snapshot)
    _snapshots: bool = False
    # the hot path's state, owned by the worker thread (see _serve)
    _inbox: queue.SimpleQueue[Received | str] = field(default_factory=queue.SimpleQueue)
    #: mid -> (cause n, output, payload) handed to paho, not yet confirmed sent
    _unconfirmed: dict[int, tuple[int, OutgoingLike, bytes]] = field(default_factory=dict)
    #: cause n -> its outputs not yet confirmed (insertion order = increasing n)
    _open: dict[int, int] = field(default_factory=dict)
    #: table -> when its paused ``event`` subscription comes back (``controller.service.intake``)
    _paused: dict[str, float] = field(default_factory=dict)
    _pause_due: list[str] = field(default_factory=list)
    _last_n: int = 0      # the last incoming n applied
    _marked: int = 0      # published-through as last given to the journal

    def __post_init__(self) -> None:
        self.root = self.root.strip("/") or "bridge"
        if not self.client_id:
            scope = "-".join([self.root.replace("/", "-"),
                              *([self.name] if self.name else self.only_tables)])
            self.client_id = f"bridge-table-controller-{scope}"

    # -- topics ---------------------------------------------------------------------------
    @property
    def status_topic(self) -> str:
        """``{root}/controller/status``; ``{root}/controller/{name}/status`` for a named
        (partitioned) controller and ``{root}/controller/{t}/status`` for a one-table
        controller (``bridge-table run``), so that each has its own."""
        only = self.only_tables[0] if len(self.only_tables) == 1 else None
        return wire.status_topic(self.name or only, root=self.root)

    @property
    def subscriptions(self) -> list[tuple[str, int]]:
        """Each table's own topics when the tables are known (``--tables``, or
        ``--identities``: a flooding table can then be paused alone), else ``+``."""
        tables = list(self.only_tables) or (
            list(self.identities.events) if self.identities is not None else ["+"])
        return [(wire.topic(t, kind, root=self.root), 1) for t in tables
                for kind in ("event", "ruling")]

    def _table_of(self, topic: str) -> str:
        """The topic's table id, for an error about it; ``controller`` when it is not a
        valid id (docs/wire-contract.md 1.2: never an error topic under ``..`` or 60 KB)."""

        rest = topic[len(self.root) + 1:] if topic.startswith(self.root + "/") else topic
        table = rest.rsplit("/", 1)[0]
        return table if wire.table_id_problem(table) is None else "controller"

    # -- rebuild --------------------------------------------------------------------------
    def rebuild(self) -> int:
        """Re-feed the journal to the Engine (once, before the first connection).

        Outputs of messages already published are discarded; those of messages after
        ``published_through`` (computed, maybe not published, when the daemon died) go to
        the outbox. Returns how many messages were re-fed.
        """
        if self._rebuilt or self.journal is None:
            self._rebuilt = True
            return 0
        started = time.monotonic()
        through = self.journal.published_through
        count = 0
        # each table restored from its newest snapshot, then only what follows it
        self._snapshots = snapshot.enable(self.engine)
        restored: dict[str, int] = {}
        entries = snapshot.entries(self.engine, self.journal, through, restored)
        later: list[IncomingEntry] = []
        quiet = getattr(self.engine, "rebuild", None)
        if quiet is not None:
            # what was published is applied without building its outputs (Engine.rebuild)
            def published() -> Iterator[tuple[str, bytes]]:
                for entry in entries:
                    if entry.n > through:
                        later.append(entry)
                        return
                    yield entry.topic, entry.payload

            count = quiet(published())
            self.counters.applied += count
        for entry in itertools.chain(later, entries):
            outs = self._apply(entry.topic, entry.payload)
            if entry.n > through:
                self._outbox.extend((entry.n, o) for o in outs)
            count += 1
        count += len(restored)  # each restored table's board-starting input, applied again
        self._rebuilt = True
        self.counters.rebuilt = count
        self.journal.stage_snapshots(snapshot.take(self.engine))
        if count:
            log.info("rebuilt %d table(s) from %d journaled message(s) in %.2f s; "
                     "%d output(s) not yet published", len(self.engine.tables), count,
                     time.monotonic() - started, len(self._outbox))
        return count

    # -- applying -------------------------------------------------------------------------
    def _apply(self, topic: str, payload: bytes, n: int = 0) -> Sequence[OutgoingLike]:
        if self._snapshots and n:
            self.engine.position = n  # type: ignore[attr-defined]  # an Engine (enable)
        try:
            outs = self.engine.handle(topic, payload)
        except Exception as e:  # a bug in the Engine must not stop the other tables
            self.counters.engine_failures += 1
            log.exception("engine failed on %s (%d bytes)", topic, len(payload))
            table = self._table_of(topic)
            return [_Out(wire.topic(table, "error", root=self.root), wire.error_payload(
                table, topic.rsplit("/", 1)[-1], "internal", payload,
                detail=f"{type(e).__name__}: {e}"))]
        self.counters.applied += 1
        return outs

    def _too_large(self, topic: str, size: int, excerpt: bytes = b"") -> OutgoingLike:
        table = self._table_of(topic)
        self.counters.oversize += 1
        log.warning("table %s: %d-byte payload on %s refused (limit %d)", table, size, topic,
                    self.max_payload)
        return _Out(wire.topic(table, "error", root=self.root), wire.error_payload(
            table, topic.rsplit("/", 1)[-1], "payload_too_large", excerpt,
            detail={"topic": topic, "bytes": size, "limit": self.max_payload}))

    def _screen(self, topic: str, payload: bytes) -> OutgoingLike | None:
        """Before the journal: an event over its table's intake bound (``_DROP``, or once a
        second an ``error`` saying how many), or an input whose ``src`` may not speak on its
        topic (an ``error``); None: taken in."""
        rest = topic[len(self.root) + 1:]
        table, _, kind = rest.rpartition("/")
        if self.intake is not None and kind == "event" and not self.intake.admit(table):
            self.counters.throttled += 1
            dropped = self.intake.report(table)
            if not dropped:
                return _DROP
            table = self._table_of(topic)
            detail: dict[str, Any] = {"dropped": dropped, "burst": self.intake.burst,
                                      "rate": self.intake.rate}
            if dropped >= PAUSE_AFTER and table in self._own_topics():
                self._pause_due.append(table)
                detail["paused"] = PAUSE
            log.warning("table %s: %d event(s) over its intake bound dropped%s", table,
                        dropped, f"; its events paused {PAUSE:g} s" if "paused" in detail
                        else "")
            return _Out(wire.topic(table, "error", root=self.root), wire.error_payload(
                table, kind, "rate_limited", payload, detail=detail))
        if self.identities is None:
            return None
        try:
            src = _src_of(payload).src
        except (msgspec.DecodeError, msgspec.ValidationError):
            return None  # malformed: the Engine says how
        problem = self.identities.src_problem(table, kind, src)
        if problem is None:
            return None
        self.counters.foreign_src += 1
        table = self._table_of(topic)
        return _Out(wire.topic(table, "error", root=self.root), wire.error_payload(
            table, kind, problem, payload, detail={"src": src[:64]}))

    def _own_topics(self) -> Sequence[str]:
        """The tables subscribed on their own topics (which a pause can unsubscribe)."""
        return self.only_tables or (list(self.identities.events)
                                    if self.identities is not None else ())

    def _pauses(self, conn: Connection) -> None:
        """Unsubscribe the flooding tables' events; subscribe them again when due."""
        now = time.monotonic()
        for table in self._pause_due:
            if table not in self._paused:
                conn.pause(wire.topic(table, "event", root=self.root))
            self._paused[table] = now + PAUSE
        self._pause_due.clear()
        for table in [t for t, until in self._paused.items() if until <= now]:
            del self._paused[table]
            conn.resume(wire.topic(table, "event", root=self.root), 1)

    # -- status ---------------------------------------------------------------------------
    def status(self, status: str = "online") -> dict[str, Any]:
        payload: dict[str, Any] = {"v": wire.VERSION, "src": self.client_id, "status": status}
        if status == "online":
            payload.update(ts=round(time.time(), 3), tables=sorted(self.engine.tables),
                           counters=self.counters.as_dict(), engine=dict(self.engine.stats),
                           latency=self.latency.as_dict(), **self.info)
            if self.only_tables:  # 1.15: a relay trusts this controller's word for these
                payload["serves"] = list(self.only_tables)
            refusals: Mapping[str, str] | None = getattr(self.engine, "refusals", None)
            if refusals:
                # sources whose events the Engine refused (seq, boot): the operator sees them
                payload["refused_sources"] = dict(refusals)
        return payload

    # -- the hot path (the worker thread) -------------------------------------------------
    def _process(self, conn: Connection, batch: Sequence[Received]) -> None:
        """One batch: one journal transaction (group commit), the PUBACKs, the Engine, the
        outputs handed to paho without waiting for theirs."""
        accepted: list[tuple[str, bytes]] = []
        # per message, in order of arrival: its index in ``accepted``, or the refusal
        plan: list[int | OutgoingLike] = []
        for m in batch:
            self.counters.received += 1
            if len(m.payload) > self.max_payload:
                plan.append(self._too_large(m.topic, len(m.payload), bytes(m.payload[:800])))
            elif (self.intake is not None or self.identities is not None) and \
                    (refused := self._screen(m.topic, m.payload)) is not None:
                if refused is not _DROP:
                    plan.append(refused)
            else:
                plan.append(len(accepted))
                accepted.append((m.topic, m.payload))
        if self.journal is not None:
            # written before applied: if this raises, the Engine never sees the batch,
            # nothing is acked and the broker redelivers it to the next session; durable
            # before acknowledged (_finish)
            ns = self.journal.append_incoming(accepted, durable=False)
        else:
            ns = list(range(self._last_n + 1, self._last_n + len(accepted) + 1))
        # one state and one indicator per table per batch (wire contract 1.4): the Engine
        # defers them to flush(), each output's cause its table's newest input here
        defer: Callable[[], None] | None = getattr(self.engine, "defer", None)
        flush: Callable[[], Mapping[str, Sequence[OutgoingLike]]] | None = getattr(
            self.engine, "flush", None)
        if defer is None or flush is None or not accepted:
            flush = None
        else:
            defer()
        newest: dict[str, int] = {}  # "{root}/{t}" -> its newest input's n
        try:
            for item in plan:  # outputs in the order of the messages that caused them
                if isinstance(item, int):
                    n = ns[item]
                    topic, payload = accepted[item]
                    newest[topic[:topic.rfind("/")]] = n
                    for o in self._apply(topic, payload, n):
                        self._send(conn, n, o)
                else:
                    self._send(conn, 0, item)
        finally:  # the Engine never stays deferring (a lost connection raises here)
            flushed = self._flush(flush) if flush is not None else {}
        for table, outs in flushed.items():
            n = newest.get(f"{self.root}/{table}", ns[-1])
            for o in outs:
                self._send(conn, n, o)
        if ns:
            self._last_n = ns[-1]
        if self._snapshots and self.journal is not None:
            self.journal.stage_snapshots(snapshot.take(self.engine))

    def _settle(self, conn: Connection) -> None:
        """Cards lifted from a play spot and not back within the turn window, read as taken
        away (``Engine.settle``, docs/sensing.md "A card turned"), at least every ``IDLE``
        seconds. Their outputs have no input of their own to be published through (``n``
        0); a restart reads them again at the table's next event, in the same order."""
        settle: Callable[[], Sequence[OutgoingLike]] | None = getattr(
            self.engine, "settle", None)
        if settle is None:
            return
        try:
            outs = settle()
        except Exception:  # a bug in the Engine must not stop the other tables
            self.counters.engine_failures += 1
            log.exception("engine failed reading the lifted cards")
            return
        for o in outs:
            self._send(conn, 0, o)

    def _finish(self, conn: Connection, batch: Sequence[Received]) -> None:
        """After a batch's outputs are on their way: the batch durable, then acknowledged
        (the PUBACKs, the end-to-end acks). A journal that cannot sync raises here:
        nothing of the batch is acknowledged, and the broker delivers it again."""
        if self.journal is not None:
            self.journal.sync()  # uncorked: paho writes the batch's outputs meanwhile
        with conn.corked():
            for m in batch:  # in order of receipt, as MQTT requires for PUBACKs
                conn.ack(m.mid, m.qos)
            self._send_acks(conn, self._acks_due())

    def _flush(self, flush: Callable[[], Mapping[str, Sequence[OutgoingLike]]]
               ) -> Mapping[str, Sequence[OutgoingLike]]:
        """The deferred states and indicators of the batch (``Engine.flush``)."""
        try:
            return flush()
        except Exception:  # a bug in the Engine must not stop the other tables
            self.counters.engine_failures += 1
            log.exception("engine failed building the batch's states")
            return {}

    def _acks_due(self) -> list[OutgoingLike]:
        due: Callable[[], Sequence[OutgoingLike]] | None = getattr(self.engine, "acks_due", None)
        return list(due()) if due is not None else []

    def _send_acks(self, conn: Connection, acks: Sequence[OutgoingLike]) -> None:
        """End-to-end acknowledgements; only after their events are journaled and applied,
        so that a bridge never drops an event the daemon could still lose. Retained at QoS
        0 (wire contract 1.4), like ``state``: each replaces the last, every one is
        published again after a (re)connect, and a bridge that misses one resends its
        events, whose duplicates are acknowledged again; a PUBACK for each buys nothing."""
        for a in acks:
            conn.publish(a.topic, _encode(a.payload), 0, a.retain)
        self.counters.acks += len(acks)

    def _send(self, conn: Connection, n: int, out: OutgoingLike, data: bytes | None = None
              ) -> None:
        """Hand one output to paho and remember it until paho reports it sent (QoS 0) or
        acknowledged (QoS 1): ``n`` (its cause) is not published-through before that."""
        if data is None:
            data = _encode(out.payload)
        mid = conn.publish(out.topic, data, outgoing_qos(out), out.retain)
        self._unconfirmed[mid] = (n, out, data)
        if n:
            self._open[n] = self._open.get(n, 0) + 1
        self.counters.published += 1

    def _confirm(self, conn: Connection) -> None:
        """Take in what paho reports sent; advance the published-through mark."""
        conn.collect_published()
        done = conn.published
        while done:
            entry = self._unconfirmed.pop(done.popleft(), None)
            if entry is None or not entry[0]:
                continue
            left = self._open[entry[0]] - 1
            if left:
                self._open[entry[0]] = left
            else:
                del self._open[entry[0]]
        # the oldest cause still open bounds the mark (a batch's states and indicators come
        # after its other outputs, caused by their table's newest input: not in order)
        through = min(self._open) - 1 if self._open else self._last_n
        if self.journal is not None and through > self._marked:
            self.journal.mark_published(through)
            self._marked = through

    def _carry_over(self) -> list[tuple[int, OutgoingLike, bytes]]:
        """Outputs handed to a connection that was lost before paho confirmed them: the
        next session publishes them again, in their order."""
        carried = list(self._unconfirmed.values())
        self._unconfirmed.clear()
        self._open.clear()
        return carried

    def _start_session(self, conn: Connection) -> None:
        self._paused.clear()  # a new session subscribes every table
        if self.intake is not None:  # what the broker queued meanwhile is no flood
            self.intake.allow_backlog()
        conn.subscribe(self.subscriptions, PUBLISH_TIMEOUT)
        with conn.corked():  # a batch: one wake-up of paho's network thread
            # after a lost connection: what was not confirmed; after a restart: what the journal
            # had not marked published; then the retained messages (a broker restarted without
            # persistence has lost them)
            pending = self._carry_over()
            pending += [(n, o, _encode(o.payload)) for n, o in self._outbox]
            self._outbox.clear()
            for n, o, data in pending:
                self._send(conn, n, o, data)
            for o in self.engine.retained():
                self._send(conn, 0, o)
            all_acks: Callable[[], Sequence[OutgoingLike]] | None = getattr(
                self.engine, "acks", None)
            if self.journal is not None:
                # every ack covers only what is durable: a batch whose sync failed in the
                # last session was applied, and is acknowledged once a sync succeeds
                self.journal.sync()
            self._acks_due()  # every ack goes out below, these included
            self._send_acks(conn, list(all_acks()) if all_acks is not None else [])
            self._publish_status(conn)
        log.info("connected to %s as %s; %d table(s)", self.broker.url, self.client_id,
                 len(self.engine.tables))

    def _publish_status(self, conn: Connection, status: str = "online") -> int:
        return conn.publish(self.status_topic, _encode(self.status(status)), 1, True)

    def _serve_session(self, conn: Connection, inbox: queue.SimpleQueue[Received | str],
                       halt: threading.Event) -> None:
        """Take batches from the inbox until halted; :class:`MqttError` when the
        connection is lost (the rest of the inbox belongs to it: not acknowledged, so the
        broker redelivers it)."""
        next_status = time.monotonic() + self.status_interval
        while not halt.is_set():
            wait = max(0.0, min(IDLE, next_status - time.monotonic()))
            if self.intake is not None and inbox.empty():
                # what the broker queued for the daemon is in: while it comes, the broker
                # refills its in-flight window during each batch
                self.intake.end_backlog()
            try:
                first = inbox.get(timeout=wait)
            except queue.Empty:
                first = None
            if first is not None and self.gather > 0 and inbox.qsize() < GATHER_ENOUGH:
                # group commit: a moment for the events arriving behind this one to share
                # its journal commit (each commit costs about as much CPU as an event)
                time.sleep(self.gather)
            batch: list[Received] = []
            item: Received | str | None = first
            while item is not None:
                if isinstance(item, str):  # LOST or WAKE
                    if item == LOST and not conn.connected:
                        raise MqttError("connection lost")
                elif item.connection is conn:  # a lost session's leftovers are redelivered
                    batch.append(item)
                if len(batch) >= MAX_BATCH:
                    break
                try:
                    item = inbox.get_nowait()
                except queue.Empty:
                    item = None
            if batch:
                with conn.corked():
                    self._process(conn, batch)
                # handed to paho's network thread to write as the cork comes off
                self.latency.add_batch([m.at for m in batch], time.perf_counter())
                self._finish(conn, batch)
                if self.gc_policy is not None:
                    self.gc_policy.after_batch()
            self._confirm(conn)
            self._settle(conn)
            if self._pause_due or self._paused:
                self._pauses(conn)
            if not batch and self.journal is not None:
                self.journal.flush_mark()  # idle: the mark does not wait for the next event
            if first is None and self.gc_policy is not None:  # nothing for IDLE seconds
                self.gc_policy.idle()
            if time.monotonic() >= next_status:
                self._publish_status(conn)
                next_status = time.monotonic() + self.status_interval

    def _serve(self, halt: threading.Event, ready: Callable[[bool], None]) -> None:
        """The worker thread: sessions, reconnecting with backoff, until halted."""
        if self.gc_policy is not None:
            self.gc_policy.start()
        try:
            self._serve_sessions(halt, ready)
        finally:
            if self.gc_policy is not None:
                self.gc_policy.stop()

    def _serve_sessions(self, halt: threading.Event, ready: Callable[[bool], None]) -> None:
        delay = self.reconnect_min
        conn: Connection | None = None
        outage = OutageLog(log, f"broker {self.broker.url}")
        login = LoginWatch(log, self.broker.url, self.broker.username, who="the controller")
        while not halt.is_set():
            conn = Connection(self.broker, self.client_id, self._inbox,
                              will=(self.status_topic, _encode(self.status("offline")), 1, True))
            try:
                conn.open(self.connect_timeout)
                login.up()
                self.counters.connects += 1
                outage.recovered()
                delay = self.reconnect_min  # a working connection: retry soon after it
                self._start_session(conn)
                ready(True)
                self._serve_session(conn, self._inbox, halt)
            except MqttError as e:
                if login.lost(e):
                    delay = max(delay, 10.0)
                login.failed(e)   # refused at start: LoginRefused, the command exits 2
                outage.failed(e, delay)
            except JournalError as e:
                log.error("journal: %s; retrying in %.1f s (nothing was acknowledged)", e,
                          delay)
            finally:
                ready(False)
            if halt.is_set():
                break
            conn.close()
            halt.wait(delay)
            delay = min(delay * 2, self.reconnect_max)
        self._goodbye(conn)

    def _goodbye(self, conn: Connection | None) -> None:
        """A clean stop says offline itself (the will is only for unclean ones)."""
        if conn is not None and conn.connected:
            if self.journal is not None:
                self._confirm(conn)
            mid = self._publish_status(conn, "offline")
            conn.wait_published(mid, 3.0)
            conn.close()
            return
        if conn is not None:
            conn.close()
        # the controller's own identity (the broker binds the client id to the user): a
        # session kept, so the events queued for the controller stay queued (what reaches
        # this connection is never acknowledged: the broker sends it again next time)
        bye = Connection(self.broker, self.client_id, queue.SimpleQueue())
        try:
            bye.open(3.0)
            bye.wait_published(self._publish_status(bye, "offline"), 3.0)
        except MqttError as e:
            log.debug("could not say offline: %s", e)
        finally:
            bye.close()

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Serve until ``stop`` is set (or forever), reconnecting with backoff.

        The MQTT and journal work runs on two threads of its own (paho's network thread and
        the worker, :meth:`_serve`); this coroutine starts them, reports ``ready`` and stops
        them."""
        check_versions()
        stop = stop or asyncio.Event()
        self.rebuild()
        if self.journal is not None:
            self._last_n = self._marked = self.journal.published_through
            self._last_n = max(self._last_n, self.journal.last_incoming)
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[None] = loop.create_future()
        halt = threading.Event()
        failure: list[BaseException] = []

        def ready(up: bool) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closing
                loop.call_soon_threadsafe(self.ready.set if up else self.ready.clear)

        def work() -> None:
            try:
                self._serve(halt, ready)
            except BaseException as e:  # handed to run()'s caller, not lost in the thread
                failure.append(e)
            finally:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(_set_done, finished)

        worker = threading.Thread(target=work, name="controller-worker", daemon=True)
        worker.start()
        stopper = asyncio.ensure_future(stop.wait())
        either: set[asyncio.Future[Any]] = {stopper, finished}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            halt.set()
            self._inbox.put(WAKE)
            if not finished.done():
                await asyncio.shield(finished)
        if failure:
            raise failure[0]


def _set_done(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def outgoing_qos(out: OutgoingLike) -> int:
    """Retained ``state`` and ``indicator`` go out at QoS 0 (wire contract 1.3): the broker's
    retained copy and the journal keep them consistent, and each one replaces the last, so a
    PUBACK for every one buys nothing; everything else at the QoS the Engine gives."""
    if out.retain and out.topic.endswith(_QOS0_KINDS):
        return 0
    return out.qos


_QOS0_KINDS = ("/state", "/indicator")


async def until_disconnected(client: aiomqtt.Client, awaitable: Awaitable[T]) -> T:
    """Await ``awaitable`` (PUBACKs), but raise MqttError as soon as the connection is lost.

    aiomqtt 2.5 leaves a publish waiting for its PUBACK when the connection drops, until its
    timeout: a broker restarted while the daemon waited for a board's PUBACKs stalled it for
    the whole timeout (10 s by default) before it reconnected.
    """
    task = asyncio.ensure_future(awaitable)
    lost: asyncio.Future[Any] = client._disconnected  # noqa: SLF001 - aiomqtt has no public one
    # whatever happens below, their errors are seen here (not "never retrieved" at exit)
    task.add_done_callback(_retrieve)
    lost.add_done_callback(_retrieve)
    try:
        await asyncio.wait({task, lost}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        await cancel_until_done(task)
        raise
    if task.done():
        return task.result()
    await cancel_until_done(task)
    raise aiomqtt.MqttError("connection lost while waiting for PUBACKs")


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()


async def cancel_until_done(task: asyncio.Future[Any], interval: float = 0.1) -> None:
    """Cancel ``task`` and wait for it to end, cancelling again until it does.

    On Python 3.11 a cancellation that arrives while ``asyncio.wait_for`` (which aiomqtt uses
    inside) is finishing can be swallowed, and the task runs on: one ``cancel()`` is not
    enough to stop a session for sure.
    """
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=interval)
    if not task.cancelled():
        with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
            task.result()


def install_stop_signals(stop: asyncio.Event) -> Callable[[], None]:
    """SIGTERM and SIGINT set ``stop`` (a daemon's clean stop); the function returned removes
    the handlers."""
    loop = asyncio.get_running_loop()
    sigs = (signal.SIGTERM, signal.SIGINT)
    for sig in sigs:
        loop.add_signal_handler(sig, stop.set)

    def remove() -> None:
        for sig in sigs:
            loop.remove_signal_handler(sig)
    return remove


async def run_until_signalled(daemon: ControllerDaemon) -> None:
    """Run ``daemon`` until SIGTERM or SIGINT."""
    stop = asyncio.Event()
    remove = install_stop_signals(stop)
    try:
        await daemon.run(stop)
    finally:
        remove()
