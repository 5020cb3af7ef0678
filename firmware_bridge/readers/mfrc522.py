"""MFRC522 modules on the Pi's SPI: one chip per antenna, one chip-select each.

``mfrc522://0.0,0.1,1.0,1.1?rate_ms=50&misses=3&speed_hz=4000000``: antenna ``i`` is the chip
on the ``i``-th spidev BUS.DEVICE (``/dev/spidev0.0`` is SPI0 with CE0). With ``mux=22,23`` the
last chip sits behind an antenna multiplexer whose select lines are those BCM pins (gpiozero):
it gives ``2**len(mux)`` antennas (or ``channels=N``) after the others (no switch part for
13.56 MHz is named in docs/hardware, which builds one chip per antenna). Inventory readers: all
the tags lying on an antenna are listed every round (the firmware's MFRC522 driver,
``firmware_bridge/mcu/btreader/mfrc522.py``). Needs ``spidev`` (``pip install
'bridge-table[readers]'``) and SPI enabled (``dtparam=spi=on``; ``dtoverlay=spi1-3cs`` for SPI1).
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.mcu.btreader.inventory import Antenna, Mux
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522
from firmware_bridge.mcu.btreader.ports import OutputPin
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
                 mux: list[int] | None = None, channels: int = 0, pin_factory: Any = None,
                 spidev: Any = None, **options: Any) -> None:
        super().__init__(name, **options)
        if not devices:
            raise ReaderError(f"reader {name!r}: no spidev device")
        self.devices = devices
        self.speed_hz = speed_hz
        self.mux = list(mux or [])
        self.channels = channels or (2 ** len(self.mux) if self.mux else 0)
        if self.mux and not 1 <= self.channels <= 2 ** len(self.mux):
            raise ReaderError(f"reader {name!r}: {len(self.mux)} select pins give 1 to "
                              f"{2 ** len(self.mux)} channels, not {self.channels}")
        self.pin_factory = pin_factory
        self._spidev = spidev
        self._ports: list[SpidevPort] = []
        self._pins: list[GpioPin] = []

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> Mfrc522Reader:
        where, query = parse_chip_url(url, "mfrc522")
        devices = [spidev_address(d) for d in where.split(",")]
        mux = query.pop("mux", "")
        if mux and not all(p.isdigit() for p in mux.split(",")):
            raise ReaderError(f"mux={mux!r}: BCM pin numbers, such as mux=22,23")
        merged = number_options(query, {"rate_ms": int, "misses": int, "speed_hz": int,
                                        "channels": int, "debounce": float}) | options
        if mux:
            merged["mux"] = [int(p) for p in mux.split(",")]
        if kind is not None:
            merged["kind"] = kind
        return cls(name, devices, **merged)

    def _open(self) -> list[Antenna]:
        spidev = bus_module(self._spidev, "spidev", "mfrc522")
        self._ports = [SpidevPort(spidev, bus, dev, self.speed_hz) for bus, dev in self.devices]
        chips = [MFRC522(port, self.clock) for port in self._ports]
        if not self.mux:
            return [Antenna(i, chip) for i, chip in enumerate(chips)]
        self._pins = [GpioPin(pin, self.pin_factory) for pin in self.mux]
        switch = Mux(list(self._pins))
        antennas = [Antenna(i, chip) for i, chip in enumerate(chips[:-1])]
        return antennas + [Antenna(len(antennas) + c, chips[-1], switch, c)
                           for c in range(self.channels)]

    def _close(self) -> None:
        for port in self._ports:
            port.close()
        for pin in self._pins:
            pin.close()
        self._ports, self._pins = [], []


class GpioPin(OutputPin):
    """A multiplexer select line on a BCM pin, through gpiozero (lgpio or RPi.GPIO)."""

    def __init__(self, pin: int, pin_factory: Any = None) -> None:
        from firmware_bridge.extras import needs_extra

        with needs_extra("pi", "an antenna multiplexer's select lines"):
            from gpiozero import DigitalOutputDevice

        self.device = DigitalOutputDevice(pin, pin_factory=pin_factory)

    def value(self, level: int) -> None:
        self.device.value = 1 if level else 0

    def close(self) -> None:
        self.device.close()
