"""The field of a reader's loop antenna and where it reads a tag: pure math, no I/O.

The loop is a rectangle of ``turns`` coincident turns carrying ``current`` amperes (RMS) at
13.56 MHz; its magnetic field strength H (A/m) at any point is Biot-Savart's law summed over
the four straight sides (the quasi-static near field: the wavelength, 22 m, is far larger
than the table). A tag lies flat above the loop, parallel to it, and couples to the flux
through its own coil: it answers when the normal field averaged over its coil's area reaches
``h_min`` (ISO/IEC 14443-2's Hmin, 1.5 A/m RMS, the least field a compliant tag must work
in; the NTAG21x data sheet declares ISO/IEC 14443 Type A compliance and gives no other
figure). docs/hardware/field-model.md has the equations, the parameters, their sources, the
calibration and what is not proven on hardware.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

__all__ = [
    "Loop", "Tag", "Drive", "field", "mean_normal_field", "reads", "read_range",
    "lateral_reach", "calibrated_drives", "MFRC522_LOOP", "NTAG_STICKER",
    "H_MIN", "CALIBRATION_RANGES_MM", "NOMINAL_DRIVE",
]

#: ISO/IEC 14443-2, 6.2: Hmin = 1.5 A/m (RMS), the least field a PICC must operate in
H_MIN = 1.5


@dataclass(frozen=True)
class Loop:
    """A rectangular loop: ``width`` x ``length`` mm (the mean turn), ``turns`` turns."""

    width: float
    length: float
    turns: int


@dataclass(frozen=True)
class Tag:
    """A tag's coil: a disc of ``diameter`` mm (its mean turn), or a rectangle when
    ``length`` is given (a card-sized inlay: ``diameter`` x ``length``)."""

    diameter: float
    length: float | None = None


@dataclass(frozen=True)
class Drive:
    """The RMS current in the loop (A) and the field a tag needs (A/m)."""

    current: float
    h_min: float = H_MIN


#: the RFID-RC522 module's PCB loop (its 60 x 40 mm board carries the loop on one half):
#: a mean turn of about 40 x 30 mm, 4 turns (read off the module's layout, not measured
#: here; docs/hardware/field-model.md)
MFRC522_LOOP = Loop(width=40.0, length=30.0, turns=4)
#: a 25 mm round NTAG213 sticker: its coil's mean turn about 20 mm across
NTAG_STICKER = Tag(diameter=20.0)
#: the MFRC522 data sheet's transmitter supply current: 60 mA typical (ITVDD); with the
#: modules' series matching the loop carries about that current
NOMINAL_DRIVE = Drive(current=0.060)
#: the published free-air read range of a stock RC522 module with a 25 mm NTAG213 sticker,
#: on the loop's axis: 20-30 mm (docs/hardware/field-model.md, "Calibration")
CALIBRATION_RANGES_MM = (20.0, 25.0, 30.0)

Vec = tuple[float, float, float]


def _segment(a: Vec, b: Vec, p: Vec) -> Vec:
    """H (per ampere, A/m per A, inputs in metres) at ``p`` of a straight wire a -> b."""
    r1 = (a[0] - p[0], a[1] - p[1], a[2] - p[2])
    r2 = (b[0] - p[0], b[1] - p[1], b[2] - p[2])
    n1 = math.sqrt(r1[0] ** 2 + r1[1] ** 2 + r1[2] ** 2)
    n2 = math.sqrt(r2[0] ** 2 + r2[1] ** 2 + r2[2] ** 2)
    cross = (r1[1] * r2[2] - r1[2] * r2[1], r1[2] * r2[0] - r1[0] * r2[2],
             r1[0] * r2[1] - r1[1] * r2[0])
    dot = r1[0] * r2[0] + r1[1] * r2[1] + r1[2] * r2[2]
    denominator = n1 * n2 * (n1 * n2 + dot)
    if denominator <= 1e-30:     # on the wire's line
        return (0.0, 0.0, 0.0)
    k = (n1 + n2) / (4 * math.pi * denominator)
    return (k * cross[0], k * cross[1], k * cross[2])


def field(loop: Loop, current: float, x: float, y: float, z: float) -> Vec:
    """H (A/m) at (x, y, z) mm from the loop's centre (z above its plane), the loop in the
    plane z = 0, its sides along x (``width``) and y (``length``), current anticlockwise."""
    hx, hy = loop.width / 2000, loop.length / 2000
    corners = ((-hx, -hy, 0.0), (hx, -hy, 0.0), (hx, hy, 0.0), (-hx, hy, 0.0))
    p = (x / 1000, y / 1000, z / 1000)
    total = [0.0, 0.0, 0.0]
    for i in range(4):
        h = _segment(corners[i], corners[(i + 1) % 4], p)
        total[0] += h[0]
        total[1] += h[1]
        total[2] += h[2]
    scale = current * loop.turns
    return (total[0] * scale, total[1] * scale, total[2] * scale)


def _tag_points(tag: Tag) -> tuple[tuple[float, float, float], ...]:
    """(dx, dy, weight) sample points over the tag's coil area, weights summing to 1."""
    if tag.length is not None:
        nx, ny = 5, 7
        return tuple((((i + 0.5) / nx - 0.5) * tag.diameter,
                      ((j + 0.5) / ny - 0.5) * tag.length, 1 / (nx * ny))
                     for i in range(nx) for j in range(ny))
    r = tag.diameter / 2
    points: list[tuple[float, float, float]] = [(0.0, 0.0, (r / 3) ** 2 / r ** 2)]
    # two rings, each standing for the annulus around it (area-weighted)
    for inner, outer, count in ((r / 3, 2 * r / 3, 6), (2 * r / 3, r, 12)):
        middle = (inner + outer) / 2
        weight = (outer ** 2 - inner ** 2) / r ** 2 / count
        for k in range(count):
            angle = 2 * math.pi * k / count
            points.append((middle * math.cos(angle), middle * math.sin(angle), weight))
    return tuple(points)


def mean_normal_field(loop: Loop, current: float, tag: Tag, x: float, y: float,
                      z: float) -> float:
    """The normal field Hz (A/m) averaged over the coil of a tag centred at (x, y, z) mm,
    lying flat: what sets the voltage induced in it (its flux)."""
    return sum(w * field(loop, current, x + dx, y + dy, z)[2]
               for dx, dy, w in _tag_points(tag))


def reads(loop: Loop, drive: Drive, tag: Tag, x: float, y: float, z: float) -> bool:
    """Whether a tag centred at (x, y, z) mm from the loop's centre answers."""
    return abs(mean_normal_field(loop, drive.current, tag, x, y, z)) >= drive.h_min


@lru_cache(maxsize=256)
def read_range(loop: Loop, drive: Drive, tag: Tag) -> float:
    """The height (mm) above the loop's centre up to which a tag on its axis answers (0: none
    at all), to 0.1 mm."""
    if not reads(loop, drive, tag, 0, 0, 0.5):
        return 0.0
    low, high = 0.5, 0.5
    while reads(loop, drive, tag, 0, 0, high):
        low, high = high, high * 2
        if high > 2000:
            return math.inf
    while high - low > 0.1:
        middle = (low + high) / 2
        low, high = (middle, high) if reads(loop, drive, tag, 0, 0, middle) else (low, middle)
    return round(low, 1)


#: directions (degrees from the loop's width axis) the lateral reach is searched along;
#: the rectangle is symmetric about both axes, so one quadrant covers every direction
_DIRECTIONS = (0.0, 22.5, 45.0, 67.5, 90.0)


@lru_cache(maxsize=256)
def lateral_reach(loop: Loop, drive: Drive, tag: Tag, z: float, step: float = 1.0,
                  limit: float = 250.0) -> float:
    """The farthest distance (mm, in any direction, from the loop's centre to the tag's)
    at which a tag lying flat at height ``z`` mm still answers; 0 when none answers there.
    Beyond the loop's edge the field turns round (the return flux) and a tag may answer
    again a little farther out: the farthest point of every lobe counts."""
    farthest = 0.0
    for degrees in _DIRECTIONS:
        c, s = math.cos(math.radians(degrees)), math.sin(math.radians(degrees))
        d = 0.0
        while d <= limit:
            if reads(loop, drive, tag, d * c, d * s, z):
                farthest = max(farthest, d)
            d += step
    return farthest


def _current_for_range(loop: Loop, tag: Tag, range_mm: float, h_min: float) -> float:
    """The loop current (A) whose on-axis read range for ``tag`` is ``range_mm``."""
    hz = mean_normal_field(loop, 1.0, tag, 0.0, 0.0, range_mm)   # per ampere
    return h_min / abs(hz)


@lru_cache(maxsize=16)
def calibrated_drives(loop: Loop = MFRC522_LOOP, tag: Tag = NTAG_STICKER,
                      ranges: tuple[float, float, float] = CALIBRATION_RANGES_MM,
                      h_min: float = H_MIN) -> tuple[Drive, Drive, Drive]:
    """(low, middle, high) drives whose on-axis ranges for ``tag`` are the published
    ``ranges``: the design rules use the high one (the farthest an antenna may read)."""
    low, middle, high = (replace(Drive(_current_for_range(loop, tag, r, h_min)), h_min=h_min)
                         for r in ranges)
    return low, middle, high
