"""Director rulings as values (the contract's ``ruling`` messages)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .cards import Call, Card, Seat, Suit
from .irregularities import Code

__all__ = ["RulingKind", "Ruling", "RULING_OPTIONS", "option_problem"]


class RulingKind(enum.StrEnum):
    # the contract's four
    ACCEPT = "accept"    # the irregular call, lead or play stands (non-offenders accept it)
    REJECT = "reject"    # it is cancelled and the Laws' rectification applies
    UNDO = "undo"        # a misread: the last sensor event is struck from the record
    ADJUST = "adjust"    # with ``tricks``: declarer's tricks as the director rules them
    # project additions (documented in docs/wire-contract.md)
    COMPARABLE = "comparable"   # 2017 Law 23: the replacement call is comparable
    NOT_COMPARABLE = "not_comparable"
    LEAD = "lead"        # 45E / 47: the card was a lead, not a fifth card
    OPTION = "option"    # declarer's choice after a penalty card or premature play
    BOARD = "board"      # the director sets the board number (``board``)
    CLAIM = "claim"      # a claim agreed: ``tricks`` for declarer out of the remaining ones
    CLEAR = "clear"      # the director closes an alert with no further action (status resolved)
    # 1.2: Law 25A, an unintended call replaced by the intended one until partner calls
    # (``seat`` and ``call``, or ``alert``: the intended call already put down)
    UNINTENDED = "unintended"


@dataclass(frozen=True, slots=True)
class Ruling:
    kind: RulingKind
    alert: int | None = None
    tricks: int | None = None
    seat: Seat | None = None
    card: Card | None = None
    call: Call | None = None
    suit: Suit | None = None
    option: str | None = None   # e.g. "highest", "lowest", "must_lead", "must_not_lead"
    board: int | None = None


#: declarer's options after a penalty card with Law 57's (or 50D2's) options
_PENALTY_OPTIONS = frozenset({"highest", "lowest", "must_lead", "must_not_lead"})

#: 1.6: the ``option`` values the engine applies, per alert code and ruling kind. A ruling
#: carrying any other option (another ruling's, or one nobody defined) is refused, unapplied.
RULING_OPTIONS: dict[Code, dict[RulingKind, frozenset[str]]] = {
    Code.OPENING_LEAD_OUT_OF_TURN: {
        RulingKind.ACCEPT: frozenset({"54A", "swap"}),
        RulingKind.OPTION: frozenset({"54A", "swap"}) | _PENALTY_OPTIONS},
    Code.CHANGE_OF_CALL: {RulingKind.ACCEPT: frozenset({"unintended"})},
    Code.PREMATURE_PLAY: {RulingKind.OPTION: _PENALTY_OPTIONS},
    Code.PENALTY_CARD_NOT_PLAYED: {RulingKind.OPTION: _PENALTY_OPTIONS},
    # 2017 53B: a defender's lead out of turn, the proper lead followed: withdrawn or not
    Code.LEAD_OUT_OF_TURN: {RulingKind.OPTION: frozenset({"penalty_card", "withdraw"})
                            | _PENALTY_OPTIONS},
    Code.REVOKE: {RulingKind.OPTION: _PENALTY_OPTIONS},
    Code.CARD_EXPOSED_DURING_AUCTION: {RulingKind.OPTION: _PENALTY_OPTIONS},
    # 45E: the director's choice between a penalty card (45E1) and a lead (then 53/56);
    # once the proper lead followed, 2017 53B / 2007 53C: the card led in error withdrawn
    Code.FIFTH_CARD: {RulingKind.OPTION: frozenset({"penalty_card", "lead", "withdraw"})
                      | _PENALTY_OPTIONS},
    # an inadmissible double or redouble out of rotation: Law 36 or Law 32 first
    Code.INADMISSIBLE_DOUBLE: {RulingKind.OPTION: frozenset({"36", "32"})},
    Code.INADMISSIBLE_REDOUBLE: {RulingKind.OPTION: frozenset({"36", "32"})},
}


def option_problem(ruling: Ruling, code: Code | None) -> str | None:
    """Why the engine cannot apply ``ruling``'s option on an alert of ``code`` (None: no
    alert named), or None when the option (or its absence) is one it applies."""
    option = ruling.option
    if option is None:
        if ruling.kind is RulingKind.OPTION:
            return "an option ruling needs an option"
        return None
    if code is None:
        return f"option {option!r} names no alert: an option answers one alert"
    known = RULING_OPTIONS.get(code, {}).get(ruling.kind, frozenset())
    if option in known:
        return None
    if not known:
        return f"ruling {ruling.kind} takes no option on {code} (option {option!r})"
    return (f"option {option!r} does not apply to ruling {ruling.kind} on {code} "
            f"(it takes: {', '.join(sorted(known))})")
