"""``bridge-table club-night``: a whole club night on one laptop, from one command.

    bridge-table club-night SESSION.toml [--work DIR] [--seed N] [--speed X]
                            [--revoke-rate P] [--director-rate P] [--turn-rate P]
                            [--late-slide-rate P] [--hesitate-rate P] [--deals FILE]
                            [--faults N] [--keep-open]

The venue's locked-down broker, the controller, the console, the relay, the vugraph,
``results`` and a simulated table with its own bridge for every table of the session's
movement, each its own process; the movement played round by round; the ranking and the
records at the end (controller/clubnight/night.py, docs/club-night.md).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from controller.boards.deals import DealsError
from controller.broker.mosquitto import MosquittoError
from controller.clubnight.night import (
    DEFAULT_HABITS,
    FAULT_KINDS,
    Night,
    NightError,
    NightOptions,
    run_night,
)
from controller.clubnight.venue import VenueError
from controller.commandline import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    add_log_level,
    bounded,
    chosen_level,
)
from controller.session import SessionError
from controller.venue.config import BrokerConfigError

__all__ = ["main"]

PROG = "bridge-table club-night"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog=PROG, description="A whole club night on this machine: the venue's broker, "
        "the services and a simulated table for every table of the movement, played round "
        "by round.", epilog="docs/club-night.md")
    ap.add_argument("session", type=Path, help="the session file (docs/session.md)")
    ap.add_argument("--work", type=Path, default=Path("club-night"),
                    help="the night's directory: broker, logs, journal, records (default "
                         "%(default)s; it must be empty or absent)")
    ap.add_argument("--seed", type=int, default=1,
                    help="the seed of the deals, the play and the faults (default 1)")
    ap.add_argument("--speed", type=_non_negative, default=0.0,
                    help="the players' pace multiplied: 1 real time (about two seconds a "
                         "card), 20 twenty times faster; 0 (default) as fast as the tables "
                         "take it")
    ap.add_argument("--revoke-rate", type=_share, default=0.0,
                    help="share of boards with a revoke (Law 64), 0 to 1 (default 0)")
    ap.add_argument("--director-rate", type=_share, default=0.0,
                    help="share of boards on which a player calls the director (the table's "
                         "director button; the console lists the calls), 0 to 1 (default 0)")
    players = ap.add_argument_group(
        "the players", "how the simulated players handle the cards and calls "
        "(firmware_bridge/sim/players.py), seeded by --seed; --turn-rate 0 --late-slide-rate 0 "
        "--hesitate-rate 0: every card laid once and slid off at once")
    players.add_argument("--turn-rate", type=_share, default=DEFAULT_HABITS.turn_rate,
                         help="share of the cards of a complete trick turned face down on "
                              "their spot before they are slid off, and of face-down opening "
                              "leads (default %(default)s)")
    players.add_argument("--late-slide-rate", type=_share,
                         default=DEFAULT_HABITS.late_slide_rate,
                         help="share of cards and calls slid off late: the next one laid on "
                              "top first, a collision on the antenna (default %(default)s)")
    players.add_argument("--hesitate-rate", type=_share, default=DEFAULT_HABITS.hesitate_rate,
                         help="share of calls and cards made after a long pause (default "
                              "%(default)s)")
    ap.add_argument("--deals", type=Path, default=None,
                    help="a deals file (PBN, DUP, BRI, DGE) for the boards (default: the "
                         "session's deals file, else random deals from the seed)")
    ap.add_argument("--faults", type=_non_negative_int, default=0,
                    help="programs killed at random moments (seeded) and started again")
    ap.add_argument("--fault-kinds", default=",".join(FAULT_KINDS),
                    help=f"what --faults kills, among {','.join(FAULT_KINDS)} (default: all)")
    ap.add_argument("--console-port", type=_port, default=0,
                    help="the console's port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--vugraph-port", type=_port, default=0,
                    help="the vugraph's port on 127.0.0.1 (default: a free one)")
    ap.add_argument("--join", type=Path, default=None, metavar="DIR",
                    help="join the broker that runs with bridge-table broker-config's files "
                         "in DIR (its clients/ must have a login for every program) instead "
                         "of starting one")
    ap.add_argument("--keep-open", action="store_true",
                    help="after the night, keep everything up until Ctrl-C")
    add_log_level(ap, default="WARNING")
    return ap


_non_negative = bounded(float, lambda v: v >= 0, "a number of at least 0")
_share = bounded(float, lambda v: 0 <= v <= 1, "a share from 0 to 1")
_non_negative_int = bounded(int, lambda v: v >= 0, "a whole number of at least 0")
_port = bounded(int, lambda v: 1 <= v <= 65535, "a port from 1 to 65535")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    kinds = tuple(k.strip() for k in args.fault_kinds.split(",") if k.strip())
    unknown = sorted(set(kinds) - set(FAULT_KINDS))
    if unknown or not kinds:
        print(f"{PROG}: --fault-kinds: {', '.join(unknown) or 'none given'}: choose among "
              f"{','.join(FAULT_KINDS)}", file=sys.stderr)
        return EXIT_USAGE
    if args.join is not None and "broker" in kinds:
        if args.fault_kinds != ",".join(FAULT_KINDS):
            print(f"{PROG}: --fault-kinds broker: a broker it joins is not its to kill",
                  file=sys.stderr)
            return EXIT_USAGE
        kinds = tuple(k for k in kinds if k != "broker")
    night = Night(NightOptions(
        session=args.session, work=args.work, seed=args.seed, speed=args.speed,
        revoke_rate=args.revoke_rate, director_rate=args.director_rate, deals=args.deals,
        faults=args.faults, fault_kinds=kinds,
        console_port=args.console_port, vugraph_port=args.vugraph_port,
        keep_open=args.keep_open, log_level=chosen_level(args), join=args.join,
        habits=replace(DEFAULT_HABITS, turn_rate=args.turn_rate,
                       late_slide_rate=args.late_slide_rate,
                       hesitate_rate=args.hesitate_rate)))
    try:
        return asyncio.run(_interruptible(night))
    except (NightError, SessionError, DealsError, BrokerConfigError, MosquittoError,
            VenueError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        name = getattr(exc, "filename", None)
        print(f"{PROG}: " + (f"{name}: " if name else "") + f"{exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_USAGE
    except (KeyboardInterrupt, asyncio.CancelledError):
        print(f"{PROG}: interrupted; every program stopped", file=sys.stderr)
        return EXIT_INTERRUPTED


async def _interruptible(night: Night) -> int:
    """The night, cancelled by SIGINT or SIGTERM (its clean-up stops every program)."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, task.cancel)
    return await run_night(night)


if __name__ == "__main__":
    sys.exit(main())
