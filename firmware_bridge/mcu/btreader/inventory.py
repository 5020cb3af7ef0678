"""Antennas polled in turn: what lies on each, as ``+``/``-`` changes with a debounce.

A tag is reported ``+`` the first round it answers and ``-`` after ``misses`` rounds in a row
without it (a card at the edge of the field that answers one round in two is never lost). A
round the front end could not finish (a problem) adds the tags it did see and removes none:
nothing is concluded from a round that failed. A front end that stops answering (module
unplugged, cable cut) is reported once; the antenna's list is kept, and when the chip is back
the antenna's whole list is sent again (``INV``) for the host to compare.

Each antenna counts, since boot, its rounds and the rounds in which a tag answered, or did not
and then answered again (``stat_rounds``, ``stat_answered``, ``stat_missed``): the ``STAT``
line of the serial protocol's version 2, which ``bridge-table selftest`` judges.

``limit``: the tags one antenna resolves in a round, beyond which the round's problem is
``too_many_tags``; a board's ``reader.json`` says one (``board.py``), as docs/sensing.md
builds the table; the Pi-attached readers keep 16.
"""

from .ports import OutputPin
from .proto import hexstr


class Frontend:
    """What a driver (``pn532.PN532``, ``mfrc522.MFRC522``) offers the scanner."""

    model = "?"

    def check(self) -> bool:
        raise NotImplementedError

    def inventory(self, limit: int) -> tuple[list[bytes], str]:
        raise NotImplementedError


class Mux:
    """An antenna multiplexer in front of one chip: select lines driven to the channel's bits.
    The switch itself must pass 13.56 MHz at the antenna's current; docs/hardware names no
    part for it and builds one chip per antenna instead (docs/hardware/wiring.md, "No
    antenna switch")."""

    def __init__(self, pins: list[OutputPin]) -> None:
        self.pins = pins
        self.channel = -1

    def select(self, channel: int) -> None:
        if channel == self.channel:
            return
        for bit, pin in enumerate(self.pins):
            pin.value((channel >> bit) & 1)
        self.channel = channel


class Antenna:
    def __init__(self, index: int, chip: Frontend, mux: Mux | None = None,
                 channel: int = 0) -> None:
        self.index = index
        self.chip = chip
        self.mux = mux
        self.channel = channel
        self.present: list[str] = []     # UIDs in the order they came
        self.missed: dict[str, int] = {}
        self.fault = ""                  # "" or what is wrong with the chip now
        self.problem = ""                # the last round's problem, reported when it changes
        self.stat_rounds = 0             # rounds polled since boot
        self.stat_answered = 0           # ... in which a tag on the list answered
        self.stat_missed = 0             # ... in which a tag on the list did not


class Scanner:
    """``scan(antenna)`` polls one antenna and returns what to tell the host, as tuples:
    ("+", uid) / ("-", uid) / ("INV",) / ("ERR", code, text...)."""

    def __init__(self, antennas: list[Antenna], misses: int = 3, limit: int = 16) -> None:
        self.antennas = antennas
        self.misses = misses
        self.limit = limit

    def _round(self, antenna: Antenna) -> tuple[list[str] | None, str]:
        if antenna.mux is not None:
            antenna.mux.select(antenna.channel)
        try:
            if not antenna.chip.check():
                return None, "no_answer"
            uids, problem = antenna.chip.inventory(self.limit)
        except OSError:
            return None, "no_answer"  # an I2C device that NAKs, an SPI chip gone mid-round
        except Exception as error:  # a driver's own error (pn532.PN532Error): the chip is odd
            return None, type(error).__name__
        return [hexstr(uid) for uid in uids], problem

    def scan(self, antenna: Antenna) -> list[tuple[str, ...]]:
        seen, problem = self._round(antenna)
        out: list[tuple[str, ...]] = []
        antenna.stat_rounds += 1
        if seen is None:
            if not antenna.fault:
                antenna.fault = problem
                out.append(("ERR", f"ANT{antenna.index}", problem, antenna.chip.model))
            return out
        if antenna.fault:
            # back: the host compares the whole list with what it believed meanwhile
            antenna.fault = ""
            antenna.present = list(seen)
            antenna.missed = {}
            out.append(("INV",))
            return out
        if problem != antenna.problem:
            antenna.problem = problem
            if problem:
                out.append(("ERR", f"ANT{antenna.index}", problem))
        for uid in seen:
            antenna.stat_answered += 1
            # the rounds it missed were misses of a tag still lying there (one lifted never
            # answers again: its rounds before the removal are not counted)
            antenna.stat_missed += antenna.missed.pop(uid, 0)
            if uid not in antenna.present:
                antenna.present.append(uid)
                out.append(("+", uid))
        if problem:
            return out
        for uid in list(antenna.present):
            if uid in seen:
                continue
            antenna.missed[uid] = antenna.missed.get(uid, 0) + 1
            if antenna.missed[uid] >= self.misses:
                del antenna.missed[uid]
                antenna.present.remove(uid)
                out.append(("-", uid))
        return out

    def settle(self, antenna: Antenna) -> None:
        """First look after boot: take what lies there as the antenna's list, no changes."""
        seen, problem = self._round(antenna)
        if seen is None:
            antenna.fault = problem
        else:
            antenna.present = list(seen)
