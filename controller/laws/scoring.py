"""Duplicate scoring (Law 77) and comparing results across tables (Law 78).

Pure functions on the core's values. The score table is the same in 2007 and 2017.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from .cards import Contract, Denomination, Doubling, Seat, Vulnerability

__all__ = [
    "score", "score_ns", "record_score_ns", "imps", "IMP_TABLE", "matchpoints",
    "matchpoints_ew", "neuberg",
    "AVERAGE_PLUS", "AVERAGE", "AVERAGE_MINUS", "artificial_score",
]


def _odd_trick_points(denomination: Denomination, count: int) -> int:
    """Undoubled trick points for ``count`` odd tricks (NT: 40 for the first, 30 after)."""
    if count <= 0:
        return 0
    if denomination is Denomination.NT:
        return 40 + 30 * (count - 1)
    per = 20 if denomination in (Denomination.C, Denomination.D) else 30
    return per * count


def _undertrick_penalty(down: int, doubling: Doubling, vulnerable: bool) -> int:
    if doubling is Doubling.NONE:
        return down * (100 if vulnerable else 50)
    if vulnerable:
        doubled = 200 + 300 * (down - 1)
    else:
        # 100 for the first, 200 each for the 2nd and 3rd, 300 each from the 4th on
        doubled = 100 + 200 * min(down - 1, 2) + 300 * max(down - 3, 0)
    return doubled * (2 if doubling is Doubling.REDOUBLED else 1)


def score(contract: Contract, vulnerable: bool, tricks: int) -> int:
    """Law 77: the declaring side's score for ``tricks`` taken (0..13); 0 for a passed-out board.

    ``vulnerable`` is the declaring side's vulnerability.
    """
    if contract.bid is None:
        return 0
    if not 0 <= tricks <= 13:
        raise ValueError(f"tricks must be 0..13, not {tricks}")
    level, denom, dbl = contract.bid.level, contract.bid.denomination, contract.doubling
    if not 1 <= level <= 7:
        raise ValueError(f"not a contract level: {level}")
    needed = level + 6
    if tricks < needed:
        return -_undertrick_penalty(needed - tricks, dbl, vulnerable)
    multiplier = 1 << int(dbl)          # 1, 2, 4
    trick_points = _odd_trick_points(denom, level) * multiplier
    total = trick_points
    total += (500 if vulnerable else 300) if trick_points >= 100 else 50
    if level == 6:
        total += 750 if vulnerable else 500
    elif level == 7:
        total += 1500 if vulnerable else 1000
    if dbl is Doubling.DOUBLED:
        total += 50
    elif dbl is Doubling.REDOUBLED:
        total += 100
    over = tricks - needed
    if dbl is Doubling.NONE:
        total += over * (20 if denom in (Denomination.C, Denomination.D) else 30)
    else:
        total += over * (100 if vulnerable else 50) * multiplier
    return total


def score_ns(
    contract: Contract | None, declarer: Seat | None, vul: Vulnerability, tricks: int | None
) -> int:
    """The board's score from North-South's side (the contract's ``score_ns``).

    A passed-out board (or no contract, no declarer) scores 0 to both sides.
    """
    if contract is None or contract.bid is None or declarer is None:
        return 0
    if tricks is None:
        raise ValueError("a played contract needs declarer's tricks to be scored")
    result = score(contract, vul.is_vulnerable(declarer), tricks)
    return result if declarer in (Seat.N, Seat.S) else -result


#: Law 78B: (lowest difference, IMPs) in rising order; a difference scores the IMPs of the
#: last row whose bound it reaches.
IMP_TABLE: Final[tuple[tuple[int, int], ...]] = (
    (0, 0), (20, 1), (50, 2), (90, 3), (130, 4), (170, 5), (220, 6), (270, 7), (320, 8),
    (370, 9), (430, 10), (500, 11), (600, 12), (750, 13), (900, 14), (1100, 15), (1300, 16),
    (1500, 17), (1750, 18), (2000, 19), (2250, 20), (2500, 21), (3000, 22), (3500, 23),
    (4000, 24),
)


def imps(difference: int) -> int:
    """Law 78B: IMPs for a score difference, with its sign (+720 -> 12, -720 -> -12)."""
    size = abs(difference)
    result = 0
    for bound, value in IMP_TABLE:
        if size >= bound:
            result = value
        else:
            break
    return result if difference >= 0 else -result


def matchpoints(scores_ns: Sequence[int]) -> list[float]:
    """Law 78A: NS matchpoints on one board, 2 for each score beaten and 1 for each tie.

    Top is ``2 * (len(scores_ns) - 1)``; EW's are top minus NS's (``matchpoints_ew``).
    """
    # A score ties with itself once: the "- 1" takes that self-comparison back out.
    return [
        float(sum(2 if s > other else 1 if s == other else 0 for other in scores_ns) - 1)
        for s in scores_ns
    ]


def matchpoints_ew(scores_ns: Sequence[int]) -> list[float]:
    top = 2 * (len(scores_ns) - 1)
    return [top - mp for mp in matchpoints(scores_ns)]


def neuberg(mp: float, n_results: int, n_max: int) -> float:
    """Neuberg's formula, on the 2-per-beaten scale: a score of ``mp`` on a board played
    ``n_results`` times, scaled to a board played ``n_max`` times: (MP+1)*N/n - 1.
    """
    if n_results < 1 or n_max < 1:
        raise ValueError("Neuberg needs at least one result on both sides")
    # The "+1" counts the score's tie with itself (1 on this scale), scales that to the
    # larger field, and the "-1" takes the self-tie back out.
    return (mp + 1) * n_max / n_results - 1


AVERAGE_PLUS: Final = 60
AVERAGE: Final = 50
AVERAGE_MINUS: Final = 40
_ARTIFICIAL: Final[dict[str, int]] = {"plus": AVERAGE_PLUS, "average": AVERAGE,
                                       "minus": AVERAGE_MINUS}


def artificial_score(kind: str, top: float) -> float:
    """Law 12C: an artificial adjusted score as matchpoints out of ``top``.

    ``kind`` is "plus" (average-plus, 60%), "average" (50%) or "minus" (average-minus, 40%).
    """
    try:
        percent = _ARTIFICIAL[kind]
    except KeyError:
        raise ValueError(f"not an artificial adjusted score: {kind!r}") from None
    return top * percent / 100


def record_score_ns(contract: Contract | None, declarer: Seat | None, vul: Vulnerability,
                    tricks: int | None) -> int | None:
    """A record's NS score: 0 when passed out, None while the result is unknown."""
    if contract is not None and contract.passed_out:
        return 0
    if contract is not None and declarer is not None and tricks is not None:
        return score_ns(contract, declarer, vul, tricks)
    return None
