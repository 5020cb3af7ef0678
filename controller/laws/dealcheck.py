"""Dealt boards against their deal file: what was seen in each pocket (or on each tray)
compared with the deal, every difference named.

Pure: standard library only. Three entry points:

- ``check_board(expected, seen, board=...)`` -> ``Verdict`` for one board;
- ``DuplicateBoardDetector`` -> the same 52-card deal met under two board numbers;
- ``FouledBoardDetector`` -> two tables that saw different hands for one board.

How findings are chosen (so that one mistake gives one finding, not fifty):

1. the board tag that does not match the board expected -> ``WRONG_BOARD``;
2. the seen hands are another board's deal (given ``deals``), as dealt or rotated ->
   ``CARDS_MATCH_BOARD`` and nothing card by card;
3. the four seen hands are the expected four rotated one, two or three seats -> ``ROTATED``
   (also when a few cards besides are wrong: then the rest is named against the rotated deal);
4. otherwise a pocket holding exactly another seat's hand -> ``HAND_IN_WRONG_POCKET``, and
   card by card for the rest: ``WRONG_POCKET``, ``DUPLICATED_CARD``, ``EXTRA_CARD``,
   ``MISSING_CARD``;
5. always: ``FOREIGN_CARD`` for each tag from another deck or no deck, ``HAND_COUNT`` for
   each pocket that does not hold 13 cards.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass

from .cards import Card, Deal, Seat
from .irregularities import Code

__all__ = [
    "FindingKind", "Finding", "Verdict", "ForeignTag", "check_board", "match_board", "DealIndex",
    "DuplicateBoardDetector", "FouledBoardDetector", "Conflict", "deal_key", "TABLE_CODES",
]


class FindingKind(enum.StrEnum):
    MISSING_CARD = "missing_card"            # card: in seat's hand, seen nowhere
    EXTRA_CARD = "extra_card"                # card: seen in seat's pocket, in no hand of the deal
    WRONG_POCKET = "wrong_pocket"            # card: seen in seat's pocket, belongs to other_seat
    DUPLICATED_CARD = "duplicated_card"      # card: seen more than once (seat: where the extra was)
    FOREIGN_CARD = "foreign_card"            # a tag of another deck, or unknown (detail: what)
    HAND_IN_WRONG_POCKET = "hand_in_wrong_pocket"  # seat's pocket holds other_seat's hand
    ROTATED = "rotated"                      # all four hands right, moved ``count`` seats clockwise
    WRONG_BOARD = "wrong_board"              # the board tag says ``board``, not the one expected
    CARDS_MATCH_BOARD = "cards_match_board"  # the cards are board ``board``'s deal (rotated: count)
    HAND_COUNT = "hand_count"                # seat's pocket holds ``count`` cards, not 13
    NO_DEAL = "no_deal"                      # the deal file has no (sound) deal for ``board``
    NO_BOARD_TAG = "no_board_tag"            # cards scanned with no board tag read first
    DUPLICATE_BOARD = "duplicate_board"      # this deal was already seen as board ``board``


#: The wire contract's code for a finding at a table's hand scan (laws.md section 5): a hand
#: that is not the recorded one is CARDS_FROM_WRONG_BOARD; a card in two hands, or in the
#: wrong one, is an incorrect count (Law 13). Station-only kinds have no code.
TABLE_CODES: Mapping[FindingKind, Code] = {
    FindingKind.MISSING_CARD: Code.MISSING_CARD,
    FindingKind.HAND_COUNT: Code.HAND_COUNT,
    FindingKind.WRONG_BOARD: Code.WRONG_BOARD,
    FindingKind.WRONG_POCKET: Code.INCORRECT_CARD_COUNT,
    FindingKind.DUPLICATED_CARD: Code.INCORRECT_CARD_COUNT,
    FindingKind.EXTRA_CARD: Code.INCORRECT_CARD_COUNT,
    FindingKind.FOREIGN_CARD: Code.CARDS_FROM_WRONG_BOARD,
    FindingKind.CARDS_MATCH_BOARD: Code.CARDS_FROM_WRONG_BOARD,
    FindingKind.ROTATED: Code.CARDS_FROM_WRONG_BOARD,
    FindingKind.HAND_IN_WRONG_POCKET: Code.CARDS_FROM_WRONG_BOARD,
}


@dataclass(frozen=True, slots=True)
class Finding:
    """One difference. ``seat`` is where it was seen; ``other_seat`` where the card or hand
    belongs; ``board`` a board number the finding names (the tag's, or the matching deal's);
    ``count`` a number the finding needs (cards in a pocket, seats of a rotation)."""

    kind: FindingKind
    seat: Seat | None = None
    card: Card | None = None
    other_seat: Seat | None = None
    board: int | None = None
    detail: str = ""
    count: int | None = None

    def __str__(self) -> str:
        return self.detail or self.kind.value


@dataclass(frozen=True, slots=True)
class Verdict:
    board: int
    ok: bool
    findings: tuple[Finding, ...] = ()

    @property
    def kinds(self) -> frozenset[FindingKind]:
        return frozenset(f.kind for f in self.findings)


@dataclass(frozen=True, slots=True)
class ForeignTag:
    """A tag seen with the board's cards that is not one of them: another deck's card
    (``card`` and ``deck``), or a tag no registry knows (``card`` None)."""

    uid: str
    seat: Seat | None = None
    card: Card | None = None
    deck: str | None = None

    def describe(self) -> str:
        what = f"{self.card} of deck {self.deck}" if self.card is not None else "unknown tag"
        where = f" in {self.seat.name}'s pocket" if self.seat is not None else ""
        return f"{what} (uid {self.uid}){where}"


def deal_key(hands: Mapping[Seat, Collection[Card]] | Deal) -> tuple[frozenset[Card], ...]:
    """A hashable form of four hands (N, E, S, W)."""
    if isinstance(hands, Deal):
        return hands.hands
    return tuple(frozenset(hands.get(s, ())) for s in Seat)


def _rotated_key(key: tuple[frozenset[Card], ...], steps: int) -> tuple[frozenset[Card], ...]:
    # hand of seat s moves to seat s+steps
    return tuple(key[(i - steps) % 4] for i in range(4))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


class DealIndex(Mapping[int, Deal]):
    """A set's deals by board, indexed by the hands too: ``match_board`` on an index is a
    dictionary look-up instead of a scan of the set (build it once per set)."""

    def __init__(self, deals: Mapping[int, Deal]) -> None:
        self._deals = dict(deals)
        self._by_key: dict[tuple[frozenset[Card], ...], list[int]] = {}
        for number in sorted(self._deals):
            self._by_key.setdefault(self._deals[number].hands, []).append(number)

    def __getitem__(self, board: int) -> Deal:
        return self._deals[board]

    def __iter__(self) -> Iterator[int]:
        return iter(self._deals)

    def __len__(self) -> int:
        return len(self._deals)

    def boards_with(self, hands: tuple[frozenset[Card], ...]) -> list[int]:
        return list(self._by_key.get(hands, ()))


def match_board(seen: Mapping[Seat, Collection[Card]] | Deal, deals: Mapping[int, Deal], *,
                exclude: int | None = None) -> tuple[int, int] | None:
    """The (board, steps) whose deal the seen hands are, as dealt (0) or rotated (1-3)."""
    key = deal_key(seen)
    if sum(len(h) for h in key) == 0:
        return None
    for steps in range(4):
        want = _rotated_key(key, -steps)  # undo the rotation
        if isinstance(deals, DealIndex):
            found = [n for n in deals.boards_with(want) if n != exclude]
            if found:
                return found[0], steps
            continue
        for number, deal in deals.items():
            if number != exclude and deal.hands == want:
                return number, steps
    return None


def check_board(expected: Deal, seen: Mapping[Seat, Collection[Card]], *, board: int,
                seen_board: int | None = None, foreign: Collection[str | ForeignTag] = (),
                deals: Mapping[int, Deal] | None = None) -> Verdict:
    """Compare the cards seen per seat with the expected deal of ``board``.

    ``seen`` may hold a card twice (a collection, not a set): that is a duplicated card.
    ``foreign``: tags seen with the board that are not its cards (uids or ``ForeignTag``).
    ``deals``: the whole set, to name the board the cards really are (a ``DealIndex`` makes
    that a look-up).
    """
    findings: list[Finding] = []
    if seen_board is not None and seen_board != board:
        findings.append(Finding(FindingKind.WRONG_BOARD, board=seen_board,
                                detail=f"board tag says {seen_board}, board {board} expected"))

    seen_lists: dict[Seat, list[Card]] = {s: list(seen.get(s, ())) for s in Seat}
    seen_sets = {s: frozenset(v) for s, v in seen_lists.items()}
    key = tuple(seen_sets[s] for s in Seat)

    if key != expected.hands:
        matched = match_board(seen_sets, deals, exclude=board) if deals else None
        rotation = next((k for k in (1, 2, 3) if _rotated_key(expected.hands, k) == key), None)
        if matched is not None and rotation is None:
            other, steps = matched
            turn = f", rotated {_plural(steps, 'seat')}" if steps else ""
            findings.append(Finding(FindingKind.CARDS_MATCH_BOARD, board=other, count=steps,
                                    detail=f"the cards are board {other}'s deal{turn}, "
                                           f"not board {board}'s"))
        elif rotation is not None:
            findings.append(Finding(
                FindingKind.ROTATED, count=rotation,
                detail=f"hands rotated {_plural(rotation, 'seat')} clockwise: N's hand is in "
                       f"{Seat.N.rotated(rotation).name}'s pocket"))
        else:
            near = _near_rotation(expected, seen_sets)
            if near is not None:
                # rotated, and something else besides (a card missing, moved, foreign): name
                # the rotation, then the rest against the rotated deal
                findings.append(Finding(
                    FindingKind.ROTATED, count=near,
                    detail=f"hands rotated {_plural(near, 'seat')} clockwise: N's hand is in "
                           f"{Seat.N.rotated(near).name}'s pocket (the findings that follow "
                           "are against the rotated deal)"))
                findings += _card_by_card(expected.rotated(near), seen_lists, seen_sets)
            else:
                findings += _card_by_card(expected, seen_lists, seen_sets)

    for tag in foreign:
        if isinstance(tag, ForeignTag):
            findings.append(Finding(FindingKind.FOREIGN_CARD, seat=tag.seat, card=tag.card,
                                    detail=f"foreign {tag.describe()}"))
        else:
            findings.append(Finding(FindingKind.FOREIGN_CARD, detail=f"foreign tag {tag}"))

    foreign_by_seat = Counter([t.seat for t in foreign if isinstance(t, ForeignTag)])
    for seat in Seat:
        n = len(seen_lists[seat]) + foreign_by_seat.get(seat, 0)
        if n != 13:
            findings.append(Finding(FindingKind.HAND_COUNT, seat=seat, count=n,
                                    detail=f"{seat.name}'s pocket holds {n} cards, not 13"))
    return Verdict(board, not findings, tuple(findings))


#: A rotation explains the seen hands when at least this many cards sit where it puts them
#: (of 52): a rotated deal with a few other faults, not a board mixed at random (which puts
#: about 13 cards in place for any rotation).
NEAR_ROTATION = 40


def _near_rotation(expected: Deal, seen: Mapping[Seat, frozenset[Card]]) -> int | None:
    def placed(steps: int) -> int:
        return sum(len(seen[s.rotated(steps)] & expected[s]) for s in Seat)

    as_dealt = placed(0)
    best = max((1, 2, 3), key=placed)
    score = placed(best)
    return best if score >= NEAR_ROTATION and score > as_dealt else None


def _card_by_card(expected: Deal, seen_lists: Mapping[Seat, list[Card]],
                  seen_sets: Mapping[Seat, frozenset[Card]]) -> list[Finding]:
    findings: list[Finding] = []
    whole_hand: dict[Seat, Seat] = {}
    for seat in Seat:
        if seen_sets[seat] and seen_sets[seat] != expected[seat]:
            owner = next((t for t in Seat
                          if t is not seat and expected[t] == seen_sets[seat]), None)
            if owner is not None:
                whole_hand[seat] = owner
                findings.append(Finding(FindingKind.HAND_IN_WRONG_POCKET, seat=seat,
                                        other_seat=owner,
                                        detail=f"{seat.name}'s pocket holds {owner.name}'s hand"))
    counts: Counter[Card] = Counter([c for seat in Seat for c in seen_lists[seat]])
    # of a card seen more than once, the one in its owner's pocket is the right one
    rightful: dict[Card, Seat] = {}
    for seat in Seat:
        for card in seen_lists[seat]:
            if counts[card] > 1 and card in expected[seat]:
                rightful.setdefault(card, seat)
    kept: set[Card] = set()
    for seat in Seat:
        for card in seen_lists[seat]:
            if counts[card] > 1:
                first = rightful.get(card, seat) == seat and card not in kept
                if not first:
                    findings.append(Finding(FindingKind.DUPLICATED_CARD, seat=seat, card=card,
                                            detail=f"{card} seen again, in {seat.name}'s pocket"))
                    continue
                kept.add(card)
            if seat in whole_hand or card in expected[seat]:
                continue
            owner = expected.holder(card)
            if owner is None:
                findings.append(Finding(FindingKind.EXTRA_CARD, seat=seat, card=card,
                                        detail=f"{card} in {seat.name}'s pocket is in no hand "
                                               "of the deal"))
            else:
                findings.append(Finding(FindingKind.WRONG_POCKET, seat=seat, card=card,
                                        other_seat=owner,
                                        detail=f"{card} in {seat.name}'s pocket belongs to "
                                               f"{owner.name}"))
    for seat in Seat:
        for card in sorted(expected[seat]):
            if counts[card] == 0:
                findings.append(Finding(FindingKind.MISSING_CARD, seat=seat, card=card,
                                        detail=f"{card} missing from {seat.name}'s pocket"))
    return findings


# --- across boards -------------------------------------------------------------------------

class DuplicateBoardDetector:
    """A board dealt twice in a set: the same 52-card deal seen under two board numbers.

    Feed it each board's hands as seen (or each deal of a file); a deal that is not a whole
    pack is ignored (its faults are the single board's verdict).
    """

    def __init__(self) -> None:
        self._by_key: dict[tuple[frozenset[Card], ...], int] = {}

    def observe(self, board: int, hands: Mapping[Seat, Collection[Card]] | Deal) -> int | None:
        """The earlier board number with the same deal, or None."""
        key = deal_key(hands)
        if any(len(h) != 13 for h in key) or len(frozenset().union(*key)) != 52:
            return None
        earlier = self._by_key.setdefault(key, board)
        return earlier if earlier != board else None


@dataclass(frozen=True, slots=True)
class Conflict:
    """Two tables saw different hands for one seat of one board (a fouled board, Law 87)."""

    board: int
    seat: Seat
    tables: tuple[str, str]
    only_first: frozenset[Card]    # in the first table's hand only
    only_second: frozenset[Card]   # in the second table's hand only

    def describe(self) -> str:
        a, b = self.tables
        fa = " ".join(str(c) for c in sorted(self.only_first)) or "-"
        fb = " ".join(str(c) for c in sorted(self.only_second)) or "-"
        return (f"board {self.board}, {self.seat.name}: table {a} had [{fa}], "
                f"table {b} had [{fb}] instead")


class FouledBoardDetector:
    """Across tables: each table's hands for each board; a new hand that differs from
    another table's hand for the same board and seat gives a ``Conflict`` per table."""

    def __init__(self) -> None:
        self._hands: dict[tuple[int, Seat], dict[str, frozenset[Card]]] = {}

    def observe(self, table: str, board: int, seat: Seat,
                cards: Collection[Card]) -> list[Conflict]:
        hand = frozenset(cards)
        tables = self._hands.setdefault((board, seat), {})
        conflicts = [Conflict(board, seat, (other, table), seen - hand, hand - seen)
                     for other, seen in tables.items() if other != table and seen != hand]
        tables[table] = hand  # a re-scan at the same table replaces its hand
        return conflicts

    def hands(self, board: int, seat: Seat) -> dict[str, frozenset[Card]]:
        return dict(self._hands.get((board, seat), {}))
