"""Readers wired straight to the Pi: the firmware's own drivers and scanner
(``firmware_bridge/mcu/btreader``) on Linux's spidev and i2c-dev instead of a microcontroller.

The scanner runs in a thread of its own (the drivers block on the bus); each change is handed
to the event loop. The semantics are the firmware's: ``present`` the first round a tag answers,
``removed`` after ``misses`` rounds without it, a chip that stops answering is ``disconnected``
once and, when it is back, ``reconnected`` with what changed meanwhile (and ``resync`` if
anything did). A round the chip could not finish (tags it could not tell apart) is a
``firmware_error`` (as the reader boards' ``ERR ANTn PROBLEM`` line is on a serial reader)
and removes nothing.
"""

from __future__ import annotations

import abc
import contextlib
import importlib
import threading
import urllib.parse
from types import TracebackType
from typing import Any

from firmware_bridge.mcu import HOST_TICKS
from firmware_bridge.mcu.btreader.clock import Clock
from firmware_bridge.mcu.btreader.inventory import Antenna, Scanner
from firmware_bridge.mcu.btreader.ports import I2cPort, SpiPort
from firmware_bridge.readers.base import ReaderError, ReaderKind
from firmware_bridge.readers.threaded import ThreadedReader

__all__ = ["ChipReader", "SpidevPort", "SmbusPort", "parse_chip_url", "bus_module", "BusTurn",
           "bus_turn"]


def parse_chip_url(url: str, scheme: str) -> tuple[str, dict[str, str]]:
    """``mfrc522://0.0,0.1?rate_ms=50`` -> ("0.0,0.1", {"rate_ms": "50"})."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != scheme or "://" not in url:
        raise ReaderError(f"not a {scheme}:// URL: {url!r}")
    where = urllib.parse.unquote(parts.netloc + parts.path)
    if not where:
        raise ReaderError(f"{url!r}: which bus? e.g. {scheme}://0.0 (spidev bus.device) "
                          + ("or pn532://i2c1" if scheme == "pn532" else ""))
    return where, {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}


def spidev_address(text: str) -> tuple[int, int]:
    """``0.1`` or ``spi0.1`` -> (0, 1): /dev/spidev0.1."""
    bus, dot, device = text.removeprefix("spi").partition(".")
    if not (dot and bus.isdigit() and device.isdigit()):
        raise ReaderError(f"{text!r} is not a spidev BUS.DEVICE such as 0.0")
    return int(bus), int(device)


def bus_module(given: Any, name: str, scheme: str) -> Any:
    """``given`` (a test's fake bus module) or the real one, imported only now."""
    if given is not None:
        return given
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ReaderError(f"the {scheme}:// reader needs {name}: "
                          "pip install 'bridge-table[readers]'") from None


class BusTurn:
    """Readers on one SPI bus take turns, first come first served, one antenna round each.

    Held for a whole round (field on, inventory, field off), so that on a bus of many chips
    (the club build's nine, docs/hardware/wiring.md) one field is on at a time, as on a reader
    board that polls its antennas in turn: no carrier beats against a neighbour's receiver,
    and the modules' 3.3 V supply carries one transmitter. First come first served (a ticket
    queue, not a bare lock, which a thread that releases and asks again at once may win
    every time): each reader gets its round once per turn of the others."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._next = 0
        self._serving = 0
        #: rounds taken, for the benchmark and the tests
        self.rounds = 0

    def __enter__(self) -> BusTurn:
        with self._changed:
            ticket = self._next
            self._next += 1
            while ticket != self._serving:
                self._changed.wait()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        with self._changed:
            self._serving += 1
            self.rounds += 1
            self._changed.notify_all()


_BUS_TURNS: dict[str, BusTurn] = {}
_BUS_TURNS_LOCK = threading.Lock()


def bus_turn(bus: str) -> BusTurn:
    """The one BusTurn of ``bus`` ("spi0") in this process, shared by every reader on it."""
    with _BUS_TURNS_LOCK:
        return _BUS_TURNS.setdefault(bus, BusTurn())


class SpidevPort(SpiPort):
    """One chip on /dev/spidevB.D: the kernel drives its chip-select line (CE0, CE1...)."""

    def __init__(self, spidev: Any, bus: int, device: int, speed_hz: int) -> None:
        self.dev = spidev.SpiDev()
        self.dev.open(bus, device)
        self.dev.max_speed_hz = speed_hz
        self.dev.mode = 0

    def transfer(self, data: bytes) -> bytes:
        return bytes(self.dev.xfer2(list(data)))

    def close(self) -> None:
        self.dev.close()


class SmbusPort(I2cPort):
    """One device on /dev/i2c-N, with plain I2C read and write transactions (i2c_rdwr): the
    PN532 does not speak SMBus's register protocol."""

    def __init__(self, smbus2: Any, bus: int, address: int) -> None:
        self.smbus2 = smbus2
        self.bus = smbus2.SMBus(bus)
        self.address = address

    def write(self, data: bytes) -> None:
        self.bus.i2c_rdwr(self.smbus2.i2c_msg.write(self.address, list(data)))

    def read(self, count: int) -> bytes:
        message = self.smbus2.i2c_msg.read(self.address, count)
        self.bus.i2c_rdwr(message)
        return bytes(message)

    def close(self) -> None:
        self.bus.close()


def number_options(query: dict[str, str], names: dict[str, type]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for key, value in query.items():
        if key == "kind":
            options[key] = value
            continue
        if key not in names:
            raise ReaderError(f"unknown option {key!r} (known: kind, {', '.join(names)})")
        try:
            options[key] = names[key](value, 0) if names[key] is int else names[key](value)
        except ValueError:
            raise ReaderError(f"option {key}={value!r} is not a number") from None
    return options


class ChipReader(ThreadedReader):
    """Antennas of chips on the Pi's own buses, polled in turn by the firmware's scanner."""

    thread_prefix = "chip-reader"

    def __init__(self, name: str, *, kind: ReaderKind = "inventory", debounce: float = 0.0,
                 rate_ms: int = 50, misses: int = 3, reconnect_interval: float = 1.0) -> None:
        super().__init__(name, kind=kind, debounce=debounce)
        if not 10 <= rate_ms <= 10000 or misses < 1 or reconnect_interval <= 0:
            raise ReaderError(f"reader {name!r}: rate_ms 10..10000, misses >= 1")
        self.rate_ms = rate_ms
        self.misses = misses
        self.reconnect_interval = reconnect_interval
        self.clock = Clock(HOST_TICKS)
        self.rounds = 0
        self._init_thread()
        self._reported: dict[int, set[str]] = {}

    def _turn(self) -> contextlib.AbstractContextManager[object]:
        """Held around each antenna's round: a bus shared with other readers (BusTurn)."""
        return contextlib.nullcontext()

    @abc.abstractmethod
    def _open(self) -> list[Antenna]:
        """Open the buses; the antennas to poll (raises OSError/ReaderError if it cannot)."""

    def _close(self) -> None:
        """Release the buses."""

    # ------------------------------------------------------------------ worker thread

    def _report(self, index: int, now: set[str], why: str | None) -> None:
        """Tell the loop how antenna ``index``'s list differs from what was reported."""
        before = self._reported.get(index, set())
        if why and before != now:
            self._to_loop(self._health, "resync", f"antenna {index}: {why}")
        for uid in sorted(before - now):
            self._to_loop(self._tag, str(index), uid, "removed")
        for uid in sorted(now - before):
            self._to_loop(self._tag, str(index), uid, "present")
        self._reported[index] = set(now)

    def _work(self) -> None:
        self._reported = {int(a): set(uids) for a, uids in self.restored.items()
                          if a.isdigit()}
        try:
            antennas = self._open()
        except (OSError, ReaderError, ImportError) as error:
            self._to_loop(self._health, "disconnected", f"{type(error).__name__}: {error}")
            return
        try:
            scanner = Scanner(antennas, self.misses)
            for antenna in antennas:
                with self._turn():
                    scanner.settle(antenna)
                if antenna.fault:
                    self._to_loop(self._health, "disconnected",
                                  f"antenna {antenna.index}: {antenna.chip.model} "
                                  f"{antenna.fault}")
                else:
                    self._report(antenna.index, set(antenna.present),
                                 "as found at start" if self.restored else None)
            while not self._stopping.is_set():
                start = self.clock.ticks_ms()
                for antenna in antennas:
                    with self._turn():
                        self._scan(scanner, antenna)
                self.rounds += 1
                rest = self.rate_ms - self.clock.ticks_diff(self.clock.ticks_ms(), start)
                if rest > 0:
                    self._stopping.wait(rest / 1000)
        finally:
            self._close()

    def _scan(self, scanner: Scanner, antenna: Antenna) -> None:
        for change in scanner.scan(antenna):
            if change[0] == "+":
                self._reported.setdefault(antenna.index, set()).add(change[1])
                self._to_loop(self._tag, str(antenna.index), change[1], "present")
            elif change[0] == "-":
                self._reported.setdefault(antenna.index, set()).discard(change[1])
                self._to_loop(self._tag, str(antenna.index), change[1], "removed")
            elif change[0] == "INV":
                self._to_loop(self._health, "reconnected",
                              f"antenna {antenna.index}: {antenna.chip.model} answers again")
                self._report(antenna.index, set(antenna.present), "changes while it was away")
            elif len(change) == 4:   # ERR ANTn fault model: the chip stopped answering
                self._to_loop(self._health, "disconnected",
                              f"antenna {antenna.index}: {change[3]} {change[2]}")
            else:
                # the same kind and text as a reader board's ERR line on a serial reader
                self._to_loop(self._health, "firmware_error", " ".join(change[1:]))
