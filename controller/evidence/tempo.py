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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

from controller.laws.cards import FULL_DECK, Call, Card, Seat

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
    """

    def __init__(self, board: int | None = None) -> None:
        self.reset(board)

    def reset(self, board: int | None) -> None:
        """A new board: no calls, no cards, no previous time."""
        self.board = board
        self.calls: list[TempoEntry] = []
        self.cards: list[TempoEntry] = []
        self._last_ts: float | None = None
        self._waited = False     # the director was called or ruled since the last action
        # the payload's rows, built once per call or card (the evidence is published often)
        self._call_rows: list[list[Any]] = []
        self._card_rows: list[list[Any]] = []

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
        # two readers' clocks may disagree by a little: never a negative time
        return None if last is None else max(0.0, ts - last)

    def add_call(self, seat: Seat, call: Call, ts: float | None) -> None:
        entry = TempoEntry(seat, call, None, None, ts, self._seconds(ts))
        self.calls.append(entry)
        self._call_rows.append(_call_row(entry))

    def add_card(self, seat: Seat, card: Card, trick: int | None, ts: float | None) -> None:
        entry = TempoEntry(seat, None, card, trick or 1, ts, self._seconds(ts))
        self.cards.append(entry)
        self._card_rows.append(_card_row(entry))

    def restate_calls(self, calls: Sequence[tuple[Seat, Call]]) -> None:
        self.calls = _keep(self.calls, [(s, c) for s, c in calls])
        self._call_rows = [_call_row(e) for e in self.calls]
        self._restart()

    def restate_cards(self, cards: Sequence[tuple[Seat, Card]]) -> None:
        self.cards = _keep(self.cards, [(s, c) for s, c in cards])
        self._card_rows = [_card_row(e) for e in self.cards]
        self._restart()

    def _restart(self) -> None:
        """After a correction the next time runs from the last call or card that stands
        (a struck misread is not a call the next player waited for)."""
        times = [e.ts for e in (*self.calls, *self.cards) if e.ts is not None]
        self._last_ts = max(times) if times else None

    def flags(self, policy: TempoPolicy, declarer: Seat | None,
              auction_over: bool) -> list[TempoFlag]:
        return tempo_flags(self.calls, self.cards, policy, declarer, auction_over)

    def to_wire(self, policy: TempoPolicy, declarer: Seat | None,
                auction_over: bool) -> dict[str, Any]:
        """``calls`` ``[seat, call, seconds]``, ``cards`` ``[seat, card, trick, seconds]``,
        ``flags``: the evidence payload's ``tempo`` field."""
        return {
            "calls": list(self._call_rows),
            "cards": list(self._card_rows),
            "flags": [f.to_wire() for f in self.flags(policy, declarer, auction_over)],
        }


#: the texts of seats and cards, looked up (``Seat.name`` and ``str(card)`` are Python
#: properties and methods: a row is made for every call and card)
_SEAT_NAMES = {s: s.name for s in Seat}
_CARD_TEXTS = {c: str(c) for c in FULL_DECK}


def _call_row(e: TempoEntry) -> list[Any]:
    return [_SEAT_NAMES[e.seat], e.text, _round(e.seconds)]


def _card_row(e: TempoEntry) -> list[Any]:
    card = e.card
    text = _CARD_TEXTS.get(card) if card is not None else None
    return [_SEAT_NAMES[e.seat], text if text is not None else e.text, e.trick,
            _round(e.seconds)]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _keep(entries: list[TempoEntry], standing: list[tuple[Seat, Any]]) -> list[TempoEntry]:
    """The entries matching ``standing`` in order (a standing item with no entry is kept
    without a time)."""
    out: list[TempoEntry] = []
    pool = list(entries)
    for seat, item in standing:
        for i, e in enumerate(pool):
            if e.seat is seat and (e.call == item or e.card == item):
                out.append(e)
                del pool[i]
                break
        else:
            is_call = isinstance(item, Call)
            out.append(TempoEntry(seat, item if is_call else None, None if is_call else item,
                                  None if is_call else 1, None, None))
    return out


def _median_of_others(times: Sequence[tuple[int, float]], index: int,
                      min_samples: int) -> float | None:
    others = [t for i, t in times if i != index]
    if not others or len(others) < min_samples:
        return None
    return statistics.median(others)


def _beyond(seconds: float, absolute: float, factor: float, usual: float | None) -> float | None:
    """The limit crossed (None: not crossed): over the absolute AND the relative threshold."""
    limit = absolute if usual is None else max(absolute, factor * usual)
    return limit if seconds > limit else None


def tempo_flags(calls: Sequence[TempoEntry], cards: Sequence[TempoEntry], policy: TempoPolicy,
                declarer: Seat | None, auction_over: bool) -> list[TempoFlag]:
    """Every call and card the rule flags, in the order they were made."""
    if not policy.enabled:
        return []
    out: list[TempoFlag] = []
    by_seat: dict[Seat, list[tuple[int, float]]] = {}
    for i, e in enumerate(calls):
        if e.seconds is not None:
            by_seat.setdefault(e.seat, []).append((i, e.seconds))
    for i, e in enumerate(calls):
        call = e.call
        assert call is not None
        skip_before = False
        if i > 0:
            prev = calls[i - 1].call
            assert prev is not None
            # an opponent's skip bid just before this call (the Stop regulation's case)
            skip_before = prev.is_bid and calls[i - 1].seat.is_opponent_of(e.seat) and \
                is_skip_bid(prev, _bid_before(calls, i - 1))
        if e.seconds is None:
            continue
        # the pass ending the auction leaves partner nothing to act on
        ends = auction_over and i == len(calls) - 1
        usual = _median_of_others(by_seat.get(e.seat, []), i, policy.min_samples)
        if call.is_pass and not ends and skip_before:
            limit = policy.stop_seconds + policy.pass_seconds
            if e.seconds > limit:
                out.append(TempoFlag("slow_pass_after_skip", e.seat, e.text, i, None,
                                     e.seconds, usual, limit, "16B"))
            continue
        if call.is_pass and not ends:
            kind, hit = "slow_pass", _beyond(e.seconds, policy.pass_seconds,
                                             policy.pass_factor, usual)
        else:
            kind, hit = "slow_call", _beyond(e.seconds, policy.call_seconds,
                                             policy.call_factor, usual)
        if hit is not None:
            out.append(TempoFlag(kind, e.seat, e.text, i, None, e.seconds, usual, hit, "16B"))
    dummy = declarer.partner if declarer is not None else None
    player = [declarer if (e.seat is dummy and declarer is not None) else e.seat for e in cards]
    card_times: dict[Seat, list[tuple[int, float]]] = {}
    for i, e in enumerate(cards):
        if e.seconds is not None:
            card_times.setdefault(player[i], []).append((i, e.seconds))
    for i, e in enumerate(cards):
        if e.seconds is None:
            continue
        usual = _median_of_others(card_times.get(player[i], []), i, policy.min_samples)
        absolute = policy.first_trick_seconds if e.trick == 1 else policy.card_seconds
        hit = _beyond(e.seconds, absolute, policy.card_factor, usual)
        if hit is not None:
            out.append(TempoFlag("slow_card", e.seat, e.text, i, e.trick, e.seconds, usual,
                                 hit, "73D1"))
    return out


def _bid_before(calls: Sequence[TempoEntry], index: int) -> Call | None:
    for e in reversed(calls[:index]):
        if e.call is not None and e.call.is_bid:
            return e.call
    return None
