"""``bridge-table firmware``: put the reader firmware on a MicroPython board.

The command line of ``firmware_bridge.flash`` (``flash`` and ``settings``, said there).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.commandline import plain_help
from firmware_bridge.flash import (
    BOARDS,
    CHIPS,
    RATE_MS,
    FlashError,
    flash,
    read_settings,
    settings_for,
    settings_text,
)

__all__ = ["main"]


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
        f.add_argument("--rate-ms", type=int, default=RATE_MS,
                       help="the scan period, one round over all antennas, ms (default "
                            "%(default)s, docs/sensing.md; at most half the watchdog's 8 s)")
        f.add_argument("--tag-limit", type=int, default=1,
                       help="tags one antenna resolves at once (default %(default)s, "
                            "docs/sensing.md)")
        f.add_argument("--settings", type=Path, default=None,
                       help="a ready reader.json instead of the options above")
    return p


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """The reader's settings the command line gives: its file, or its options."""
    if args.settings is not None:
        return read_settings(args.settings)
    return settings_for(args.reader, args.antennas, board=args.board, chip=args.chip,
                        mux=args.mux, link=args.link, rate_ms=args.rate_ms,
                        tag_limit=args.tag_limit)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = _settings(args)
        if args.cmd == "settings":
            print(settings_text(settings), end="")
            return 0
        flash(settings, args.port, mpremote=args.mpremote, dry_run=args.dry_run,
              check=not args.no_check, check_timeout=args.check_timeout)
    except FlashError as error:
        print(f"bridge-table firmware: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("bridge-table firmware: interrupted", file=sys.stderr)
        return 130
    return 0
