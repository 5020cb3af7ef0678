"""MFRC522 modules on the Pi's SPI: one chip per antenna, one chip-select each.

``mfrc522://0.0,0.1,1.0,1.1?rate_ms=50&misses=3&speed_hz=4000000``: antenna ``i`` is the chip
on the ``i``-th spidev BUS.DEVICE (``/dev/spidev0.0`` is SPI0 with CE0). Inventory readers: all
the tags lying on an antenna are listed every round (the firmware's MFRC522 driver,
``firmware_bridge/mcu/btreader/mfrc522.py``). Needs ``spidev`` (``pip install
'bridge-table[readers]'``) and SPI enabled (``dtparam=spi=on``; ``dtoverlay=spi1-3cs`` for SPI1).
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.mcu.btreader.inventory import Antenna
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522
from firmware_bridge.readers.base import ReaderError
from firmware_bridge.readers.chipreader import (
    ChipReader,
    SpidevPort,
    bus_module,
    number_options,
    parse_chip_url,
    spidev_address,
)

__all__ = ["Mfrc522Reader"]


class Mfrc522Reader(ChipReader):
    def __init__(self, name: str, devices: list[tuple[int, int]], *, speed_hz: int = 4000000,
                 spidev: Any = None, **options: Any) -> None:
        super().__init__(name, **options)
        if not devices:
            raise ReaderError(f"reader {name!r}: no spidev device")
        self.devices = devices
        self.speed_hz = speed_hz
        self._spidev = spidev
        self._ports: list[SpidevPort] = []

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> Mfrc522Reader:
        where, query = parse_chip_url(url, "mfrc522")
        devices = [spidev_address(d) for d in where.split(",")]
        merged = number_options(query, {"rate_ms": int, "misses": int, "speed_hz": int,
                                        "debounce": float}) | options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, devices, **merged)

    def _open(self) -> list[Antenna]:
        spidev = bus_module(self._spidev, "spidev", "mfrc522")
        self._ports = [SpidevPort(spidev, bus, dev, self.speed_hz) for bus, dev in self.devices]
        return [Antenna(i, MFRC522(port, self.clock)) for i, port in enumerate(self._ports)]

    def _close(self) -> None:
        for port in self._ports:
            port.close()
        self._ports = []
