"""What the Laws test files share: the deals (laws.md section 7's), harnesses set at a point of
a board, and small readers of the core's and the engine's output."""

from __future__ import annotations

from typing import Any

from scenarios import Harness

from controller.laws.cards import Card, Contract, Deal, Rules, Seat, Vulnerability
from controller.laws.irregularities import Code, IrregularityLog
from controller.laws.play import Play
from controller.laws.scoring import score_ns

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
