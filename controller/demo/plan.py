"""The demo's plan: what the simulated players do on the table.

The board's play as recorded, with one defender's revoke injected (``plan_board``); the
events a table's readers would see follow from ``formats.events.record_events``.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.formats.events import record_events
from controller.formats.pbn import game_to_record, read_pbn
from controller.laws.cards import Card, Seat, Suit
from controller.laws.play import trick_winner
from controller.laws.record import BoardRecord, PlayedTrick

__all__ = ["DemoError", "DemoPlan", "load_board", "plan_board"]

_AUTO_SUITS = (Suit.C, Suit.D, Suit.H, Suit.S)
#: what the firmware bridge adds to an event from its readers
_BRIDGE_FIELDS = frozenset({"v", "src", "seq", "ts", "uid"})


class DemoError(Exception):
    """The demo cannot run (no mosquitto, broken board file...)."""


@dataclass(frozen=True)
class DemoPlan:
    """What the simulated players do: the board's play with one revoke injected."""

    record: BoardRecord
    play: tuple[tuple[Seat, Card], ...]
    revoke: tuple[int, Seat, Card, Suit] | None  # trick, offender, card played, suit led

    def events(self, *, scans: bool = True) -> list[dict[str, Any]]:
        """The board as wire-contract tag events on play spots and call spots, one card on
        an antenna at a time (``formats.events.record_events`` on the record with this
        play, docs/sensing.md), without ``v``/``src``/``seq``/``ts``/``uid``: the bridge adds
        them from what its readers see. ``scans``: each player passes his hand across his
        play spot first (the shoe-style read, for a controller without the deal file)."""
        played = dataclasses.replace(self.record, tricks=self.tricks())
        return [{k: v for k, v in event.items() if k not in _BRIDGE_FIELDS}
                for event in record_events(played, sensing="spot", scans=scans)]

    def tricks(self) -> tuple[PlayedTrick, ...]:
        """The play as tricks, each won as the Laws say (``laws.play.trick_winner``)."""
        assert self.record.contract is not None and self.record.contract.bid is not None
        trump = self.record.contract.bid.denomination.trump
        out = []
        for number, first in enumerate(range(0, len(self.play), 4), start=1):
            cards = self.play[first:first + 4]
            out.append(PlayedTrick(number, cards[0][0], cards,
                                   trick_winner(cards, trump) if len(cards) == 4 else None))
        return tuple(out)


def load_board(path: Path | None = None) -> BoardRecord:
    """The first board of a PBN file (the packaged ``demo.pbn`` by default), with its deal,
    contract and declarer; a DemoError says what is wrong with it."""
    try:
        if path is None:
            text = importlib.resources.files("controller").joinpath("data/demo.pbn").read_text(
                encoding="utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise DemoError(f"cannot read board file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise DemoError(f"{path} is not a PBN file (not UTF-8 text: byte {e.start} is "
                        f"0x{e.object[e.start]:02x})") from None
    pbn = read_pbn(text)
    if not pbn.games:
        raise DemoError(f"no board in {path or 'demo.pbn'}: {pbn.errors}")
    try:
        record = game_to_record(pbn.games[0])
    except ValueError as e:  # ParseError and the record's own checks
        raise DemoError(f"{path or 'demo.pbn'}: the first board cannot be read: {e}") from None
    if record.deal is None or record.declarer is None or record.contract is None:
        raise DemoError("the demo board needs a deal, a contract and a declarer")
    return record



def _auto(hand: set[Card], led: Suit | None) -> Card:
    """laws.md AUTO: the lowest card of the suit led, else the lowest card (clubs first)."""
    follow = sorted((c for c in hand if c.suit is led), key=lambda c: c.rank)
    return follow[0] if follow else min(hand, key=lambda c: (_AUTO_SUITS.index(c.suit), c.rank))


def _revoker(followers: Sequence[Seat], led: Suit, hands: dict[Seat, set[Card]],
             defenders: set[Seat]) -> Seat | None:
    """The last defender to play who holds the suit led and another card to play instead."""
    for seat in reversed(followers):
        if seat in defenders and any(c.suit is led for c in hands[seat]) and any(
                c.suit is not led for c in hands[seat]):
            return seat
    return None


def plan_board(record: BoardRecord, *, revoke_trick: int | None = 6) -> DemoPlan:
    """The record's play, with a defender revoking on ``revoke_trick`` or the first trick
    after it where one can (up to trick 11, so that it gets established; None: no revoke).

    The revoke: the last defender to play to that trick who holds the suit led and a trump
    ruffs with his lowest trump (or, at notrump, discards his lowest other card). From the
    revoke on, play is finished with laws.md's AUTO rule (follow with the lowest card,
    else the lowest card, clubs first), since the hands no longer match the record.
    """
    assert record.deal is not None and record.declarer is not None
    assert record.contract is not None and record.contract.bid is not None
    trump = record.contract.bid.denomination.trump
    hands = {s: set(record.deal[s]) for s in Seat}
    recorded = [sc for t in record.tricks for sc in t.cards]
    play: list[tuple[Seat, Card]] = []
    revoke: tuple[int, Seat, Card, Suit] | None = None
    leader = record.declarer.lho
    defenders = {record.declarer.lho, record.declarer.rho}
    for number in range(1, 14):
        trick: list[tuple[Seat, Card]] = []
        order = [leader.rotated(i) for i in range(4)]
        offender: Seat | None = None
        for position, seat in enumerate(order):
            if position == 1 and revoke is None and revoke_trick is not None and \
                    revoke_trick <= number <= 11:
                offender = _revoker(order[1:], trick[0][1].suit, hands, defenders)
            if revoke is None and len(play) < len(recorded) and seat is not offender:
                card = recorded[len(play)][1]
                if card not in hands[seat]:
                    raise DemoError(f"the board's play is not consistent at trick {number}")
            elif seat is offender:
                led = trick[0][1].suit
                ruffs = sorted((c for c in hands[seat] if c.suit is trump), key=lambda c: c.rank)
                others = sorted((c for c in hands[seat] if c.suit is not led),
                                key=lambda c: (_AUTO_SUITS.index(c.suit), c.rank))
                card = ruffs[0] if ruffs and led is not trump else others[0]
                revoke = (number, seat, card, led)
            else:
                card = _auto(hands[seat], trick[0][1].suit if trick else None)
            hands[seat].discard(card)
            trick.append((seat, card))
            play.append((seat, card))
        leader = trick_winner(trick, trump)
    return DemoPlan(record=record, play=tuple(play), revoke=revoke)


