"""A whole reader board for the firmware tests: the firmware as shipped, on emulated chips.

``collpos``: how the emulated MFRC522s count CollReg's CollPos (firmware_bridge/sim/chips.py).

Six antennas on one board, every way the firmware can reach a front end:

====== ========================================== =============================
antenna front end                                   bus
====== ========================================== =============================
0      MFRC522                                      SPI0, chip select GP17
1      MFRC522                                      SPI0, chip select GP20
2, 3   one MFRC522 behind an antenna multiplexer    SPI0, chip select GP21, mux GP10
4      PN532                                        I2C0, address 0x24
5      PN532                                        SPI0, chip select GP22 (LSB first)
====== ========================================== =============================
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.sim.chips import AirTime, EmuMFRC522, EmuPN532, Field
from firmware_bridge.sim.mcu import Wiring

SPI0 = {"type": "spi", "id": 0, "sck": 18, "mosi": 19, "miso": 16, "baudrate": 4000000}
I2C0 = {"type": "i2c", "id": 0, "scl": 5, "sda": 4, "freq": 400000}


class Board:
    def __init__(self, reader: str = "BB1", *, timing: AirTime | None = None,
                 rate_ms: int = 20, collpos: str = "nxp") -> None:
        self.field = Field()
        self.wiring = Wiring()
        w = self.wiring
        self.mfrc = [EmuMFRC522(self.field, 0, timing, collpos=collpos),
                     EmuMFRC522(self.field, 1, timing, collpos=collpos),
                     EmuMFRC522(self.field, lambda: 2 + w.pin(10), timing, collpos=collpos)]
        self.pn532_i2c = EmuPN532(self.field, 4, timing)
        self.pn532_spi = EmuPN532(self.field, 5, timing)
        w.spi[(0, 17)] = self.mfrc[0]
        w.spi[(0, 20)] = self.mfrc[1]
        w.spi[(0, 21)] = self.mfrc[2]
        w.spi[(0, 22)] = self.pn532_spi
        w.i2c[(0, 0x24)] = self.pn532_i2c
        self.settings: dict[str, Any] = {
            # limit 16: the harness exercises the anticollision (a flashed board resolves one)
            "reader": reader, "model": "BTR-PICO", "rate_ms": rate_ms, "misses": 3, "limit": 16,
            "link": {"type": "uart", "id": 0, "baudrate": 115200, "tx": 0, "rx": 1},
            "buses": {"spi0": SPI0, "i2c0": I2C0},
            "chips": [{"type": "mfrc522", "bus": "spi0", "cs": 17},
                      {"type": "mfrc522", "bus": "spi0", "cs": 20},
                      {"type": "mfrc522", "bus": "spi0", "cs": 21},
                      {"type": "pn532", "bus": "i2c0", "address": 0x24},
                      {"type": "pn532", "bus": "spi0", "cs": 22}],
            "mux": {"pins": [10]},
            "antennas": [{"chip": 0}, {"chip": 1}, {"chip": 2, "channel": 0},
                         {"chip": 2, "channel": 1}, {"chip": 3}, {"chip": 4}],
        }
