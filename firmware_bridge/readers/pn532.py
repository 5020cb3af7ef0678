"""A PN532 module on the Pi's I2C or SPI bus: one antenna.

``pn532://i2c1`` (I2C bus 1, address 0x24; ``?address=0x24``), ``pn532://0.0`` (spidev0.0,
LSB first done in software). Options: ``rate_ms``, ``misses``, ``speed_hz``, ``kind``. The
firmware's PN532 driver (``firmware_bridge/mcu/btreader/pn532.py``) lists every tag on the
antenna (InListPassiveTarget, then HLTA, until none answers), so it is an inventory reader;
``kind=tap`` for a wallet reader where only arrivals count. I2C goes through smbus2 (a
dependency already); SPI needs spidev (``pip install 'bridge-table[readers]'``).

I2C only on a Raspberry Pi 5: the PN532 stretches the I2C clock while it works, and the I2C
controller of the Pis before the 5 (BCM2835/2711) mishandles clock stretching
(raspberrypi/linux issues 254 and 4884), so there the answers come garbled or not at all. On
those Pis use ``pn532://0.0`` (SPI) or the UART (``nfc://tty:AMA0:pn532``, docs/wiring.md).

(Adafruit's CircuitPython PN532 library was the obvious alternative; it reads one target per
call, cannot halt a tag to find the next one under it, and needs Blinka's board detection at
import time - which fails off a Pi, so it could not be tested here.)
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.mcu.btreader.inventory import Antenna
from firmware_bridge.mcu.btreader.pn532 import PN532, I2cTransport, SpiTransport, Transport
from firmware_bridge.readers.base import ReaderError
from firmware_bridge.readers.chipreader import (
    ChipReader,
    SmbusPort,
    SpidevPort,
    bus_module,
    number_options,
    parse_chip_url,
    spidev_address,
)

__all__ = ["Pn532Reader"]


class Pn532Reader(ChipReader):
    def __init__(self, name: str, bus: str, *, address: int = 0x24, speed_hz: int = 1000000,
                 smbus2: Any = None, spidev: Any = None, **options: Any) -> None:
        super().__init__(name, **options)
        self.bus = bus
        if bus.startswith("i2c"):
            if not bus[3:].isdigit():
                raise ReaderError(f"reader {name!r}: {bus!r} is not i2cN")
        else:
            spidev_address(bus)
        self.address = address
        self.speed_hz = speed_hz
        self._smbus2 = smbus2
        self._spidev = spidev
        self._port: SmbusPort | SpidevPort | None = None

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> Pn532Reader:
        where, query = parse_chip_url(url, "pn532")
        merged = number_options(query, {"rate_ms": int, "misses": int, "speed_hz": int,
                                        "address": int, "debounce": float}) | options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, where, **merged)

    def _open(self) -> list[Antenna]:
        transport: Transport
        if self.bus.startswith("i2c"):
            i2c = SmbusPort(bus_module(self._smbus2, "smbus2", "pn532"), int(self.bus[3:]),
                            self.address)
            self._port = i2c
            transport = I2cTransport(i2c)
        else:
            bus, dev = spidev_address(self.bus)
            spi = SpidevPort(bus_module(self._spidev, "spidev", "pn532"), bus, dev,
                             self.speed_hz)
            self._port = spi
            transport = SpiTransport(spi)
        return [Antenna(0, PN532(transport, self.clock))]

    def _close(self) -> None:
        if self._port is not None:
            self._port.close()
            self._port = None
