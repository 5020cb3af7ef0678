"""A played board as the sensor events a table would publish (wire contract, version 1).

Two sensing models (docs/sensing.md). ``sensing="spot"`` (the product's, one card on an
antenna at a time): the board on the board reader; each seat's shoe-style hand read (each
card ``spot`` ``present`` then ``removed``, as it crosses the play spot); each call laid on
the seat's call spot (``bid`` ``present``), the seat's previous call slid off first
(``removed``) and every call tidied away when the auction ends; each card laid on the
player's play spot (``spot`` ``present``, dummy's on dummy's) and, once its trick is
complete, the four quitted (``removed``). ``sensing="tray"`` (the pile option, wire contract
version 1) gives, in order: the board on the board reader; each seat's
13-card hand scan (``tray`` ``present``) and the hand picked up (``removed``); each call as
``bid`` ``present`` at its seat; each card as ``tray`` ``present`` at the seat that holds
it (declarer puts dummy's cards on dummy's tray); after the last trick every seat's 13
tags ``removed`` (the hands back in the board). Everything is deterministic: ``seq`` counts
from ``seq_start``, ``ts`` is ``ts_start + k * ts_step``, and uids come from functions the
caller may replace.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable
from typing import Any, Literal, TextIO

from controller import wire
from controller.formats.errors import BadRecord
from controller.laws.cards import FULL_DECK, Call, CallKind, Card, Seat
from controller.laws.record import BoardRecord

__all__ = [
    "record_events", "Sensing", "write_jsonl", "default_card_uid", "default_call_uid",
    "default_board_uid", "known_hands", "interleave",
]

Event = dict[str, Any]
Sensing = Literal["spot", "tray"]


def default_card_uid(card: Card) -> str:
    """``C`` + the card's index (0..51) in hex: ``C00`` (C2) .. ``C33`` (SA). Upper-case hex."""
    return f"C{card.index:02X}"


def _call_index(call: Call) -> int:
    if call.bid is not None:
        return call.bid.rank          # 0..34 for 1C..7NT
    return {CallKind.PASS: 35, CallKind.DOUBLE: 36, CallKind.REDOUBLE: 37}[call.kind]


def default_call_uid(seat: Seat, call: Call, copy: int) -> str:
    """A bidding-box card: ``B`` + seat + call index + which copy of that card (a box holds
    several Pass cards, so the second Pass of a seat is another physical card)."""
    return f"B{int(seat):X}{_call_index(call):02X}{copy:X}"


def default_board_uid(board: int) -> str:
    return f"D{board:04X}"


def known_hands(record: BoardRecord) -> dict[Seat, frozenset[Card]] | None:
    """The four hands: from the deal, else from a complete play; None if neither is known."""
    if record.deal is not None and record.deal.is_complete:
        return {s: record.deal[s] for s in Seat}
    cards = [(seat, card) for t in record.tricks for seat, card in t.cards]
    if len(cards) == 52:
        return {s: frozenset(c for seat, c in cards if seat is s) for s in Seat}
    return None


def record_events(
    record: BoardRecord,
    *,
    src: str = "sim",
    seq_start: int = 1,
    ts_start: float = 1_700_000_000.0,
    ts_step: float = 1.0,
    deck: str | None = None,
    scans: bool = True,
    pickup: bool = True,
    board_event: bool = True,
    return_hands: bool = True,
    card_uid: Callable[[Card], str] = default_card_uid,
    call_uid: Callable[[Seat, Call, int], str] = default_call_uid,
    board_uid: Callable[[int], str] = default_board_uid,
    sensing: Sensing = "tray",
) -> list[Event]:
    """The wire contract's sensor events for one board, as dicts ready for JSON.

    ``scans=False`` leaves out the hand scans (and the pick-ups); ``pickup=False`` keeps
    the scans but not the ``removed`` events after them (a tap reader); ``return_hands``
    adds the hands going back into the board after the last trick (play spots: the last
    trick quitted). Calls are the calls that stand; cards are the tricks as recorded.
    ``sensing``: ``spot`` (play and call spots, one tag on an antenna at a time) or
    ``tray`` (the pile inventory, wire contract version 1).
    """
    if sensing == "spot":
        return _spot_events(record, src=src, seq_start=seq_start, ts_start=ts_start,
                            ts_step=ts_step, deck=deck, scans=scans, board_event=board_event,
                            return_hands=return_hands, card_uid=card_uid,
                            call_uid=call_uid, board_uid=board_uid)
    if sensing != "tray":
        raise ValueError(f"sensing must be 'spot' or 'tray', not {sensing!r}")
    out = _Stream(src, seq_start, ts_start, ts_step, "tray",
                  deck if deck is not None else str(record.board), card_uid)
    events, emit, card_event = out.events, out.emit, out.card

    if board_event:
        emit(zone="board", action="present", uid=board_uid(record.board), board=record.board)
    hands = known_hands(record)
    if scans:
        if hands is None:
            raise BadRecord(f"board {record.board}: no deal and no complete play to scan")
        for seat in Seat:
            hand = [c for c in FULL_DECK if c in hands[seat]]
            for card in hand:
                card_event(seat, card, "present")
            if pickup:
                for card in hand:
                    card_event(seat, card, "removed")
    copies: dict[tuple[Seat, Call], int] = {}
    for entry in record.standing_calls:
        key = (entry.seat, entry.call)
        copy = copies.get(key, 0)
        copies[key] = copy + 1
        emit(zone="bid", seat=entry.seat.name, action="present",
             uid=call_uid(entry.seat, entry.call, copy), call=str(entry.call))
    played: dict[Seat, list[Card]] = {s: [] for s in Seat}
    for trick in record.tricks:
        for seat, card in trick.cards:
            card_event(seat, card, "present")
            played[seat].append(card)
    complete = len(record.tricks) == 13 and all(len(t.cards) == 4 for t in record.tricks)
    if return_hands and complete:
        for seat in Seat:
            for card in played[seat]:
                card_event(seat, card, "removed")
    return events


class _Stream:
    """Events numbered from ``seq_start`` with ``ts`` in steps; card tags on ``zone``."""

    def __init__(self, src: str, seq_start: int, ts_start: float, ts_step: float, zone: str,
                 deck: str, card_uid: Callable[[Card], str]) -> None:
        self.events: list[Event] = []
        self.src, self.seq_start, self.ts_start, self.ts_step = src, seq_start, ts_start, ts_step
        self.zone, self.deck, self.card_uid = zone, deck, card_uid

    def emit(self, **fields: Any) -> None:
        k = len(self.events)
        self.events.append(wire.to_builtins(wire.TagEvent(
            v=wire.VERSION, src=self.src, seq=self.seq_start + k,
            ts=self.ts_start + k * self.ts_step, **fields)))

    def card(self, seat: Seat, card: Card, action: str) -> None:
        self.emit(zone=self.zone, seat=seat.name, action=action, uid=self.card_uid(card),
                  card=str(card), deck=self.deck)


def _spot_events(
    record: BoardRecord, *, src: str, seq_start: int, ts_start: float, ts_step: float,
    deck: str | None, scans: bool, board_event: bool, return_hands: bool,
    card_uid: Callable[[Card], str], call_uid: Callable[[Seat, Call, int], str],
    board_uid: Callable[[int], str],
) -> list[Event]:
    """``record_events`` for play spots and call spots: at most one tag on any antenna."""
    out = _Stream(src, seq_start, ts_start, ts_step, "spot",
                  deck if deck is not None else str(record.board), card_uid)
    events, emit, card_event = out.events, out.emit, out.card

    if board_event:
        emit(zone="board", action="present", uid=board_uid(record.board), board=record.board)
    if scans:
        hands = known_hands(record)
        if hands is None:
            raise BadRecord(f"board {record.board}: no deal and no complete play to read")
        for seat in Seat:   # each card slid across the play spot, one after the other
            for card in (c for c in FULL_DECK if c in hands[seat]):
                card_event(seat, card, "present")
                card_event(seat, card, "removed")
    copies: dict[tuple[Seat, Call], int] = {}
    on_spot: dict[Seat, tuple[str, str]] = {}    # seat -> (uid, call) of the call lying there

    def call_off(seat: Seat) -> None:
        lying = on_spot.pop(seat, None)
        if lying is not None:
            emit(zone="bid", seat=seat.name, action="removed", uid=lying[0], call=lying[1])

    for entry in record.standing_calls:
        key = (entry.seat, entry.call)
        copy = copies.get(key, 0)
        copies[key] = copy + 1
        call_off(entry.seat)     # the previous call slid into the call row
        uid = call_uid(entry.seat, entry.call, copy)
        emit(zone="bid", seat=entry.seat.name, action="present", uid=uid,
             call=str(entry.call))
        on_spot[entry.seat] = (uid, str(entry.call))
    if record.contract is not None or record.tricks:
        for seat in Seat:        # the auction over: the calls go back into the box
            call_off(seat)
    for number, trick in enumerate(record.tricks, start=1):
        for seat, card in trick.cards:
            card_event(seat, card, "present")
        if len(trick.cards) == 4 and (return_hands or number < 13):
            for seat, card in trick.cards:   # quitted: face down into the trick row
                card_event(seat, card, "removed")
    return events


def write_jsonl(events: Iterable[Event], fp: TextIO, *, topic: str | None = None) -> int:
    """One JSON object a line; with ``topic``, each as ``{"topic": ..., "payload": ...}``.

    Returns the number of lines written.
    """
    count = 0
    for event in events:
        obj: Any = {"topic": topic, "payload": event} if topic is not None else event
        fp.write(json.dumps(obj, ensure_ascii=False, separators=(",", ":")) + "\n")
        count += 1
    return count


def interleave(streams: list[list[bytes]], rng: random.Random, most: int) -> list[bytes]:
    """Several tables' lines as a room sends them: runs of 1 to ``most`` lines of a table
    chosen at random, each table's lines in order. Empties ``streams``."""
    out: list[bytes] = []
    while any(streams):
        stream = rng.choice([s for s in streams if s])
        taken = rng.randint(1, most)
        out.extend(stream[:taken])
        del stream[:taken]
    return out
