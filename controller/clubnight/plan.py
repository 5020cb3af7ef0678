"""What the simulated players play: the boards of the night (a deals file's, or random legal
deals, seeded) and, for each table and board, the sensor events of the players' hands.

The players are one function (:data:`Players`): given the table, the board's deal and a
random source, it returns what was played (a ``BoardRecord``) and the events a table's
readers see, each with a ``ts`` in the players' own seconds (the pace: ``--speed`` divides
the gaps). :func:`sim_players` is today's simulated play (random legal auctions and play,
``controller.boards.generate``; with probability ``revoke_rate`` a board with a revoke,
Law 64); :func:`humanized` puts the player model of firmware_bridge/sim/players.py on it
(cards turned on their spots, late slides that lay a card on the one before, hesitations).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from controller.boards.generate import (
    contract_of,
    random_auction,
    random_deal,
    random_play,
    random_play_with_revoke,
)
from controller.formats.events import record_events
from controller.laws.cards import Deal, Seat, board_dealer, board_vulnerability
from controller.laws.record import AuctionEntry, BoardRecord, DealInfo, PlayedTrick
from controller.session import Session
from firmware_bridge.sim.players import PlayerHabits, humanize

__all__ = ["Players", "TablePlay", "boards_of", "random_deals", "deals_pbn", "sim_players",
           "session_with_deals", "table_rounds", "SECONDS_PER_EVENT", "humanized"]

#: a player's seconds between two things laid on the table (a call, a card), at speed 1
SECONDS_PER_EVENT = 2.0


@dataclass(frozen=True)
class TablePlay:
    """One board at one table: what was played, and the events the readers see (the wire
    contract's tag events, ``ts`` in the players' seconds)."""

    record: BoardRecord
    events: list[dict[str, Any]]


#: the players: (table, board's deal, random source, a revoke wanted) -> what they play
Players = Callable[[str, DealInfo, random.Random, bool], TablePlay]


def sim_players(table: str, deal: DealInfo, rng: random.Random, revoke: bool) -> TablePlay:
    """Random legal bidding and play on the board's deal (one revoke when ``revoke`` and a
    player can revoke), read card by card on the play and call spots; the hands are not
    read (the deals file gives them)."""
    assert deal.deal is not None
    calls = random_auction(rng, deal.dealer)
    contract, declarer = contract_of(calls)
    tricks: list[PlayedTrick] = []
    won: int | None = None
    if declarer is not None:
        with_revoke = random_play_with_revoke(rng, deal.deal, contract, declarer,
                                              rng.randint(1, 11)) if revoke else None
        tricks = with_revoke[0] if with_revoke is not None else \
            random_play(rng, deal.deal, contract, declarer)
        won = sum(1 for t in tricks if t.winner is not None and t.winner.side is declarer.side)
    record = BoardRecord(
        board=deal.board, dealer=deal.dealer, vulnerability=deal.vulnerability, deal=deal.deal,
        auction=tuple(AuctionEntry(s, c) for s, c in calls), contract=contract,
        declarer=declarer, tricks=tuple(tricks), tricks_played=won, tricks_result=won)
    events = record_events(record, sensing="spot", scans=False, deck=str(deal.board),
                           src=f"table-{table}", ts_start=0.0, ts_step=SECONDS_PER_EVENT)
    return TablePlay(record, [_bare(e) for e in events])


def humanized(players: Players, habits: PlayerHabits) -> Players:
    """``players`` with the habits of ``habits``: the same calls and cards in the same
    order, as people handle them (``humanize``), its seed drawn from the board's random
    source so that the same night plays the same way again."""

    def play(table: str, deal: DealInfo, rng: random.Random, revoke: bool) -> TablePlay:
        done = players(table, deal, rng, revoke)
        seeded = replace(habits, seed=rng.randrange(2**31))
        return TablePlay(done.record, humanize(done.events, seeded))

    return play


def _bare(event: dict[str, Any]) -> dict[str, Any]:
    """What a reader can say of an event: no version, source, sequence (the bridge's own)."""
    return {k: v for k, v in event.items() if k not in ("v", "src", "seq")}


def boards_of(session: Session) -> list[int]:
    return sorted({b for r in session.movement.rounds for tr in r.tables.values()
                   for b in tr.boards})


def table_rounds(session: Session) -> list[tuple[int, dict[str, tuple[int, ...]]]]:
    """Round by round: (round number, table -> the boards it plays in that round)."""
    return [(r.number, {t: tr.boards for t, tr in r.tables.items() if tr.boards})
            for r in session.movement.rounds]


def random_deals(boards: list[int], rng: random.Random) -> dict[int, DealInfo]:
    return {b: DealInfo(b, board_dealer(b), board_vulnerability(b), random_deal(rng))
            for b in boards}


def deals_pbn(deals: Mapping[int, DealInfo], comment: str) -> str:
    """A PBN deals file (Board, Dealer, Vulnerable, Deal) the controller, console, relay and
    the records read."""
    lines = ["% PBN 2.1", f"% {comment}", ""]
    for b in sorted(deals):
        info = deals[b]
        deal: Deal | None = info.deal
        assert deal is not None
        lines += [f'[Board "{b}"]', f'[Dealer "{info.dealer.name}"]',
                  f'[Vulnerable "{info.vulnerability.value}"]',
                  f'[Deal "{deal.to_pbn(Seat.N)}"]', ""]
    return "\n".join(lines)


_SECTION = re.compile(r"^\s*\[\[?([^\[\]]+)\]\]?\s*(#.*)?$")
_DEALS_KEY = re.compile(r"^\s*deals\s*=")


def session_with_deals(text: str, deals: Path) -> str:
    """The session file's text with ``[session] deals`` naming ``deals`` (by its absolute
    path: the copy lives elsewhere than the original); the rest of the file as it was."""
    line = f'deals = "{deals.resolve().as_posix()}"'
    out: list[str] = []
    section = ""
    done = False
    for raw in text.splitlines():
        head = _SECTION.match(raw)
        if head is not None:
            if section == "session" and not done:
                out.append(line)
                done = True
            section = head.group(1).strip()
        elif section == "session" and _DEALS_KEY.match(raw):
            out.append(line)
            done = True
            continue
        out.append(raw)
    if not done:
        if section != "session":
            out.append("[session]")
        out.append(line)
    return "\n".join(out) + "\n"
