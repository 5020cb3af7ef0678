"""``bridge-table demo [--lang en|vi|zh] [--speed X]``: the command line of the demo
(``controller.demo.runner`` runs it)."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.broker.mosquitto import MosquittoError
from controller.commandline import add_log_level, bounded, setup_logging
from controller.demo.plan import DemoError
from controller.demo.runner import run_demo, until_signal
from controller.demo.view import LANGS

__all__ = ["main", "parser"]

#: a play speed: a finite number above 0 (0 would never play a card)
_speed = bounded(float, lambda v: math.isfinite(v) and v > 0, "a number above 0")
#: ``--revoke-trick``: 1 to 11 (the demo's revoke is established by a later trick)
#: ``--quiet-timeout``: seconds above 0
_seconds = bounded(float, lambda v: math.isfinite(v) and v > 0, "a number of seconds above 0")
_trick = bounded(int, lambda v: 1 <= v <= 11, "a trick from 1 to 11")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table demo",
                                 description="a whole board on a simulated table")
    ap.add_argument("--lang", choices=LANGS, default=os.environ.get("BRIDGE_TABLE_LANG", "en"),
                    help="the language of the table and the lines (default "
                         "$BRIDGE_TABLE_LANG or en)")
    ap.add_argument("--speed", type=_speed, default=1.0,
                    help="play speed (2 = twice as fast; the board takes ~40 s at 1)")
    ap.add_argument("--board", type=Path, help="another PBN board with full play")
    ap.add_argument("--no-revoke", action="store_true", help="play the board as recorded")
    ap.add_argument("--revoke-trick", type=_trick, default=6, metavar="N",
                    help="the trick (1-11) from which a defender revokes at the first chance "
                         "(default %(default)s)")
    ap.add_argument("--plain", action="store_true", help="plain lines even on a terminal")
    ap.add_argument("--direct", action="store_true",
                    help="publish the events as a bridge would, without the simulated "
                         "table's readers (a machine without pseudo-terminals)")
    ap.add_argument("--quiet-timeout", type=_seconds, default=300.0, metavar="S",
                    help="give up when the table's topics stay silent this long (default "
                         "%(default)s s; a slow machine is waited for, however long the "
                         "board takes)")
    add_log_level(ap, default="WARNING")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    setup_logging(args)
    try:
        return asyncio.run(until_signal(run_demo(
            lang=args.lang, speed=args.speed, live=False if args.plain else None,
            board_file=args.board, direct=args.direct, timeout=args.quiet_timeout,
            revoke_trick=None if args.no_revoke else args.revoke_trick)))
    except (DemoError, MosquittoError) as e:
        print(f"bridge-table demo: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
