"""Law 55B: declarer's lead out of turn refused.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, T06, feed, only

from controller.laws.cards import Contract, Rules, Seat
from controller.laws.irregularities import Code, IrregularityLog
from controller.laws.play import Play
from controller.laws.rulings import Ruling, RulingKind


@pytest.mark.parametrize("rules", BOTH)
def test_declarer_lead_from_the_wrong_hand_refused_is_55b(rules: Rules) -> None:
    """55B2 (both editions): declarer led from the wrong hand, a defender does not accept
    it: he withdraws it and leads from the correct hand. Not 55A (the lead accepted)."""
    log = IrregularityLog()
    play = Play(Contract.parse("3NT"), Seat.N, log, rules=rules,
                hands={s: T06[s] for s in Seat})
    feed(play, "E:C5 S:CA W:C3 N:C2")          # dummy (S) wins trick 1
    feed(play, "N:S4")                         # declarer leads from his own hand
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.REJECT, alert=lot.id))
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.law == "55B" and lot.detail == "refused"
    assert play.turn is Seat.S and play.penalty_cards == {}


@pytest.mark.parametrize("rules", BOTH)
def test_declarer_lead_at_a_defenders_turn_refused_is_55b(rules: Rules) -> None:
    """55B1: declarer leads when a defender is due; ruled a lead, then not accepted: the
    card goes back to his hand without further rectification."""
    log = IrregularityLog()
    play = Play(Contract.parse("3NT"), Seat.N, log, rules=rules,
                hands={s: T06[s] for s in Seat})
    feed(play, "E:CK S:C8 W:C3 N:C2")          # E wins trick 1 and is due to lead
    feed(play, "N:S4")                         # declarer "leads"
    fifth = only(log, Code.FIFTH_CARD)
    assert play.rule(Ruling(RulingKind.LEAD, alert=fifth.id))
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert play.rule(Ruling(RulingKind.REJECT, alert=lot.id))
    lot = only(log, Code.LEAD_OUT_OF_TURN)
    assert lot.law == "55B" and play.turn is Seat.E and play.penalty_cards == {}
