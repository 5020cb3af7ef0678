"""The auction (Laws 17-39) at the Auction level: calls fed directly, no table, no wire.

Events are written as in laws.md section 7: ``N:1C`` a call, ``-N:1C`` the call card taken
back, ``+E:HJ`` a card exposed, ``-E:HJ`` with a card (two characters after the colon and
a suit letter first) the exposed card taken back, ``TD:reject@1`` a ruling on alert 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.laws.auction import Auction
from controller.laws.cards import (
    Bid,
    Call,
    CallKind,
    Card,
    Denomination,
    Doubling,
    Rules,
    Seat,
)
from controller.laws.irregularities import Code, Irregularity, IrregularityLog, Status
from controller.laws.rulings import Ruling, RulingKind

L2007, L2017 = Rules.L2007, Rules.L2017
N, E, S, W = Seat.N, Seat.E, Seat.S, Seat.W


@dataclass
class Run:
    auction: Auction
    log: IrregularityLog
    changes: list[Irregularity]   # every change drained from the log, in order

    def items(self, code: Code | None = None) -> list[Irregularity]:
        return [i for i in self.log if code is None or i.code is code]

    def one(self, code: Code) -> Irregularity:
        found = self.items(code)
        assert len(found) == 1, (code, self.items())
        return found[0]

    def history(self, item_id: int) -> list[tuple[Status, str]]:
        return [(i.status, i.detail) for i in self.changes if i.id == item_id]

    @property
    def calls(self) -> str:
        return " ".join(f"{s}:{c}" for s, c in self.auction.calls)


def feed(run: Run, events: str) -> Run:
    a = run.auction
    for ev in events.split():
        if ev.startswith("TD:"):
            kind, _, alert = ev[3:].partition("@")
            a.rule(Ruling(RulingKind(kind), alert=int(alert) if alert else None))
        else:
            sign = ev[0] if ev[0] in "+-" else ""
            seat_text, _, what = ev.lstrip("+-").partition(":")
            seat = Seat.parse(seat_text)
            card = _card_or_none(what)
            if sign == "+":
                assert card is not None
                a.expose(seat, card)
            elif sign == "-" and card is not None:
                a.unexpose(seat, card)
            elif sign == "-":
                a.withdraw(seat, Call.parse(what))
            else:
                a.call(seat, Call.parse(what))
        run.changes += run.log.drain()
    return run


def _card_or_none(text: str) -> Card | None:
    """``HJ``, ``D5``: a card; calls never start with a suit letter (``1C``, ``X``, ``Pass``)."""
    return Card.parse(text) if len(text) == 2 and text[0] in "SHDC" else None


def run(dealer: Seat, events: str, rules: Rules = L2017) -> Run:
    log = IrregularityLog()
    return feed(Run(Auction(dealer, log, rules=rules), log, []), events)


def contract_of(r: Run) -> tuple[str, Seat | None, Seat | None, Seat | None]:
    a = r.auction
    assert a.complete and a.turn is None
    return str(a.contract), a.declarer, a.dummy, a.opening_leader


# ---------------------------------------------------------------- laws.md section 7

def test_t02_bid_out_of_rotation_at_partners_turn_2007() -> None:
    r = run(N, "N:1C W:1S", L2007)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.seat, coor.status, r.auction.pending) == (W, Status.OPEN, coor.id)
    feed(r, f"TD:reject@{coor.id}")
    assert r.auction.obligations == {E: "pass_all"}   # 31B
    assert r.auction.turn is E
    feed(r, "E:P S:1H W:1S N:2C E:P")
    assert r.auction.obligations == {E: "pass_all"}   # lasts until the auction ends
    feed(r, "S:P W:P")
    assert contract_of(r) == ("2C", N, S, E)
    assert r.items() == [r.log.get(coor.id)]          # E's passes were compliant
    assert r.log.get(coor.id) == r.changes[-1]
    assert (r.changes[-1].status, r.changes[-1].law) == (Status.RESOLVED, "31B")
    assert r.auction.lead_restrictions == ()          # W repeated spades legally (26A1)
    assert r.calls == "N:1C E:Pass S:1H W:1S N:2C E:Pass S:Pass W:Pass"
    first = r.auction.record[1]
    assert (first.seat, str(first.call), first.cancelled, first.irregularity) == \
        (W, "1S", True, coor.id)


def test_t02_bid_out_of_rotation_at_partners_turn_2017() -> None:
    r = run(N, "N:1C W:1S", L2017)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    feed(r, f"TD:reject@{coor.id} E:P S:1H W:1S")
    assert r.auction.obligations == {}                # E unrestricted (16C2)
    assert r.log.get(coor.id).detail == "awaiting_comparable"  # type: ignore[union-attr]
    assert r.log.get(coor.id).is_open  # type: ignore[union-attr]
    feed(r, f"TD:comparable@{coor.id} N:2C E:P S:P W:P")
    done = r.log.get(coor.id)
    assert done is not None and (done.status, done.detail) == (Status.RESOLVED, "comparable")
    assert r.auction.obligations == {}
    assert contract_of(r) == ("2C", N, S, E)
    assert r.auction.lead_restrictions == ()
    assert len(r.items()) == 1


def test_t02_2017_not_comparable_gives_partner_pass_next() -> None:
    r = run(N, "N:1C W:1S TD:reject@1 E:P S:1H W:2NT TD:not_comparable@1", L2017)
    assert r.auction.obligations == {E: "pass_next"}  # 31B -> 31A2(b)
    feed(r, "N:3C E:P")
    assert r.auction.obligations == {}
    assert r.one(Code.CALL_OUT_OF_ROTATION).detail == "not_comparable"
    assert r.auction.lead_restrictions == ((E, "26B"),)


def test_t03_insufficient_bid_accepted() -> None:
    r = run(E, "E:P S:1S W:P N:2C E:1H")
    ib = r.one(Code.INSUFFICIENT_BID)
    assert (ib.seat, str(ib.call), ib.status) == (E, "1H", Status.OPEN)
    feed(r, "S:2S")
    ib = r.one(Code.INSUFFICIENT_BID)
    assert (ib.status, ib.detail, ib.law) == (Status.RESOLVED, "accepted", "27A1")
    assert str(r.auction.last_bid) == "2S"
    feed(r, "W:P N:4S E:P S:P W:P")
    assert contract_of(r) == ("4S", S, N, W)          # S named spades first (1S)
    assert len(r.items()) == 1


def test_t03_accepted_insufficient_bid_becomes_last_bid() -> None:
    # 27A1: later bids need only beat the insufficient bid: S's 1S is sufficient over 1H
    r = run(E, "E:P S:1S W:P N:2C E:1H S:1S")
    assert r.one(Code.INSUFFICIENT_BID).detail == "accepted"
    assert str(r.auction.last_bid) == "1S" and len(r.items()) == 1


def test_t04_inadmissible_double_lho_calls_over_it() -> None:
    r = run(S, "S:1H W:P N:3H E:P S:X")
    x = r.one(Code.INADMISSIBLE_DOUBLE)
    assert (x.seat, x.status) == (S, Status.OPEN)
    feed(r, "W:P")
    x = r.one(Code.INADMISSIBLE_DOUBLE)
    assert (x.status, x.detail, x.law) == (Status.RESOLVED, "cancelled_later", "36A")
    assert r.auction.turn is S and r.auction.obligations == {}
    feed(r, "S:4H W:P N:P E:P")
    assert contract_of(r) == ("4H", S, N, W)
    assert r.auction.lead_restrictions == ()
    cancelled = [(e.seat, str(e.call)) for e in r.auction.record if e.cancelled]
    assert cancelled == [(S, "X"), (W, "Pass")]


def test_t05_exposed_honour_then_call_after_close() -> None:
    r = run(W, "W:1H N:X +E:HJ", L2017)
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.seat, x.card, x.detail, x.law) == (E, Card.parse("HJ"), "honour", "24B")
    assert r.auction.obligations == {W: "pass_next"}
    feed(r, "E:P S:2D W:P")
    assert r.auction.obligations == {}                # satisfied
    feed(r, "N:3NT E:P S:P W:P")
    assert contract_of(r) == ("3NT", N, S, E)
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.status, x.param("penalty")) == (Status.ESTABLISHED, "major")
    assert x.detail == "honour,major_penalty_card"
    assert r.auction.penalty_cards == {E: frozenset({Card.parse("HJ")})}
    assert r.auction.minor_penalty_cards == {}
    feed(r, "E:X")
    late = r.one(Code.CALL_AFTER_AUCTION_CLOSED)
    assert (late.seat, late.law, late.detail, late.param("lead_restriction")) == \
        (E, "39C", "cancelled,lead_restriction", "W")
    assert r.auction.lead_restrictions == ((W, "26B"),)
    assert r.auction.calls[-1] == (W, Call.parse("Pass"))  # the X did not stand
    r.auction.face_opening_lead()
    assert r.log.get(late.id).status is Status.RESOLVED  # type: ignore[union-attr]
    assert len(r.items()) == 2


# ---------------------------------------------------------------- Laws 17, 22

def test_passed_out() -> None:
    r = run(E, "E:P S:P W:P N:P")
    assert contract_of(r) == ("Pass", None, None, None)
    assert r.auction.passed_out and r.auction.contract is not None
    assert r.auction.contract.passed_out


def test_three_passes_after_doubled_contract() -> None:
    r = run(N, "N:1S E:X S:XX W:P N:P E:P")
    assert contract_of(r) == ("1SXX", N, S, E)
    assert r.auction.doubling is Doubling.REDOUBLED


def test_declarer_counts_superseded_bids() -> None:
    r = run(N, "N:1H E:P S:2C W:P N:2NT E:P S:3NT W:P N:P E:P")
    assert contract_of(r)[1] is N


def test_pass_out_of_rotation_that_skipped_a_player_does_not_end_it() -> None:
    # N 1C, E P, then W passes at S's turn; N (W's LHO) accepts by passing: three passes,
    # but S never had his turn -> back to S, W's and N's passes cancelled (17D3)
    r = run(N, "N:1C E:P W:P N:P")
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.detail, coor.law, coor.param("reverted_to")) == ("reverted", "17D3", "S")
    assert not r.auction.complete and r.auction.turn is S
    assert r.calls == "N:1C E:Pass"
    feed(r, "S:1D W:P N:P E:P")
    assert contract_of(r) == ("1D", S, N, W)


def test_pass_out_of_rotation_2007_cites_17E2() -> None:
    r = run(N, "N:1C E:P W:P N:P", L2007)
    assert r.one(Code.CALL_OUT_OF_ROTATION).law == "17E2"


def test_accepted_pass_out_of_rotation_in_opening_round_can_pass_out() -> None:
    # E passes at N's turn, S accepts by passing; W and N pass: all four passed
    r = run(N, "E:P S:P W:P N:P")
    assert r.one(Code.CALL_OUT_OF_ROTATION).detail == "accepted"
    assert contract_of(r)[0] == "Pass"


# ---------------------------------------------------------------- calls out of rotation

def test_call_out_of_rotation_accepted_by_lho_rotation_continues() -> None:
    r = run(N, "S:1H W:P")                            # S at his partner's turn
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.status, coor.detail, coor.law) == (Status.RESOLVED, "accepted", "29A")
    assert r.auction.turn is N and r.calls == "S:1H W:Pass"


def test_call_out_of_rotation_cancelled_when_player_due_calls() -> None:
    r = run(N, "E:1S N:1C")
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.status, coor.detail, coor.law) == (Status.RESOLVED, "cancelled", "28B")
    assert r.calls == "N:1C" and r.auction.turn is E
    assert r.auction.obligations == {}


def test_call_out_of_rotation_accept_ruling() -> None:
    r = run(N, "E:1S TD:accept@1")
    assert r.one(Code.CALL_OUT_OF_ROTATION).detail == "accepted"
    assert r.calls == "E:1S" and r.auction.turn is S


@pytest.mark.parametrize(
    ("rules", "events", "law", "obligations", "status"),
    [
        # pass before any bid (2007 30A): offender pass_next
        (L2007, "S:P TD:reject@1", "30A", {S: "pass_next"}, Status.RESOLVED),
        # pass at RHO's turn after a bid
        (L2007, "N:1C S:P TD:reject@1", "30B1", {S: "pass_next"}, Status.RESOLVED),
        (L2017, "N:1C S:P TD:reject@1", "30A", {S: "pass_next"}, Status.RESOLVED),
        # pass at partner's turn after a bid: 2007 offender pass_all; 2017 partner free
        (L2007, "N:1C E:P N:P TD:reject@1", "30B2", {N: "pass_all"}, Status.RESOLVED),
        (L2017, "N:1C E:P N:P TD:reject@1", "30B", {}, Status.OPEN),
        # bid at partner's turn: 2007 partner pass_all; 2017 judged later
        (L2007, "N:1C E:P N:1H TD:reject@1", "31B", {S: "pass_all"}, Status.RESOLVED),
        (L2017, "N:1C E:P N:1H TD:reject@1", "31B", {}, Status.OPEN),
        # double at partner's turn
        (L2007, "N:1C W:X TD:reject@1", "32A", {E: "pass_all"}, Status.RESOLVED),
        (L2017, "N:1C W:X TD:reject@1", "32B", {}, Status.OPEN),
    ],
)
def test_call_out_of_rotation_rectification_table(
        rules: Rules, events: str, law: str, obligations: dict[Seat, str],
        status: Status) -> None:
    r = run(N, events, rules)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.law, coor.status) == (law, status)
    assert coor.detail.split(",")[0] == "rejected"
    assert r.auction.obligations == obligations
    assert r.auction.pending is None
    assert all(e.cancelled for e in r.auction.record if e.irregularity == coor.id)


def test_bid_at_rhos_turn_rho_passes_offender_repeats_2007() -> None:
    r = run(S, "W:1S TD:reject@1 S:P W:1S", L2007)     # W bid at his RHO's (S's) turn
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.status, coor.detail, coor.law) == (Status.RESOLVED, "repeated", "31A1")
    assert r.auction.obligations == {}


@pytest.mark.parametrize(
    ("again", "detail", "law", "obligations"),
    [("2S", "same_denomination,pass_next", "31A2a", {E: "pass_next"}),
     ("2NT", "other_call,pass_all", "31A2b", {E: "pass_all"})],
)
def test_bid_at_rhos_turn_rho_acts_2007(again: str, detail: str, law: str,
                                        obligations: dict[Seat, str]) -> None:
    # S is due (dealer S), W bids at his RHO's turn; S acts, then W calls again
    r = run(S, f"W:1S TD:reject@1 S:1H W:{again}", L2007)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.detail, coor.law) == (detail, law)
    assert r.auction.obligations == obligations


def test_bid_at_rhos_turn_rho_acts_2017_not_comparable() -> None:
    r = run(S, "W:1S TD:reject@1 S:1H W:2C", L2017)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.detail, coor.status) == ("awaiting_comparable", Status.OPEN)
    feed(r, f"TD:not_comparable@{coor.id}")
    assert r.auction.obligations == {E: "pass_next"}
    assert r.one(Code.CALL_OUT_OF_ROTATION).law == "31A"


def test_double_at_rhos_turn_rho_acts_2007_partner_pass_all() -> None:
    # W doubles N's 1C at S's turn (an admissible double: an inadmissible one out of
    # rotation is Law 36, tests/test_law36_inadmissible_double.py)
    r = run(N, "N:1C E:P W:X TD:reject@1 S:1H", L2007)
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.status, coor.law) == (Status.RESOLVED, "32B2")
    assert r.auction.obligations == {E: "pass_all"}


def test_barred_player_implied_pass_28a() -> None:
    # S must pass (30B1); W calls at S's turn: in rotation, S's pass implied
    r = run(N, "N:1C S:P TD:reject@1 E:P W:1H")
    assert len(r.items()) == 1
    assert r.calls == "N:1C E:Pass S:Pass W:1H"
    assert r.auction.record[-2].note.startswith("implied pass")
    assert r.auction.obligations == {}                # the implied pass satisfied it


def test_call_while_another_is_pending_is_flagged_not_lost() -> None:
    r = run(N, "W:1S E:1H")     # W at N's turn; E is neither N (due) nor W's LHO (N)
    items = r.items(Code.CALL_OUT_OF_ROTATION)
    assert [i.detail for i in items] == ["pending", "while_pending"]
    assert r.auction.pending == items[0].id
    assert len(r.auction.record) == 2 and r.auction.record[1].cancelled


# ---------------------------------------------------------------- Law 27

def test_insufficient_bid_replaced_by_lowest_sufficient_same_denomination() -> None:
    r = run(N, "N:1S E:1H -E:1H E:2H")
    ib = r.one(Code.INSUFFICIENT_BID)
    assert (ib.status, ib.detail, ib.law) == (Status.OPEN, "lowest_sufficient", "27B1a")
    assert r.auction.obligations == {} and r.calls == "N:1S E:2H"
    feed(r, f"TD:comparable@{ib.id}")
    assert r.one(Code.INSUFFICIENT_BID).status is Status.RESOLVED
    assert r.auction.obligations == {}


def test_insufficient_bid_27b1a_not_confirmed_gives_pass_all() -> None:
    r = run(N, "N:1S E:1H E:2H TD:not_comparable@1")
    assert r.one(Code.INSUFFICIENT_BID).law == "27B2"
    assert r.auction.obligations == {W: "pass_all"}


def test_insufficient_bid_replaced_by_other_call_partner_pass_all() -> None:
    r = run(N, "N:1S E:1H E:P", L2007)
    ib = r.one(Code.INSUFFICIENT_BID)
    assert (ib.status, ib.detail, ib.law) == (Status.RESOLVED, "replaced,pass_all", "27B2")
    assert r.auction.obligations == {W: "pass_all"}
    feed(r, f"TD:comparable@{ib.id}")                 # 27B1b: the director lifts it
    assert r.auction.obligations == {}
    assert r.one(Code.INSUFFICIENT_BID).law == "27B1b"


def test_insufficient_bid_replaced_by_double_27b3() -> None:
    r = run(N, "N:1S E:1H E:X")
    ib = r.one(Code.INSUFFICIENT_BID)
    assert (ib.status, ib.detail, ib.law) == (Status.RESOLVED, "cancelled,pass_all", "27B3")
    assert r.auction.turn is E and r.calls == "N:1S"
    assert r.auction.obligations == {W: "pass_all"}
    feed(r, "E:2H")
    assert r.calls == "N:1S E:2H" and len(r.items()) == 1


def test_insufficient_bid_rejected_lho_cannot_accept_any_more() -> None:
    r = run(N, "N:1S E:1H TD:reject@1 S:P")
    assert r.one(Code.INSUFFICIENT_BID).detail == "rejected"
    assert r.items(Code.CALL_OUT_OF_ROTATION)[0].detail == "while_pending"
    feed(r, "E:1NT")
    assert r.calls == "N:1S E:1NT"


def test_insufficient_replacement_is_struck_and_bid_still_pending() -> None:
    # 2007 (2017 27B4 lets LHO accept the second insufficient bid: test_law27_insufficient_bid)
    r = run(N, "N:2S E:1H E:2H", L2007)
    ib = r.one(Code.INSUFFICIENT_BID)
    assert ib.is_open and ib.param("invalid_replacement") == "2H"
    assert r.auction.pending == ib.id


# ---------------------------------------------------------------- Laws 36, 37, 38

def test_inadmissible_double_rejected_36b() -> None:
    r = run(N, "N:1C E:P S:X")
    x = r.one(Code.INADMISSIBLE_DOUBLE)
    feed(r, f"TD:reject@{x.id}")
    x = r.one(Code.INADMISSIBLE_DOUBLE)
    assert (x.status, x.law) == (Status.RESOLVED, "36B")
    assert r.auction.turn is S and r.auction.obligations == {N: "pass_all"}


def test_inadmissible_double_offender_replaces_it() -> None:
    r = run(N, "N:X")
    x = r.one(Code.INADMISSIBLE_DOUBLE)
    feed(r, "N:1C")
    assert r.log.get(x.id).law == "36B"  # type: ignore[union-attr]
    assert r.calls == "N:1C" and r.auction.obligations == {S: "pass_all"}


def test_inadmissible_redouble() -> None:
    r = run(N, "N:1C E:P S:XX")
    assert r.one(Code.INADMISSIBLE_REDOUBLE).seat is S
    r = run(N, "N:1C E:X S:P W:XX")                   # W redoubles partner's double
    assert r.one(Code.INADMISSIBLE_REDOUBLE).seat is W


def test_call_by_player_required_to_pass_accepted_by_lho_37a() -> None:
    r = run(N, "N:1C E:P N:P TD:reject@1", L2007)    # N must pass throughout (30B2)
    feed(r, "S:1D W:P N:1H")
    oblig = r.one(Code.CALL_BY_PLAYER_REQUIRED_TO_PASS)
    assert oblig.is_open and r.auction.pending == oblig.id
    feed(r, "E:P")
    oblig = r.one(Code.CALL_BY_PLAYER_REQUIRED_TO_PASS)
    assert (oblig.status, oblig.law) == (Status.RESOLVED, "37A")
    assert r.calls.endswith("N:1H E:Pass")
    assert r.auction.obligations == {N: "pass_all"}   # still holds


def test_call_by_player_required_to_pass_rejected_37b() -> None:
    r = run(N, "N:1C S:P TD:reject@1 E:P S:1H")      # S must pass next (30A)
    oblig = r.one(Code.CALL_BY_PLAYER_REQUIRED_TO_PASS)
    feed(r, f"TD:reject@{oblig.id}")
    oblig = r.one(Code.CALL_BY_PLAYER_REQUIRED_TO_PASS)
    assert (oblig.status, oblig.law) == (Status.RESOLVED, "37B")
    assert r.calls == "N:1C E:Pass S:Pass"
    assert r.auction.obligations == {S: "pass_all", N: "pass_all"}
    assert r.auction.turn is W


def test_bid_above_seven() -> None:
    r = run(N, "N:1C E:8NT")
    b = r.one(Code.BID_ABOVE_SEVEN)
    assert (b.seat, b.status, b.law) == (E, Status.RESOLVED, "38")
    assert r.calls == "N:1C E:Pass"                   # a pass substituted
    assert r.auction.obligations == {E: "pass_all", W: "pass_all"}
    assert r.auction.record[1].cancelled


# ---------------------------------------------------------------- Law 25

def test_change_of_call_accepted_when_lho_calls() -> None:
    r = run(N, "N:1C -N:1C N:1D")
    coc = r.one(Code.CHANGE_OF_CALL)
    assert (coc.status, coc.param("original")) == (Status.OPEN, "1C")
    feed(r, "E:P")
    coc = r.one(Code.CHANGE_OF_CALL)
    assert (coc.status, coc.detail) == (Status.RESOLVED, "accepted")
    assert r.calls == "N:1D E:Pass"
    assert [(str(e.call), e.cancelled) for e in r.auction.record] == \
        [("1C", True), ("1D", False), ("Pass", False)]
    assert contract_of(feed(r, "S:P W:P"))[:2] == ("1D", N)


def test_change_of_call_rejected_first_call_stands() -> None:
    r = run(N, "N:1C N:1D TD:reject@1 E:P")
    assert r.one(Code.CHANGE_OF_CALL).detail == "cancelled"
    assert r.calls == "N:1C E:Pass"


def test_change_of_call_taken_back_first_call_stands() -> None:
    r = run(N, "N:1C -N:1C N:1D -N:1D N:1C")
    assert r.one(Code.CHANGE_OF_CALL).detail == "cancelled"
    assert r.calls == "N:1C" and r.auction.pending is None


def test_same_call_put_back_is_nothing() -> None:
    r = run(N, "N:1C -N:1C N:1C E:P")
    assert r.items() == [] and r.calls == "N:1C E:Pass"
    assert len(r.auction.record) == 2


# ---------------------------------------------------------------- Law 24

def test_single_low_card_exposed_no_obligation_minor_penalty_card() -> None:
    r = run(N, "N:1C +E:D5 E:P S:P W:P")
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.detail, x.law, x.status) == ("low,minor_penalty_card", "24A",
                                           Status.ESTABLISHED)
    assert r.auction.obligations == {}
    assert r.auction.minor_penalty_cards == {E: frozenset({Card.parse("D5")})}


def test_two_cards_exposed_partner_pass_next() -> None:
    r = run(N, "+E:D5 +E:C2")
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.detail, x.law) == ("two_or_more", "24C")
    assert r.auction.obligations == {W: "pass_next"}
    assert r.auction.exposed == {E: frozenset({Card.parse("D5"), Card.parse("C2")})}


def test_declarer_exposed_card_goes_back() -> None:
    r = run(N, "+N:SA N:1S E:P S:P W:P")
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.status, x.param("outcome")) == (Status.RESOLVED, "returned")
    assert r.auction.penalty_cards == {}


def test_exposed_card_taken_back_still_a_penalty_card() -> None:
    r = run(N, "N:1C +E:D5 -E:D5 E:P S:P W:P")
    assert r.auction.exposed == {}
    assert r.auction.penalty_cards == {E: frozenset({Card.parse("D5")})}


def test_premature_lead_ruling_on_low_card() -> None:
    r = run(N, "N:1C +E:D5 TD:lead@1")
    assert r.one(Code.CARD_EXPOSED_DURING_AUCTION).detail == "premature_lead"
    assert r.auction.obligations == {W: "pass_next"}
    feed(r, "E:P S:P W:P")
    assert r.one(Code.CARD_EXPOSED_DURING_AUCTION).detail == \
        "premature_lead,major_penalty_card"


# ---------------------------------------------------------------- Law 39

@pytest.mark.parametrize(("late", "law", "status"), [
    ("N:2C", "39B", Status.RESOLVED),     # declarer
    ("S:X", "39B", Status.RESOLVED),      # dummy
    ("E:P", "39B", Status.RESOLVED),      # a defender's pass
    ("E:2D", "39C", Status.OPEN),         # a defender's bid
])
def test_call_after_auction_closed(late: str, law: str, status: Status) -> None:
    r = run(N, f"N:1C E:P S:P W:P {late}")
    item = r.one(Code.CALL_AFTER_AUCTION_CLOSED)
    assert (item.law, item.status) == (law, status)
    assert item.detail.split(",")[0] == "cancelled"
    assert r.calls == "N:1C E:Pass S:Pass W:Pass"
    assert r.auction.record[-1].cancelled


def test_call_after_close_lho_calls_no_lead_restriction() -> None:
    r = run(N, "N:1C E:P S:P W:P E:2D")
    assert r.auction.lead_restrictions == ((W, "26B"),)
    feed(r, "S:P")
    assert r.auction.lead_restrictions == ()
    assert r.items(Code.CALL_AFTER_AUCTION_CLOSED)[0].status is Status.RESOLVED


# ---------------------------------------------------------------- rulings

def test_rule_ignores_other_alerts() -> None:
    r = run(N, "N:1C")
    assert not r.auction.rule(Ruling(RulingKind.ACCEPT, alert=99))
    assert not r.auction.rule(Ruling(RulingKind.ACCEPT))


def test_every_status_change_goes_through_the_log() -> None:
    r = run(N, "N:1S E:1H S:P")
    assert r.history(1) == [(Status.OPEN, "pending"), (Status.RESOLVED, "accepted")]


# ---------------------------------------------------------------- property tests

_DENOMS = tuple(Denomination)


def _legal_calls(a: Auction, seat: Seat) -> list[Call]:
    out = [Call.parse("Pass")]
    last = a.last_bid
    lowest = 0 if last is None else last.rank + 1
    out += [Call.make_bid(r // 5 + 1, _DENOMS[r % 5]) for r in range(lowest, 35)]
    calls = a.calls
    bids = [(s, c) for s, c in calls if c.is_bid]
    if bids:
        bidder = bids[-1][0]
        since = calls[calls.index(bids[-1]) + 1:] if bids else ()
        kinds = [c.kind for _, c in since if not c.is_pass]
        if not kinds and bidder.is_opponent_of(seat):
            out.append(Call.parse("X"))
        if kinds == [CallKind.DOUBLE]:
            doubler = [s for s, c in since if c.kind is CallKind.DOUBLE][0]
            if doubler.is_opponent_of(seat):
                out.append(Call.parse("XX"))
    return out


@st.composite
def legal_auctions(draw: st.DrawFn, complete: bool = True
                   ) -> tuple[Seat, list[tuple[Seat, Call]]]:
    """A random legal auction, built only from laws.md section 2 (not from Auction)."""
    dealer = draw(st.sampled_from(_SEATS_T))
    calls: list[tuple[Seat, Call]] = []
    seat = dealer
    last_rank = -1
    last_bidder: Seat | None = None
    dbl, dbl_seat, passes = 0, dealer, 0
    limit = draw(st.integers(min_value=0, max_value=40))
    while True:
        ended = (passes >= 3 and last_bidder is not None) or passes == 4
        if ended and not complete:
            calls.pop()     # keep it open: the last call would have ended it
            break
        if ended or (not complete and len(calls) >= limit):
            break
        options: list[Call] = [Call.parse("Pass")] * 3
        if last_rank < 34:
            step = draw(st.integers(min_value=1, max_value=min(6, 34 - last_rank)))
            r = last_rank + step
            options.append(Call.make_bid(r // 5 + 1, _DENOMS[r % 5]))
        if last_bidder is not None and dbl == 0 and last_bidder.is_opponent_of(seat):
            options.append(Call.parse("X"))
        if dbl == 1 and dbl_seat.is_opponent_of(seat):
            options.append(Call.parse("XX"))
        if len(calls) > 60:
            options = [Call.parse("Pass")]
        call = draw(st.sampled_from(options))
        calls.append((seat, call))
        if call.bid is not None:
            last_rank, last_bidder, dbl, passes = call.bid.rank, seat, 0, 0
        elif call.is_pass:
            passes += 1
        else:
            dbl, dbl_seat, passes = (1 if call.kind is CallKind.DOUBLE else 2), seat, 0
        seat = seat.lho
    return dealer, calls


_SEATS_T = tuple(Seat)


def _expected(calls: list[tuple[Seat, Call]]) -> tuple[str, Seat | None]:
    """Contract and declarer, computed straightforwardly from the whole list."""
    bids = [(s, c) for s, c in calls if c.bid is not None]
    if not bids:
        return "Pass", None
    bidder, final = bids[-1]
    assert final.bid is not None
    after = [c for _, c in calls[calls.index(bids[-1]) + 1:]]
    suffix = "XX" if Call.parse("XX") in after else "X" if Call.parse("X") in after else ""
    declarer = next(s for s, c in calls if c.bid is not None and not s.is_opponent_of(bidder)
                    and c.bid.denomination is final.bid.denomination)
    return str(final.bid) + suffix, declarer


@settings(max_examples=200, deadline=None)
@given(legal_auctions(), st.sampled_from([L2007, L2017]))
def test_legal_auctions_raise_nothing_and_give_the_contract(
        auction: tuple[Seat, list[tuple[Seat, Call]]], rules: Rules) -> None:
    dealer, calls = auction
    log = IrregularityLog()
    a = Auction(dealer, log, rules=rules)
    for i, (seat, call) in enumerate(calls):
        assert a.turn is seat
        assert call in _legal_calls(a, seat)
        a.call(seat, call)
        assert a.complete == (i == len(calls) - 1)
    assert len(log) == 0
    assert list(a.calls) == calls
    assert [(e.seat, e.call) for e in a.record] == calls
    contract, declarer = _expected(calls)
    assert str(a.contract) == contract
    assert a.declarer is declarer
    assert a.dummy is (None if declarer is None else declarer.partner)
    assert a.opening_leader is (None if declarer is None else declarer.lho)
    assert a.obligations == {} and a.penalty_cards == {} and a.lead_restrictions == ()


def _replay(dealer: Seat, calls: list[tuple[Seat, Call]], rules: Rules
            ) -> tuple[Auction, IrregularityLog]:
    log = IrregularityLog()
    a = Auction(dealer, log, rules=rules)
    for seat, call in calls:
        a.call(seat, call)
    return a, log


@settings(max_examples=150, deadline=None)
@given(legal_auctions(complete=False), st.sampled_from([L2007, L2017]), st.data())
def test_injected_irregular_calls_are_flagged(
        auction: tuple[Seat, list[tuple[Seat, Call]]], rules: Rules,
        data: st.DataObject) -> None:
    dealer, calls = auction
    a, log = _replay(dealer, calls, rules)
    assert len(log) == 0
    turn = a.turn
    assert turn is not None
    kinds = ["out_of_rotation", "above_seven", "inadmissible_double"]
    if a.last_bid is not None:
        kinds.append("insufficient")
    kind = data.draw(st.sampled_from(kinds))
    if kind == "insufficient":
        last = a.last_bid
        assert last is not None
        rank = data.draw(st.integers(min_value=0, max_value=last.rank))
        a.call(turn, Call.make_bid(rank // 5 + 1, _DENOMS[rank % 5]))
        expected = Code.INSUFFICIENT_BID
    elif kind == "out_of_rotation":
        last_caller = calls[-1][0] if calls else None
        seat = data.draw(st.sampled_from(
            [s for s in _SEATS_T if s is not turn and s is not last_caller]))
        # a double or redouble from the other side than the one whose turn it is would be
        # inadmissible too (Law 36), a different irregularity: only calls legal for both
        call = data.draw(st.sampled_from(
            [c for c in _legal_calls(a, turn) if seat is turn.partner
             or c.kind not in (CallKind.DOUBLE, CallKind.REDOUBLE)]))
        a.call(seat, call)
        expected = Code.CALL_OUT_OF_ROTATION
    elif kind == "above_seven":
        seat = data.draw(st.sampled_from(_SEATS_T))
        level = data.draw(st.integers(min_value=8, max_value=9))
        a.call(seat, Call(CallKind.BID, Bid(level, data.draw(st.sampled_from(_DENOMS)))))
        expected = Code.BID_ABOVE_SEVEN
    else:
        if Call.parse("X") in _legal_calls(a, turn):
            a.call(turn, Call.parse("Pass"))
            turn = turn.lho
            if Call.parse("X") in _legal_calls(a, turn) or a.complete:
                return  # no inadmissible double to be had here
        a.call(turn, Call.parse("X"))
        expected = Code.INADMISSIBLE_DOUBLE
    items = list(log)
    assert [i.code for i in items] == [expected]
    assert not a.complete or expected is Code.BID_ABOVE_SEVEN
    assert len(a.record) >= len(calls) + 1


_EVENT = st.one_of(
    st.tuples(st.just("call"), st.sampled_from(_SEATS_T),
              st.sampled_from(["Pass", "X", "XX", "1C", "1H", "1NT", "2C", "2S", "3NT",
                               "4H", "7NT", "8C"])),
    st.tuples(st.just("withdraw"), st.sampled_from(_SEATS_T),
              st.sampled_from(["Pass", "X", "1C", "1H", "2C"])),
    st.tuples(st.just("expose"), st.sampled_from(_SEATS_T), st.sampled_from(["HJ", "C2", "SA"])),
    st.tuples(st.just("unexpose"), st.sampled_from(_SEATS_T), st.sampled_from(["HJ", "C2"])),
    st.tuples(st.just("rule"), st.sampled_from(list(RulingKind)),
              st.integers(min_value=1, max_value=6)),
    st.tuples(st.just("lead"), st.just(N), st.just("")),
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(_SEATS_T), st.sampled_from([L2007, L2017]),
       st.lists(_EVENT, max_size=40))
def test_any_event_sequence_keeps_the_auction_consistent(
        dealer: Seat, rules: Rules, events: list[tuple[object, object, object]]) -> None:
    """Garbage in never crashes; what stands is always a legal, replayable auction."""
    def play() -> tuple[Auction, IrregularityLog]:
        log = IrregularityLog()
        a = Auction(dealer, log, rules=rules)
        for what, x, y in events:
            if what == "call":
                assert isinstance(x, Seat) and isinstance(y, str)
                a.call(x, Call.parse(y))
            elif what == "withdraw":
                assert isinstance(x, Seat) and isinstance(y, str)
                a.withdraw(x, Call.parse(y))
            elif what == "expose":
                assert isinstance(x, Seat) and isinstance(y, str)
                a.expose(x, Card.parse(y))
            elif what == "unexpose":
                assert isinstance(x, Seat) and isinstance(y, str)
                a.unexpose(x, Card.parse(y))
            elif what == "rule":
                assert isinstance(x, RulingKind) and isinstance(y, int)
                a.rule(Ruling(x, alert=y))
            elif a.complete:
                a.face_opening_lead()
        return a, log

    a, log = play()
    b, log_b = play()   # deterministic: the same events give the same auction
    assert a.record == b.record and list(log) == list(log_b)
    # calls that stand were put down (or are implied/substituted passes) in that order;
    # the one pending call is neither standing nor cancelled yet
    standing = [(e.seat, e.call) for e in a.record
                if not e.cancelled and (a.pending is None or e.irregularity != a.pending)]
    assert list(a.calls) == standing
    assert all(c.is_legal_level for _, c in a.calls)
    assert all(i.id in {i.id for i in log} for i in log)
    if a.complete:
        assert a.turn is None and a.contract is not None and a.pending is None
        if a.contract.passed_out:
            assert a.declarer is None
        else:
            assert a.declarer is not None and a.contract.bid is not None
            # the declarer's side made the final bid and he named its denomination first
            final = [(s, c) for s, c in a.calls if c.bid is not None]
            assert final[-1][1].bid == a.contract.bid
            assert not a.declarer.is_opponent_of(final[-1][0])
    else:
        # rotation: the player after the last standing call (29A, 28A included)
        assert a.turn is (a.calls[-1][0].lho if a.calls else dealer)


def test_pass_card_put_down_after_an_implied_pass_is_that_pass() -> None:
    r = run(N, "N:1C S:P TD:reject@1 E:P W:1H S:P")
    assert len(r.items()) == 1
    assert r.calls == "N:1C E:Pass S:Pass W:1H" and r.auction.turn is N


def test_rectification_waiting_for_a_call_that_never_comes_is_resolved_at_the_end() -> None:
    # 2017 30B: E passes at W's (his partner's) turn; W's pass ends the auction before E
    # calls again, so there is no call to judge
    r = run(N, "N:1C E:P S:P E:P TD:reject@1", L2017)
    assert r.one(Code.CALL_OUT_OF_ROTATION).is_open
    feed(r, "W:P")
    assert contract_of(r)[0] == "1C"
    coor = r.one(Code.CALL_OUT_OF_ROTATION)
    assert (coor.status, coor.detail) == (Status.RESOLVED, "auction_ended")


def test_bid_above_seven_out_of_rotation_no_substitute() -> None:
    r = run(N, "S:8C")
    b = r.one(Code.BID_ABOVE_SEVEN)
    assert b.detail == "cancelled,pass_all" and r.calls == ""
    assert r.auction.obligations == {S: "pass_all", N: "pass_all"}
    assert r.auction.turn is N


def test_pending_call_cleared_by_the_table_directly() -> None:
    # the Table may resolve a CLEAR itself without calling Auction.rule
    r = run(N, "N:1S E:1H")
    ib = r.one(Code.INSUFFICIENT_BID)
    r.log.update(ib.id, status=Status.RESOLVED, detail="cleared")
    feed(r, "E:2H")
    assert r.calls == "N:1S E:2H" and r.auction.pending is None
    assert len(r.items()) == 1 and r.log.get(ib.id).detail == "cleared"  # type: ignore[union-attr]


def test_passed_out_board_exposed_card_resolved() -> None:
    r = run(N, "+N:C2 N:P E:P S:P W:P")
    x = r.one(Code.CARD_EXPOSED_DURING_AUCTION)
    assert (x.status, x.param("outcome")) == (Status.RESOLVED, "passed_out")
    assert r.auction.penalty_cards == {}


def test_pass_at_the_next_turn_after_an_implied_pass_is_a_new_call() -> None:
    r = run(N, "N:1C S:P TD:reject@1 E:P W:1H N:1S E:P S:P")
    assert r.calls == "N:1C E:Pass S:Pass W:1H N:1S E:Pass S:Pass"
    assert r.auction.turn is W and len(r.items()) == 1
