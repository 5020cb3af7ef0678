"""The simulated table served to bridges in other processes (``bridge-table sim``,
firmware_bridge/sim/cli.py): its readers on pseudo-terminals announced (printed, and in the
table's well-known directory: ``firmware_bridge/sim/shared.py``), then events played from a
file or from standard input, until Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.formats.source import binary_reason
from firmware_bridge.sim.shared import remove_state, running_pid, table_dir, write_state
from firmware_bridge.sim.table import Physics, SimError, SimTable, parse_event_line, read_events

__all__ = ["PIPED_RATE", "Playing", "print_paths", "read_events_file", "serve"]


@dataclass(frozen=True, kw_only=True)
class Playing:
    """``sim play``: a file's events, how fast they are played, and what then."""
    events: list[dict[str, Any]]
    #: events a second (0: as fast as possible)
    rate: float
    #: or the gaps between the events' ts, multiplied (1: real time)
    speed: float | None
    #: readers stamp their lines with the events' ts
    hardware_time: bool
    #: seconds to wait for a host on every reader first (0: do not wait)
    wait: float
    #: stop once the file is played, instead of keeping the readers up
    exit: bool


def read_events_file(path: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """The events of a JSONL file and the problems of its lines; a file that is not one of
    events (binary) is a SimError, one that cannot be read an OSError."""
    with open(path, "rb") as fp:  # its head only: read_events reads it all
        reason = binary_reason(fp.read(65536))
    if reason is not None:
        raise SimError(f"not an events file: {reason}")
    return read_events(path)


def print_paths(table: SimTable, as_json: bool) -> None:
    """Each reader's pty, stable symlink and kind, a line each (``--json``: JSON lines)."""
    for name, (pty, link) in table.paths().items():
        if as_json:
            print(json.dumps({"table": table.table_id, "reader": name, "pty": pty,
                              "link": str(link), "url": f"serial://{link}",
                              "kind": table.layout[name].kind}), flush=True)
        else:
            print(f"reader {name} {pty} {link} {table.layout[name].kind}", flush=True)


async def serve(config: Path, *, link_dir: Path | None, physics: Physics, as_json: bool,
                playing: Playing | None = None, stdin: bool = False,
                stdin_rate: float | None = None) -> int:
    """The table of ``config`` until SIGINT or SIGTERM: its readers up and announced (in the
    table's well-known directory when no ``link_dir`` is given), then ``playing``'s events
    played, or (``stdin``) standard input's as they come, at most ``stdin_rate`` a second
    (default: as typed on a terminal, :data:`PIPED_RATE` from a pipe or a file)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    shared = link_dir is None
    if link_dir is None:  # the well-known directory a bridge in another process looks in
        table_id = SimTable.from_config(config).table_id
        pid = running_pid(table_id)
        if pid is not None and pid != os.getpid():
            print(f"bridge-table sim: simulated table {table_id} already runs (pid {pid}, "
                  f"{table_dir(table_id)}); stop it first, or give --link-dir",
                  file=sys.stderr)
            return 2   # a set-up to change (controller/commandline.py's exit codes)
        link_dir = table_dir(table_id)
    table = SimTable.from_config(config, link_dir=link_dir, physics=physics)
    async with table:
        if shared:  # announced before the paths are printed: a reader of them may act at once
            write_state(table.table_id, {
                name: {"pty": pty, "link": str(link), "kind": table.layout[name].kind}
                for name, (pty, link) in table.paths().items()})
        print_paths(table, as_json)
        try:
            if playing is not None:
                return await _play_file(table, playing, stop)
            return await _run(table, stop, stdin, stdin_rate)
        finally:
            if shared:
                remove_state(table.table_id)


async def _play_file(table: SimTable, playing: Playing, stop: asyncio.Event) -> int:
    events = playing.events
    if playing.wait > 0 and not await table.wait_hosts(playing.wait):
        missing = [n for n, fw in table.firmwares.items() if not fw.host_seen.is_set()]
        print(f"no host opened {', '.join(missing)} within {playing.wait:g} s",
              file=sys.stderr)
        return 1
    report = await table.play(events, rate=playing.rate, speed=playing.speed,
                              hardware_time=playing.hardware_time)
    for line in report.skipped:
        print(f"skipped: {line}", file=sys.stderr)
    print(f"played {report.played} of {len(events)} events", flush=True)
    reads = table.reads()
    print(f"antennas: at most {reads['peak_tags']} tag(s) on one, {reads['collisions']} "
          f"collision(s), {reads['late_reads']} late read(s), {reads['lost_reads']} "
          "lost", flush=True)
    if playing.exit:
        # Let the last lines reach the host before the ptys go away.
        await asyncio.sleep(0.5)
        return 0
    await stop.wait()
    return 0


async def _run(table: SimTable, stop: asyncio.Event, stdin: bool,
               stdin_rate: float | None) -> int:
    hosts = asyncio.create_task(_say_when_hosts(table))
    try:
        if stdin:
            rate = stdin_rate if stdin_rate is not None else \
                (0.0 if sys.stdin.isatty() else PIPED_RATE)
            await _play_stdin(table, stop, rate)
        await stop.wait()
    finally:
        hosts.cancel()
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


