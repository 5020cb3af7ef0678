"""A ruling's option the engine does not apply is refused on ``error`` and changes nothing
(``controller.laws.rulings.RULING_OPTIONS``).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from law_cases import T06, board5, calls, t06_play
from scenarios import Harness

from controller.laws.irregularities import Code
from controller.laws.rulings import RULING_OPTIONS, Ruling, RulingKind, option_problem


def errors(h: Harness) -> list[dict[str, Any]]:
    return [o.payload for o in h.out if o.topic.endswith("/error")]


def insufficient_bid() -> Harness:
    """N 1S, E 1H: an insufficient bid awaiting LHO or the director (27)."""
    return board5("C:N:1S C:E:1H")


@pytest.mark.parametrize("option", ["highest", "banana", "54A", "penalty_card"])
def test_an_option_of_another_ruling_is_refused_and_changes_nothing(option: str) -> None:
    """accept with an option that belongs to another ruling (or to none) was taken as a
    plain acceptance and cascaded; now it is refused on ``error`` with the reason."""
    h = Harness(5, T06)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1S C:E:1H")                          # insufficient bid, pending
    item = h.alerts("INSUFFICIENT_BID")[-1]
    before = h.state()
    n_alerts = len(h.alerts())
    out = h.rule("accept", alert=item["id"], option=option)
    assert [o.topic for o in out] == ["bridge/7/error"]
    err = out[0].payload
    assert err["input"] == "ruling" and option in err["error"] and "refused" in err["error"]
    assert len(h.alerts()) == n_alerts
    after = h.state()
    assert {k: v for k, v in after.items() if k != "last"} == \
        {k: v for k, v in before.items() if k != "last"}
    assert h.final_alerts()[item["id"]]["status"] == "open"
    # the same ruling without the option applies (27A1)
    h.rule("accept", alert=item["id"])
    assert h.final_alerts()[item["id"]]["detail"] == "accepted"


def test_an_option_ruling_that_cannot_be_applied_now_is_refused() -> None:
    h = t06_play()
    h.run("E:C5 S:CA W:C3 N:C2 S:D3 +E:D4")
    item = h.alerts("PREMATURE_PLAY")[-1]
    out = h.rule("option", alert=item["id"], option="must_lead")   # needs a suit
    assert out and out[0].topic.endswith("/error")
    out = h.rule("option", alert=item["id"])                       # no option at all
    assert out and out[0].topic.endswith("/error") and "needs an option" in \
        out[0].payload["error"]
    assert h.final_alerts()[item["id"]]["status"] == "open"


def test_an_undo_after_a_refused_ruling_strikes_the_last_event() -> None:
    """A refused ruling is not in the board's history: undo strikes the last event."""
    h = insufficient_bid()
    item = h.alerts("INSUFFICIENT_BID")[-1]
    h.rule("reject", alert=item["id"], option="36")
    assert errors(h)
    h.send({"type": "button", "button": "undo"})
    assert calls(h) == [["N", "1S"]]


def test_option_problem_on_the_core() -> None:
    accept = Ruling(RulingKind.ACCEPT, alert=1, option="54A")
    assert option_problem(accept, Code.OPENING_LEAD_OUT_OF_TURN) is None
    assert option_problem(accept, Code.INSUFFICIENT_BID) is not None
    assert option_problem(Ruling(RulingKind.OPTION, alert=1, option="lowest"),
                          Code.PREMATURE_PLAY) is None
    assert option_problem(Ruling(RulingKind.OPTION, option="lowest"), None) is not None
    assert option_problem(Ruling(RulingKind.REJECT, alert=1), Code.REVOKE) is None
    for code, kinds in RULING_OPTIONS.items():
        for kind, names in kinds.items():
            for name in names:
                assert option_problem(Ruling(kind, alert=1, option=name), code) is None


@pytest.mark.parametrize("kind", ["undo", "board", "clear", "reject"])
def test_a_ruling_that_takes_no_option_is_refused_with_one(kind: str) -> None:
    h = insufficient_bid()
    item = h.alerts("INSUFFICIENT_BID")[-1]
    fields: dict[str, Any] = {"option": "highest"}
    if kind == "board":
        fields["board"] = 6
    elif kind != "undo":
        fields["alert"] = item["id"]
    out = h.rule(kind, **fields)
    assert [o.topic for o in out] == ["bridge/7/error"]
    assert h.state()["board"] == 5 and calls(h) == [["N", "1S"]]
    assert h.final_alerts()[item["id"]]["status"] == "open"


def test_the_core_returns_the_refusal_and_keeps_no_history() -> None:
    from controller.laws.table import Table

    h = insufficient_bid()
    table: Table = h.t
    board = table.board
    assert board is not None
    history = list(board.history)
    item = h.alerts("INSUFFICIENT_BID")[-1]
    update = table.apply(Ruling(RulingKind.ACCEPT, alert=item["id"], option="lowest"))
    assert "lowest" in update.refused and update.irregularities == ()
    assert board.history == history
    update = table.apply(Ruling(RulingKind.OPTION, alert=999, option="lowest"))
    assert "not on this board" in update.refused
