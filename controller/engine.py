"""The controller's engine: wire-contract messages in, wire-contract messages out.

``Engine.handle(topic, payload)`` is the one path every consumer uses: the live daemon
(``controller/daemon.py``), ``bridge-table replay`` and the benchmarks. It validates the
payload, drops duplicates (same ``src``, ``boot`` and ``seq``, as QoS 1 redelivers and
bridges resend), applies the event or ruling to the table's ``Table`` and returns what must
be published; ``acks_due`` gives the acknowledgements to publish after. It does no I/O and
reads no clock: the same inputs give the same outputs, which is what lets the daemon rebuild
every table from its journal.
"""

from __future__ import annotations

import math
import re
from collections import OrderedDict, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from . import WIRE_VERSION
from .display_text import display_lines
from .evidence import claim_position, evidence_payload, note_tempo
from .laws.cards import FULL_DECK, Call, Card, ParseError, Rules, Seat, Suit
from .laws.dealcheck import FouledBoardDetector
from .laws.events import MARKERS, Action, Button, ButtonEvent, TagEvent, Zone
from .laws.irregularities import Code, Irregularity, Status
from .laws.messages import alert_texts
from .laws.record import BoardRecord, DealInfo
from .laws.rulings import Ruling, RulingKind
from .laws.table import FeedItem, Phase, Table, Update
from .policy import IndicatorPolicy
from .tempo import TempoLog

__all__ = ["Outgoing", "Engine", "BadMessage", "encode", "MAX_PAYLOAD", "MAX_SEQ", "MAX_TABLES",
           "MAX_SOURCES", "TABLE_ID", "RESERVED_TABLE_IDS", "table_id_problem"]

#: Larger payloads are refused unread (a sensor event is ~200 bytes).
MAX_PAYLOAD = 64 * 1024

#: A table id (docs/wire-contract.md, "Table ids and limits"): 1-32 characters, letters,
#: digits, ``_ . -``, starting with a letter or a digit (so never ``.``, ``..`` or empty).
TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: Names under the topic root that are not tables (the daemon's status lives under them).
RESERVED_TABLE_IDS = frozenset({"controller"})
#: Every table and every source costs memory kept for the session: bounded by default
#: (``bridge-table controller --max-tables/--max-sources``).
MAX_TABLES = 1000
MAX_SOURCES = 64
#: The longest ``src`` (a bridge's is ``table-{id}-pi``).
MAX_SRC = 128
#: Largest ``seq`` accepted (1.2): 2^53 - 1, the largest integer every JSON reader keeps
#: exact. A larger one is refused with an ``error``; it can no longer silence its source.
MAX_SEQ = 2**53 - 1
#: ``boot`` (1.2): the bridge's epoch id, chosen when its spool starts a sequence
_BOOT = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
#: a ``src`` that may go into a topic (``{root}/{t}/ack/{src}``)
_TOPIC_SAFE_SRC = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: boots remembered per source; events of an older (retired) boot are refused, visibly
_BOOTS_PER_SRC = 4
_RETIRED_BOOTS = 64
#: sources whose last refusal is kept for the daemon's status
_REFUSALS_KEPT = 32

#: Statuses of an irregularity still to be dealt with (shown, listed in ``state``).
_ACTIVE = frozenset({Status.OPEN, Status.ESTABLISHED})

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def encode(payload: Mapping[str, Any]) -> bytes:
    """Canonical JSON for a payload (compact, UTF-8, key order as built)."""
    return _encoder.encode(payload)


@dataclass(frozen=True, slots=True)
class Outgoing:
    topic: str
    payload: dict[str, Any]
    retain: bool
    qos: int = 1


class BadMessage(ValueError):
    """A payload that does not follow the wire contract."""


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
    #: evidence for the director (``evidence`` topic): the board's tempo, the claim position
    tempo: TempoLog = field(default_factory=TempoLog)
    claim: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None


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
    ) -> None:
        """``kinds`` limits the outputs built (``replay --topics``): every input is still
        applied, and ``snapshot``/``retained`` still give the full current state.
        ``max_tables`` bounds the tables, ``max_sources`` the sources (``src``) per table:
        an input past either is refused with an ``error``.
        ``pairs_at(table, board)``: the session's movement, naming the pairs (or teams) at
        the table in ``state`` and ``result`` (``ns``, ``ew``; wire contract 1.2)."""
        if max_tables < 1 or max_sources < 1:
            raise ValueError("max_tables and max_sources must be at least 1")
        self.max_tables = max_tables
        self.max_sources = max_sources
        self.root = root
        self.deals: Mapping[int, DealInfo] = deals or {}
        self.rules = rules
        self.policy = policy or IndicatorPolicy()
        self.schedule = schedule or {}
        self.pairs_at = pairs_at
        self.fouled = FouledBoardDetector()
        every = frozenset({"state", "alert", "indicator", "result", "feed", "error",
                           "evidence"})
        self.kinds = every if kinds is None else frozenset(kinds) & every
        self._tables: dict[str, _TableState] = {}
        self.stats: dict[str, int] = {
            "events": 0, "rulings": 0, "duplicates": 0, "malformed": 0,
            "ignored_topics": 0, "internal_errors": 0, "out_of_order": 0, "refused": 0,
        }
        #: the last refusal per source (``"{table}/{src}"`` -> why), for the daemon's status
        self.refusals: OrderedDict[str, str] = OrderedDict()
        #: (table, src) whose acknowledgement changed since ``acks_due`` was last called
        self._acks_dirty: set[tuple[str, str]] = set()

    # -- public ---------------------------------------------------------------------------
    @property
    def tables(self) -> list[str]:
        return sorted(self._tables)

    def snapshot(self, table: str) -> dict[str, Any]:
        ts = self._tables.get(table)
        if ts is None:
            return {}
        if ts.state is None:
            ts.state = self._state(table, ts)
        return ts.state

    def record(self, table: str) -> BoardRecord | None:
        """The current (or last) board of ``table`` as played, for PBN / LIN output."""
        ts = self._tables.get(table)
        return ts.table.record() if ts is not None else None

    def retained(self) -> list[Outgoing]:
        out: list[Outgoing] = []
        for name in self.tables:
            ts = self._tables[name]
            out.append(Outgoing(self._topic(name, "state"), self.snapshot(name), True))
            if ts.indicator is None:
                ts.indicator = self._indicator(name, ts)
            out.append(Outgoing(self._topic(name, "indicator"), ts.indicator, True))
            if ts.result is not None:
                out.append(Outgoing(self._topic(name, "result"), ts.result, True))
            if ts.evidence is not None:
                out.append(Outgoing(self._topic(name, "evidence"), ts.evidence, True))
        return out

    def handle(self, topic: str, payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """Apply one message from ``{root}/{t}/event`` or ``{root}/{t}/ruling``."""
        parts = topic.split("/")
        if len(parts) != 3 or parts[0] != self.root or parts[2] not in ("event", "ruling") \
                or not parts[1] or "+" in parts[1] or "#" in parts[1]:
            self.stats["ignored_topics"] += 1
            return []
        table, kind = parts[1], parts[2]
        problem = None if table in self._tables else table_id_problem(table)  # known: valid
        if problem is not None:
            self.stats["refused"] += 1
            # the error cannot go under an id that is not one: it goes to {root}/controller
            return [self._error("controller", kind, problem, payload, shown=table[:64])] \
                if "error" in self.kinds else []
        try:
            fast = _fast_event(payload) if kind == "event" else None
            if fast is not None:
                src, origin, seq, inp = fast
            else:
                data = self._decode(payload)
                if kind == "event":
                    src, origin, seq, inp = self._parse_event(data)
                else:
                    src, origin, seq, inp = self._parse_ruling(data)
        except BadMessage as exc:
            self.stats["malformed"] += 1
            return [self._error(table, kind, str(exc), payload)] if "error" in self.kinds \
                else []
        if table not in self._tables and len(self._tables) >= self.max_tables:
            self.stats["refused"] += 1
            return [self._error(table, kind, f"refused: the controller already follows "
                                f"{self.max_tables} tables (--max-tables)", payload)] \
                if "error" in self.kinds else []
        ts = self._table(table)
        boot, acked = origin
        if src not in ts.seqs and len(ts.seqs) >= self.max_sources:
            self.stats["refused"] += 1
            return [self._error(table, kind, f"refused: table {table} already has "
                                f"{self.max_sources} sources (--max-sources); src "
                                f"{src[:64]!r} is one too many", payload)] \
                if "error" in self.kinds else []
        tracker = self._tracker(ts, src, boot)
        if tracker is not None and acked is not None:
            tracker.fast_forward(acked)
        verdict = "retired" if tracker is None else tracker.verdict(seq)
        if verdict == "duplicate":
            self.stats["duplicates"] += 1
            self._acks_dirty.add((table, src))  # its ack may have been lost: say it again
            return []
        if tracker is None or verdict != "new":
            return self._refuse(table, kind, src, boot, seq, verdict, tracker, payload)
        tracker.add(seq)
        self._acks_dirty.add((table, src))
        self.stats["events" if kind == "event" else "rulings"] += 1
        try:
            update = ts.table.apply(inp)
            ts.last = {"src": src, "seq": seq}
            return self._publish(table, ts, update) + self._evidence(table, ts, update, inp)
        except Exception as exc:  # a defect, never a player's irregularity: keep serving
            self.stats["internal_errors"] += 1
            try:
                update = ts.table.drop_last_input()
                out = self._publish(table, ts, update)
            except Exception:  # the board cannot even be rebuilt: report, state unchanged
                out = []
            return [self._error(table, kind, f"internal error, input not applied: "
                                f"{type(exc).__name__}: {exc}", payload), *out]

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
            self.stats["out_of_order"] += 1
            why = (f"seq {seq} of src {src!r} boot {boot!r} is out of order (expected "
                   f"{expected}): not applied; the bridge sends the missing events again")
        elif verdict == "before_start":
            self.stats["refused"] += 1
            why = (f"seq {seq} of src {src!r} boot {boot!r} is below {tracker and tracker.low}, "
                   f"the first this controller applied of that boot: refused, not applied")
        elif verdict == "retired":
            self.stats["refused"] += 1
            why = (f"src {src!r}: boot {boot!r} was replaced by a newer boot: event seq {seq} "
                   f"refused")
        else:
            self.stats["refused"] += 1
            why = (f"seq {seq} of src {src!r} is more than 2048 below its highest "
                   f"({expected and expected - 1}): refused as a stale duplicate; a bridge whose "
                   f"seq went back must send a new boot")
        key = f"{table}/{src}"
        self.refusals[key] = why
        self.refusals.move_to_end(key)
        while len(self.refusals) > _REFUSALS_KEPT:
            self.refusals.popitem(last=False)
        return [self._error(table, kind, why, payload)] if "error" in self.kinds else []

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
        return Outgoing(self._topic(table, f"ack/{src}"), payload, retain=True)

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

    # -- parsing --------------------------------------------------------------------------
    @staticmethod
    def _decode(payload: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
        if isinstance(payload, Mapping):
            return dict(payload)
        if len(payload) > MAX_PAYLOAD:
            raise BadMessage(f"payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
        try:
            data = _decoder.decode(payload)
        except (msgspec.DecodeError, UnicodeDecodeError) as exc:
            raise BadMessage(f"not JSON: {exc}") from None
        except RecursionError:  # msgspec recurses per level: ~1,000 levels of [[[...]]]
            raise BadMessage("JSON nested too deeply") from None
        if not isinstance(data, dict):
            raise BadMessage("payload is not a JSON object")
        return data

    def _common(self, data: Mapping[str, Any], known: frozenset[str]
                ) -> tuple[str, _Boot, int]:
        v = data.get("v")
        if v != WIRE_VERSION or isinstance(v, bool):
            raise BadMessage(f"unsupported contract version v={v!r} (this controller speaks "
                             f"v={WIRE_VERSION})")
        src, seq, ts = data.get("src"), data.get("seq"), data.get("ts")
        if not isinstance(src, str) or not src or len(src) > MAX_SRC:
            raise BadMessage(f"src must be a non-empty string of at most {MAX_SRC} characters")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise BadMessage("seq must be a non-negative integer")
        if seq > MAX_SEQ:
            raise BadMessage(f"seq {seq} is over the maximum {MAX_SEQ} (2^53 - 1): a bridge "
                             f"that reaches it starts a new boot")
        boot = data.get("boot")
        if boot is not None and (not isinstance(boot, str) or not _BOOT.fullmatch(boot)):
            raise BadMessage("boot must be 1-64 letters, digits, '_', '.', ':' or '-'")
        acked = data.get("acked")
        if acked is not None and (boot is None or not isinstance(acked, int)
                                  or isinstance(acked, bool) or not 0 <= acked < seq):
            raise BadMessage("acked must be an integer from 0 to seq - 1, with a boot")
        if not isinstance(ts, int | float) or isinstance(ts, bool) or not math.isfinite(ts):
            raise BadMessage("ts must be a number of seconds since the epoch")
        # unknown fields are ignored: a newer bridge may add some
        return src, _Boot(boot, acked), seq

    _EVENT_FIELDS = frozenset({"v", "src", "seq", "boot", "acked", "ts", "type", "zone", "seat",
                               "action", "uid", "card", "deck", "call", "board", "unknown",
                               "button"})
    _RULING_FIELDS = frozenset({"v", "src", "seq", "boot", "ts", "ruling", "alert", "tricks",
                                "seat", "card", "call", "suit", "option", "board", "note"})

    def _parse_event(self, data: Mapping[str, Any]
                     ) -> tuple[str, _Boot, int, TagEvent | ButtonEvent]:
        src, boot, seq = self._common(data, self._EVENT_FIELDS)
        kind = data.get("type")
        seat = _seat(data.get("seat"))
        if kind == "button":
            try:
                button = Button(data.get("button"))
            except ValueError:
                raise BadMessage(f"unknown button {data.get('button')!r}") from None
            return src, boot, seq, ButtonEvent(button, seat)
        if kind != "tag":
            raise BadMessage(f"type must be 'tag' or 'button', not {kind!r}")
        try:
            zone = Zone(data.get("zone"))
            action = Action(data.get("action"))
        except ValueError:
            raise BadMessage(f"bad zone {data.get('zone')!r} or action "
                             f"{data.get('action')!r}") from None
        uid = data.get("uid", "")
        if not isinstance(uid, str):
            raise BadMessage("uid must be a string")
        if zone in (Zone.TRAY, Zone.BID) and seat is None:
            raise BadMessage(f"a {zone} tag needs a seat")
        if data.get("unknown") is True:
            return src, boot, seq, TagEvent(zone, action, seat, uid.upper(), unknown=True)
        card_text, call_text, board = data.get("card"), data.get("call"), data.get("board")
        if sum(x is not None for x in (card_text, call_text, board)) != 1:
            raise BadMessage("a tag event needs exactly one of card, call, board or unknown")
        if card_text is not None:
            if not isinstance(card_text, str):
                raise BadMessage("card must be a string like 'SA'")
            try:
                card = Card.parse(card_text)
            except ParseError as exc:
                raise BadMessage(str(exc)) from None
            deck = data.get("deck")
            if deck is not None and (not isinstance(deck, str | int) or isinstance(deck, bool)):
                raise BadMessage("deck must be a string or an integer")
            return src, boot, seq, TagEvent(zone, action, seat, uid.upper(), card=card,
                                            deck=None if deck is None else str(deck),
                                            ts=float(data["ts"]))
        if call_text is not None:
            if not isinstance(call_text, str):
                raise BadMessage("call must be a string like '1NT'")
            if call_text.upper() in MARKERS:
                return src, boot, seq, TagEvent(zone, action, seat, uid.upper(),
                                          marker=call_text.upper())
            try:
                call = Call.parse(call_text)
            except ParseError as exc:
                raise BadMessage(str(exc)) from None
            return src, boot, seq, TagEvent(zone, action, seat, uid.upper(), call=call,
                                            ts=float(data["ts"]))
        if not isinstance(board, int) or isinstance(board, bool) or board < 1:
            raise BadMessage("board must be a positive integer")
        return src, boot, seq, TagEvent(zone, action, seat, uid.upper(), board=board)

    def _parse_ruling(self, data: Mapping[str, Any]) -> tuple[str, _Boot, int, Ruling]:
        src, boot, seq = self._common(data, self._RULING_FIELDS)
        try:
            kind = RulingKind(data.get("ruling"))
        except ValueError:
            raise BadMessage(f"unknown ruling {data.get('ruling')!r}") from None
        alert = _opt_int(data, "alert", 1)
        tricks = _opt_int(data, "tricks", 0, 13)
        board = _opt_int(data, "board", 1)
        if kind in (RulingKind.ADJUST, RulingKind.CLAIM) and tricks is None:
            raise BadMessage(f"ruling {kind} needs tricks (0-13)")
        if kind is RulingKind.BOARD and board is None:
            raise BadMessage("ruling board needs board")
        try:
            card = Card.parse(data["card"]) if isinstance(data.get("card"), str) else None
            call = Call.parse(data["call"]) if isinstance(data.get("call"), str) else None
            suit = Suit.parse(data["suit"]) if isinstance(data.get("suit"), str) else None
        except ParseError as exc:
            raise BadMessage(str(exc)) from None
        if kind is RulingKind.UNINTENDED and alert is None and (
                call is None or _seat(data.get("seat")) is None):
            raise BadMessage("ruling unintended needs alert, or seat and call")
        option = data.get("option")
        return src, boot, seq, Ruling(
            kind, alert=alert, tricks=tricks, seat=_seat(data.get("seat")), card=card, call=call,
            suit=suit, option=option if isinstance(option, str) else None, board=board)

    # -- building outputs -----------------------------------------------------------------
    def _topic(self, table: str, kind: str) -> str:
        return f"{self.root}/{table}/{kind}"

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
        raw = payload if isinstance(payload, str) else (
            payload.decode("utf-8", "replace") if isinstance(payload, bytes) else _repr(payload))
        return Outgoing(self._topic(table, "error"), {
            "v": WIRE_VERSION, "table": table if shown is None else shown, "input": kind,
            "error": message, "excerpt": raw[:200],
        }, retain=False)

    def _publish(self, name: str, ts: _TableState, update: Update) -> list[Outgoing]:
        out: list[Outgoing] = []
        kinds = self.kinds
        table = ts.table
        board = table.board
        board_no = board.number if board else None
        if update.board_started:
            ts.alerts = {}
        if "alert" in kinds:
            # the alerts of a board replaced before it was finished keep its number
            out += [Outgoing(self._topic(name, "alert"),
                             self._alert(name, update.previous_board, item), retain=False)
                    for item in update.previous]
        # the board as played, built once when its result changed (result, feed, fouled check)
        record = table.record() if update.result_changed else None
        for item in update.irregularities:
            ts.alerts[item.id] = item
            if "alert" in kinds:
                out.append(Outgoing(self._topic(name, "alert"),
                                    self._alert(name, board_no, item), retain=False))
        for feed in update.feed:
            ts.feed_seq += 1
            if "feed" in kinds:
                out.append(Outgoing(self._topic(name, "feed"), self._feed(name, ts, feed, record),
                                    False))
        ts.notes = update.notes
        if "state" in kinds:
            ts.state = self._state(name, ts)
            out.append(Outgoing(self._topic(name, "state"), ts.state, retain=True))
        else:
            ts.state = None  # built on demand by snapshot()
        if "indicator" in kinds:
            indicator = self._indicator(name, ts)
            if indicator != ts.indicator:
                ts.indicator = indicator
                out.append(Outgoing(self._topic(name, "indicator"), indicator, retain=True))
        else:
            ts.indicator = None
        if update.result_changed and board is not None:
            ts.result = self._result(name, record)
            if "result" in kinds:
                out.append(Outgoing(self._topic(name, "result"), ts.result, retain=True))
            out += self._compare_tables(name, ts, record)
        return out

    def _evidence(self, name: str, ts: _TableState, update: Update,
                  inp: TagEvent | ButtonEvent | Ruling) -> list[Outgoing]:
        """The director's evidence (controller/evidence.py): published when the board
        starts or ends, when the auction ends, on a claim, and when a call or card crosses
        an absolute tempo threshold; never on the table's topics."""
        if "evidence" not in self.kinds:  # replay --topics without it: not even kept
            return []
        changed = note_tempo(ts.tempo, update.feed, ts.table.board,
                             inp.ts if isinstance(inp, TagEvent) else None, self.policy.tempo)
        if update.board_started:
            ts.claim = None
        if isinstance(inp, Ruling) and inp.kind is RulingKind.CLAIM and update.result_changed:
            # a claim the Laws core took (it ended the play); a refused one leaves no position
            ts.claim = claim_position(ts.table.record(), inp.tricks)
            changed = True
        if not (changed or update.result_changed or update.board_started):
            return []
        ts.evidence = evidence_payload(name, ts.tempo, ts.table.board, ts.claim,
                                       self.policy.tempo)
        return [Outgoing(self._topic(name, "evidence"), ts.evidence, retain=True)]

    def _compare_tables(self, name: str, ts: _TableState,
                        record: BoardRecord | None) -> list[Outgoing]:
        """Law 87: the hands this table saw (scanned, or revealed by play) against every
        other table's hands for the same board; a difference is a fouled board."""
        if record is None or record.deal is None:
            return []
        out: list[Outgoing] = []
        for seat in Seat:
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
        return payload

    def _state(self, name: str, ts: _TableState) -> dict[str, Any]:
        table = ts.table
        board = table.board
        state: dict[str, Any] = {"v": WIRE_VERSION, "table": name}
        if board is None:
            state.update(board=None, phase=str(Phase.WAITING), last=ts.last)
            return state
        auction = board.auction
        contract = auction.contract
        play = board.play
        tricks_ns = tricks_ew = trick_no = 0
        current: list[dict[str, str]] = []
        if play is not None:
            tricks_ns, tricks_ew = play.tricks_won()
            trick_no = play.trick_number
            cur = play.current_trick()
            if cur is not None:
                current = [{"seat": s.name, "card": str(c)} for s, c in cur.cards]
        turn = board.turn
        state.update(
            board=board.number, dealer=str(board.dealer), vul=str(board.vulnerability),
            phase=str(board.phase) if not board.done else "done",
            turn=str(turn) if turn is not None else None,
            auction=[[str(s), str(c)] for s, c in auction.calls],
            contract=str(contract) if contract is not None else None,
            declarer=str(auction.declarer) if auction.declarer is not None else None,
            dummy=str(auction.declarer.partner) if auction.declarer is not None else None,
            tricks={"NS": tricks_ns, "EW": tricks_ew}, trick=trick_no, current=current,
            obligations={str(s): o for s, o in auction.obligations.items()},
            penalty_cards={str(s): sorted(str(c) for c in cs)
                           for s, cs in (play.penalty_cards.items() if play else ()) if cs},
            irregularities=[
                {"id": i.id, "code": str(i.code), "status": str(i.status),
                 "seat": str(i.seat) if i.seat is not None else None}
                for i in ts.alerts.values() if i.status in _ACTIVE
            ],
            last=ts.last,
        )
        if ts.notes:
            state["notes"] = list(ts.notes)
        self._add_pairs(state, name, board.number)
        return state

    def _add_pairs(self, payload: dict[str, Any], table: str, board: int) -> None:
        pairs = self.pairs_at(table, board) if self.pairs_at is not None else None
        if pairs is not None:
            payload["ns"], payload["ew"] = pairs

    def _shown(self, ts: _TableState) -> list[Irregularity]:
        board = ts.table.board
        play_over = board is None or board.complete
        return [i for i in ts.alerts.values() if i.status in _ACTIVE
                and self.policy.shows_at_table(i.code, play_ended=play_over)]

    def _indicator(self, name: str, ts: _TableState) -> dict[str, Any]:
        board = ts.table.board
        shown = self._shown(ts)
        turn = board.turn if board is not None else None
        seats = {
            str(s): {"turn": turn is s, "alert": any(i.seat is s for i in shown)} for s in Seat
        }
        return {
            "v": WIRE_VERSION, "table": name, "board": board.number if board else None,
            "seats": seats, "alerts": [i.id for i in shown],
            "display": display_lines(board, shown),
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
        return result

    def _feed(self, name: str, ts: _TableState, item: FeedItem,
              record: BoardRecord | None) -> dict[str, Any]:
        board = ts.table.board
        payload: dict[str, Any] = {
            "v": WIRE_VERSION, "table": name, "board": board.number if board else None,
            "n": ts.feed_seq, "kind": item.kind,
        }
        if item.kind == "board" and board is not None:
            payload.update(dealer=str(board.dealer), vul=str(board.vulnerability))
        if item.seat is not None:
            payload["seat"] = str(item.seat)
        if item.call is not None:
            payload["call"] = str(item.call)
        if item.card is not None:
            payload["card"] = str(item.card)
            payload["trick"] = item.trick
        if item.kind == "auction":
            payload["calls"] = [[str(s), str(c)] for s, c in item.calls]
        if item.kind == "play":
            payload["cards"] = [[str(s), str(c)] for s, c in item.cards]
        if item.kind == "result":
            if record is not None:
                payload.update(
                    contract=str(record.contract) if record.contract else "Pass",
                    declarer=str(record.declarer) if record.declarer else None,
                    tricks=record.tricks_result, score_ns=record.score_ns)
                # 1.2: the four hands once the board is over (scanned or revealed by play)
                if record.deal is not None and record.deal.is_complete:
                    payload["deal"] = record.deal.to_pbn()
        return payload


def table_id_problem(table: str) -> str | None:
    """Why ``table`` is not a table id (None when it is one)."""
    if TABLE_ID.fullmatch(table) is None:
        return (f"refused: table id {table[:64]!r}{'...' if len(table) > 64 else ''} is not "
                "1-32 letters, digits, '_', '.', '-' starting with a letter or a digit")
    if table in RESERVED_TABLE_IDS:
        return f"refused: table id {table!r} is reserved"
    return None


def _repr(payload: Any) -> str:
    """A mapping payload as text for an excerpt, even one nested too deeply to repr."""
    try:
        return repr(payload)
    except RecursionError:
        return "<nested too deeply>"


def _seat(value: Any) -> Seat | None:
    if value is None:
        return None
    if not isinstance(value, str) or value not in ("N", "E", "S", "W"):
        raise BadMessage(f"seat must be one of N E S W, not {value!r}")
    return Seat[value]


def _opt_int(data: Mapping[str, Any], key: str, low: int, high: int | None = None) -> int | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < low or \
            (high is not None and value > high):
        bound = f"{low}-{high}" if high is not None else f">= {low}"
        raise BadMessage(f"{key} must be an integer {bound}")
    return value


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)


class _EventMsg(msgspec.Struct):
    """The shape of a sensor event, decoded and type-checked by msgspec in one pass."""

    v: int
    src: str
    seq: int
    ts: float
    type: str
    boot: str | None = None
    acked: int | None = None
    zone: str | None = None
    seat: str | None = None
    action: str | None = None
    uid: str = ""
    card: str | None = None
    deck: str | int | None = None
    call: str | None = None
    board: int | None = None
    unknown: bool | None = None
    button: str | None = None


_event_decoder = msgspec.json.Decoder(_EventMsg)
_ZONES = {z.value: z for z in Zone}
_ACTIONS = {a.value: a for a in Action}
_SEATS = {s.name: s for s in Seat}
_CARDS = {str(c): c for c in FULL_DECK}
_CALLS = {str(c): c for c in (
    [Call.parse(f"{lv}{d}") for lv in range(1, 8) for d in ("C", "D", "H", "S", "NT")]
    + [Call.parse("Pass"), Call.parse("X"), Call.parse("XX")])}


def _fast_event(payload: bytes | str | Mapping[str, Any]
                ) -> tuple[str, _Boot, int, TagEvent | ButtonEvent] | None:
    """The common case of a well-formed tag event, without the general parser.

    Anything unusual (a button, a marker, a bad field, a mapping) returns None and takes
    the general path, which gives the precise error message.
    """
    if isinstance(payload, Mapping) or len(payload) > MAX_PAYLOAD:
        return None
    try:
        m = _event_decoder.decode(payload)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if m.v != WIRE_VERSION or not m.src or len(m.src) > MAX_SRC or m.seq < 0 \
            or m.seq > MAX_SEQ or m.type != "tag" or not math.isfinite(m.ts) or m.unknown \
            or (m.boot is not None and not _BOOT.fullmatch(m.boot)) \
            or (m.acked is not None and (m.boot is None or not 0 <= m.acked < m.seq)):
        return None
    zone = _ZONES.get(m.zone)  # type: ignore[arg-type]
    action = _ACTIONS.get(m.action)  # type: ignore[arg-type]
    seat = _SEATS.get(m.seat) if m.seat is not None else None
    if zone is None or action is None or (m.seat is not None and seat is None):
        return None
    uid = m.uid.upper()
    if m.card is not None and m.call is None and m.board is None:
        card = _CARDS.get(m.card)
        if card is None or seat is None:
            return None
        deck = None if m.deck is None else str(m.deck)
        return m.src, _Boot(m.boot, m.acked), m.seq, TagEvent(zone, action, seat, uid, card=card,
                                                              deck=deck, ts=m.ts)
    if m.call is not None and m.card is None and m.board is None:
        call = _CALLS.get(m.call)
        if call is None or seat is None:
            return None
        return m.src, _Boot(m.boot, m.acked), m.seq, TagEvent(zone, action, seat, uid, call=call,
                                                              ts=m.ts)
    if m.board is not None and m.card is None and m.call is None and m.board >= 1:
        if zone in (Zone.TRAY, Zone.BID) and seat is None:
            return None
        return m.src, _Boot(m.boot, m.acked), m.seq, TagEvent(zone, action, seat, uid,
                                                              board=m.board)
    return None
