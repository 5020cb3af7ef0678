"""Tempo: how long each call and card took, and the ones a director would want to look at.

Evidence for Laws 16B (unauthorized information from partner's hesitation) and 73D1
(variations in tempo), never an alert to the players: the engine publishes it on the
director-only ``{root}/{t}/evidence`` topic (docs/wire-contract.md, "Evidence (1.3)"), and
the session's records carry it (docs/tempo.md). A regulation, not a Law: the thresholds are
the policy file's ``[tempo]`` section.

Each call and card's time is the difference between its event's ``ts`` (when the hardware
saw it) and the previous call's or card's ``ts`` at the table. The board's first call has
no time (the hands were being sorted and scanned before it). Neither has the first call or
card after the director was called or ruled (``director_at_table``): its time includes the
wait for the director's ruling, which is not the player's thinking time (Law 73D1).

The rule (docs/tempo.md gives the defaults and why): a call or card is flagged when its time
is beyond BOTH an absolute threshold and a multiple of the same player's median time on the
board for the same kind of action (his other calls, or his other cards; with fewer than
``min_samples`` of them the absolute threshold alone decides). A *pass partner could act on*
(any pass that does not end the auction) has lower thresholds: a hesitation before a pass is
the classic Law 16B case. A pass right after an opponent's *skip bid* is judged on the time
beyond the Stop regulation's mandatory pause (``stop_seconds``), with the pass thresholds and
no relative test (his median does not contain such pauses). Trick 1 (the opening lead and
declarer's plan) has its own absolute threshold. A card of dummy's is declarer's action.

Pure: standard library only, no I/O, no clock.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from controller.laws.cards import ALL_CALLS, FULL_DECK, Call, Card, Seat

__all__ = ["TempoPolicy", "TempoEntry", "TempoFlag", "TempoLog", "TempoPolicyError",
           "DEFAULT_TEMPO", "is_skip_bid", "tempo_flags"]


class TempoPolicyError(ValueError):
    """A ``[tempo]`` section with an unknown key or a value that is not a threshold."""


@dataclass(frozen=True)
class TempoPolicy:
    """Thresholds in seconds (``*_seconds``) and multiples of the player's median
    (``*_factor``); docs/tempo.md justifies the defaults."""

    enabled: bool = True
    call_seconds: float = 10.0
    call_factor: float = 3.0
    pass_seconds: float = 6.0
    pass_factor: float = 2.0
    stop_seconds: float = 10.0
    card_seconds: float = 15.0
    card_factor: float = 3.0
    first_trick_seconds: float = 45.0
    min_samples: int = 2

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> TempoPolicy:
        """From the policy file's ``[tempo]`` table; keys not given keep their default."""
        known = {f.name: f for f in fields(cls)}
        unknown = set(data) - set(known)
        if unknown:
            raise TempoPolicyError(f"unknown keys in [tempo]: {sorted(unknown)} "
                                   f"(known: {', '.join(known)})")
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key == "enabled":
                if not isinstance(value, bool):
                    raise TempoPolicyError("[tempo] enabled must be true or false")
                values[key] = value
            elif key == "min_samples":
                if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= 52:
                    raise TempoPolicyError("[tempo] min_samples must be an integer 0-52")
                values[key] = value
            else:
                if not isinstance(value, int | float) or isinstance(value, bool) \
                        or not 0 <= value <= 3600 or value != value:
                    raise TempoPolicyError(f"[tempo] {key} must be a number of 0-3600, "
                                           f"not {value!r}")
                if key.endswith("_factor") and value < 1:
                    raise TempoPolicyError(f"[tempo] {key} must be at least 1 (a multiple of "
                                           "the player's usual time)")
                values[key] = float(value)
        return cls(**values)

    def to_mapping(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @property
    def floor(self) -> float:
        """The lowest absolute threshold: no call or card this fast or faster can be flagged
        itself (every limit is at least an absolute threshold)."""
        return min(self.pass_seconds, self.call_seconds, self.card_seconds)


DEFAULT_TEMPO = TempoPolicy()


@dataclass(frozen=True, slots=True)
class TempoEntry:
    """One call or card as made at the table, with its time (None: the board's first call,
    or an event without a usable ``ts``)."""

    seat: Seat
    call: Call | None
    card: Card | None
    trick: int | None
    ts: float | None
    seconds: float | None

    @property
    def text(self) -> str:
        return str(self.call if self.call is not None else self.card)


@dataclass(frozen=True, slots=True)
class TempoFlag:
    """A call or card slower than the rule allows: evidence for the director.

    ``kind``: ``slow_call``, ``slow_pass`` (a pass partner could act on),
    ``slow_pass_after_skip`` (a pass after an opponent's skip bid, beyond the Stop pause)
    or ``slow_card``. ``usual``: the player's median on the board for the same kind of
    action (None when too few to compare). ``limit``: the time beyond which it was flagged.
    """

    kind: str
    seat: Seat
    text: str
    index: int
    trick: int | None
    seconds: float
    usual: float | None
    limit: float
    law: str

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "seat": self.seat.name, "law": self.law,
                               "seconds": round(self.seconds, 2), "limit": round(self.limit, 2),
                               "usual": None if self.usual is None else round(self.usual, 2)}
        if self.trick is None:
            out.update(call=self.text, index=self.index)
        else:
            out.update(card=self.text, trick=self.trick, index=self.index)
        return out

    def describe(self) -> str:
        """One line for the records (PBN commentary, LIN notes)."""
        usual = "" if self.usual is None else f", usual {self.usual:.1f} s"
        where = f"call {self.index + 1}" if self.trick is None else f"trick {self.trick}"
        return (f"{self.seat.name} {self.text} ({where}) {self.seconds:.1f} s{usual}: "
                f"{self.kind.replace('_', ' ')}, Law {self.law}")


def is_skip_bid(call: Call, previous: Call | None) -> bool:
    """A bid at a higher level than the lowest sufficient one in its denomination
    (``previous``: the last bid of the auction, None before the first); an opening bid
    above the one level is one too (the Stop regulations' rule)."""
    if call.bid is None:
        return False
    if previous is None or previous.bid is None:
        return call.bid.level > 1
    last = previous.bid
    lowest = last.level if call.bid.denomination > last.denomination else last.level + 1
    return call.bid.level > lowest


class TempoLog:
    """The calls and cards of one board, as made at the table, with their times.

    Fed by the engine from the ``call``/``card`` feed items and the event's ``ts``; a
    corrected auction or play (``auction``/``play`` feed items) keeps the entries that still
    stand, in order, so a withdrawn call or card and its time leave the log.

    A call or card is fed after nearly every event and the evidence is built far less often
    (docs/tempo.md): adding one only appends its raw values; the entries, the payload's rows
    and the flags are made from them when asked.
    """

    def __init__(self, board: int | None = None) -> None:
        self.reset(board)

    def reset(self, board: int | None) -> None:
        """A new board: no calls, no cards, no previous time."""
        self.board = board
        # (seat, call, ts, seconds) per call; (seat, card, trick, ts, seconds) per card
        self._calls: list[_RawCall] = []
        self._cards: list[_RawCard] = []
        self._last_ts: float | None = None
        self._waited = False     # the director was called or ruled since the last action
        # the payload's rows of the first len(rows) calls and cards: entries are only
        # appended or, on a correction or a new board, replaced with the rows cleared, so a
        # row once made stays the row of its entry
        self._call_rows: list[list[Any]] = []
        self._card_rows: list[list[Any]] = []

    @property
    def calls(self) -> list[TempoEntry]:
        return [TempoEntry(seat, call, None, None, ts, seconds)
                for seat, call, ts, seconds in self._calls]

    @property
    def cards(self) -> list[TempoEntry]:
        return [TempoEntry(seat, None, card, trick, ts, seconds)
                for seat, card, trick, ts, seconds in self._cards]

    def director_at_table(self) -> None:
        """The director was called or ruled: the next call or card is not timed (the wait
        for the ruling is in it, and the rulings' clock is not the readers')."""
        self._waited = True

    def _seconds(self, ts: float | None) -> float | None:
        if ts is None:
            return None
        last, self._last_ts = self._last_ts, ts
        if self._waited:
            self._waited = False
            return None
        if last is None:
            return None
        # two readers' clocks may disagree by a little: never a negative time (as
        # ``max(0.0, ...)``, without the call)
        seconds = ts - last
        return seconds if seconds > 0.0 else 0.0

    def add_call(self, seat: Seat, call: Call, ts: float | None) -> float | None:
        """Log a call; its time (None: not timed)."""
        seconds = self._seconds(ts)
        self._calls.append((seat, call, ts, seconds))
        return seconds

    def add_card(self, seat: Seat, card: Card, trick: int | None,
                 ts: float | None) -> float | None:
        """Log a card; its time (None: not timed)."""
        seconds = self._seconds(ts)
        self._cards.append((seat, card, trick or 1, ts, seconds))
        return seconds

    def restate_calls(self, calls: Sequence[tuple[Seat, Call]]) -> None:
        self._calls = _keep(self._calls, calls, lambda seat, call: (seat, call, None, None))
        self._call_rows = []
        self._restart()

    def restate_cards(self, cards: Sequence[tuple[Seat, Card]]) -> None:
        self._cards = _keep(self._cards, cards,
                            lambda seat, card: (seat, card, 1, None, None))
        self._card_rows = []
        self._restart()

    def _restart(self) -> None:
        """After a correction the next time runs from the last call or card that stands
        (a struck misread is not a call the next player waited for)."""
        times = [c[2] for c in self._calls if c[2] is not None] + \
            [c[3] for c in self._cards if c[3] is not None]
        self._last_ts = max(times) if times else None

    def flags(self, policy: TempoPolicy, declarer: Seat | None,
              auction_over: bool) -> list[TempoFlag]:
        return _flags(self._calls, self._cards, policy, declarer, auction_over)

    def to_wire(self, policy: TempoPolicy, declarer: Seat | None,
                auction_over: bool) -> dict[str, Any]:
        """``calls`` ``[seat, call, seconds]``, ``cards`` ``[seat, card, trick, seconds]``,
        ``flags``: the evidence payload's ``tempo`` field."""
        call_rows, card_rows = self._call_rows, self._card_rows
        if len(call_rows) < len(self._calls):
            call_rows += [[_SEAT_NAMES[seat], _CALL_TEXTS.get(call) or str(call),
                           _wire_seconds(seconds)]
                          for seat, call, _, seconds in self._calls[len(call_rows):]]
        if len(card_rows) < len(self._cards):
            card_rows += [[_SEAT_NAMES[seat], _CARD_TEXTS.get(id(card)) or str(card), trick,
                           _wire_seconds(seconds)]
                          for seat, card, trick, _, seconds in self._cards[len(card_rows):]]
        return {
            "calls": list(call_rows),
            "cards": list(card_rows),
            "flags": [f.to_wire() for f in self.flags(policy, declarer, auction_over)],
        }


_RawCall = tuple[Seat, Call, float | None, float | None]
_RawCard = tuple[Seat, Card, int | None, float | None, float | None]

#: the texts of seats, calls and cards, looked up (``Seat.name`` and ``str()`` are Python
#: properties and methods: a row is made for every call and card)
_SEAT_NAMES = {s: s.name for s in Seat}
_CALL_TEXTS = {c: str(c) for c in ALL_CALLS}
#: (cards by identity: ``Card``'s hash is a Python method, ``id`` is not. The cards a table
#: reads are these objects, as ``Card.parse`` gives them; FULL_DECK keeps them alive, so no
#: other object can have one of these ids, and any other card falls back to ``str``.)
_CARD_TEXTS = {id(c): str(c) for c in FULL_DECK}


def _wire_seconds(seconds: float | None) -> float | None:
    """A time as the payload gives it: rounded to 1/100 s. (A whole number of seconds is
    its own rounding, without ``round``'s decimal conversion; an int stays an int.)"""
    if seconds is None:
        return None
    if type(seconds) is float and seconds.is_integer():
        return seconds
    return round(seconds, 2)

_Raw = TypeVar("_Raw", _RawCall, _RawCard)
_Item = TypeVar("_Item", Call, Card)


def _keep(entries: list[_Raw], standing: Sequence[tuple[Seat, _Item]],
          untimed: Callable[[Seat, _Item], _Raw]) -> list[_Raw]:
    """The entries matching ``standing`` in order (a standing item with no entry is kept
    without a time: ``untimed``)."""
    out: list[_Raw] = []
    pool = list(entries)
    for seat, item in standing:
        for i, e in enumerate(pool):
            if e[0] is seat and e[1] == item:
                out.append(e)
                del pool[i]
                break
        else:
            out.append(untimed(seat, item))
    return out


def _median_of_others(times: list[float], min_samples: int) -> float | None:
    """The median of the player's other times (``times``) for the same kind of action;
    None when too few to compare."""
    if not times or len(times) < min_samples:
        return None
    return statistics.median(times)


def _beyond(seconds: float, absolute: float, factor: float, usual: float | None) -> float | None:
    """The limit crossed (None: not crossed): over the absolute AND the relative threshold."""
    limit = absolute if usual is None else max(absolute, factor * usual)
    return limit if seconds > limit else None


def tempo_flags(calls: Sequence[TempoEntry], cards: Sequence[TempoEntry], policy: TempoPolicy,
                declarer: Seat | None, auction_over: bool) -> list[TempoFlag]:
    """Every call and card the rule flags, in the order they were made."""
    raw_calls: list[_RawCall] = []
    for e in calls:
        assert e.call is not None
        raw_calls.append((e.seat, e.call, e.ts, e.seconds))
    raw_cards: list[_RawCard] = []
    for e in cards:
        assert e.card is not None
        raw_cards.append((e.seat, e.card, e.trick, e.ts, e.seconds))
    return _flags(raw_calls, raw_cards, policy, declarer, auction_over)


def _flags(calls: Sequence[_RawCall], cards: Sequence[_RawCard], policy: TempoPolicy,
           declarer: Seat | None, auction_over: bool) -> list[TempoFlag]:
    if not policy.enabled:
        return []
    out: list[TempoFlag] = []
    # Every limit is at least its absolute threshold (``_beyond`` takes the larger; after a
    # skip bid, the Stop pause plus the pass threshold): a time within the absolute one is
    # never flagged, so the median and the skip-bid test are only worked out past it.
    pass_floor = min(policy.pass_seconds, policy.stop_seconds + policy.pass_seconds)
    last = len(calls) - 1
    for i, (seat, call, _, seconds) in enumerate(calls):
        if seconds is None:
            continue
        # the pass ending the auction leaves partner nothing to act on
        partner_pass = call.is_pass and not (auction_over and i == last)
        if seconds <= (pass_floor if partner_pass else policy.call_seconds):
            continue
        usual = _median_of_others([t for j, (s, _, _, t) in enumerate(calls)
                                   if s is seat and t is not None and j != i],
                                  policy.min_samples)
        if partner_pass and i > 0:
            prev_seat, prev = calls[i - 1][0], calls[i - 1][1]
            # an opponent's skip bid just before this call (the Stop regulation's case)
            if prev.is_bid and prev_seat.is_opponent_of(seat) and \
                    is_skip_bid(prev, _bid_before(calls, i - 1)):
                limit = policy.stop_seconds + policy.pass_seconds
                if seconds > limit:
                    out.append(TempoFlag("slow_pass_after_skip", seat, str(call), i, None,
                                         seconds, usual, limit, "16B"))
                continue
        if partner_pass:
            kind, hit = "slow_pass", _beyond(seconds, policy.pass_seconds,
                                             policy.pass_factor, usual)
        else:
            kind, hit = "slow_call", _beyond(seconds, policy.call_seconds,
                                             policy.call_factor, usual)
        if hit is not None:
            out.append(TempoFlag(kind, seat, str(call), i, None, seconds, usual, hit, "16B"))
    # a card of dummy's is declarer's action (no dummy without a declarer)
    dummy = declarer.partner if declarer is not None else None
    for i, (seat, card, trick, _, seconds) in enumerate(cards):
        if seconds is None:
            continue
        absolute = policy.first_trick_seconds if trick == 1 else policy.card_seconds
        if seconds <= absolute:
            continue
        player = declarer if seat is dummy else seat
        usual = _median_of_others([t for j, (s, _, _, _, t) in enumerate(cards)
                                   if (declarer if s is dummy else s) is player
                                   and t is not None and j != i], policy.min_samples)
        hit = _beyond(seconds, absolute, policy.card_factor, usual)
        if hit is not None:
            out.append(TempoFlag("slow_card", seat, str(card), i, trick, seconds, usual,
                                 hit, "73D1"))
    return out


def _bid_before(calls: Sequence[_RawCall], index: int) -> Call | None:
    for _, call, _, _ in reversed(calls[:index]):
        if call.is_bid:
            return call
    return None
