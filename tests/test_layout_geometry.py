"""The geometry file's loader (firmware_bridge/layout/geometry.py): a seat's items turned
into the table frame, the names it knows, and problems collected, never raised."""

from __future__ import annotations

from pathlib import Path

import pytest

from firmware_bridge.layout.geometry import Rect, load_geometry, seat_rect

ROOT = Path(__file__).resolve().parents[1]


def test_a_seats_item_is_the_norths_turned_a_quarter_at_a_time() -> None:
    geometry, problems = load_geometry(ROOT / "hw_configs" / "geometry-club.toml")
    assert geometry is not None, problems
    table = geometry.table
    rects = {seat: seat_rect(table, seat, (40, 95), (65, 92)) for seat in "NESW"}
    assert rects["N"] == Rect(7.5, 284.0, 72.5, 376.0)     # x = u, y = 425 - v
    assert rects["E"] == Rect(284.0, -72.5, 376.0, -7.5)   # x = 425 - v, y = -u
    assert rects["S"] == Rect(-72.5, -376.0, -7.5, -284.0)
    assert rects["W"] == Rect(-376.0, 7.5, -284.0, 72.5)
    spots = {a.seat: a for a in geometry.antennas if a.zone == "spot"}
    assert {seat: spots[seat].spot for seat in "NESW"} == rects
    # the loop's long side runs along the edge: along x for N and S, turned for E and W
    assert [spots[seat].turned for seat in "NESW"] == [False, True, False, True]


def test_places_are_found_by_name() -> None:
    geometry, _ = load_geometry(ROOT / "hw_configs" / "geometry-boards.toml")
    assert geometry is not None
    assert geometry.place("board") == (0.0, 104.0)
    assert geometry.place("wallet") == (0.0, 0.0)
    assert geometry.table.config == "table-boards.toml"
    assert geometry.place("pico N") == (-15.0, 265.0)
    assert geometry.place("nowhere") is None
    assert geometry.area("trick_row", "S") is not None


def test_every_problem_of_a_file_is_collected(tmp_path: Path) -> None:
    path = tmp_path / "g.toml"
    path.write_text("[table]\nname = 'x'\nwidth = -1\ndepth = 'deep'\n"
                    "[[antennas]]\nseat = 'Q'\nzone = 'spot'\nreader = 'r'\nantenna = -1\n"
                    "at = [0]\nspot = [65, 92]\n"
                    "[[antennas]]\nseat = 'N'\nzone = 'board'\nreader = 'r'\nantenna = 0\n"
                    "at = [0, 0]\nspot = [24, 24]\n"
                    "[extra]\n", encoding="utf-8")
    geometry, problems = load_geometry(path)
    assert geometry is None
    said = "\n".join(problems)
    for part in ("table.width: must be above 0", "table.depth: must be a number",
                 "antennas[0].seat: 'Q' is not one of N, E, S, W",
                 "antennas[0].antenna: must be a whole number", "antennas[0].at: must be two",
                 "antennas[1].seat: the board reader belongs to no seat",
                 "extra: unknown section"):
        assert part in said, said


@pytest.mark.parametrize("text", ["", "\x00\x01binary", "[table]\nname = 1\n"])
def test_a_file_that_is_not_a_geometry_gives_problems_not_a_traceback(
        tmp_path: Path, text: str) -> None:
    path = tmp_path / "g.toml"
    path.write_text(text, encoding="utf-8")
    geometry, problems = load_geometry(path)
    assert geometry is None and problems
