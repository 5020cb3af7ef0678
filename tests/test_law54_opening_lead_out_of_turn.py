"""Law 54: an opening lead out of turn (54A: declarer spreads his hand).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from law_cases import BOTH, T06, feed, only, t06_harness
from scenarios import Harness

from controller.laws.cards import Contract, Rules, Seat
from controller.laws.irregularities import Code, IrregularityLog
from controller.laws.messages import LANGUAGES, ui_text
from controller.laws.play import Play
from controller.laws.rulings import Ruling, RulingKind


def feed_items(h: Harness, kind: str) -> list[dict[str, Any]]:
    return [o.payload for o in h.out if o.topic.endswith("/feed") and o.payload["kind"] == kind]


@pytest.mark.parametrize("rules", BOTH)
@pytest.mark.parametrize("ruling", ["option", "accept"])
def test_54a_declarer_spreads_dummy_becomes_declarer_everywhere(rules: Rules,
                                                                ruling: str) -> None:
    """54A: after a faced opening lead out of turn declarer may spread his hand; he becomes
    dummy and his partner declarer. The documented ``option`` ruling with ``option: "54A"``
    does it; the state, result, feed, record and displays name the new declarer."""
    h = t06_harness(rules)
    assert h.state()["declarer"] == "N"
    h.put("W", "CT")                     # W leads; E (declarer's LHO) was due
    olot = h.alerts("OPENING_LEAD_OUT_OF_TURN")[-1]
    h.rule(ruling, alert=olot["id"], option="54A")
    final = h.final_alerts()[olot["id"]]
    assert final["law"] == "54A" and final["status"] == "resolved"
    state = h.state()
    assert (state["declarer"], state["dummy"]) == ("S", "N")
    # the lead now comes from the new declarer's LHO: N (the new dummy) plays next
    assert state["turn"] == "N"
    indicator = [o.payload for o in h.out if o.topic.endswith("/indicator")][-1]
    for lang in LANGUAGES:
        line = ui_text("contract", lang, short=True, contract=Contract.parse("3NT"),
                       seat=Seat.S)
        assert indicator["display"][lang][1].startswith(line)
    h.run("N:C2 E:CQ S:CA")
    h.auto()
    result = h.result()
    assert result is not None and result["declarer"] == "S"
    assert feed_items(h, "result")[-1]["declarer"] == "S"
    record = h.t.record
    assert record is not None and record.declarer is Seat.S
    # the score is the same side's: NS declare either way
    assert result["score_ns"] == h.t.board.score_ns  # type: ignore[union-attr]


def test_54a_option_on_the_core_swaps_roles() -> None:
    log = IrregularityLog()
    play = Play(Contract.parse("3NT"), Seat.N, log, hands={s: T06[s] for s in Seat})
    feed(play, "W:CT")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.OPTION, alert=olot.id, option="54A"))
    assert (play.declarer, play.dummy) == (Seat.S, Seat.N)
    # an option that is not 54A does not settle an opening lead out of turn
    log = IrregularityLog()
    play = Play(Contract.parse("3NT"), Seat.N, log, hands={s: T06[s] for s in Seat})
    feed(play, "W:CT")
    olot = only(log, Code.OPENING_LEAD_OUT_OF_TURN)
    assert not play.rule(Ruling(RulingKind.OPTION, alert=olot.id, option="highest"))
    assert play.declarer is Seat.N and only(log, Code.OPENING_LEAD_OUT_OF_TURN).is_open


def test_54a_survives_an_undo_of_a_later_card() -> None:
    h = t06_harness()
    h.put("W", "CT")
    olot = h.alerts("OPENING_LEAD_OUT_OF_TURN")[-1]
    h.rule("option", alert=olot["id"], option="54A")
    h.put("N", "C2")
    h.send({"type": "button", "button": "undo"})
    assert h.state()["declarer"] == "S"
