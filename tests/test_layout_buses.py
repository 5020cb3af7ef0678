"""The cable runs' limits (firmware_bridge/layout/buses.py) and the figures the hardware
guide quotes from them: one bus, one clock and one maximum run in wiring.md, layout.md,
field-model.md, build.md and bom.md, each from the code and the club build's reader config."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_bridge.layout.buses import load_limit, run_limit
from firmware_bridge.layout.geometry import Geometry, load_geometry
from firmware_bridge.layout.readermap import ReaderMap, read_reader_map
from firmware_bridge.layout.rules import line_uses, reach, tag_zones

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs" / "hardware"
GUIDE = ("wiring.md", "layout.md", "field-model.md", "build.md", "bom.md", "README.md")


def _club() -> tuple[Geometry, ReaderMap]:
    geometry, _ = load_geometry(ROOT / "hw_configs" / "geometry-club.toml")
    config, _ = read_reader_map(ROOT / "hw_configs" / "table-club.toml")
    assert geometry is not None and config is not None
    return geometry, config


def _doc(name: str) -> str:
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def test_the_limits_scale_with_the_clock() -> None:
    assert run_limit("spi", clock=4e6) == 1000.0
    assert run_limit("spi", clock=1e6) == 3000.0       # 4 m by the period, capped at 3 m
    assert run_limit("spi", clock=10e6) == 400.0
    budget_1, budget_4 = load_limit("spi", clock=1e6), load_limit("spi", clock=4e6)
    assert budget_1 is not None and budget_4 is not None
    assert budget_1 == pytest.approx(4 * budget_4)
    assert round(budget_1) == 1136 and round(budget_4) == 284
    assert run_limit("spi", "pico") == 1000.0     # the 4 MHz `firmware flash` gives a Pico


def test_the_club_build_is_one_line_at_one_clock() -> None:
    geometry, config = _club()
    assert {bus.line for bus in config.buses.values()} == {"spi0"}
    assert {bus.clock for bus in config.buses.values()} == {1e6}
    assert {c.line for c in geometry.cables if c.bus == "spi"} == {"spi0"}


def test_wiring_md_says_the_clock_the_bus_and_the_maximum_run_the_code_gives() -> None:
    geometry, config = _club()
    clock = next(iter(config.buses.values())).clock
    spi0 = next(u for u in line_uses(geometry, config) if u.line == "spi0")
    assert spi0.budget is not None
    shortest = min(c.length for c in geometry.cables if c.bus == "spi")
    wiring = _doc("wiring.md")
    assert (f"**One bus, one clock: all nine modules on SPI0 at {clock / 1e6:g} MHz** "
            f"(`speed_hz={clock:.0f}`") in wiring
    assert f"**at most {run_limit('spi', clock=clock) / 1000:g} m a run**" in wiring
    assert f"capacitance budget of {spi0.budget:.0f} pF at {clock / 1e6:g} MHz" in wiring
    assert (f"runs are {shortest:.0f}-{spi0.longest:.0f} mm (its longest, "
            f"{spi0.longest:.0f} mm, to a call spot; {spi0.cable:.0f} mm of cable on the line, "
            f"{spi0.load:.0f} pF)") in wiring
    four = load_limit("spi", clock=4e6)
    assert four is not None and spi0.load > four      # why the URLs set the clock
    assert f"would allow ({four:.0f} pF)" in wiring


@pytest.mark.parametrize(("build", "line", "row"), [
    ("club", "spi0", "| club | spi0 (all nine modules, 1 MHz) |"),
    ("boards", "spi N", "| boards | each Pico's SPI (4 MHz) |"),
])
def test_field_model_md_quotes_each_line_as_the_check_computes_it(build: str, line: str,
                                                                    row: str) -> None:
    geometry, _ = load_geometry(ROOT / "hw_configs" / f"geometry-{build}.toml")
    assert geometry is not None
    use = next(u for u in line_uses(geometry) if u.line == line)
    assert use.budget is not None
    assert (f"{row} {use.runs} | {use.longest:.0f} mm | {use.run_limit:.0f} mm | "
            f"{use.load:.0f} pF | {use.budget:.0f} pF |") in _doc("field-model.md")


def test_layout_md_and_build_md_give_the_wallets_clearance_the_check_computes() -> None:
    geometry, _ = _club()
    board = geometry.antenna("board")
    assert board is not None
    distances = {name: zone.distance_to(board.x, board.y)
                 for name, zone, owner in tag_zones(geometry) if owner != "board"}
    limit = reach(geometry, board)[1]
    layout = _doc("layout.md")
    assert (f"| board reader | the wallet's nearest edge (in its place) | "
            f"{distances['wallet']:g} mm | {limit:g} mm |") in layout
    assert (f"| board reader | the nearest card of dummy N's area | "
            f"{distances['dummy N']:g} mm | {limit:g} mm |") in layout
    assert min(distances.values()) == distances["wallet"]
    assert f"{board.y:g} mm north of the centre" in _doc("build.md")
    assert f"nearest edge is {distances['wallet']:g} mm from the board reader's loop" \
        in _doc("build.md")


@pytest.mark.parametrize("name", GUIDE)
def test_no_page_of_the_guide_keeps_the_old_bus_plan(name: str) -> None:
    text = _doc(name)
    for old in ("60 cm", "SPI0 and SPI1", "spi1 (", "650 mm"):
        assert old not in text, (name, old)
