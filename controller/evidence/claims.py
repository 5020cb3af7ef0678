"""Claims and concessions checked double dummy (Laws 68-71): evidence, never a ruling.

``check_claim(position)`` takes the claim position the engine publishes on the ``evidence``
topic (controller/evidence/payload.py: the four remaining hands, the player on lead, the strain,
declarer, the tricks declarer gets by the claim) and computes with endplay's DDS (the
optional ``dd`` extra) how many of the remaining tricks declarer takes with best play by
both sides, which in double dummy is also what he makes against the defenders' best
defence. The verdict:

- ``exact``: the claim gives declarer what double dummy says;
- ``exceeds``: the claim gives declarer more tricks than he can make against best defence
  (a claim one or more tricks too many, or a defender conceding tricks he need not lose);
- ``concedes``: declarer gets fewer than double dummy (declarer conceding tricks the defence
  could not take from him with best play, or a defender's claim too many).

``line``: a double-dummy line of play from the position (each side playing a card that
keeps its best result). Double dummy sees all four hands; the Laws judge a claim on
"normal" play (Law 70), careless or inferior for the class of player included, so the
director still rules: the check says what was makeable, and how.

Without endplay the check says so (``available`` False) and nothing else changes. The
solve runs outside the engine (the director's console, in a worker thread, and
``bridge-table export``): docs/claims.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.laws.cards import Card, Deal, ParseError, Seat, Suit

__all__ = ["ClaimCheck", "check_claim", "dds_available"]

_STRAINS = ("S", "H", "D", "C", "NT")   # endplay's Denom order


@dataclass(frozen=True)
class ClaimCheck:
    """The double-dummy check of one claim or concession.

    ``verdict``: ``exact``, ``exceeds``, ``concedes``; or why there is none:
    ``unavailable`` (no endplay), ``no_hands`` (the hands are not known), ``invalid`` (a
    position that is not one).
    """

    verdict: str
    reason: str = ""
    claimed: int | None = None
    remaining: int | None = None
    makeable: int | None = None
    declarer: Seat | None = None
    line: tuple[tuple[Seat, Card], ...] = ()

    @property
    def available(self) -> bool:
        return self.verdict != "unavailable"

    @property
    def checked(self) -> bool:
        return self.makeable is not None

    @property
    def difference(self) -> int | None:
        """Tricks claimed minus tricks makeable double dummy (positive: too many)."""
        if self.makeable is None or self.claimed is None:
            return None
        return self.claimed - self.makeable

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"verdict": self.verdict, "claimed": self.claimed,
                               "remaining": self.remaining, "makeable": self.makeable}
        if self.reason:
            out["reason"] = self.reason
        if self.line:
            out["line"] = [[s.name, str(c)] for s, c in self.line]
        return out

    def describe(self) -> str:
        """One line for the records and the console."""
        if not self.checked:
            return f"claim not checked: {self.reason}"
        who = self.declarer.name if self.declarer is not None else "declarer"
        head = (f"claim: {who} {self.claimed} of {self.remaining}; double dummy "
                f"{self.makeable}")
        diff = self.difference or 0
        if diff > 0:
            head += f": {diff} more than makeable against best defence"
        elif diff < 0:
            head += f": {-diff} fewer than declarer makes with best play"
        else:
            head += ": exact"
        if self.line:
            head += "; line " + " ".join(f"{s.name}:{c}" for s, c in self.line)
        return head


def dds_available() -> bool:
    """endplay's DDS can be imported (the ``dd`` extra)."""
    try:
        import endplay.dds  # noqa: F401
    except ImportError:
        return False
    return True


def _invalid(reason: str) -> ClaimCheck:
    return ClaimCheck("invalid", reason=reason)


def check_claim(position: Mapping[str, Any] | None, *, line: bool = True) -> ClaimCheck:
    """The double-dummy check of a claim position (controller/evidence/payload.py's ``claim``).

    ``line``: also the double-dummy line of play (one solve per card left). Bad input is a
    ``ClaimCheck`` saying what is wrong, never an exception.
    """
    if not isinstance(position, Mapping):
        return _invalid("no claim position")
    try:
        claimed = position["tricks"]
        remaining = position["remaining"]
        declarer = Seat.parse(str(position["declarer"]))
        leader = Seat.parse(str(position["leader"]))
        strain = str(position["strain"]).upper()
        hands_text = position.get("hands")
    except (KeyError, ParseError) as exc:
        return _invalid(f"claim position without a usable {exc}")
    if not isinstance(claimed, int) or not isinstance(remaining, int) \
            or not 0 <= claimed <= remaining <= 13 or strain not in _STRAINS:
        return _invalid("claim position with bad tricks, remaining or strain")
    base = {"claimed": claimed, "remaining": remaining, "declarer": declarer}
    if not hands_text:
        return ClaimCheck("no_hands", reason="the hands are not known (not scanned, no deals "
                          "file)", **base)  # type: ignore[arg-type]
    try:
        deal = Deal.from_pbn(str(hands_text))
    except ParseError as exc:
        return _invalid(f"claim position with bad hands: {exc}")
    if any(len(deal[s]) != remaining for s in Seat) or \
            len(frozenset().union(*deal.hands)) != 4 * remaining:
        return _invalid(f"claim position's hands are not four hands of {remaining} cards")
    try:
        from endplay.dds import solve_board
        from endplay.dds.solve import SolveMode
        from endplay.types import Deal as DdsDeal
        from endplay.types import Denom, Player
    except ImportError:
        return ClaimCheck("unavailable", reason="endplay is not installed (pip install "
                          "'bridge-table[dd]')", **base)  # type: ignore[arg-type]
    if remaining == 0:
        return ClaimCheck("exact" if claimed == 0 else "exceeds", makeable=0,
                          **base)  # type: ignore[arg-type]
    dd = DdsDeal(deal.to_pbn())
    dd.first = Player(int(leader))
    dd.trump = Denom(_STRAINS.index(strain))

    def best(d: Any) -> tuple[Any, int]:
        # OptimalOne: one card keeping the side on play's best result, and that result
        card, tricks = next(iter(solve_board(d, SolveMode.OptimalOne)))
        return card, int(tricks)

    try:
        card, tricks = best(dd)
    except Exception as exc:  # endplay's DDSError: a position DDS refuses, reported
        return _invalid(f"DDS refused the position: {exc}")
    ours = not leader.is_opponent_of(declarer)
    makeable = tricks if ours else remaining - tricks
    played: list[tuple[Seat, Card]] = []
    if line:
        for _ in range(4 * remaining):
            seat = Seat(int(dd.curplayer))
            played.append((seat, Card(_SUITS[int(card.suit)], _rank(card.rank.abbr))))
            dd.play(card)
            if len(played) == 4 * remaining:
                break
            card, _ = best(dd)
    diff = claimed - makeable
    verdict = "exact" if diff == 0 else "exceeds" if diff > 0 else "concedes"
    return ClaimCheck(verdict, makeable=makeable, line=tuple(played),
                      **base)  # type: ignore[arg-type]


_SUITS = (Suit.S, Suit.H, Suit.D, Suit.C)


def _rank(char: str) -> Any:
    from controller.laws.cards import Rank
    return Rank.parse(char)
