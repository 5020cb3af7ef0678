"""The design-rule check (firmware_bridge/layout/rules.py, ``bridge-table layout check``):
both shipped geometries pass; each planted violation (tests/data/layout/) fails naming its
rule and its numbers; the reader config and the geometry are checked both ways; a broken
file is a usage error, never a traceback."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from firmware_bridge.layout.cli import main
from firmware_bridge.layout.geometry import load_geometry
from firmware_bridge.layout.readermap import ReaderBus, read_reader_map, reader_bus
from firmware_bridge.layout.rules import RULES, check, named_config, reach

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
    "wallet-in-range": r"^cross-read: a tag in wallet can lie 27 mm from antenna board's "
                       r"centre, within its reach of 44 mm",
    "bus-length": r"^bus-length: the spi run pi -> N spot is 1400 mm, over the 1000 mm a run "
                  r"may be at 4 MHz",
    "bus-load": r"^bus-load: line spi0: 9 runs, 3780 mm of cable, 289 pF, over the 284 pF "
                r"it may carry at 4 MHz \(the Pi driver's default\)$",
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


def test_the_wallet_rests_clear_of_every_antenna() -> None:
    """Where the board lies during play (Law 7A: the table's centre) no antenna reads its
    sticker: the area's nearest point is beyond each antenna's reach, margin included."""
    for path in SHIPPED:
        geometry, _ = load_geometry(path)
        assert geometry is not None
        wallets = [a for a in geometry.areas if a.kind == "wallet"]
        assert len(wallets) == 1 and wallets[0].rect.centre == (0.0, 0.0), path.name
        for antenna in geometry.antennas:
            distance = wallets[0].rect.distance_to(antenna.x, antenna.y)
            assert distance >= reach(geometry, antenna)[1], (path.name, antenna.name)


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


def test_each_shipped_geometry_names_its_reader_config_and_is_checked_against_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    for path in SHIPPED:
        geometry, _ = load_geometry(path)
        assert geometry is not None and geometry.table.config is not None
        assert named_config(geometry) == path.parent / geometry.table.config
        assert main(["check", str(path)]) == 0
        assert f"agrees with {geometry.table.config}" in capsys.readouterr().out


#: a reader config planted beside the club geometry -> what its findings must say
PLANTED_CONFIGS = {
    "table-club-4mhz.toml": [r"^bus-load: line spi0: 9 runs, 3780 mm of cable, 289 pF, over "
                             r"the 284 pF it may carry at 4 MHz \(speed_hz of reader north in "
                             r"table-club-4mhz.toml\)$"],
    "table-club-spi1.toml": [r"^config: the spi run pi -> S spot is on line spi0 in the "
                             r"geometry, on spi1 in reader south in table-club-spi1.toml: "
                             r"mfrc522://1.0\?cs=13",
                             r"^config: the spi run pi -> S bid is on line spi0 in the geometry"
                             r", on spi1 in reader south-call"],
}


@pytest.mark.parametrize("name", sorted(PLANTED_CONFIGS))
def test_a_config_whose_bus_or_clock_disagrees_with_the_runs_fails(
        name: str, capsys: pytest.CaptureFixture[str]) -> None:
    club = ROOT / "hw_configs" / "geometry-club.toml"
    assert main(["check", str(club), "--config", str(DATA / name)]) == 1
    lines = capsys.readouterr().out.splitlines()
    for pattern in PLANTED_CONFIGS[name]:
        assert any(re.match(pattern, line) for line in lines), (pattern, lines)
    assert len(lines) == len(PLANTED_CONFIGS[name])


def test_the_run_is_checked_at_the_config_clock_not_the_drivers_default() -> None:
    """The same nine runs on one line pass at the config's 1 MHz and fail at the Pi
    driver's default 4 MHz (the geometry alone, without its config)."""
    geometry, _ = load_geometry(ROOT / "hw_configs" / "geometry-club.toml")
    assert geometry is not None
    config, problem = read_reader_map(ROOT / "hw_configs" / "table-club.toml")
    assert problem is None and config is not None
    assert {bus.line for bus in config.buses.values()} == {"spi0"}
    assert {bus.clock for bus in config.buses.values()} == {1_000_000.0}
    assert check(geometry, config) == []
    alone = replace(geometry, table=replace(geometry.table, config=None))
    assert [f.rule for f in check(alone)] == ["bus-load"]


def test_a_reader_board_where_the_geometry_has_the_pi_is_a_disagreement(
        tmp_path: Path) -> None:
    text = (DATA / "table-club.toml").read_text(encoding="utf-8").replace(
        "mfrc522://0.0?cs=5&speed_hz=1000000&rate_ms=300&misses=2",
        "serial:///dev/bridge-table/reader-N?baudrate=115200")
    path = tmp_path / "table-pico.toml"
    path.write_text(text, encoding="utf-8")
    geometry, _ = load_geometry(ROOT / "hw_configs" / "geometry-club.toml")
    config, _ = read_reader_map(path)
    assert geometry is not None and config is not None
    said = [str(f) for f in check(geometry, config)]
    assert said == ["config: the spi run pi -> N spot is clocked by the pi in the geometry, by "
                    "the pico in reader north in table-pico.toml: serial:///dev/bridge-table/"
                    "reader-N?baudrate=115200"]


@pytest.mark.parametrize(("url", "bus"), [
    ("mfrc522://0.0?cs=5&speed_hz=1000000", ReaderBus("pi", "spi0", 1e6, "speed_hz")),
    ("mfrc522://1.2", ReaderBus("pi", "spi1", 4e6, "the Pi driver's default")),
    ("serial:///dev/ttyACM0", ReaderBus("pico", None, 4e6, "the reader firmware's clock")),
    ("sim://1/north", None),
    ("mfrc522://0.0?speed_hz=fast", "speed_hz='fast' is not a clock in Hz"),
    ("mfrc522://x", "no spidev bus"),
])
def test_a_reader_url_gives_its_line_and_clock(url: str, bus: ReaderBus | str | None) -> None:
    got = reader_bus(url)
    if isinstance(bus, str):
        assert isinstance(got, str) and bus in got
    else:
        assert got == bus


def test_a_bad_reader_url_in_the_config_is_a_usage_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "table.toml"
    path.write_text("[[readers]]\nname = 'a'\nurl = 'mfrc522://0.0?speed_hz=x'\n"
                    "antennas = { '0' = { zone = 'board' } }\n", encoding="utf-8")
    club = ROOT / "hw_configs" / "geometry-club.toml"
    assert main(["check", str(club), "--config", str(path)]) == 2
    assert "readers[0].url" in capsys.readouterr().err


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


def test_a_named_reader_config_that_is_missing_is_a_usage_error_and_a_finding(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "hw_configs" / "geometry-club.toml").read_text(encoding="utf-8")
    path = tmp_path / "geometry.toml"
    path.write_text(text.replace('config = "table-club.toml"', 'config = "none.toml"'),
                    encoding="utf-8")
    assert main(["check", str(path)]) == 2
    assert "none.toml" in capsys.readouterr().err
    geometry, _ = load_geometry(path)
    assert geometry is not None
    assert [f.rule for f in check(geometry)][:1] == ["config"]


def test_a_missing_reader_config_is_a_usage_error(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    club = ROOT / "hw_configs" / "geometry-club.toml"
    assert main(["check", str(club), "--config", str(tmp_path / "none.toml")]) == 2
    assert "cannot read the file" in capsys.readouterr().err
