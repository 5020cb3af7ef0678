"""The controller's engine: wire-contract messages in, wire-contract messages out.

``Engine.handle(topic, payload)`` is the one path every consumer uses: the live daemon
(``controller/service/daemon.py``), ``bridge-table replay`` and the benchmarks. It decodes the
payload once with ``controller.wire`` (whose Structs say what a valid payload is), drops
duplicates (same ``src``, ``boot`` and ``seq``, as QoS 1 redelivers and bridges resend),
applies the event or ruling to the table's ``Table`` and returns what must
be published; ``acks_due`` gives the acknowledgements to publish after. It does no I/O and
reads no clock: the same inputs give the same outputs, which is what lets the daemon rebuild
every table from its journal.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from controller import WIRE_VERSION, wire
from controller.evidence.payload import claim_position, evidence_payload, note_tempo, press_payload
from controller.evidence.tempo import TempoLog
from controller.indicators.display_text import LANGUAGES, DisplayKey, DisplayRenderer, display_key
from controller.indicators.policy import IndicatorPolicy
from controller.laws.cards import (
    FULL_DECK,
    Call,
    Card,
    ParseError,
    Rules,
    Seat,
    Suit,
    Vulnerability,
)
from controller.laws.dealcheck import FouledBoardDetector
from controller.laws.events import MARKERS, Button, ButtonEvent, TagEvent
from controller.laws.irregularities import Code, Irregularity, Status
from controller.laws.messages import alert_texts
from controller.laws.record import BoardRecord, DealInfo
from controller.laws.rulings import Ruling, RulingKind
from controller.laws.table import Board, FeedItem, Phase, Table, Update

__all__ = ["Outgoing", "Engine", "Carried", "CarriedBoot", "CarriedSource", "encode",
           "MAX_PAYLOAD", "MAX_SEQ", "MAX_TABLES", "MAX_SOURCES"]

#: Larger payloads are refused unread (a sensor event is ~200 bytes).
MAX_PAYLOAD = wire.MAX_PAYLOAD

#: Every table and every source costs memory kept for the session: bounded by default
#: (``bridge-table controller --max-tables/--max-sources``).
MAX_TABLES = 1000
MAX_SOURCES = 64
#: Largest ``seq`` accepted (1.2): 2^53 - 1, the largest integer every JSON reader keeps
#: exact. A larger one is refused with an ``error``; it can no longer silence its source.
MAX_SEQ = wire.MAX_SEQ
#: a ``src`` that may go into a topic (``{root}/{t}/ack/{src}``)
_TOPIC_SAFE_SRC = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: boots remembered per source; events of an older (retired) boot are refused, visibly
_BOOTS_PER_SRC = 4
_RETIRED_BOOTS = 64
#: sources whose last refusal is kept for the daemon's status
_REFUSALS_KEPT = 32

#: Statuses of an irregularity still to be dealt with (shown, listed in ``state``).
_ACTIVE = frozenset({Status.OPEN, Status.ESTABLISHED})

#: Canonical JSON for a payload (compact, UTF-8, key order as built): the wire module's, so
#: that the daemon, replay and every listener agree byte for byte.
encode = wire.encode


@dataclass(slots=True)
class Outgoing:
    """One message to publish. Not changed once made (nothing assigns to one; ``data()``
    fills its cache): not a frozen dataclass because a frozen one costs four times as
    much to make, and replay makes one for every message (made with positional arguments
    where many are made: a keyword costs more than the rest of the call)."""

    topic: str
    payload: dict[str, Any]
    retain: bool
    qos: int = 1
    #: the payload's JSON, encoded on first use and kept (``data()``), or given when made
    #: (``Engine._unchanged``: the JSON ``encode`` gives for ``payload``, byte for byte)
    _data: bytes | None = field(default=None, compare=False, repr=False)

    def data(self) -> bytes:
        """The payload as canonical JSON (``encode``), encoded once however many consumers
        (the daemon's publish, the journal, replay's output) ask for it. The payload must
        not be changed after the first call."""
        data = self._data
        if data is None:
            data = self._data = encode(self.payload)
        return data

    def encoded(self) -> bytes | None:
        """The payload's JSON if ``data()`` made it already (or it was given), else None."""
        return self._data


class _Boot(NamedTuple):
    """An event's ``boot`` and ``acked`` (1.2), both absent from a version-1 bridge."""

    id: str | None
    #: the bridge's word that every seq of this boot up to ``acked`` was acknowledged
    acked: int | None = None


@dataclass
class _SeqTracker:
    """Per (``src``, ``boot``): which seqs were applied.

    With a ``boot`` (1.2) the bridge numbers its events 1, 2, 3... and resends whatever the
    controller has not acknowledged, so events are applied strictly in order: ``high`` is
    the last applied, a lower seq is a duplicate, a higher one than ``high + 1`` is out of
    order (not applied: the bridge sends the missing ones again, then this one).
    Without a boot (version 1 bridges) the old rule holds: applied once by (src, seq), late
    (lower) seqs still applied once inside a window of 2048.
    """

    strict: bool = False
    high: int = -1
    #: the first seq seen of this boot (a controller may meet a boot after its start)
    low: int = -1
    recent: set[int] = field(default_factory=set)

    def verdict(self, seq: int) -> str:
        """``new``, ``duplicate``, ``gap`` (strict: out of order), ``before_start`` (strict:
        below the first seq this controller saw of the boot) or ``too_old`` (legacy)."""
        if self.high < 0 or seq == self.high + 1:
            return "new"
        if self.strict:
            if seq < self.low:
                return "before_start"
            return "duplicate" if seq <= self.high else "gap"
        if seq > self.high:
            return "new"
        if seq in self.recent:
            return "duplicate"
        return "too_old" if seq <= self.high - 2048 else "new"

    def fast_forward(self, acked: int) -> bool:
        """The bridge says a controller acknowledged every seq up to ``acked`` (this one,
        with another journal, or before this one first heard of the boot): go on after it.
        True if that moved ``high``."""
        if not self.strict or acked <= self.high:
            return False
        self.high = acked
        if self.low < 0 or self.low > acked + 1:
            self.low = acked + 1
        return True

    def add(self, seq: int) -> None:
        if self.low < 0:
            self.low = seq
        if seq > self.high:
            self.high = seq
        if self.strict:
            return
        self.recent.add(seq)
        if len(self.recent) > 4096:  # keep the window bounded; seqs only grow
            floor = self.high - 2048
            self.recent = {s for s in self.recent if s > floor}


@dataclass
class _Source:
    """One ``src`` at one table: its boots (newest last), and those retired."""

    boots: OrderedDict[str | None, _SeqTracker] = field(default_factory=OrderedDict)
    retired: deque[str] = field(default_factory=lambda: deque(maxlen=_RETIRED_BOOTS))


@dataclass(frozen=True, slots=True)
class CarriedBoot:
    """One boot of a source as carried across boards: which of its seqs were applied
    (``strict``, ``high``, ``low`` and the window of ``recent`` seqs: ``_SeqTracker``)."""

    boot: str | None
    strict: bool
    high: int
    low: int
    recent: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CarriedSource:
    """One ``src`` at one table as carried across boards: its boots (newest last) and the
    boots it retired."""

    src: str
    boots: tuple[CarriedBoot, ...]
    retired: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Carried:
    """The values of one table that a board start carries across boards, as just after
    the input that started the board (what a snapshot stores: controller/service/
    snapshot.py). Everything else of the table is built again by applying that input to
    a table with no board: the Laws core is deterministic."""

    table: str
    #: the board the input started, and that input's ``last`` (``{"src", "seq"}``)
    board: int
    last: dict[str, Any] | None
    played: tuple[int, ...]
    #: the first irregularity id of the new board
    next_id: int
    #: the table's feed number before the board-starting input
    feed_seq: int
    result: dict[str, Any] | None
    sources: tuple[CarriedSource, ...]
    #: the table's Law 87 observations: (journal n, board, seat, hand)
    observed: tuple[tuple[int, int, Seat, frozenset[Card]], ...]
    #: the table's share of ``Engine.stats``, its board-starting input included
    counts: dict[str, int]


@dataclass
class _TableState:
    table: Table
    seqs: dict[str, _Source] = field(default_factory=dict)
    last: dict[str, Any] | None = None
    feed_seq: int = 0
    indicator: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    alerts: dict[int, Irregularity] = field(default_factory=dict)
    #: what ``indicator`` was built from (``Engine._indicator_key``): equal keys, equal
    #: indicators, so an unchanged key is neither rebuilt nor published again
    indicator_key: tuple[Any, ...] | None = None
    #: the display rows of the last indicator built, and the key they were rendered from
    display_key: DisplayKey | None = None
    display: dict[str, list[str]] | None = None
    #: renders the rows, keeping the parts of the last key (a new one when ``display`` is
    #: None: nothing kept)
    renderer: DisplayRenderer | None = None
    #: ``state``'s parts that change less often than the state (``Engine._state``)
    state_parts: _StateParts | None = None
    #: the auction's calls (``Auction.calls``, a tuple rebuilt on every change) and their
    #: texts for ``state``, so that a state after a card does not spell the auction again
    auction_calls: tuple[tuple[Seat, Call], ...] | None = None
    auction_texts: tuple[tuple[str, str], ...] = ()
    #: the texts of the auction's last four calls (the display's), and the texts above
    #: they were taken from
    last_calls_of: tuple[tuple[str, str], ...] | None = None
    last_calls: tuple[str, ...] = ()
    #: evidence for the director (``evidence`` topic): the board's tempo, the claim position
    tempo: TempoLog = field(default_factory=TempoLog)
    claim: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    #: the board's "director" and "claim" presses (1.14: ``evidence.presses``)
    presses: list[dict[str, Any]] = field(default_factory=list)
    #: this table's Law 87 observations (journal n, board, seat, hand), in order: what a
    #: snapshot restores into the engine-wide ``FouledBoardDetector``
    #: (controller/service/snapshot.py)
    observed: list[tuple[int, int, Seat, frozenset[Card]]] = field(default_factory=list)
    #: this table's share of ``Engine.stats`` (what a snapshot restores into them)
    counts: dict[str, int] = field(default_factory=dict)


_UNKNOWN: Any = object()
#: an update with nothing in it (``Table.apply`` of most cards and calls without a feed)
_NO_CHANGE = Update()
_WAITING = str(Phase.WAITING)


def _no_tricks() -> dict[str, int]:
    return {"NS": 0, "EW": 0}


def _cut_at_last(data: bytes, state: dict[str, Any]) -> tuple[bytes, bytes] | None:
    """``data``, the JSON of ``state``, cut around the value of its ``last``: (the bytes
    up to and with ``"last":``, the bytes after the value), so that the JSON of ``state``
    with another ``last`` is ``before + encode(last) + after``. The compact encoding
    writes a mapping's items in order, so the bytes from ``"last":`` on are known from
    ``last`` and the items after it; None when ``data`` does not end with them (not that
    state's JSON): the caller encodes the whole state."""
    if next(reversed(state), None) == "last":  # the last item (no notes, pairs, session)
        after = b"}"
    else:
        keys = list(state)
        if "last" not in keys:
            return None
        later = {key: state[key] for key in keys[keys.index("last") + 1:]}
        after = b"," + encode(later)[1:]
    end = b'"last":' + encode(state["last"]) + after
    if not data.endswith(end):
        return None
    return data[:len(data) - len(end) + len(b'"last":')], after


class _StateParts:
    """The parts of one board's ``state`` kept between events (``Engine._state``), with
    what each was built from."""

    __slots__ = ("board", "number", "dealer", "vul", "calls", "auction", "contract",
                 "declarer", "contract_texts", "won", "tricks", "cards", "current", "sent",
                 "sent_split")

    def __init__(self, board: Board) -> None:
        self.board = board
        # a board's number, dealer and vulnerability are those it was made with
        self.number = board.number
        self.dealer = _SEAT_TEXT[board.dealer]
        self.vul = _VUL_TEXT[board.vulnerability]
        self.calls: tuple[tuple[Seat, Call], ...] | None = None
        self.auction: list[list[str]] = []
        self.contract: object = None  # the Contract the texts are of (compared by identity)
        self.declarer: Seat | None = None
        self.contract_texts: tuple[str | None, str | None, str | None] = (None, None, None)
        self.won: tuple[int, int] = (0, 0)
        self.tricks: dict[str, int] = _no_tricks()
        self.cards: tuple[tuple[Seat, Card], ...] = ()
        self.current: list[dict[str, str]] = []
        #: the last ``state`` message of this board (``Engine._snapshots``, ``_unchanged``)
        #: and, once an unchanged input needed it, its JSON cut around the value of
        #: ``last``: (everything before it, everything after it). Kept together, reset
        #: together: the cut belongs to that message's bytes alone.
        self.sent: Outgoing | None = None
        self.sent_split: tuple[bytes, bytes] | None = None


class Engine:
    """Every table whose messages reach it; one ``Table`` per table id."""

    def __init__(
        self,
        *,
        root: str = "bridge",
        deals: Mapping[int, DealInfo] | None = None,
        rules: Rules = Rules.L2017,
        policy: IndicatorPolicy | None = None,
        schedule: Mapping[str, frozenset[int]] | None = None,
        kinds: frozenset[str] | None = None,
        max_tables: int = MAX_TABLES,
        max_sources: int = MAX_SOURCES,
        pairs_at: Callable[[str, int], tuple[int, int] | None] | None = None,
        languages: tuple[str, ...] = LANGUAGES,
    ) -> None:
        """``kinds`` limits the outputs built (``replay --topics``): every input is still
        applied, and ``snapshot``/``retained`` still give the full current state.
        ``max_tables`` bounds the tables, ``max_sources`` the sources (``src``) per table:
        an input past either is refused with an ``error``.
        ``pairs_at(table, board)``: the session's movement, naming the pairs (or teams) at
        the table in ``state`` and ``result`` (``ns``, ``ew``; wire contract 1.2).
        ``languages``: the languages of the indicator's ``display`` text (default all
        three, as the contract's listeners expect); a room that shows one language renders
        only that one."""
        if max_tables < 1 or max_sources < 1:
            raise ValueError("max_tables and max_sources must be at least 1")
        unknown = [lang for lang in languages if lang not in LANGUAGES]
        if unknown or not languages:
            raise ValueError(f"languages must be some of {', '.join(LANGUAGES)}, not "
                             f"{', '.join(unknown) or 'none'}")
        self.languages = tuple(dict.fromkeys(languages))
        self.max_tables = max_tables
        self.max_sources = max_sources
        self.root = root
        self.deals: Mapping[int, DealInfo] = deals or {}
        self.rules = rules
        self.policy = policy or IndicatorPolicy()
        self.schedule = schedule or {}
        self.pairs_at = pairs_at
        #: the session the controller runs (``--session``/``--schedule``): stamped on
        #: ``state``, ``result``, ``feed`` and ``alert`` (wire 1.8) so that a broadcast relay
        #: never takes one session's board for another's
        self.session_id: str | None = None
        self.fouled = FouledBoardDetector()
        every = frozenset({"state", "alert", "indicator", "result", "feed", "error",
                           "evidence"})
        self.kinds = every if kinds is None else frozenset(kinds) & every
        self._tables: dict[str, _TableState] = {}
        #: topic -> (table, kind) of the event and ruling topics of valid table ids seen
        self._routes: dict[str, tuple[str, str]] = {}
        #: neither ``state`` nor ``indicator`` is built (replay --topics result,alert...)
        self._results_only = not ({"state", "indicator"} & self.kinds)
        self.stats: dict[str, int] = {
            "events": 0, "rulings": 0, "duplicates": 0, "malformed": 0,
            "ignored_topics": 0, "internal_errors": 0, "out_of_order": 0, "refused": 0,
        }
        #: the last refusal per source (``"{table}/{src}"`` -> why), for the daemon's status
        self.refusals: OrderedDict[str, str] = OrderedDict()
        #: (table, src) whose acknowledgement changed since ``acks_due`` was last called
        self._acks_dirty: set[tuple[str, str]] = set()
        #: inputs applied without building outputs (``rebuild``)
        self._quiet = False
        #: while deferring (``defer``): the tables whose ``state`` and ``indicator`` wait for
        #: ``flush`` (a dict: an ordered set); None: built and returned per input
        self._deferred: dict[str, None] | None = None
        #: the journal number of the input being handled (the daemon sets it): the board
        #: starts and Law 87 observations that ``controller.service.snapshot`` records carry it
        self.position = 0
        #: None: board starts not kept; else table -> (journal n, the values carried) of
        #: each board start since the daemon last took them (``controller.service.snapshot``
        #: stores them)
        self.board_starts: dict[str, tuple[int, Carried]] | None = None

    # -- public ---------------------------------------------------------------------------
    @property
    def tables(self) -> list[str]:
        return sorted(self._tables)

    def snapshot(self, table: str) -> dict[str, Any]:
        ts = self._tables.get(table)
        if ts is None:
            return {}
        # built, not stored, when missing: only the thread that applies inputs writes
        # ts.state (the daemon's tests read snapshot() from another thread mid-batch)
        state = ts.state
        return state if state is not None else self._state(table, ts)

    def observed(self, table: str) -> list[tuple[int, int, Seat, frozenset[Card]]]:
        """The hands ``table`` showed the Law 87 fouled-board check, in order: (``position``
        when shown, board, seat, hand). A snapshot carries them (controller/service/snapshot.py);
        ``replay --jobs`` checks them across its processes (controller/replay/jobs.py)."""
        ts = self._tables.get(table)
        return list(ts.observed) if ts is not None else []

    def record(self, table: str) -> BoardRecord | None:
        """The current (or last) board of ``table`` as played, for PBN / LIN output."""
        ts = self._tables.get(table)
        return ts.table.record if ts is not None else None

    def retained(self) -> list[Outgoing]:
        out: list[Outgoing] = []
        for name in self.tables:
            ts = self._tables[name]
            out.append(Outgoing(self._topic(name, "state"), self.snapshot(name), True))
            if ts.indicator is None:
                key = self._indicator_key(ts)
                ts.indicator, ts.indicator_key = self._indicator(name, ts, key), key
            out.append(Outgoing(self._topic(name, "indicator"), ts.indicator, True))
            if ts.result is not None:
                out.append(Outgoing(self._topic(name, "result"), ts.result, True))
            if ts.evidence is not None:
                out.append(Outgoing(self._topic(name, "evidence"), ts.evidence, True))
        return out

    def rebuild(self, inputs: Iterable[tuple[str, bytes | str | Mapping[str, Any]]]) -> int:
        """Apply ``(topic, payload)`` inputs already published (a journal's, in order) as
        ``handle`` does, building no output: the tables, seqs, alerts, results and feed
        numbers end as after ``handle``; ``snapshot`` and ``retained`` give the current
        state; the next ``handle`` goes on from there. Returns how many were fed."""
        count = 0
        self._quiet = True
        try:
            for topic, payload in inputs:
                try:
                    self.handle(topic, payload)
                except Exception:  # a defect: the live path logs it; keep rebuilding
                    self.stats["internal_errors"] += 1
                count += 1
        finally:
            self._quiet = False
        if "indicator" in self.kinds:
            # the last indicator, as if it had been built all along: the next input
            # publishes one only if it changes (as ``handle`` alone would have)
            for name, ts in self._tables.items():
                if ts.indicator_key is None:
                    ts.indicator_key = self._indicator_key(ts)
                    ts.indicator = self._indicator(name, ts, ts.indicator_key)
        return count

    def defer(self) -> None:
        """Until ``flush``: ``handle`` builds no ``state`` nor ``indicator`` after an event
        (the daemon's batch, wire contract 1.4). Each is a retained snapshot that the next
        one supersedes, so a batch of one table's events (a round start's 53 scans) needs
        only its last. Everything else (``alert``, ``feed``, ``result``, ``evidence``,
        ``error``) is still returned by ``handle``, in order. After a ruling, and when a
        board's result changes, the state and indicator are built at once, as without
        deferring: the director's console waits for the state whose ``last`` is its
        ruling, and the broadcast gate for the state that shows a board over before its
        result."""
        if self._deferred is None:
            self._deferred = {}

    def flush(self) -> dict[str, list[Outgoing]]:
        """End ``defer``: each table changed since, with its ``state`` (``last``: the newest
        input applied) and its ``indicator`` if it changed, as ``handle`` would have built
        them after that input."""
        tables, self._deferred = self._deferred, None
        return {name: self._snapshots(name, self._tables[name]) for name in tables or ()}

    def handle(self, topic: str, payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """Apply one message from ``{root}/{t}/event`` or ``{root}/{t}/ruling``."""
        route = self._routes.get(topic)
        if route is not None:
            # a topic of a table followed already (the common case): nothing to check
            table, kind = route
            ts = self._tables.get(table)
            if ts is not None:
                decoded = _parse_input(kind, payload)
                if type(decoded) is wire.Malformed:
                    self._tally(table, "malformed")
                    return self._errors(table, kind, decoded.reason, payload)
                return self._sequenced(table, kind, ts, decoded, payload)  # type: ignore[arg-type]
        parsed = _parse_topic(topic, self.root)
        if parsed is None or parsed.rest is not None or parsed.kind not in ("event", "ruling"):
            self.stats["ignored_topics"] += 1
            return []
        table, kind = parsed.table, parsed.kind
        problem = None if table in self._tables else _table_refused(table)  # known: valid
        if problem is not None:
            self.stats["refused"] += 1
            # the error cannot go under an id that is not one: it goes to {root}/controller
            return self._errors("controller", kind, problem, payload, shown=table[:64])
        decoded = _parse_input(kind, payload)
        if isinstance(decoded, wire.Malformed):
            self._tally(table, "malformed")
            return self._errors(table, kind, decoded.reason, payload)
        if table not in self._tables and len(self._tables) >= self.max_tables:
            self.stats["refused"] += 1
            return self._errors(table, kind, f"refused: the controller already follows "
                                f"{self.max_tables} tables (--max-tables)", payload)
        ts = self._table(table)
        if len(self._routes) < 4 * MAX_TABLES:   # a valid table's topic: checked once
            self._routes[topic] = (table, kind)
        return self._sequenced(table, kind, ts, decoded, payload)

    def _sequenced(self, table: str, kind: str, ts: _TableState, decoded: _Parsed,
                   payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """``handle`` for a followed table, the input decoded: its source and seq checked
        (1.2), then applied."""
        src, origin, seq, inp = decoded
        boot, acked = origin
        seqs = ts.seqs
        source = seqs.get(src)
        tracker = source.boots.get(boot) if source is not None else None
        if tracker is None:
            if source is None and len(seqs) >= self.max_sources:
                self._tally(table, "refused")
                return self._errors(table, kind, f"refused: table {table} already has "
                                    f"{self.max_sources} sources (--max-sources); src "
                                    f"{src[:64]!r} is one too many", payload)
            tracker = self._tracker(ts, src, boot)
        if tracker is not None and acked is not None:
            tracker.fast_forward(acked)
        if tracker is None or seq != tracker.high + 1:  # else new: the next of its source
            verdict = "retired" if tracker is None else tracker.verdict(seq)
            if verdict == "duplicate":
                self._tally(table, "duplicates")
                self._acks_dirty.add((table, src))  # its ack may have been lost: say it again
                return []
            if tracker is None or verdict != "new":
                return self._refuse(table, kind, src, boot, seq, verdict, tracker, payload)
        tracker.add(seq)
        self._acks_dirty.add((table, src))
        key = "events" if kind == "event" else "rulings"
        self.stats[key] += 1   # _tally, inline: the table is followed
        counts = ts.counts
        counts[key] = counts.get(key, 0) + 1
        try:
            update = ts.table.apply(inp)
            if update.refused:
                # 1.6: a ruling (an option) the table cannot apply changed nothing
                self._tally(table, "refused")
                return self._errors(table, kind, f"refused: {update.refused}", payload)
            ts.last = {"src": src, "seq": seq}
            if self._results_only:
                if (update.shown_unchanged or update == _NO_CHANGE) and type(inp) is TagEvent \
                        and not self._quiet and self._deferred is None:
                    # no alert, feed, result or evidence, no state or indicator built
                    ts.notes = ()
                    return []
            elif update.shown_unchanged:
                # nothing shown changed: no alert, feed, result or evidence; the state is
                # the last one with this input in ``last``
                return self._unchanged(table, ts, update)
            out = self._publish(table, ts, update, now=kind == "ruling") + \
                self._evidence(table, ts, update, inp)
            if update.board_started and self.board_starts is not None:
                self.board_starts[table] = (self.position, self._carried(table, ts, update))
            return out
        except Exception as exc:  # a defect, never a player's irregularity: keep serving
            self._tally(table, "internal_errors")
            try:
                update = ts.table.drop_last_input()
                out = self._publish(table, ts, update)
            except Exception:  # the board cannot even be rebuilt: report, state unchanged
                out = []
            return [self._error(table, kind, f"internal error, input not applied: "
                                f"{type(exc).__name__}: {exc}", payload), *out]

    def _tally(self, table: str, key: str) -> None:
        """Count in ``stats``, and in the table's own counts when it is followed (what its
        snapshot carries: ``controller.service.snapshot``)."""
        self.stats[key] += 1
        ts = self._tables.get(table)
        if ts is not None:
            ts.counts[key] = ts.counts.get(key, 0) + 1

    # -- sequence numbers and acknowledgements (1.2) -----------------------------------------
    def _tracker(self, ts: _TableState, src: str, boot: str | None) -> _SeqTracker | None:
        """The tracker of (src, boot); None if that boot was retired (a newer one took over)."""
        source = ts.seqs.get(src)
        if source is None:
            source = ts.seqs[src] = _Source()
        tracker = source.boots.get(boot)
        if tracker is not None:
            return tracker
        if boot is not None and boot in source.retired:
            return None
        tracker = source.boots[boot] = _SeqTracker(strict=boot is not None)
        while len(source.boots) > _BOOTS_PER_SRC:
            old, _ = source.boots.popitem(last=False)
            if old is not None:
                source.retired.append(old)
        return tracker

    def _refuse(self, table: str, kind: str, src: str, boot: str | None, seq: int,
                verdict: str, tracker: _SeqTracker | None,
                payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """An event not applied because of its seq: answered on ``error``, counted, and kept
        in ``refusals`` (the daemon's status), never dropped silently."""
        expected = None if tracker is None else tracker.high + 1
        if verdict == "gap":
            self._tally(table, "out_of_order")
            why = (f"seq {seq} of src {src!r} boot {boot!r} is out of order (expected "
                   f"{expected}): not applied; the bridge sends the missing events again")
        elif verdict == "before_start":
            self._tally(table, "refused")
            why = (f"seq {seq} of src {src!r} boot {boot!r} is below {tracker and tracker.low}, "
                   f"the first this controller applied of that boot: refused, not applied")
        elif verdict == "retired":
            self._tally(table, "refused")
            why = (f"src {src!r}: boot {boot!r} was replaced by a newer boot: event seq {seq} "
                   f"refused")
        else:
            self._tally(table, "refused")
            why = (f"seq {seq} of src {src!r} is more than 2048 below its highest "
                   f"({expected and expected - 1}): refused as a stale duplicate; a bridge whose "
                   f"seq went back must send a new boot")
        key = f"{table}/{src}"
        self.refusals[key] = why
        self.refusals.move_to_end(key)
        while len(self.refusals) > _REFUSALS_KEPT:
            self.refusals.popitem(last=False)
        return self._errors(table, kind, why, payload)

    def _ack(self, table: str, src: str) -> Outgoing | None:
        ts = self._tables.get(table)
        source = ts.seqs.get(src) if ts is not None else None
        if source is None or not source.boots or not _TOPIC_SAFE_SRC.fullmatch(src):
            return None
        boot, tracker = next(reversed(source.boots.items()))
        if tracker.high < 0:
            return None
        payload: dict[str, Any] = {"v": WIRE_VERSION, "src": src, "seq": tracker.high}
        if boot is not None:
            payload["boot"] = boot
        return Outgoing(wire.ack_topic(table, src, root=self.root), payload, retain=True)

    def acks_due(self) -> list[Outgoing]:
        """The acknowledgements (``{root}/{t}/ack/{src}``, retained) of every source that
        sent something since the last call: the daemon publishes them once the events are
        journaled and applied. Not part of ``handle``'s outputs, so replay is unchanged."""
        out = [ack for table, src in sorted(self._acks_dirty)
               if (ack := self._ack(table, src)) is not None]
        self._acks_dirty.clear()
        return out

    def acks(self) -> list[Outgoing]:
        """Every source's acknowledgement (after a reconnect: the broker may have lost them)."""
        return [ack for table in self.tables for src in sorted(self._tables[table].seqs)
                if (ack := self._ack(table, src)) is not None]

    # -- building outputs -----------------------------------------------------------------
    def _topic(self, table: str, kind: str) -> str:
        return _topic_text(self.root, table, kind)

    def _table(self, name: str) -> _TableState:
        ts = self._tables.get(name)
        if ts is None:
            ts = _TableState(Table(name, rules=self.rules, deals=self.deals,
                                   schedule=self.schedule.get(name),
                                   feed=bool({"feed", "evidence"} & self.kinds)))
            self._tables[name] = ts
        return ts

    def _error(self, table: str, kind: str, message: str,
               payload: bytes | str | Mapping[str, Any], *, shown: str | None = None
               ) -> Outgoing:
        """An ``error`` on ``{root}/{table}/error``; ``shown`` the table id the payload
        names, when it is not ``table`` (a refused id, reported under ``controller``)."""
        return Outgoing(self._topic(table, "error"), wire.error_payload(
            table if shown is None else shown, kind, message, payload), retain=False)

    def _errors(self, table: str, kind: str, message: str,
                payload: bytes | str | Mapping[str, Any], *, shown: str | None = None
                ) -> list[Outgoing]:
        """``[_error(...)]`` when the kinds kept include ``error`` (replay ``--topics``),
        else nothing: how an input is refused."""
        return [self._error(table, kind, message, payload, shown=shown)] \
            if "error" in self.kinds else []

    def _publish(self, name: str, ts: _TableState, update: Update, *, now: bool = False
                 ) -> list[Outgoing]:
        """The outputs of ``update``; ``now``: state and indicator even while deferring."""
        if self._quiet:
            return self._follow(name, ts, update)
        out: list[Outgoing] = []
        kinds = self.kinds
        table = ts.table
        board = table.board
        if update.board_started:
            ts.alerts = {}
        alerting = "alert" in kinds
        if alerting and update.previous:
            # the alerts of a board replaced before it was finished keep its number
            topic = self._topic(name, "alert")
            out += [Outgoing(topic, self._alert(name, update.previous_board, item), False)
                    for item in update.previous]
        # the board as played, built once when its result changed (result, feed, fouled check)
        result_changed = update.result_changed
        record = table.record if result_changed else None
        irregularities = update.irregularities
        if irregularities:
            board_no = board.number if board is not None else None
            alerts = ts.alerts
            for item in irregularities:
                alerts[item.id] = item
                if alerting:
                    out.append(Outgoing(self._topic(name, "alert"),
                                        self._alert(name, board_no, item), False))
        feed = update.feed
        if feed:
            if "feed" in kinds:
                topic = self._topic(name, "feed")
                for feed_item in feed:
                    ts.feed_seq += 1  # the number the item's payload carries
                    out.append(Outgoing(topic, self._feed(name, ts, feed_item, record), False))
            else:
                ts.feed_seq += len(feed)
        ts.notes = update.notes
        deferred = self._deferred
        if deferred is None:
            out += self._snapshots(name, ts)
        elif now or result_changed:
            # a board's result goes out after the state that finished it (the broadcast
            # gate trusts a result only once a state shows its board over); that state
            # may be gone by the end of the batch if the next board starts in it
            deferred.pop(name, None)
            out += self._snapshots(name, ts)
        else:
            # ts.state stays the last one published until flush(): only the thread that
            # applies inputs writes it (a listener thread reading snapshot() mid-batch, as
            # the tests do, must not store a state that flush() has already replaced)
            deferred[name] = None
        if result_changed and board is not None:
            ts.result = self._result(name, record)
            if "result" in kinds:
                out.append(Outgoing(self._topic(name, "result"), ts.result, True))
            out += self._compare_tables(name, ts, record)
        return out

    def _unchanged(self, name: str, ts: _TableState, update: Update) -> list[Outgoing]:
        """The outputs of an input that changed nothing shown (``Update.shown_unchanged``):
        the last state with the new ``last``, when that state is the one after the input
        before (published at once, no notes, the same session); else as ``_publish``."""
        state = ts.state
        if state is None or ts.notes or self._deferred is not None or self._quiet \
                or state.get("session") != (self.session_id or None):
            return self._publish(name, ts, update)
        last = ts.last
        new = ts.state = {**state, "last": last}
        # the indicator's key did not change: neither rebuilt nor published
        topic = self._topic(name, "state")
        parts = ts.state_parts
        if parts is None:
            return [Outgoing(topic, new, True)]
        # the new state's JSON is the last one's with the new ``last`` put in: only when
        # the last message sent is that state (its payload, by identity: payloads are not
        # changed once built), its JSON was made (replay and the daemon ask for every
        # message's before the next input; a caller that never does pays nothing here),
        # and its bytes were cut where the encoding puts ``last``
        sent = parts.sent
        split = None
        if sent is not None and sent.payload is state:
            split = parts.sent_split
            if split is None:
                data = sent.encoded()
                if data is not None:
                    split = _cut_at_last(data, state)
        if split is None or last is None:
            out = Outgoing(topic, new, True)
        else:
            # (the fifth field: the payload's JSON, given)
            out = Outgoing(topic, new, True, 1, split[0] + encode(last) + split[1])
        parts.sent, parts.sent_split = out, split
        return [out]

    def _snapshots(self, name: str, ts: _TableState) -> list[Outgoing]:
        """The table's ``state`` and, if it changed, its ``indicator`` (retained)."""
        out: list[Outgoing] = []
        kinds = self.kinds
        if "state" not in kinds and "indicator" not in kinds:
            # neither is published (replay --topics): nothing to decide, nothing to build
            ts.state = ts.indicator = ts.indicator_key = None
            return out
        board = ts.table.board
        # whose turn it is and the tricks won: computed once for state and indicator
        turn = board.turn if board is not None else None
        play = board.play if board is not None else None
        won = play.tricks_won if play is not None else None
        if "state" in kinds:
            state = ts.state = self._state(name, ts, turn, won)
            sent = Outgoing(self._topic(name, "state"), state, True)
            out.append(sent)
            parts = ts.state_parts
            if parts is not None:  # what an unchanged input's state is made from
                parts.sent, parts.sent_split = sent, None
        else:
            ts.state = None  # built on demand by snapshot()
        if "indicator" in kinds:
            # publish what changed: an indicator whose inputs are those of the last one is
            # the last one, neither rebuilt nor published
            key = self._indicator_key(ts, turn, won)
            if key != ts.indicator_key:
                ts.indicator_key = key
                indicator = self._indicator(name, ts, key)
                if indicator != ts.indicator:
                    ts.indicator = indicator
                    out.append(Outgoing(self._topic(name, "indicator"), indicator, retain=True))
        else:
            ts.indicator = ts.indicator_key = None
        return out

    def _follow(self, name: str, ts: _TableState, update: Update) -> list[Outgoing]:
        """``_publish`` without outputs (``rebuild``): what the next outputs depend on is
        kept (alerts, feed numbers, notes, result, the fouled-board check); state and
        indicator are built again when next asked for."""
        if update.board_started:
            ts.alerts = {}
        for item in update.irregularities:
            ts.alerts[item.id] = item
        ts.feed_seq += len(update.feed)
        ts.notes = update.notes
        ts.state = ts.indicator = ts.indicator_key = None
        board = ts.table.board
        if update.result_changed and board is not None:
            record = ts.table.record
            ts.result = self._result(name, record)
            self._compare_tables(name, ts, record)
        return []

    def _carried(self, name: str, ts: _TableState, update: Update) -> Carried:
        """The values ``name`` carries across boards, just after its board-starting
        input (copies: the table goes on changing); taken after the outputs, so that a
        failed input leaves none."""
        board = ts.table.board
        assert board is not None  # a board just started
        sources = tuple(
            CarriedSource(src, tuple(CarriedBoot(boot, s.strict, s.high, s.low,
                                                 tuple(sorted(s.recent)))
                                     for boot, s in source.boots.items()),
                          tuple(source.retired))
            for src, source in ts.seqs.items())
        return Carried(
            table=name, board=board.number, last=None if ts.last is None else dict(ts.last),
            played=tuple(ts.table.played), next_id=board.log.first_id,
            # the board-starting input's feed items are counted again when it is re-applied
            feed_seq=ts.feed_seq - len(update.feed),
            result=None if ts.result is None else dict(ts.result), sources=sources,
            observed=tuple(ts.observed), counts=dict(ts.counts))

    def restore(self, carried: Carried, kind: str, payload: bytes | str) -> str | None:
        """Follow ``carried.table`` again from the values it carried across boards, by
        applying its board-starting input (``kind``, ``payload``) without outputs. None when
        done, else why not (the engine is then as before: the table is not followed)."""
        name = carried.table
        if name in self._tables:
            return f"table {name} is already followed"
        if len(self._tables) >= self.max_tables:  # --max-tables lowered since
            return f"the controller already follows {self.max_tables} tables (--max-tables)"
        decoded = _parse_input(kind, payload)
        if isinstance(decoded, wire.Malformed):
            return f"its input does not decode ({decoded.reason})"
        src, _, seq, inp = decoded
        if carried.last != {"src": src, "seq": seq}:
            return f"its input is not the one the values of table {name} were taken at"
        seqs: dict[str, _Source] = {}
        for s in carried.sources:
            boots: OrderedDict[str | None, _SeqTracker] = OrderedDict(
                (b.boot, _SeqTracker(b.strict, b.high, b.low, set(b.recent)))
                for b in s.boots)
            seqs[s.src] = _Source(boots, deque(s.retired, maxlen=_RETIRED_BOOTS))
        ts = self._table(name)
        try:
            ts.table.resume(list(carried.played), carried.next_id)
            ts.seqs, ts.feed_seq, ts.result = seqs, carried.feed_seq, carried.result
            ts.observed = list(carried.observed)
            update = ts.table.apply(inp)
            board = ts.table.board
            if not update.board_started or board is None or board.number != carried.board:
                raise ValueError(f"its input does not start board {carried.board}")
            self._follow(name, ts, update)
            self._evidence(name, ts, update, inp)
            ts.last = carried.last
            unknown = set(carried.counts) - set(self.stats)
            if unknown:
                raise ValueError(f"unknown counters {sorted(unknown)}")
            ts.counts = dict(carried.counts)
            for key, count in carried.counts.items():
                self.stats[key] += count
        except Exception as e:  # values that do not fit: that table is rebuilt in full
            del self._tables[name]
            return f"table {name} does not restore: {type(e).__name__}: {e}"
        return None

    def _evidence(self, name: str, ts: _TableState, update: Update,
                  inp: TagEvent | ButtonEvent | Ruling) -> list[Outgoing]:
        """The director's evidence (controller/evidence/payload.py): published when the board
        starts or ends, when the auction ends, on a claim, and when a call or card crosses
        an absolute tempo threshold; never on the table's topics."""
        if "evidence" not in self.kinds:  # replay --topics without it: not even kept
            return []
        if type(inp) is TagEvent:   # nearly every input: neither a press nor a ruling
            pressed = ruling = False
            event_ts: float | None = inp.ts
        else:
            ruling = isinstance(inp, Ruling)
            pressed = isinstance(inp, ButtonEvent) and inp.button in (Button.DIRECTOR,
                                                                      Button.CLAIM)
            event_ts = inp.ts if isinstance(inp, TagEvent) else None
            if ruling or pressed:
                ts.tempo.director_at_table()   # the wait for a ruling is no one's tempo (73D1)
        changed = note_tempo(ts.tempo, update.feed, ts.table.board, event_ts, self.policy.tempo)
        if update.board_started:
            ts.claim = None
            ts.presses = []
        if pressed:
            # 1.14: the press for the director, published on the evidence topic; nothing
            # changes at the table until the director rules
            assert isinstance(inp, ButtonEvent)
            ts.presses = [*ts.presses, press_payload(inp, ts.last)]
            changed = True
        if ruling and isinstance(inp, Ruling) and inp.kind is RulingKind.CLAIM \
                and update.result_changed:
            # a claim the Laws core took (it ended the play); a refused one leaves no position
            ts.claim = claim_position(ts.table.record, inp.tricks)
            changed = True
        if not (changed or update.result_changed or update.board_started):
            return []
        ts.evidence = evidence_payload(name, ts.tempo, ts.table.board, ts.claim,
                                       self.policy.tempo, ts.presses)
        return [Outgoing(self._topic(name, "evidence"), ts.evidence, retain=True)]

    def _compare_tables(self, name: str, ts: _TableState,
                        record: BoardRecord | None) -> list[Outgoing]:
        """Law 87: the hands this table saw (scanned, or revealed by play) against every
        other table's hands for the same board; a difference is a fouled board."""
        if record is None or record.deal is None:
            return []
        out: list[Outgoing] = []
        for seat in Seat:
            ts.observed.append((self.position, record.board, seat, record.deal[seat]))
            for conflict in self.fouled.observe(name, record.board, seat, record.deal[seat]):
                other = conflict.tables[0]
                cards = sorted(conflict.only_first | conflict.only_second)
                update = ts.table.flag(
                    Code.FOULED_BOARD, law="87", seat=seat, detail="hands_differ",
                    board=record.board, other_table=other,
                    cards=" ".join(str(c) for c in cards),
                    here=" ".join(str(c) for c in sorted(conflict.only_second)),
                    there=" ".join(str(c) for c in sorted(conflict.only_first)))
                out += self._publish(name, ts, update)
        return out

    def _alert(self, table: str, board: int | None, item: Irregularity) -> dict[str, Any]:
        payload: dict[str, Any] = {
            "v": WIRE_VERSION, "id": item.id, "table": table, "board": board,
            "code": str(item.code), "law": item.law,
            "seat": str(item.seat) if item.seat is not None else None,
            "trick": item.trick, "status": str(item.status), "text": alert_texts(item),
        }
        if item.detail:
            payload["detail"] = item.detail
        if item.card is not None:
            payload["card"] = str(item.card)
        if item.call is not None:
            payload["call"] = str(item.call)
        if item.params:
            payload["params"] = {k: _jsonable(v) for k, v in item.params}
        if self.session_id:
            payload["session"] = self.session_id
        return payload

    def _state(self, name: str, ts: _TableState, turn: Any = _UNKNOWN,
               won: tuple[int, int] | None = None) -> dict[str, Any]:
        """The table's ``state``. Its parts that one call or card leaves alone (the board's
        texts, the auction, the contract, the tricks, the trick in progress) are kept in
        ``ts.state_parts`` and reused, the same objects, while their inputs are the same
        (payloads are not changed once built: ``Outgoing.data``); a fresh ``_StateParts``
        builds them all (tests/test_engine_state_parts.py holds the two equal). ``turn``:
        ``board.turn`` when the caller has it (``_UNKNOWN``: look it up), ``won`` the
        play's ``tricks_won`` (None: look it up)."""
        table = ts.table
        board = table.board
        if board is None:
            waiting: dict[str, Any] = {"v": WIRE_VERSION, "table": name, "board": None,
                       "phase": _WAITING, "last": ts.last}
            if self.session_id:
                waiting["session"] = self.session_id
            return waiting
        parts = ts.state_parts
        if parts is None or parts.board is not board:
            parts = ts.state_parts = _StateParts(board)
        auction = board.auction
        calls = auction.calls
        if calls is not parts.calls:
            parts.calls = calls
            parts.auction = [[s, c] for s, c in self._auction_texts(ts, calls)]
        contract = auction.contract
        declarer = auction.declarer
        if contract is not parts.contract or declarer is not parts.declarer:
            parts.contract, parts.declarer = contract, declarer
            parts.contract_texts = (
                str(contract) if contract is not None else None,
                _SEAT_TEXT[declarer] if declarer is not None else None,
                _SEAT_TEXT[declarer.partner] if declarer is not None else None)
        play = board.play
        if play is not None:
            if won is None:
                won = play.tricks_won
            if won != parts.won:
                parts.won, parts.tricks = won, {"NS": won[0], "EW": won[1]}
            trick_no = play.trick_number
            cards = play.current_cards
            if cards != parts.cards:
                parts.cards = cards
                parts.current = [{"seat": _SEAT_TEXT[s], "card": _CARD_TEXT[c.index]}
                                 for s, c in cards]
            penalty_cards = play.penalty_cards
            # (no comprehension for none: the common case)
            penalty = {_SEAT_TEXT[s]: sorted(_CARD_TEXT[c.index] for c in cs)
                       for s, cs in penalty_cards.items() if cs} if penalty_cards else {}
        else:
            trick_no = 0
            if parts.cards or parts.won != (0, 0):
                parts.won, parts.tricks, parts.cards, parts.current = (0, 0), _no_tricks(), (), []
            penalty = {}
        if turn is _UNKNOWN:
            turn = board.turn
        alerts = ts.alerts
        obligations = auction.obligations
        contract_text, declarer_text, dummy_text = parts.contract_texts
        state: dict[str, Any] = {
            "v": WIRE_VERSION, "table": name, "board": parts.number,
            "dealer": parts.dealer, "vul": parts.vul,
            "phase": str(board.phase) if not board.done else "done",
            "turn": _SEAT_TEXT[turn] if turn is not None else None,
            "auction": parts.auction,
            "contract": contract_text, "declarer": declarer_text, "dummy": dummy_text,
            "tricks": parts.tricks, "trick": trick_no, "current": parts.current,
            "obligations": {_SEAT_TEXT[s]: o for s, o in obligations.items()}
            if obligations else {},
            "penalty_cards": penalty,
            "irregularities": [
                {"id": i.id, "code": str(i.code), "status": str(i.status),
                 "seat": str(i.seat) if i.seat is not None else None}
                for i in alerts.values() if i.status in _ACTIVE
            ] if alerts else [],
            "last": ts.last,
        }
        notes = ts.notes
        if notes:
            state["notes"] = list(notes)
        if self.pairs_at is not None:
            self._add_pairs(state, name, parts.number)
        session_id = self.session_id
        if session_id:
            state["session"] = session_id
        return state

    @staticmethod
    def _auction_texts(ts: _TableState, calls: tuple[tuple[Seat, Call], ...]
                       ) -> tuple[tuple[str, str], ...]:
        if calls is not ts.auction_calls:
            ts.auction_calls = calls
            ts.auction_texts = tuple((_SEAT_TEXT[s], _call_text(c)) for s, c in calls)
        return ts.auction_texts

    def _add_pairs(self, payload: dict[str, Any], table: str, board: int) -> None:
        pairs = self.pairs_at(table, board) if self.pairs_at is not None else None
        if pairs is not None:
            payload["ns"], payload["ew"] = pairs

    def _shown(self, ts: _TableState) -> list[Irregularity]:
        board = ts.table.board
        play_over = board is None or board.complete
        return [i for i in ts.alerts.values() if i.status in _ACTIVE
                and self.policy.shows_at_table(i.code, play_ended=play_over)]

    def _indicator_key(self, ts: _TableState, turn: Any = _UNKNOWN,
                       won: tuple[int, int] | None = None) -> tuple[Any, ...]:
        """Everything the indicator shows: the board, whose turn it is, the alerts shown
        (their ids and seats) and the display's key. ``turn``, ``won``: as for ``_state``."""
        board = ts.table.board
        if ts.alerts:
            shown = self._shown(ts)
            alerts = tuple([(i.id, i.seat) for i in shown])
        else:  # no alert this board (most boards): nothing to look through
            shown, alerts = [], ()
        if board is None:
            return None, None, alerts, display_key(None, shown)
        if turn is _UNKNOWN:
            turn = board.turn
        texts = self._auction_texts(ts, board.auction.calls)
        if texts is not ts.last_calls_of:  # the display's last four calls, per auction
            ts.last_calls_of, ts.last_calls = texts, tuple([c for _, c in texts[-4:]])
        return board.number, turn, alerts, display_key(board, shown, turn, ts.last_calls, won)

    def _indicator(self, name: str, ts: _TableState, key: tuple[Any, ...]) -> dict[str, Any]:
        board_no, turn, shown, dkey = key
        if shown:
            alerting = [False] * 4
            for _, seat in shown:
                if seat is not None:
                    alerting[seat] = True
            alert_n, alert_e, alert_s, alert_w = alerting
        else:
            alert_n = alert_e = alert_s = alert_w = False
        # the four seats written out in _SEAT_ORDER (N E S W), cheaper than a comprehension
        # on every indicator; each payload its own dicts
        north, east, south, west = _SEAT_ORDER
        seats = {
            _SEAT_TEXT[north]: {"turn": turn is north, "alert": alert_n},
            _SEAT_TEXT[east]: {"turn": turn is east, "alert": alert_e},
            _SEAT_TEXT[south]: {"turn": turn is south, "alert": alert_s},
            _SEAT_TEXT[west]: {"turn": turn is west, "alert": alert_w},
        }
        if ts.display is None or ts.renderer is None:  # nothing kept: render from scratch
            ts.renderer = DisplayRenderer(self.languages)
        # each payload its own lists (a consumer may keep or change the one it got): the
        # renderer keeps the rows' texts, never a payload's lists
        ts.display_key = dkey
        ts.display = display = ts.renderer.render(dkey)
        return {
            "v": WIRE_VERSION, "table": name, "board": board_no,
            "seats": seats, "alerts": [i for i, _ in shown] if shown else [],
            "display": display,
        }

    def _result(self, name: str, record: BoardRecord | None) -> dict[str, Any]:
        assert record is not None
        result: dict[str, Any] = {
            "v": WIRE_VERSION, "table": name, "board": record.board,
            "dealer": str(record.dealer), "vul": str(record.vulnerability),
            "contract": str(record.contract) if record.contract is not None else "Pass",
        }
        if record.declarer is not None:
            result["declarer"] = str(record.declarer)
        result.update(
            tricks=record.tricks_result, tricks_played=record.tricks_played,
            score_ns=record.score_ns,
            irregularities=[
                {"id": i.id, "code": str(i.code), "status": str(i.status), "law": i.law,
                 "seat": str(i.seat) if i.seat is not None else None}
                for i in record.irregularities
            ],
        )
        self._add_pairs(result, name, record.board)
        if self.session_id:
            result["session"] = self.session_id
        return result

    def _feed(self, name: str, ts: _TableState, item: FeedItem,
              record: BoardRecord | None) -> dict[str, Any]:
        kind, seat, call, card, trick, calls, cards = item
        board = ts.table.board
        payload: dict[str, Any] = {
            "v": WIRE_VERSION, "table": name,
            "board": board.number if board is not None else None,
            "n": ts.feed_seq, "kind": kind,
        }
        session_id = self.session_id
        if session_id:
            payload["session"] = session_id
        if kind == "board" and board is not None:
            payload["dealer"] = _SEAT_TEXT[board.dealer]
            payload["vul"] = _VUL_TEXT[board.vulnerability]
        # the texts looked up (``str`` of the core's values, made once)
        if seat is not None:
            payload["seat"] = _SEAT_TEXT[seat]
        if call is not None:
            payload["call"] = _call_text(call)
        if card is not None:
            payload["card"] = _CARD_TEXT[card.index]
            payload["trick"] = trick
        if kind == "auction":
            payload["calls"] = [[str(s), str(c)] for s, c in calls]
        elif kind == "play":
            payload["cards"] = [[str(s), str(c)] for s, c in cards]
        elif kind == "result":
            if record is not None:
                payload.update(
                    contract=str(record.contract) if record.contract else "Pass",
                    declarer=_SEAT_TEXT[record.declarer] if record.declarer is not None
                    else None,
                    tricks=record.tricks_result, score_ns=record.score_ns)
                # 1.2: the four hands once the board is over (scanned or revealed by play)
                if record.deal is not None and record.deal.is_complete:
                    payload["deal"] = record.deal.to_pbn()
        return payload


def _table_refused(table: str) -> str | None:
    """Why an input naming ``table`` is refused (``wire.table_id_problem``)."""
    problem = wire.table_id_problem(table)
    return None if problem is None else f"refused: {problem}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)




_SEATS = {s.name: s for s in Seat}
_CARDS = {str(c): c for c in FULL_DECK}
_CALLS = {str(c): c for c in (
    [Call.parse(f"{lv}{d}") for lv in range(1, 8) for d in ("C", "D", "H", "S", "NT")]
    + [Call.parse("Pass"), Call.parse("X"), Call.parse("XX")])}
# the texts of core values, looked up rather than built by __str__ on every output
#: by seat (a list: indexing by an IntEnum is cheaper than hashing it)
_SEAT_TEXT = [str(s) for s in sorted(Seat)]
#: by ``Card.index``
_CARD_TEXT = [str(c) for c in sorted(FULL_DECK, key=lambda c: c.index)]
_SEAT_ORDER = tuple(Seat)
_CALL_TEXTS = {c: text for text, c in _CALLS.items()}
_VUL_TEXT = {v: str(v) for v in Vulnerability}


@lru_cache(maxsize=8 * MAX_TABLES)
def _topic_text(root: str, table: str, kind: str) -> str:
    """``wire.topic``, kept: the same few topics a table, one made for every message (its
    three arguments are all it is made from: the key is complete)."""
    return wire.topic(table, kind, root=root)


def _call_text(call: Call) -> str:
    text = _CALL_TEXTS.get(call)
    return text if text is not None else str(call)

_Parsed = tuple[str, _Boot, int, TagEvent | ButtonEvent | Ruling]
#: the origin of an event from a version-1 bridge (no boot, nothing acked)
_NO_BOOT = _Boot(None)


@lru_cache(maxsize=4096)
def _parse_topic(topic: str, root: str) -> wire.Topic | None:
    """``wire.parse_topic``, kept per topic: a table sends on the same two topics all
    session, and splitting and checking them again for every event is work for nothing."""
    return wire.parse_topic(topic, root=root)


def _parse_input(kind: str, payload: bytes | str | Mapping[str, Any]
                 ) -> _Parsed | wire.Malformed:
    """The one parser of incoming messages: ``controller.wire`` decodes and checks the
    payload's shape (one msgspec typed decode), then its names become the core's values."""
    msg = wire.decode_input("ruling" if kind == "ruling" else "event", payload)
    cls = type(msg)
    try:
        if cls is wire.TagEvent:
            tag: wire.TagEvent = msg  # type: ignore[assignment]
            origin = _NO_BOOT if tag.boot is None and tag.acked is None \
                else _Boot(tag.boot, tag.acked)
            if tag.card is not None and tag.unknown is None:  # the common case, inline
                card = _CARDS.get(tag.card)
                return tag.src, origin, tag.seq, TagEvent(
                    tag.zone, tag.action,
                    _SEATS[tag.seat] if tag.seat is not None else None, tag.uid.upper(),
                    card=card if card is not None else Card.parse(tag.card),
                    deck=None if tag.deck is None else str(tag.deck), ts=tag.ts)
            return tag.src, origin, tag.seq, _tag_event(tag)
        if cls is wire.ButtonEvent:
            button: wire.ButtonEvent = msg  # type: ignore[assignment]
            seat = _SEATS[button.seat] if button.seat is not None else None
            return button.src, _Boot(button.boot, button.acked), button.seq, ButtonEvent(
                button.button, seat, button.ts)
        if cls is wire.Ruling:
            ruling: wire.Ruling = msg  # type: ignore[assignment]
            return ruling.src, _Boot(ruling.boot), ruling.seq, _ruling(ruling)
    except ParseError as exc:
        return wire.Malformed(str(exc))
    assert isinstance(msg, wire.Malformed)
    return msg


def _event_input(payload: bytes | str | Mapping[str, Any]) -> _Parsed | wire.Malformed:
    """An ``event`` payload as the core's input (``bench/bench_wire.py`` times this)."""
    return _parse_input("event", payload)


def _card(text: str) -> Card:
    card = _CARDS.get(text)
    return card if card is not None else Card.parse(text)


def _call(text: str) -> Call:
    call = _CALLS.get(text)
    return call if call is not None else Call.parse(text)


def _tag_event(msg: wire.TagEvent) -> TagEvent:
    """Raises ParseError for a card or call the core does not know."""
    zone, action = msg.zone, msg.action
    seat = _SEATS[msg.seat] if msg.seat is not None else None
    uid = msg.uid.upper()
    if msg.unknown is True:
        return TagEvent(zone, action, seat, uid, unknown=True)
    if msg.card is not None:
        return TagEvent(zone, action, seat, uid, card=_card(msg.card),
                        deck=None if msg.deck is None else str(msg.deck), ts=msg.ts)
    if msg.call is not None:
        if msg.call not in _CALLS and msg.call.upper() in MARKERS:
            return TagEvent(zone, action, seat, uid, marker=msg.call.upper())
        return TagEvent(zone, action, seat, uid, call=_call(msg.call), ts=msg.ts)
    return TagEvent(zone, action, seat, uid, board=msg.board)


def _ruling(msg: wire.Ruling) -> Ruling:
    """Raises ParseError for a card, call or suit the core does not know."""
    return Ruling(
        msg.ruling, alert=msg.alert, tricks=msg.tricks,
        seat=_SEATS[msg.seat] if msg.seat is not None else None,
        card=_card(msg.card) if msg.card is not None else None,
        call=_call(msg.call) if msg.call is not None else None,
        suit=Suit[msg.suit] if msg.suit is not None else None,
        option=msg.option, board=msg.board)
