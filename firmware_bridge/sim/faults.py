"""Faults of a built table, for the simulated one: what ``bridge-table selftest --scripted``
takes from its command line so that every verdict can be seen without hardware.

An antenna is named ``READER/ANTENNA`` by the table file's reader names (``north/0``); a place
where a card is laid is an antenna's spot or an area with no antenna (``N trick row``,
``N call row``, ``dummy's area``: the self-test's names). The faults:

* ``miss_rate``: the chance a tag does not answer one polling round, on every antenna, and
  ``weak``: one antenna's own (a weak field);
* ``tag_limit``: tags one antenna resolves at once (1, as docs/sensing.md builds it);
* ``dead``: antennas that read nothing (a module off its cable);
* ``swapped``: pairs of antennas whose chip selects are swapped (a card on one spot lies over
  the other's antenna);
* ``reads``: an antenna that also reads a card at another place (it lies too close to it);
* ``unplugged``: readers whose cable is out (their port is missing);
* ``wallet_cards``: of a full wallet laid on the board reader, the card stickers that lie in
  its field with the wallet's own (none as docs/hardware/wiring.md places them).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.laws import SEAT_NAMES
from firmware_bridge.sim.table import Physics

__all__ = ["FaultError", "SimFaults", "AREAS"]

#: the places with no antenna under them, as the self-test names them (per seat, and one)
AREAS = ("trick row", "call row")


class FaultError(ValueError):
    """A fault that names no antenna or reader of the table, or a bad number."""


@dataclass(frozen=True)
class SimFaults:
    miss_rate: float = 0.0
    weak: Mapping[str, float] = field(default_factory=dict)
    tag_limit: int = 1
    dead: frozenset[str] = frozenset()
    swapped: tuple[tuple[str, str], ...] = ()
    reads: tuple[tuple[str, str], ...] = ()   # (antenna, the place it also reads)
    unplugged: frozenset[str] = frozenset()
    wallet_cards: int = 0

    @classmethod
    def parse(cls, antennas: Iterable[str], *, miss_rate: Sequence[str] = (),
              tag_limit: int = 1, dead: Sequence[str] = (), swap: Sequence[str] = (),
              reads_neighbour: Sequence[str] = (), unplugged: Sequence[str] = (),
              wallet_cards: int = 0) -> SimFaults:
        """The faults as the command line gives them, checked against ``antennas`` (every
        ``READER/ANTENNA`` of the table file): ``miss_rate`` ``P`` or ``READER/ANT=P``;
        ``swap`` ``A,B``; ``reads_neighbour`` ``A=PLACE`` (antenna A also reads a card laid
        at PLACE, a spot ``READER/ANT`` or an area such as ``N trick row``)."""
        known = set(antennas)
        readers = {a.partition("/")[0] for a in known}

        def antenna(text: str) -> str:
            text = text.strip()
            if text not in known:
                raise FaultError(f"no antenna {text!r} in the table file (one of "
                                 f"{', '.join(sorted(known))})")
            return text

        def place(text: str) -> str:
            text = text.strip()
            if "/" in text:
                return antenna(text)
            seat, _, area = text.partition(" ")
            if text == "dummy's area" or (seat in SEAT_NAMES and area in AREAS):
                return text
            raise FaultError(f"no place {text!r}: READER/ANTENNA, 'SEAT trick row', "
                             "'SEAT call row' or \"dummy's area\"")

        def rate(text: str) -> float:
            try:
                value = float(text)
            except ValueError:
                raise FaultError(f"miss rate {text!r}: a number from 0 to 1") from None
            if not 0.0 <= value < 1.0:
                raise FaultError(f"miss rate {text!r}: from 0 up to (not including) 1")
            return value

        table_rate = 0.0
        weak: dict[str, float] = {}
        for given in miss_rate:
            where, sep, value = given.rpartition("=")
            if sep:
                weak[antenna(where)] = rate(value)
            else:
                table_rate = rate(value)
        if tag_limit < 1:
            raise FaultError(f"tag limit {tag_limit}: an antenna resolves at least one tag")
        pairs = []
        for given in swap:
            first, sep, second = given.partition(",")
            if not sep or antenna(first) == antenna(second):
                raise FaultError(f"swap {given!r}: two antennas, A,B")
            pairs.append((antenna(first), antenna(second)))
        near = []
        for given in reads_neighbour:
            reader, sep, where = given.partition("=")
            if not sep:
                raise FaultError(f"reads-neighbour {given!r}: ANTENNA=PLACE")
            near.append((antenna(reader), place(where)))
        for name in unplugged:
            if name not in readers:
                raise FaultError(f"no reader {name!r} in the table file")
        if not 0 <= wallet_cards <= 52:
            raise FaultError(f"wallet cards {wallet_cards}: 0 to 52")
        return cls(table_rate, weak, tag_limit, frozenset(antenna(d) for d in dead),
                   tuple(pairs), tuple(near), frozenset(unplugged), wallet_cards)

    def physics(self) -> Physics:
        """What every antenna of the simulated table reads."""
        return Physics(tag_limit=self.tag_limit, miss_rate=self.miss_rate)

    def antennas_reading(self, place: str) -> list[str]:
        """The antennas (``READER/ANTENNA``) a card laid at ``place`` lies over."""
        over = [place] if "/" in place else []
        for first, second in self.swapped:
            if place in (first, second):
                over = [second if place == first else first]
        over += [reader for reader, near in self.reads if near == place and reader not in over]
        return [a for a in over if a not in self.dead]

    def apply(self, table: Any, readers: Mapping[str, str]) -> None:
        """Onto a started ``SimTable`` whose readers are ``readers`` (the table file's name ->
        the simulated table's): the weak antennas, the readers unplugged."""
        for where, rate in self.weak.items():
            reader, _, antenna = where.partition("/")
            table.firmwares[readers[reader]].antenna_miss_rate[int(antenna)] = rate
        for reader in self.unplugged:
            firmware = table.firmwares[readers[reader]]
            firmware.plugged = False
            firmware.close()

    def describe(self) -> list[str]:
        """The faults in words, for the report."""
        out = []
        if self.miss_rate:
            out.append(f"every antenna misses {self.miss_rate:.0%} of polling rounds")
        out += [f"{a} misses {r:.0%} of polling rounds" for a, r in self.weak.items()]
        if self.tag_limit != 1:
            out.append(f"every antenna resolves {self.tag_limit} tags at once")
        out += [f"{a} dead" for a in sorted(self.dead)]
        out += [f"{a} and {b} swapped" for a, b in self.swapped]
        out += [f"{a} also reads a card at {p}" for a, p in self.reads]
        out += [f"reader {r} unplugged" for r in sorted(self.unplugged)]
        if self.wallet_cards:
            out.append(f"{self.wallet_cards} card stickers of a full wallet in the board "
                       "reader's field")
        return out
