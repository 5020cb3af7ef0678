"""A microcontroller board under CPython: the ``machine`` module the firmware imports, wired to
emulated chips, and a pty as its serial port.

``firmware_bridge/mcu/btreader`` runs unchanged: :class:`EmulatedBoard` puts this module's
``machine`` stand-in into ``sys.modules``, builds the firmware from its settings (the same
``reader.json`` that ``bridge-table firmware flash`` writes) and runs its main loop in a thread.
Its UART is the master side of a pseudo-terminal; the host opens the slave side (or ``link``, a
symlink to it) like any USB serial port.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import importlib.util
import itertools
import os
import select
import sys
import threading
import types
from pathlib import Path
from typing import Any, Protocol

from firmware_bridge.mcu import HOST_TICKS
from firmware_bridge.sim.firmware import open_pty

__all__ = ["Wiring", "EmulatedBoard", "CLOCK", "machine_module", "use_wiring"]


class SpiChip(Protocol):
    connected: bool

    def spi_transfer(self, data: bytes) -> bytes: ...


class I2cChip(Protocol):
    def i2c_write(self, data: bytes) -> None: ...

    def i2c_read(self, count: int) -> bytes: ...


class Wiring:
    """What is soldered to what on one board: chips on SPI buses behind chip-select pins, chips
    on I2C buses at addresses, the level of every output pin, the UART's file descriptor."""

    def __init__(self) -> None:
        self.pins: dict[int, int] = {}
        self.spi: dict[tuple[int, int], SpiChip] = {}    # (bus id, CS pin) -> chip
        self.i2c: dict[tuple[int, int], I2cChip] = {}    # (bus id, address) -> chip
        self.uart_fd: int | None = None

    def pin(self, number: int) -> int:
        return self.pins.get(number, 0)


_current = threading.local()


def use_wiring(wiring: Wiring) -> None:
    """Make this thread's Pin/SPI/I2C/UART reach ``wiring`` (the MicroPython test's host
    side calls them on the firmware's behalf)."""
    _current.wiring = wiring


def _wiring() -> Wiring:
    wiring: Wiring | None = getattr(_current, "wiring", None)
    if wiring is None:
        raise RuntimeError("machine stand-in used outside an EmulatedBoard")
    return wiring


class Pin:
    OUT = 1
    IN = 0
    PULL_UP = 1

    def __init__(self, number: int, mode: int = -1, pull: int = -1, value: int | None = None
                 ) -> None:
        self.wiring = _wiring()
        self.number = number
        if value is not None:
            self.value(value)

    def value(self, level: int | None = None) -> int:
        if level is None:
            return self.wiring.pin(self.number)
        self.wiring.pins[self.number] = 1 if level else 0
        return self.wiring.pins[self.number]

    def __call__(self, level: int | None = None) -> int:
        return self.value(level)


class SPI:
    def __init__(self, bus: int, **settings: Any) -> None:
        self.wiring = _wiring()
        self.bus = bus

    def write_readinto(self, out: bytes, into: bytearray) -> None:
        selected = [chip for (bus, cs), chip in self.wiring.spi.items()
                    if bus == self.bus and self.wiring.pin(cs) == 0]
        # no chip selected, or its module gone: MISO is pulled low
        back = selected[0].spi_transfer(bytes(out)) if len(selected) == 1 else bytes(len(out))
        into[:] = back

    def write(self, out: bytes) -> None:
        self.write_readinto(out, bytearray(len(out)))


class I2C:
    def __init__(self, bus: int, **settings: Any) -> None:
        self.wiring = _wiring()
        self.bus = bus

    def _device(self, address: int) -> I2cChip:
        key = (self.bus, address)
        if key not in self.wiring.i2c:
            raise OSError(errno.EIO, "no acknowledge")
        return self.wiring.i2c[key]

    def writeto(self, address: int, data: bytes) -> int:
        self._device(address).i2c_write(bytes(data))
        return len(data)

    def readfrom(self, address: int, count: int) -> bytes:
        return self._device(address).i2c_read(count)


class UART:
    def __init__(self, uart_id: int, baudrate: int = 115200, **settings: Any) -> None:
        self.wiring = _wiring()
        if self.wiring.uart_fd is None:
            raise OSError(errno.ENODEV, "no UART wired on this board")
        self.fd = self.wiring.uart_fd

    def write(self, data: bytes) -> int:
        view = memoryview(bytes(data))
        while view:
            try:
                written = os.write(self.fd, view)
            except BlockingIOError:
                select.select([], [self.fd], [], 0.1)
                continue
            except OSError as error:
                if error.errno in (errno.EIO, errno.EBADF):
                    return 0   # nobody on the other end: the bytes are lost, as on a wire
                raise
            view = view[written:]
        return len(data)

    def any(self) -> int:
        try:
            return 1 if select.select([self.fd], [], [], 0)[0] else 0
        except (OSError, ValueError):
            return 0

    def read(self) -> bytes | None:
        try:
            return os.read(self.fd, 4096) or None
        except (BlockingIOError, OSError):
            return None


class WDT:
    def __init__(self, timeout: int = 5000) -> None:
        self.timeout = timeout
        self.fed = 0

    def feed(self) -> None:
        self.fed += 1


def machine_module() -> types.ModuleType:
    """The stand-in for MicroPython's ``machine`` (installed once in ``sys.modules``)."""
    existing = sys.modules.get("machine")
    if existing is not None:
        if getattr(existing, "__emulated__", False):
            return existing
        raise RuntimeError("a real 'machine' module is importable here: not replacing it")
    module = types.ModuleType("machine")
    module.__dict__.update(
        __emulated__=True, Pin=Pin, SPI=SPI, I2C=I2C, UART=UART, WDT=WDT,
        PWRON_RESET=1, HARD_RESET=2, WDT_RESET=3, DEEPSLEEP_RESET=4, SOFT_RESET=5,
        reset_cause=lambda: getattr(_current, "reset_cause", 1),
        unique_id=lambda: getattr(_current, "unique_id", b"\xe6\x61\x41\x04\x03\x2b\x5a\x2c"))
    sys.modules["machine"] = module
    return module


CLOCK = HOST_TICKS
_serials = itertools.count(1)


class EmulatedBoard:
    """The firmware as shipped, running on ``wiring`` with ``settings`` (``reader.json``'s
    content), its UART on a fresh pty. ``link``: a symlink kept pointing at the pty."""

    def __init__(self, settings: dict[str, Any], wiring: Wiring, *,
                 link: Path | None = None, reset_cause: int = 1,
                 firmware: Path | None = None) -> None:
        if settings.get("link", {"type": "usb"}).get("type") == "usb":
            # the board's USB CDC port (MicroPython's stdin/stdout) is its UART 0 here: both
            # are a serial line to the host, and the pty is that line
            settings = dict(settings, link={"type": "uart", "id": 0})
        self.settings = settings
        #: a copy of the firmware package to run (a flashed board's ``/btreader``) instead
        #: of the one in this package
        self.firmware = firmware
        self.wiring = wiring
        self.link = link
        self.reset_cause = reset_cause
        self.app: Any = None
        self.error: BaseException | None = None
        self.slave_path = ""
        self._thread: threading.Thread | None = None
        self._fds: tuple[int, int] | None = None
        self._started = threading.Event()

    def start(self) -> EmulatedBoard:
        machine_module()
        master, slave, self.slave_path = open_pty(self.link)
        self._fds = (master, slave)
        self.wiring.uart_fd = master
        self._thread = threading.Thread(target=self._run, name=f"board-{next(_serials)}",
                                        daemon=True)
        self._thread.start()
        self._started.wait(10)
        return self

    def _load(self) -> tuple[Any, Any]:
        """The firmware's ``board`` and ``clock`` modules, from this package or the copy."""
        if self.firmware is None:
            from firmware_bridge.mcu.btreader import board, clock
            return board, clock
        name = f"btreader_copy{next(_serials)}"
        spec = importlib.util.spec_from_file_location(
            name, self.firmware / "__init__.py", submodule_search_locations=[str(self.firmware)])
        if spec is None or spec.loader is None:
            raise ImportError(f"no firmware package in {self.firmware}")
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        spec.loader.exec_module(package)
        return importlib.import_module(f"{name}.board"), importlib.import_module(f"{name}.clock")

    def _run(self) -> None:
        board, clock = self._load()
        Clock = clock.Clock
        _current.wiring = self.wiring
        _current.reset_cause = self.reset_cause
        try:
            self.app = board.build(self.settings, Clock(CLOCK))
            self._started.set()
            self.app.run()
        except BaseException as error:  # noqa: BLE001 - kept for the test to see
            self.error = error
        finally:
            self._started.set()

    def stop(self) -> None:
        if self.app is not None:
            self.app.running = False
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        if self._fds is not None:
            for fd in self._fds:
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._fds = None
        if self.link is not None:
            with contextlib.suppress(FileNotFoundError):
                self.link.unlink()

    def __enter__(self) -> EmulatedBoard:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
