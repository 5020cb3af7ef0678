"""``bridge-table tags enroll|enroll-bidbox|enroll-boards|list|check|generate-sim``: the
command line of the tag registry (``firmware_bridge.tags``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from firmware_bridge.readers.base import ReaderError
from firmware_bridge.tags import (
    MAX_BOARD,
    Enrollment,
    RegistryError,
    TagRegistry,
    check_files,
    enrollment_base,
    sim_registry,
    summary_lines,
)

__all__ = ["main"]


def _parse_numbers(text: str) -> list[int]:
    """``1-36`` or ``1,2,5-8`` -> numbers."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        try:
            first, last = int(lo), int(hi or lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a board list: {text!r}") from None
        if not 1 <= first <= last <= MAX_BOARD:
            raise argparse.ArgumentTypeError(f"boards must be 1..{MAX_BOARD}: {text!r}")
        out += range(first, last + 1)
    return out


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table tags",
                                description="Tag registry: which RFID tag is which card (of "
                                            "which deck), bid card, marker or board wallet.")
    sub = p.add_subparsers(dest="cmd", required=True)
    enrol = {
        "enroll": "register a deck: its 52 cards in the order SA, SK, ..., C2",
        "enroll-bidbox": "register a bidding box: 1C..7NT, Pass/X/XX copies, STOP, ALERT",
        "enroll-boards": "register board wallets",
    }
    for name, help_ in enrol.items():
        e = sub.add_parser(name, help=help_)
        e.add_argument("--registry", type=Path, required=True, help="file to add to")
        e.add_argument("--reader", required=True,
                       help="reader URL: serial:///dev/ttyUSB0, nfc://usb, sim://...")
        e.add_argument("--kind", choices=("inventory", "tap"), default=None)
        e.add_argument("--also", type=Path, action="append", default=[],
                       help="other registry files whose tags must not be enrolled again")
        if name == "enroll":
            e.add_argument("--deck", required=True, help="deck name (e.g. the board number)")
        elif name == "enroll-bidbox":
            e.add_argument("--box", required=True, help="bidding box name")
            e.add_argument("--passes", type=int, default=8)
            e.add_argument("--doubles", type=int, default=2)
            e.add_argument("--redoubles", type=int, default=2)
        else:
            e.add_argument("--boards", type=_parse_numbers, required=True, help="e.g. 1-36")
    for name, help_ in (("list", "what the registry files hold"),
                        ("check", "check registry files: shapes, complete decks, conflicts")):
        c = sub.add_parser(name, help=help_)
        c.add_argument("files", type=Path, nargs="+")
    g = sub.add_parser("generate-sim", help="write the simulated table's registry")
    g.add_argument("file", type=Path)
    g.add_argument("--boards", type=int, default=36)
    return p


def _enrollment(args: argparse.Namespace) -> Enrollment:
    """The enrolment the command line asks for."""
    target, known = enrollment_base(args.registry, args.also)
    if args.cmd == "enroll":
        return Enrollment.deck(target, args.deck, known)
    if args.cmd == "enroll-bidbox":
        copies = {"Pass": args.passes, "X": args.doubles, "XX": args.redoubles}
        return Enrollment.bidbox(target, args.box, known, copies)
    return Enrollment.boards(target, args.boards, known)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.cmd in ("enroll", "enroll-bidbox", "enroll-boards"):
            asyncio.run(_enrollment(args).run_on_reader(args.reader, args.kind))
            return 0
        if args.cmd == "list":
            for line in summary_lines(args.files):
                print(line)
            return 0
        if args.cmd == "check":
            problems = check_files(args.files)
            for problem in problems:
                print(problem)
            if not problems:
                total = len(TagRegistry.load(args.files))
                print(f"ok: {total} tags in {len(args.files)} file(s)")
            return 2 if problems else 0  # files that cannot be used as they are
        sim_registry(args.file, args.boards).write()
        print(f"written {args.file}")
        return 0
    except RegistryError as error:  # a registry file missing or wrong: the input (exit 2)
        print(f"bridge-table tags: {error}", file=sys.stderr)
        return 2
    except ReaderError as error:
        print(f"bridge-table tags: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted: nothing written", file=sys.stderr)
        return 130
