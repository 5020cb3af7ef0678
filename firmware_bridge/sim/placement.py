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
cards are gathered (the next board's wallet, or, for the calls, the opening lead); a tapped
wallet is put down in the geometry's ``wallet`` place until the next is tapped. A card passed
across its spot (the shoe-style hand read) goes back to the hand. At the opening lead
dummy's hand is spread in dummy's area (Law 41D: a column a suit, pointing at declarer, the
first card nearest dummy) and each card is lifted from there when it is played; the hand is
known from the events given to one :meth:`SimTable.play` (the cards dummy's seat plays after
the opening lead), so a board played an event at a time places no dummy.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from controller.laws import Suit
from firmware_bridge.layout.field import reads
from firmware_bridge.layout.geometry import Antenna, Area, Geometry
from firmware_bridge.sim.firmware import VirtualFirmware
from firmware_bridge.sim.table import Event, Physics, SimReaderSpec, SimTable

__all__ = ["Placement", "geometry_table", "geometry_layout", "geometry_readers"]

#: a row holds at most this many cards side by side (a trick row 13; a call row's calls
#: overlap, and the next is laid where the last is when it is full)
ROW_SLOTS = {"trick_row": 13, "call_row": 10}
#: the seat on each seat's left (dummy is the opening leader's left-hand opponent's partner,
#: that is the seat after the leader)
NEXT_SEAT = {"N": "E", "E": "S", "S": "W", "W": "N"}
SUITS = "".join(s.name for s in sorted(Suit, reverse=True))  # S H D C, from the core


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
        #: id of an opening lead's event -> (dummy's seat, dummy's cards as (card, uid))
        self._dummies: dict[int, tuple[str, list[tuple[str, str]]]] = {}
        #: dummy's cards spread on the table so far
        self.dummy_cards = 0
        #: (uid, antenna name) of every tag read where it lies by an antenna not its own
        self.read_log: list[tuple[str, str]] = []
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

    def dummy_places(self, seat: str, cards: Sequence[str]) -> list[tuple[float, float]]:
        """Where dummy's cards lie (Law 41D): a column a suit across dummy's area, each
        column pointing from dummy's edge towards declarer, the cards overlapping."""
        area = self.geometry.area("dummy", seat)
        if area is None:
            return []
        columns = [[c for c in cards if c[0] == suit] for suit in SUITS]
        columns = [c for c in columns if c]
        long = max(self.geometry.table.card)
        rect = area.rect
        along_x = seat in "NS"            # the columns run across the seat's edge
        span = rect.width if along_x else rect.height
        depth = rect.height if along_x else rect.width
        deepest = max((len(c) for c in columns), default=1)
        pitch = (depth - long) / (deepest - 1) if deepest > 1 else 0.0
        gap = span / len(columns) if columns else span
        places: dict[str, tuple[float, float]] = {}
        for i, column in enumerate(columns):
            across = (rect.x0 if along_x else rect.y0) + gap * (i + 0.5)
            for j, card in enumerate(column):
                # from dummy's edge inwards: N's edge is high y, E's high x, S's low y, W's
                # low x
                start = {"N": rect.y1 - long / 2, "S": rect.y0 + long / 2,
                         "E": rect.x1 - long / 2, "W": rect.x0 + long / 2}[seat]
                step = -pitch if seat in "NE" else pitch
                inward = start + j * step
                places[card] = (across, inward) if along_x else (inward, across)
        return [places[c] for c in cards]

    def planned(self, table: SimTable, events: Sequence[Event]) -> None:
        """Find each board's opening lead and dummy's hand in the events to be played."""
        registry = table.registry
        self._dummies.clear()
        bids_seen = False
        lead: Event | None = None
        for event in events:
            zone, action = event.get("zone"), event.get("action")
            if zone == "board":
                bids_seen, lead = False, None
            elif zone == "bid":
                bids_seen = True
            elif zone == "spot" and action == "present" and bids_seen and lead is None:
                lead = event
                dummy = NEXT_SEAT.get(str(event.get("seat")), "")
                self._dummies[id(lead)] = (dummy, [])
            elif zone == "spot" and action == "present" and lead is not None:
                dummy, cards = self._dummies[id(lead)]
                card = event.get("card")
                if event.get("seat") == dummy and card is not None:
                    uid = registry.uid_for_card(str(event.get("deck")), str(card))
                    if uid is not None:
                        cards.append((str(card), uid))

    # ------------------------------------------------------------------ moves

    def moved(self, table: SimTable, event: Event, fw: VirtualFirmware, antenna: int,
              uid: str) -> None:
        reader = next((n for n, f in table.firmwares.items() if f is fw), "")
        action = str(event.get("action"))
        last, self._last = self._last, (action, reader, antenna, uid)
        self._lift(table, uid)
        zone, seat = event.get("zone"), event.get("seat")
        if action == "present":
            if zone == "board":        # a new board: the cards, calls and last wallet go
                self._gather(table, ("trick_row", "call_row", "dummy", "wallet"))
                self._rest_wallet(table, uid)
            elif zone == "spot":       # play (or a hand read): the calls are back in the box
                self._gather(table, ("call_row",))
                spread = self._dummies.pop(id(event), None)
                if spread is not None:   # the opening lead: dummy spreads his hand
                    self._spread(table, *spread)
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
        self._lay(table, uid, x, y)

    def _rest_wallet(self, table: SimTable, uid: str) -> None:
        """Tapped, the wallet is put down in its place for the play (Law 7A), its sticker
        at the place's point nearest the board reader (where the check's rule is tightest)."""
        area = next((a for a in self.geometry.areas if a.kind == "wallet"), None)
        board = self.geometry.antenna("board")
        if area is None:
            return
        rect = area.rect
        x, y = rect.centre if board is None else (min(max(board.x, rect.x0), rect.x1),
                                                  min(max(board.y, rect.y0), rect.y1))
        self.rows[("wallet", "")].append(uid)
        self._lay(table, uid, x, y)

    def _spread(self, table: SimTable, seat: str, cards: list[tuple[str, str]]) -> None:
        places = self.dummy_places(seat, [card for card, _ in cards])
        for (_, uid), (x, y) in zip(cards, places, strict=True):
            self.rows[("dummy", seat)].append(uid)
            self.dummy_cards += 1
            self._lay(table, uid, x, y)

    def _lay(self, table: SimTable, uid: str, x: float, y: float) -> None:
        """A tag comes to lie at (x, y): every antenna whose field reaches it reads it."""
        for other in self.readers_at(x, y):
            other_fw = table.firmwares.get(other.reader)
            if other_fw is None:
                continue
            self.cross_reads += 1
            self.read_log.append((uid, other.name))
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
