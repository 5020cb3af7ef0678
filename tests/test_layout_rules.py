"""The design-rule check (firmware_bridge/layout/rules.py, ``bridge-table layout check``):
both shipped geometries pass; each planted violation (tests/data/layout/) fails naming its
rule and its numbers; the reader config and the geometry are checked both ways; a broken
file is a usage error, never a traceback."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from firmware_bridge.layout.cli import main
from firmware_bridge.layout.geometry import load_geometry
from firmware_bridge.layout.rules import RULES, check

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "layout"
SHIPPED = sorted((ROOT / "hw_configs").glob("geometry-*.toml"))

#: planted file -> what its finding must say (the rule, then the numbers)
PLANTED = {
    "off-table": r"^off-table: trick row N reaches 30 mm beyond the table's edge \(850 x 850",
    "overlap": r"^overlap: spot N bid and call row N overlap on the top by 22 x 30 mm",
    "row-in-range": r"^cross-read: a tag in trick row N can lie 62 mm from antenna N spot's "
                    r"centre, within its reach of 79 mm \(69 mm at 4.5 mm height",
    "dummy-over-board": r"^cross-read: a tag in dummy N can lie 0 mm from antenna board's "
                        r"centre, within its reach of 44 mm",
    "spot-read": r"^spot-read: a tag 17 mm off the centre of spot board, 25 mm above its "
                 r"loop, gets 0.63 A/m < 1.5 A/m",
    "spot-size": r"^spot-size: spot N spot is 55 x 85 mm, smaller than a playing card "
                 r"\(57 x 89 mm\)",
    "metal": r"^metal: loop N bid lies 5 mm from the steel frame \(40 mm wide\), under the "
             r"20 mm clearance",
    "bus-length": r"^bus-length: the spi run pi -> N spot is 1400 mm, over the 1000 mm a run "
                  r"may be at 4 MHz",
    "bus-load": r"^bus-load: line spi0: 9 runs, 4500 mm of cable, 325 pF, over the 284 pF",
    "cable-short": r"^cable-short: the spi run pi -> N spot is 300 mm, shorter than the 432 mm",
}


def test_two_builds_are_shipped() -> None:
    assert [p.name for p in SHIPPED] == ["geometry-boards.toml", "geometry-club.toml"]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_each_shipped_geometry_passes_every_rule(path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    geometry, problems = load_geometry(path)
    assert problems == () and geometry is not None
    assert check(geometry) == []
    assert main(["check", str(path)]) == 0
    assert "passes every design rule" in capsys.readouterr().out


def test_every_rule_has_a_planted_violation() -> None:
    rules = {re.match(r"\^([a-z-]+):", pattern).group(1)  # type: ignore[union-attr]
             for pattern in PLANTED.values()}
    assert rules == set(RULES) - {"config"}
    assert sorted(p.stem for p in DATA.glob("*.toml") if not p.stem.startswith("table-")) \
        == sorted(PLANTED)


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_a_planted_violation_fails_with_its_rule_and_numbers(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(DATA / f"{name}.toml")]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert any(re.match(PLANTED[name], line) for line in lines), lines


def test_the_geometry_holds_dummys_cards_clear_of_every_antenna_and_the_rows_at_the_corners(
) -> None:
    """Law 41D: dummy's 13 cards are spread in front of dummy; here in their own area, away
    from dummy's spots, and the rows of one seat keep off the next seat's spots."""
    for path in SHIPPED:
        geometry, _ = load_geometry(path)
        assert geometry is not None
        for seat in "NESW":
            dummy = geometry.area("dummy", seat)
            assert dummy is not None
            # four suit columns of cards, pointing at declarer
            assert dummy.rect.width >= 4 * 57 or dummy.rect.height >= 4 * 57
        for antenna in geometry.antennas:
            for area in geometry.areas:
                assert not area.rect.overlaps(antenna.spot), (area.name, antenna.name)


def test_the_reader_config_and_the_geometry_agree_both_ways(
        capsys: pytest.CaptureFixture[str]) -> None:
    club = ROOT / "hw_configs" / "geometry-club.toml"
    boards = ROOT / "hw_configs" / "geometry-boards.toml"
    assert main(["check", str(club), "--config", str(DATA / "table-club.toml")]) == 0
    assert main(["check", str(boards), "--config", str(DATA / "table-boards.toml")]) == 0
    capsys.readouterr()
    assert main(["check", str(club), "--config", str(DATA / "table-club-swapped.toml")]) == 1
    out = capsys.readouterr().out
    assert "config: reader north-call antenna 0 (bid, seat N) is in the geometry but not in " \
           "table-club-swapped.toml" in out
    assert "config: reader north-call antenna 0 (bid, seat E) is in table-club-swapped.toml " \
           "but not in the geometry" in out


@pytest.mark.parametrize("build", ["club", "boards"])
def test_the_shipped_reader_config_agrees_with_its_geometry(
        build: str, capsys: pytest.CaptureFixture[str]) -> None:
    config = ROOT / "hw_configs" / f"table-{build}.toml"
    if not config.exists():
        pytest.skip(f"{config.name} is not in this tree yet")
    assert main(["check", str(ROOT / "hw_configs" / f"geometry-{build}.toml"),
                 "--config", str(config)]) == 0, capsys.readouterr().out


@pytest.mark.parametrize(("text", "says"), [
    ("not toml [", "not valid TOML"),
    ("[table]\nname = 'x'\nwidth = 850\n", "table.depth: missing"),
    ("[table]\nname = 'x'\nwidth = 850\ndepth = 850\ncolour = 'red'\n", "table.colour: "
                                                                        "unknown key"),
    ("[table]\nname = 'x'\nwidth = 850\ndepth = 850\n[[cables]]\nfrom = 'pi'\nto = 'x'\n"
     "bus = 'spi'\ndriver = 'pi'\nlength = 10\n", "cables[0].from: 'pi' names no antenna"),
    ("[table]\nname = 'x'\nwidth = 850\ndepth = 850\n[[antennas]]\nzone = 'spot'\n"
     "reader = 'r'\nantenna = 0\nat = [0, 0]\nspot = [65, 92]\n", "antennas[0].seat: missing"),
])
def test_a_broken_geometry_is_a_usage_error_naming_the_key(
        tmp_path: Path, text: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 2
    assert says in capsys.readouterr().err


def test_a_missing_reader_config_is_a_usage_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    club = ROOT / "hw_configs" / "geometry-club.toml"
    assert main(["check", str(club), "--config", str(tmp_path / "none.toml")]) == 2
    assert "cannot read the file" in capsys.readouterr().err
