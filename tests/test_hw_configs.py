"""Every hw_configs file the docs name exists and loads (the table files as table files, the
registries as registries, the BOM as the BOM; the station and session files parse, their own
tests load them); the two builds' reader files agree
with the names the guide, the udev rule and firmware flash give them."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from firmware_bridge.bom import load_bom
from firmware_bridge.config import load_config
from firmware_bridge.flash import udev_rule
from firmware_bridge.tags import TagRegistry

ROOT = Path(__file__).resolve().parent.parent
HW = ROOT / "hw_configs"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
#: names in the docs that are placeholders, not files: an error message's file name, the
#: FILE of a command line
NOT_FILES = {"t.toml", "X.toml"}
NAMED = re.compile(r"hw_configs/([\w.-]+\.(?:toml|pbn))")


def named_files() -> dict[str, list[str]]:
    """hw_configs file name -> the docs that name it (the archive of old runs aside)."""
    named: dict[str, list[str]] = {}
    for doc in DOCS:
        if doc.name == "benchmarks-archive.md":
            continue
        for name in NAMED.findall(doc.read_text(encoding="utf-8")):
            if name not in NOT_FILES:
                named.setdefault(name, []).append(str(doc.relative_to(ROOT)))
    return named


def test_the_docs_name_the_two_builds_and_no_file_that_is_gone() -> None:
    named = named_files()
    assert {"table-club.toml", "table-boards.toml", "tags-club.toml", "bom.toml"} <= set(named)
    assert "table-4reader.toml" not in named and "table-pi-readers.toml" not in named
    missing = {name: docs for name, docs in named.items() if not (HW / name).is_file()}
    assert missing == {}, f"docs name hw_configs files that do not exist: {missing}"


@pytest.mark.parametrize("name", sorted(named_files()))
def test_every_named_file_loads(name: str) -> None:
    path = HW / name
    if name.startswith("table-") or name == "sim.toml":
        assert load_config(path).readers
    elif name.startswith("tags-"):
        TagRegistry.load([path])
    elif name == "bom.toml":
        assert load_bom(path).problems == []
    elif name.endswith(".toml"):   # station and session files: their own tests load them
        assert tomllib.loads(path.read_text(encoding="utf-8"))
    else:
        assert path.read_text(encoding="utf-8").strip()


def test_the_real_tables_use_the_clubs_own_registry_not_the_simulators() -> None:
    for name in ("table-club.toml", "table-boards.toml"):
        files = load_config(HW / name).registry.files
        assert [f.name for f in files] == ["tags-club.toml"], name


def test_the_boards_build_reads_the_names_the_udev_rule_gives() -> None:
    """Each reader of table-boards.toml opens /dev/bridge-table/reader-ID, checks that the
    board answers as ID, and firmware flash's udev line for ID makes that name."""
    config = load_config(HW / "table-boards.toml")
    assert [r.name for r in config.readers] == ["north", "east", "south", "west", "board"]
    for reader in config.readers:
        reader_id = reader.options["reader_id"]
        assert reader.url.startswith(f"serial:///dev/bridge-table/reader-{reader_id}?")
        line = udev_rule(reader_id, "E6614104032B5A2C")
        assert f'SYMLINK+="bridge-table/reader-{reader_id}"' in line
        assert 'ATTRS{serial}=="e6614104032b5a2c"' in line   # stock MicroPython: lower case
    for seat, reader in zip("NESW", config.readers, strict=False):
        zones = {k: (a.seat, a.zone) for k, a in reader.antennas.items()}
        assert zones == {"0": (seat, "spot"), "1": (seat, "bid")}
    rules = (ROOT / "systemd" / "99-bridge-table-readers.rules").read_text(encoding="utf-8")
    example = udev_rule("N", "E6614104032B5A2C")
    assert f"# {example}" in rules
    assert 'ATTRS{idVendor}=="2e8a", ATTRS{idProduct}=="0005"' in rules
