"""Which tables one controller serves when a room is split across controller processes.

Shared-nothing: each controller subscribes only to its own tables' topics (one subscription a
table: ``{root}/{t}/event`` and ``{root}/{t}/ruling``), keeps its own journal, client id and
retained set; no controller ever sees another's events. mosquitto 2.0 has no
shared-subscription strategy that keeps a table on one subscriber, so the routing is by
subscription, never ``$share``. ``docs/scale.md`` gives the championship layout.

Two ways to say which tables:

- ``--tables 1-500`` : explicit ranges and ids, comma-separated (``1-250,301-400,A1-A20,B7``);
- ``--partition 2/3`` : the second of three shares by a stable hash of the table id (CRC-32,
  the same in every process and on every machine) of a known set of tables: ``--tables``,
  or the tables of the session's movement or the ``--schedule``.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Sequence

from controller import wire
from controller.commandline import ControllerError

__all__ = ["PartitionError", "hash_share", "parse_partition", "parse_tables", "scope_name"]


class PartitionError(ControllerError):
    """A ``--tables`` or ``--partition`` that cannot be used; says why."""


def parse_tables(spec: str) -> tuple[str, ...]:
    """``--tables 1-500,A1-A20,B7``: ``wire.parse_tables``, its problem named after the
    option."""
    try:
        return wire.parse_tables(spec)
    except ValueError as e:
        raise PartitionError(f"--tables: {e}") from None


def parse_partition(text: str) -> tuple[int, int]:
    """``2/3`` -> (2, 3): the second share of three."""
    m = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if m is None:
        raise PartitionError(f"--partition: {text!r} is not K/N (e.g. 1/2)")
    k, n = int(m.group(1)), int(m.group(2))
    if not 1 <= k <= n:
        raise PartitionError(f"--partition: {text!r}: K must be 1 to N")
    return k, n


def hash_share(tables: Sequence[str], k: int, n: int) -> tuple[str, ...]:
    """The tables of share ``k`` of ``n`` (1-based) by a stable hash of the table id."""
    return tuple(t for t in tables if zlib.crc32(t.encode()) % n == k - 1)


def scope_name(tables_spec: str | None, partition: tuple[int, int] | None) -> str:
    """The name a partitioned controller goes by (client id, status topic)."""
    parts = []
    if partition is not None:
        parts.append(f"part{partition[0]}of{partition[1]}")
    if tables_spec:
        parts.append("tables-" + re.sub(r"[^A-Za-z0-9_.-]+", "_", tables_spec.strip())[:40])
    return "-".join(parts)
