"""The play module (controller/laws/play.py): laws.md section 7 scenarios T06-T12, the
other play irregularities, and property tests on random deals."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.laws.cards import FULL_DECK, Card, Contract, Deal, Rules, Seat, Suit
from controller.laws.irregularities import Code, Irregularity, IrregularityLog, Status
from controller.laws.play import Play
from controller.laws.rulings import Ruling, RulingKind

C = Card.parse
S = Seat.parse


# ---------------------------------------------------------------------------- harness
def new_play(pbn: str, contract: str, declarer: str, *, known: bool = True,
             rules: Rules = Rules.L2017,
             penalty: dict[Seat, frozenset[Card]] | None = None) -> tuple[Play, IrregularityLog]:
    deal = Deal.from_pbn(pbn)
    log = IrregularityLog()
    hands = {s: deal[s] for s in Seat} if known else None
    play = Play(Contract.parse(contract), S(declarer), log, rules=rules, hands=hands,
                penalty_cards=penalty)
    return play, log


def feed(play: Play, events: str) -> None:
    """``W:CT`` or ``+W:CT`` puts, ``-W:CT`` takes (laws.md section 7 notation)."""
    for token in events.split():
        if token.startswith("-"):
            seat, card = token[1:].split(":")
            play.take(S(seat), C(card))
        else:
            seat, card = token.lstrip("+").split(":")
            play.put(S(seat), C(card))


def current_suit_led(play: Play) -> Suit | None:
    tricks = play.tricks
    if tricks and tricks[-1].winner is None and tricks[-1].cards:
        return tricks[-1].cards[0][1].suit
    return None


def held(play: Play, deal: Deal, seat: Seat) -> set[Card]:
    """The seat's cards not yet played, from the deal and the public tricks."""
    played = {c for t in play.tricks for s, c in t.cards if s is seat}
    return set(deal[seat]) - played


def auto_card(play: Play, seat: Seat, deal: Deal) -> Card:
    """laws.md section 7 AUTO: the card the player on turn plays."""
    hand = held(play, deal, seat)
    led = current_suit_led(play)
    follows = [c for c in hand if led is not None and c.suit is led]
    for pc in sorted(play.penalty_cards.get(seat, frozenset())):
        legal = led is None or pc.suit is led or not follows
        if legal and play.is_major_penalty_card(seat, pc):
            return pc
    if follows:
        return min(follows, key=lambda c: c.rank)
    return min(hand, key=lambda c: (c.suit, c.rank))


def auto(play: Play, pbn: str) -> None:
    deal = Deal.from_pbn(pbn)
    guard = 0
    while not play.complete:
        seat = play.turn
        assert seat is not None
        play.put(seat, auto_card(play, seat, deal))
        guard += 1
        assert guard < 60, "AUTO did not finish the play"


def items(log: IrregularityLog, code: Code) -> list[Irregularity]:
    return [i for i in log if i.code is code]


def only(log: IrregularityLog, code: Code) -> Irregularity:
    found = items(log, code)
    assert len(found) == 1, f"{code}: {found}"
    return found[0]


def codes(log: IrregularityLog) -> list[Code]:
    return [i.code for i in log]


# ---------------------------------------------------------------------------- T06-T12
T06 = "N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643"


@pytest.mark.parametrize("known", [True, False])
def test_t06_opening_lead_and_later_lead_out_of_turn_accepted(known: bool) -> None:
    play, log = new_play(T06, "3NT", "N", known=known)
    assert play.turn is Seat.E                      # E should lead
    feed(play, "W:CT")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert olot.seat is Seat.W and olot.status is Status.OPEN
    assert not play.lead_faced
    feed(play, "N:C2")                              # declarer plays second: accepted (54B1)
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert olot.status is Status.RESOLVED and olot.detail == "accepted" and olot.law == "54B1"
    assert play.lead_faced
    feed(play, "E:CQ S:CA")
    assert play.tricks[0].winner is Seat.S
    feed(play, "S:DQ W:D2 N:D5 E:DA")
    assert play.tricks[1].winner is Seat.E
    feed(play, "W:C4")                              # E won T2: W leads out of turn
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert (lot.seat, lot.trick, lot.status) == (Seat.W, 3, Status.OPEN)
    feed(play, "N:CJ")                              # accepted by the next hand (53A)
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.status is Status.RESOLVED and lot.law == "53A"
    feed(play, "E:CK S:C8")
    assert play.tricks[2].winner is Seat.E
    auto(play, T06)
    assert sorted(codes(log)) == sorted([Code.OPENING_LEAD_OUT_OF_TURN, Code.LEAD_OUT_OF_TURN])
    assert play.declarer_tricks_played == 7
    assert play.declarer_tricks == 7                # no trick adjustment


T07 = "N:96.KJ4.A843.Q632 KQT5.732.T95.A87 A83.AT86.J2.JT94 J742.Q95.KQ76.K5"


def test_t07_premature_play_by_a_defender() -> None:
    play, log = new_play(T07, "1NT", "W")
    feed(play, "N:C2 E:C7 S:C9 W:CK")
    assert play.tricks[0].winner is Seat.W
    feed(play, "W:DK +S:DJ")                        # S plays before his partner N
    pp = only(log, Code.PREMATURE_PLAY)
    assert pp.seat is Seat.S and pp.trick == 2 and pp.law == "57A"
    assert play.penalty_cards == {Seat.S: frozenset({C("DJ")})}
    assert play.is_major_penalty_card(Seat.S, C("DJ"))
    assert play.turn is Seat.N
    assert play.rule(Ruling(RulingKind.OPTION, alert=pp.id, option="lowest"))
    assert play.legal_cards(Seat.N) == frozenset({C("D3")})
    feed(play, "N:D3 E:D5 -S:DJ +S:DJ")             # N complies; the penalty card discharged
    assert play.tricks[1].cards[-1] == (Seat.S, C("DJ"))
    assert play.tricks[1].winner is Seat.W
    assert play.penalty_cards == {}
    auto(play, T07)
    assert codes(log) == [Code.PREMATURE_PLAY]
    assert play.declarer_tricks == 7                 # 1NT by W, 7 tricks


T08 = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"


@pytest.mark.parametrize("known", [True, False])
def test_t08_established_revoke_won_by_the_offender(known: bool) -> None:
    play, log = new_play(T08, "4H", "S", known=known)
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    assert [t.winner for t in play.tricks] == [Seat.E, Seat.E, Seat.N, Seat.S, Seat.S, Seat.E]
    if known:
        rv = only(log, Code.REVOKE)
        assert (rv.seat, rv.trick, rv.status) == (Seat.E, 6, Status.OPEN)
    else:
        assert items(log, Code.REVOKE) == []         # not seen until E shows a diamond
    auto(play, T08)                                       # E's lead to T7 establishes it
    rv = only(log, Code.REVOKE)
    assert (rv.seat, rv.trick, rv.status) == (Seat.E, 6, Status.ESTABLISHED)
    assert rv.detail == "64A1" and rv.param("tricks_transferred") == 2
    assert play.tricks[6].winner is Seat.W
    assert play.declarer_tricks_played == 9
    assert play.declarer_tricks == 11


def test_t08_revoke_established_by_the_lead_to_trick_7() -> None:
    play, log = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    assert only(log, Code.REVOKE).status is Status.OPEN
    play.put(Seat.E, auto_card(play, Seat.E, Deal.from_pbn(T08)))
    assert only(log, Code.REVOKE).status is Status.ESTABLISHED
    assert only(log, Code.REVOKE).law == "63A1"


T09 = "N:K73.A84.AKQ5.962 JT98.JT9.JT98.Q3 AQ5.KQ62.2.AKJ84 642.753.7643.T75"


@pytest.mark.parametrize("known", [True, False])
def test_t09_declarer_revokes_dummy_wins_then_second_revoke_same_suit(known: bool) -> None:
    play, log = new_play(T09, "3NT", "S", known=known)
    feed(play, "W:H3 N:H4 E:H9 S:HQ  S:S5 W:S2 N:SK E:S8  N:H8 E:HT S:H2 W:H5"
               " E:DJ S:C4 W:D3 N:DA")
    if known:
        assert only(log, Code.REVOKE).status is Status.OPEN
        feed(play, "N:S3")                           # dummy's card establishes declarer's
        assert only(log, Code.REVOKE).status is Status.ESTABLISHED
        feed(play, "E:S9 S:SQ W:S4")
    else:
        feed(play, "N:S3 E:S9 S:SQ W:S4")
    feed(play, "S:H6 W:H7 N:HA E:HJ  N:DK E:D8 S:C8 W:D4")
    auto(play, T09)
    revokes = items(log, Code.REVOKE)
    assert [(r.seat, r.trick, r.status) for r in revokes] == [
        (Seat.S, 4, Status.ESTABLISHED), (Seat.S, 7, Status.ESTABLISHED)]
    assert revokes[0].detail == "64A2" and revokes[0].param("tricks_transferred") == 1
    assert revokes[1].detail == "64B2" and revokes[1].param("tricks_transferred") == 0
    assert play.declarer_tricks_played == 11
    assert play.declarer_tricks == 10


T10 = "N:KJ74.J8.AKJ5.AQ6 A.AQT94.82.KT932 Q532.763.T93.875 T986.K52.Q764.J4"


@pytest.mark.parametrize("known", [True, False])
def test_t10_revoke_corrected_and_declarers_fifth_card(known: bool) -> None:
    play, log = new_play(T10, "2NT", "N", known=known)
    feed(play, "E:HT S:H3 W:H2 N:C6 -N:C6 +N:HJ")
    rv = only(log, Code.REVOKE)
    assert (rv.seat, rv.status, rv.law) == (Seat.N, Status.CORRECTED, "62B2")
    assert play.penalty_cards == {}                 # declarer's card: no rectification
    assert play.tricks[0].winner is Seat.N
    feed(play, "N:SK E:SA S:S2 W:S6 +N:D5")
    fifth = only(log, Code.FIFTH_CARD)
    assert (fifth.seat, fifth.card, fifth.status) == (Seat.N, C("D5"), Status.OPEN)
    feed(play, "-N:D5")
    fifth = only(log, Code.FIFTH_CARD)
    assert fifth.status is Status.RESOLVED and fifth.detail == "returned"
    assert play.turn is Seat.E
    auto(play, T10)
    assert sorted(codes(log)) == sorted([Code.REVOKE, Code.FIFTH_CARD])
    assert play.declarer_tricks == 8


T11 = "N:KQ85.J82.Q8542.A 743.KT76.97.JT76 AJ9.A953.J3.Q542 T62.Q4.AKT6.K983"
T11_PLAY = ("E:D9 S:D3 W:DK N:D2  W:DA N:D4 E:D7 S:DJ  W:D6 N:D8 E:C6 S:S9"
            " S:SA W:S2 N:S5 E:S3  S:SJ W:S6 N:S8 E:S4  S:C2 W:C3 N:CA E:C7"
            " N:SK E:S7 S:H3 W:ST  N:SQ E:CT S:H5 W:C8  N:DQ E:H6 S:C4 W:DT"
            " N:D5 E:H7 S:C5 W:C9  N:H2 E:HT S:HA W:H4  S:CQ W:HQ N:H8 E:CJ")


@pytest.mark.parametrize("known", [True, False])
def test_t11_revoke_on_trick_12(known: bool) -> None:
    play, log = new_play(T11, "4S", "N", known=known)
    feed(play, T11_PLAY)
    assert play.tricks[11].winner is Seat.S
    feed(play, "S:H9 W:CK")                         # W's play to T13 establishes
    rv = only(log, Code.REVOKE)
    assert (rv.seat, rv.trick) == (Seat.W, 12)
    assert rv.status is Status.ESTABLISHED and rv.law == "62D"
    feed(play, "N:HJ E:HK")
    assert play.complete
    rv = only(log, Code.REVOKE)
    assert rv.law == "62D" and rv.status is Status.CORRECTED
    assert rv.param("tricks_transferred") == 0      # 64B6: no automatic transfer
    assert play.declarer_tricks_played == 10
    fixed = play.corrected_tricks
    assert fixed[11].cards == ((Seat.S, C("CQ")), (Seat.W, C("CK")), (Seat.N, C("H8")),
                               (Seat.E, C("CJ")))
    assert fixed[11].winner is Seat.W
    assert fixed[12].cards == ((Seat.W, C("HQ")), (Seat.N, C("HJ")), (Seat.E, C("HK")),
                               (Seat.S, C("H9")))
    assert fixed[12].winner is Seat.E
    assert play.declarer_tricks == 9
    assert not play.hands_returned
    for seat in Seat:
        for card in play.known_hands[seat]:
            play.take(seat, card)
    assert play.hands_returned


T12 = "N:KQT2.8653.A7.K32 A.KJT.9654.AQ876 9743.74.QJ32.J95 J865.AQ92.KT8.T4"


@pytest.mark.parametrize("known", [True, False])
def test_t12_defective_trick_67b1(known: bool) -> None:
    play, log = new_play(T12, "3NT", "W", known=known)
    feed(play, "N:SK E:SA S:S3 W:S5  E:CA S:C5 W:C4 N:C2  E:CQ S:C9 W:CT N:C3"
               " E:C6 S:CJ W:H2 N:CK  N:H3 E:HT S:H4 W:HQ  W:SJ N:SQ E:D4")
    assert play.turn is Seat.S
    feed(play, "+N:ST")                             # N, winning T6, leads to T7
    dt = only(log, Code.DEFECTIVE_TRICK)
    assert (dt.seat, dt.trick, dt.status, dt.law) == (Seat.S, 6, Status.OPEN, "67A")
    assert play.tricks[5].winner is Seat.N
    feed(play, "+E:D5")                             # a player of each side has played on
    dt = only(log, Code.DEFECTIVE_TRICK)
    assert dt.law == "67B1" and dt.status is Status.ESTABLISHED
    assert play.rule(Ruling(RulingKind.ACCEPT, alert=dt.id, seat=Seat.S, card=C("S4")))
    assert play.tricks[5].cards[-1] == (Seat.S, C("S4"))
    assert play.tricks[5].winner is Seat.N           # the owner does not change
    feed(play, "S:S7 W:S6")
    assert play.tricks[6].winner is Seat.N
    auto(play, T12)
    dt = only(log, Code.DEFECTIVE_TRICK)
    assert dt.param("tricks_transferred") == 1 and dt.detail == "64A2"
    assert play.declarer_tricks_played == 9
    assert play.declarer_tricks == 10
    assert codes(log) == [Code.DEFECTIVE_TRICK]


# ---------------------------------------------------------------------------- properties
DENOMINATIONS = ["C", "D", "H", "S", "NT"]


def ref_winner(cards: list[tuple[Seat, Card]], trump: Suit | None) -> Seat:
    """Independent trick winner: trumps beat the suit led, which beats discards."""
    led = cards[0][1].suit

    def strength(sc: tuple[Seat, Card]) -> tuple[int, int]:
        card = sc[1]
        tier = 2 if card.suit is trump else 1 if card.suit is led else 0
        return tier, int(card.rank)

    return max(cards, key=strength)[0]


def trump_of(denomination: str) -> Suit | None:
    return None if denomination == "NT" else Suit.parse(denomination)


def deal_from(order: list[Card]) -> dict[Seat, frozenset[Card]]:
    return {s: frozenset(order[13 * s:13 * s + 13]) for s in Seat}


class Board:
    """A board played out by the test, independently of the module under test."""

    def __init__(self, hands: dict[Seat, frozenset[Card]], denomination: str,
                 declarer: Seat) -> None:
        self.hands = {s: set(h) for s, h in hands.items()}
        self.trump = trump_of(denomination)
        self.declarer = declarer
        self.tricks: list[list[tuple[Seat, Card]]] = []
        self.winners: list[Seat] = []


def play_out(board: Board, rng: random.Random, plays: list[Play],
             revoke_from: int | None = None,
             on_put: object = None) -> tuple[Seat, int] | None:
    """Plays the board legally (randomly) into every Play; one revoke at the first chance
    at or after trick ``revoke_from``. Returns (offender, trick) of the revoke, if any."""
    leader = board.declarer.lho
    revoke: tuple[Seat, int] | None = None
    for number in range(1, 14):
        trick: list[tuple[Seat, Card]] = []
        for i in range(4):
            seat = leader.rotated(i)
            hand = board.hands[seat]
            for p in plays:
                assert p.turn is seat
            if trick:
                led = trick[0][1].suit
                follow = sorted(c for c in hand if c.suit is led)
                other = sorted(c for c in hand if c.suit is not led)
                if (revoke is None and revoke_from is not None and number >= revoke_from
                        and follow and other):
                    card = rng.choice(other)
                    revoke = (seat, number)
                else:
                    card = rng.choice(follow or other)
            else:
                card = rng.choice(sorted(hand))
            hand.discard(card)
            trick.append((seat, card))
            for p in plays:
                p.put(seat, card)
            if callable(on_put):
                on_put(seat, number, revoke)
        board.tricks.append(trick)
        leader = ref_winner(trick, board.trump)
        board.winners.append(leader)
    return revoke


def expected_after_revoke(board: Board, offender: Seat, k: int) -> int:
    """Declarer's tricks after the automatic rectification of one established revoke,
    computed from laws.md 4.4 (and the default 62D correction on trick 12)."""
    side = offender.side
    decl_side = board.declarer.side
    winners = list(board.winners)
    if k == 12:
        t12 = [(s, c) for s, c in board.tricks[11]]
        t13 = dict(board.tricks[12])
        c12 = dict(t12)[offender]
        c13 = t13[offender]
        t12 = [(s, c13 if s is offender else c) for s, c in t12]
        w12 = ref_winner(t12, board.trump)
        t13[offender] = c12
        w13 = ref_winner([(w12.rotated(i), t13[w12.rotated(i)]) for i in range(4)],
                         board.trump)
        winners[11], winners[12] = w12, w13
        return sum(1 for w in winners if w.side is decl_side)
    raw = sum(1 for w in winners if w.side is decl_side)
    if offender is board.declarer.partner:     # dummy's card is faced: 64B3
        n = 0
    elif winners[k - 1] is offender:
        n = 1 + (1 if any(w.side is side for w in winners[k:]) else 0)
    elif any(w.side is side for w in winners[k - 1:]):
        n = 1
    else:
        n = 0
    return raw - n if side is decl_side else raw + n


board_strategy = st.tuples(
    st.permutations(FULL_DECK), st.sampled_from(DENOMINATIONS), st.sampled_from(list(Seat)),
    st.randoms(use_true_random=False),
)


@settings(max_examples=150, deadline=None)
@given(board_strategy)
def test_legal_random_play_raises_nothing_and_counts_tricks(
        drawn: tuple[list[Card], str, Seat, random.Random]) -> None:
    order, denomination, declarer, rng = drawn
    hands = deal_from(order)
    logs = [IrregularityLog(), IrregularityLog()]
    plays = [Play(Contract.parse(f"3{denomination}"), declarer, logs[0], hands=hands),
             Play(Contract.parse(f"3{denomination}"), declarer, logs[1], hands=None)]
    board = Board(hands, denomination, declarer)
    assert play_out(board, rng, plays) is None
    expected = sum(1 for w in board.winners if w.side is declarer.side)
    for play, log in zip(plays, logs, strict=True):
        assert len(log) == 0, list(log)
        assert play.complete and play.turn is None
        assert [t.winner for t in play.tricks] == board.winners
        assert play.declarer_tricks_played == expected
        assert play.declarer_tricks == expected
    assert plays[1].known_hands == hands


@settings(max_examples=150, deadline=None)
@given(board_strategy, st.integers(min_value=1, max_value=12))
def test_injected_revoke_is_flagged_established_and_adjusted(
        drawn: tuple[list[Card], str, Seat, random.Random], revoke_from: int) -> None:
    order, denomination, declarer, rng = drawn
    hands = deal_from(order)
    known_log, unknown_log = IrregularityLog(), IrregularityLog()
    known = Play(Contract.parse(f"4{denomination}"), declarer, known_log, hands=hands)
    unknown = Play(Contract.parse(f"4{denomination}"), declarer, unknown_log, hands=None)
    board = Board(hands, denomination, declarer)
    checked: list[bool] = []

    def on_put(seat: Seat, number: int, revoke: tuple[Seat, int] | None) -> None:
        # with hands known the revoke is flagged at once and stays open until the offender
        # or his partner plays to a later trick
        if revoke is None:
            assert len(known_log) == 0
            return
        offender, k = revoke
        (item,) = known_log
        assert item.code is Code.REVOKE and item.seat is offender and item.trick == k
        if checked:
            return
        if number > k and seat in (offender, offender.partner):
            assert item.status is Status.ESTABLISHED
            assert item.law == ("62D" if k == 12 else "63A1")
            checked.append(True)
        else:
            assert item.status is Status.OPEN

    revoke = play_out(board, rng, [known, unknown], revoke_from, on_put)
    if revoke is None:
        assert len(known_log) == 0 and len(unknown_log) == 0
        return
    offender, k = revoke
    assert checked == [True]
    expected = expected_after_revoke(board, offender, k)
    raw = sum(1 for w in board.winners if w.side is declarer.side)
    for play, log in ((known, known_log), (unknown, unknown_log)):
        (item,) = log
        assert item.code is Code.REVOKE and item.seat is offender and item.trick == k
        if k == 12:
            assert item.status is Status.CORRECTED and item.law == "62D"
        else:
            assert item.status is Status.ESTABLISHED
        assert play.declarer_tricks_played == raw
        assert play.declarer_tricks == expected


# ---------------------------------------------------------------------------- other rows
# T06's deal: 3NT by N, dummy S, E leads.
# N KJ4.AQ3.KT85.J72  E Q963.T85.A94.KQ5  S AT72.KJ74.QJ3.A8  W 85.962.762.T9643


def test_opening_lead_out_of_turn_rejected_becomes_major_penalty_card() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "W:C3")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.REJECT, alert=olot.id))
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert olot.status is Status.RESOLVED and olot.detail == "refused" and olot.law == "54D"
    assert play.turn is Seat.E and play.tricks == ()
    assert play.is_major_penalty_card(Seat.W, C("C3"))
    feed(play, "E:C5 S:C8")
    assert play.turn is Seat.W
    feed(play, "W:C4")                              # the penalty card was legal: 50D / 52
    pcnp = only(log, Code.PENALTY_CARD_NOT_PLAYED)
    assert pcnp.seat is Seat.W and pcnp.param("penalty_card") == "C3"
    feed(play, "N:C2")                              # declarer plays after it: accepted
    assert only(log, Code.PENALTY_CARD_NOT_PLAYED).status is Status.RESOLVED
    assert play.is_major_penalty_card(Seat.W, C("C3"))


def test_opening_lead_out_of_turn_refused_by_the_right_lead() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "W:C3 E:S3")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert olot.detail == "refused"
    assert play.tricks[0].leader is Seat.E and play.tricks[0].cards == ((Seat.E, C("S3")),)
    assert play.turn is Seat.S
    assert play.penalty_cards == {Seat.W: frozenset({C("C3")})}


def test_opening_lead_out_of_turn_card_from_dummy_stands_54b2() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "W:C3 S:C8")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert olot.detail == "accepted" and olot.law == "54B2"
    assert play.turn is Seat.N
    feed(play, "N:C2 E:C5")
    assert play.tricks[0].winner is Seat.S


def test_opening_lead_out_of_turn_accepted_with_roles_swapped_54a() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "W:C3")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.ACCEPT, alert=olot.id, option="54A"))
    assert (play.declarer, play.dummy) == (Seat.S, Seat.N)
    assert only(log, Code.OPENING_LEAD_OUT_OF_TURN).law == "54A"
    assert play.turn is Seat.N
    feed(play, "N:C2 E:C5 S:C8")
    assert play.tricks[0].winner is Seat.S
    assert play.declarer_tricks_played == 1


def test_declaring_side_card_before_the_opening_lead_goes_back() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "N:S4")
    item = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert item.detail == "declaring_side" and item.law == "54E"
    assert play.turn is Seat.E and play.tricks == ()
    feed(play, "-N:S4")
    assert only(log, Code.OPENING_LEAD_OUT_OF_TURN).status is Status.RESOLVED
    feed(play, "E:C5")
    assert play.tricks[0].cards == ((Seat.E, C("C5")),)


def test_declarer_leads_from_the_wrong_hand_refused_and_accepted() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:CA W:C3 N:C2")               # dummy wins
    feed(play, "N:S4")                              # declarer leads from his hand
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert (lot.seat, lot.status) == (Seat.N, Status.OPEN)
    assert play.rule(Ruling(RulingKind.REJECT, alert=lot.id))
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.detail == "refused" and lot.law == "55B"   # 55B2: from the wrong hand
    assert play.turn is Seat.S and play.penalty_cards == {}
    assert C("S4") in play.remaining(Seat.N)
    feed(play, "-N:S4 S:S2 W:S5 N:S4 E:S3")
    assert play.tricks[1].winner is Seat.W

    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:CA W:C3 N:C2 N:S4 E:S3")     # E plays to it: accepted (53A)
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.detail == "accepted" and lot.law == "53A"
    assert play.turn is Seat.S


def test_defenders_lead_out_of_turn_refused_and_lead_option() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:CK S:C8 W:C3 N:C2")               # E wins
    feed(play, "W:D2")                              # W leads out of turn
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.REJECT, alert=lot.id))
    assert only(log, Code.LEAD_OUT_OF_TURN).law == "56"
    assert play.is_major_penalty_card(Seat.W, C("D2"))
    assert play.turn is Seat.E
    # 50D2: declarer requires a diamond lead; the penalty card is picked up
    assert play.rule(Ruling(RulingKind.OPTION, alert=lot.id, option="must_lead", suit=Suit.D))
    assert play.penalty_cards == {}
    assert play.legal_cards(Seat.E) == frozenset({C("DA"), C("D9"), C("D4")})
    feed(play, "E:C5")                              # ignoring the option: a revoke (61A)
    rv = only(log, Code.REVOKE)
    assert rv.seat is Seat.E and rv.detail == "61A" and rv.law == "61A"


@pytest.mark.parametrize("rules", [Rules.L2007, Rules.L2017])
def test_lead_out_of_turn_at_trick_13(rules: Rules) -> None:
    hands = {Seat.N: frozenset({C("SA"), C("H2")}), Seat.E: frozenset({C("S2"), C("H3")}),
             Seat.S: frozenset({C("S3"), C("D2")}), Seat.W: frozenset({C("S4"), C("C2")})}
    log = IrregularityLog()
    play = Play(Contract.parse("1NT"), Seat.W, log, rules=rules, hands=hands, first_trick=12)
    feed(play, "N:SA E:S2 S:S3 W:S4")               # N wins trick 12
    assert play.turn is Seat.N
    feed(play, "S:D2 W:C2 N:H2 E:H3")               # S leads to trick 13 out of turn
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert play.complete
    if rules is Rules.L2007:
        assert lot.detail == "accepted"              # W's play accepted it
        assert play.tricks[-1].winner is Seat.S
        assert play.declarer_tricks == 0
    else:
        assert lot.status is Status.OPEN             # 2017: not accepted by a play at 13
        assert play.tricks[-1].winner is Seat.S
        assert play.rule(Ruling(RulingKind.REJECT, alert=lot.id))
        assert play.tricks[-1].leader is Seat.N
        assert play.tricks[-1].winner is Seat.E     # read as N's heart lead
        assert play.declarer_tricks == 1


@pytest.mark.parametrize("rules", [Rules.L2007, Rules.L2017])
def test_defender_plays_at_rhos_turn(rules: Rules) -> None:
    play, log = new_play(T06, "3NT", "N", rules=rules)
    feed(play, "E:C5 W:C3")                         # W before dummy, partner has played
    pp = only(log, Code.PREMATURE_PLAY)
    assert play.turn is Seat.S
    if rules is Rules.L2017:
        assert pp.law == "57D" and play.penalty_cards == {}
        feed(play, "S:C8")                          # W's card made at its proper turn
        assert play.tricks[0].cards == ((Seat.E, C("C5")), (Seat.S, C("C8")),
                                        (Seat.W, C("C3")))
        assert only(log, Code.PREMATURE_PLAY).status is Status.RESOLVED
        assert play.turn is Seat.N
    else:
        assert play.is_major_penalty_card(Seat.W, C("C3"))


def test_57d_card_not_legal_at_its_turn_becomes_a_penalty_card() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 W:D2 S:C8")                    # W holds clubs: the diamond is illegal
    assert play.is_major_penalty_card(Seat.W, C("D2"))
    assert only(log, Code.PREMATURE_PLAY).detail == "penalty_card"
    assert play.turn is Seat.W
    feed(play, "W:C3")
    assert codes(log) == [Code.PREMATURE_PLAY]


def test_premature_play_option_ignored_is_a_revoke() -> None:
    play, log = new_play(T07, "1NT", "W")
    feed(play, "N:C2 E:C7 S:C9 W:CK W:DK +S:DJ")
    pp = only(log, Code.PREMATURE_PLAY)
    assert play.rule(Ruling(RulingKind.OPTION, alert=pp.id, option="lowest"))
    feed(play, "N:D8")                              # not his lowest diamond
    rv = only(log, Code.REVOKE)
    assert (rv.seat, rv.trick, rv.detail, rv.status) == (Seat.N, 2, "61A", Status.OPEN)


def test_premature_play_after_declarer_played_both_hands_57c1() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8 W:C3 N:C2  S:SA W:S5 N:S4 E:S3")   # S wins T1 and T2
    feed(play, "S:S2 N:SJ E:S6")   # declarer plays early from his hand; E plays before W
    items_pp = items(log, Code.PREMATURE_PLAY)
    assert [i.detail for i in items_pp] == ["declarer", "no_rectification"]
    assert play.penalty_cards == {}
    assert play.turn is Seat.W
    feed(play, "W:S8")
    assert play.tricks[2].winner is Seat.N


def test_penalty_card_not_played_rejected() -> None:
    play, log = new_play(T06, "3NT", "N", penalty={Seat.E: frozenset({C("SQ")})})
    assert play.is_major_penalty_card(Seat.E, C("SQ"))
    feed(play, "E:C5")                              # must lead the penalty card (50D1)
    pcnp = only(log, Code.PENALTY_CARD_NOT_PLAYED)
    assert play.rule(Ruling(RulingKind.REJECT, alert=pcnp.id))
    assert play.tricks[0].cards == ((Seat.E, C("SQ")),)
    assert play.is_major_penalty_card(Seat.E, C("C5"))
    assert only(log, Code.PENALTY_CARD_NOT_PLAYED).law == "52B2"


def test_penalty_card_from_the_auction_led_t05() -> None:
    t05 = "N:KQ86.T76.A42.AK7 J5.J985.J963.643 932..KQT75.QT952 AT74.AKQ432.8.J8"
    play, log = new_play(t05, "3NT", "N", penalty={Seat.E: frozenset({C("HJ")})})
    assert play.is_major_penalty_card(Seat.E, C("HJ"))
    feed(play, "-E:HJ +E:HJ")
    assert play.tricks[0].cards == ((Seat.E, C("HJ")),)
    assert play.penalty_cards == {}
    auto(play, t05)
    assert len(log) == 0
    assert play.declarer_tricks == 7                 # 3NT by N, 7 tricks (T05)


def test_defenders_fifth_card_and_a_lead_ruling() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:CA W:C3 N:C2 +E:D4")         # dummy won; E drops a card
    fifth = only(log, Code.FIFTH_CARD)
    # 45E1 or a lead is the director's choice (issue 30): the card waits, open
    assert fifth.law == "45E" and fifth.detail == "director_choice" and fifth.is_open
    assert play.penalty_cards == {}
    assert play.rule(Ruling(RulingKind.LEAD, alert=fifth.id))
    assert only(log, Code.FIFTH_CARD).detail == "lead"
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.seat is Seat.E and lot.status is Status.OPEN
    assert play.penalty_cards == {}
    assert play.tricks[1].cards == ((Seat.E, C("D4")),)


def test_fifth_card_treated_as_a_lead_by_the_next_hand() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:CA W:C3 N:C2 +W:D2 N:D5")    # N plays to W's card as to a lead
    assert only(log, Code.FIFTH_CARD).detail == "lead"
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.seat is Seat.W and lot.detail == "accepted"
    assert play.tricks[1].cards == ((Seat.W, C("D2")), (Seat.N, C("D5")))
    assert play.turn is Seat.E


def test_extra_card_same_trick() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8")
    feed(play, "+S:SA")
    extra = only(log, Code.EXTRA_CARD_SAME_TRICK)
    assert (extra.seat, extra.card, extra.law) == (Seat.S, C("SA"), "58B")
    assert play.tricks[0].cards == ((Seat.E, C("C5")), (Seat.S, C("C8")))
    feed(play, "-S:SA")
    assert only(log, Code.EXTRA_CARD_SAME_TRICK).status is Status.RESOLVED
    assert play.turn is Seat.W


def test_card_not_in_hand_freezes_until_taken_away() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:HK")                              # S holds the ♥K
    item = only(log, Code.CARD_NOT_IN_HAND)
    assert item.seat is Seat.E and play.frozen
    assert play.tricks == () and play.turn is Seat.E
    feed(play, "-E:HK")
    assert not play.frozen
    assert only(log, Code.CARD_NOT_IN_HAND).status is Status.RESOLVED
    feed(play, "E:C5")
    assert play.tricks[0].cards == ((Seat.E, C("C5")),)


def test_card_withdrawn_stays_played() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8 -E:C5")
    item = only(log, Code.CARD_WITHDRAWN)
    assert (item.seat, item.card, item.law, item.status) == (Seat.E, C("C5"), "47", Status.OPEN)
    assert play.tricks[0].cards == ((Seat.E, C("C5")), (Seat.S, C("C8")))
    assert play.turn is Seat.W
    feed(play, "+E:C5")
    assert only(log, Code.CARD_WITHDRAWN).status is Status.RESOLVED
    feed(play, "W:C3 N:C2")
    assert play.tricks[0].winner is Seat.S


def test_defenders_revoke_corrected_leaves_a_major_penalty_card() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8 W:D2")
    assert only(log, Code.REVOKE).status is Status.OPEN
    feed(play, "-W:D2 +W:C3")
    rv = only(log, Code.REVOKE)
    assert rv.status is Status.CORRECTED and rv.law == "62B1"
    assert play.is_major_penalty_card(Seat.W, C("D2"))
    assert play.tricks[0].cards[-1] == (Seat.W, C("C3"))


def test_both_sides_established_revokes_no_transfer_64b7() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8 W:D2 N:C2")               # W revokes; dummy wins
    feed(play, "S:H4 W:H2 N:S4 E:H5")               # W's revoke established; N revokes
    feed(play, "E:CK N:C7")                         # N's revoke established
    auto(play, T06)
    revokes = items(log, Code.REVOKE)
    assert [(r.seat, r.status) for r in revokes] == [(Seat.W, Status.ESTABLISHED),
                                                     (Seat.N, Status.ESTABLISHED)]
    assert all(r.detail == "64B7" and r.param("tricks_transferred") == 0 for r in revokes)
    assert play.declarer_tricks == play.declarer_tricks_played


def test_revoke_cleared_by_the_director_is_not_transferred() -> None:
    play, log = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    rv = only(log, Code.REVOKE)
    auto(play, T08)
    assert play.declarer_tricks == 11
    assert play.rule(Ruling(RulingKind.CLEAR, alert=rv.id))
    assert only(log, Code.REVOKE).status is Status.RESOLVED
    assert play.declarer_tricks == 9


def test_claim_and_adjust() -> None:
    play, log = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4")
    assert play.rule(Ruling(RulingKind.CLAIM, tricks=10))
    assert play.complete and play.turn is None
    assert play.declarer_tricks_played == 10
    assert play.declarer_tricks == 10
    assert play.rule(Ruling(RulingKind.ADJUST, tricks=9))
    assert play.declarer_tricks == 9
    assert len(log) == 0


def test_claim_establishes_an_open_revoke_63a3() -> None:
    play, log = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    assert play.rule(Ruling(RulingKind.CLAIM, tricks=6))
    rv = only(log, Code.REVOKE)
    assert rv.status is Status.ESTABLISHED
    # E won T6 (64A1): T6 and one later EW trick; the claim gives EW one more trick
    assert rv.param("tricks_transferred") == 2
    assert play.declarer_tricks == 3 + 6 + 2


def test_rulings_on_unknown_alerts_are_not_ours() -> None:
    play, _ = new_play(T06, "3NT", "N")
    assert not play.rule(Ruling(RulingKind.ACCEPT, alert=999))
    assert not play.rule(Ruling(RulingKind.REJECT))


def test_stray_events_do_not_crash_or_count() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "-E:C5 -N:SA")                       # takes of tags never put
    feed(play, "E:C5 E:C5")                         # a re-read of the same tag
    assert play.tricks[0].cards == ((Seat.E, C("C5")),) and len(log) == 0


def test_rebuilding_from_the_same_events_gives_the_same_board() -> None:
    events = ("E:HT S:H3 W:H2 N:C6 -N:C6 +N:HJ N:SK E:SA S:S2 W:S6 +N:D5 -N:D5")

    def build() -> tuple[Play, IrregularityLog]:
        play, log = new_play(T10, "2NT", "N")
        feed(play, events)
        auto(play, T10)
        return play, log

    (p1, l1), (p2, l2) = build(), build()
    assert p1.tricks == p2.tricks and list(l1) == list(l2)
    assert p1.declarer_tricks == p2.declarer_tricks == 8


def test_defective_trick_corrected_under_67a() -> None:
    play, log = new_play(T12, "3NT", "W")
    feed(play, "N:SK E:SA S:S3 W:S5  E:CA S:C5 W:C4 N:C2  E:CQ S:C9 W:CT N:C3"
               " E:C6 S:CJ W:H2 N:CK  N:H3 E:HT S:H4 W:HQ  W:SJ N:SQ E:D4")
    feed(play, "+N:ST")                             # T6 defective, only NS has played on
    feed(play, "+S:S4")                             # S adds a legal card: 67A
    dt = only(log, Code.DEFECTIVE_TRICK)
    assert dt.status is Status.CORRECTED and dt.detail == "67A"
    assert play.tricks[5].cards[-1] == (Seat.S, C("S4"))
    assert play.tricks[5].winner is Seat.N
    assert play.turn is Seat.E
    feed(play, "E:D5 S:S7 W:S6")
    auto(play, T12)
    assert play.declarer_tricks == play.declarer_tricks_played == 9
    assert codes(log) == [Code.DEFECTIVE_TRICK]


def test_revoke_failing_to_play_a_penalty_card_is_not_transferred_64b3() -> None:
    # a three-card ending: W's only club is a penalty card lying face up
    hands = {Seat.E: frozenset(map(C, ["CA", "D2", "D3"])),
             Seat.S: frozenset(map(C, ["C2", "S2", "S3"])),
             Seat.W: frozenset(map(C, ["C3", "H2", "H3"])),
             Seat.N: frozenset(map(C, ["C4", "S4", "S5"]))}
    log = IrregularityLog()
    play = Play(Contract.parse("1NT"), Seat.N, log, hands=hands, first_trick=11,
                penalty_cards={Seat.W: frozenset({C("C3")})})
    assert not play.is_major_penalty_card(Seat.W, C("C3"))     # one low card: minor
    feed(play, "E:CA S:C2 W:H2 N:C4  E:D2 S:S2 W:H3 N:S4  E:D3 S:S3 W:C3 N:S5")
    rv = only(log, Code.REVOKE)
    assert (rv.seat, rv.trick, rv.status) == (Seat.W, 11, Status.ESTABLISHED)
    assert rv.detail == "64B3" and rv.param("tricks_transferred") == 0
    assert play.declarer_tricks == 0


def test_unknown_hands_are_inferred_from_the_cards_played() -> None:
    play, _ = new_play(T06, "3NT", "N", known=False)
    assert play.known_hands == {}
    auto(play, T06)
    assert play.known_hands == {s: Deal.from_pbn(T06)[s] for s in Seat}


@pytest.mark.parametrize("rules", [Rules.L2007, Rules.L2017])
def test_both_sides_revoke_on_one_trick(rules: Rules) -> None:
    play, log = new_play(T06, "3NT", "N", rules=rules)
    feed(play, "E:C5 S:D3 W:D2 N:C2")   # S (dummy) and W both revoke; N wins with ♣2?
    revokes = items(log, Code.REVOKE)
    assert [r.seat for r in revokes] == [Seat.S, Seat.W]
    winner = play.tricks[0].winner
    assert winner is Seat.E
    feed(play, "E:CK")                              # only EW play on: W's revoke established
    w_revoke = items(log, Code.REVOKE)[1]
    assert w_revoke.status is Status.ESTABLISHED
    assert w_revoke.law == ("62C3" if rules is Rules.L2017 else "63A1")


def test_revoke_cleared_through_the_log_is_not_transferred() -> None:
    # the Table applies ``clear`` to the log itself; Play must read it from there
    play, log = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    auto(play, T08)
    rv = only(log, Code.REVOKE)
    log.update(rv.id, status=Status.RESOLVED, detail="cleared")
    assert play.declarer_tricks == 9 and play.tricks_transferred == 0


def test_card_not_in_hand_cleared_through_the_log_unfreezes() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:HK")
    item = only(log, Code.CARD_NOT_IN_HAND)
    assert play.frozen
    log.update(item.id, status=Status.RESOLVED, detail="cleared")
    assert not play.frozen


def test_revoke_corrected_after_the_fourth_card_and_a_retraction_62c() -> None:
    play, log = new_play(T06, "3NT", "N")
    feed(play, "E:C5 S:C8 W:D2 N:C2")               # W revokes, trick complete
    assert play.tricks[0].winner is Seat.S
    feed(play, "-W:D2 +W:CT")                       # corrected with the ♣T
    rv = only(log, Code.REVOKE)
    assert rv.status is Status.CORRECTED and rv.law == "62B1"
    assert play.is_major_penalty_card(Seat.W, C("D2"))
    assert play.tricks[0].winner is Seat.W
    assert play.turn is Seat.W
    feed(play, "-N:C2 +N:CJ")                       # declarer may now change his card (62C1)
    assert play.tricks[0].cards[-1] == (Seat.N, C("CJ"))
    assert play.tricks[0].winner is Seat.N
    assert play.turn is Seat.N
    assert codes(log) == [Code.REVOKE]
    feed(play, "-S:C8")                             # played before the revoke: not allowed
    assert only(log, Code.CARD_WITHDRAWN).card == C("C8")


def test_declarers_fifth_card_left_on_the_tray_is_played_in_turn() -> None:
    play, log = new_play(T10, "2NT", "N")
    feed(play, "E:HT S:H3 W:H2 N:HJ  N:SK E:SA S:S2 W:S6 +N:D5")
    feed(play, "E:D2 S:D3 W:D4 +N:D5")              # a tap reader sees the ♦5 again
    assert play.tricks[2].cards[-1] == (Seat.N, C("D5"))
    assert only(log, Code.FIFTH_CARD).status is Status.RESOLVED
    assert play.tricks[2].winner is Seat.N


# (present?, seats away from the card's holder: mostly its own, card)
event_strategy = st.lists(
    st.tuples(st.sampled_from([True, True, True, False]), st.sampled_from([0, 0, 0, 0, 1, 2, 3]),
              st.sampled_from(FULL_DECK)),
    max_size=120,
)


@settings(max_examples=200, deadline=None)
@given(st.permutations(FULL_DECK), st.sampled_from(list(Seat)), st.booleans(), event_strategy,
       st.sampled_from([Rules.L2007, Rules.L2017]))
def test_garbage_events_never_crash(order: list[Card], declarer: Seat, known: bool,
                                    events: list[tuple[bool, int, Card]],
                                    rules: Rules) -> None:
    hands = deal_from(order)
    log = IrregularityLog()
    play = Play(Contract.parse("2H"), declarer, log, rules=rules,
                hands=hands if known else None)
    deal = Deal.from_hands(dict(hands))
    for present, away, card in events:
        holder = deal.holder(card)
        assert holder is not None
        seat = holder.rotated(away)
        if present:
            play.put(seat, card)
        else:
            play.take(seat, card)
        check_invariants(play)
    # the director answers every open alert, in order; then the board is played out
    for item in list(log):
        if item.status is Status.OPEN:
            for kind in (RulingKind.ACCEPT, RulingKind.REJECT, RulingKind.LEAD):
                play.rule(Ruling(kind, alert=item.id))
                check_invariants(play)
    guard = 0
    while not play.complete and guard < 80:
        due = play.turn
        assert due is not None
        if not held(play, deal, due):
            break
        play.put(due, auto_card(play, due, deal))
        check_invariants(play)
        guard += 1
    assert 0 <= play.declarer_tricks <= 13


def check_invariants(play: Play) -> None:
    tricks = play.tricks
    for t in tricks:
        seats = [s for s, _ in t.cards]
        assert len(seats) == len(set(seats)) <= 4
        assert (t.winner is not None) == (len(seats) == 4) or t.winner is not None
    numbers = [t.number for t in tricks]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    played = [c for t in tricks for _, c in t.cards]
    assert len(played) == len(set(played))
    assert (play.turn is None) == play.complete
    assert 0 <= play.declarer_tricks_played <= 13


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(board_strategy, st.booleans(), st.sampled_from([Rules.L2007, Rules.L2017]))
def test_perturbed_play_with_rulings_never_breaks_the_tricks(
        drawn: tuple[list[Card], str, Seat, random.Random], known: bool, rules: Rules) -> None:
    """Mostly AUTO play, with cards from the wrong hand, withdrawals, put-backs and random
    director rulings: no crash, and the tricks stay well formed."""
    order, denomination, declarer, rng = drawn
    hands = deal_from(order)
    deal = Deal.from_hands(dict(hands))
    log = IrregularityLog()
    play = Play(Contract.parse(f"2{denomination}"), declarer, log, rules=rules,
                hands=hands if known else None)
    for _ in range(90):
        if play.complete:
            break
        seat = play.turn
        assert seat is not None
        roll = rng.random()
        if roll < 0.75:
            hand = held(play, deal, seat)
            if not hand:
                break
            card = auto_card(play, seat, deal) if rng.random() < 0.5 else rng.choice(sorted(hand))
            play.put(seat, card)
        elif roll < 0.9:
            other = Seat(rng.randrange(4))
            hand = held(play, deal, other)
            if hand:
                play.put(other, rng.choice(sorted(hand)))
        elif roll < 0.93:
            opened = [i for i in log if i.status is Status.OPEN]
            if opened:
                item = rng.choice(opened)
                hand = held(play, deal, item.seat) if item.seat is not None else set()
                play.rule(Ruling(
                    rng.choice([RulingKind.ACCEPT, RulingKind.REJECT, RulingKind.LEAD,
                                RulingKind.CLEAR, RulingKind.OPTION]),
                    alert=item.id, seat=item.seat,
                    option=rng.choice(["highest", "lowest", "must_lead", "must_not_lead"]),
                    suit=rng.choice(list(Suit)),
                    card=rng.choice(sorted(hand)) if hand and rng.random() < 0.5 else None))
        else:
            tricks = play.tricks
            if tricks and tricks[-1].cards:
                s, c = rng.choice(tricks[-1].cards)
                play.take(s, c)
                if rng.random() < 0.5:
                    play.put(s, c)
        check_invariants(play)
    assert 0 <= play.declarer_tricks <= 13


def test_bad_trick_counts_from_the_console_are_refused() -> None:
    play, _ = new_play(T08, "4H", "S")
    feed(play, "W:CT N:C3 E:CA S:C7")
    assert not play.rule(Ruling(RulingKind.CLAIM, tricks=13))    # only 12 tricks are left
    assert not play.rule(Ruling(RulingKind.CLAIM))
    assert not play.rule(Ruling(RulingKind.ADJUST, tricks=14))
    assert not play.complete
    assert play.rule(Ruling(RulingKind.CLAIM, tricks=12))
    assert not play.rule(Ruling(RulingKind.CLAIM, tricks=1))     # play is already over
    assert play.declarer_tricks == 12
