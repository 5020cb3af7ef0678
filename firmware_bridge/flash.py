"""``bridge-table firmware``: put the reader firmware on a MicroPython board.

``bridge-table firmware flash --port /dev/ttyACM0 --reader N1 --antennas 1`` writes the reader's
settings (``reader.json``: its id, the board's wiring as docs/hardware/wiring.md draws it, its
antennas) and copies them with the firmware files to the board with ``mpremote``, the
MicroPython project's own tool (``pip install mpremote``, or the ``[mcu]`` extra), then resets
the board. MicroPython itself goes on the board first, once, as the board's maker describes
(docs/hardware/README.md). ``settings`` prints the settings without touching a board.
"""

from __future__ import annotations

import argparse
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.commandline import plain_help
from firmware_bridge.mcu import MAIN_FILE, firmware_files

__all__ = ["BOARDS", "CHIPS", "settings_for", "mpremote_commands", "main"]

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


class FlashError(Exception):
    """Settings that cannot be wired, or a board that cannot be reached."""


def settings_for(reader: str, antennas: int, *, board: str = "pico", chip: str = "mfrc522",
                 mux: bool = False, link: str = "usb", rate_ms: int = 50,
                 misses: int = 3) -> dict[str, Any]:
    """``reader.json`` for a reader of ``antennas`` antennas on ``board`` with ``chip`` front
    ends: one chip per antenna (chip selects) while there are chip-select pins for them,
    otherwise (or with ``mux``) one chip behind an antenna multiplexer."""
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
        "link": {"type": "usb"} if link == "usb" else pins["uart"],
        "buses": {bus: pins["i2c"] if bus == "i2c0" else pins["spi"]},
        "chips": chips, "antennas": antenna_list, "watchdog_ms": 8000,
    }
    if any("channel" in a for a in antenna_list):
        settings["mux"] = {"pins": pins["mux"][:max(1, math.ceil(math.log2(antennas)))]}
    return settings


def mpremote_commands(mpremote: Sequence[str], port: str, settings_file: Path
                      ) -> list[list[str]]:
    """The mpremote calls that put the firmware and its settings on the board, in order.
    ``main.py`` goes last: a copy cut short leaves the old ``main.py`` or none, never a new
    ``main.py`` importing half a firmware."""
    connect = [*mpremote, "connect", port]
    mkdir = "import os\ntry:\n os.mkdir('btreader')\nexcept OSError:\n pass\n"
    files = [str(f) for f in firmware_files()]
    return [
        [*connect, "exec", mkdir],
        [*connect, "fs", "cp", *files, ":btreader/"],
        [*connect, "fs", "cp", str(settings_file), ":reader.json"],
        [*connect, "fs", "cp", str(MAIN_FILE), ":main.py"],
        [*connect, "reset"],
    ]


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
                    return (f"reader {reader} answers: {model} firmware {version}, serial "
                            f"{serial_no}, {count} antenna(s)")
    raise FlashError(f"no answer from {port} within {timeout:g} s: is the board running "
                     "MicroPython, and are the chips wired as docs/hardware/wiring.md says?")


def _mpremote(given: str | None) -> list[str]:
    if given:
        return shlex.split(given)
    found = shutil.which("mpremote")
    if found:
        return [found]
    if importlib.util.find_spec("mpremote") is None:
        raise FlashError("mpremote is not installed: pip install mpremote "
                         "(or: pip install 'bridge-table[mcu]')")
    return [sys.executable, "-m", "mpremote"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table firmware",
                                description=plain_help(__doc__, first_line=True))
    sub = p.add_subparsers(dest="cmd", required=True)
    for name, help_ in (("flash", "copy the firmware and the reader's settings to a board"),
                        ("settings", "print the reader.json that flash would write")):
        f = sub.add_parser(name, help=help_)
        if name == "flash":
            f.add_argument("--port", required=True, help="the board's serial port "
                                                         "(/dev/ttyACM0, /dev/serial/by-id/...)")
            f.add_argument("--mpremote", default=None,
                           help="the mpremote command (default: mpremote on PATH)")
            f.add_argument("--dry-run", action="store_true", help="print the commands only")
            f.add_argument("--no-check", action="store_true",
                           help="do not wait for the board to answer after the reset")
            f.add_argument("--check-timeout", type=float, default=20.0,
                           help="seconds to wait for the board's answer (default 20)")
        f.add_argument("--reader", required=True, help="the reader's id on the wire (N1, BOX)")
        f.add_argument("--antennas", type=int, default=1,
                       help="antennas (front ends) on the board (default %(default)s)")
        f.add_argument("--board", choices=tuple(BOARDS), default="pico",
                       help="the microcontroller board (default %(default)s)")
        f.add_argument("--chip", choices=CHIPS, default="mfrc522",
                       help="the front end on each antenna (default %(default)s)")
        f.add_argument("--mux", action="store_true",
                       help="one chip behind an antenna multiplexer, even for few antennas")
        f.add_argument("--link", choices=("usb", "uart"), default="usb",
                       help="the line to the Pi: the board's USB port or its UART")
        f.add_argument("--rate-ms", type=int, default=50, help="one round over all antennas")
        f.add_argument("--settings", type=Path, default=None,
                       help="a ready reader.json instead of the options above")
    return p


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    if args.settings is not None:
        try:
            data = json.loads(args.settings.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise FlashError(f"{args.settings}: {error}") from None
        if not isinstance(data, dict) or not {"reader", "chips", "antennas"} <= data.keys():
            raise FlashError(f"{args.settings}: needs reader, chips and antennas")
        return data
    if not 10 <= args.rate_ms <= 10000:
        raise FlashError(f"--rate-ms {args.rate_ms}: 10 to 10000")
    return settings_for(args.reader, args.antennas, board=args.board, chip=args.chip,
                        mux=args.mux, link=args.link, rate_ms=args.rate_ms)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = _settings(args)
        text = json.dumps(settings, indent=1) + "\n"
        if args.cmd == "settings":
            print(text, end="")
            return 0
        if not args.dry_run and not os.path.exists(args.port):
            raise FlashError(f"{args.port}: no such port (is the board plugged in? "
                             "ls /dev/serial/by-id/)")
        mpremote = _mpremote(args.mpremote) if not args.dry_run else \
            shlex.split(args.mpremote or "mpremote")
        with tempfile.TemporaryDirectory() as tmp:
            settings_file = Path(tmp) / "reader.json"
            settings_file.write_text(text, encoding="utf-8")
            for command in mpremote_commands(mpremote, args.port, settings_file):
                print("$", shlex.join(command), flush=True)
                if args.dry_run:
                    continue
                try:
                    done = subprocess.run(command, timeout=120, check=False)
                except (OSError, subprocess.TimeoutExpired) as error:
                    raise FlashError(f"mpremote: {error}") from None
                if done.returncode != 0:
                    raise FlashError(f"mpremote failed (exit {done.returncode}); the board "
                                     "keeps what it had")
        if args.cmd == "flash" and not args.dry_run:
            print(f"reader {settings['reader']} flashed: {len(settings['antennas'])} "
                  "antenna(s)", flush=True)
            if not args.no_check and settings.get("link", {}).get("type", "usb") == "usb":
                print(check_board(args.port, str(settings["reader"]),
                                  len(settings["antennas"]), args.check_timeout))
                print(f"its URL: serial://{args.port}")
    except FlashError as error:
        print(f"bridge-table firmware: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bridge-table firmware: interrupted", file=sys.stderr)
        return 130
    return 0
