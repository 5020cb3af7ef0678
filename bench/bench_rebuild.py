"""Rebuild benchmark: a restart's journal fed back to a fresh Engine, the way it was (every
message through ``Engine.handle``, its outputs built and thrown away), the way the daemon
does it without snapshots (``Engine.rebuild``: outputs not built, every entry) and with
them (``controller.service.snapshot``: each table restored at its last board start, only what
follows replayed), side by side in one run.

    .venv/bin/python bench/bench_rebuild.py [--tables 64] [--boards 8] [--seed 1] [--write]
        [--restart-board K] [--main-tree DIR]

``--restart-board K`` (default: the last board): the daemon stops half way through each
table's K-th board (the journal ends there); 1 is a restart during the first board, where a
snapshot saves nothing.

``--main-tree DIR``: a checkout of an earlier version (``git archive main | tar -x -C DIR``),
whose daemon rebuild is timed on the same journal in the same run, in a subprocess (its
own ``controller`` package).

The journal is a real one (``controller.service.journal.Journal``, SQLite WAL) holding a session
of ``--tables`` tables each playing ``--boards`` random boards with hand scans, the tables'
events interleaved as they arrive at a daemon, written as the daemon writes it (an Engine
applies each batch and its board starts' snapshots are journaled: ``snapshot.record``),
every message already published (``published_through`` at the end). The rows without
snapshots read copies of it without them (``--main-tree``: as schema 2). Each path is
timed three times in CPU seconds (``time.process_time``: the machine may be shared); the
best counts. The daemon rebuilds (this tree's with and without snapshots, the earlier
checkout's) each run in a process of their own, as a restart does.
``--write`` puts the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import itertools
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_replay import core_kind, machine, write_section  # noqa: E402
from controller.boards.generate import random_board  # noqa: E402
from controller.engine import Engine  # noqa: E402
from controller.formats.events import record_events  # noqa: E402
from controller.laws.record import DealInfo  # noqa: E402
from controller.service.journal import Journal  # noqa: E402
from controller.service.snapshot import record as journal_as_daemon  # noqa: E402

HEADING = "## Journal rebuild on restart from per-table snapshots"


def make_journal(path: Path, tables: int, boards: int, seed: int, restart_board: int
                 ) -> tuple[dict[int, DealInfo], int]:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records}
    streams: list[list[tuple[str, bytes]]] = []
    for t in range(1, tables + 1):
        stream: list[tuple[str, bytes]] = []
        seq = 1
        # each table plays the boards in its own order (a movement)
        order = records[t % boards:] + records[:t % boards]
        for k, record in enumerate(order, 1):
            events = record_events(record, src=f"table-{t}-pi", seq_start=seq)
            if k == restart_board:  # the restart: half way through this board
                events = events[:len(events) // 2]
            seq += len(events)
            stream += [(f"bridge/{t}/event", msgspec.json.encode(e)) for e in events]
            if k == restart_board:
                break
        streams.append(stream)
    # interleaved as they arrive; a table with fewer events left runs out first
    messages = [m for group in itertools.zip_longest(*streams) for m in group if m is not None]
    with Journal(path, sync="normal") as journal:
        journal_as_daemon(journal, Engine(deals=deals), messages, batch=500)
    return deals, len(messages)


def without_snapshots(path: Path, to: Path, schema: int) -> Path:
    """A copy of the journal with no snapshots (``schema`` 2: as an earlier version wrote)."""
    shutil.copy(path, to)
    db = sqlite3.connect(to)
    if schema < 3:
        db.execute("DROP TABLE snapshots")
        db.execute("DROP TABLE topics")
        db.execute(f"PRAGMA user_version={schema}")
    else:
        db.execute("DELETE FROM snapshots")
    db.commit()
    db.close()
    return to


def best(run: Callable[[], int]) -> tuple[float, int]:
    times = []
    count = 0
    for _ in range(3):
        t = time.process_time()
        count = run()
        times.append(time.process_time() - t)
    return min(times), count


_OTHER_TREE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from controller.broker.settings import BrokerSettings
from controller.service.daemon import ControllerDaemon
from controller.boards.deals import load_deals
from controller.engine import Engine
from controller.service.journal import Journal
deals, _ = load_deals(sys.argv[3])
best = None
for _ in range(3):
    t = time.process_time()
    with Journal(sys.argv[2]) as journal:
        n = ControllerDaemon(broker=BrokerSettings(), engine=Engine(deals=deals),
                             journal=journal).rebuild()
    took = time.process_time() - t
    best = took if best is None else min(best, took)
print(n, best)
"""


def other_tree(tree: Path, journal: Path, deals: dict[int, DealInfo]) -> tuple[float, int]:
    """The daemon rebuild of a checkout (this one, or an earlier one) on ``journal`` in a
    process of its own: (best CPU seconds of three, entries applied)."""
    from controller.formats.pbn import pbn_text
    from controller.laws.record import BoardRecord

    pbn = journal.with_suffix(".pbn")
    pbn.write_text(pbn_text([BoardRecord(board=d.board, dealer=d.dealer,
                                         vulnerability=d.vulnerability, deal=d.deal)
                             for d in deals.values()]))
    proc = subprocess.run([sys.executable, "-c", _OTHER_TREE, str(tree.resolve()),
                           str(journal), str(pbn)], capture_output=True, text=True,
                          cwd=tree)
    assert proc.returncode == 0, proc.stderr[-2000:]
    n, took = proc.stdout.split()
    return float(took), int(n)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=64)
    ap.add_argument("--boards", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--restart-board", type=int, help="the board each table is half way "
                    "through when the daemon stops (default: the last)")
    ap.add_argument("--main-tree", type=Path, help="an earlier checkout to time alongside")
    args = ap.parse_args()
    restart_board = args.restart_board or args.boards
    if not 1 <= restart_board <= args.boards:
        ap.error(f"--restart-board must be 1-{args.boards}")
    with tempfile.TemporaryDirectory() as tmp:
        snapshots = Path(tmp) / "journal.sqlite"
        deals, n = make_journal(snapshots, args.tables, args.boards, args.seed, restart_board)
        path = without_snapshots(snapshots, Path(tmp) / "full.sqlite", 3)
        main_path = without_snapshots(snapshots, Path(tmp) / "v2.sqlite", 2)

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

        floor, c0 = best(read_only)
        before, c1 = best(every_output)
        # the daemon rebuilds each in a fresh process, as a restart does (and as the
        # earlier checkout's: the same conditions for every rebuild row)
        after, c2 = other_tree(ROOT, path, deals)
        snap, c3 = other_tree(ROOT, snapshots, deals)
        main_tree = other_tree(args.main_tree, main_path, deals) if args.main_tree else None
    assert c0 == c1 == c2 == n, (c0, c1, c2, n)
    assert main_tree is None or main_tree[1] == n, main_tree
    rows = [
        ("journal read only (the floor)", floor),
        ("every message through `Engine.handle`, outputs built and dropped (the rebuild "
         "before)", before),
        ("`ControllerDaemon.rebuild()`, no snapshots: `Engine.rebuild` of every entry, "
         "no outputs built", after),
        (f"`ControllerDaemon.rebuild()` from the snapshots ({c3:,} entries applied)", snap),
    ]
    if main_tree is not None:
        rows.insert(1, ("`ControllerDaemon.rebuild()` of the earlier checkout "
                        "(`--main-tree`)", main_tree[0]))
    lines = [
        f"Command: `.venv/bin/python bench/bench_rebuild.py --tables {args.tables} "
        f"--boards {args.boards} --seed {args.seed}`",
        f"Machine: {machine()}",
        f"Laws core: {core_kind()}",
        f"Journal: {args.tables} tables x {args.boards} random boards with hand scans, "
        f"the restart half way through each table's board {restart_board}, "
        f"{n} incoming events, all published; best of three runs of each path, in one run",
        "",
        "| path | CPU seconds | events per CPU second |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {sec:.3f} | {n / sec:,.0f} |" for name, sec in rows]
    lines += ["", f"Rebuild from the snapshots **{before / snap:.1f}x** faster than feeding "
                  f"every message through today's `handle`, {after / snap:.1f}x faster than "
                  f"this tree's rebuild without snapshots"
              + (f", **{main_tree[0] / snap:.1f}x** faster than the earlier checkout's "
                 f"rebuild" if main_tree is not None else "") + " (goal: 10x)."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(ROOT / "docs" / "benchmarks.md", HEADING, text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
