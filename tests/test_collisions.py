"""firmware_bridge/collisions.py: a card or call laid on the previous one is shown to the
seat at once (its alert light, the display's last row in the table's language) and clears
itself when the antenna reads again."""

from __future__ import annotations

import pytest

from controller.indicators.display_text import LANGUAGES, WIDTH, columns
from controller.laws.cards import Seat
from firmware_bridge.collisions import Collisions, collision_row
from firmware_bridge.config import AntennaConfig, ReaderConfig
from firmware_bridge.display import to_ascii
from firmware_bridge.gpio import SeatLights

BIDBOX = ReaderConfig("bidbox", "sim://1/bidbox", "inventory", {
    str(i): AntennaConfig("bid", seat.name) for i, seat in enumerate(Seat)})
NORTH = ReaderConfig("north", "sim://1/north", "inventory", {"0": AntennaConfig("spot", "N")})


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("width", [WIDTH, 16])   # a 20x4 and a 16x2 character display
def test_every_request_fits_a_row_in_every_language(lang: str, width: int) -> None:
    for seat in Seat:
        for zone in ("bid", "spot"):
            row = collision_row(seat.name, zone, lang, width)
            assert 0 < columns(row) <= width, row
            assert columns(to_ascii(row)) <= width   # as an HD44780 shows Vietnamese
    assert "call" in collision_row("E", "bid", "en")
    assert "card" in collision_row("E", "spot", "en")


def test_a_collision_lights_the_seat_and_takes_the_last_row_until_the_spot_reads_again(
        ) -> None:
    c = Collisions()
    seats = {s.name: SeatLights(turn=s is Seat.S) for s in Seat}
    display = {"en": ("Bd 1", "1C 1H", "S to call", ""), "zh": ("1", "2", "3", "4")}
    assert not c.reported(BIDBOX, "ANT9 collision_not_resolved")   # not in the config
    assert not c.reported(BIDBOX, "RF timeout")
    assert c.reported(BIDBOX, "ANT1 collision_not_resolved")        # E's call spot
    assert not c.reported(BIDBOX, "ANT1 collision_not_resolved")    # already shown
    lit, rows = c.overlay(seats, display)
    assert lit["E"] == SeatLights(alert=True) and lit["S"] == SeatLights(turn=True)
    assert rows["en"][:3] == display["en"][:3] and rows["en"][3] == collision_row("E", "bid", "en")
    assert rows["zh"][3].startswith("东")
    assert not c.read_again("bidbox", "2")                          # another seat's spot
    assert c.read_again("bidbox", "1")
    assert c.overlay(seats, display) == (seats, display)
    assert c.reported(NORTH, "ANT0 collision_not_resolved")
    assert c.overlay(seats, {})[1]["vi"][3] == collision_row("N", "spot", "vi")


def test_a_two_row_display_shows_the_request_on_its_second_row() -> None:
    c = Collisions(width=16, rows=2)
    assert c.reported(NORTH, "ANT0 collision_not_resolved")
    _, rows = c.overlay({}, {"en": ("Bd 1", "1C 1H", "S to call", "")})
    assert rows["en"][:2] == ("Bd 1", collision_row("N", "spot", "en", 16))
