"""What the Laws test files share: the deals (laws.md section 7's), harnesses set at a point of
a board, and small readers of the core's and the engine's output."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from scenarios import Harness, card_uid

from controller.laws.cards import Card, Contract, Deal, Rules, Seat, Vulnerability
from controller.laws.irregularities import Code, IrregularityLog
from controller.laws.play import Play
from controller.laws.scoring import score_ns
from controller.laws.table import TURN_WINDOW

D = Deal.from_pbn

C = Card.parse

T06 = D("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643")

BOTH = [Rules.L2007, Rules.L2017]


def feed(play: Play, events: str) -> None:
    for token in events.split():
        take = token.startswith("-")
        seat, card = token.lstrip("+-").split(":")
        (play.take if take else play.put)(Seat[seat], C(card))


def only(log: IrregularityLog, code: Code) -> Any:
    items = [i for i in log if i.code is code]
    assert len(items) == 1, items
    return items[0]


def t06_harness(rules: Rules = Rules.L2017) -> Harness:
    h = Harness(5, T06, rules=rules)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:1N C:E:P C:S:3N C:W:P C:N:P C:E:P")
    return h


T02 = D("N:9.JT52.KQ4.AK652 AQ4.K.A853.J8743 KT52.Q963.T972.Q J8763.A874.J6.T9")


def auction(rules: Rules, script: str = "") -> Harness:
    h = Harness(1, T02, rules=rules)     # board 1: N deals
    h.board_tag(1)
    h.scan()
    h.run(script)
    return h


def calls(h: Harness) -> list[list[str]]:
    return [list(c) for c in h.state()["auction"]]


def indicator(h: Harness) -> dict[str, Any]:
    return [o.payload for o in h.out if o.topic.endswith("/indicator")][-1]


def t06_play(rules: Rules = Rules.L2017) -> Harness:
    """Board 5 (T06), 3NT by N, the opening lead E's."""
    return t06_harness(rules)


def board5(script: str, rules: Rules = Rules.L2017) -> Harness:
    """Board 5 (T06) read, the four hands scanned, then ``script``."""
    h = Harness(5, T06, rules=rules)
    h.board_tag(5)
    h.scan()
    h.run(script)
    return h


def ruled(h: Harness, code: str, ruling: str, **fields: Any) -> dict[str, Any]:
    """The director's ruling on the last alert of ``code``; that alert as it ends up."""
    item = h.alerts(code)[-1]
    h.rule(ruling, alert=item["id"], **fields)
    return h.final_alerts()[item["id"]]


def fifth_card(rules: Rules) -> Harness:
    """T06, 3NT by N: dummy (S) wins trick 1 and is on lead; W (a defender) puts D2."""
    h = t06_play(rules)
    h.run("E:C5 S:CA W:C3 N:C2")
    h.run("+W:D2")
    return h


def scored(h: Harness) -> dict[str, Any]:
    """The result, checked against the scoring Laws for the tricks the play gave."""
    result = h.result()
    assert result is not None
    board = h.t.board
    assert board is not None and board.play is not None
    tricks = board.play.declarer_tricks
    assert result["tricks"] == tricks
    assert result["score_ns"] == score_ns(Contract.parse("3NT"), Seat.N,
                                          Vulnerability.NS, tricks)
    return result


@dataclass
class Spots:
    """A board played on play spots (docs/sensing.md) as a person plays it, each event at
    its time: cards laid, lifted, turned where they lie, slid off into the trick row.
    ``now`` goes on by ``dt`` seconds before each event."""

    h: Harness
    deck: str
    now: float = 1_700_001_000.0

    def spot(self, seat: Seat, card: Card, action: str, dt: float) -> None:
        self.now += dt
        self.h.tag("spot", seat.name, action, card=str(card), deck=self.deck,
                   uid=card_uid(card), ts=self.now)

    def lay(self, seat: Seat, card: Card, dt: float = 1.0) -> None:
        self.spot(seat, card, "present", dt)

    def lift(self, seat: Seat, card: Card, dt: float = 0.3) -> None:
        self.spot(seat, card, "removed", dt)

    def turn(self, seat: Seat, card: Card, gap: float = 0.8) -> None:
        """The card turned over where it lies: gone from the antenna for ``gap`` seconds."""
        self.lift(seat, card)
        self.lay(seat, card, dt=gap)

    def wait(self, dt: float) -> None:
        """``dt`` seconds with nothing read: the engine's clock reads what is due."""
        self.now += dt
        clock = self.h.engine._tables[self.h.table].clock
        if clock is not None:   # (the events' clock, run ``dt`` on from the last event)
            self.h.out += self.h.engine.settle(clock[1] + self.now - clock[0])

    def play_trick(self, *, turn: bool = True, slide: bool = True) -> list[tuple[Seat, Card]]:
        """AUTO's four cards of the trick due laid in turn; then each turned face down on
        its spot (``turn``, Law 65A) and slid off into the trick row (``slide``)."""
        board = self.h.t.board
        assert board is not None and board.play is not None
        laid = list(board.play.current_cards)   # (a lead already on its spot)
        while len(laid) < 4:
            due = self.h.next_play()
            assert due is not None and not due[2]
            laid.append(due[:2])
            self.lay(*due[:2])
        for seat, card in laid:
            if turn:
                self.turn(seat, card)
        for seat, card in laid:
            if slide:
                self.lift(seat, card)
        return laid

    def play_out(self) -> None:
        """The rest of the board, every trick's cards turned and slid off."""
        while self.h.next_play() is not None:
            self.play_trick()


def t06_spots(rules: Rules = Rules.L2017) -> Spots:
    """Board 5 (T06, 3NT by N, E's lead) at the point of the opening lead, played on spots."""
    return Spots(t06_harness(rules), deck="5")


LATER = 3 * TURN_WINDOW   # longer than any turn: a card taken away and laid again
