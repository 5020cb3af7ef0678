"""Wire-contract event dicts for a whole board, written the way the laws.md vectors are.

A test helper, independent of the code under test: it knows the sensor model of the wire
contract (board tag; 13-card hand scans then the hands picked up; calls on the bid zones;
played cards on the trays; all trays emptied = hands back in the board) and laws.md's
``AUTO`` rule to finish play. It does not know the Laws beyond following suit.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.laws.cards import Card, Deal, Seat, Suit, board_dealer

AUTO_SUIT_ORDER = (Suit.C, Suit.D, Suit.H, Suit.S)


def card_uid(card: Card, deck: str) -> str:
    return f"C{deck}{card.index:02d}".upper()


@dataclass
class BoardScript:
    """A board as the vectors write it: deal, calls from the dealer, cards as played.

    ``play`` lists cards in the order they hit the table (the holder plays each); when
    ``auto`` is set, play is finished with laws.md's AUTO rule.
    """

    board: int
    deal: str
    calls: Sequence[str]
    play: Sequence[str] = ()
    auto: bool = True
    deck: str = ""
    trump: Suit | None = None  # None: no trump; set from the contract by the test
    declarer: Seat | None = None
    extra_calls: Sequence[tuple[int, tuple[Seat, str]]] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        self.deck = self.deck or f"B{self.board}"

    @property
    def parsed(self) -> Deal:
        return Deal.from_pbn(self.deal)

    def holder(self, card: Card) -> Seat:
        d = self.parsed
        for s in Seat:
            if card in d[s]:
                return s
        raise ValueError(f"{card} is in no hand")

    def full_play(self) -> list[tuple[Seat, Card]]:
        """Cards in playing order, the explicit ones then AUTO."""
        if self.declarer is None:
            return []
        hands = {s: set(self.parsed[s]) for s in Seat}
        out: list[tuple[Seat, Card]] = []
        trick: list[tuple[Seat, Card]] = []
        leader = self.declarer.lho
        explicit = [Card.parse(c) for c in self.play]
        while len(out) < 52:
            turn = leader.rotated(len(trick))
            if explicit:
                card = explicit.pop(0)
                seat = self.holder(card)
            elif self.auto:
                seat = turn
                led = trick[0][1].suit if trick else None
                follow = sorted((c for c in hands[seat] if c.suit is led), key=lambda c: c.rank)
                if follow:
                    card = follow[0]
                else:
                    card = min(hands[seat],
                               key=lambda c: (AUTO_SUIT_ORDER.index(c.suit), c.rank))
            else:
                break
            hands[seat].discard(card)
            out.append((seat, card))
            trick.append((seat, card))
            if len(trick) == 4:
                leader = trick_winner(trick, self.trump)
                trick = []
        return out


def trick_winner(trick: Sequence[tuple[Seat, Card]], trump: Suit | None) -> Seat:
    led = trick[0][1].suit

    def strength(sc: tuple[Seat, Card]) -> tuple[int, int]:
        c = sc[1]
        return (2 if c.suit is trump else 1 if c.suit is led else 0, int(c.rank))

    return max(trick, key=strength)[0]


class EventWriter:
    """Numbers events for one bridge (``src``) and stamps hardware times."""

    def __init__(self, src: str, seq: int = 1, ts: float = 1_764_400_000.0) -> None:
        self.src, self.seq, self.ts = src, seq, ts

    def event(self, **fields: Any) -> dict[str, Any]:
        ev = {"v": 1, "src": self.src, "seq": self.seq, "ts": round(self.ts, 3), **fields}
        self.seq += 1
        self.ts += 0.25
        return ev

    def board(self, script: BoardScript) -> Iterator[dict[str, Any]]:
        """Every event of a board, in order."""
        deal = script.parsed
        yield self.event(type="tag", zone="board", action="present",
                         uid=f"BD{script.board:04d}", board=script.board)
        for seat in Seat:  # hand scans, then each player picks the hand up
            for card in sorted(deal[seat]):
                yield self.tray(seat, card, "present", script.deck)
        for seat in Seat:
            for card in sorted(deal[seat]):
                yield self.tray(seat, card, "removed", script.deck)
        seat = board_dealer(script.board)
        for i, call in enumerate(script.calls):
            yield self.call(seat, call, i)
            seat = seat.lho
        for seat, card in script.full_play():
            yield self.tray(seat, card, "present", script.deck)
        if script.declarer is not None:
            for seat in Seat:  # the hands go back into the board
                for card in sorted(deal[seat]):
                    yield self.tray(seat, card, "removed", script.deck)

    def tray(self, seat: Seat, card: Card, action: str, deck: str) -> dict[str, Any]:
        return self.event(type="tag", zone="tray", seat=str(seat), action=action,
                          uid=card_uid(card, deck), card=str(card), deck=deck)

    def call(self, seat: Seat, call: str, n: int) -> dict[str, Any]:
        return self.event(type="tag", zone="bid", seat=str(seat), action="present",
                          uid=f"BB{int(seat)}{n:03d}", call=call)


# -- vectors from laws.md section 7 -------------------------------------------------------
def t08_revoke() -> BoardScript:
    """T08: E revokes on trick 6, established by E's lead to trick 7; 64A1 -> 2 tricks.

    4H by S, raw 9 tricks -> 11; NS +650 (raw -100).
    """
    return BoardScript(
        board=10, deal="N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94",
        calls=["1C", "1H", "Pass", "4H", "Pass", "Pass", "Pass"],
        play=["CT", "C3", "CA", "C7", "CK", "CQ", "C4", "C6", "S3", "S5", "ST", "SQ",
              "H5", "H2", "HA", "H3", "HK", "D2", "HT", "H6", "D5", "D3", "DK", "H9"],
        trump=Suit.H, declarer=Seat.S)


def clean_board(board: int = 5) -> BoardScript:
    """A board without irregularities: T08's deal, 4H by S, played out by AUTO."""
    s = t08_revoke()
    return BoardScript(board=board, deal=s.deal,
                       calls=["1H", "Pass", "4H", "Pass", "Pass", "Pass"] if
                       board_dealer(board) is Seat.S else _pass_to_south(board),
                       trump=Suit.H, declarer=Seat.S)


def _pass_to_south(board: int) -> list[str]:
    seat = board_dealer(board)
    calls = []
    while seat is not Seat.S:
        calls.append("Pass")
        seat = seat.lho
    # S opens 1H, W passes, N raises, then three passes
    return calls + ["1H", "Pass", "4H", "Pass", "Pass", "Pass"]
