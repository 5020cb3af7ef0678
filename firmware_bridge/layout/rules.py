"""The design rules a table's geometry must pass, each finding a value naming its rule and
its numbers (``bridge-table layout check``; docs/hardware/layout.md lists the rules).

Where a tag can lie: a card's tag is at the centre of its back, so in a row, dummy's area or
the tray a tag lies at least half a card's width inside the area's edge; on a spot, within
the recess's slack around its centre; the wallet's sticker anywhere in the wallet's place. An
antenna reads as far as the field model's upper band says (the calibration's longest
published range) plus the geometry's margin.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from firmware_bridge.layout.buses import line_load, load_limit, run_limit, spi_clock
from firmware_bridge.layout.field import lateral_reach, mean_normal_field
from firmware_bridge.layout.geometry import Antenna, Cable, Geometry, Rect
from firmware_bridge.layout.readermap import ReaderMap, read_reader_map

__all__ = ["Finding", "check", "agree", "reach", "tag_zones", "RULES", "named_config",
           "LineUse", "line_uses"]

#: every rule, and what it holds the geometry to
RULES = {
    "off-table": "every area, spot, loop and device lies on the table",
    "overlap": "no two areas, spots or top devices share table; no two boards under it do",
    "cross-read": "no tag lies where an antenna other than its own reads it",
    "spot-read": "a card laid anywhere in its spot's recess is read (the model's low band)",
    "spot-size": "a spot's recess takes the card laid on it",
    "metal": "no loop within the clearance of the steel frame or a board's ground plane",
    "bus-length": "no run longer than its bus allows at its clock",
    "bus-load": "no line carrying more capacitance than its driver charges in time",
    "cable-short": "no run shorter than the distance between its ends",
    "config": "the reader config maps the same readers, antennas, seats and zones, and "
              "drives each SPI run on the geometry's line and by its driver",
}


@dataclass(frozen=True)
class Finding:
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


def reach(geometry: Geometry, antenna: Antenna) -> tuple[float, float]:
    """(the model's lateral reach at the antenna's depth, that plus the margin), mm."""
    model = geometry.model
    lateral = lateral_reach(model.loop, model.drives[2], model.tag, antenna.depth)
    return lateral, lateral + model.margin


def _spot_zone(geometry: Geometry, antenna: Antenna) -> Rect:
    card = geometry.table.call_card if antenna.zone == "bid" else geometry.table.card
    if antenna.zone == "board":
        return antenna.spot
    short, long = sorted(card)
    spot = antenna.spot
    dx, dy = (long / 2, short / 2) if spot.width >= spot.height else (short / 2, long / 2)
    return spot.inset(dx, dy)


def tag_zones(geometry: Geometry) -> Iterator[tuple[str, Rect, str | None]]:
    """(name, where a tag can lie, the antenna that owns it or None) for every place a tag
    rests on the table."""
    for antenna in geometry.antennas:
        yield f"spot {antenna.name}", _spot_zone(geometry, antenna), antenna.name
    for area in geometry.areas:
        if area.kind == "wallet":      # the wallet's sticker anywhere on it
            yield area.name, area.rect, None
            continue
        half = (geometry.table.call_card if area.kind == "call_row"
                else geometry.table.card)[0] / 2
        yield area.name, area.rect.inset(half, half), None


def _off_table(geometry: Geometry) -> Iterator[Finding]:
    table = geometry.table.rect
    items: list[tuple[str, Rect]] = [(f"spot {a.name}", a.spot) for a in geometry.antennas]
    items += [(f"loop {a.name}", a.loop) for a in geometry.antennas]
    items += [(a.name, a.rect) for a in geometry.areas]
    items += [(d.name, d.rect) for d in geometry.devices]
    for name, rect in items:
        if not rect.inside(table):
            over = max(table.x0 - rect.x0, rect.x1 - table.x1, table.y0 - rect.y0,
                       rect.y1 - table.y1)
            yield Finding("off-table", f"{name} reaches {over:.0f} mm beyond the table's "
                                       f"edge ({geometry.table.width:.0f} x "
                                       f"{geometry.table.depth:.0f} mm)")


def _overlap(geometry: Geometry) -> Iterator[Finding]:
    top: list[tuple[str, Rect]] = [(f"spot {a.name}", a.spot) for a in geometry.antennas]
    top += [(a.name, a.rect) for a in geometry.areas]
    top += [(d.name, d.rect) for d in geometry.devices if d.on_top]
    under: list[tuple[str, Rect]] = [(f"loop {a.name}", a.loop) for a in geometry.antennas]
    under += [(d.name, d.rect) for d in geometry.devices if not d.on_top]
    for layer, items in (("on the top", top), ("under the top", under)):
        for (n1, r1), (n2, r2) in itertools.combinations(items, 2):
            if r1.overlaps(r2):
                w = min(r1.x1, r2.x1) - max(r1.x0, r2.x0)
                h = min(r1.y1, r2.y1) - max(r1.y0, r2.y0)
                yield Finding("overlap", f"{n1} and {n2} overlap {layer} by {w:.0f} x "
                                         f"{h:.0f} mm")


def _cross_read(geometry: Geometry) -> Iterator[Finding]:
    zones = list(tag_zones(geometry))
    for antenna in geometry.antennas:
        lateral, limit = reach(geometry, antenna)
        for name, zone, owner in zones:
            if owner == antenna.name:
                continue
            d = zone.distance_to(antenna.x, antenna.y)
            if d < limit:
                yield Finding("cross-read",
                              f"a tag in {name} can lie {d:.0f} mm from antenna "
                              f"{antenna.name}'s centre, within its reach of {limit:.0f} mm "
                              f"({lateral:.0f} mm at {antenna.depth:g} mm height, the field "
                              f"model's upper band, + {geometry.model.margin:g} mm margin)")


def _relative(antenna: Antenna, x: float, y: float) -> tuple[float, float]:
    """A table point relative to the loop's centre, in the loop's own axes."""
    dx, dy = x - antenna.x, y - antenna.y
    return (dy, dx) if antenna.turned else (dx, dy)


def _spot_read(geometry: Geometry) -> Iterator[Finding]:
    model = geometry.model
    low = model.drives[0]
    for antenna in geometry.antennas:
        zone = _spot_zone(geometry, antenna)
        corners = {(zone.x0, zone.y0), (zone.x1, zone.y0), (zone.x0, zone.y1),
                   (zone.x1, zone.y1), zone.centre}
        for x, y in sorted(corners):
            dx, dy = _relative(antenna, x, y)
            h = abs(mean_normal_field(model.loop, low.current, model.tag, dx, dy,
                                      antenna.depth))
            if h < low.h_min:
                yield Finding("spot-read",
                              f"a tag {math.hypot(dx, dy):.0f} mm off the centre of spot "
                              f"{antenna.name}, {antenna.depth:g} mm above its loop, gets "
                              f"{h:.2f} A/m < {low.h_min:g} A/m (the field model's low band)")
                break


def _spot_size(geometry: Geometry) -> Iterator[Finding]:
    for antenna in geometry.antennas:
        if antenna.zone == "board":
            continue
        card = geometry.table.call_card if antenna.zone == "bid" else geometry.table.card
        need = sorted(card)
        have = sorted((antenna.spot.width, antenna.spot.height))
        if have[0] < need[0] or have[1] < need[1]:
            what = "a bidding-box card" if antenna.zone == "bid" else "a playing card"
            yield Finding("spot-size", f"spot {antenna.name} is {have[0]:g} x {have[1]:g} mm, "
                                       f"smaller than {what} ({need[0]:g} x {need[1]:g} mm)")


def _metal(geometry: Geometry) -> Iterator[Finding]:
    table, model = geometry.table, geometry.model
    clearance = model.metal_clearance
    for antenna in geometry.antennas:
        loop = antenna.loop
        if table.frame == "steel":
            inner = table.rect.inset(table.frame_width, table.frame_width)
            gap = min(loop.x0 - inner.x0, inner.x1 - loop.x1, loop.y0 - inner.y0,
                      inner.y1 - loop.y1)
            if gap < clearance:
                yield Finding("metal", f"loop {antenna.name} lies {gap:.0f} mm from the steel "
                                       f"frame ({table.frame_width:g} mm wide), under the "
                                       f"{clearance:g} mm clearance")
        for device in geometry.devices:
            if device.metal and loop.gap(device.rect) < clearance:
                yield Finding("metal", f"loop {antenna.name} lies {loop.gap(device.rect):.0f} mm"
                                       f" from {device.name}, under the {clearance:g} mm "
                                       "clearance")


@dataclass(frozen=True)
class _Run:
    """One cable run as the rules check it: its line and clock from the reader config when
    the config's URL gives them, else the geometry's."""

    cable: Cable
    line: str
    clock: float | None        # Hz, SPI runs only
    why: str                   # where the clock comes from


def _runs(geometry: Geometry, config: ReaderMap | None) -> tuple[list[_Run], list[Finding]]:
    """Every run at its line and clock, and where the config's URLs disagree with the
    geometry's lines and drivers."""
    runs: list[_Run] = []
    found: list[Finding] = []
    for cable in geometry.cables:
        if cable.bus != "spi":
            runs.append(_Run(cable, cable.line, None, ""))
            continue
        ends = (geometry.antenna(cable.target), geometry.antenna(cable.source))
        antenna = next((a for a in ends if a is not None), None)
        bus = None if config is None or antenna is None else config.buses.get(antenna.reader)
        if bus is None or antenna is None or config is None:
            why = ("the reader firmware's clock" if cable.driver == "pico"
                   else "the Pi driver's default")
            runs.append(_Run(cable, cable.line, spi_clock(cable.driver), why))
            continue
        where = f"reader {antenna.reader} in {config.name}: {config.urls[antenna.reader]}"
        run = f"the spi run {cable.source} -> {cable.target}"
        if bus.driver != cable.driver:
            found.append(Finding("config", f"{run} is clocked by the {cable.driver} in the "
                                           f"geometry, by the {bus.driver} in {where}"))
        # a reader board's chips are on its own line, whatever the geometry drew
        line = bus.line or (cable.line if bus.driver == cable.driver
                            else f"{antenna.reader}'s own SPI")
        if bus.line is not None and line != cable.line:
            found.append(Finding("config", f"{run} is on line {cable.line} in the geometry, "
                                           f"on {line} in {where}"))
        runs.append(_Run(cable, line, bus.clock,
                         f"{bus.why} of reader {antenna.reader} in {config.name}"))
    return runs, found


def _at(clock: float | None, why: str) -> str:
    return "" if clock is None else f" at {clock / 1e6:g} MHz ({why})"


@dataclass(frozen=True)
class LineUse:
    """What one line's runs ask of it, at its fastest run's clock (docs/hardware/
    field-model.md, "Cable runs", quotes these)."""

    line: str
    bus: str
    runs: int
    longest: float          # mm
    cable: float            # mm, every run together
    clock: float | None     # Hz, SPI only
    why: str                # where the clock comes from
    run_limit: float        # mm
    load: float             # pF
    budget: float | None    # pF, None where only run lengths count


def _line_uses(runs: list[_Run]) -> list[LineUse]:
    lines: dict[str, list[_Run]] = defaultdict(list)
    for run in runs:
        lines[run.line].append(run)
    uses: list[LineUse] = []
    for line, members in sorted(lines.items()):
        bus = members[0].cable.bus
        fastest = max(members, key=lambda r: r.clock or 0.0)   # it sets the line's budget
        lengths = [r.cable.length for r in members]
        uses.append(LineUse(line, bus, len(members), max(lengths), sum(lengths), fastest.clock,
                            fastest.why, run_limit(bus, fastest.cable.driver, fastest.clock),
                            line_load(bus, lengths),
                            load_limit(bus, fastest.cable.driver, fastest.clock)))
    return uses


def line_uses(geometry: Geometry, config: ReaderMap | None = None) -> list[LineUse]:
    """Every line of the geometry at the clock its reader config gives (by default the
    config the geometry names; the drivers' defaults without one)."""
    if config is None and (path := named_config(geometry)) is not None:
        config, _ = read_reader_map(path)
    return _line_uses(_runs(geometry, config)[0])


def _cables(geometry: Geometry, runs: list[_Run]) -> Iterator[Finding]:
    for run in runs:
        cable = run.cable
        ends = geometry.place(cable.source), geometry.place(cable.target)
        if ends[0] is not None and ends[1] is not None:
            straight = math.dist(ends[0], ends[1])
            if cable.length < straight:
                yield Finding("cable-short", f"the {cable.bus} run {cable.source} -> "
                                             f"{cable.target} is {cable.length:g} mm, shorter "
                                             f"than the {straight:.0f} mm between its ends")
        limit = run_limit(cable.bus, cable.driver, run.clock)
        if cable.length > limit:
            yield Finding("bus-length", f"the {cable.bus} run {cable.source} -> {cable.target}"
                                        f" is {cable.length:g} mm, over the {limit:.0f} mm a "
                                        f"run may be{_at(run.clock, run.why)}")
    for use in _line_uses(runs):
        if use.budget is not None and use.load > use.budget:
            yield Finding("bus-load", f"line {use.line}: {use.runs} runs, {use.cable:.0f} mm"
                                      f" of cable, {use.load:.0f} pF, over the "
                                      f"{use.budget:.0f} pF it may carry"
                                      f"{_at(use.clock, use.why)}")


def named_config(geometry: Geometry) -> Path | None:
    """The reader config the geometry names (``[table] config``), beside the geometry."""
    if geometry.table.config is None:
        return None
    return geometry.path.parent / geometry.table.config


def check(geometry: Geometry, config: ReaderMap | None = None) -> list[Finding]:
    """Every design rule's findings; none for a sound geometry. With a reader config (by
    default the one the geometry names), each SPI run is checked at the line and clock the
    config's URL gives it, and the config's antenna map must be the geometry's."""
    found: list[Finding] = []
    if config is None and (path := named_config(geometry)) is not None:
        config, problem = read_reader_map(path)
        if problem is not None:
            found.append(Finding("config", problem))
    runs, disagree = _runs(geometry, config)
    found += [*_off_table(geometry), *_overlap(geometry), *_cross_read(geometry),
              *_spot_read(geometry), *_spot_size(geometry), *_metal(geometry),
              *_cables(geometry, runs)]
    if config is not None:
        found += disagree + agree(geometry, set(config.antennas), config.name)
    return found


def agree(geometry: Geometry, mapped: set[tuple[str, int, str, str | None]],
          config: str) -> list[Finding]:
    """Findings where the geometry and a reader config's antenna map differ, both ways."""
    placed = {(a.reader, a.antenna, a.zone, a.seat) for a in geometry.antennas}

    def say(item: tuple[str, int, str, str | None]) -> str:
        reader, antenna, zone, seat = item
        return f"reader {reader} antenna {antenna} ({zone}{', seat ' + seat if seat else ''})"

    found = [Finding("config", f"{say(item)} is in the geometry but not in {config}")
             for item in sorted(placed - mapped, key=str)]
    found += [Finding("config", f"{say(item)} is in {config} but not in the geometry")
              for item in sorted(mapped - placed, key=str)]
    return found
