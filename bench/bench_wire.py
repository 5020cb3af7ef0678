"""Wire benchmark: incoming sensor events decoded into the Laws core's inputs, and the
same events through ``Engine.handle`` with no outputs built but the result.

    .venv/bin/python bench/bench_wire.py [--boards 300] [--seed 1] [--repeat 5]

The events are the generated boards' calls and cards (as ``bench/bench_replay.py``
makes them), as JSON bytes, as a bridge publishes them. The decode figure is
``controller.engine``'s one event parser on each payload (msgspec typed decode with
``controller.wire``'s Structs, then the core's values); the best of ``--repeat`` runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_replay import make_session  # noqa: E402

from controller import engine as engine_module  # noqa: E402
from controller.engine import Engine  # noqa: E402
from controller.laws.record import DealInfo  # noqa: E402


def make_lines(n: int, seed: int) -> tuple[dict[int, DealInfo], list[bytes]]:
    """``bench/bench_replay.py``'s generated session, one event a line."""
    records, data = make_session(n, seed)
    deals = {r.board: DealInfo(r.board, r.dealer, r.vulnerability, r.deal) for r in records}
    return deals, data.splitlines()


def parser() -> Callable[[bytes], Any]:
    """The engine's event parser (``_event_input`` since the wire module; the fast path
    ``_fast_event`` before it)."""
    new = getattr(engine_module, "_event_input", None)
    if new is not None:
        return new  # type: ignore[no-any-return]
    return engine_module._fast_event  # type: ignore[attr-defined,no-any-return]


def best(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    deals, lines = make_lines(args.boards, args.seed)
    parse = parser()

    def decode_only() -> float:
        t = time.perf_counter()
        for line in lines:
            parse(line)
        return time.perf_counter() - t

    def through_engine() -> float:
        engine = Engine(deals=deals, kinds=frozenset({"result"}))
        t = time.perf_counter()
        for line in lines:
            engine.handle("bridge/1/event", line)
        return time.perf_counter() - t

    n = len(lines)
    dec = best(args.repeat, decode_only)
    eng = best(args.repeat, through_engine)
    print(f"events: {n} ({args.boards} boards, seed {args.seed}); best of {args.repeat}")
    print(f"decode ({parse.__name__}): {dec:.3f} s, {dec / n * 1e6:.2f} us/event, "
          f"{n / dec:,.0f} events/s")
    print(f"Engine.handle, outputs: result only: {eng:.3f} s, {n / eng:,.0f} events/s")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
