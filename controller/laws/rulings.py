"""Director rulings as values (the contract's ``ruling`` messages)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from .cards import Call, Card, Seat, Suit

__all__ = ["RulingKind", "Ruling"]


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
