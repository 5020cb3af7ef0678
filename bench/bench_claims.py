"""Claim check: how long ``controller.evidence.claims.check_claim`` takes at trick 6 or later.

Positions: random deals (seeded), random strain and opening leader, played at random but
legally (endplay's ``legal_moves``) to the start of trick T; the claim position is the four
remaining hands with the player on lead, as the engine publishes it. Each position is
checked twice: the verdict alone (one DDS solve, ``line=False``) and the verdict with the
double-dummy line (one solve per card left: what the console and the export do). The first
check of a process also pays for DDS's start (its tables are allocated on the first solve):
reported on its own.

    .venv/bin/python bench/bench_claims.py [--deals 50] [--seed 17]

The goal (issue #17): a claim check at trick 6 or later answers within 100 ms.
"""

from __future__ import annotations

import argparse
import platform
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.evidence.claims import check_claim  # noqa: E402
from controller.laws.cards import FULL_DECK, Deal, Seat  # noqa: E402

STRAINS = ("S", "H", "D", "C", "NT")


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def position(rng: random.Random, trick: int) -> dict[str, Any]:
    """A claim position at the start of ``trick`` after a random legal play."""
    from endplay.types import Deal as DdsDeal
    from endplay.types import Denom, Player

    cards = list(FULL_DECK)
    rng.shuffle(cards)
    deal = Deal.from_hands({s: frozenset(cards[13 * i:13 * (i + 1)])
                            for i, s in enumerate(Seat)})
    strain = rng.choice(STRAINS)
    declarer = rng.choice(list(Seat))
    dd = DdsDeal(deal.to_pbn())
    dd.trump = Denom(STRAINS.index(strain))
    dd.first = Player(int(declarer.lho))
    for _ in range(4 * (trick - 1)):
        dd.play(rng.choice(list(dd.legal_moves())))
    remaining = 14 - trick
    return {"tricks": rng.randint(0, remaining), "remaining": remaining, "trick": trick,
            "declarer": declarer.name, "strain": strain, "leader": "NESW"[int(dd.first)],
            "hands": dd.to_pbn()}


def timed(pos: dict[str, Any], line: bool) -> float:
    start = time.perf_counter()
    check = check_claim(pos, line=line)
    elapsed = (time.perf_counter() - start) * 1000
    assert check.checked, check.reason
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=50, help="positions per trick (default 50)")
    ap.add_argument("--seed", type=int, default=17)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    print(f"# {platform.node()} {platform.machine()} {platform.python_version()}, "
          f"{args.deals} positions per trick, seed {args.seed}")
    first = position(rng, 6)
    print(f"first check of the process (DDS start-up), trick 6: {timed(first, False):.1f} ms")
    print(f"{'trick':>5} {'check':>28} {'check + line':>34}")
    worst = 0.0
    for trick in range(1, 13):
        positions = [position(rng, trick) for _ in range(args.deals)]
        bare = [timed(p, False) for p in positions]
        full = [timed(p, True) for p in positions]
        if trick >= 6:
            worst = max(worst, max(bare), max(full))
        print(f"{trick:>5}  p50 {statistics.median(bare):6.1f} p99 {percentile(bare, 99):6.1f}"
              f" max {max(bare):6.1f} ms   p50 {statistics.median(full):6.1f} p99 "
              f"{percentile(full, 99):6.1f} max {max(full):6.1f} ms")
    print(f"worst at trick 6 or later (either): {worst:.1f} ms (goal: 100 ms)")
    return 0 if worst <= 100 else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
