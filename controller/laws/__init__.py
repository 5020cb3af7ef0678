"""The Laws core: pure, standard library only, no I/O, no asyncio."""

from .cards import (
    FULL_DECK,
    Bid,
    Call,
    Card,
    Contract,
    Deal,
    Denomination,
    Doubling,
    ParseError,
    Rank,
    Rules,
    Seat,
    Side,
    Suit,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from .irregularities import Code, Irregularity, IrregularityLog, Status
from .rulings import Ruling, RulingKind

__all__ = [
    "FULL_DECK", "Bid", "Call", "Card", "Contract", "Deal", "Denomination", "Doubling",
    "ParseError", "Rank", "Rules", "Seat", "Side", "Suit", "Vulnerability", "board_dealer",
    "board_vulnerability", "Code", "Irregularity", "IrregularityLog", "Status", "Ruling",
    "RulingKind",
]
