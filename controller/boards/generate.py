"""Random, legal boards: deals, auctions and play, for tests, benchmarks and the simulator.

Written apart from the Laws core on purpose (simple rules, no irregularities), so that a
property test can compare what the core concludes with what these plain rules give.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from controller.laws.cards import (
    DOUBLE,
    PASS,
    REDOUBLE,
    Bid,
    Call,
    Card,
    Contract,
    Deal,
    Denomination,
    Doubling,
    Seat,
    Suit,
    board_dealer,
    board_vulnerability,
)
from controller.laws.record import AuctionEntry, BoardRecord, PlayedTrick

__all__ = ["RandomBoard", "random_deal", "random_auction", "random_play",
           "random_play_with_revoke", "random_board", "contract_of", "trick_winner"]


@dataclass(frozen=True)
class RandomBoard:
    record: BoardRecord
    declarer_tricks: int | None


def random_deal(rng: random.Random) -> Deal:
    cards = list(_ALL)
    rng.shuffle(cards)
    return Deal.from_hands({s: frozenset(cards[i * 13:(i + 1) * 13]) for i, s in enumerate(Seat)})


_ALL = [Card.parse(s + r) for s in "SHDC" for r in "AKQJT98765432"]


def random_auction(rng: random.Random, dealer: Seat, *, pass_weight: float = 0.55,
                   max_calls: int = 24) -> list[tuple[Seat, Call]]:
    """A legal auction (Laws 18, 19, 22), ending in three passes after a bid or four passes."""
    calls: list[tuple[Seat, Call]] = []
    seat = dealer
    last_bid: tuple[Bid, Seat] | None = None
    doubling = Doubling.NONE
    doubler: Seat | None = None
    passes = 0
    while True:
        if last_bid is None and passes == 4:
            return calls
        if last_bid is not None and passes == 3:
            return calls
        options: list[Call] = [PASS]
        force_pass = len(calls) >= max_calls
        if not force_pass and rng.random() > pass_weight:
            rank = last_bid[0].rank + 1 if last_bid else 0
            if rank <= 34:
                top = min(34, rank + 6)
                r = rng.randint(rank, top)
                options = [Call.make_bid(r // 5 + 1, Denomination(r % 5))]
            if last_bid and doubling is Doubling.NONE and last_bid[1].is_opponent_of(seat) \
                    and rng.random() < 0.15:
                options = [DOUBLE]
            elif last_bid and doubling is Doubling.DOUBLED and doubler is not None \
                    and doubler.is_opponent_of(seat) and rng.random() < 0.3:
                options = [REDOUBLE]
        call = options[0]
        calls.append((seat, call))
        if call.is_bid:
            assert call.bid is not None
            last_bid = (call.bid, seat)
            doubling, doubler, passes = Doubling.NONE, None, 0
        elif call == DOUBLE:
            doubling, doubler, passes = Doubling.DOUBLED, seat, 0
        elif call == REDOUBLE:
            doubling, passes = Doubling.REDOUBLED, 0
        else:
            passes += 1
        seat = seat.lho


def contract_of(calls: list[tuple[Seat, Call]]) -> tuple[Contract, Seat | None]:
    """The contract and declarer by the plain rules (first of the side to name the strain)."""
    last: tuple[Bid, Seat] | None = None
    doubling = Doubling.NONE
    for seat, call in calls:
        if call.is_bid:
            assert call.bid is not None
            last, doubling = (call.bid, seat), Doubling.NONE
        elif call == DOUBLE:
            doubling = Doubling.DOUBLED
        elif call == REDOUBLE:
            doubling = Doubling.REDOUBLED
    if last is None:
        return Contract(None), None
    bid, seat = last
    declarer = next(s for s, c in calls if c.is_bid and c.bid is not None
                    and c.bid.denomination is bid.denomination and s.side is seat.side)
    return Contract(bid, doubling), declarer


def trick_winner(cards: list[tuple[Seat, Card]], trump: Suit | None) -> Seat:
    led = cards[0][1].suit

    def strength(card: Card) -> int:
        if trump is not None and card.suit is trump:
            return 100 + card.rank
        return card.rank if card.suit is led else 0

    return max(cards, key=lambda sc: strength(sc[1]))[0]


def random_play(rng: random.Random, deal: Deal, contract: Contract,
                declarer: Seat) -> list[PlayedTrick]:
    """Thirteen tricks of random legal play."""
    tricks, _ = _play(rng, deal, contract, declarer, revoke_trick=None)
    return tricks


def random_play_with_revoke(rng: random.Random, deal: Deal, contract: Contract, declarer: Seat,
                            revoke_trick: int) -> tuple[list[PlayedTrick], Seat, Suit] | None:
    """Random play in which one player fails to follow suit once, on ``revoke_trick``
    (the first player there who can follow and can also discard); the rest is legal.
    None when nobody on that trick could revoke."""
    tricks, offender = _play(rng, deal, contract, declarer, revoke_trick=revoke_trick)
    if offender is None:
        return None
    return tricks, offender[0], offender[1]


def _play(rng: random.Random, deal: Deal, contract: Contract, declarer: Seat, *,
          revoke_trick: int | None) -> tuple[list[PlayedTrick], tuple[Seat, Suit] | None]:
    assert contract.bid is not None
    trump = contract.bid.denomination.trump
    hands = {s: set(deal[s]) for s in Seat}
    leader = declarer.lho
    tricks: list[PlayedTrick] = []
    offender: tuple[Seat, Suit] | None = None
    for number in range(1, 14):
        cards: list[tuple[Seat, Card]] = []
        seat = leader
        for _ in range(4):
            hand = hands[seat]
            if cards:
                led = cards[0][1].suit
                follow = sorted(c for c in hand if c.suit is led)
                others = sorted(c for c in hand if c.suit is not led)
                if number == revoke_trick and offender is None and follow and others:
                    card = rng.choice(others)
                    offender = (seat, led)
                else:
                    card = rng.choice(follow or sorted(hand))
            else:
                card = rng.choice(sorted(hand))
            hand.remove(card)
            cards.append((seat, card))
            seat = seat.lho
        winner = trick_winner(cards, trump)
        tricks.append(PlayedTrick(number, leader, tuple(cards), winner))
        leader = winner
    return tricks, offender


def random_board(rng: random.Random, number: int) -> RandomBoard:
    deal = random_deal(rng)
    dealer, vul = board_dealer(number), board_vulnerability(number)
    calls = random_auction(rng, dealer)
    contract, declarer = contract_of(calls)
    tricks: list[PlayedTrick] = []
    won: int | None = None
    if declarer is not None:
        tricks = random_play(rng, deal, contract, declarer)
        won = sum(1 for t in tricks if t.winner is not None and t.winner.side is declarer.side)
    record = BoardRecord(
        board=number, dealer=dealer, vulnerability=vul, deal=deal,
        auction=tuple(AuctionEntry(s, c) for s, c in calls), contract=contract,
        declarer=declarer, tricks=tuple(tricks), tricks_played=won, tricks_result=won,
    )
    return RandomBoard(record, won)
