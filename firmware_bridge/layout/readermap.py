"""What a table's reader config says the geometry's SPI runs are: for each reader, the line
its chip is on and the clock it is driven at, read from its URL.

``mfrc522://B.D?cs=N&speed_hz=S`` is a chip on the Pi's SPI bus ``B`` (line ``spiB``),
clocked at ``speed_hz`` or the Pi backend's default; ``serial://...`` is a reader board
(a Pico) whose firmware clocks its own SPI (``buses.spi_clock("pico")``: the baudrate
``firmware flash`` writes). Any other URL
(``sim://``, ``nfc://``) says nothing of a bus, and the geometry's own ``line`` and
``driver`` stand. The design-rule check (firmware_bridge/layout/rules.py) checks every run
at the line and clock found here, so that a config whose bus or clock disagrees with the
geometry's cable runs fails with the rule it breaks.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from controller.tomlfile import TomlFileError, load_toml
from firmware_bridge.layout.buses import spi_clock

__all__ = ["ReaderBus", "ReaderMap", "reader_bus", "read_reader_map"]

#: (reader, antenna, zone, seat) of one mapped antenna
Mapped = tuple[str, int, str, str | None]


@dataclass(frozen=True)
class ReaderBus:
    """The SPI line and clock one reader's URL gives its chips."""

    driver: str             # "pi" (the bridge's own SPI) or "pico" (a reader board)
    line: str | None        # "spi0"; None: the reader board's own line (the geometry's)
    clock: float            # Hz
    why: str                # where the clock comes from, for the findings


@dataclass(frozen=True)
class ReaderMap:
    """A table config's antenna map and its readers' buses."""

    name: str
    antennas: frozenset[Mapped]
    buses: Mapping[str, ReaderBus] = field(default_factory=lambda: MappingProxyType({}))
    urls: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))


def reader_bus(url: str) -> ReaderBus | str | None:
    """The bus a reader URL drives, its problem (text), or None when it names no SPI bus."""
    parts = urllib.parse.urlsplit(url)
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
    if parts.scheme == "serial":
        return ReaderBus("pico", None, spi_clock("pico"), "the reader firmware's clock")
    if parts.scheme != "mfrc522":
        return None
    bus = (parts.netloc + parts.path).removeprefix("spi").partition(".")[0]
    if not bus.isdigit():
        return f"{url!r}: no spidev bus (mfrc522://0.0)"
    speed = query.get("speed_hz")
    if speed is None:
        return ReaderBus("pi", f"spi{int(bus)}", spi_clock("pi"), "the Pi driver's default")
    if not speed.isdigit() or int(speed) <= 0:
        return f"{url!r}: speed_hz={speed!r} is not a clock in Hz"
    return ReaderBus("pi", f"spi{int(bus)}", float(speed), "speed_hz")


def read_reader_map(path: Path) -> tuple[ReaderMap | None, str | None]:
    """A table config's antenna map and buses, or the problem reading it."""
    try:
        data = load_toml(path)
    except TomlFileError as error:
        return None, str(error)
    mapped: set[Mapped] = set()
    buses: dict[str, ReaderBus] = {}
    urls: dict[str, str] = {}
    readers = data.get("readers", [])
    if not isinstance(readers, list):
        return None, f"{path}: readers must be an array of tables"
    for i, reader in enumerate(readers):
        antennas = reader.get("antennas") if isinstance(reader, dict) else None
        if not isinstance(antennas, dict) or not isinstance(reader.get("name"), str):
            return None, f"{path}: readers[{i}] has no name or no antennas"
        name = reader["name"]
        for key, value in antennas.items():
            if not isinstance(value, dict) or not str(key).isdigit():
                return None, f"{path}: readers[{i}].antennas.{key}: not an antenna"
            seat = value.get("seat")
            mapped.add((name, int(key), str(value.get("zone")),
                        seat if isinstance(seat, str) else None))
        url = reader.get("url")
        bus = reader_bus(url) if isinstance(url, str) else None
        if isinstance(bus, str):
            return None, f"{path}: readers[{i}].url: {bus}"
        if bus is not None and isinstance(url, str):
            buses[name] = bus
            urls[name] = url
    return ReaderMap(path.name, frozenset(mapped), MappingProxyType(buses),
                     MappingProxyType(urls)), None
