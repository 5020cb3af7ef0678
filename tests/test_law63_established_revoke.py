"""Law 63: when a revoke is established (by play, 63A1, or by a claim).

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, D, feed, only

from controller.laws.cards import Contract, Rules, Seat
from controller.laws.irregularities import Code, IrregularityLog, Status
from controller.laws.play import Play
from controller.laws.rulings import Ruling, RulingKind

T08 = D("N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94")


@pytest.mark.parametrize("rules", BOTH)
def test_revoke_established_by_a_claim_cites_the_claim_law(rules: Rules) -> None:
    """2017 63A4 / 2007 63A3: a member of the offending side makes or agrees to a claim or
    concession: the revoke is established (not 63A1, a play to the next trick)."""
    log = IrregularityLog()
    play = Play(Contract.parse("4H"), Seat.S, log, rules=rules,
                hands={s: T08[s] for s in Seat})
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9")
    assert only(log, Code.REVOKE).status is Status.OPEN
    assert play.rule(Ruling(RulingKind.CLAIM, tricks=6))
    revoke = only(log, Code.REVOKE)
    assert revoke.status is Status.ESTABLISHED
    assert revoke.law == ("63A4" if rules is Rules.L2017 else "63A3")
    assert revoke.param("tricks_transferred") == 2


def test_revoke_established_by_play_still_63a1() -> None:
    log = IrregularityLog()
    play = Play(Contract.parse("4H"), Seat.S, log, hands={s: T08[s] for s in Seat})
    feed(play, "W:CT N:C3 E:CA S:C7  E:CK S:CQ W:C4 N:C6  E:S3 S:S5 W:ST N:SQ"
               " N:H5 E:H2 S:HA W:H3  S:HK W:D2 N:HT E:H6  S:D5 W:D3 N:DK E:H9 E:C2")
    assert only(log, Code.REVOKE).law == "63A1"
