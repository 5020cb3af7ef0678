"""Law 77 duplicate scores and Law 78 comparisons (laws.md sections 5 and 6)."""

from __future__ import annotations

import pytest
from endplay.types import Contract as EpContract
from endplay.types import Denom as EpDenom
from endplay.types import Penalty as EpPenalty
from endplay.types import Player as EpPlayer
from endplay.types import Vul as EpVul

from controller.laws.cards import (
    PASSED_OUT,
    Bid,
    Contract,
    Denomination,
    Doubling,
    Seat,
    Vulnerability,
)
from controller.laws.scoring import (
    IMP_TABLE,
    artificial_score,
    imps,
    matchpoints,
    matchpoints_ew,
    neuberg,
    score,
    score_ns,
)

# laws.md section 5, worked examples: (contract, vulnerable, tricks, declarer side's score)
WORKED = [
    ("1NT", False, 7, 90), ("3NT", False, 9, 400), ("3NT", True, 10, 630),
    ("2H", False, 9, 140), ("4S", True, 10, 620), ("2SX", False, 8, 470),
    ("1NTX", True, 8, 380), ("4HXX", True, 10, 1080), ("6D", True, 12, 1370),
    ("7NT", False, 13, 1520), ("3CX", False, 5, -800), ("4SX", True, 7, -800),
    ("3NTXX", False, 7, -600), ("4SX", False, 3, -1700), ("7SXX", True, 13, 2940),
]


@pytest.mark.parametrize(("text", "vul", "tricks", "expected"), WORKED)
def test_worked_examples(text: str, vul: bool, tricks: int, expected: int) -> None:
    assert score(Contract.parse(text), vul, tricks) == expected


_EP_DENOM = {Denomination.C: EpDenom.clubs, Denomination.D: EpDenom.diamonds,
             Denomination.H: EpDenom.hearts, Denomination.S: EpDenom.spades,
             Denomination.NT: EpDenom.nt}
_EP_PENALTY = {Doubling.NONE: EpPenalty.passed, Doubling.DOUBLED: EpPenalty.doubled,
               Doubling.REDOUBLED: EpPenalty.redoubled}


@pytest.mark.parametrize("denomination", list(Denomination))
@pytest.mark.parametrize("doubling", list(Doubling))
def test_agrees_with_endplay_everywhere(denomination: Denomination, doubling: Doubling) -> None:
    checked = 0
    for level in range(1, 8):
        contract = Contract(Bid(level, denomination), doubling)
        for vulnerable in (False, True):
            for tricks in range(14):
                ep = EpContract(level=level, denom=_EP_DENOM[denomination],
                                declarer=EpPlayer.north, penalty=_EP_PENALTY[doubling],
                                result=tricks - level - 6)
                expected = ep.score(EpVul.both if vulnerable else EpVul.none)
                assert score(contract, vulnerable, tricks) == expected, (contract, vulnerable,
                                                                         tricks)
                checked += 1
    assert checked == 7 * 2 * 14


def test_passed_out_scores_zero() -> None:
    assert score(PASSED_OUT, True, 0) == 0
    assert score_ns(PASSED_OUT, None, Vulnerability.ALL, None) == 0
    assert score_ns(None, None, Vulnerability.NONE, None) == 0


def test_score_ns_sign_and_vulnerability_follow_declarer() -> None:
    four_spades = Contract.parse("4S")
    assert score_ns(four_spades, Seat.N, Vulnerability.NS, 10) == 620
    assert score_ns(four_spades, Seat.S, Vulnerability.EW, 10) == 420
    assert score_ns(four_spades, Seat.E, Vulnerability.EW, 10) == -620
    assert score_ns(four_spades, Seat.W, Vulnerability.NS, 9) == 50
    # T11 of laws.md section 7: 4S by N, both vulnerable, 9 tricks
    assert score_ns(four_spades, Seat.N, Vulnerability.ALL, 9) == -100


def test_score_rejects_impossible_tricks() -> None:
    with pytest.raises(ValueError):
        score(Contract.parse("1C"), False, 14)
    with pytest.raises(ValueError):
        score_ns(Contract.parse("1C"), Seat.N, Vulnerability.NONE, None)


# laws.md section 6: each row (low, high, imps)
IMP_ROWS = [
    (0, 10, 0), (20, 40, 1), (50, 80, 2), (90, 120, 3), (130, 160, 4), (170, 210, 5),
    (220, 260, 6), (270, 310, 7), (320, 360, 8), (370, 420, 9), (430, 490, 10),
    (500, 590, 11), (600, 740, 12), (750, 890, 13), (900, 1090, 14), (1100, 1290, 15),
    (1300, 1490, 16), (1500, 1740, 17), (1750, 1990, 18), (2000, 2240, 19),
    (2250, 2490, 20), (2500, 2990, 21), (3000, 3490, 22), (3500, 3990, 23),
]


@pytest.mark.parametrize(("low", "high", "expected"), IMP_ROWS)
def test_imp_table_boundaries(low: int, high: int, expected: int) -> None:
    assert imps(low) == expected
    assert imps(high) == expected
    assert imps(-low) == -expected
    assert imps(-high) == -expected
    # scores are multiples of 10: the next one up is in the next row
    assert imps(high + 10) == expected + 1


def test_imp_table_top_and_example() -> None:
    assert imps(4000) == 24
    assert imps(7600) == 24
    assert imps(620 - (-100)) == 12
    assert len(IMP_TABLE) == 25


def test_matchpoints_example() -> None:
    scores = [620, 620, 170, -100, 650]
    assert matchpoints(scores) == [5, 5, 2, 0, 8]
    assert matchpoints_ew(scores) == [3, 3, 6, 8, 0]
    assert matchpoints([]) == []
    assert matchpoints([420]) == [0]


def test_neuberg() -> None:
    # a single result scaled to 5: it ties itself, so it gets the average 4 of 8
    assert neuberg(0, 1, 5) == 4
    # a full field is unchanged
    assert neuberg(6, 5, 5) == 6
    # top of 3 results (4) scaled to 5 results
    assert neuberg(4, 3, 5) == pytest.approx((4 + 1) * 5 / 3 - 1)


def test_artificial_adjusted_scores() -> None:
    assert artificial_score("plus", 8) == pytest.approx(4.8)
    assert artificial_score("average", 8) == 4
    assert artificial_score("minus", 10) == 4
    with pytest.raises(ValueError):
        artificial_score("top", 8)


def test_record_score_ns_is_zero_passed_out_and_none_while_unknown() -> None:
    from controller.laws.scoring import record_score_ns
    vul = Vulnerability.NONE
    assert record_score_ns(Contract.parse("Pass"), None, vul, None) == 0
    assert record_score_ns(Contract.parse("4S"), Seat.E, vul, None) is None
    assert record_score_ns(None, None, vul, None) is None
    assert record_score_ns(Contract.parse("4S"), Seat.E, vul, 10) == -420
