"""Sensor events as the core sees them (the wire contract's ``event`` payloads, typed)."""

from __future__ import annotations

import enum
from typing import NamedTuple

from .cards import Call, Card, Seat

__all__ = ["Zone", "Action", "Button", "TagEvent", "ButtonEvent", "MARKERS", "MARKER_NAMES"]

#: Bidding-box cards that are not calls, in the order a box is enrolled.
MARKER_NAMES: tuple[str, ...] = ("STOP", "ALERT")
MARKERS: frozenset[str] = frozenset(MARKER_NAMES)


class Zone(enum.StrEnum):
    TRAY = "tray"      # a seat's card zone: hand scans before the auction, played cards after
    BID = "bid"        # a seat's bidding zone
    BOARD = "board"    # the board (wallet) reader
    POCKET = "pocket"  # a verification station's pocket reader
    SPOT = "spot"      # a seat's play spot: one card at a time (docs/sensing.md; wire 1.5)


class Action(enum.StrEnum):
    PRESENT = "present"
    REMOVED = "removed"


class Button(enum.StrEnum):
    DIRECTOR = "director"
    CLAIM = "claim"
    UNDO = "undo"
    NEXT = "next"


class TagEvent(NamedTuple):
    """A tag seen or lost by a reader. Exactly one of card / call / marker / board / unknown.

    (An immutable value; a NamedTuple because one is made for every sensor event.)
    """

    zone: Zone
    action: Action
    seat: Seat | None
    uid: str
    card: Card | None = None
    deck: str | None = None
    call: Call | None = None
    marker: str | None = None
    board: int | None = None
    unknown: bool = False
    ts: float | None = None   # when the hardware saw it (the event's ``ts``; Law 58 window)

    @property
    def present(self) -> bool:
        return self.action is Action.PRESENT


class ButtonEvent(NamedTuple):
    button: Button
    seat: Seat | None = None
    #: when the button was pressed (the event's ``ts``), for the director's record
    ts: float | None = None
