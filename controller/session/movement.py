"""Movements: who sits where in which round, and which boards each table plays.

A ``Movement`` is a tuple of ``Round``s; a round maps each table (its name, a string as on
the wire) to a ``TableRound``: the pair (or team) sitting North-South, the one sitting
East-West, and the boards they play. The generators build the common movements:

- ``mitchell``: NS pairs stay, EW pairs move up a table, boards move down. With an even
  number of tables (where EW would meet the same boards twice) a relay and bye stand are
  used: tables 1 and N share a set, and a set rests on a stand between tables N/2 and N/2+1
  (or ``skip``: EW pairs skip a table after half the rounds). ``arrow_switch`` names rounds
  in which every table's pairs swap directions (one winner instead of two fields).
- ``howell``: every pair meets every other (2n pairs, n tables, up to 2n-1 rounds; an odd
  number of pairs gets a sit-out). Pair 2n stays at table 1; the others follow the circle
  of a round robin; the board sets are placed so that every pair plays every set once.
- ``teams``: matches of two teams at two tables, home team NS at the first table and EW at
  the second, the same boards at both (shared between the two tables of a match).

Pairs are numbered so that a number names one pair in the whole session: a Mitchell's NS
pairs are 1..N, its EW pairs N+1..2N (EW pair N+t starts at table t).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

__all__ = ["Movement", "Round", "TableRound", "MovementError", "mitchell", "howell",
           "teams", "board_range", "table_key"]


class MovementError(ValueError):
    """A movement that cannot be built or is not consistent (a pair at two tables...)."""


@dataclass(frozen=True, slots=True)
class TableRound:
    """A table in a round: the pairs (or teams) NS and EW, None where the movement names
    only the boards (a schedule file's boards-only form, ``controller.session.schedule``)."""

    ns: int | None
    ew: int | None
    boards: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Round:
    number: int
    tables: Mapping[str, TableRound]


def table_key(table: str) -> tuple[int, str]:
    """Tables in their natural order: "2" before "10", named tables after numbered ones."""
    return (int(table), "") if table.isdigit() else (1 << 30, table)


@dataclass(frozen=True)
class Movement:
    rounds: tuple[Round, ...]
    kind: str = "explicit"
    #: (table, board) -> (round number, TableRound), built once from ``rounds``
    _where: Mapping[tuple[str, int], tuple[int, TableRound]] = field(
        init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        where: dict[tuple[str, int], tuple[int, TableRound]] = {}
        numbers = [r.number for r in self.rounds]
        if len(set(numbers)) != len(numbers):
            raise MovementError("two rounds with the same number")
        for rnd in self.rounds:
            # a team of four sits at two tables of a round, once in each direction
            seated: dict[tuple[int, str], str] = {}
            for table, tr in rnd.tables.items():
                for pair, side in ((tr.ns, "NS"), (tr.ew, "EW")):
                    if pair is None:
                        continue
                    key = (pair, side if self.kind == "teams" else "")
                    if key in seated:
                        raise MovementError(f"round {rnd.number}: pair {pair} at tables "
                                            f"{seated[key]} and {table}")
                    seated[key] = table
                if tr.ns is not None and tr.ns == tr.ew:
                    raise MovementError(f"round {rnd.number}, table {table}: pair {tr.ns} "
                                        f"on both sides")
                for board in tr.boards:
                    if (table, board) in where:
                        raise MovementError(f"table {table} plays board {board} twice "
                                            f"(rounds {where[(table, board)][0]} and "
                                            f"{rnd.number})")
                    where[(table, board)] = (rnd.number, tr)
        object.__setattr__(self, "_where", MappingProxyType(where))

    # -- questions the controller, the scorer and the broadcast ask -------------------------
    @property
    def tables(self) -> list[str]:
        return sorted({t for r in self.rounds for t in r.tables}, key=table_key)

    @property
    def boards(self) -> list[int]:
        return sorted({b for (_, b) in self._where})

    @property
    def pairs(self) -> list[int]:
        return sorted({p for r in self.rounds for tr in r.tables.values() for p in (tr.ns, tr.ew)
                       if p is not None})

    def round(self, number: int) -> Round | None:
        return next((r for r in self.rounds if r.number == number), None)

    def tables_playing(self, board: int) -> frozenset[str]:
        """Every table that plays ``board`` in the session."""
        return frozenset(t for (t, b) in self._where if b == board)

    def boards_at(self, table: str, round: int) -> tuple[int, ...]:
        rnd = self.round(round)
        tr = rnd.tables.get(table) if rnd is not None else None
        return tr.boards if tr is not None else ()

    def boards_of_table(self, table: str) -> frozenset[int]:
        """Every board ``table`` plays in the session (its ``WRONG_BOARD`` schedule)."""
        return frozenset(b for (t, b) in self._where if t == table)

    def round_of(self, table: str, board: int) -> int | None:
        hit = self._where.get((table, board))
        return hit[0] if hit is not None else None

    def pairs_at(self, table: str, board: int) -> tuple[int, int] | None:
        """The pairs NS and EW at ``table`` for ``board``; None where the movement does not
        name them."""
        hit = self._where.get((table, board))
        if hit is None or hit[1].ns is None or hit[1].ew is None:
            return None
        return hit[1].ns, hit[1].ew

    def schedule(self) -> dict[str, frozenset[int]]:
        """Table -> every board it plays: the shape ``controller.session.schedule`` loads."""
        return {t: self.boards_of_table(t) for t in self.tables}


def board_range(first: int, count: int) -> tuple[int, ...]:
    return tuple(range(first, first + count))


def _build(kind: str, rows: Iterable[Mapping[str, TableRound]]) -> Movement:
    rounds = tuple(Round(n, MappingProxyType(dict(tables))) for n, tables in enumerate(rows, 1))
    return Movement(rounds, kind)


def _check_counts(tables: int, rounds: int, boards_per_round: int) -> None:
    if tables < 1 or rounds < 1 or boards_per_round < 1:
        raise MovementError("tables, rounds and boards per round must be at least 1")


def mitchell(tables: int, rounds: int | None = None, boards_per_round: int = 2, *,
             first_board: int = 1, arrow_switch: Sequence[int] = (),
             even: str = "relay") -> Movement:
    """NS pair t stays at table t, EW pair N+t starts at table t and moves up one table a
    round, the boards move down one table. ``even`` ("relay" or "skip") for an even
    number of tables; ``arrow_switch`` the rounds where NS and EW change places."""
    n = tables
    if even not in ("relay", "skip"):
        raise MovementError(f"even-table Mitchell: 'relay' or 'skip', not {even!r}")
    relay = n % 2 == 0 and n > 1 and even == "relay"
    skip = n % 2 == 0 and n > 1 and even == "skip"
    limit = n - 1 if skip else n
    rounds = limit if rounds is None else rounds
    _check_counts(n, rounds, boards_per_round)
    if rounds > limit:
        raise MovementError(f"a {n}-table Mitchell has at most {limit} rounds")
    bad = [r for r in arrow_switch if not 1 <= r <= rounds]
    if bad:
        raise MovementError(f"arrow-switch round {bad[0]} is not a round of the movement")

    def set_at(t: int, r: int) -> int:
        # the set's position on the circle the boards follow (0-based), moved r rounds on
        if relay:
            # circle: (tables 1 and N share), 2, .., N/2, bye stand, N/2+1, .., N-1
            pos = 0 if t == n else t - 1 + (1 if t > n // 2 else 0)
        else:
            pos = t - 1
        return (pos + r) % n

    def ew_at(t: int, r: int) -> int:
        step = r + (1 if skip and r >= n // 2 else 0)
        return n + (t - 1 - step) % n + 1

    rows = []
    for r in range(rounds):
        row = {}
        for t in range(1, n + 1):
            boards = board_range(first_board + set_at(t, r) * boards_per_round,
                                 boards_per_round)
            ns, ew = t, ew_at(t, r)
            if r + 1 in arrow_switch:
                ns, ew = ew, ns
            row[str(t)] = TableRound(ns, ew, boards)
        rows.append(row)
    return _build("mitchell", rows)


def _howell_offsets(n: int, distinct: bool = True) -> list[int] | None:
    """Set offsets s_0..s_{n-1} for an n-table Howell (m = 2n-1 sets) with {s_0} and
    {s_k - k, s_k + k} covering every set once, so every pair plays every set once (pair p
    meets the circle at distance d = p-1-r, at table |d|, playing set r + s_|d|); with
    ``distinct`` no two tables play one set in a round. Without ``distinct``, the placement
    with the most different offsets: the fewest tables sharing a set in a round (a
    3-table Howell has two tables share a set, not all three play the same one)."""
    m = 2 * n - 1
    offsets = [0] * n
    used_s: dict[int, int] = {}
    covered: set[int] = set()
    best: list[int] | None = None
    best_distinct = 0

    def place(k: int) -> bool:
        nonlocal best, best_distinct
        if k == n:
            if len(used_s) > best_distinct:
                best, best_distinct = list(offsets), len(used_s)
            return len(used_s) == n         # every offset different: nothing better
        if len(used_s) + (n - k) <= best_distinct:
            return False                    # cannot beat the best placement found
        for s in range(m):
            if distinct and s in used_s:
                continue
            hit = {s} if k == 0 else {(s - k) % m, (s + k) % m}
            if hit & covered:
                continue
            used_s[s] = used_s.get(s, 0) + 1
            covered.update(hit)
            offsets[k] = s
            if place(k + 1):
                return True
            used_s[s] -= 1
            if not used_s[s]:
                del used_s[s]
            covered.difference_update(hit)
        return False

    place(0)
    return best


def howell(pairs: int, rounds: int | None = None, boards_per_round: int = 2, *,
           first_board: int = 1) -> Movement:
    """A complete (or, with fewer ``rounds``, an incomplete) Howell for ``pairs`` pairs."""
    if pairs < 2:
        raise MovementError("a Howell needs at least two pairs")
    n = (pairs + 1) // 2            # tables
    m = 2 * n - 1                   # rounds of a complete Howell, and board sets
    rounds = m if rounds is None else rounds
    _check_counts(n, rounds, boards_per_round)
    if rounds > m:
        raise MovementError(f"a {2 * n}-pair Howell has at most {m} rounds")
    # Where no placement keeps the sets apart (2 tables, ...), two tables share a set in a
    # round: a relay, as those small Howells are run.
    offsets = _howell_offsets(n) or _howell_offsets(n, distinct=False)
    if offsets is None:
        raise MovementError(f"no {n}-table Howell found")
    rows = []
    for r in range(rounds):
        row = {}
        for k in range(n):
            if k == 0:
                a, b = 2 * n, r % m + 1
            else:
                a, b = (r + k) % m + 1, (r - k) % m + 1
            if max(a, b) > pairs:
                continue        # the sit-out of an odd number of pairs
            s = (r + offsets[k]) % m
            row[str(k + 1)] = TableRound(a, b, board_range(first_board + s * boards_per_round,
                                                           boards_per_round))
        rows.append(row)
    return _build("howell", rows)


def teams(matches: int, rounds: int, boards_per_round: int, *, first_board: int = 1) -> Movement:
    """``matches`` matches, each at two tables (2m-1: home NS, 2m: away NS) playing the same
    boards; teams 2m-1 (home) and 2m (away)."""
    _check_counts(matches, rounds, boards_per_round)
    rows = []
    for r in range(rounds):
        boards = board_range(first_board + r * boards_per_round, boards_per_round)
        row = {}
        for m in range(1, matches + 1):
            home, away = 2 * m - 1, 2 * m
            row[str(2 * m - 1)] = TableRound(home, away, boards)
            row[str(2 * m)] = TableRound(away, home, boards)
        rows.append(row)
    return _build("teams", rows)
