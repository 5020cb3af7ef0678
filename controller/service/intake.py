"""The controller's intake bounded per table: a flooding table cannot delay another.

mosquitto has no rate limit per client, and the daemon takes its messages from one queue in
the order the broker sends them. A token bucket per table (``burst`` events at once, then
``rate`` a second) decides, before anything is decoded, journaled or applied, whether a
table's event is taken in: one beyond it is acknowledged to the broker (so that it does not
hold the broker's in-flight window to the controller, shared by every table) and dropped,
counted, with an ``error`` to its table at most once a second. A real bridge never reaches
the bound (a board is a few hundred events over minutes; a spool sent again after a
reconnect goes at ``rate`` once past ``burst``); what it had dropped has no end-to-end
acknowledgement, so the bridge sends it again later. Another table's events then wait
only behind the flood's cheap refusals, never behind its applications
(docs/security.md has the figure, bench/bench_flood.py measures it).

Even dropped, a flood costs the daemon reading it (paho parses every message). So a table
whose drops reach ``PAUSE_AFTER`` in a report interval is paused: a daemon that subscribes
each table's ``event`` topic on its own (``--identities`` or ``--tables``) unsubscribes it
for ``PAUSE`` seconds and the broker drops the flood; the table's bridge sends again what
was lost in the pause (no acknowledgement came for it).

After each (re)connection every table may also send ``BACKLOG`` events more, once, until the
daemon first finds nothing to read (or ``BACKLOG_FOR`` seconds): what the broker queued for
the daemon while it was away (every table's events, up to 30 minutes) arrives at once, and
must not be taken for a flood. A flood at that moment gets that much more in, then is
bounded as ever.

Rulings are not counted: only the director's console may publish them (the broker's ACL).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

__all__ = ["BACKLOG", "BACKLOG_FOR", "INTAKE_BURST", "INTAKE_RATE", "PAUSE", "PAUSE_AFTER",
           "Intake"]

#: events a table may send at once (a spool sent again after a reconnect, a round's start)
INTAKE_BURST = 600
#: events a second after that (a table at play sends about one a second)
INTAKE_RATE = 50.0
#: tables remembered at most; beyond, those whose bucket is full again are forgotten
_MAX_TABLES = 4096
#: seconds between two ``error`` messages about one table's dropped events
REPORT_EVERY = 1.0
#: a table that had this many events dropped since it was last told is a flood: a daemon
#: that subscribes each table's events on its own topic unsubscribes it for ``PAUSE``
#: seconds, so that the broker drops the flood instead of the daemon reading it
PAUSE_AFTER = 500
PAUSE = 10.0
#: events each table may send beyond the bound once after each (re)connection of the
#: daemon: what the broker queued while it was away arrives at once and is no flood (30
#: minutes of a table is about 1,800 events); good until the daemon first finds nothing to
#: read, or for ``BACKLOG_FOR`` seconds
BACKLOG = 2_000
BACKLOG_FOR = 120.0
#: seconds after a connection before "nothing waiting" ends the backlog (the broker's first
#: queued messages may still be on their way)
BACKLOG_GRACE = 1.0


@dataclass
class _Bucket:
    tokens: float
    at: float
    reported: float = float("-inf")
    dropped: int = 0  # since the last report


@dataclass
class Intake:
    """``admit(table)`` per event; ``report(table)`` says when to tell the table."""

    burst: int = INTAKE_BURST
    rate: float = INTAKE_RATE
    clock: Callable[[], float] = time.monotonic
    dropped: int = 0
    _buckets: dict[str, _Bucket] = field(default_factory=dict)
    #: the backlog allowance of each table that used some since ``allow_backlog``
    _backlog: dict[str, int] = field(default_factory=dict)
    _backlog_until: float = float("-inf")

    def allow_backlog(self, events: int = BACKLOG, seconds: float = BACKLOG_FOR) -> None:
        """Every table may send ``events`` more than the bound, once, for ``seconds``
        (the daemon calls it at each connection)."""
        self._backlog = {}
        self._backlog_size = events
        self._backlog_from = self.clock()
        self._backlog_until = self._backlog_from + seconds

    def end_backlog(self) -> None:
        """The queued backlog is in (the daemon found nothing waiting to be read), unless
        the connection is younger than ``BACKLOG_GRACE``."""
        if self.clock() - self._backlog_from >= BACKLOG_GRACE:
            self._backlog_until = float("-inf")

    _backlog_size: int = 0
    _backlog_from: float = float("-inf")

    def __post_init__(self) -> None:
        if self.burst < 1 or self.rate <= 0:
            raise ValueError("the intake's burst must be at least 1 and its rate above 0")

    def admit(self, table: str) -> bool:
        """Take one of ``table``'s events in (True), or count it dropped (False)."""
        now = self.clock()
        b = self._buckets.get(table)
        if b is None:
            if len(self._buckets) >= _MAX_TABLES:
                self._forget_full(now)
            b = self._buckets[table] = _Bucket(float(self.burst), now)
        else:
            b.tokens = min(float(self.burst), b.tokens + (now - b.at) * self.rate)
            b.at = now
        if b.tokens >= 1.0:
            b.tokens -= 1.0
            return True
        if now < self._backlog_until:
            left = self._backlog.get(table, self._backlog_size)
            if left > 0:
                self._backlog[table] = left - 1
                return True
        b.dropped += 1
        self.dropped += 1
        return False

    def report(self, table: str) -> int:
        """Events of ``table`` dropped since it was last told, when telling it is due (at
        most once every ``REPORT_EVERY`` seconds); 0 otherwise."""
        b = self._buckets.get(table)
        if b is None or not b.dropped:
            return 0
        now = self.clock()
        if now - b.reported < REPORT_EVERY:
            return 0
        count, b.dropped, b.reported = b.dropped, 0, now
        return count

    def _forget_full(self, now: float) -> None:
        for table in [t for t, b in self._buckets.items()
                      if not b.dropped and b.tokens + (now - b.at) * self.rate >= self.burst]:
            del self._buckets[table]
        while len(self._buckets) >= _MAX_TABLES:  # every one dropping: the oldest goes
            del self._buckets[next(iter(self._buckets))]
