"""The Laws core: pure, standard library only, no I/O, no asyncio. A library to embed.

Everything public is exported here, flat: ``from controller.laws import Auction, Seat``.

* values: ``Seat``, ``Suit``, ``Rank``, ``Card``, ``Call``, ``Bid``, ``Contract``, ``Deal``,
  ``Vulnerability``, ``Rules``; the text vocabulary ``SEAT_NAMES``, ``CARD_NAMES``,
  ``CALL_NAMES`` (what readers and registries spell);
* the auction and the play: ``Auction``, ``Play``, ``trick_winner``, ``auction_outcome``,
  ``build_tricks``; a whole table fed sensor events: ``Table`` (its ``Board``);
* irregularities and rulings as values: ``Irregularity`` (``Code``, ``Status``),
  ``IrregularityLog``, ``Ruling``; ``check_record`` replays a played board (a PBN or LIN
  record read by ``controller.formats``) and returns its irregularities and ``Problem``
  values, ``check_board`` compares dealt hands with a deal;
* scoring: ``score`` (Law 77), ``score_ns``, ``imps``, ``matchpoints``, ``neuberg``.

One style for queries (the rule every class of the core follows): a fact of the current
state that takes no argument is a **property** (``auction.contract``,
``auction.penalty_cards``, ``play.declarer_tricks``, ``play.tricks_won``,
``board.declarer_tricks``, ``table.record``, ``deal.is_complete``); a **method** takes
arguments (``play.legal_cards(seat)``, ``deal.holder(card)``), changes state (``call``,
``put``, ``rule``, ``apply``, ``undo``), or converts to another form (``deal.to_pbn()``,
``describe()``). Properties never change state.

Embedding in ten lines (docs/laws-core.md)::

    from controller.laws import Auction, Call, IrregularityLog, Seat

    auction = Auction(Seat.N, IrregularityLog())
    for seat, text in [(Seat.N, "1NT"), (Seat.E, "1S"), (Seat.E, "2S")]:
        auction.call(seat, Call.parse(text))
    print([i.code for i in auction.log])        # the insufficient bid, as a value
"""

from .auction import PASS_ALL, PASS_NEXT, Auction, AuctionOutcome, auction_outcome
from .cards import (
    ALL_CALLS,
    CALL_NAMES,
    CARD_NAMES,
    DOUBLE,
    FULL_DECK,
    PASS,
    PASSED_OUT,
    REDOUBLE,
    SEAT_NAMES,
    Bid,
    Call,
    CallKind,
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
from .check import Problem, ProblemKind, RecordCheck, check_record
from .dealcheck import (
    Conflict,
    DealIndex,
    DuplicateBoardDetector,
    Finding,
    FindingKind,
    ForeignTag,
    FouledBoardDetector,
    Verdict,
    check_board,
    deal_key,
    match_board,
)
from .events import MARKER_NAMES, MARKERS, Action, Button, ButtonEvent, TagEvent, Zone
from .irregularities import Code, Irregularity, IrregularityLog, Status
from .play import Play, PlayError, build_tricks, trick_winner
from .record import AuctionEntry, BoardRecord, DealInfo, PlayedTrick
from .rulings import Ruling, RulingKind
from .scoring import (
    artificial_score,
    imps,
    matchpoints,
    matchpoints_ew,
    neuberg,
    record_score_ns,
    score,
    score_ns,
)
from .table import Board, FeedItem, Input, Phase, Table, Update

__all__ = [
    # values
    "Seat", "Side", "Suit", "Rank", "Card", "Denomination", "Bid", "Call", "CallKind",
    "Contract", "Doubling", "Deal", "Vulnerability", "Rules", "ParseError",
    "PASS", "DOUBLE", "REDOUBLE", "PASSED_OUT", "FULL_DECK", "ALL_CALLS",
    "SEAT_NAMES", "CARD_NAMES", "CALL_NAMES", "MARKER_NAMES", "MARKERS",
    "board_dealer", "board_vulnerability",
    # the auction, the play, the table
    "Auction", "AuctionOutcome", "auction_outcome", "PASS_NEXT", "PASS_ALL",
    "Play", "PlayError", "trick_winner", "build_tricks",
    "Table", "Board", "Phase", "Update", "FeedItem", "Input",
    "TagEvent", "ButtonEvent", "Zone", "Action", "Button",
    # records, irregularities, rulings, checks
    "BoardRecord", "AuctionEntry", "PlayedTrick", "DealInfo",
    "Code", "Irregularity", "IrregularityLog", "Status", "Ruling", "RulingKind",
    "check_record", "RecordCheck", "Problem", "ProblemKind",
    "check_board", "match_board", "Verdict", "Finding", "FindingKind", "ForeignTag",
    "DealIndex", "deal_key", "DuplicateBoardDetector", "FouledBoardDetector", "Conflict",
    # scoring
    "score", "score_ns", "record_score_ns", "imps", "matchpoints", "matchpoints_ew", "neuberg",
    "artificial_score",
]
