"""Rebuild benchmark: a restart's journal fed back to a fresh Engine, the way it was (every
message through ``Engine.handle``, its outputs built and thrown away) and the way the daemon
does it now (``Engine.rebuild``: outputs not built), side by side in one run.

    .venv/bin/python bench/bench_rebuild.py [--tables 64] [--boards 8] [--seed 1] [--write]

The journal is a real one (``controller.journal.Journal``, SQLite WAL) holding a session
of ``--tables`` tables each playing ``--boards`` random boards with hand scans, the tables'
events interleaved as they arrive at a daemon, every message already published
(``published_through`` at the end). Each path is timed three times; the best counts.
``--write`` puts the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_replay import machine, write_section  # noqa: E402
from controller.brokersettings import BrokerSettings  # noqa: E402
from controller.daemon import ControllerDaemon  # noqa: E402
from controller.engine import Engine  # noqa: E402
from controller.formats.events import record_events  # noqa: E402
from controller.generate import random_board  # noqa: E402
from controller.journal import Journal  # noqa: E402
from controller.laws.record import DealInfo  # noqa: E402

HEADING = "## Journal rebuild on restart"


def make_journal(path: Path, tables: int, boards: int, seed: int
                 ) -> tuple[dict[int, DealInfo], int]:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: DealInfo(r.board, r.dealer, r.vulnerability, r.deal) for r in records}
    streams: list[list[tuple[str, bytes]]] = []
    for t in range(1, tables + 1):
        stream: list[tuple[str, bytes]] = []
        seq = 1
        # each table plays the boards in its own order (a movement)
        order = records[t % boards:] + records[:t % boards]
        for record in order:
            events = record_events(record, src=f"table-{t}-pi", seq_start=seq)
            seq += len(events)
            stream += [(f"bridge/{t}/event", msgspec.json.encode(e)) for e in events]
        streams.append(stream)
    messages = [m for group in zip(*streams, strict=True) for m in group]
    with Journal(path, sync="normal") as journal:
        for i in range(0, len(messages), 500):
            journal.append_incoming(messages[i:i + 500])
        journal.record_published(journal.last_incoming, [])
    return deals, len(messages)


def best(run: Callable[[], int]) -> tuple[float, int]:
    times = []
    count = 0
    for _ in range(3):
        t = time.perf_counter()
        count = run()
        times.append(time.perf_counter() - t)
    return min(times), count


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=64)
    ap.add_argument("--boards", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "journal.sqlite"
        deals, n = make_journal(path, args.tables, args.boards, args.seed)

        def read_only() -> int:
            with Journal(path) as journal:
                return sum(1 for _ in journal.incoming())

        def every_output() -> int:
            engine = Engine(deals=deals)
            with Journal(path) as journal:
                count = 0
                for entry in journal.incoming():
                    engine.handle(entry.topic, entry.payload)
                    count += 1
            return count

        def daemon_rebuild() -> int:
            engine = Engine(deals=deals)
            with Journal(path) as journal:
                daemon = ControllerDaemon(broker=BrokerSettings(), engine=engine,
                                          journal=journal)
                return daemon.rebuild()

        floor, c0 = best(read_only)
        before, c1 = best(every_output)
        after, c2 = best(daemon_rebuild)
    assert c0 == c1 == c2 == n, (c0, c1, c2, n)
    rows = [
        ("journal read only (the floor)", floor),
        ("every message through `Engine.handle`, outputs built and dropped (the rebuild "
         "before)", before),
        ("`ControllerDaemon.rebuild()`: `Engine.rebuild`, no outputs built", after),
    ]
    lines = [
        f"Command: `.venv/bin/python bench/bench_rebuild.py --tables {args.tables} "
        f"--boards {args.boards} --seed {args.seed}`",
        f"Machine: {machine()}",
        f"Journal: {args.tables} tables x {args.boards} random boards with hand scans, "
        f"{n} incoming events, all published; best of three runs of each path, in one run",
        "",
        "| path | seconds | events/s |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {sec:.3f} | {n / sec:,.0f} |" for name, sec in rows]
    lines += ["", f"Rebuild **{before / after:.1f}x** faster than feeding every message "
                  f"through `handle` (goal: 10x)."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(ROOT / "docs" / "benchmarks.md", HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
