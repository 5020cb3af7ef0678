"""``bridge-table sim``: run a simulated table's readers on pseudo-terminals, and play events.

    bridge-table sim run  --config hw_configs/sim.toml [--link-dir var/sim]
    bridge-table sim play EVENTS.jsonl --config hw_configs/sim.toml [--rate 5 | --speed 10]

Both print each reader's pty path, stable symlink and kind (``reader NAME PTY LINK KIND``),
so that a bridge in another process can open them as ``serial://LINK``. ``play`` waits for a
host to open every reader (``--wait``), plays the file, prints a summary, and keeps the readers
up until Ctrl-C unless ``--exit`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from firmware_bridge.sim.table import SimError, SimTable, read_events

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table sim", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "play"):
        s = sub.add_parser(name)
        if name == "play":
            s.add_argument("events", type=Path, help="JSONL sensor events")
            pace = s.add_mutually_exclusive_group()
            pace.add_argument("--rate", type=float, default=0.0,
                              help="events per second (0: as fast as possible)")
            pace.add_argument("--speed", type=float, default=None,
                              help="multiplier of the gaps between the events' ts (1: real time)")
            s.add_argument("--hardware-time", action="store_true",
                           help="readers stamp lines with the events' ts")
            s.add_argument("--wait", type=float, default=60.0,
                           help="seconds to wait for a host on every reader (0: do not wait)")
            s.add_argument("--exit", action="store_true", help="stop once the file is played")
        s.add_argument("--config", type=Path, default=Path("hw_configs/sim.toml"))
        s.add_argument("--link-dir", type=Path, default=None,
                       help="directory for the readers' stable symlinks (default: a temp dir)")
        s.add_argument("--json", action="store_true", help="print reader paths as JSON lines")
    return p


def _print_paths(table: SimTable, as_json: bool) -> None:
    for name, (pty, link) in table.paths().items():
        if as_json:
            print(json.dumps({"table": table.table_id, "reader": name, "pty": pty,
                              "link": str(link), "url": f"serial://{link}",
                              "kind": table.layout[name].kind}), flush=True)
        else:
            print(f"reader {name} {pty} {link} {table.layout[name].kind}", flush=True)


async def _main(args: argparse.Namespace) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    table = SimTable.from_config(args.config, link_dir=args.link_dir)
    async with table:
        _print_paths(table, args.json)
        if args.cmd == "play":
            events, problems = read_events(args.events)
            for problem in problems:
                print(f"skipped: {problem}", file=sys.stderr)
            if args.wait > 0 and not await table.wait_hosts(args.wait):
                missing = [n for n, fw in table.firmwares.items() if not fw.host_seen.is_set()]
                print(f"no host opened {', '.join(missing)} within {args.wait:g} s",
                      file=sys.stderr)
                return 1
            report = await table.play(events, rate=args.rate, speed=args.speed,
                                      hardware_time=args.hardware_time)
            for line in report.skipped:
                print(f"skipped: {line}", file=sys.stderr)
            print(f"played {report.played} of {len(events)} events", flush=True)
            if args.exit:
                # Let the last lines reach the host before the ptys go away.
                await asyncio.sleep(0.5)
                return 0
        await stop.wait()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return asyncio.run(_main(args))
    except (SimError, OSError) as error:
        print(f"bridge-table sim: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
