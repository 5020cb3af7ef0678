"""Law 36: an inadmissible double or redouble, out of rotation too (Law 36 or Law 32 first:
the director's choice).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, auction, board5, calls, ruled
from scenarios import Harness

from controller.laws.cards import Rules


@pytest.mark.parametrize("rules", BOTH)
def test_inadmissible_double_out_of_rotation_is_law_36(rules: Rules) -> None:
    """An inadmissible double out of rotation may never be accepted (32): Law 36 (2017
    36B; 2007 32B1 -> 36): cancelled, back to the player due, the offender makes any legal
    call at his turn, his partner passes throughout; LHO's call does not accept it."""
    h = auction(rules, "C:N:1C C:S:X")      # S doubles partner's bid at E's turn
    item = h.alerts("INADMISSIBLE_DOUBLE")[-1]
    # cancelled at once; Law 36 or Law 32 first is the director's choice (issue 30)
    assert item["status"] == "open" and item["params"]["choices"] == "36,32"
    assert calls(h) == [["N", "1C"]] and h.state()["turn"] == "E"
    h.rule("option", alert=item["id"], option="36")
    item = h.alerts("INADMISSIBLE_DOUBLE")[-1]
    assert item["law"] == "36B" and item["status"] == "resolved"
    assert "CALL_OUT_OF_ROTATION" not in h.codes()
    assert calls(h) == [["N", "1C"]] and h.state()["turn"] == "E"
    assert h.state()["obligations"] == {"N": "pass_all"}
    h.run("C:E:P C:S:1H C:W:P C:N:P C:E:P")
    assert h.state()["contract"] == "1H" and h.state()["declarer"] == "S"
    assert "CALL_BY_PLAYER_REQUIRED_TO_PASS" not in h.codes()


@pytest.mark.parametrize("rules", BOTH)
def test_inadmissible_redouble_out_of_rotation_is_law_36(rules: Rules) -> None:
    h = auction(rules, "C:N:1C C:E:X C:W:XX")   # W redoubles his partner's double at S's turn
    item = h.alerts("INADMISSIBLE_REDOUBLE")[-1]
    h.rule("option", alert=item["id"], option="36")     # the director's choice (issue 30)
    item = h.alerts("INADMISSIBLE_REDOUBLE")[-1]
    assert item["law"] == "36B" and item["seat"] == "W"
    assert h.state()["obligations"] == {"E": "pass_all"} and h.state()["turn"] == "S"
    h.run("C:S:P")                           # W's LHO (N) did not accept anything
    assert calls(h) == [["N", "1C"], ["E", "X"], ["S", "Pass"]]


def test_admissible_double_out_of_rotation_keeps_the_law_32_path() -> None:
    h = auction(Rules.L2017, "C:N:1C C:W:X")     # W doubles N at E's (partner's) turn
    assert h.alerts("CALL_OUT_OF_ROTATION")[-1]["status"] == "open"
    assert "INADMISSIBLE_DOUBLE" not in h.codes()


def x_out_of_rotation(rules: Rules) -> Harness:
    """N opens 1C; S doubles his partner's bid at E's turn: inadmissible (19A1) and out of
    rotation (RHO's turn)."""
    return board5("C:N:1C C:S:X", rules)


@pytest.mark.parametrize("rules", BOTH)
def test_inadmissible_double_out_of_rotation_waits_for_the_directors_choice(
        rules: Rules) -> None:
    h = x_out_of_rotation(rules)
    item = h.alerts("INADMISSIBLE_DOUBLE")[-1]
    assert item["status"] == "open" and item["params"]["choices"] == "36,32"
    assert item["params"]["out_of_rotation"] is True
    assert calls(h) == [["N", "1C"]] and h.state()["turn"] == "E"   # never accepted (35A)
    assert h.state()["obligations"] == {}
    out = h.rule("option", alert=item["id"], option="31")
    assert out and out[0].topic.endswith("/error")


@pytest.mark.parametrize("rules", BOTH)
def test_law_36_first_partner_passes_throughout(rules: Rules) -> None:
    h = x_out_of_rotation(rules)
    item = ruled(h, "INADMISSIBLE_DOUBLE", "option", option="36")
    assert item["law"] == "36B" and item["status"] == "resolved"
    assert h.state()["obligations"] == {"N": "pass_all"}
    h.run("C:E:P C:S:1H C:W:P C:N:P C:E:P AUTO")
    result = h.result()
    assert result is not None and result["contract"] == "1H" and result["declarer"] == "S"


def test_law_32_first_2017_rho_passed_then_the_call_is_judged_comparable_or_not() -> None:
    """2017 32A (a double out of rotation at RHO's turn): RHO passes, the offender's
    call is judged: not comparable -> partner passes at his next turn (not throughout)."""
    h = x_out_of_rotation(Rules.L2017)
    item = h.alerts("INADMISSIBLE_DOUBLE")[-1]
    h.rule("option", alert=item["id"], option="32")
    assert h.final_alerts()[item["id"]]["law"] == "32A"
    h.run("C:E:P C:S:1H")
    item = h.final_alerts()[item["id"]]
    assert item["detail"] == "awaiting_comparable"
    h.rule("not_comparable", alert=item["id"])
    assert h.state()["obligations"] == {"N": "pass_next"}
    h.run("C:W:P C:N:P C:E:P AUTO")
    result = h.result()
    assert result is not None and result["contract"] == "1H"


def test_law_32_first_2007_rho_acted_before_the_ruling() -> None:
    """2007 32B2: RHO acted over the double out of rotation: partner passes throughout.
    RHO's call came before the director chose: it still counts."""
    h = x_out_of_rotation(Rules.L2007)
    h.run("C:E:1D")
    item = ruled(h, "INADMISSIBLE_DOUBLE", "option", option="32")
    assert item["law"] == "32B2" and item["status"] == "resolved"
    assert h.state()["obligations"] == {"N": "pass_all"}
