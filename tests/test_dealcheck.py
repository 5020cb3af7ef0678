"""check_board, DuplicateBoardDetector, FouledBoardDetector: every fault named."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.laws.cards import FULL_DECK, Card, Deal, Seat
from controller.laws.dealcheck import (
    TABLE_CODES,
    DealIndex,
    DuplicateBoardDetector,
    Finding,
    FindingKind,
    ForeignTag,
    FouledBoardDetector,
    check_board,
    match_board,
)

K = FindingKind
DEAL = Deal.from_pbn("N:T6.JT64.943.J743 A873.K5.AJ652.Q5 J5.AQ73.QT87.A98 KQ942.982.K.KT62")
OTHER = Deal.from_pbn("N:J7532.J8.A764.63 T8.Q973.QJ9.KT84 A964.T642.85.AQ9 KQ.AK5.KT32.J752")


def c(text: str) -> Card:
    return Card.parse(text)


def as_seen(deal: Deal) -> dict[Seat, list[Card]]:
    return {s: sorted(deal[s]) for s in Seat}


def random_deal(rng: random.Random) -> Deal:
    cards = list(FULL_DECK)
    rng.shuffle(cards)
    return Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})


def only(findings: tuple[Finding, ...], kind: FindingKind) -> list[Finding]:
    return [f for f in findings if f.kind is kind]


def test_a_right_board_is_ok() -> None:
    v = check_board(DEAL, as_seen(DEAL), board=1)
    assert v.ok and v.findings == () and v.board == 1


def test_missing_card() -> None:
    seen = as_seen(DEAL)
    seen[Seat.E].remove(c("HK"))
    v = check_board(DEAL, seen, board=1)
    assert not v.ok
    (m,) = only(v.findings, K.MISSING_CARD)
    assert (m.seat, m.card) == (Seat.E, c("HK"))
    (h,) = only(v.findings, K.HAND_COUNT)
    assert (h.seat, h.count) == (Seat.E, 12)
    assert v.kinds == {K.MISSING_CARD, K.HAND_COUNT}


def test_card_in_the_wrong_pocket_says_which_and_from_where() -> None:
    seen = as_seen(DEAL)
    seen[Seat.N].remove(c("HJ"))
    seen[Seat.W].append(c("HJ"))
    v = check_board(DEAL, seen, board=1)
    (w,) = only(v.findings, K.WRONG_POCKET)
    assert (w.card, w.seat, w.other_seat) == (c("HJ"), Seat.W, Seat.N)
    assert {(f.seat, f.count) for f in only(v.findings, K.HAND_COUNT)} == {(Seat.N, 12),
                                                                           (Seat.W, 14)}
    assert not only(v.findings, K.MISSING_CARD)


def test_two_cards_exchanged_between_pockets() -> None:
    seen = as_seen(DEAL)
    seen[Seat.N].remove(c("HJ"))
    seen[Seat.S].remove(c("HA"))
    seen[Seat.N].append(c("HA"))
    seen[Seat.S].append(c("HJ"))
    v = check_board(DEAL, seen, board=1)
    assert {(f.card, f.seat, f.other_seat) for f in v.findings} == {
        (c("HA"), Seat.N, Seat.S), (c("HJ"), Seat.S, Seat.N)}
    assert v.kinds == {K.WRONG_POCKET}


def test_duplicated_card() -> None:
    seen = as_seen(DEAL)
    seen[Seat.S].append(c("ST"))   # N holds ST; a second ST turns up in S's pocket
    v = check_board(DEAL, seen, board=1)
    (d,) = only(v.findings, K.DUPLICATED_CARD)
    assert (d.card, d.seat) == (c("ST"), Seat.S)
    assert {(f.seat, f.count) for f in only(v.findings, K.HAND_COUNT)} == {(Seat.S, 14)}


def test_extra_card_when_the_deal_lacks_it() -> None:
    broken = Deal.from_hands({s: DEAL[s] - {c("CK")} if s is Seat.W else DEAL[s] for s in Seat})
    v = check_board(broken, as_seen(DEAL), board=1)
    (e,) = only(v.findings, K.EXTRA_CARD)
    assert (e.card, e.seat) == (c("CK"), Seat.W)


def test_card_from_another_deck() -> None:
    seen = as_seen(DEAL)
    seen[Seat.W].remove(c("S9"))
    foreign = [ForeignTag(uid="04AABB", seat=Seat.W, card=c("S9"), deck="7")]
    v = check_board(DEAL, seen, board=1, foreign=foreign)
    (f,) = only(v.findings, K.FOREIGN_CARD)
    assert (f.seat, f.card) == (Seat.W, c("S9")) and "04AABB" in f.detail and "7" in f.detail
    (m,) = only(v.findings, K.MISSING_CARD)
    assert m.card == c("S9")
    assert not only(v.findings, K.HAND_COUNT)   # the pocket does hold 13 pieces of card


def test_foreign_uids_as_plain_strings() -> None:
    v = check_board(DEAL, as_seen(DEAL), board=1, foreign=["DEADBEEF"])
    assert not v.ok and "DEADBEEF" in only(v.findings, K.FOREIGN_CARD)[0].detail


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_rotation_by_one_two_or_three_seats(steps: int) -> None:
    v = check_board(DEAL, as_seen(DEAL.rotated(steps)), board=1)
    assert v.kinds == {K.ROTATED}
    (r,) = v.findings
    assert r.count == steps
    assert f"in {Seat.N.rotated(steps).name}'s pocket" in r.detail


def test_two_hands_swapped_is_named_by_hand_not_by_card() -> None:
    seen = as_seen(DEAL)
    seen[Seat.N], seen[Seat.S] = seen[Seat.S], seen[Seat.N]
    v = check_board(DEAL, seen, board=1)
    assert v.kinds == {K.HAND_IN_WRONG_POCKET}
    assert {(f.seat, f.other_seat) for f in v.findings} == {(Seat.N, Seat.S), (Seat.S, Seat.N)}


def test_board_tag_that_does_not_match() -> None:
    v = check_board(DEAL, as_seen(DEAL), board=1, seen_board=2)
    (w,) = v.findings
    assert w.kind is K.WRONG_BOARD and w.board == 2


@pytest.mark.parametrize("steps", [0, 1])
def test_cards_that_are_another_boards_deal(steps: int) -> None:
    deals = {1: DEAL, 2: OTHER}
    v = check_board(DEAL, as_seen(OTHER.rotated(steps)), board=1, deals=deals)
    (m,) = v.findings
    assert m.kind is K.CARDS_MATCH_BOARD and m.board == 2 and m.count == steps
    assert match_board(as_seen(OTHER.rotated(steps)), deals) == (2, steps)


def test_without_the_set_another_boards_cards_are_described_card_by_card() -> None:
    v = check_board(DEAL, as_seen(OTHER), board=1)
    assert K.WRONG_POCKET in v.kinds and K.CARDS_MATCH_BOARD not in v.kinds


def test_hand_count_when_a_pocket_is_empty() -> None:
    seen = as_seen(DEAL)
    seen[Seat.S] = []
    v = check_board(DEAL, seen, board=1)
    assert {(f.seat, f.count) for f in only(v.findings, K.HAND_COUNT)} == {(Seat.S, 0)}
    assert {f.card for f in only(v.findings, K.MISSING_CARD)} == set(DEAL[Seat.S])


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.data())
def test_any_single_move_is_found_and_only_that(seed: int, data: st.DataObject) -> None:
    rng = random.Random(seed)
    deal = random_deal(rng)
    seen = as_seen(deal)
    src = data.draw(st.sampled_from(list(Seat)))
    dst = data.draw(st.sampled_from([s for s in Seat if s is not src]))
    card = data.draw(st.sampled_from(seen[src]))
    seen[src].remove(card)
    seen[dst].append(card)
    v = check_board(deal, seen, board=3)
    (w,) = only(v.findings, K.WRONG_POCKET)
    assert (w.card, w.seat, w.other_seat) == (card, dst, src)
    assert v.kinds == {K.WRONG_POCKET, K.HAND_COUNT}


def test_duplicate_board_detector() -> None:
    det = DuplicateBoardDetector()
    assert det.observe(1, DEAL) is None
    assert det.observe(2, OTHER) is None
    assert det.observe(1, DEAL) is None               # the same board again is no duplicate
    assert det.observe(5, as_seen(DEAL)) == 1         # board 5 was dealt as board 1
    assert det.observe(6, {Seat.N: []}) is None        # an incomplete deal is ignored


def test_fouled_board_detector_names_tables_and_cards() -> None:
    det = FouledBoardDetector()
    assert det.observe("1", 7, Seat.N, DEAL[Seat.N]) == []
    assert det.observe("2", 7, Seat.N, DEAL[Seat.N]) == []
    fouled = (DEAL[Seat.N] - {c("HJ")}) | {c("SK")}
    (a, b) = det.observe("3", 7, Seat.N, fouled)
    assert {a.tables, b.tables} == {("1", "3"), ("2", "3")}
    assert a.only_first == {c("HJ")} and a.only_second == {c("SK")}
    assert a.board == 7 and a.seat is Seat.N and "table 3 had [SK]" in a.describe()
    # a re-scan at table 3 with the right hand replaces its hand
    assert det.observe("3", 7, Seat.N, DEAL[Seat.N]) == []
    assert det.observe("4", 7, Seat.E, DEAL[Seat.E]) == []


@pytest.mark.parametrize("steps", [0, 1, 2, 3])
def test_deal_index_finds_what_the_scan_finds(steps: int) -> None:
    rng = random.Random(steps)
    deals = {b: random_deal(rng) for b in range(1, 40)}
    deals[40] = deals[7]   # a set with a board twice: the first is named
    index = DealIndex(deals)
    seen = as_seen(deals[7].rotated(steps))
    assert match_board(seen, index) == match_board(seen, deals) == (7, steps)
    assert match_board(seen, index, exclude=7) == (40, steps)
    assert match_board(as_seen(DEAL), index) is None
    v1 = check_board(deals[3], seen, board=3, deals=index)
    v2 = check_board(deals[3], seen, board=3, deals=deals)
    assert v1 == v2 and v1.findings[0].kind is K.CARDS_MATCH_BOARD
    assert len(index) == 40 and index[40] == deals[7]


def test_table_codes_cover_every_fault_a_hand_scan_can_show() -> None:
    from controller.laws.irregularities import Code
    scan_kinds = set(K) - {K.NO_DEAL, K.NO_BOARD_TAG, K.DUPLICATE_BOARD}
    assert set(TABLE_CODES) == scan_kinds
    assert TABLE_CODES[K.MISSING_CARD] is Code.MISSING_CARD
    assert TABLE_CODES[K.ROTATED] is Code.CARDS_FROM_WRONG_BOARD


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_a_rotation_with_a_card_missing_is_still_named_a_rotation(steps: int) -> None:
    seen = as_seen(DEAL.rotated(steps))
    into = Seat.N.rotated(steps)            # N's hand is in this pocket now
    card = seen[into].pop()
    v = check_board(DEAL, seen, board=1)
    rot = only(v.findings, K.ROTATED)
    assert len(rot) == 1 and rot[0].count == steps
    (m,) = only(v.findings, K.MISSING_CARD)
    assert (m.card, m.seat) == (card, into)
    assert not only(v.findings, K.WRONG_POCKET)


def test_a_board_mixed_at_random_is_no_rotation() -> None:
    for seed in range(20):
        v = check_board(DEAL, as_seen(random_deal(random.Random(seed))), board=1)
        assert K.ROTATED not in v.kinds and K.WRONG_POCKET in v.kinds
