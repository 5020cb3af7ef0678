"""Law 53: a lead out of turn followed by the proper lead (2017 53B, 2007 53C), and a fifth card
ruled a lead.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, fifth_card, ruled, scored

from controller.laws.cards import Card, Rules, Seat


@pytest.mark.parametrize("rules", BOTH)
def test_53b_the_proper_lead_follows_the_card_may_be_withdrawn(rules: Rules) -> None:
    """The proper leader leads before the director rules. Deemed led, the card led in
    error is withdrawn (2017 53B: may be withdrawn; 2007 53C); otherwise 45E1."""
    for choice in ("withdraw", "penalty_card"):
        h = fifth_card(rules)
        item = h.alerts("FIFTH_CARD")[-1]
        h.run("S:D3")                               # dummy's proper lead stands
        item = h.final_alerts()[item["id"]]
        assert item["status"] == "open" and item["params"]["choices"] == \
            "penalty_card,withdraw"
        h.rule("option", alert=item["id"], option=choice)
        item = h.final_alerts()[item["id"]]
        assert item["status"] == "resolved"
        if choice == "withdraw":
            assert item["law"] == ("53B" if rules is Rules.L2017 else "53C")
            assert h.state()["penalty_cards"] == {}
        else:
            assert item["law"] == "45E1" and h.state()["penalty_cards"] == {"W": ["D2"]}
        h.run("AUTO")
        scored(h)


@pytest.mark.parametrize("choice", ["withdraw", "penalty_card"])
def test_2017_53b_lead_out_of_turn_then_the_proper_lead(choice: str) -> None:
    """2017 53B: a defender's lead out of turn (ruled a lead), then the proper lead by an
    opponent: the proper lead stands, the card led in error *may* be withdrawn (16C): the
    director chooses; not withdrawn, it is a lead not accepted: major penalty card (56)."""
    h = fifth_card(Rules.L2017)
    h.rule("lead", alert=h.alerts("FIFTH_CARD")[-1]["id"])
    h.run("S:D3")                                   # dummy, due to lead, leads
    lot = h.alerts("LEAD_OUT_OF_TURN")[-1]
    assert lot["status"] == "open" and lot["law"] == "53B"
    assert lot["params"]["choices"] == "penalty_card,withdraw"
    assert h.state()["current"] == [{"seat": "S", "card": "D3"}]
    lot = ruled(h, "LEAD_OUT_OF_TURN", "option", option=choice)
    assert lot["status"] == "resolved"
    board = h.t.board
    assert board is not None and board.play is not None
    if choice == "withdraw":
        assert lot["law"] == "53B" and h.state()["penalty_cards"] == {}
    else:
        assert lot["law"] == "56" and h.state()["penalty_cards"] == {"W": ["D2"]}
        assert board.play.is_major_penalty_card(Seat.W, Card.parse("D2"))
    h.run("AUTO")
    scored(h)


def test_2007_53c_lead_out_of_turn_then_the_proper_lead_is_withdrawn() -> None:
    """2007 53C: the proper lead stands and the card led in error is withdrawn."""
    h = fifth_card(Rules.L2007)
    h.rule("lead", alert=h.alerts("FIFTH_CARD")[-1]["id"])
    h.run("S:D3")
    lot = h.final_alerts()[h.alerts("LEAD_OUT_OF_TURN")[-1]["id"]]
    assert lot["status"] == "resolved" and lot["law"] == "53C"
    assert lot["detail"] == "returned" and h.state()["penalty_cards"] == {}
    h.run("AUTO")
    scored(h)
