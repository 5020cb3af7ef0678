"""The director's evidence for one table's board: the tempo of every call and card
(controller/evidence/tempo.py) and, after a claim or concession, the position it was made in.

The engine feeds it and publishes the ``evidence`` payload on ``{root}/{t}/evidence``
(retained, director-only by the broker's ACL; docs/wire-contract.md, "Evidence (1.3)").
The claim's double-dummy check is not computed here: a DDS solve takes milliseconds to a
tenth of a second and the engine serves every table on one path, so the payload carries the
*position* (remaining hands, leader, strain, tricks claimed) and the check runs where the
director looks (the console, in a worker thread) and where the records are written
(``bridge-table export``), both with controller/evidence/claims.py (docs/claims.md says why).

Pure: standard library only, no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from controller import WIRE_VERSION
from controller.evidence.tempo import TempoLog, TempoPolicy
from controller.laws.cards import Card, Seat, Suit
from controller.laws.events import ButtonEvent
from controller.laws.record import BoardRecord
from controller.laws.table import Board, FeedItem

__all__ = ["note_tempo", "claim_position", "evidence_payload"]


def note_tempo(log: TempoLog, feed: Iterable[FeedItem], board: Board | None,
               ts: float | None, policy: TempoPolicy) -> bool:
    """Add the input's calls and cards to ``log``; True when the evidence should be
    published again (a new board, a correction, the auction's end, or a call or card over
    the lowest absolute threshold, ``TempoPolicy.floor``: no faster one can be flagged itself).
    Flags are recomputed only then: the hot path pays one subtraction per call or card."""
    changed = False
    for item in feed:
        kind = item.kind
        if kind == "card":
            seat, card = item.seat, item.card
            if seat is not None and card is not None:
                seconds = log.add_card(seat, card, item.trick, ts)
                if seconds is not None and seconds > policy.floor:
                    changed = True
        elif kind == "call":
            seat, call = item.seat, item.call
            if seat is not None and call is not None:
                seconds = log.add_call(seat, call, ts)
                if (seconds is not None and seconds > policy.floor) or \
                        (board is not None and board.auction.complete):
                    changed = True
        elif kind == "board":
            log.reset(board.number if board is not None else None)
            changed = True
        elif kind == "auction":
            log.restate_calls(item.calls)
            changed = True
        elif kind == "play":
            log.restate_cards(item.cards)
            changed = True
    return changed


def claim_position(record: BoardRecord | None, tricks: int | None) -> dict[str, Any] | None:
    """The position a claim or concession was made in, from the board as played after the
    ``claim`` ruling (the Laws core puts an unfinished trick's cards back in the hands: the
    claim is of the tricks from that trick on). None when there is no play or no tricks."""
    if record is None or record.declarer is None or record.contract is None \
            or record.contract.bid is None or tricks is None:
        return None
    done = [t for t in record.tricks if t.winner is not None]
    leader = done[-1].winner if done else record.declarer.lho
    assert leader is not None
    position: dict[str, Any] = {
        "tricks": tricks, "remaining": 13 - len(done), "trick": len(done) + 1,
        "declarer": record.declarer.name, "strain": str(record.contract.bid.denomination),
        "leader": leader.name,
        "won": sum(1 for t in done if t.winner is not None
                   and not t.winner.is_opponent_of(record.declarer)),
    }
    deal = record.deal
    if deal is None or not deal.is_complete:
        position["hands"] = None       # the hands were not scanned and no deals file has them
        return position
    played: dict[Seat, set[Card]] = {s: set() for s in Seat}
    for t in done:
        for seat, card in t.cards:
            played[seat].add(card)
    hands = [sorted(deal[s] - played[s], reverse=True) for s in Seat]
    position["hands"] = "N:" + " ".join(_hand(h) for h in hands)
    return position


def _hand(cards: list[Card]) -> str:
    return ".".join("".join(c.rank.char for c in cards if c.suit is s)
                    for s in (Suit.S, Suit.H, Suit.D, Suit.C))


def press_payload(press: ButtonEvent, last: dict[str, Any] | None) -> dict[str, Any]:
    """One "director" or "claim" press of ``evidence.presses`` (1.14): ``button``, ``seat``
    (null when the bridge did not say), ``ts`` (the press's own time) and the ``src`` and
    ``seq`` of the event (``last``), which name the press for a listener that keeps it."""
    out: dict[str, Any] = {"button": str(press.button),
                           "seat": str(press.seat) if press.seat is not None else None,
                           "ts": press.ts}
    if last is not None:
        out["src"], out["seq"] = last.get("src"), last.get("seq")
    return out


def evidence_payload(table: str, log: TempoLog, board: Board | None,
                     claim: dict[str, Any] | None, policy: TempoPolicy,
                     presses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The ``evidence`` topic's payload: ``v``, ``table``, ``board``, ``tempo`` (``calls``,
    ``cards``, ``flags``), ``claim`` (the position) after a claim ruling, and ``presses``
    (1.14) once a player has pressed "director" or "claim" on the board."""
    declarer = board.declarer if board is not None else None
    auction_over = board is not None and board.auction.complete
    payload: dict[str, Any] = {
        "v": WIRE_VERSION, "table": table,
        "board": board.number if board is not None else log.board,
        "tempo": log.to_wire(policy, declarer, auction_over),
    }
    if claim is not None:
        payload["claim"] = claim
    if presses:
        payload["presses"] = presses
    return payload
