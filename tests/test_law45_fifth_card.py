"""Law 45E: a defender's fifth card, and the director's choice (penalty card or a lead).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, fifth_card, ruled, scored

from controller.laws.cards import Card, Rules, Seat


@pytest.mark.parametrize("rules", BOTH)
def test_defenders_card_when_dummy_is_on_lead_waits_for_the_director(rules: Rules) -> None:
    """45E1: a defender's card when the other side is on lead is a penalty card unless the
    director deems it led (then 53, and 56 if not accepted): his choice, so it waits."""
    h = fifth_card(rules)
    item = h.alerts("FIFTH_CARD")[-1]
    assert item["status"] == "open" and item["law"] == "45E"
    assert item["detail"] == "director_choice"
    assert item["params"]["choices"] == "penalty_card,lead"
    assert h.state()["penalty_cards"] == {} and h.state()["turn"] == "S"
    assert h.state()["current"] == []


@pytest.mark.parametrize("rules", BOTH)
def test_45e_director_rules_a_penalty_card(rules: Rules) -> None:
    h = fifth_card(rules)
    item = ruled(h, "FIFTH_CARD", "option", option="penalty_card")
    assert item["status"] == "resolved" and item["law"] == "45E1"
    assert item["detail"] == "penalty_card"
    assert h.state()["penalty_cards"] == {"W": ["D2"]}
    h.run("S:D3")                                   # dummy leads a diamond
    h.run("E:D4")
    h.run("AUTO")                                   # W plays his penalty card D2 (50)
    board = h.t.board
    assert board is not None and board.play is not None
    second = board.play.tricks[1]
    assert second.leader is Seat.S and (Seat.W, Card.parse("D2")) in second.cards
    scored(h)


@pytest.mark.parametrize("rules", BOTH)
def test_45e_director_rules_a_lead_then_53_or_56(rules: Rules) -> None:
    """45E1 deemed led: a lead out of turn (53). Declarer accepts it (53A): W's D2 leads
    trick 2; declarer refuses it: a major penalty card (56)."""
    for accept in (True, False):
        h = fifth_card(rules)
        item = h.alerts("FIFTH_CARD")[-1]
        h.rule("lead", alert=item["id"])
        assert h.final_alerts()[item["id"]]["detail"] == "lead"
        lot = h.alerts("LEAD_OUT_OF_TURN")[-1]
        assert lot["status"] == "open" and lot["seat"] == "W"
        h.rule("accept" if accept else "reject", alert=lot["id"])
        lot = h.final_alerts()[lot["id"]]
        board = h.t.board
        assert board is not None and board.play is not None
        if accept:
            assert lot["detail"] == "accepted" and lot["law"] == "53A"
            assert board.play.tricks[1].cards[0] == (Seat.W, Card.parse("D2"))
        else:
            assert lot["detail"] == "refused" and lot["law"] == "56"
            assert h.state()["penalty_cards"] == {"W": ["D2"]}
            assert board.play.is_major_penalty_card(Seat.W, Card.parse("D2"))
        h.run("AUTO")
        scored(h)


def test_45e_withdraw_before_the_proper_lead_is_refused() -> None:
    h = fifth_card(Rules.L2017)
    item = h.alerts("FIFTH_CARD")[-1]
    out = h.rule("option", alert=item["id"], option="withdraw")
    assert out and out[0].topic.endswith("/error")
    assert h.final_alerts()[item["id"]]["status"] == "open"


@pytest.mark.parametrize("rules", BOTH)
def test_45e_the_next_hand_playing_to_it_accepts_it_as_a_lead(rules: Rules) -> None:
    """53A: a play from the next hand in rotation to the irregular lead accepts it."""
    h = fifth_card(rules)
    h.run("N:D5")
    lot = h.alerts("LEAD_OUT_OF_TURN")[-1]
    assert lot["detail"] == "accepted"
    fifth = h.alerts("FIFTH_CARD")[-1]
    assert h.final_alerts()[fifth["id"]]["status"] == "resolved"


def test_45e_card_taken_back_before_the_ruling_still_awaits_it() -> None:
    """The defender picks his card up again: the director's choice stays open; ruled a
    penalty card, it must be played at the first legal opportunity (50)."""
    h = fifth_card(Rules.L2017)
    h.take("W", "D2")
    item = h.final_alerts()[h.alerts("FIFTH_CARD")[-1]["id"]]
    assert item["status"] == "open"
    h.run("S:D3")                                  # dummy's proper lead
    assert h.final_alerts()[item["id"]]["params"]["choices"] == "penalty_card,withdraw"
    item = ruled(h, "FIFTH_CARD", "option", option="penalty_card")
    assert item["law"] == "45E1" and h.state()["penalty_cards"] == {"W": ["D2"]}
    h.run("E:D4 W:D2")                               # his penalty card, played in turn
    assert "PENALTY_CARD_NOT_PLAYED" not in h.codes()
