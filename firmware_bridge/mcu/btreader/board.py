"""The board: ``/reader.json`` (written by ``bridge-table firmware flash``) turned into buses,
chips, antennas and the serial link, then the main loop.

The only module that touches ``machine``; under CPython the tests put a stand-in for it in
``sys.modules`` (``firmware_bridge/sim/mcu.py``) and pass a clock.
"""

import json
import sys

import machine  # type: ignore[import-not-found, unused-ignore]

try:
    from typing import Any
except ImportError:  # MicroPython: annotations are never evaluated there
    pass

from .app import App, Link
from .clock import Clock
from .inventory import Antenna, Frontend, Mux, Scanner
from .mfrc522 import MFRC522
from .pn532 import I2C_ADDRESS, PN532, I2cTransport, SpiTransport
from .ports import I2cPort, SpiPort
from .proto import hexstr

SETTINGS = "reader.json"
#: the scan period when reader.json gives none (docs/sensing.md: one round every 100 ms)
RATE_MS = 100


class BoardSpi(SpiPort):
    def __init__(self, spi: Any, cs: Any) -> None:
        self.spi = spi
        self.cs = cs
        self.cs.value(1)

    def transfer(self, data: bytes) -> bytes:
        back = bytearray(len(data))
        self.transfer_into(data, back)
        return bytes(back)

    def transfer_into(self, data: Any, into: bytearray) -> None:
        self.cs.value(0)
        try:
            self.spi.write_readinto(data, into)
        finally:
            self.cs.value(1)


class BoardI2c(I2cPort):
    def __init__(self, i2c: Any, address: int) -> None:
        self.i2c = i2c
        self.address = address

    def write(self, data: bytes) -> None:
        self.i2c.writeto(self.address, data)

    def read(self, count: int) -> bytes:
        return bytes(self.i2c.readfrom(self.address, count))


class UartLink(Link):
    def __init__(self, uart: Any) -> None:
        self.uart = uart

    def write(self, data: bytes) -> None:
        self.uart.write(data)

    def read(self) -> bytes:
        if not self.uart.any():
            return b""
        return bytes(self.uart.read() or b"")


class UsbLink(Link):
    """USB CDC: MicroPython's stdin/stdout (the REPL's port; Ctrl-C stops the reader)."""

    def __init__(self) -> None:
        import select

        self.poll = select.poll()
        self.poll.register(sys.stdin, select.POLLIN)

    def write(self, data: bytes) -> None:
        sys.stdout.buffer.write(data)

    def read(self) -> bytes:
        data = b""
        while len(data) < 256 and self.poll.poll(0):
            data += sys.stdin.buffer.read(1)
        return data


def _bus(spec: dict[str, Any]) -> Any:
    kind = spec["type"]
    pin = machine.Pin
    if kind == "spi":
        return machine.SPI(spec["id"], baudrate=spec.get("baudrate", 1000000), polarity=0,
                           phase=0, sck=pin(spec["sck"]), mosi=pin(spec["mosi"]),
                           miso=pin(spec["miso"]))
    if kind == "i2c":
        return machine.I2C(spec["id"], scl=pin(spec["scl"]), sda=pin(spec["sda"]),
                           freq=spec.get("freq", 400000))
    raise ValueError(f"unknown bus type {kind!r}")


def _chip(spec: dict[str, Any], buses: dict[str, Any], clock: Clock) -> Frontend:
    bus = buses[str(spec["bus"])]
    kind = spec["type"]
    if "rst" in spec:  # hold the chip out of reset (MFRC522 NRSTPD, PN532 RSTPDN)
        machine.Pin(spec["rst"], machine.Pin.OUT).value(1)
    if kind == "mfrc522":
        return MFRC522(BoardSpi(bus, machine.Pin(spec["cs"], machine.Pin.OUT)), clock)
    if kind == "pn532":
        if "cs" in spec:
            return PN532(SpiTransport(BoardSpi(bus, machine.Pin(spec["cs"], machine.Pin.OUT))),
                         clock)
        return PN532(I2cTransport(BoardI2c(bus, int(spec.get("address", I2C_ADDRESS)))), clock)
    raise ValueError(f"unknown chip type {kind!r}")


def _reason() -> str:
    cause = machine.reset_cause()
    names = (("PWRON_RESET", "power"), ("WDT_RESET", "watchdog"), ("SOFT_RESET", "command"),
             ("BROWNOUT_RESET", "brownout"), ("HARD_RESET", "power"))
    for name, reason in names:
        if getattr(machine, name, None) == cause:
            return reason
    return "unknown"


def build(settings: dict[str, Any], clock: Clock | None = None) -> App:
    clock = clock or Clock()
    buses = {name: _bus(spec)
             for name, spec in settings.get("buses", {}).items()}
    chips = [_chip(spec, buses, clock) for spec in settings["chips"]]
    mux_spec = settings.get("mux")
    mux = None
    if mux_spec:
        pins: list[Any] = [machine.Pin(p, machine.Pin.OUT) for p in mux_spec["pins"]]
        mux = Mux(pins)
    antennas = []
    for i, spec in enumerate(settings["antennas"]):
        channel = spec.get("channel", -1)
        antennas.append(Antenna(i, chips[spec["chip"]], mux if channel >= 0 else None,
                                max(channel, 0)))
    link_spec = settings.get("link", {"type": "usb"})
    link: Link
    if link_spec["type"] == "uart":
        uart_pins: dict[str, Any] = {}
        for name in ("tx", "rx"):   # without them, the port's default pins
            if name in link_spec:
                uart_pins[name] = machine.Pin(link_spec[name])
        link = UartLink(machine.UART(link_spec["id"],
                                     baudrate=link_spec.get("baudrate", 115200), **uart_pins))
    else:
        link = UsbLink()
    arm = None
    if settings.get("watchdog_ms"):
        watchdog_ms = int(settings["watchdog_ms"])

        def arm() -> Any:
            return machine.WDT(timeout=watchdog_ms)
    serial = hexstr(machine.unique_id()) if hasattr(machine, "unique_id") else "0"
    scanner = Scanner(antennas, int(settings.get("misses", 3)), int(settings.get("limit", 1)))
    return App(str(settings["reader"]), scanner, link, clock,
               rate_ms=int(settings.get("rate_ms", RATE_MS)),
               reason=_reason(), model=str(settings.get("model", "BTR")), serial=serial,
               arm_watchdog=arm)


def main(path: str = SETTINGS, clock: Clock | None = None) -> App:
    with open(path) as f:
        settings = json.load(f)
    app = build(settings, clock)
    app.run()
    return app
