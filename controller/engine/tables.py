"""What the engine keeps of each table it follows (``TableState``): the table's ``Table``,
its sources, the messages last built for it and the parts they were built from; and what
a board start carries of a table across boards (``Carried``, for a snapshot)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.engine.intake import CarriedSource, Source
from controller.engine.outgoing import Outgoing
from controller.evidence.tempo import TempoLog
from controller.indicators.display_text import DisplayKey, DisplayRenderer
from controller.laws.cards import Call, Card, Seat
from controller.laws.irregularities import Irregularity
from controller.laws.table import Board, Table

__all__ = ["TableState", "StateParts", "Carried", "no_tricks"]


def no_tricks() -> dict[str, int]:
    return {"NS": 0, "EW": 0}


class StateParts:
    """The parts of one board's ``state`` kept between events (``render.Payloads.state``),
    with what each was built from."""

    __slots__ = ("board", "number", "dealer", "vul", "calls", "auction", "contract",
                 "declarer", "contract_texts", "won", "tricks", "cards", "current", "sent",
                 "sent_split")

    def __init__(self, board: Board, dealer: str, vul: str) -> None:
        self.board = board
        # a board's number, dealer and vulnerability (their texts) are those it was made with
        self.number = board.number
        self.dealer = dealer
        self.vul = vul
        self.calls: tuple[tuple[Seat, Call], ...] | None = None
        self.auction: list[list[str]] = []
        self.contract: object = None  # the Contract the texts are of (compared by identity)
        self.declarer: Seat | None = None
        self.contract_texts: tuple[str | None, str | None, str | None] = (None, None, None)
        self.won: tuple[int, int] = (0, 0)
        self.tricks: dict[str, int] = no_tricks()
        self.cards: tuple[tuple[Seat, Card], ...] = ()
        self.current: list[dict[str, str]] = []
        #: the last ``state`` message of this board (``render.Payloads.state_message``,
        #: ``render.restated``) and, once an unchanged input needed it, its JSON cut around
        #: the value of ``last``: (everything before it, everything after it). Kept
        #: together, reset together: the cut belongs to that message's bytes alone.
        self.sent: Outgoing | None = None
        self.sent_split: tuple[bytes, bytes] | None = None


@dataclass
class TableState:
    """One table as the engine follows it: its ``Table``, its sources (``seqs``: the
    intake's), the input last applied (``last``), the messages last built for it and the
    parts they were built from (render.py), the director's evidence, and its share of
    the engine's counts and Law 87 observations (what a snapshot carries)."""

    table: Table
    seqs: dict[str, Source] = field(default_factory=dict)
    last: dict[str, Any] | None = None
    feed_seq: int = 0
    indicator: dict[str, Any] | None = None
    result: dict[str, Any] | None = None
    state: dict[str, Any] | None = None
    notes: tuple[str, ...] = ()
    alerts: dict[int, Irregularity] = field(default_factory=dict)
    #: while a card lifted from a play spot may still be a turn: the newest event's ``ts``
    #: and the monotonic time it arrived, so that ``Engine.settle`` reads the events'
    #: clock from the controller's, whatever the reader's clock is set to
    clock: tuple[float, float] | None = None
    #: what ``indicator`` was built from (``render.Payloads.indicator_key``): equal keys,
    #: equal indicators, so an unchanged key is neither rebuilt nor published again
    indicator_key: tuple[Any, ...] | None = None
    #: the display rows of the last indicator built, and the key they were rendered from
    display_key: DisplayKey | None = None
    display: dict[str, list[str]] | None = None
    #: renders the rows, keeping the parts of the last key (a new one when ``display`` is
    #: None: nothing kept)
    renderer: DisplayRenderer | None = None
    #: ``state``'s parts that change less often than the state (``render.Payloads.state``)
    state_parts: StateParts | None = None
    #: the auction's calls (``Auction.calls``, a tuple rebuilt on every change) and their
    #: texts for ``state``, so that a state after a card does not spell the auction again
    auction_calls: tuple[tuple[Seat, Call], ...] | None = None
    auction_texts: tuple[tuple[str, str], ...] = ()
    #: the texts of the auction's last four calls (the display's), and the texts above
    #: they were taken from
    last_calls_of: tuple[tuple[str, str], ...] | None = None
    last_calls: tuple[str, ...] = ()
    #: evidence for the director (``evidence`` topic): the board's tempo, the claim position
    tempo: TempoLog = field(default_factory=TempoLog)
    claim: dict[str, Any] | None = None
    evidence: dict[str, Any] | None = None
    #: the board's "director" and "claim" presses (1.14: ``evidence.presses``)
    presses: list[dict[str, Any]] = field(default_factory=list)
    #: this table's Law 87 observations (journal n, board, seat, hand), in order: what a
    #: snapshot restores into the engine-wide ``FouledBoardDetector``
    #: (controller/service/snapshot.py)
    observed: list[tuple[int, int, Seat, frozenset[Card]]] = field(default_factory=list)
    #: this table's share of ``Engine.stats`` (what a snapshot restores into them)
    counts: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Carried:
    """The values of one table that a board start carries across boards, as just after
    the input that started the board (what a snapshot stores: controller/service/
    snapshot.py). Everything else of the table is built again by applying that input to
    a table with no board: the Laws core is deterministic."""

    table: str
    #: the board the input started, and that input's ``last`` (``{"src", "seq"}``)
    board: int
    last: dict[str, Any] | None
    played: tuple[int, ...]
    #: the first irregularity id of the new board
    next_id: int
    #: the table's feed number before the board-starting input
    feed_seq: int
    result: dict[str, Any] | None
    sources: tuple[CarriedSource, ...]
    #: the table's Law 87 observations: (journal n, board, seat, hand)
    observed: tuple[tuple[int, int, Seat, frozenset[Card]], ...]
    #: the table's share of ``Engine.stats``, its board-starting input included
    counts: dict[str, int]
