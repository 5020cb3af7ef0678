"""A simulated table built from a geometry: a card lying somewhere is read by the antennas
the field model says read it there (firmware_bridge/layout/field.py), so that a layout
that cross-reads fails in simulation as it would at the club.

    table = geometry_table(load_geometry(...)[0])   # a SimTable whose readers are the
                                                    # geometry's, with a Placement
The players' moves stay the events the table plays; :class:`Placement` adds where a tag
goes when it leaves an antenna: a card quitted from its play spot into the seat's trick row,
a call slid off its call spot into the call row, each to the next place along its row from
the spot. Every antenna whose field reaches that place (the model's upper band, a tag lying
on the top) reads it there, as its reader would: a ``+`` line, or a collision when that
antenna already holds a tag; the card is lifted from them when it moves again or when the
cards are gathered (the next board's wallet, or, for the calls, the opening lead). A card
passed across its spot (the shoe-style hand read) goes back to the hand. Dummy's cards
(Law 41D) are not placed: the design-rule check holds dummy's area clear of every antenna.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from firmware_bridge.layout.field import reads
from firmware_bridge.layout.geometry import Antenna, Area, Geometry
from firmware_bridge.sim.firmware import VirtualFirmware
from firmware_bridge.sim.table import Event, Physics, SimReaderSpec, SimTable

__all__ = ["Placement", "geometry_table", "geometry_layout", "geometry_readers"]

#: a row holds at most this many cards side by side (a trick row 13; a call row's calls
#: overlap, and the next is laid where the last is when it is full)
ROW_SLOTS = {"trick_row": 13, "call_row": 10}


def geometry_layout(geometry: Geometry) -> tuple[SimReaderSpec, ...]:
    """The simulated readers of a geometry: its readers with their antennas' zones and
    seats; the board reader is a tap reader."""
    antennas: dict[str, dict[int, tuple[str, str | None]]] = defaultdict(dict)
    kinds: dict[str, str] = {}
    for antenna in geometry.antennas:
        antennas[antenna.reader][antenna.antenna] = (antenna.zone, antenna.seat)
        if antenna.zone == "board":
            kinds[antenna.reader] = "tap"
    return tuple(SimReaderSpec(name, mapped, kinds.get(name, "inventory"))
                 for name, mapped in antennas.items())


def geometry_readers(geometry: Geometry, table_id: str = "1") -> list[dict[str, Any]]:
    """The ``[[readers]]`` of a bridge config for the simulated table of a geometry."""
    readers: list[dict[str, Any]] = []
    for spec in geometry_layout(geometry):
        readers.append({
            "name": spec.name, "url": f"sim://{table_id}/{spec.name}", "kind": spec.kind,
            "antennas": {str(i): ({"zone": zone} if seat is None else
                                  {"zone": zone, "seat": seat})
                         for i, (zone, seat) in sorted(spec.antennas.items())}})
    return readers


def geometry_table(geometry: Geometry, table_id: str = "1", **options: Any) -> SimTable:
    """A simulated table whose readers and antennas are the geometry's, with a
    :class:`Placement`: ``options`` go to :class:`SimTable` (``registry``, ``link_dir``,
    ``physics``...)."""
    options.setdefault("physics", Physics())
    return SimTable(table_id, geometry_layout(geometry), placement=Placement(geometry),
                    **options)


class Placement:
    """Where each moved tag lies, and which antennas read it there."""

    def __init__(self, geometry: Geometry) -> None:
        self.geometry = geometry
        #: uid -> the (reader, antenna) that read it where it lies now (not its own spot)
        self.read_by: dict[str, list[tuple[str, int]]] = {}
        #: (row kind, seat) -> the uids laid in it, in order
        self.rows: dict[tuple[str, str], list[str]] = defaultdict(list)
        #: tags read where they lie by an antenna not theirs (what the check calls a
        #: cross-read), counted per moving tag and antenna
        self.cross_reads = 0
        self._last: tuple[str, str, int, str] | None = None  # (action, reader, antenna, uid)
        self._drive = geometry.model.drives[2]

    # ------------------------------------------------------------------ where a tag lands

    def slot(self, area: Area, antenna: Antenna, index: int) -> tuple[float, float]:
        """The centre of the ``index``-th card of a row, counted from the end nearest the
        spot it comes from."""
        card = self.geometry.table.call_card if area.kind == "call_row" \
            else self.geometry.table.card
        half = card[0] / 2
        rect = area.rect
        slots = ROW_SLOTS.get(area.kind, 13)
        index = min(index, slots - 1)
        cx, cy = rect.centre
        if rect.width >= rect.height:
            pitch = (rect.width - card[0]) / (slots - 1)
            near_low = abs(rect.x0 - antenna.x) <= abs(rect.x1 - antenna.x)
            x = rect.x0 + half + index * pitch if near_low else rect.x1 - half - index * pitch
            return x, cy
        pitch = (rect.height - card[0]) / (slots - 1)
        near_low = abs(rect.y0 - antenna.y) <= abs(rect.y1 - antenna.y)
        y = rect.y0 + half + index * pitch if near_low else rect.y1 - half - index * pitch
        return cx, y

    def readers_at(self, x: float, y: float) -> list[Antenna]:
        """The antennas that read a tag lying on the top at (x, y)."""
        model = self.geometry.model
        found = []
        for antenna in self.geometry.antennas:
            dx, dy = x - antenna.x, y - antenna.y
            if antenna.turned:
                dx, dy = dy, dx
            # on the top, not in a recess: 1.5 mm higher than a card on the spot
            if reads(model.loop, self._drive, model.tag, dx, dy, antenna.depth + 1.5):
                found.append(antenna)
        return found

    # ------------------------------------------------------------------ moves

    def moved(self, table: SimTable, event: Event, fw: VirtualFirmware, antenna: int,
              uid: str) -> None:
        reader = next((n for n, f in table.firmwares.items() if f is fw), "")
        action = str(event.get("action"))
        last, self._last = self._last, (action, reader, antenna, uid)
        self._lift(table, uid)
        zone, seat = event.get("zone"), event.get("seat")
        if action == "present":
            if zone == "board":        # a new board: the cards and calls are gathered
                self._gather(table, ("trick_row", "call_row"))
            elif zone == "spot":       # play (or a hand read): the calls are back in the box
                self._gather(table, ("call_row",))
            return
        if last == ("present", reader, antenna, uid) and zone == "spot":
            return                     # passed across the spot: back into the hand
        kind = {"spot": "trick_row", "bid": "call_row"}.get(str(zone))
        source = self.geometry.antenna(f"{seat} {zone}")
        area = self.geometry.area(kind, str(seat)) if kind is not None else None
        if area is None or source is None or kind is None:
            return
        row = self.rows[(kind, str(seat))]
        x, y = self.slot(area, source, len(row))
        row.append(uid)
        for other in self.readers_at(x, y):
            other_fw = table.firmwares.get(other.reader)
            if other_fw is None:
                continue
            self.cross_reads += 1
            other_fw.place(other.antenna, uid)
            self.read_by.setdefault(uid, []).append((other.reader, other.antenna))

    def _lift(self, table: SimTable, uid: str) -> None:
        for reader, antenna in self.read_by.pop(uid, []):
            fw = table.firmwares.get(reader)
            if fw is not None:
                fw.lift(antenna, uid)
        for row in self.rows.values():
            if uid in row:
                row.remove(uid)

    def _gather(self, table: SimTable, kinds: tuple[str, ...]) -> None:
        for (kind, _), row in list(self.rows.items()):
            if kind in kinds:
                for uid in list(row):
                    self._lift(table, uid)
