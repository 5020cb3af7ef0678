"""The broker listener of the web apps (``listen``, for the console and the vugraph alike)
and the console's view of the tables: the latest retained state of every table.

``TableStore`` keeps, per table, what the controller and the bridge last said (``state``,
``indicator``, ``result``, ``bridge``, ``health``), every alert of the board with its
history, the last ``error`` messages, the broadcast feed's cards of the board and the
"director called" and claim button presses of the board, as the controller publishes
them on ``evidence`` (1.14; the console keeps them longer: controller/web/console/calls.py),
and the director's ``evidence`` (the tempo of each call and card, the claim position)
with the claim's double-dummy check, computed in a worker thread (controller/evidence/claims.py;
docs/claims.md). ``listen`` feeds it (and the vugraph's store) from MQTT, one reconnecting
subscription, each payload read by the wire module, and hands out the connected client
so an app can publish (the console's rulings).
Listeners of the store (``Hub``) get one compact update per change, for Server-Sent Events.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import aiomqtt

from controller import wire
from controller.broker.aioloop import quiet_closed_sockets
from controller.broker.login import LoginRefused, LoginWatch
from controller.broker.settings import BrokerSettings
from controller.commandline import OutageLog
from controller.evidence.claims import check_claim

log = logging.getLogger("bridge_table.web")

#: the topics the apps read, relative to the root (the controller's, the bridge's)
TOPICS = ("state", "alert", "result", "indicator", "bridge", "health", "error", "event",
          "feed", "evidence")
MAX_ERRORS = 20
MAX_CALLS = 10
#: the button presses kept: "director called" and a player's claim (the console keeps them
#: until the director closes them: controller/web/console/calls.py)
CALL_BUTTONS = ("director", "claim")
MAX_PAYLOAD = wire.MAX_PAYLOAD


@dataclass
class AlertView:
    """One alert (stable ``id``) with each status it went through."""

    latest: dict[str, Any]
    history: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {**self.latest, "history": self.history}


#: counters of ``bridge/{t}/health`` that count normal work (events sent, the spool's size,
#: the sequence numbers), not a fault: the room would otherwise show every table as
#: having reader trouble
NORMAL_COUNTERS = frozenset({"v", "ts", "seq", "spool_depth", "spool_max", "next_seq",
                             "acked_seq", "events", "buttons", "resends"})


def reader_anomalies(health: dict[str, Any] | None) -> list[str]:
    """What is wrong with a table's readers, from its ``health``, as short lines for the
    director: a reader disconnected, each reader's anomalies (``north crc_errors 2``), and
    the bridge's fault counters above zero (``unknown_tags 3``); empty when all is well."""
    if not health:
        return []
    out: list[str] = []
    readers = health.get("readers")
    if isinstance(readers, dict):
        for name, reader in readers.items():
            if not isinstance(reader, dict):
                continue
            if reader.get("connected") is False:
                out.append(f"{name} disconnected")
            anomalies = reader.get("anomalies")
            if isinstance(anomalies, dict):
                out.extend(f"{name} {kind} {count}" for kind, count in anomalies.items()
                           if _positive(count))
    out.extend(f"{key} {value}" for key, value in health.items()
               if key not in NORMAL_COUNTERS and _positive(value))
    return out


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value > 0


@dataclass
class TableView:
    table: str
    state: dict[str, Any] | None = None
    indicator: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    bridge: str | None = None          # "online" / "offline" from bridge/{t}/bridge
    health: dict[str, Any] | None = None
    alerts: dict[int, AlertView] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)  # director button presses
    cards: list[dict[str, Any]] = field(default_factory=list)  # the feed's cards of the board
    scans: dict[str, list[str]] = field(default_factory=dict)  # seat -> cards scanned
    board: int | None = None
    updated: float = 0.0
    #: the director's evidence of the board (tempo, claim position) and the claim's check
    evidence: dict[str, Any] | None = None
    claim_check: dict[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        return {"table": self.table, "state": self.state, "result": self.result,
                "indicator": self.indicator, "bridge": self.bridge, "health": self.health,
                "anomalies": reader_anomalies(self.health),
                "alerts": [a.as_json() for a in self.alerts.values()],
                "errors": self.errors, "calls": self.calls, "cards": self.cards,
                "scans": self.scans, "evidence": self.evidence,
                "claim_check": self.claim_check,
                "board": self.board, "updated": self.updated}

    def new_board(self, board: int | None) -> None:
        """A new board at the table: the last board's alerts, calls and cards are history."""
        if board == self.board:
            return
        self.board = board
        self.alerts = {k: a for k, a in self.alerts.items() if a.latest.get("board") == board}
        self.cards = []
        self.calls = []
        self.scans = {}
        if self.result is not None and self.result.get("board") != board:
            self.result = None
        if self.evidence is not None and self.evidence.get("board") != board:
            self.evidence = self.claim_check = None


class Hub:
    """Fan-out of updates to every open Server-Sent Events stream."""

    def __init__(self, maxsize: int = 1000) -> None:
        self._queues: set[asyncio.Queue[dict[str, Any] | None]] = set()
        self._maxsize = maxsize
        self.closed = False     # the server is stopping: every stream ends

    def subscribe(self) -> asyncio.Queue[dict[str, Any] | None]:
        q: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(self._maxsize)
        self._queues.add(q)
        return q

    def unsubscribe(self, q: asyncio.Queue[dict[str, Any] | None]) -> None:
        self._queues.discard(q)

    def publish(self, item: dict[str, Any]) -> None:
        for q in list(self._queues):
            try:
                q.put_nowait(item)
            except asyncio.QueueFull:
                # a stream that cannot keep up gets ``None``: it sends the whole snapshot
                self._drain(q)
                q.put_nowait(None)

    @staticmethod
    def _drain(q: asyncio.Queue[dict[str, Any] | None]) -> None:
        while not q.empty():
            q.get_nowait()

    def close(self) -> None:
        self.closed = True
        for q in list(self._queues):
            self._drain(q)
            q.put_nowait(None)


class TableStore:
    """Every table's latest view, fed one MQTT message at a time (``handle``)."""

    def __init__(self, root: str = "bridge", clock: Callable[[], float] = time.time) -> None:
        self.root = root
        self.tables: dict[str, TableView] = {}
        self.hub = Hub()
        self.clock = clock
        self.watchers: list[Callable[[str, str, dict[str, Any]], None]] = []
        self.malformed = 0
        #: one DDS solve at a time, off the event loop (a solve takes up to ~0.1 s)
        self._solver: ThreadPoolExecutor | None = None

    def snapshot(self) -> list[dict[str, Any]]:
        return [v.as_json() for v in self.tables.values()]

    def topics(self) -> list[str]:
        """What the console subscribes to: the tables' topics it reads (``TOPICS``)."""
        return [wire.topic("+", kind, root=self.root) for kind in TOPICS]

    def handle(self, topic: str, payload: bytes) -> None:
        parsed = wire.parse_topic(topic, root=self.root)
        if parsed is None or parsed.rest is not None or parsed.kind not in TOPICS \
                or parsed.table == "controller":
            return
        table, kind = parsed.table, parsed.kind
        if kind == "bridge":
            self._bridge(table, payload)
            return
        if not payload:   # a retained message cleared
            return
        data = wire.json_object(payload)
        if data is None or (kind == "alert" and (not isinstance(data.get("id"), int)
                                                 or isinstance(data.get("id"), bool))):
            self.malformed += 1
            return
        if kind == "event":
            if data.get("type") == "tag":
                self._scan(table, data)
            # of the events, only the hand scans: the presses for the director come from
            # the controller (1.14: ``evidence.presses``)
            return
        view = self._view(table)
        now = self.clock()
        self._take(table, view, kind, data, now)
        view.updated = now
        self._changed(table, kind, data)

    def _bridge(self, table: str, payload: bytes) -> None:
        """``bridge/{t}/bridge``: the bridge online or offline (its will)."""
        data = wire.json_object(payload)
        status = data.get("status") if data is not None else None
        if data is None or not isinstance(status, str):
            self.malformed += 1
            return
        self._view(table).bridge = status
        self._changed(table, "bridge", data)

    def _take(self, table: str, view: TableView, kind: str, data: dict[str, Any],
              now: float) -> None:
        """One message of the controller's into the table's view."""
        if kind == "state":
            board = data.get("board")
            view.new_board(board if isinstance(board, int) else None)
            view.state = data
        elif kind == "indicator":
            view.indicator = data
        elif kind == "result":
            view.result = data
        elif kind == "health":
            view.health = data
        elif kind == "error":
            view.errors = [*view.errors, {**data, "received": now}][-MAX_ERRORS:]
        elif kind == "alert":
            self._alert(view, data, now)
        elif kind == "feed":
            self._feed(view, data)
        elif kind == "evidence":
            self._evidence(table, view, data)

    # -- helpers --------------------------------------------------------------------------
    def _view(self, table: str) -> TableView:
        view = self.tables.get(table)
        if view is None:
            view = self.tables[table] = TableView(table)
        return view

    def _changed(self, table: str, kind: str, data: dict[str, Any]) -> None:
        for watch in self.watchers:
            watch(table, kind, data)
        self.hub.publish({"type": "table", "kind": kind,
                          "view": self.tables[table].as_json()})

    @staticmethod
    def _alert(view: TableView, data: dict[str, Any], now: float) -> None:
        aid = int(data["id"])
        board = data.get("board")
        entry = {"status": data.get("status"), "law": data.get("law"),
                 "detail": data.get("detail"), "text": data.get("text"), "received": now}
        current = view.alerts.get(aid)
        if current is None or current.latest.get("board") != board:
            view.alerts[aid] = AlertView(data, [entry])
        else:
            current.latest = data
            current.history.append(entry)

    def _evidence(self, table: str, view: TableView, data: dict[str, Any]) -> None:
        """The board's evidence; a claim position not yet checked is checked double dummy
        in the solver thread (inline when no event loop runs: tools and tests)."""
        board = data.get("board")
        claim = data.get("claim")
        before = (view.evidence or {}).get("claim")
        view.evidence = data
        self._calls(view, data.get("presses"), self.clock())
        if not isinstance(claim, dict):
            view.claim_check = None
            return
        if claim == before and view.claim_check is not None:
            return
        key = (board, json.dumps(claim, sort_keys=True))
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            view.claim_check = check_claim(claim).to_wire()
            return
        view.claim_check = {"verdict": "pending"}
        if self._solver is None:
            self._solver = ThreadPoolExecutor(1, thread_name_prefix="claim-check")
        future = self._solver.submit(check_claim, claim)

        def done(f: Future[Any]) -> None:
            loop.call_soon_threadsafe(self._checked, table, key, f)
        future.add_done_callback(done)

    @staticmethod
    def _calls(view: TableView, presses: Any, now: float) -> None:
        """The board's "director" and claim presses, as the controller publishes them
        (1.14); one already answered stays answered."""
        if not isinstance(presses, list):
            return
        known = {_press_key(c): c for c in view.calls}
        calls = []
        for p in presses:
            if not isinstance(p, dict) or p.get("button") not in CALL_BUTTONS:
                continue
            call = {"button": p["button"], "seat": p.get("seat"), "ts": p.get("ts"),
                    "src": p.get("src"), "seq": p.get("seq"), "received": now}
            calls.append(known.get(_press_key(call), call))
        view.calls = calls[-MAX_CALLS:]

    def _checked(self, table: str, key: tuple[Any, str], future: Future[Any]) -> None:
        view = self.tables.get(table)
        if view is None or view.evidence is None:
            return
        claim = view.evidence.get("claim")
        if (view.evidence.get("board"), json.dumps(claim, sort_keys=True)) != key:
            return   # a newer claim or board came in meanwhile: its own check is on its way
        exc = future.exception()
        view.claim_check = ({"verdict": "invalid", "reason": f"check failed: {exc}"}
                            if exc is not None else future.result().to_wire())
        self._changed(table, "claim_check", view.claim_check)

    def close(self) -> None:
        """Stop the solver thread (the app's shutdown)."""
        if self._solver is not None:
            self._solver.shutdown(wait=False, cancel_futures=True)

    def answer_calls(self, table: str) -> bool:
        """The director has answered the table's calls (went there, or ruled)."""
        view = self.tables.get(table)
        if view is None or all(c.get("answered") for c in view.calls):
            return False
        view.calls = [{**c, "answered": True} for c in view.calls]
        self._changed(table, "calls", {})
        return True

    def _scan(self, table: str, data: dict[str, Any]) -> None:
        """A card put on a tray, or passed across a play spot, while the hands are read
        (before the first call)."""
        view = self.tables.get(table)
        phase = (view.state or {}).get("phase") if view is not None else None
        seat, card = data.get("seat"), data.get("card")
        if view is None or phase != "scanning" or data.get("zone") not in ("tray", "spot") \
                or data.get("action") != "present" or not isinstance(seat, str) \
                or not isinstance(card, str):
            return
        hand = view.scans.setdefault(seat, [])
        if card not in hand:
            hand.append(card)
            self._changed(table, "scan", data)

    @staticmethod
    def _feed(view: TableView, data: dict[str, Any]) -> None:
        kind = data.get("kind")
        if kind == "board":
            view.cards = []
        elif kind == "card":
            view.cards = [*view.cards, {"seat": data.get("seat"), "card": data.get("card"),
                                        "trick": data.get("trick")}]
        elif kind == "play":
            cards = data.get("cards")
            if isinstance(cards, list):
                view.cards = [c for c in cards if isinstance(c, dict)]


def _press_key(call: dict[str, Any]) -> tuple[Any, ...]:
    return call.get("button"), call.get("seat"), call.get("ts"), call.get("src"), call.get("seq")


class Connection:
    """The current MQTT client (``None`` while disconnected), for publishing."""

    def __init__(self) -> None:
        self.client: aiomqtt.Client | None = None
        self.connected = asyncio.Event()
        #: why the broker refused the login at start (the command then exits 2)
        self.refused: LoginRefused | None = None
        #: stops the web server (set by the command serving it)
        self.stop_serving: Callable[[], None] | None = None

    def refuse(self, error: LoginRefused) -> None:
        """The login was refused at start: remember why and stop serving."""
        self.refused = error
        if self.stop_serving is not None:
            self.stop_serving()

    async def publish(self, topic: str, payload: bytes, qos: int = 1) -> None:
        client = self.client
        if client is None:
            raise ConnectionError("not connected to the broker")
        await client.publish(topic, payload, qos=qos)


def _consumed(future: asyncio.Future[Any]) -> None:
    """Take a finished read's outcome, so that nothing is logged as never retrieved."""
    if not future.cancelled():
        future.exception()


async def _read(client: aiomqtt.Client, handle: Callable[[str, bytes], object],
                stop: asyncio.Event) -> None:
    """Hand each message's topic and payload to ``handle`` until ``stop`` (returns) or the
    connection is lost (``aiomqtt.MqttError``)."""
    messages = aiter(client.messages)
    getter: asyncio.Future[aiomqtt.Message] | None = None
    stopper = asyncio.ensure_future(stop.wait())
    try:
        while True:
            getter = asyncio.ensure_future(anext(messages))
            done, _ = await asyncio.wait({getter, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if getter not in done:
                return
            msg, getter = getter.result(), None
            payload = msg.payload if isinstance(msg.payload, bytes) else \
                str(msg.payload or "").encode()
            handle(str(msg.topic), payload)
    finally:
        stopper.cancel()
        if getter is not None:  # stopped (or cancelled) while waiting for one
            getter.cancel()
            # the client's disconnection may still end it with an MqttError
            getter.add_done_callback(_consumed)


async def listen(settings: BrokerSettings, topics: Sequence[str],
                 handle: Callable[[str, bytes], object], stop: asyncio.Event, *,
                 client_id: str = "", conn: Connection | None = None,
                 connected: Callable[[bool], None] | None = None,
                 who: str = "this web app") -> None:
    """The web apps' one way of reading the broker: subscribe to ``topics`` (QoS 1) and hand
    each message's topic and payload to ``handle`` until ``stop``. A lost or refused
    connection is tried again every second, logged once and then at growing intervals.
    ``conn`` holds the client while connected (the console publishes its rulings through
    it); ``connected`` is told each time the link comes up or goes down (the vugraph says
    so on its page). A login the broker refuses before it ever accepted it is not retried
    (``controller.broker.login``): ``conn.refuse`` is told (the command stops serving and
    exits 2), or, without ``conn``, :class:`LoginRefused` is raised."""
    outage = OutageLog(log, f"broker {settings.url}")
    login = LoginWatch(log, settings.url, settings.username, who=who)
    quiet_closed_sockets(asyncio.get_running_loop())   # a dropped broker is no traceback
    while not stop.is_set():
        up = False
        delay = 1.0
        try:
            async with aiomqtt.Client(
                    settings.host, settings.port, identifier=client_id or None,
                    username=settings.username, password=settings.password,
                    tls_context=settings.tls_context(), keepalive=settings.keepalive) as client:
                login.up()
                await client.subscribe([(topic, 1) for topic in topics])
                if conn is not None:
                    conn.client = client
                    conn.connected.set()
                up = True
                if connected is not None:
                    connected(True)
                outage.recovered()
                log.info("connected to %s", settings.url)
                await _read(client, handle, stop)
        except aiomqtt.MqttError as exc:
            if login.lost(exc):
                delay = 10.0
            try:
                login.failed(exc)
            except LoginRefused as refused:
                log.error("%s", refused)
                if conn is None:
                    raise
                conn.refuse(refused)
                return
            outage.failed(exc, delay)
        finally:
            if conn is not None:
                conn.client = None
                conn.connected.clear()
            if connected is not None and up:
                connected(False)
        if not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except TimeoutError:
                pass
