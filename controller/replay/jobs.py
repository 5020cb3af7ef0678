"""``bridge-table replay --jobs N``: a multi-table events file split by table across N
processes, the outputs merged back in input order, the same bytes as one process.

Each table's messages depend only on that table's inputs, with two exceptions, both kept
exact:

- Law 87 (controller/engine/core.py ``_compare_tables``): a board's hands are compared across
  tables, and a difference flags a fouled board at the table that saw it. Each worker
  records every hand its tables showed the detector (``Engine.observed``, with the
  input line as ``Engine.position``); the parent feeds all of them, in input order, to one
  ``FouledBoardDetector``. No conflict there
  means none in any worker (a worker sees a subset, in the same order) and none in one
  process (whose sequence it is): the outputs stand. A conflict anywhere: the file is
  replayed again in one process (``run`` returns False), which flags it exactly.
- ``--max-tables``: more tables than the engine follows: one process (which refuses the
  extra ones in input order).

The workers are forked (the input, the deals and the engine's settings are inherited, not
sent); what comes back is each input line's output bytes, its errors and the hands seen.
CPU seconds are not saved (more, in fact: start-up and the merge); wall-clock time is.
"""

from __future__ import annotations

import heapq
import io
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import IO

from controller import wire
from controller.engine import Engine
from controller.laws.cards import FULL_DECK, Seat
from controller.laws.dealcheck import FouledBoardDetector
from controller.replay.stream import MessageLines, route_line

__all__ = ["run"]

#: an input line routed: its number, topic and payload
_Routed = tuple[int, str, bytes | str]
#: a hand shown to the fouled-board detector: line, table, board, seat, the cards'
#: indices (plain values: what comes back from a worker is unpickled, and the compiled
#: core's frozen classes cannot be)
_Seen = tuple[int, str, int, int, tuple[int, ...]]
#: one worker's answer: (line, output bytes) and (line, error) in line order, hands seen
_Result = tuple[list[tuple[int, bytes]], list[tuple[int, str]], list[_Seen]]


_CARDS = {card.index: card for card in FULL_DECK}


class _Job:
    """What the forked workers inherit."""

    groups: list[list[_Routed]] = []
    make_engine: Callable[[], Engine] | None = None
    kinds: set[str] | None = None


def _work(index: int) -> _Result:
    assert _Job.make_engine is not None
    engine = _Job.make_engine()
    lines = MessageLines(_Job.kinds)
    out: list[tuple[int, bytes]] = []
    errors: list[tuple[int, str]] = []
    for lineno, topic, payload in _Job.groups[index]:
        engine.position = lineno  # the line each hand shown to the Law 87 check came from
        outs = engine.handle(topic, payload)
        if not outs:
            continue
        buffer: list[bytes] = []
        for msg in outs:
            if msg.topic.endswith("/error"):
                errors.append((lineno, str(msg.payload.get("error"))))
            lines.add(msg, buffer)
        if buffer:
            out.append((lineno, b"".join(buffer)))
    # a line is one table's: sorted by line (stably), the hands are in input order
    seen: list[_Seen] = sorted(
        ((n, name, board, int(seat), tuple(sorted(c.index for c in cards)))
         for name in engine.tables for n, board, seat, cards in engine.observed(name)),
        key=lambda s: s[0])
    return out, errors, seen


class _Errors(io.StringIO):
    """Collects what ``route_line`` reports, by line, to be merged with the workers'."""

    def __init__(self) -> None:
        super().__init__()
        self.line = 0
        self.found: list[tuple[int, str]] = []

    def write(self, text: str) -> int:
        if text.strip():
            self.found.append((self.line, text.rstrip("\n")))
        return len(text)


def _groups(routed: list[_Routed], keys: list[str], jobs: int) -> list[list[_Routed]]:
    """The lines shared out by table, the busiest tables first, each to the group with
    the fewest lines so far."""
    count: dict[str, int] = {}
    for key in keys:
        count[key] = count.get(key, 0) + 1
    load = [0] * jobs
    where: dict[str, int] = {}
    for key in sorted(count, key=lambda k: (-count[k], k)):
        i = load.index(min(load))
        where[key] = i
        load[i] += count[key]
    groups: list[list[_Routed]] = [[] for _ in range(jobs)]
    for item, key in zip(routed, keys, strict=True):
        groups[where[key]].append(item)
    return [g for g in groups if g]


def _fouled(results: list[_Result]) -> bool:
    """Whether the hands seen, in input order, show a fouled board anywhere."""
    detector = FouledBoardDetector()
    seen: Iterator[_Seen] = heapq.merge(*(r[2] for r in results), key=lambda s: s[0])
    return any(detector.observe(table, board, Seat(seat), [_CARDS[i] for i in hand])
               for _, table, board, seat, hand in seen)


def run(make_engine: Callable[[], Engine], data: bytes, *, jobs: int, table: str,
        errors: IO[str], source: str, out: IO[bytes], kinds: set[str] | None) -> bool:
    """Replay ``data`` (JSONL) in ``jobs`` processes, writing to ``out`` and ``errors``
    what one process would. False (nothing written) when it cannot be split exactly
    (one table, more tables than the engine follows, a fouled board across tables): the
    caller replays it in one process then."""
    probe = make_engine()
    collected = _Errors()
    routed: list[_Routed] = []
    keys: list[str] = []
    tables: set[str] = set()
    for lineno, raw in enumerate(data.split(b"\n"), 1):
        collected.line = lineno
        item = route_line(raw, lineno, table=table, root=probe.root, errors=collected,
                          source=source)
        if item is None:
            continue
        topic = item[0]
        parsed = wire.parse_topic(topic, root=probe.root)
        # lines of no table (ignored topics, refused ids) answer alone: any group will do
        key = parsed.table if parsed is not None else ""
        if parsed is not None and wire.table_id_problem(key) is None:
            tables.add(key)
        routed.append((lineno, *item))
        keys.append(key)
    if len(set(keys)) < 2 or len(tables) > probe.max_tables:
        return False
    _Job.groups = _groups(routed, keys, jobs)
    _Job.make_engine, _Job.kinds = make_engine, kinds
    try:
        # an executor, not a Pool: a worker that dies raises (BrokenProcessPool) here
        # instead of leaving its task waiting forever
        with ProcessPoolExecutor(len(_Job.groups),
                                 mp_context=multiprocessing.get_context("fork")) as pool:
            results = list(pool.map(_work, range(len(_Job.groups))))
    finally:
        _Job.groups, _Job.make_engine = [], None
    if _fouled(results):
        print(f"{source}: a board is fouled across tables (Law 87): replayed in one process",
              file=errors)
        return False
    buffer: list[bytes] = []
    for _, chunk in heapq.merge(*(r[0] for r in results), key=lambda o: o[0]):
        buffer.append(chunk)
        if len(buffer) >= 1024:
            out.write(b"".join(buffer))
            buffer.clear()
    out.write(b"".join(buffer))
    found = heapq.merge(collected.found, *(
        [(n, f"{source}:{n}: {message}") for n, message in r[1]] for r in results),
        key=lambda e: e[0])
    for _, message in found:
        print(message, file=errors)
    return True
