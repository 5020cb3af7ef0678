"""What the engine publishes of a table: the payloads of its ``state``, ``indicator``,
``alert``, ``result`` and ``feed`` messages (``Payloads``), built from the table's
``TableState`` and the parts of them kept there between events, so that an input that
changes one thing rebuilds little (the texts of the core's values are looked up, made
once). Payloads are not changed once built: a part kept is the same object in the next
payload, and a ``state`` that changed only its ``last`` is the last one's JSON with the
new ``last`` put in (``restated``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from controller import WIRE_VERSION
from controller.engine.intake import CALLS
from controller.engine.outgoing import Outgoing, encode
from controller.engine.tables import StateParts, TableState, no_tricks
from controller.indicators.display_text import DisplayRenderer, display_key
from controller.indicators.policy import IndicatorPolicy
from controller.laws.cards import FULL_DECK, Call, Seat, Vulnerability
from controller.laws.irregularities import Irregularity, Status
from controller.laws.messages import alert_texts
from controller.laws.record import BoardRecord
from controller.laws.table import FeedItem, Phase

__all__ = ["Payloads", "restated"]

#: Statuses of an irregularity still to be dealt with (shown, listed in ``state``).
_ACTIVE = frozenset({Status.OPEN, Status.ESTABLISHED})
_UNKNOWN: Any = object()
_WAITING = str(Phase.WAITING)

# the texts of core values, looked up rather than built by __str__ on every output
#: by seat (a list: indexing by an IntEnum is cheaper than hashing it)
_SEAT_TEXT = [str(s) for s in sorted(Seat)]
#: by ``Card.index``
_CARD_TEXT = [str(c) for c in sorted(FULL_DECK, key=lambda c: c.index)]
_SEAT_ORDER = tuple(Seat)
_CALL_TEXTS = {c: text for text, c in CALLS.items()}
_VUL_TEXT = {v: str(v) for v in Vulnerability}


def _call_text(call: Call) -> str:
    text = _CALL_TEXTS.get(call)
    return text if text is not None else str(call)


def _jsonable(value: Any) -> Any:
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return str(value)


def _auction_texts(ts: TableState, calls: tuple[tuple[Seat, Call], ...]
                   ) -> tuple[tuple[str, str], ...]:
    if calls is not ts.auction_calls:
        ts.auction_calls = calls
        ts.auction_texts = tuple((_SEAT_TEXT[s], _call_text(c)) for s, c in calls)
    return ts.auction_texts


class Payloads:
    """Builds the payloads of every table's messages, as the engine's settings say: the
    display's ``languages``, the ``policy`` of what an indicator shows, the session's
    movement (``pairs_at``) and the ``session_id`` stamped on them."""

    def __init__(self, languages: tuple[str, ...], policy: IndicatorPolicy,
                 pairs_at: Callable[[str, int], tuple[int, int] | None] | None) -> None:
        self.languages = languages
        self.policy = policy
        self.pairs_at = pairs_at
        #: the session the controller runs (``Engine.session_id``)
        self.session_id: str | None = None

    # -- state ----------------------------------------------------------------------------
    def state_message(self, topic: str, name: str, ts: TableState, turn: Any, won:
                      tuple[int, int] | None) -> Outgoing:
        """The table's ``state`` (kept as ``ts.state``) as the message on ``topic``, kept
        as the last one sent (what an unchanged input's state is made from: ``restated``).
        ``turn``, ``won``: as for ``state``."""
        state = ts.state = self.state(name, ts, turn, won)
        sent = Outgoing(topic, state, True)
        parts = ts.state_parts
        if parts is not None:
            parts.sent, parts.sent_split = sent, None
        return sent

    def state(self, name: str, ts: TableState, turn: Any = _UNKNOWN,
              won: tuple[int, int] | None = None) -> dict[str, Any]:
        """The table's ``state``. Its parts that one call or card leaves alone (the board's
        texts, the auction, the contract, the tricks, the trick in progress) are kept in
        ``ts.state_parts`` and reused, the same objects, while their inputs are the same
        (payloads are not changed once built: ``Outgoing.data``); a fresh ``StateParts``
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
            parts = ts.state_parts = StateParts(board, _SEAT_TEXT[board.dealer],
                                                _VUL_TEXT[board.vulnerability])
        auction = board.auction
        calls = auction.calls
        if calls is not parts.calls:
            parts.calls = calls
            parts.auction = [[s, c] for s, c in _auction_texts(ts, calls)]
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
                parts.won, parts.tricks, parts.cards, parts.current = (0, 0), no_tricks(), (), []
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

    def _add_pairs(self, payload: dict[str, Any], table: str, board: int) -> None:
        pairs = self.pairs_at(table, board) if self.pairs_at is not None else None
        if pairs is not None:
            payload["ns"], payload["ew"] = pairs

    # -- indicator ------------------------------------------------------------------------
    def shown(self, ts: TableState) -> list[Irregularity]:
        """The table's alerts that its indicator shows (``IndicatorPolicy``)."""
        board = ts.table.board
        play_over = board is None or board.complete
        return [i for i in ts.alerts.values() if i.status in _ACTIVE
                and self.policy.shows_at_table(i.code, play_ended=play_over)]

    def indicator_key(self, ts: TableState, turn: Any = _UNKNOWN,
                      won: tuple[int, int] | None = None) -> tuple[Any, ...]:
        """Everything the indicator shows: the board, whose turn it is, the alerts shown
        (their ids and seats) and the display's key. ``turn``, ``won``: as for ``state``."""
        board = ts.table.board
        if ts.alerts:
            shown = self.shown(ts)
            alerts = tuple([(i.id, i.seat) for i in shown])
        else:  # no alert this board (most boards): nothing to look through
            shown, alerts = [], ()
        if board is None:
            return None, None, alerts, display_key(None, shown)
        if turn is _UNKNOWN:
            turn = board.turn
        texts = _auction_texts(ts, board.auction.calls)
        if texts is not ts.last_calls_of:  # the display's last four calls, per auction
            ts.last_calls_of, ts.last_calls = texts, tuple([c for _, c in texts[-4:]])
        return board.number, turn, alerts, display_key(board, shown, turn, ts.last_calls, won)

    def indicator(self, name: str, ts: TableState, key: tuple[Any, ...]) -> dict[str, Any]:
        """The indicator of ``key`` (``indicator_key``), its display rows kept in ``ts``."""
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
        if dkey[0] is not None and dkey[1][1][:1] == ("pass_hands",):
            # the shoe-style read: the turn lights of the seats still to pass their hands
            reading: Any = dkey[1][1][1]
            for seat in _SEAT_ORDER:
                seats[_SEAT_TEXT[seat]]["turn"] = seat in reading
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

    # -- alert, result, feed --------------------------------------------------------------
    def alert(self, table: str, board: int | None, item: Irregularity) -> dict[str, Any]:
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

    def result(self, name: str, record: BoardRecord | None) -> dict[str, Any]:
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

    def feed(self, name: str, ts: TableState, item: FeedItem,
             record: BoardRecord | None) -> dict[str, Any]:
        """The feed item ``item``, numbered ``ts.feed_seq``."""
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


def restated(topic: str, ts: TableState, state: dict[str, Any]) -> Outgoing:
    """The message of an input that changed nothing shown: ``state``, the last one sent,
    with the table's new ``last`` (kept as ``ts.state``). Its JSON is the last one's with
    the new ``last`` put in: only when the last message sent is that state (its payload,
    by identity: payloads are not changed once built), its JSON was made (replay and the
    daemon ask for every message's before the next input; a caller that never does pays
    nothing here), and its bytes were cut where the encoding puts ``last``."""
    last = ts.last
    new = ts.state = {**state, "last": last}
    parts = ts.state_parts
    if parts is None:
        return Outgoing(topic, new, True)
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
    return out


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
