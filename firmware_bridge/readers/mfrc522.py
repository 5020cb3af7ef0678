"""MFRC522 modules on the Pi's SPI: one chip per antenna, one chip-select each.

``mfrc522://0.0,0.1,1.0,1.1?rate_ms=50&misses=3&speed_hz=4000000``: antenna ``i`` is the chip
on the ``i``-th spidev BUS.DEVICE (``/dev/spidev0.0`` is SPI0 with CE0).

``mfrc522://0.0?cs=17&speed_hz=1000000``: the chip's select line is the GPIO BCM 17, driven
here (gpiozero) around each transfer, not the kernel's CE line: ``/dev/spidev0.0`` is opened
with ``no_cs`` and serves any number of chips, as many as the Pi has free pins (the club build:
nine, docs/hardware/wiring.md; ``dtoverlay=spi0-0cs`` frees CE0 and CE1 for that). With
several devices, ``cs=17,27`` gives one pin to each, in order. Every reader on a bus takes
turns with the others, one antenna round each (``chipreader.BusTurn``): one field on at a time
on that bus, and no transfer of one reader inside another's chip-select. With ``mux=22,23`` the
last chip sits behind an antenna multiplexer whose select lines are those BCM pins (gpiozero):
it gives ``2**len(mux)`` antennas (or ``channels=N``) after the others (no switch part for
13.56 MHz is named in docs/hardware, which builds one chip per antenna). Inventory readers: all
the tags lying on an antenna are listed every round (the firmware's MFRC522 driver,
``firmware_bridge/mcu/btreader/mfrc522.py``). Needs ``spidev`` (``pip install
'bridge-table[readers]'``; GPIO chip selects need gpiozero too, ``[pi]``) and SPI
enabled (``dtparam=spi=on``; ``dtoverlay=spi1-3cs`` for SPI1; ``dtoverlay=spi0-0cs`` with ``cs=``).
"""

from __future__ import annotations

import contextlib
import time
from typing import Any

from firmware_bridge.mcu.btreader.inventory import Antenna, Mux
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522
from firmware_bridge.mcu.btreader.ports import OutputPin
from firmware_bridge.readers.base import ReaderError
from firmware_bridge.readers.chipreader import (
    ChipReader,
    SpidevPort,
    bus_module,
    bus_turn,
    number_options,
    parse_chip_url,
    spidev_address,
)

__all__ = ["Mfrc522Reader", "HostMFRC522", "GpioChipSelectPort", "POLL_PAUSE_S"]

#: the sleep between two polls of the chip while it works: a tag's answer takes about 0.1 to
#: 0.5 ms on the air and the receive timeout 2 ms, so a few polls a wait instead of a spin
#: (the cost of a round on a Pi Zero 2 W: bench/bench_poll_round.py, docs/benchmarks.md)
POLL_PAUSE_S = 0.0005


class HostMFRC522(MFRC522):
    """The firmware's driver on a Pi: it sleeps between polls instead of spinning."""

    def pause(self) -> None:
        time.sleep(POLL_PAUSE_S)


class Mfrc522Reader(ChipReader):
    def __init__(self, name: str, devices: list[tuple[int, int]], *, speed_hz: int = 4000000,
                 mux: list[int] | None = None, channels: int = 0, pin_factory: Any = None,
                 spidev: Any = None, cs: list[int] | None = None, **options: Any) -> None:
        super().__init__(name, **options)
        if not devices:
            raise ReaderError(f"reader {name!r}: no spidev device")
        self.cs = list(cs or [])
        if self.cs and len(self.cs) != len(devices):
            raise ReaderError(f"reader {name!r}: {len(devices)} spidev device(s) but "
                              f"{len(self.cs)} chip-select pin(s) in cs=")
        if not 10000 <= speed_hz <= 10000000:
            raise ReaderError(f"reader {name!r}: speed_hz {speed_hz} is not 10 kHz to 10 MHz "
                              "(the MFRC522's SPI, datasheet §8.1.2)")
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
        cs = query.pop("cs", "")
        if cs and not all(p.isdigit() and int(p) <= 27 for p in cs.split(",")):
            raise ReaderError(f"cs={cs!r}: BCM pin numbers 0-27, such as cs=17")
        merged = number_options(query, {"rate_ms": int, "misses": int, "speed_hz": int,
                                        "channels": int, "debounce": float}) | options
        if mux:
            merged["mux"] = [int(p) for p in mux.split(",")]
        if cs:
            merged["cs"] = [int(p) for p in cs.split(",")]
        if kind is not None:
            merged["kind"] = kind
        return cls(name, devices, **merged)

    def _open(self) -> list[Antenna]:
        spidev = bus_module(self._spidev, "spidev", "mfrc522")
        if self.cs:
            self._pins = [GpioPin(pin, self.pin_factory, idle=1) for pin in self.cs]
            self._ports = [GpioChipSelectPort(spidev, bus, dev, self.speed_hz, pin)
                           for (bus, dev), pin in zip(self.devices, self._pins, strict=True)]
        else:
            self._ports = [SpidevPort(spidev, bus, dev, self.speed_hz)
                           for bus, dev in self.devices]
        chips = [HostMFRC522(port, self.clock) for port in self._ports]
        if not self.mux:
            return [Antenna(i, chip) for i, chip in enumerate(chips)]
        self._pins += [GpioPin(pin, self.pin_factory) for pin in self.mux]
        switch = Mux(list(self._pins))
        antennas = [Antenna(i, chip) for i, chip in enumerate(chips[:-1])]
        return antennas + [Antenna(len(antennas) + c, chips[-1], switch, c)
                           for c in range(self.channels)]

    def _turn(self) -> contextlib.AbstractContextManager[object]:
        # the first device's bus: a reader's chips are on one bus in every shipped table
        return bus_turn(f"spi{self.devices[0][0]}")

    def _close(self) -> None:
        for port in self._ports:
            port.close()
        for pin in self._pins:
            pin.close()
        self._ports, self._pins = [], []


class GpioPin(OutputPin):
    """A multiplexer select line or a chip select on a BCM pin, through gpiozero (lgpio or
    RPi.GPIO); ``idle`` is its level from the moment it is claimed."""

    def __init__(self, pin: int, pin_factory: Any = None, idle: int = 0) -> None:
        from firmware_bridge.extras import needs_extra

        with needs_extra("pi", "an antenna multiplexer's select lines and GPIO chip selects"):
            from gpiozero import DigitalOutputDevice

        self.device = DigitalOutputDevice(pin, pin_factory=pin_factory,
                                          initial_value=bool(idle))

    def value(self, level: int) -> None:
        self.device.value = 1 if level else 0

    def close(self) -> None:
        self.device.close()


class GpioChipSelectPort(SpidevPort):
    """One chip on a bus whose chip select is a GPIO pin driven here: the spidev device is
    opened with ``no_cs`` (the kernel leaves every CE line alone) and the pin is low for the
    length of each transfer, as the MFRC522 needs (datasheet §8.1.2: NSS low for a whole
    read or write sequence). The reader's BusTurn keeps other readers' transfers out."""

    def __init__(self, spidev: Any, bus: int, device: int, speed_hz: int,
                 select: OutputPin) -> None:
        super().__init__(spidev, bus, device, speed_hz)
        self.dev.no_cs = True
        self.select = select

    def transfer(self, data: bytes) -> bytes:
        self.select.value(0)
        try:
            return bytes(self.dev.xfer2(list(data)))
        finally:
            self.select.value(1)
