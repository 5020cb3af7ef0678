"""The daemon's garbage-collector policy: no full collection in the middle of a round.

A full (generation 2) collection visits every object the process holds: at 1,024 tables
about 300,000 objects, 160 ms on the benchmark machine, and those pauses were most of the
daemon's event -> state p99 (``docs/benchmarks-archive.md``, issue 13). The Engine's
state holds no reference cycles (``tests/test_gcpolicy.py`` runs a session with the
collector off and finds none), so reference counting frees it; the collector is there for
the cycles that exceptions and libraries make, which die young. So:

- after the rebuild, and after every batch (``freeze_every``, 0 s: a state lives until its
  table's next input, a board's inputs until the board ends, so much survives a young
  collection), what has survived so far goes to the permanent generation (``gc.freeze``:
  it moves a list, whatever its length: a few microseconds), where no automatic collection
  visits it; the young generations are collected as usual, and a collection of any
  generation only visits what survived since the last batch. Freezing every 10 s let full
  collections of 70-90 ms through; every second, collections of the second and third
  generations of 10-50 ms (what 1,024 tables' hands passed across the play spots leave
  in a second, ``docs/benchmarks-archive.md``, issue 32 item 3);
- a full collection of everything (``gc.unfreeze`` then ``gc.collect``) runs when the
  daemon is idle (nothing received for ``IDLE`` seconds: between rounds) and the last one
  is at least ``full_every`` seconds old, so that a cycle that was frozen (the libraries
  make a few) is freed then; and, however busy the daemon, once ``full_every_busy``
  seconds have passed since the last one (one pause of the old kind an hour).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["GcPolicy"]


@dataclass
class GcPolicy:
    freeze_every: float = 0.0
    full_every: float = 300.0
    full_every_busy: float = 3600.0
    clock: Callable[[], float] = time.monotonic
    #: when the survivors were last frozen, and when everything was last collected
    _frozen_at: float = field(default=float("-inf"))
    _full_at: float = field(default=float("-inf"))
    #: full collections run at idle (for the daemon's status)
    full_collections: int = 0

    def start(self) -> None:
        """After the rebuild: everything so far (the tables, the modules) frozen."""
        gc.collect()
        now = self.clock()
        self._full_at = now
        self._freeze(now)

    def after_batch(self) -> None:
        now = self.clock()
        if now - self._full_at >= self.full_every_busy:
            self._collect_all()
        elif now - self._frozen_at >= self.freeze_every:
            self._freeze(now)

    def idle(self) -> None:
        """Nothing to do for a while: the full collection, if one is due."""
        if self.clock() - self._full_at >= self.full_every:
            self._collect_all()

    def _collect_all(self) -> None:
        gc.unfreeze()
        gc.collect()
        self.full_collections += 1
        now = self.clock()
        self._full_at = now
        self._freeze(now)

    def stop(self) -> None:
        """Give the frozen objects back to the collector (a daemon run in a test process)."""
        gc.unfreeze()

    def _freeze(self, now: float) -> None:
        gc.freeze()
        self._frozen_at = now
