"""The daemon's own event -> state time, as a histogram the status carries (wire 1.16).

What a load generator measures (``bench/bench_daemon_cpu.py``: an event published, its
table's ``state`` received) is the daemon's time plus the broker's, the generator's and the
machine's; on a 2-core machine that also runs the generator and the broker, those are most
of the tail (``docs/benchmarks-archive.md``, issue 32 item 3: a controller that does nothing but
echo gives a p99 of 30 ms there). This tally is the daemon's part alone: from the moment
paho's network thread hands an event to the daemon (``controller.service.mqtt.Received.at``)
to the moment its batch's outputs (its table's ``state``, ``indicator`` and ``ack``) are
handed back to paho to write.

The buckets are fixed (``BOUNDS_MS``), like a Prometheus histogram's, and the counts are
kept since the controller started, so that any two statuses can be subtracted to give a
window's distribution (:func:`window`), and percentiles read from it (:func:`percentile`:
the upper bound of the bucket it falls in, so a p99 of ``20`` reads "at most 20 ms").
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BOUNDS_MS", "LatencyTally", "percentile", "window"]

#: the buckets' upper bounds in milliseconds; the last bucket (beyond them) is unbounded
BOUNDS_MS: tuple[float, ...] = (
    0.5, 1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 75, 100, 150, 200, 300, 500,
    750, 1000, 2000, 5000, 10000)


@dataclass
class LatencyTally:
    """Counts of event -> outputs times per bucket of :data:`BOUNDS_MS`, and the longest."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BOUNDS_MS) + 1))
    events: int = 0
    max_ms: float = 0.0

    def add(self, ms: float) -> None:
        self.counts[bisect.bisect_left(BOUNDS_MS, ms)] += 1
        self.events += 1
        if ms > self.max_ms:
            self.max_ms = ms

    def add_batch(self, received_at: Sequence[float], now: float) -> None:
        """Each event of a batch, ``received_at`` in seconds on the clock of ``now``."""
        for at in received_at:
            self.add((now - at) * 1000.0)

    def as_dict(self) -> dict[str, Any]:
        """The status' ``latency`` (wire 1.16)."""
        return {"events": self.events,
                "p50_ms": percentile(self.counts, 0.50, self.max_ms),
                "p99_ms": percentile(self.counts, 0.99, self.max_ms),
                "max_ms": round(self.max_ms, 3),
                "le_ms": list(BOUNDS_MS), "counts": list(self.counts)}


def percentile(counts: Sequence[int], q: float, max_ms: float | None = None) -> float | None:
    """The upper bound (ms) of the bucket where the ``q`` quantile falls, or ``max_ms``
    when that is lower (or the quantile is beyond the last bound); None for no events or
    an unknown beyond the last bound."""
    total = sum(counts)
    if total <= 0:
        return None
    rank = q * total
    seen = 0
    for i, c in enumerate(counts):
        seen += c
        if c and seen >= rank:
            bound = BOUNDS_MS[i] if i < len(BOUNDS_MS) else None
            if max_ms is None:
                return bound
            return round(max_ms, 3) if bound is None else min(bound, round(max_ms, 3))
    return None


def window(before: Mapping[str, Any] | None, after: Mapping[str, Any]) -> list[int]:
    """The counts of the events between two statuses' ``latency`` (``before`` None: since
    the start); ValueError when they are not of one controller run (a restart between
    them resets the counts, or the bounds differ)."""
    late = _counts(after)
    if before is None:
        return late
    diff = [b - a for a, b in zip(_counts(before), late, strict=True)]
    if any(d < 0 for d in diff):
        raise ValueError("the counts went down: the controller restarted between the two")
    return diff


def _counts(latency: Mapping[str, Any]) -> list[int]:
    """A status' ``latency`` counts, checked against this version's buckets."""
    counts = [int(c) for c in latency["counts"]]
    if list(latency["le_ms"]) != list(BOUNDS_MS) or len(counts) != len(BOUNDS_MS) + 1:
        raise ValueError("latency buckets differ from this version's")
    return counts
