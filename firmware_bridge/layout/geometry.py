"""One table's geometry (``hw_configs/geometry-*.toml``) read into frozen values.

Millimetres, seen from above. The table frame has its origin at the table's centre, x to
East, y to North. A seat's items are given in the seat's own frame: ``at = [u, v]``, u along
the seat's edge (positive to the player's left), v from the edge towards the centre, and
``size = [along, across]`` (along the edge, towards the centre); the loader turns them into
the table frame. Table-level items (no ``seat``) give ``at = [x, y]`` and ``size = [x, y]``.

:func:`load_geometry` never raises on a bad file: it returns the problems, each naming the
key (``antennas[3].reader``) and what is wrong. docs/hardware/layout.md has every key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from controller.laws import SEAT_NAMES
from controller.tomlfile import TomlFileError, load_toml
from firmware_bridge.layout.field import H_MIN, Drive, Loop, Tag, calibrated_drives

__all__ = [
    "Rect", "Table", "Model", "Antenna", "Area", "Device", "Cable", "Geometry",
    "load_geometry", "SEATS", "ZONES", "AREA_KINDS", "DEVICE_KINDS", "BUSES", "TOP_DEVICES",
    "DRIVERS",
]

SEATS: Final = SEAT_NAMES
ZONES: Final = ("spot", "bid", "board")
#: surface areas: where cards, calls and the wallet lie (tags)
AREA_KINDS: Final = ("trick_row", "call_row", "dummy", "tray", "wallet")
#: devices; the display, LEDs and buttons sit on the top, the rest under it
DEVICE_KINDS: Final = ("pi", "pico", "hub", "regulator", "display", "led", "button",
                       "connector", "supply")
TOP_DEVICES: Final = frozenset({"display", "led", "button"})
#: devices with a ground plane or metal case: no loop within ``Model.metal_clearance`` of one
METAL_DEVICES: Final = frozenset({"pi", "pico", "hub", "regulator", "supply"})
BUSES: Final = ("spi", "usb", "i2c", "gpio", "power")
#: who clocks an SPI run: the Pi's driver (firmware_bridge/readers/mfrc522.py) or a Pico's
#: reader firmware (firmware_bridge/mcu/btreader/board.py)
DRIVERS: Final = ("pi", "pico")


@dataclass(frozen=True)
class Rect:
    """An axis-aligned rectangle in the table frame (mm)."""

    x0: float
    y0: float
    x1: float
    y1: float

    @property
    def centre(self) -> tuple[float, float]:
        return ((self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2)

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    def overlaps(self, other: Rect) -> bool:
        """Whether the two share area (touching edges do not)."""
        return (min(self.x1, other.x1) - max(self.x0, other.x0) > 1e-9
                and min(self.y1, other.y1) - max(self.y0, other.y0) > 1e-9)

    def inside(self, other: Rect) -> bool:
        return (self.x0 >= other.x0 - 1e-9 and self.y0 >= other.y0 - 1e-9
                and self.x1 <= other.x1 + 1e-9 and self.y1 <= other.y1 + 1e-9)

    def inset(self, dx: float, dy: float) -> Rect:
        """Shrunk by ``dx``/``dy`` on each side; a side that would cross collapses to the
        middle line."""
        cx, cy = self.centre
        hx, hy = max(0.0, self.width / 2 - dx), max(0.0, self.height / 2 - dy)
        return Rect(cx - hx, cy - hy, cx + hx, cy + hy)

    def grow(self, d: float) -> Rect:
        return Rect(self.x0 - d, self.y0 - d, self.x1 + d, self.y1 + d)

    def distance_to(self, x: float, y: float) -> float:
        """From a point to the nearest point of the rectangle (0 inside)."""
        dx = max(self.x0 - x, 0.0, x - self.x1)
        dy = max(self.y0 - y, 0.0, y - self.y1)
        return float((dx * dx + dy * dy) ** 0.5)

    def gap(self, other: Rect) -> float:
        """The shortest distance between the two (0 when they touch or overlap)."""
        dx = max(other.x0 - self.x1, 0.0, self.x0 - other.x1)
        dy = max(other.y0 - self.y1, 0.0, self.y0 - other.y1)
        return float((dx * dx + dy * dy) ** 0.5)


@dataclass(frozen=True)
class Table:
    name: str
    width: float
    depth: float
    #: the top board's thickness: a card in a row lies this far above the loops' plane,
    #: less a spot's recess
    top: float
    frame: str          # "steel", "wood" or "none"
    frame_width: float  # the apron under the top's rim, inwards from the edge
    card: tuple[float, float]       # a playing card, short x long
    call_card: tuple[float, float]  # a bidding-box card
    config: str | None = None       # the reader config this geometry is for

    @property
    def rect(self) -> Rect:
        return Rect(-self.width / 2, -self.depth / 2, self.width / 2, self.depth / 2)


@dataclass(frozen=True)
class Model:
    """The field model's parameters (firmware_bridge/layout/field.py)."""

    loop: Loop
    tag: Tag
    #: the published on-axis read ranges (low, middle, high) the drive is calibrated on
    ranges: tuple[float, float, float]
    h_min: float
    #: clearance added to the model's reach (cards askew, the loop's size not measured)
    margin: float
    #: no loop this close to metal (the steel frame, a board's ground plane)
    metal_clearance: float

    @property
    def drives(self) -> tuple[Drive, Drive, Drive]:
        return calibrated_drives(self.loop, self.tag, self.ranges, self.h_min)


@dataclass(frozen=True)
class Antenna:
    seat: str | None
    zone: str
    reader: str
    antenna: int
    x: float
    y: float
    loop: Rect      # the loop's mean turn, in the table frame
    spot: Rect      # the recess (or the marked square) a card or the wallet is laid on
    depth: float    # from the loop up to a tag lying on the spot
    #: the loop's sides run along x (False) or are turned a quarter (True)
    turned: bool = False

    @property
    def name(self) -> str:
        return "board" if self.seat is None else f"{self.seat} {self.zone}"


@dataclass(frozen=True)
class Area:
    name: str
    kind: str
    seat: str | None
    rect: Rect


@dataclass(frozen=True)
class Device:
    name: str
    kind: str
    seat: str | None
    rect: Rect

    @property
    def on_top(self) -> bool:
        return self.kind in TOP_DEVICES

    @property
    def metal(self) -> bool:
        return self.kind in METAL_DEVICES


@dataclass(frozen=True)
class Cable:
    source: str
    target: str
    bus: str
    length: float
    #: the bus a run belongs to (``spi0``): runs of one line share its load
    line: str
    #: who clocks an SPI run (``pi`` or ``pico``)
    driver: str | None = None


@dataclass(frozen=True)
class Geometry:
    path: Path
    table: Table
    model: Model
    antennas: tuple[Antenna, ...]
    areas: tuple[Area, ...]
    devices: tuple[Device, ...]
    cables: tuple[Cable, ...]

    def antenna(self, name: str) -> Antenna | None:
        return next((a for a in self.antennas if a.name == name), None)

    def place(self, name: str) -> tuple[float, float] | None:
        """The centre of an antenna, area or device by name."""
        antenna = self.antenna(name)
        if antenna is not None:
            return antenna.x, antenna.y
        rects = {item.name: item.rect for item in self.areas}
        rects.update((item.name, item.rect) for item in self.devices)
        rect = rects.get(name)
        return None if rect is None else rect.centre

    def area(self, kind: str, seat: str | None) -> Area | None:
        return next((a for a in self.areas if a.kind == kind and a.seat == seat), None)


def seat_rect(table: Table, seat: str | None, at: Sequence[float],
              size: Sequence[float]) -> Rect:
    """A seat-frame (or, without a seat, table-frame) centre and size in the table frame."""
    u, v = at
    along, across = size
    half_w, half_d = table.width / 2, table.depth / 2
    if seat is None:
        x, y, w, h = u, v, along, across
    elif seat == "N":
        x, y, w, h = u, half_d - v, along, across
    elif seat == "S":
        x, y, w, h = -u, -half_d + v, along, across
    elif seat == "E":
        x, y, w, h = half_w - v, -u, across, along
    else:
        x, y, w, h = -half_w + v, u, across, along
    return Rect(x - w / 2, y - h / 2, x + w / 2, y + h / 2)


class _Reader:
    """Reads one TOML table, collecting problems instead of raising."""

    def __init__(self, problems: list[str], where: str, data: Any) -> None:
        self.problems = problems
        self.where = where
        self.data: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
        if not isinstance(data, Mapping):
            self.problem("", "must be a table")

    def problem(self, key: str, text: str) -> None:
        place = ".".join(p for p in (self.where, key) if p)
        self.problems.append(f"{place}: {text}" if place else text)

    def number(self, key: str, default: float | None = None, *,
               positive: bool = True) -> float:
        value = self.data.get(key, default)
        if value is None:
            self.problem(key, "missing (a number of millimetres)")
            return 0.0
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.problem(key, f"must be a number, not {value!r}")
            return 0.0
        if positive and value <= 0:
            self.problem(key, f"must be above 0, not {value}")
        return float(value)

    def text(self, key: str, choices: Sequence[str] = (), default: str | None = None,
             required: bool = True) -> str | None:
        value = self.data.get(key, default)
        if value is None:
            if required:
                self.problem(key, "missing" + (f" (one of {', '.join(choices)})"
                                               if choices else ""))
            return None
        if not isinstance(value, str) or not value:
            self.problem(key, f"must be a non-empty string, not {value!r}")
            return None
        if choices and value not in choices:
            self.problem(key, f"{value!r} is not one of {', '.join(choices)}")
            return None
        return value

    def pair(self, key: str, default: Sequence[float] | None = None, *,
             positive: bool = True) -> tuple[float, float]:
        value = self.data.get(key, default)
        if (not isinstance(value, list | tuple) or len(value) != 2
                or any(isinstance(v, bool) or not isinstance(v, int | float) for v in value)):
            self.problem(key, f"must be two numbers [a, b] (mm), not {value!r}")
            return (1.0, 1.0)
        if positive and min(value) <= 0:
            self.problem(key, f"must be above 0, not {list(value)}")
        return (float(value[0]), float(value[1]))

    def integer(self, key: str) -> int:
        value = self.data.get(key)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            self.problem(key, f"must be a whole number from 0, not {value!r}")
            return 0
        return value

    def unknown(self, known: Sequence[str]) -> None:
        for key in self.data:
            if key not in known:
                self.problem(str(key), "unknown key")


def _items(data: Mapping[str, Any], key: str, problems: list[str]) -> list[Any]:
    raw = data.get(key, [])
    if not isinstance(raw, list):
        problems.append(f"{key}: must be an array of tables ([[{key}]])")
        return []
    return raw


def _table(data: Mapping[str, Any], problems: list[str]) -> Table:
    r = _Reader(problems, "table", data.get("table"))
    r.unknown(("name", "width", "depth", "top", "frame", "frame_width", "card", "call_card",
               "config"))
    frame = r.text("frame", ("steel", "wood", "none"), default="none") or "none"
    return Table(name=r.text("name") or "table", width=r.number("width"),
                 depth=r.number("depth"), top=r.number("top", 6.0),
                 frame=frame, frame_width=r.number("frame_width", 0.0, positive=False),
                 card=r.pair("card", (57.0, 89.0)), call_card=r.pair("call_card", (40.0, 60.0)),
                 config=r.text("config", required=False))


def _model(data: Mapping[str, Any], problems: list[str]) -> Model:
    r = _Reader(problems, "model", data.get("model", {}))
    r.unknown(("loop", "turns", "tag_diameter", "ranges", "h_min", "margin",
               "metal_clearance"))
    width, length = r.pair("loop", (40.0, 30.0))
    turns = data.get("model", {}).get("turns", 4) if isinstance(data.get("model"), dict) else 4
    if isinstance(turns, bool) or not isinstance(turns, int) or turns < 1:
        r.problem("turns", f"must be a whole number from 1, not {turns!r}")
        turns = 1
    ranges = r.data.get("ranges", [20.0, 25.0, 30.0])
    if (not isinstance(ranges, list) or len(ranges) != 3
            or any(isinstance(v, bool) or not isinstance(v, int | float) or v <= 0
                   for v in ranges) or sorted(ranges) != list(ranges)):
        r.problem("ranges", f"must be three rising read ranges [low, middle, high] (mm), "
                            f"not {ranges!r}")
        ranges = [20.0, 25.0, 30.0]
    return Model(loop=Loop(width, length, turns), tag=Tag(r.number("tag_diameter", 20.0)),
                 ranges=(float(ranges[0]), float(ranges[1]), float(ranges[2])),
                 h_min=r.number("h_min", H_MIN), margin=r.number("margin", 10.0, positive=False),
                 metal_clearance=r.number("metal_clearance", 20.0, positive=False))


def _seat(r: _Reader, required: bool) -> str | None:
    return r.text("seat", SEATS, required=required)


def _antennas(data: Mapping[str, Any], table: Table, model: Model,
              problems: list[str]) -> tuple[Antenna, ...]:
    found: list[Antenna] = []
    for i, item in enumerate(_items(data, "antennas", problems)):
        r = _Reader(problems, f"antennas[{i}]", item)
        r.unknown(("seat", "zone", "reader", "antenna", "at", "spot", "depth", "turned"))
        zone = r.text("zone", ZONES) or "spot"
        seat = _seat(r, required=zone != "board")
        if zone == "board" and seat is not None:
            r.problem("seat", "the board reader belongs to no seat: remove the seat")
            seat = None
        reader = r.text("reader") or "?"
        index = r.integer("antenna")
        at = r.pair("at", positive=False)
        spot_size = r.pair("spot")
        turned = r.data.get("turned", False)
        if not isinstance(turned, bool):
            r.problem("turned", f"must be true or false, not {turned!r}")
            turned = False
        loop_size = (model.loop.length, model.loop.width) if turned else \
            (model.loop.width, model.loop.length)
        spot = seat_rect(table, seat, at, spot_size)
        loop = seat_rect(table, seat, at, loop_size)
        x, y = spot.centre
        # the loop's sides along the table's x and y: its width runs along x unless turned
        # or the seat's frame is turned (E, W)
        across = (loop.width < loop.height) != (model.loop.width < model.loop.length)
        found.append(Antenna(seat, zone, reader, index, x, y, loop, spot,
                             r.number("depth", table.top - 1.5), across))
    names: dict[str, int] = {}
    places: dict[tuple[str, int], int] = {}
    for i, antenna in enumerate(found):
        if antenna.name in names:
            problems.append(f"antennas[{i}]: {antenna.name} is already antennas"
                            f"[{names[antenna.name]}]")
        names.setdefault(antenna.name, i)
        key = (antenna.reader, antenna.antenna)
        if key in places:
            problems.append(f"antennas[{i}]: reader {antenna.reader} antenna {antenna.antenna}"
                            f" is already antennas[{places[key]}]")
        places.setdefault(key, i)
    return tuple(found)


def _placed(data: Mapping[str, Any], key: str, kinds: Sequence[str], table: Table,
            problems: list[str], seated: Sequence[str]) -> list[tuple[str, str, str | None, Rect]]:
    """(name, kind, seat, rect) of every entry of an ``areas`` or ``devices`` array; a
    kind in ``seated`` belongs to a seat."""
    found: list[tuple[str, str, str | None, Rect]] = []
    for i, item in enumerate(_items(data, key, problems)):
        r = _Reader(problems, f"{key}[{i}]", item)
        r.unknown(("name", "kind", "seat", "at", "size"))
        kind = r.text("kind", kinds) or kinds[0]
        seat = _seat(r, required=kind in seated)
        found.append((r.text("name") or f"{key}[{i}]", kind, seat,
                      seat_rect(table, seat, r.pair("at", positive=False), r.pair("size"))))
    return found


def _cables(data: Mapping[str, Any], names: set[str], problems: list[str]) -> tuple[Cable, ...]:
    found: list[Cable] = []
    for i, item in enumerate(_items(data, "cables", problems)):
        r = _Reader(problems, f"cables[{i}]", item)
        r.unknown(("from", "to", "bus", "length", "line", "driver"))
        source, target = r.text("from") or "?", r.text("to") or "?"
        for key, end in (("from", source), ("to", target)):
            if end != "?" and end not in names:
                r.problem(key, f"{end!r} names no antenna, area or device of this geometry")
        bus = r.text("bus", BUSES) or "gpio"
        driver = r.text("driver", DRIVERS, required=bus == "spi")
        found.append(Cable(source, target, bus, r.number("length"),
                           r.text("line", default=f"{bus}:{source}") or bus, driver))
    return tuple(found)


def load_geometry(path: str | Path) -> tuple[Geometry | None, tuple[str, ...]]:
    """The geometry in ``path`` and no problem, or None and every problem found."""
    path = Path(path)
    try:
        data = load_toml(path)
    except TomlFileError as error:
        return None, (str(error),)
    problems: list[str] = []
    for key in data:
        if key not in ("table", "model", "antennas", "areas", "devices", "cables"):
            problems.append(f"{key}: unknown section")
    table = _table(data, problems)
    model = _model(data, problems)
    antennas = _antennas(data, table, model, problems)
    areas = tuple(Area(*entry) for entry in _placed(data, "areas", AREA_KINDS, table, problems,
                                                     ("trick_row", "call_row", "dummy")))
    devices = tuple(Device(*entry) for entry in _placed(data, "devices", DEVICE_KINDS, table,
                                                         problems, ()))
    names = [a.name for a in antennas] + [a.name for a in areas] + [d.name for d in devices]
    seen: set[str] = set()
    for name in names:
        if name in seen:
            problems.append(f"{name!r} names two items: every name once")
        seen.add(name)
    cables = _cables(data, seen, problems)
    if problems:
        return None, tuple(f"{path}: {p}" for p in problems)
    return Geometry(path, table, model, antennas, areas, devices, cables), ()
