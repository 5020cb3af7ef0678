"""Law 28B: a call out of rotation, and partner calling at his own turn.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, auction, calls

from controller.laws.cards import Rules


@pytest.mark.parametrize("rules", BOTH)
def test_partner_calling_at_his_turn_does_not_forfeit_rectification(rules: Rules) -> None:
    """28B: a call by the player due cancels a call out of rotation without rectification
    only when he is an opponent of the offender. W bids at his partner E's turn and E then
    calls: 31B still applies (2007: E passes throughout; 2017: W's next call is judged
    comparable or not)."""
    h = auction(rules, "C:N:1C C:W:1S C:E:P")
    coor = h.final_alerts()[h.alerts("CALL_OUT_OF_ROTATION")[0]["id"]]
    assert coor["law"] == "31B" and coor["detail"] != "cancelled"
    assert coor["params"]["partner_called"] is True
    assert calls(h) == [["N", "1C"], ["E", "Pass"]]
    if rules is Rules.L2007:
        assert coor["status"] == "resolved"
        assert h.state()["obligations"] == {"E": "pass_all"}
    else:
        assert h.state()["obligations"] == {}
        h.run("C:S:1H C:W:2S")
        coor = h.final_alerts()[coor["id"]]
        assert coor["detail"] == "awaiting_comparable"
        h.rule("not_comparable", alert=coor["id"])
        assert h.state()["obligations"] == {"E": "pass_next"}


def test_partner_calling_a_bid_under_2007_31b_is_a_call_he_must_not_make() -> None:
    h = auction(Rules.L2007, "C:N:1C C:W:1S C:E:2H")
    assert h.final_alerts()[h.alerts("CALL_OUT_OF_ROTATION")[0]["id"]]["law"] == "31B"
    assert h.alerts("CALL_BY_PLAYER_REQUIRED_TO_PASS")[-1]["seat"] == "E"


@pytest.mark.parametrize("rules", BOTH)
def test_pass_out_of_rotation_at_partners_turn_then_partner_calls(rules: Rules) -> None:
    """2007 30B2: a pass at partner's turn after a bid: the offender passes throughout;
    2017 30B: partner is free, the offender's next call is judged."""
    h = auction(rules, "C:N:1C C:W:P C:E:1H")
    coor = h.final_alerts()[h.alerts("CALL_OUT_OF_ROTATION")[0]["id"]]
    assert coor["law"] == ("30B2" if rules is Rules.L2007 else "30B")
    assert calls(h) == [["N", "1C"], ["E", "1H"]]
    if rules is Rules.L2007:
        assert h.state()["obligations"] == {"W": "pass_all"}


@pytest.mark.parametrize("rules", BOTH)
def test_opponent_due_calling_still_cancels_without_rectification(rules: Rules) -> None:
    """28B as written: S bids at his RHO's (E's) turn, E calls: no rectification."""
    h = auction(rules, "C:N:1C C:S:1H C:E:P")
    coor = h.final_alerts()[h.alerts("CALL_OUT_OF_ROTATION")[0]["id"]]
    assert (coor["law"], coor["detail"], coor["status"]) == ("28B", "cancelled", "resolved")
    assert h.state()["obligations"] == {}
