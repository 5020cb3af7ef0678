"""Law 25: a change of call (25A unintended, 25B).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, auction, calls

from controller.laws.cards import Rules


@pytest.mark.parametrize("rules", BOTH)
def test_25a_unintended_call_corrected_after_lho_called(rules: Rules) -> None:
    """25A1: until partner calls, an unintended call may be replaced by the intended one,
    even after LHO has called; 25A4: LHO may then withdraw his call, no rectification."""
    h = auction(rules, "C:N:1C C:E:1H C:N:1D")   # N meant 1D; E already called
    coor = h.alerts("CALL_OUT_OF_ROTATION")[-1]
    h.rule("unintended", alert=coor["id"])
    assert calls(h) == [["N", "1D"], ["E", "1H"]] and h.state()["turn"] == "S"
    change = h.alerts("CHANGE_OF_CALL")[-1]
    assert (change["law"], change["detail"], change["status"]) == ("25A", "unintended",
                                                                   "resolved")
    assert change["params"]["original"] == "1C"
    assert h.final_alerts()[coor["id"]]["status"] == "resolved"
    h.run("C:E:2C")                          # E withdraws his 1H for 2C: no irregularity
    assert calls(h) == [["N", "1D"], ["E", "2C"]]
    assert {a["code"] for a in h.alerts()} == {"CALL_OUT_OF_ROTATION", "CHANGE_OF_CALL"}
    h.run("C:S:P C:W:P C:N:P")
    assert h.state()["contract"] == "2C"


def test_25a_lho_call_no_longer_sufficient_is_withdrawn() -> None:
    h = auction(Rules.L2017, "C:N:1C C:E:1D")
    h.rule("unintended", seat="N", call="1H")     # the director rules from seat and call
    assert calls(h) == [["N", "1H"]] and h.state()["turn"] == "E"
    assert h.alerts("CHANGE_OF_CALL")[-1]["params"]["lho_withdrawn"] == "1D"
    h.run("C:E:1S")
    assert calls(h) == [["N", "1H"], ["E", "1S"]] and "INSUFFICIENT_BID" not in h.codes()


def test_25a_lho_may_take_his_call_back() -> None:
    h = auction(Rules.L2017, "C:N:1C C:E:1H")
    h.rule("unintended", seat="N", call="1D")
    h.tag("bid", "E", "removed", call="1H", uid="BIDE1H")
    assert calls(h) == [["N", "1D"]] and h.state()["turn"] == "E"


@pytest.mark.parametrize("rules", BOTH)
def test_25a_not_after_partner_has_called(rules: Rules) -> None:
    """25A2: no substitution once partner has made a call."""
    h = auction(rules, "C:N:1C C:E:1H C:S:P")
    h.rule("unintended", seat="N", call="1D")
    assert calls(h) == [["N", "1C"], ["E", "1H"], ["S", "Pass"]]
    assert "CHANGE_OF_CALL" not in h.codes()


def test_25a_ruling_needs_alert_or_seat_and_call() -> None:
    h = auction(Rules.L2017, "C:N:1C")
    outs = h.rule("unintended", seat="N")
    assert outs and outs[0].topic.endswith("/error")


@pytest.mark.parametrize("rules", BOTH)
def test_25a_after_the_auction_ended_before_partners_turn(rules: Rules) -> None:
    """The auction ends with W's unintended pass, before E (his partner) calls again. 2017
    25A2: a substitution is possible until the end of the auction period (the opening lead
    faced): the auction goes on. 2007 25A3: none after the end of the auction."""
    h = auction(rules, "C:N:1S C:E:P C:S:P C:W:P")
    assert h.state()["phase"] == "lead"
    h.rule("unintended", seat="W", call="2H")
    if rules is Rules.L2007:
        assert h.state()["phase"] == "lead" and h.state()["contract"] == "1S"
        assert "CHANGE_OF_CALL" not in h.codes()
        return
    state = h.state()
    assert state["phase"] == "auction" and state["contract"] is None and state["turn"] == "N"
    assert calls(h)[-1] == ["W", "2H"]
    h.run("C:N:P C:E:P C:S:P")
    assert h.state()["contract"] == "2H" and h.state()["declarer"] == "W"
    assert h.state()["phase"] == "lead"


def test_25a_not_once_the_opening_lead_is_on_the_table() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:P C:S:P C:W:P")
    h.put("E", "C7")                         # the opening lead (E is N's LHO)
    h.rule("unintended", seat="W", call="2H")
    assert h.state()["contract"] == "1S" and "CHANGE_OF_CALL" not in h.codes()
