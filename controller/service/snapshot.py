"""Per-table snapshots at board starts: a restart rebuilds only what follows them.

A board start cuts a table's history: once a new board is on the table, nothing of the
boards before reaches its later outputs except a few values carried across boards. A
**snapshot** holds those values, taken when the Engine applies an input that starts a board
(a board tag, a ``board`` ruling, or the first call or card with no board or a finished one:
``Table.apply``); it is keyed by that input's journal number ``n``:

- the table's sources: per ``src`` its boots (newest last) with their seq trackers (strict,
  high, low, the window of seqs seen) and the boots retired, as after input ``n``;
- ``Table.played`` and the first irregularity id of the new board, ``feed_seq`` before
  input ``n``, ``last``, the last ``result``;
- the table's Law 87 observations (journal n, board, seat, hand), which the engine-wide
  ``FouledBoardDetector`` compares with every other table's hands.

What the board-starting input itself builds (the new board, its alerts, feed numbers, tempo
and evidence) is not stored: a restore applies input ``n`` again to a table with no board,
which starts the same board (the Laws core is deterministic), without its outputs. So a
snapshot may be used only when input ``n`` is published (``n <= published_through``): the
journal writes one only then (``Journal.stage_snapshots``).

A snapshot is data (JSON, with a format number), never pickle: a journal must not run code.
One that does not decode, has another format, or does not start a board when restored is
not used: that table is rebuilt from all its entries, and the log says why.

Rebuild (``entries``): restore every table that has a usable snapshot, then feed the
journal from the earliest entry still needed, skipping each restored table's entries up to
its ``n``; the restored Law 87 observations go back into the detector in journal order,
interleaved with the replayed ones, so a table's later check compares against exactly the
hands it saw first time. ``Engine.stats`` then counts only what was replayed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

import msgspec

from controller import wire
from controller.engine import Carried, CarriedBoot, CarriedSource, Engine, Outgoing
from controller.laws.cards import FULL_DECK, Card, Seat
from controller.service.journal import IncomingEntry, Journal

__all__ = ["FORMAT", "Snapshot", "carried", "encode", "decode", "restore", "entries", "enable",
           "take", "record"]

log = logging.getLogger("bridge_table.controller")

#: the snapshot format; another one is not read (that table is rebuilt in full)
FORMAT = 1


class _Tracker(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    boot: str | None
    strict: bool
    high: int
    low: int
    recent: list[int]


class _SourceSnap(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    src: str
    boots: list[_Tracker]
    retired: list[str]


class _Observed(msgspec.Struct, array_like=True, forbid_unknown_fields=True):
    n: int
    board: int
    seat: int
    hand: list[str]


class Snapshot(msgspec.Struct, forbid_unknown_fields=True):
    """One table's values carried across boards, as after its board-starting input."""

    format: int
    table: str
    #: the board its input started (checked on restore, with ``last``: that input's seq)
    board: int
    played: list[int]
    next_id: int
    feed_seq: int
    last: dict[str, Any] | None
    result: dict[str, Any] | None
    sources: list[_SourceSnap]
    observed: list[_Observed]
    #: the table's share of ``Engine.stats`` (``TableState.counts``), its input included
    counts: dict[str, int]


_decoder = msgspec.json.Decoder(Snapshot)
_SEAT_BY_INT = {int(s): s for s in Seat}
_CARD_BY_TEXT = {str(c): c for c in FULL_DECK}


def enable(engine: object) -> bool:
    """Have ``engine`` keep what each board start carries (an ``Engine`` only)."""
    if isinstance(engine, Engine) and engine.board_starts is None:
        engine.board_starts = {}
    return isinstance(engine, Engine)


def take(engine: object) -> list[tuple[str, int, int, bytes]]:
    """The snapshots of the board starts since the last call: ``(table, n, FORMAT, data)``."""
    due = getattr(engine, "board_starts", None)
    if not due:
        return []
    out = []
    for table, (n, carried) in due.items():
        try:
            out.append((table, n, FORMAT, encode(carried)))
        except Exception:  # a defect in the snapshot only: the older one stays (more replay)
            log.exception("snapshot of table %s at journal entry %d not written", table, n)
    due.clear()
    return out


def encode(carried: Carried) -> bytes:
    """The snapshot of a table's values carried across boards (``Engine.board_starts``)."""
    return msgspec.json.encode(Snapshot(
        format=FORMAT, table=carried.table, board=carried.board, played=list(carried.played),
        next_id=carried.next_id, feed_seq=carried.feed_seq, last=carried.last,
        result=carried.result,
        sources=[_SourceSnap(s.src, [_Tracker(b.boot, b.strict, b.high, b.low, list(b.recent))
                                     for b in s.boots], list(s.retired))
                 for s in carried.sources],
        observed=[_Observed(n, board, int(seat), sorted(str(c) for c in hand))
                  for n, board, seat, hand in carried.observed],
        counts=dict(carried.counts)))


def decode(data: bytes, fmt: int) -> Snapshot | str:
    """The snapshot, or why it cannot be used."""
    if fmt != FORMAT:
        return f"snapshot format {fmt}, this program reads {FORMAT}"
    try:
        snap = _decoder.decode(data)
    except msgspec.DecodeError as e:
        return f"snapshot does not decode ({e})"
    if snap.format != FORMAT:
        return f"snapshot format {snap.format}, this program reads {FORMAT}"
    return snap


def _hand(cards: list[str]) -> frozenset[Card]:
    return frozenset(_CARD_BY_TEXT[c] for c in cards)


def carried(snap: Snapshot) -> Carried:
    """The engine's values of a decoded snapshot; KeyError names an unknown seat or card."""
    return Carried(
        table=snap.table, board=snap.board, last=snap.last, played=tuple(snap.played),
        next_id=snap.next_id, feed_seq=snap.feed_seq, result=snap.result,
        sources=tuple(CarriedSource(s.src, tuple(CarriedBoot(b.boot, b.strict, b.high, b.low,
                                                             tuple(b.recent))
                                                 for b in s.boots), tuple(s.retired))
                      for s in snap.sources),
        observed=tuple((o.n, o.board, _SEAT_BY_INT[o.seat], _hand(o.hand))
                       for o in snap.observed),
        counts=dict(snap.counts))


def restore(engine: Engine, snap: Snapshot, entry: IncomingEntry) -> str | None:
    """Restore ``snap``'s table into ``engine`` (which must not follow it yet) and apply its
    board-starting ``entry`` without outputs. None when done, else why not (the engine is
    then as before)."""
    name = snap.table
    parsed = wire.parse_topic(entry.topic, root=engine.root)
    if parsed is None or parsed.table != name or parsed.kind not in ("event", "ruling"):
        return f"journal entry {entry.n} is not an input of table {name}"
    try:
        values = carried(snap)
    except KeyError as e:
        return f"snapshot of table {name} names an unknown seat or card {e}"
    problem = engine.restore(values, parsed.kind, entry.payload)
    if problem is not None:
        return f"snapshot of table {name} at journal entry {entry.n}: {problem}"
    return None


def entries(engine: object, journal: Journal, through: int,
            restored: dict[str, int] | None = None) -> Iterator[IncomingEntry]:
    """The journal entries a restart must feed ``engine`` (``ControllerDaemon.rebuild``),
    once each table with a usable snapshot is restored (into ``restored``: table -> the
    journal number of the board-starting input applied with it); for any other engine,
    all."""
    if not isinstance(engine, Engine):
        yield from journal.incoming()
        return
    if restored is None:
        restored = {}
    for table, n, fmt, data in journal.snapshots():
        snap = decode(data, fmt)
        entry = journal.entry(n) if n <= through else None
        if isinstance(snap, str) or entry is None or snap.table != table:
            why = snap if isinstance(snap, str) else \
                f"its input {n} is not published yet" if n > through else \
                f"journal entry {n} is missing" if entry is None else \
                f"it names table {snap.table}"
            log.warning("journal: snapshot of table %s not used (%s); rebuilding it from "
                        "all its entries", table, why)
            continue
        problem = restore(engine, snap, entry)
        if problem is not None:
            log.warning("journal: %s; rebuilding table %s from all its entries", problem,
                        table)
            continue
        restored[table] = n
    # restored observations go back into the detector in journal order, between the
    # replayed entries (a replayed table's Law 87 check sees exactly what it saw)
    pending = sorted((n, table, board, seat, hand) for table in restored
                     for n, board, seat, hand in engine.observed(table))
    pending.reverse()
    start = 1
    if restored:
        start = min(restored.values())
        for topic, first in journal.first_by_topic().items():
            parsed = wire.parse_topic(topic, root=engine.root)
            if parsed is not None and parsed.table not in restored:
                start = min(start, first)
    tables: dict[str, str | None] = {}
    for entry in journal.incoming(after=start - 1):
        if entry.topic in tables:
            of = tables[entry.topic]
        else:
            parsed = wire.parse_topic(entry.topic, root=engine.root)
            of = tables[entry.topic] = parsed.table if parsed is not None else None
        if of is not None and entry.n <= restored.get(of, 0):
            continue
        while pending and pending[-1][0] < entry.n:
            _, name, board, seat, hand = pending.pop()
            engine.fouled.observe(name, board, seat, hand)
        engine.position = entry.n
        yield entry
    while pending:
        _, name, board, seat, hand = pending.pop()
        engine.fouled.observe(name, board, seat, hand)
    if restored:
        log.info("journal: %d table(s) restored from their snapshots; entries from %d on "
                 "read", len(restored), start)



def record(journal: Journal, engine: Engine,
           messages: Sequence[tuple[str, bytes]], *, batch: int = 500,
           published: int | None = None) -> list[list[Outgoing]]:
    """Journal ``messages`` and apply them as the daemon does (a transaction per ``batch``,
    each input handled with its journal number, the snapshots taken staged for the next
    transaction), without a broker: for benchmarks and tests. Every input is marked
    published, or those up to ``published`` only. Returns each input's outputs."""
    enable(engine)
    outs: list[list[Outgoing]] = []
    for i in range(0, len(messages), batch):
        chunk = messages[i:i + batch]
        ns = journal.append_incoming(chunk)
        for n, (topic, payload) in zip(ns, chunk, strict=True):
            engine.position = n
            outs.append(engine.handle(topic, payload))
        if ns:
            journal.mark_published(ns[-1] if published is None else min(ns[-1], published))
        journal.stage_snapshots(take(engine))
    journal.flush_mark()
    return outs
