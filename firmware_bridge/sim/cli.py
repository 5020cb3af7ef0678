"""``bridge-table sim``: run a simulated table's readers on pseudo-terminals, and play events.

    bridge-table sim run  --config hw_configs/sim.toml [--link-dir var/sim] [--stdin]
    bridge-table sim play EVENTS.jsonl --config hw_configs/sim.toml [--rate 5 | --speed 10]

Each antenna reads one tag at a time unless told otherwise (``--tag-limit``, ``--miss-rate``,
``--seed``, ``--collision``: docs/sensing.md); ``play`` says at the end what the antennas
saw (the most tags on one antenna, collisions, late and lost reads).

Both print each reader's pty path, stable symlink and kind (``reader NAME PTY LINK KIND``),
so that a bridge in another process can open them as ``serial://LINK``. ``play`` waits for a
host to open every reader (``--wait``), plays the file, prints a summary, and keeps the readers
up until Ctrl-C unless ``--exit`` is given. ``run --stdin`` plays the event lines of standard
input as they come (type them, or pipe them in).

Without ``--link-dir`` both announce their readers in a well-known directory per table
(``firmware_bridge/sim/shared.py``), where ``bridge-table bridge --config hw_configs/sim.toml``
in another process finds them: the ``sim://`` readers of its config open them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.commandline import bounded
from controller.formats.source import binary_reason
from firmware_bridge.sim.shared import remove_state, running_pid, table_dir, write_state
from firmware_bridge.sim.table import (
    Physics,
    SimError,
    SimTable,
    parse_event_line,
    read_events,
)

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
        else:
            s.add_argument("--stdin", action="store_true",
                           help="play the events read from standard input (one JSON object a "
                                "line, as in a `sim play` file) as they come")
            s.add_argument("--rate", type=float, default=None,
                           help="--stdin: events per second at most (default: as typed on a "
                                "terminal, 10 from a pipe or a file: no hand moves cards "
                                "faster, and events at the same instant on two readers have "
                                "no order)")
        s.add_argument("--config", type=Path, default=Path("hw_configs/sim.toml"),
                       help="the simulated table's config (default %(default)s)")
        s.add_argument("--link-dir", type=Path, default=None,
                       help="directory for the readers' stable symlinks (default: a temp dir)")
        s.add_argument("--json", action="store_true", help="print reader paths as JSON lines")
        s.add_argument("--tag-limit", type=_tag_limit, default=1,
                       help="tags one antenna reads at once (default 1: a second tag is a "
                            "collision; 16 for readers built to inventory a pile)")
        s.add_argument("--miss-rate", type=_miss_rate, default=0.0,
                       help="chance a tag misses one polling round (0 <= P < 1; default 0)")
        s.add_argument("--seed", type=int, default=0, help="seed of the misses (default 0)")
        s.add_argument("--collision", choices=("error", "silence"), default="error",
                       help="what a reader says of a tag beyond its limit: an ERR line "
                            "(default) or nothing")
    return p


_tag_limit = bounded(int, lambda v: v >= 1, "a whole number of at least 1")
_miss_rate = bounded(float, lambda v: 0.0 <= v < 1.0, "a probability from 0 to below 1")


def _physics(args: argparse.Namespace) -> Physics:
    return Physics(tag_limit=args.tag_limit, miss_rate=args.miss_rate, seed=args.seed,
                   collision=args.collision)


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
    link_dir = args.link_dir
    shared = link_dir is None
    if shared:  # the well-known directory a bridge in another process looks in
        table_id = SimTable.from_config(args.config).table_id
        pid = running_pid(table_id)
        if pid is not None and pid != os.getpid():
            print(f"bridge-table sim: simulated table {table_id} already runs (pid {pid}, "
                  f"{table_dir(table_id)}); stop it first, or give --link-dir",
                  file=sys.stderr)
            return 1
        link_dir = table_dir(table_id)
    table = SimTable.from_config(args.config, link_dir=link_dir, physics=_physics(args))
    async with table:
        if shared:  # announced before the paths are printed: a reader of them may act at once
            write_state(table.table_id, {
                name: {"pty": pty, "link": str(link), "kind": table.layout[name].kind}
                for name, (pty, link) in table.paths().items()})
        _print_paths(table, args.json)
        try:
            return await _serve(args, table, stop)
        finally:
            if shared:
                remove_state(table.table_id)


async def _serve(args: argparse.Namespace, table: SimTable, stop: asyncio.Event) -> int:
    if args.cmd == "play":
        events = args.loaded
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
        reads = table.reads()
        print(f"antennas: at most {reads['peak_tags']} tag(s) on one, {reads['collisions']} "
              f"collision(s), {reads['late_reads']} late read(s), {reads['lost_reads']} "
              "lost", flush=True)
        if args.exit:
            # Let the last lines reach the host before the ptys go away.
            await asyncio.sleep(0.5)
            return 0
    else:
        hosts = asyncio.create_task(_say_when_hosts(table))
        try:
            if args.stdin:
                rate = args.rate if args.rate is not None else \
                    (0.0 if sys.stdin.isatty() else PIPED_RATE)
                await _play_stdin(table, stop, rate)
            await stop.wait()
        finally:
            hosts.cancel()
        return 0
    await stop.wait()
    return 0


async def _say_when_hosts(table: SimTable) -> None:
    """``hosts ready``, once a host (a bridge) has opened every reader: events played from
    then on reach it."""
    while not await table.wait_hosts(3600):
        pass
    print("hosts ready", flush=True)


#: events a second at most when standard input is a pipe or a file: a recorded file piped
#: in once played every event at once, and the bridge, reading six readers, published a
#: card laid on one spot and one lifted from another in either order (the board broke)
PIPED_RATE = 10.0


async def _play_stdin(table: SimTable, stop: asyncio.Event, rate: float = 0.0) -> None:
    """Play each event line of standard input as it arrives (at most ``rate`` a second),
    until end of file or ``stop``. Read through the event loop (``add_reader``), not a
    thread: Ctrl-C never waits on a blocked read."""
    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[bytes] = asyncio.Queue()
    fd = sys.stdin.fileno()
    buffer = bytearray()

    def readable() -> None:
        chunk = os.read(fd, 65536)
        if not chunk:
            loop.remove_reader(fd)
            lines.put_nowait(b"")
            return
        buffer.extend(chunk)
        while b"\n" in buffer:
            line, _, rest = bytes(buffer).partition(b"\n")
            buffer[:] = rest
            lines.put_nowait(line + b"\n")

    loop.add_reader(fd, readable)
    number = 0
    stopped = asyncio.ensure_future(stop.wait())
    try:
        while not stop.is_set():
            getting = asyncio.ensure_future(lines.get())
            await asyncio.wait({getting, stopped}, return_when=asyncio.FIRST_COMPLETED)
            if not getting.done():
                getting.cancel()
                return
            line = getting.result()
            if not line:
                return
            number += 1
            event, problem = parse_event_line(line.decode("utf-8", "replace"),
                                              f"stdin:{number}")
            if event is not None:
                report = await table.play([event])
                problem = "; ".join(f"stdin:{number}: {why}" for why in report.skipped) or None
                if rate > 0:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(asyncio.shield(stopped), 1.0 / rate)
            if problem is not None:
                print(f"skipped: {problem}", file=sys.stderr, flush=True)
    finally:
        stopped.cancel()
        loop.remove_reader(fd)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:  # a configuration it cannot use is said before any reader starts (exit 2)
        SimTable.from_config(args.config)
    except (SimError, OSError) as error:
        print(f"bridge-table sim: {error}", file=sys.stderr)
        return 2
    if args.cmd == "play":  # the file first: a table is not started for a file it cannot play
        try:
            with open(args.events, "rb") as fp:  # its head only: read_events reads it all
                reason = binary_reason(fp.read(65536))
            if reason is not None:
                raise SimError(f"not an events file: {reason}")
            args.loaded, problems = read_events(args.events)
        except OSError as error:
            print(f"bridge-table sim: {args.events}: cannot read: {error.strerror or error}",
                  file=sys.stderr)
            return 2
        except SimError as error:
            print(f"bridge-table sim: {args.events}: {error}", file=sys.stderr)
            return 2
        for problem in problems:
            print(f"skipped: {problem}", file=sys.stderr)
    try:
        return asyncio.run(_main(args))
    except (SimError, OSError) as error:
        print(f"bridge-table sim: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
