"""Wire benchmark: incoming sensor events decoded into the Laws core's inputs, and the
same events through ``Engine.handle`` with no outputs built but the result.

    .venv/bin/python bench/bench_wire.py [--boards 300] [--seed 1] [--repeat 5] [--against REV]

The events are the generated boards' calls and cards (as ``bench/bench_replay.py``
makes them), as JSON bytes, as a bridge publishes them. The decode figure is
``controller.engine.intake``'s one event parser on each payload (msgspec typed decode with
``controller.wire``'s Structs, then the core's values); the best of ``--repeat`` runs.

``--against REV`` loads the engine's intake as it was at git revision ``REV`` next to
today's (``controller/engine/intake.py``; before the engine was a package,
``controller/engine.py``) and times the two parsers in turns, in one process (so that a
busy machine slows both alike): before the wire module, the engine's fast path was
``_fast_event``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_replay import make_session  # noqa: E402

from controller.engine import Engine  # noqa: E402
from controller.engine import intake as intake_module  # noqa: E402
from controller.laws.record import DealInfo  # noqa: E402


def make_lines(n: int, seed: int) -> tuple[dict[int, DealInfo], list[bytes]]:
    """``bench/bench_replay.py``'s generated session, one event a line."""
    records, data = make_session(n, seed)
    deals = {r.board: r.deal_info for r in records}
    return deals, data.splitlines()


def parser(module: types.ModuleType = intake_module) -> Callable[[bytes], Any]:
    """The engine's event parser (``event_input`` of ``controller/engine/intake.py``;
    ``_event_input`` of ``controller/engine.py`` since the wire module; the fast path
    ``_fast_event`` before it)."""
    for name in ("event_input", "_event_input"):
        found = getattr(module, name, None)
        if found is not None:
            return found  # type: ignore[no-any-return]
    return module._fast_event  # type: ignore[no-any-return]


def engine_at(rev: str) -> types.ModuleType:
    """The engine's intake of git revision ``rev`` (``controller/engine/intake.py``, or
    ``controller/engine.py`` before the engine was a package), imported beside today's."""
    path, package = "controller/engine/intake.py", "controller.engine"
    shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT,
                           capture_output=True, text=True, timeout=60)
    if shown.returncode != 0:
        path, package = "controller/engine.py", "controller"
        shown = subprocess.run(["git", "show", f"{rev}:{path}"], cwd=ROOT,
                               capture_output=True, text=True, check=True, timeout=60)
    name = f"{package}._engine_at_" + "".join(c for c in rev if c.isalnum())
    module = types.ModuleType(name)
    module.__package__ = package
    sys.modules[name] = module  # dataclasses look their module up
    exec(compile(shown.stdout, f"{rev}:{path}", "exec"), module.__dict__)
    return module


def best(repeat: int, run: Callable[[], float]) -> float:
    return min(run() for _ in range(repeat))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--boards", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--against", metavar="REV",
                    help="also time the engine's parser of this git revision, in turns")
    args = ap.parse_args(argv)
    deals, lines = make_lines(args.boards, args.seed)
    parse = parser()
    if args.against:
        return compare(parse, parser(engine_at(args.against)), args.against, lines,
                       args.repeat)

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


def compare(new: Callable[[bytes], Any], old: Callable[[bytes], Any], rev: str,
            lines: list[bytes], repeat: int) -> int:
    def once(parse: Callable[[bytes], Any]) -> float:
        t = time.perf_counter()
        for line in lines:
            parse(line)
        return time.perf_counter() - t

    times: dict[str, list[float]] = {"old": [], "new": []}
    for _ in range(repeat * 8):  # in turns: a busy machine slows both alike
        times["old"].append(once(old))
        times["new"].append(once(new))
    n = len(lines)
    for key, parse, label in (("old", old, rev), ("new", new, "today")):
        t = sorted(times[key])
        print(f"{label:>12} {parse.__name__:>13}: best {t[0] / n * 1e6:.2f} us/event, "
              f"median {t[len(t) // 2] / n * 1e6:.2f} us/event ({len(t)} runs of {n} events)")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
