"""Simulated players: a board's sensor events played as people play them (docs/sensing.md).

``record_events(record, sensing="spot")`` gives a board as a table that nobody touches
twice would read it: each card laid once, each trick slid off at once. People do more:
they face a face-down opening lead (Law 41), turn each card of a complete trick face down
on its spot before sliding it off (Law 65A), slide a card or a call off late (the next one
laid on top of it first: a collision on the antenna) or early, and hesitate. ``humanize``
turns a board's events into those timed reader actions, seeded, with the rates of a
``PlayerHabits``; the simulator plays them with ``hardware_time`` so that the controller
sees the players' times. The timings are estimates, not measured at a table.

Public API (the multi-table session uses it too): ``PlayerHabits`` and ``humanize``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["PlayerHabits", "humanize", "humanize_boards", "OFF", "CAREFUL"]

Event = dict[str, Any]


@dataclass(frozen=True)
class PlayerHabits:
    """How the four players handle cards; rates are chances per occasion, times seconds."""

    seed: int = 0
    #: a card of a complete trick turned face down on its spot before it is slid off, and
    #: the opening lead made face down and faced
    turn_rate: float = 1.0
    turn_time: tuple[float, float] = (0.2, 1.5)
    #: the next card (or call) laid on the previous one before it is slid off: a collision
    late_slide_rate: float = 0.1
    #: a trick slid off at once after its fourth card (else after a look at it)
    early_slide_rate: float = 0.3
    #: a long pause before a call or a card
    hesitate_rate: float = 0.1
    hesitate_time: tuple[float, float] = (2.0, 6.0)
    #: the ordinary pause between two actions
    think_time: tuple[float, float] = (0.4, 1.5)
    #: a card slid across the play spot in the shoe-style read
    pass_time: float = 0.35

    def problems(self) -> list[str]:
        """What is wrong with these habits, in words (empty: usable)."""
        out = [f"{name} must be from 0 to 1, not {value}"
               for name, value in (("turn_rate", self.turn_rate),
                                   ("late_slide_rate", self.late_slide_rate),
                                   ("early_slide_rate", self.early_slide_rate),
                                   ("hesitate_rate", self.hesitate_rate))
               if not 0.0 <= value <= 1.0]
        for name, (low, high) in (("turn_time", self.turn_time),
                                  ("hesitate_time", self.hesitate_time),
                                  ("think_time", self.think_time)):
            if not 0.0 <= low <= high:
                out.append(f"{name} must be 0 <= low <= high, not {low}..{high}")
        return out


#: players who do nothing but lay and slide, at once (what ``record_events`` gives)
OFF = PlayerHabits(turn_rate=0.0, late_slide_rate=0.0, early_slide_rate=1.0,
                   hesitate_rate=0.0)


#: players who turn cards and never lay one on another, so that each move is read at once
#: (the demo's, which waits for each move to be reported before the next): the opening lead
#: and about a third of the cards turned, so that its board still takes under a minute
CAREFUL = PlayerHabits(seed=1, turn_rate=0.35, late_slide_rate=0.0, hesitate_rate=0.0)


class _Clock:
    def __init__(self, start: float, habits: PlayerHabits, rng: random.Random) -> None:
        self.now = start
        self.habits = habits
        self.rng = rng
        self.out: list[Event] = []

    def emit(self, event: Event, gap: float) -> None:
        self.now += gap
        self.out.append(dict(event, ts=round(self.now, 3)))

    def think(self) -> float:
        h = self.habits
        gap = self.rng.uniform(*h.think_time)
        if self.rng.random() < h.hesitate_rate:
            gap += self.rng.uniform(*h.hesitate_time)
        return gap

    def turn(self) -> float:
        return self.rng.uniform(*self.habits.turn_time)

    def chance(self, rate: float) -> bool:
        return self.rng.random() < rate


def humanize(events: Sequence[Event], habits: PlayerHabits,
             *, start: float | None = None) -> list[Event]:
    """``events`` (one board, ``record_events(..., sensing="spot")``'s order) as the
    players of ``habits`` make them, with their times from ``start`` (default: the first
    event's ``ts``). The board's cards, calls and their order of play do not change: a
    collision only delays the read of the card laid on top, turns come back on the same
    spot. ``seq`` is left to whoever numbers the stream."""
    rng = random.Random(habits.seed)
    first_ts = events[0].get("ts", 0.0) if events else 0.0
    clock = _Clock(float(start if start is not None else first_ts), habits, rng)
    auction_over = False
    lead_done = False
    trick: list[Event] = []          # the cards of the trick in progress
    late: dict[tuple[str, str], Event] = {}   # (zone, seat) -> a removal left for later
    for event in events:
        zone, action, seat = event.get("zone"), event.get("action"), event.get("seat")
        key = (str(zone), str(seat))
        if zone == "bid":
            if action == "present":
                clock.emit(event, clock.think())
                _late_off(clock, late, key)
            elif not auction_over and _next_is_call(events, event) \
                    and clock.chance(habits.late_slide_rate):
                late[key] = event    # the next call laid on top of this one first
            else:
                clock.emit(event, 0.3)
            continue
        if zone != "spot":
            clock.emit(event, clock.think())
            continue
        if not _in_play(events, event):
            clock.emit(event, habits.pass_time)   # the shoe-style read: a card slid across
            continue
        auction_over = True
        _flush(clock, late, "bid")
        if action == "present":
            clock.emit(event, clock.think())
            _late_off(clock, late, key)
            trick.append(event)
            if not lead_done:
                lead_done = True
                if clock.chance(habits.turn_rate):   # Law 41: face down, then faced
                    clock.emit(dict(event, action="removed"), 2.0 + clock.think())
                    clock.emit(event, clock.turn())
            continue
        # a card of a complete trick slid off (record_events: the four after the trick)
        if trick:
            gap = 0.2 if clock.chance(habits.early_slide_rate) else 1.0 + clock.think()
            clock.now += gap
            for laid in trick:
                if clock.chance(habits.turn_rate):   # Law 65A: turned face down first
                    clock.emit(dict(laid, action="removed"), 0.1)
                    clock.emit(laid, clock.turn())
            trick = []
        if clock.chance(habits.late_slide_rate) and _more_play(events, event):
            late[key] = event          # the seat's next card laid on top of this one first
        else:
            clock.emit(event, 0.2)
    for pending in list(late.values()):
        clock.emit(pending, 0.3)
    return clock.out


def _late_off(clock: _Clock, late: dict[tuple[str, str], Event], key: tuple[str, str]) -> None:
    """The card just laid lies on the one left on the antenna: now that one is slid off."""
    pending = late.pop(key, None)
    if pending is not None:
        clock.emit(pending, clock.rng.uniform(0.3, 1.2))


def _flush(clock: _Clock, late: dict[tuple[str, str], Event], zone: str) -> None:
    for key in [k for k in late if k[0] == zone]:
        clock.emit(late.pop(key), 0.3)


def _next_is_call(events: Sequence[Event], event: Event) -> bool:
    """A call slid off to make room for the seat's next call (not the auction's end)."""
    index = _index(events, event)
    return any(e.get("zone") == "bid" and e.get("action") == "present"
               and e.get("seat") == event.get("seat") for e in events[index + 1:])


def _in_play(events: Sequence[Event], event: Event) -> bool:
    """A spot event after the first call: a card played (or quitted)."""
    index = _index(events, event)
    return any(e.get("zone") == "bid" for e in events[:index])


def _more_play(events: Sequence[Event], event: Event) -> bool:
    """The seat lays another card after this one leaves (not the last trick)."""
    index = _index(events, event)
    return any(e.get("zone") == "spot" and e.get("action") == "present"
               and e.get("seat") == event.get("seat") for e in events[index + 1:])


def _index(events: Sequence[Event], event: Event) -> int:
    for i, e in enumerate(events):
        if e is event:
            return i
    raise ValueError("event not in events")


def humanize_boards(events: Sequence[Event], habits: PlayerHabits) -> list[Event]:
    """``humanize`` for a file of several boards: each board (from one wallet read to the
    next) played by the same players, its seed the habits' plus the board's place, the
    times going on from the board before. Events before the first wallet read are left."""
    starts = [i for i, e in enumerate(events)
              if e.get("zone") == "board" and e.get("action") == "present"]
    if not starts:
        return list(events)
    out: list[Event] = list(events[:starts[0]])
    now: float | None = None
    for place, (begin, end) in enumerate(zip(starts, [*starts[1:], len(events)],
                                             strict=True)):
        board = events[begin:end]
        seeded = PlayerHabits(**{**habits.__dict__, "seed": habits.seed + place})
        played = humanize(board, seeded, start=now)
        out += played
        if played:
            now = float(played[-1]["ts"]) + 5.0
    return out
