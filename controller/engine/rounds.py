"""A table's boards, round by round: the movement held live (Law 15; issue 43).

The session's movement gives each table its boards round by round. A board is scheduled at
a table for the round it plays now, or for the next one (a table that has finished, or given
up, its round moves on): ``RoundSchedule`` answers ``number in schedule`` so, from the
boards the table has played (``Table.played``, which a snapshot carries) and the one on it.
A board of a round already behind the table, or two rounds ahead, is ``WRONG_BOARD``
``not_scheduled`` at that table, as a board of another table is. Before the table has
played a board the controller knows of (a controller started in the middle of a session
with no journal), every board of the table's own rounds is taken.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

__all__ = ["RoundSchedule", "rounds_of"]


def rounds_of(rounds: Iterable[object]) -> dict[str, list[frozenset[int]]]:
    """Each table's boards, per round it plays in (in order), from a movement's ``rounds``
    (each with ``tables``: table -> its round, with ``boards``)."""
    out: dict[str, list[frozenset[int]]] = {}
    for rnd in rounds:
        for table, at in getattr(rnd, "tables", {}).items():
            boards = frozenset(int(b) for b in getattr(at, "boards", ()))
            if boards:
                out.setdefault(str(table), []).append(boards)
    return out


class RoundSchedule:
    """``number in schedule``: whether ``number`` may be played at the table now (its round,
    or the next one, as ``played`` shows); iterating gives every board of the table."""

    __slots__ = ("_played", "_round_of", "rounds")

    def __init__(self, rounds: Sequence[frozenset[int]],
                 played: Callable[[], Iterable[int]]) -> None:
        self.rounds = tuple(rounds)
        self._played = played
        self._round_of = {b: i for i, boards in enumerate(self.rounds) for b in boards}

    def __contains__(self, number: object) -> bool:
        if not isinstance(number, int):
            return False
        wanted = self._round_of.get(number)
        if wanted is None:
            return False
        done = [self._round_of[b] for b in self._played() if b in self._round_of]
        if not done:
            return True
        current = max(done)
        return wanted in (current, current + 1)

    def __iter__(self) -> Iterator[int]:
        return iter(sorted(self._round_of))

    def __len__(self) -> int:
        return len(self._round_of)
