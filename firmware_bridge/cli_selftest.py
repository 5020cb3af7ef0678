"""``bridge-table selftest``: the command line of the commissioning test of a built table
(``firmware_bridge.selftest``)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.commandline import add_log_level, setup_logging
from firmware_bridge.config import load_config
from firmware_bridge.errors import BridgeError
from firmware_bridge.examples import example
from firmware_bridge.selftest import SelfTest, run_selftest, write_report
from firmware_bridge.sim.faults import FaultError, SimFaults
from firmware_bridge.sim.table import SimError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bridge-table selftest",
        description="Commissioning test of a built table: every antenna, button, LED and the "
                    "display; writes REPORT.txt and REPORT.json.")
    p.add_argument("--config", default=None,
                   help="the table's TOML file (docs/config.md); with --scripted the default "
                        "is the shipped simulated table (`bridge-table examples sim.toml`)")
    p.add_argument("--report", default="", help="report path without extension "
                   "(default: selftest-table-ID in the current directory)")
    p.add_argument("--reader", action="append", default=[],
                   help="test only this reader (repeatable)")
    p.add_argument("--repeats", type=int, default=3, help="lay-and-lift cycles per antenna")
    p.add_argument("--timeout", type=float, default=30.0,
                   help="seconds to wait for a read or a button press")
    p.add_argument("--scripted", action="store_true",
                   help="the simulated table (sim:// readers) with a scripted technician")
    f = p.add_argument_group(
        "simulated faults (with --scripted; ANTENNA is READER/NUMBER of the table file)")
    f.add_argument("--miss-rate", action="append", default=[], metavar="[ANTENNA=]P",
                   help="the chance a tag does not answer a polling round: every antenna's, "
                        "or one antenna's (repeatable)")
    f.add_argument("--tag-limit", type=int, default=1, metavar="N",
                   help="tags one antenna resolves at once (default 1)")
    f.add_argument("--dead", action="append", default=[], metavar="ANTENNA",
                   help="an antenna that reads nothing (repeatable)")
    f.add_argument("--swap", action="append", default=[], metavar="ANTENNA,ANTENNA",
                   help="two antennas whose chip selects are swapped (repeatable)")
    f.add_argument("--reads-neighbour", action="append", default=[], metavar="ANTENNA=PLACE",
                   help="an antenna that also reads a card at PLACE: another ANTENNA's spot, "
                        "'N trick row', 'N call row' or \"dummy's area\" (repeatable)")
    f.add_argument("--unplugged", action="append", default=[], metavar="READER",
                   help="a reader whose cable is out (repeatable)")
    f.add_argument("--wallet-cards", type=int, default=0, metavar="N",
                   help="card stickers of a full wallet that lie in the board reader's field "
                        "with the wallet's own (default 0)")
    add_log_level(p, default="WARNING")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    setup_logging(args)
    if args.repeats < 1 or args.timeout <= 0:
        print("bridge-table selftest: --repeats is at least 1 and --timeout above 0",
              file=sys.stderr)
        return 2
    if args.config is None:
        if not args.scripted:
            print("bridge-table selftest: --config TABLE.toml is needed (the table's file; "
                  "--scripted alone tests the shipped simulated table)", file=sys.stderr)
            return 2
        args.config = str(example("sim.toml"))
    try:
        config = load_config(args.config)
    except BridgeError as error:
        print(f"bridge-table selftest: {error}", file=sys.stderr)
        return 2
    unknown = [r for r in args.reader if r not in {rc.name for rc in config.readers}]
    if unknown:
        print(f"bridge-table selftest: no reader {', '.join(unknown)} in {args.config}",
              file=sys.stderr)
        return 2
    if not config.readers:
        print(f"bridge-table selftest: {args.config} has no [[readers]] to test",
              file=sys.stderr)
        return 2
    if args.scripted and any(not rc.url.startswith("sim://") for rc in config.readers):
        print("bridge-table selftest: --scripted needs a simulated table (every reader "
              "sim://), such as the shipped one (`bridge-table examples sim.toml`)",
              file=sys.stderr)
        return 2
    try:
        faults = SimFaults.parse(
            [f"{rc.name}/{a}" for rc in config.readers for a in rc.antennas],
            miss_rate=args.miss_rate, tag_limit=args.tag_limit, dead=args.dead, swap=args.swap,
            reads_neighbour=args.reads_neighbour, unplugged=args.unplugged,
            wallet_cards=args.wallet_cards)
    except FaultError as error:
        print(f"bridge-table selftest: {error}", file=sys.stderr)
        return 2
    if faults != SimFaults() and not args.scripted:
        print("bridge-table selftest: simulated faults need --scripted", file=sys.stderr)
        return 2
    prefix = Path(args.report or f"selftest-table-{config.table.id}")
    running: list[SelfTest] = []
    code = 0
    try:
        report = asyncio.run(run_selftest(
            config, repeats=args.repeats, timeout=args.timeout, scripted=args.scripted,
            readers=args.reader, hold=running.append, faults=faults))
    except (KeyboardInterrupt, EOFError) as stop:
        if not running:
            print("\nbridge-table selftest: interrupted before the first step", file=sys.stderr)
            return 130
        report = running[0].report
        report.interrupted = True
        why = "interrupted (Ctrl-C)" if isinstance(stop, KeyboardInterrupt) else str(stop)
        print(f"\nbridge-table selftest: {why}; the partial report follows", file=sys.stderr)
        code = 130
    except (BridgeError, SimError) as error:
        print(f"bridge-table selftest: {error}", file=sys.stderr)
        return 2
    try:
        text, data = write_report(report, prefix)
    except OSError as error:
        print(report.text())
        print(f"bridge-table selftest: cannot write the report: {error}", file=sys.stderr)
        return 1
    print(report.text())
    print(f"report: {text} and {data}")
    if code:
        return code
    return 1 if report.failed() else 0
