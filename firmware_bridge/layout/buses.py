"""How long a cable run may be on each bus, at the clock its driver uses, with the sources.

Two limits for SPI: one run's length (what builders who measured report), and the load of
every run of one bus together (the line's capacitance, which the weakest driver on it must
charge within a quarter of a clock period). docs/hardware/field-model.md ("Cable runs") says
where every figure comes from and which are design margins rather than measurements.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Final

__all__ = ["spi_clock", "run_limit", "load_limit", "line_load", "CABLE_PF_PER_M",
           "INPUT_PF", "SOURCES"]

#: flat ribbon cable, conductor to conductor with a ground beside it (3M 3302 series: about
#: 50 pF/m); twisted pairs are about the same
CABLE_PF_PER_M: Final = 50.0
#: one chip's pin (the MFRC522 data sheet's input capacitance is of this order; a
#: margin, not a measurement here)
INPUT_PF: Final = 10.0
#: the MFRC522's MISO driver: VOH >= VDD - 0.4 V at 4 mA (data sheet), about 100 ohms
MISO_OHMS: Final = 100.0
#: I2C's bus capacitance limit in standard and fast mode (NXP UM10204, 7.1)
I2C_MAX_PF: Final = 400.0
I2C_CABLE_PF_PER_M: Final = 100.0

SOURCES: Final = {
    "spi": "one run: 1 m at 4 MHz, scaled with the clock's period, at most 3 m (Axelson, "
           "Serial Port Complete, table 1-1: SPI ~3 m; MFRC522 modules reported working "
           "over 0.8 m of flat cable and failing beyond 8-13 m of Cat5 at the Arduino's 4 "
           "MHz: forum.arduino.cc/t/problem-with-long-range-spi-communication/625261, "
           "forum.arduino.cc/t/long-distance-spi/243255); every run of a bus together: "
           "its capacitance charged by the MISO driver (~100 ohm) within a quarter period",
    "usb": "USB 2.0 specification: a full-speed cable at most 5 m",
    "i2c": "NXP UM10204: 400 pF a bus, at ~100 pF/m of cable",
    "gpio": "a design margin (3 m): LEDs and buttons are slow lines, no standard applies",
    "power": "a design margin (3 m): 5 V at 1 A over 0.5 mm2 loses 0.2 V in 3 m, the Pi's "
             "own supply tolerance",
}


def spi_clock(driver: str | None) -> float:
    """The SPI clock (Hz) of the driver that runs a line: the Pi's MFRC522 backend's
    default ``speed_hz``, or the reader firmware's: the ``baudrate`` that ``bridge-table
    firmware flash`` writes into a Pico's reader.json (firmware_bridge/flash.py, ``BOARDS``;
    the firmware's own fallback, 1 MHz in firmware_bridge/mcu/btreader/board.py, applies
    only to a board flashed without settings)."""
    if driver == "pico":
        from firmware_bridge.flash import BOARDS

        return float(BOARDS["pico"]["spi"]["baudrate"])
    from firmware_bridge.readers.mfrc522 import Mfrc522Reader

    default = inspect.signature(Mfrc522Reader.__init__).parameters["speed_hz"].default
    return float(default)


@dataclass(frozen=True)
class _Limits:
    gpio: float = 3000.0
    power: float = 3000.0
    usb: float = 5000.0


def run_limit(bus: str, driver: str | None = None, clock: float | None = None) -> float:
    """The longest one run may be (mm); an SPI run at ``clock`` (Hz), or at its driver's
    default clock."""
    if bus == "spi":
        hz = spi_clock(driver) if clock is None else clock
        return min(3000.0, 1000.0 * 4_000_000 / hz)
    if bus == "i2c":
        return (I2C_MAX_PF - 2 * INPUT_PF) / I2C_CABLE_PF_PER_M * 1000
    return float(getattr(_Limits(), bus))


def line_load(bus: str, lengths_mm: list[float]) -> float:
    """The capacitance (pF) of one line: its runs, one chip at each run's far end and the
    host."""
    per_m = I2C_CABLE_PF_PER_M if bus == "i2c" else CABLE_PF_PER_M
    return sum(lengths_mm) / 1000 * per_m + (len(lengths_mm) + 1) * INPUT_PF


def load_limit(bus: str, driver: str | None = None,
               clock: float | None = None) -> float | None:
    """The most capacitance (pF) a line may carry (an SPI line at ``clock``, Hz, or at its
    driver's default), or None when only run lengths count."""
    if bus == "spi":
        quarter_period = 0.25 / (spi_clock(driver) if clock is None else clock)
        return quarter_period / (2.2 * MISO_OHMS) * 1e12
    if bus == "i2c":
        return I2C_MAX_PF
    return None
