"""Per-event cost from trick 1 to trick 13 and from board 1 to board 30: what an event
costs the Engine (``Engine.handle``: the Laws core and every message built) must not grow
with the board or the session.

    .venv/bin/python bench/bench_event_cost.py [--boards 30] [--sessions 20] [--seed 1]
        [--topics state,indicator,...] [--tray]

Each session is one table playing ``--boards`` random boards in a row as a real table
sends them (``record_events(..., sensing="spot")``: the board's tag, each call on its
spot and the one before it picked up, each card on its play spot and each quitted
trick's cards leaving; hands from the deal file). Every ``Engine.handle`` is timed
(``time.perf_counter_ns``); a card event counts for the trick it belongs to (the trick in
progress when it comes, the trick quitted when a card leaves after its trick), every
event for its board. The medians of each group are printed: on a machine shared with
other work the median is what the code costs, a mean measures the neighbours as well.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.boards.generate import random_board  # noqa: E402
from controller.engine import Engine  # noqa: E402
from controller.formats.events import record_events  # noqa: E402


def session(seed: int, boards: int, sensing: str, kinds: frozenset[str] | None
            ) -> tuple[dict[tuple[int, str], list[int]], dict[int, list[int]]]:
    """One table's session: (ns per card event by trick and action, ns per event by
    board)."""
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records}
    engine = Engine(deals=deals, kinds=kinds)
    by_trick: dict[tuple[int, str], list[int]] = defaultdict(list)
    by_board: dict[int, list[int]] = defaultdict(list)
    seq = 0
    handle = engine.handle
    clock = time.perf_counter_ns
    for n, record in enumerate(records, 1):
        for event in record_events(record, src="pi", scans=False, return_hands=False,
                                   sensing="spot" if sensing == "spot" else "tray"):
            seq += 1
            event["seq"] = seq
            board = engine._tables["1"].table.board if engine._tables else None
            play = board.play if board is not None and board.number == n else None
            trick = play.trick_number if play is not None else 0
            t0 = clock()
            handle("bridge/1/event", event)
            elapsed = clock() - t0
            by_board[n].append(elapsed)
            if "card" in event:
                if event["action"] == "present" or trick == 0:
                    board = engine._tables["1"].table.board
                    play = board.play if board is not None else None
                    trick = play.trick_number if play is not None else trick
                by_trick[trick, event["action"]].append(elapsed)
    return by_trick, by_board


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=30)
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--topics", help="kinds of output kept (default: all, as the daemon)")
    ap.add_argument("--tray", action="store_true",
                    help="the tray stream (wire contract 1.0) instead of play spots")
    args = ap.parse_args()
    kinds = frozenset(args.topics.split(",")) if args.topics else None
    by_trick: dict[tuple[int, str], list[int]] = defaultdict(list)
    by_board: dict[int, list[int]] = defaultdict(list)
    for s in range(args.sessions):
        trick_ns, board_ns = session(args.seed + s, args.boards,
                                     "tray" if args.tray else "spot", kinds)
        for group, v in trick_ns.items():
            by_trick[group] += v
        for n, v in board_ns.items():
            by_board[n] += v

    def med(values: list[int]) -> float:
        return statistics.median(values) / 1000

    print(f"sessions {args.sessions} x {args.boards} boards, "
          f"{'tray' if args.tray else 'spot'} stream, topics {args.topics or 'all'}")
    print("card events by trick: trick, cards put: events, median us; cards quitted "
          "(leaving the spot): events, median us")
    for t in range(1, 14):
        put_ns, gone_ns = by_trick.get((t, "present"), []), by_trick.get((t, "removed"), [])
        print(f"  {t:2d} {len(put_ns):6d} {med(put_ns) if put_ns else 0:7.1f} "
              f"{len(gone_ns):6d} {med(gone_ns) if gone_ns else 0:7.1f}")
    print("all events by board: board, events, median us, mean us")
    for n in sorted(by_board):
        v = by_board[n]
        print(f"  {n:2d} {len(v):6d} {med(v):7.1f} {sum(v) / len(v) / 1000:7.1f}")
    put = [med(by_trick[t, "present"]) for t in range(1, 14) if by_trick.get((t, "present"))]
    gone = [med(by_trick[t, "removed"]) for t in range(1, 13) if by_trick.get((t, "removed"))]
    boards = [med(by_board[n]) for n in sorted(by_board)]
    quitted = f"{gone[-1] / gone[0]:.2f}" if gone else "none (tray stream)"
    print(f"cards put, trick 13 / trick 1: {put[-1] / put[0]:.2f} (max/min over the tricks "
          f"{max(put) / min(put):.2f}); cards quitted, trick 12 / trick 1: {quitted}; "
          f"boards: the last 5 / the first 5: "
          f"{statistics.mean(boards[-5:]) / statistics.mean(boards[:5]):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
