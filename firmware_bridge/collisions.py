"""A collision shown at the table at once, by the bridge itself (docs/sensing.md).

A card or a call laid on an antenna that still holds the previous one is not read: the
reader answers ``ERR ANTn collision_not_resolved`` (docs/serial-protocol.md) and reads the
new tag only once the old one is slid off. Nothing reaches the controller meanwhile, so
the bridge tells the player itself, on the round the reader reports it: the seat's alert
light and the display's last row ("N: slide your last call off the spot", in the table's
language, fitted to the 20-column rows like every other row). It clears itself as soon as
that antenna reports a tag again (the old one leaving), and the controller's indicator is
shown as it was. Nothing goes on the wire for it (the bridge's ``health`` counts it, as
before).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from controller.indicators.display_text import LANGUAGES, ROWS, WIDTH, columns, first_fit
from controller.laws.cards import Seat
from controller.laws.messages import ui_variants
from firmware_bridge.config import ReaderConfig
from firmware_bridge.gpio import SeatLights

__all__ = ["Collisions", "collision_row", "COLLISION"]

#: the firmware's collision line's text (``firmware_error`` detail)
COLLISION = re.compile(r"ANT(\S+)\s+collision_not_resolved")


def collision_row(seat: str, zone: str, lang: str, width: int = WIDTH) -> str:
    """The display row that asks ``seat`` to slide his last call (call spot) or card off:
    the longest form that fits ``width`` columns (a 16x2 display's 16 too)."""
    key = "slide_call_off" if zone == "bid" else "slide_card_off"
    forms = ui_variants(key, lang, seat=Seat[seat])
    return next((form for form in forms if columns(form) <= width), first_fit(forms))


@dataclass
class Collisions:
    """The antennas that hold a tag they cannot read yet, and whose they are."""

    #: (reader, antenna) -> (seat, zone), in the order they were reported
    waiting: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    #: the display's columns and rows (``[display]``): the request is chosen to fit the
    #: columns and goes on the last row the display shows (the second of a 16x2)
    width: int = WIDTH
    rows: int = ROWS

    def reported(self, rc: ReaderConfig, detail: str) -> bool:
        """A reader's ``firmware_error`` ``detail``: whether it is a new collision on a
        seat's antenna (to be shown)."""
        match = COLLISION.search(detail)
        if match is None:
            return False
        antenna = rc.antennas.get(match.group(1))
        if antenna is None or antenna.seat is None:
            return False
        key = (rc.name, match.group(1))
        if key in self.waiting:
            return False
        self.waiting[key] = (antenna.seat, antenna.zone)
        return True

    def read_again(self, reader: str, antenna: str) -> bool:
        """The antenna reported a tag: whatever lay on it has left. Whether a collision
        shown is cleared."""
        return self.waiting.pop((reader, antenna), None) is not None

    def overlay(self, seats: dict[str, SeatLights], display: dict[str, tuple[str, ...]]
                ) -> tuple[dict[str, SeatLights], dict[str, tuple[str, ...]]]:
        """The controller's lights and rows with the collisions shown: each seat's alert
        light lit, the first collision's request on every language's last row shown."""
        if not self.waiting:
            return seats, display
        lit = dict(seats)
        for seat, _ in self.waiting.values():
            lit[seat] = replace(lit.get(seat, SeatLights()), alert=True)
        seat, zone = next(iter(self.waiting.values()))
        rows: dict[str, tuple[str, ...]] = {}
        for lang in display or dict.fromkeys(LANGUAGES, ()):
            shown = list(display.get(lang, ()))
            shown += [""] * (ROWS - len(shown))
            shown[min(self.rows, ROWS) - 1] = collision_row(seat, zone, lang, self.width)
            rows[lang] = tuple(shown)
        return lit, rows
