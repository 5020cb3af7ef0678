"""``bridge-table verify``: check dealt boards against their deal file.

    bridge-table verify --deals SET.dup [--config STATION.toml] [--report OUT]
    bridge-table verify --simulate [--boards N] [--layout pockets|sequential] [--report OUT]
    bridge-table verify --deals SET.dup --events mqtt://HOST:PORT [--station ID] [--report OUT]

With a station config the readers are opened (board reader + pocket readers) and boards are
followed as they come until every board of the file has a verdict or Ctrl-C; each verdict is
printed, a progress bar kept on stderr, a summary printed at the end, the report written to
OUT.json and OUT.csv, and everything published on ``{root}/{station}/verify`` when the config
(or ``--broker``) names a broker. ``--simulate`` runs the simulated station (virtual reader
firmware on pseudo-terminals, read through the real serial path) with the bundled deal file
and a few planted faults, each kind at least once, and checks that each was found.
``--events`` follows ``{root}/{station}/event`` on a broker instead, where a bridge running
the station's readers publishes them (contract events, zones ``board`` and ``pocket``).

Exit status: 0 every board right (simulation: every planted fault found), 1 faulty boards
(simulation: a fault missed), 2 a set-up problem (bad deal file, config, reader).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from typing import TextIO

from controller.commandline import add_log_level, setup_logging
from controller.verify.runs import VerifyOptions, run_live, run_on_events, run_simulated
from controller.verify.station import VerifyError
from firmware_bridge.examples import example

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table verify",
                                description="check dealt boards against their deal file")
    p.add_argument("--deals", help="the deal file: .pbn, .dup, .bri or .dge")
    p.add_argument("--first-board", type=int, default=None, metavar="N",
                   help="the board number of a .bri/.dge/.dup file's first record (default: "
                        "the .dup's control field, else 1)")
    p.add_argument("--config", default=None,
                   help="the station's config (default the shipped station.toml: "
                        "`bridge-table examples station.toml`)")
    p.add_argument("--report", help="write the report to REPORT.json and REPORT.csv")
    p.add_argument("--broker", help="publish on this broker (overrides the config's)")
    p.add_argument("--simulate", action="store_true",
                   help="run the simulated station with the bundled demo set and planted faults")
    p.add_argument("--boards", type=int, default=24, help="--simulate: how many boards")
    p.add_argument("--layout", choices=("pockets", "sequential"), default=None,
                   help="--simulate/--events: four pocket readers, or one shown the pockets in "
                        "turn (default: the config's, else pockets)")
    p.add_argument("--order", default=None,
                   help="--events: the order of a sequential station's pockets, e.g. NESW")
    p.add_argument("--events", metavar="URL",
                   help="follow the station's events on this broker (a bridge runs the readers: "
                        "{root}/{station}/event) instead of opening the readers")
    p.add_argument("--station", default=None,
                   help="--events: the station id in topics (default: the config's table id)")
    p.add_argument("--root", default="bridge", help="--events: the topic root")
    p.add_argument("--no-faults", action="store_true", help="--simulate: plant no faults")
    p.add_argument("--quiet", "-q", action="store_true", help="summary only")
    add_log_level(p, default="WARNING")
    return p


def _options(args: argparse.Namespace) -> VerifyOptions:
    """The run the command line asks for."""
    return VerifyOptions(
        deals=args.deals, first_board=args.first_board,
        config=args.config or str(example("station.toml")),
        report=args.report, broker=args.broker, simulate=args.simulate, boards=args.boards,
        layout=args.layout, order=args.order, events=args.events, station=args.station,
        root=args.root, no_faults=args.no_faults, quiet=args.quiet)


def main(argv: Sequence[str] | None = None, *, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    setup_logging(args)
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        options = _options(args)
        if options.simulate:
            return asyncio.run(run_simulated(options, out, err))
        if options.events:
            return asyncio.run(run_on_events(options, out, err))
        return asyncio.run(run_live(options, out, err))
    except VerifyError as e:
        print(f"bridge-table verify: {e}", file=err)
        return 2
    except OSError as e:  # a reader or broker that cannot be reached at start-up
        print(f"bridge-table verify: {e}", file=err)
        return 2
