"""Movements: every generated movement checked against what the movement promises."""

from __future__ import annotations

from collections import Counter

import pytest

from controller.session import Movement, MovementError, Round, TableRound, howell, mitchell, teams


def seats(m: Movement, pair: int) -> list[tuple[int, str, TableRound]]:
    return [(r.number, t, tr) for r in m.rounds for t, tr in r.tables.items()
            if pair in (tr.ns, tr.ew)]


@pytest.mark.parametrize("tables", range(3, 16))
@pytest.mark.parametrize("even", ["relay", "skip"])
def test_mitchell_ew_pairs_meet_each_board_once_and_ns_pairs_stay(tables: int,
                                                                  even: str) -> None:
    m = mitchell(tables, None, 2, even=even)
    full = tables - 1 if tables % 2 == 0 and even == "skip" else tables
    assert len(m.rounds) == full
    for t in range(1, tables + 1):
        assert {tr.ns for r in m.rounds for tab, tr in r.tables.items() if tab == str(t)} == {t}
    for ew in range(tables + 1, 2 * tables + 1):
        played = [b for _, _, tr in seats(m, ew) for b in tr.boards]
        assert len(played) == len(set(played)) == 2 * full
        opponents = [tr.ns for _, _, tr in seats(m, ew)]
        assert len(set(opponents)) == full
    # round 1: EW pair N+t at table t with set t
    assert m.rounds[0].tables["2"] == TableRound(2, tables + 2, (3, 4))
    # EW move up, boards move down
    assert m.pairs_at("3", m.boards_at("3", 2)[0]) == (3, tables + 2)


def test_even_mitchell_relay_and_bye_stand() -> None:
    m = mitchell(6, None, 3)
    for r in m.rounds:
        sets = [tr.boards for tr in r.tables.values()]
        # tables 1 and 6 share a set; one set rests on the bye stand
        assert r.tables["1"].boards == r.tables["6"].boards
        assert len(set(sets)) == 5
    assert m.tables_playing(1) == frozenset("123456")
    assert len(m.boards) == 18


def test_mitchell_arrow_switch_swaps_the_last_round() -> None:
    m = mitchell(5, None, 2, arrow_switch=[5])
    plain = mitchell(5, None, 2)
    assert m.rounds[:4] == plain.rounds[:4]
    for t, tr in m.rounds[4].tables.items():
        p = plain.rounds[4].tables[t]
        assert (tr.ns, tr.ew, tr.boards) == (p.ew, p.ns, p.boards)


@pytest.mark.parametrize("pairs", range(2, 27))
def test_howell_everyone_meets_everyone_and_plays_every_board_once(pairs: int) -> None:
    m = howell(pairs, None, 2)
    for p in range(1, pairs + 1):
        here = seats(m, p)
        opponents = [tr.ew if tr.ns == p else tr.ns for _, _, tr in here]
        assert sorted(opponents) == [q for q in range(1, pairs + 1) if q != p]
        boards = [b for _, _, tr in here for b in tr.boards]
        assert len(boards) == len(set(boards))
    counts = Counter(b for r in m.rounds for tr in r.tables.values() for b in tr.boards)
    assert len(set(counts.values())) == 1  # every board played the same number of times


def test_teams_share_the_boards_of_a_match() -> None:
    m = teams(2, 3, 8)
    assert m.tables_playing(9) == frozenset("1234")
    assert m.pairs_at("1", 9) == (1, 2) and m.pairs_at("2", 9) == (2, 1)
    assert m.pairs_at("3", 24) == (3, 4) and m.pairs_at("4", 24) == (4, 3)
    assert m.boards_at("2", 2) == tuple(range(9, 17))
    assert m.round_of("4", 17) == 3 and m.round_of("4", 25) is None
    assert m.pairs_at("5", 1) is None


def test_inconsistent_movements_are_refused() -> None:
    with pytest.raises(MovementError, match="pair 1 at tables"):
        Movement((Round(1, {"1": TableRound(1, 2, (1,)), "2": TableRound(1, 3, (2,))}),))
    with pytest.raises(MovementError, match="plays board 1 twice"):
        Movement((Round(1, {"1": TableRound(1, 2, (1,))}),
                  Round(2, {"1": TableRound(1, 3, (1,))})))
    with pytest.raises(MovementError, match="at most"):
        mitchell(5, 6, 2)
    with pytest.raises(MovementError, match="arrow-switch"):
        mitchell(5, None, 2, arrow_switch=[9])


def most_tables_on_one_set(m: Movement) -> int:
    return max(Counter(tr.boards for tr in r.tables.values()).most_common(1)[0][1]
               for r in m.rounds)


def least_sharing_possible(pairs: int) -> int:
    """By exhaustive search, independent of the generator: over every way to give the
    round robin's tables (pair 2n fixed, the circle method) a set each round so that every
    pair plays every set once, the fewest tables that must share a set in some round."""
    n = pairs // 2
    m = 2 * n - 1

    def at(r: int, k: int) -> tuple[int, int]:
        return (2 * n, r % m + 1) if k == 0 else ((r + k) % m + 1, (r - k) % m + 1)

    cells = [(r, k) for r in range(m) for k in range(n)]

    def place(i: int, limit: int, played: dict[int, set[int]],
              sets: dict[tuple[int, int], int]) -> bool:
        if i == len(cells):
            return True
        r, k = cells[i]
        a, b = at(r, k)
        for s in range(m):
            # at most ``limit`` tables of the round on set s
            if s in played[a] or s in played[b] or \
                    sum(1 for kk in range(k) if sets[(r, kk)] == s) >= limit:
                continue
            sets[(r, k)] = s
            played[a].add(s)
            played[b].add(s)
            if place(i + 1, limit, played, sets):
                return True
            played[a].discard(s)
            played[b].discard(s)
        return False

    for limit in range(1, n + 1):
        if place(0, limit, {p: set() for p in range(1, 2 * n + 1)}, {}):
            return limit
    raise AssertionError("all the tables on one set always works")


@pytest.mark.parametrize(("pairs", "sharing"), [(4, 2), (6, 3), (8, 1), (10, 2), (12, 1)])
def test_small_howells_share_sets_as_little_as_they_can(pairs: int, sharing: int) -> None:
    m = howell(pairs, None, 1)
    assert most_tables_on_one_set(m) == sharing
    if pairs <= 6:
        # 2 and 3 tables: no placement does better (all the tables play one set a round)
        assert least_sharing_possible(pairs) == sharing
    # 5 tables: two tables share a set (a relay); not every table plays the same set
    for r in m.rounds:
        assert len({tr.boards for tr in r.tables.values()}) >= len(r.tables) - sharing + 1
