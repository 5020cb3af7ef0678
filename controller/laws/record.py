"""A board as played: what the formats (PBN, LIN) write and read, and what ``result`` reports."""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import Call, Card, Contract, Deal, Seat, Vulnerability
from .irregularities import Irregularity

__all__ = ["AuctionEntry", "PlayedTrick", "BoardRecord", "DealInfo"]


@dataclass(frozen=True, slots=True)
class AuctionEntry:
    """One call put down, standing or not.

    ``cancelled`` calls were made at the table but struck by a rectification (they are
    kept so the record shows what happened: PBN notes and the ``^I`` token).
    ``irregularity`` is the id of the irregularity the call raised, if any.
    """

    seat: Seat
    call: Call
    cancelled: bool = False
    irregularity: int | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class PlayedTrick:
    """A trick in playing order; ``winner`` is None while incomplete."""

    number: int
    leader: Seat
    cards: tuple[tuple[Seat, Card], ...]
    winner: Seat | None = None


@dataclass(frozen=True, slots=True)
class BoardRecord:
    board: int
    dealer: Seat
    vulnerability: Vulnerability
    deal: Deal | None = None
    auction: tuple[AuctionEntry, ...] = ()
    contract: Contract | None = None
    declarer: Seat | None = None
    tricks: tuple[PlayedTrick, ...] = ()
    tricks_played: int | None = None      # declarer's tricks as played
    tricks_result: int | None = None      # after Law 64 / 62D and rulings
    score_ns: int | None = None
    irregularities: tuple[Irregularity, ...] = ()
    table: str = ""
    tags: dict[str, str] = field(default_factory=dict)  # Event, Site, Date, North.. (free)

    @property
    def standing_calls(self) -> tuple[AuctionEntry, ...]:
        return tuple(e for e in self.auction if not e.cancelled)

    @property
    def deal_info(self) -> DealInfo:
        """The board as a deals file gives it: its markings and its hands."""
        return DealInfo(self.board, self.dealer, self.vulnerability, self.deal)


@dataclass(frozen=True, slots=True)
class DealInfo:
    """One board of a deals file: its markings (which override Law 2) and its hands."""

    board: int
    dealer: Seat
    vulnerability: Vulnerability
    deal: Deal | None = None
