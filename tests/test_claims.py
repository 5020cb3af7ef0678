"""controller/evidence/claims.py: claims and concessions checked double dummy against endplay, and
the check's behaviour without endplay (Laws 68-71; docs/claims.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from test_evidence import TABLE, claimed_board, evidence

from controller.evidence.claims import check_claim
from controller.laws.cards import Card, Deal, Seat

dds = pytest.importorskip("endplay.dds")
etypes = pytest.importorskip("endplay.types")

ROOT = Path(__file__).resolve().parents[1]

# A three-card ending, spades trumps, South (declarer) on lead:
#   North  S -  H 3 2  D 2       South S A K Q (all the trumps)
#   West   S J  H A K  D -       East  S -  H Q J  D A  (W's SJ: one trump out)
# S draws West's jack and takes all three tricks: double dummy 3.
ALL_TOP = {"declarer": "S", "leader": "S", "strain": "S", "remaining": 3,
           "hands": "N:.32.2. .QJ.A. AKQ... J.AK.."}
# South on lead at no trump with A K of spades and a small club; the defence holds the
# club winners: double dummy 2.
TWO_OF_THREE = {"declarer": "S", "leader": "S", "strain": "NT", "remaining": 3,
                "hands": "N:.432.. .QJT.. AK...2 Q...AK"}


def endplay_makes(position: dict[str, Any]) -> int:
    """Declarer's tricks double dummy, straight from endplay (independent of claims.py)."""
    deal = etypes.Deal(position["hands"])
    deal.first = etypes.Player.find(position["leader"])
    deal.trump = etypes.Denom.find(position["strain"])
    best = max(t for _, t in dds.solve_board(deal))
    leader, declarer = Seat.parse(position["leader"]), Seat.parse(position["declarer"])
    return int(best if not leader.is_opponent_of(declarer) else position["remaining"] - best)


def test_positions_have_the_answers_endplay_gives() -> None:
    assert endplay_makes(ALL_TOP) == 3
    assert endplay_makes(TWO_OF_THREE) == 2


def test_a_claim_exactly_right() -> None:
    check = check_claim({**ALL_TOP, "tricks": 3})
    assert check.verdict == "exact" and check.makeable == 3 and check.difference == 0
    assert check.available and check.checked
    # the line starts with declarer drawing the last trump
    assert check.line[0] == (Seat.S, Card.parse("SA")) or check.line[0][0] is Seat.S
    assert len(check.line) == 12


def test_a_claim_one_trick_too_many() -> None:
    check = check_claim({**TWO_OF_THREE, "tricks": 3})
    assert check.verdict == "exceeds" and check.makeable == endplay_makes(TWO_OF_THREE)
    assert check.difference == 1
    assert "1 more than makeable against best defence" in check.describe()


def test_a_concession_of_a_trick_that_cannot_be_lost() -> None:
    check = check_claim({**ALL_TOP, "tricks": 2})
    assert check.verdict == "concedes" and check.makeable == 3 and check.difference == -1
    assert "1 fewer than declarer makes with best play" in check.describe()
    wire = check.to_wire()
    assert wire["verdict"] == "concedes" and wire["makeable"] == 3 and len(wire["line"]) == 12


def test_defenders_on_lead() -> None:
    # the same three cards with West on lead: West cashes nothing (S has all the trumps)
    position = {**ALL_TOP, "leader": "W", "tricks": 3}
    assert check_claim(position).makeable == endplay_makes(position)


@pytest.mark.parametrize("played, tricks", [(24, 5), (24, 7), (28, 6), (32, 4)])
def test_claims_at_trick_seven_or_later_from_the_engine(played: int, tricks: int) -> None:
    """The engine's claim position of a replayed board, checked against endplay."""
    _, outs, _ = claimed_board(played, tricks)
    position = evidence(outs)["claim"]
    check = check_claim(position)
    makeable = endplay_makes(position)
    assert check.makeable == makeable
    assert check.verdict == ("exact" if tricks == makeable else
                             "exceeds" if tricks > makeable else "concedes")
    # the line is a legal play of the remaining cards: each card from its holder's hand
    hands = Deal.from_pbn(position["hands"])
    assert sorted(str(c) for _, c in check.line) == sorted(
        str(c) for s in Seat for c in hands[s])
    assert all(c in hands[s] for s, c in check.line)


@pytest.mark.parametrize("position, verdict", [
    (None, "invalid"),
    ({"tricks": 3}, "invalid"),
    ({**ALL_TOP, "tricks": 4}, "invalid"),
    ({**ALL_TOP, "tricks": 3, "strain": "Z"}, "invalid"),
    ({**ALL_TOP, "tricks": 3, "hands": "N:AKQ... - - -"}, "invalid"),
    ({**ALL_TOP, "tricks": 3, "hands": "nonsense"}, "invalid"),
    ({**ALL_TOP, "tricks": 3, "hands": None}, "no_hands"),
])
def test_bad_positions_are_reported_not_raised(position: Any, verdict: str) -> None:
    check = check_claim(position)
    assert check.verdict == verdict and not check.checked and check.reason
    assert "not checked" in check.describe()


BLOCKED = """
import json, sys
sys.modules["endplay"] = None          # as if the dd extra were not installed
sys.path.insert(0, {tests!r})
from controller.evidence.claims import check_claim, dds_available
from test_evidence import claimed_board, evidence
_, outs, _ = claimed_board(24, 5)
check = check_claim(evidence(outs)["claim"])
print(json.dumps({{"available": dds_available(), "verdict": check.verdict,
                   "checked": check.checked, "reason": check.reason,
                   "describe": check.describe()}}))
"""


def test_without_endplay_the_check_says_it_is_unavailable() -> None:
    code = BLOCKED.format(tests=str(ROOT / "tests"))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["available"] is False and out["verdict"] == "unavailable"
    assert not out["checked"] and "endplay" in out["reason"]
    assert out["describe"].startswith("claim not checked")


def test_engine_evidence_topic_name() -> None:
    _, outs, _ = claimed_board(24, 5)
    assert any(o.topic == f"bridge/{TABLE}/evidence" and "claim" in o.payload for o in outs)
