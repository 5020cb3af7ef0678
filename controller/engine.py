"""The controller's engine: wire-contract messages in, wire-contract messages out.

``Engine.handle(topic, payload)`` is the one path every consumer uses: the live daemon
(``controller/daemon.py``), ``bridge-table replay`` and the benchmarks. It validates the
payload, drops duplicates (same ``src`` and ``seq``, as QoS 1 redelivers), applies the event
or ruling to the table's ``Table`` and returns what must be published. It does no I/O and
reads no clock: the same inputs give the same outputs, which is what lets the daemon rebuild
every table from its journal.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from . import WIRE_VERSION
from .display_text import display_lines
from .laws.cards import FULL_DECK, Call, Card, ParseError, Rules, Seat, Suit
from .laws.dealcheck import FouledBoardDetector
from .laws.events import MARKERS, Action, Button, ButtonEvent, TagEvent, Zone
from .laws.irregularities import Code, Irregularity, Status
from .laws.messages import alert_texts
from .laws.record import BoardRecord, DealInfo
from .laws.rulings import Ruling, RulingKind
from .laws.table import FeedItem, Phase, Table, Update
from .policy import IndicatorPolicy

__all__ = ["Outgoing", "Engine", "BadMessage", "encode", "MAX_PAYLOAD"]

#: Larger payloads are refused unread (a sensor event is ~200 bytes).
MAX_PAYLOAD = 64 * 1024

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


@dataclass
class _SeqTracker:
    """Per ``src``: applied once by (src, seq); late (lower) seqs still applied once."""

    high: int = -1
    recent: set[int] = field(default_factory=set)

    def seen(self, seq: int) -> bool:
        if seq > self.high:
            return False
        return seq in self.recent

    def add(self, seq: int) -> None:
        self.recent.add(seq)
        if seq > self.high:
            self.high = seq
        if len(self.recent) > 4096:  # keep the window bounded; seqs only grow
            floor = self.high - 2048
            self.recent = {s for s in self.recent if s > floor}

    def too_old(self, seq: int) -> bool:
        return seq <= self.high - 2048


@dataclass
class _TableState:
    table: Table
    seqs: dict[str, _SeqTracker] = field(default_factory=dict)
    last: dict[str, Any] | None = None
    feed_seq: int = 0
    indicator: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    alerts: dict[int, Irregularity] = field(default_factory=dict)


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
    ) -> None:
        """``kinds`` limits the outputs built (``replay --topics``): every input is still
        applied, and ``snapshot``/``retained`` still give the full current state."""
        self.root = root
        self.deals: Mapping[int, DealInfo] = deals or {}
        self.rules = rules
        self.policy = policy or IndicatorPolicy()
        self.schedule = schedule or {}
        self.fouled = FouledBoardDetector()
        every = frozenset({"state", "alert", "indicator", "result", "feed", "error"})
        self.kinds = every if kinds is None else frozenset(kinds) & every
        self._tables: dict[str, _TableState] = {}
        self.stats: dict[str, int] = {
            "events": 0, "rulings": 0, "duplicates": 0, "malformed": 0,
            "ignored_topics": 0, "internal_errors": 0,
        }

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
        return out

    def handle(self, topic: str, payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """Apply one message from ``{root}/{t}/event`` or ``{root}/{t}/ruling``."""
        parts = topic.split("/")
        if len(parts) != 3 or parts[0] != self.root or parts[2] not in ("event", "ruling") \
                or not parts[1] or "+" in parts[1] or "#" in parts[1]:
            self.stats["ignored_topics"] += 1
            return []
        table, kind = parts[1], parts[2]
        try:
            fast = _fast_event(payload) if kind == "event" else None
            if fast is not None:
                src, seq, inp = fast
            else:
                data = self._decode(payload)
                if kind == "event":
                    src, seq, inp = self._parse_event(data)
                else:
                    src, seq, inp = self._parse_ruling(data)
        except BadMessage as exc:
            self.stats["malformed"] += 1
            return [self._error(table, kind, str(exc), payload)] if "error" in self.kinds \
                else []
        ts = self._table(table)
        tracker = ts.seqs.setdefault(src, _SeqTracker())
        if tracker.seen(seq) or tracker.too_old(seq):
            self.stats["duplicates"] += 1
            return []
        tracker.add(seq)
        self.stats["events" if kind == "event" else "rulings"] += 1
        try:
            update = ts.table.apply(inp)
            ts.last = {"src": src, "seq": seq}
            return self._publish(table, ts, update)
        except Exception as exc:  # a defect, never a player's irregularity: keep serving
            self.stats["internal_errors"] += 1
            try:
                update = ts.table.drop_last_input()
                out = self._publish(table, ts, update)
            except Exception:  # the board cannot even be rebuilt: report, state unchanged
                out = []
            return [self._error(table, kind, f"internal error, input not applied: "
                                f"{type(exc).__name__}: {exc}", payload), *out]

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
        if not isinstance(data, dict):
            raise BadMessage("payload is not a JSON object")
        return data

    def _common(self, data: Mapping[str, Any], known: frozenset[str]) -> tuple[str, int]:
        v = data.get("v")
        if v != WIRE_VERSION or isinstance(v, bool):
            raise BadMessage(f"unsupported contract version v={v!r} (this controller speaks "
                             f"v={WIRE_VERSION})")
        src, seq, ts = data.get("src"), data.get("seq"), data.get("ts")
        if not isinstance(src, str) or not src:
            raise BadMessage("src must be a non-empty string")
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            raise BadMessage("seq must be a non-negative integer")
        if not isinstance(ts, int | float) or isinstance(ts, bool) or not math.isfinite(ts):
            raise BadMessage("ts must be a number of seconds since the epoch")
        return src, seq  # unknown fields are ignored: a newer bridge may add some

    _EVENT_FIELDS = frozenset({"v", "src", "seq", "ts", "type", "zone", "seat", "action", "uid",
                               "card", "deck", "call", "board", "unknown", "button"})
    _RULING_FIELDS = frozenset({"v", "src", "seq", "ts", "ruling", "alert", "tricks", "seat",
                                "card", "call", "suit", "option", "board", "note"})

    def _parse_event(self, data: Mapping[str, Any]) -> tuple[str, int, TagEvent | ButtonEvent]:
        src, seq = self._common(data, self._EVENT_FIELDS)
        kind = data.get("type")
        seat = _seat(data.get("seat"))
        if kind == "button":
            try:
                button = Button(data.get("button"))
            except ValueError:
                raise BadMessage(f"unknown button {data.get('button')!r}") from None
            return src, seq, ButtonEvent(button, seat)
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
            return src, seq, TagEvent(zone, action, seat, uid.upper(), unknown=True)
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
            return src, seq, TagEvent(zone, action, seat, uid.upper(), card=card,
                                      deck=None if deck is None else str(deck))
        if call_text is not None:
            if not isinstance(call_text, str):
                raise BadMessage("call must be a string like '1NT'")
            if call_text.upper() in MARKERS:
                return src, seq, TagEvent(zone, action, seat, uid.upper(),
                                          marker=call_text.upper())
            try:
                call = Call.parse(call_text)
            except ParseError as exc:
                raise BadMessage(str(exc)) from None
            return src, seq, TagEvent(zone, action, seat, uid.upper(), call=call)
        if not isinstance(board, int) or isinstance(board, bool) or board < 1:
            raise BadMessage("board must be a positive integer")
        return src, seq, TagEvent(zone, action, seat, uid.upper(), board=board)

    def _parse_ruling(self, data: Mapping[str, Any]) -> tuple[str, int, Ruling]:
        src, seq = self._common(data, self._RULING_FIELDS)
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
        option = data.get("option")
        return src, seq, Ruling(kind, alert=alert, tricks=tricks, seat=_seat(data.get("seat")),
                                card=card, call=call, suit=suit,
                                option=option if isinstance(option, str) else None, board=board)

    # -- building outputs -----------------------------------------------------------------
    def _topic(self, table: str, kind: str) -> str:
        return f"{self.root}/{table}/{kind}"

    def _table(self, name: str) -> _TableState:
        ts = self._tables.get(name)
        if ts is None:
            ts = _TableState(Table(name, rules=self.rules, deals=self.deals,
                                   schedule=self.schedule.get(name),
                                   feed="feed" in self.kinds))
            self._tables[name] = ts
        return ts

    def _error(self, table: str, kind: str, message: str,
               payload: bytes | str | Mapping[str, Any]) -> Outgoing:
        raw = payload if isinstance(payload, str) else (
            payload.decode("utf-8", "replace") if isinstance(payload, bytes) else repr(payload))
        return Outgoing(self._topic(table, "error"), {
            "v": WIRE_VERSION, "table": table, "input": kind, "error": message,
            "excerpt": raw[:200],
        }, retain=False)

    def _publish(self, name: str, ts: _TableState, update: Update) -> list[Outgoing]:
        out: list[Outgoing] = []
        kinds = self.kinds
        table = ts.table
        board = table.board
        board_no = board.number if board else None
        if update.board_started:
            ts.alerts = {}
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
        return state

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
                ) -> tuple[str, int, TagEvent | ButtonEvent] | None:
    """The common case of a well-formed tag event, without the general parser.

    Anything unusual (a button, a marker, a bad field, a mapping) returns None and takes
    the general path, which gives the precise error message.
    """
    if isinstance(payload, Mapping) or len(payload) > MAX_PAYLOAD:
        return None
    try:
        m = _event_decoder.decode(payload)
    except (msgspec.DecodeError, UnicodeDecodeError):
        return None
    if m.v != WIRE_VERSION or not m.src or m.seq < 0 or m.type != "tag" \
            or not math.isfinite(m.ts) or m.unknown:
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
        return m.src, m.seq, TagEvent(zone, action, seat, uid, card=card, deck=deck)
    if m.call is not None and m.card is None and m.board is None:
        call = _CALLS.get(m.call)
        if call is None or seat is None:
            return None
        return m.src, m.seq, TagEvent(zone, action, seat, uid, call=call)
    if m.board is not None and m.card is None and m.call is None and m.board >= 1:
        if zone in (Zone.TRAY, Zone.BID) and seat is None:
            return None
        return m.src, m.seq, TagEvent(zone, action, seat, uid, board=m.board)
    return None
