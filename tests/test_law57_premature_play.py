"""Law 57A: a premature play's alert closes once declarer's option is applied or lapses.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, indicator, t06_play

from controller.laws.cards import Rules


@pytest.mark.parametrize("rules", BOTH)
def test_premature_play_alert_closes_once_declarers_option_is_applied(rules: Rules) -> None:
    """57A: a defender plays before his partner: declarer's option (here: partner plays his
    lowest card of the suit led). Applied, the alert is resolved; display and the seat's
    light clear; the option still binds partner's play."""
    h = t06_play(rules)
    h.run("E:C5 S:CA W:C3 N:C2 S:D3 +E:D4")        # E plays before his partner W
    item = h.alerts("PREMATURE_PLAY")[-1]
    assert item["status"] == "open" and item["seat"] == "E"
    assert indicator(h)["seats"]["E"]["alert"] is True
    h.rule("option", alert=item["id"], option="lowest")
    item = h.final_alerts()[item["id"]]
    assert item["status"] == "resolved" and item["params"]["option"] == "lowest"
    ind = indicator(h)
    assert item["id"] not in ind["alerts"] and ind["seats"]["E"]["alert"] is False
    assert not any("57A" in row for row in ind["display"]["en"])
    h.run("W:D2")                                   # his lowest diamond: no revoke
    assert "REVOKE" not in h.codes()
    h.run("AUTO")
    assert h.result() is not None
    assert h.final_alerts()[item["id"]]["status"] == "resolved"


@pytest.mark.parametrize("rules", BOTH)
def test_premature_play_alert_closes_when_the_option_has_lapsed(rules: Rules) -> None:
    """57A's options are about the offender's partner's play to that trick: once he has
    played with no option chosen, there is nothing left to choose; the penalty card stays
    (50) until played."""
    h = t06_play(rules)
    h.run("E:C5 S:CA W:C3 N:C2 S:D3 +E:DA")         # E's ace, before his partner W
    item = h.alerts("PREMATURE_PLAY")[-1]
    assert item["status"] == "open"
    h.run("W:D2")                                   # partner plays: the option lapsed
    item = h.final_alerts()[item["id"]]
    assert item["status"] == "resolved" and item["params"]["option_lapsed"] is True
    assert item["id"] not in indicator(h)["alerts"]
    assert h.state()["penalty_cards"] == {"E": ["DA"]}
    out = h.rule("option", alert=item["id"], option="lowest")     # too late for 57A
    assert out and out[0].topic.endswith("/error")
