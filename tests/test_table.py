"""The twelve worked scenarios of laws.md section 7, through the wire contract's events.

Each scenario drives a table through the Engine exactly as the bridge (sensor events) and
the director's console (rulings) would, and checks the flags, the contract, the Law 64
result and the score the scenario states.
"""

from __future__ import annotations

import pytest
from scenarios import Harness

from controller.laws.cards import Deal, Rules, Seat

D = Deal.from_pbn


def test_t01_wrong_board_then_short_hand() -> None:
    h = Harness(8, D("N:JT86.KJT4.QT52.A A9.973.76.Q98743 K32.A6.J9843.JT2 Q754.Q852.AK.K65"),
                schedule=range(6, 9))
    h.board_tag(15)
    wrong = h.alerts("WRONG_BOARD")
    assert wrong and wrong[-1]["status"] == "open" and wrong[-1]["board"] == 15
    h.board_tag(8)  # the director swaps the boards
    assert h.final_alerts()[wrong[0]["id"]]["status"] == "resolved"
    assert h.state()["board"] == 8
    h.scan("NES")
    # W scans 12 cards: the club five stays in the board
    w_cards = [c for c in sorted(h.deal[h.t.board.dealer]) if str(c) != "C5"]  # type: ignore[union-attr]
    for c in w_cards:
        h.put("W", str(c))
    h.run("C:W:1C")
    count = h.alerts("HAND_COUNT")
    missing = h.alerts("MISSING_CARD")
    assert count and count[0]["seat"] == "W" and count[0]["status"] == "open"
    assert missing and missing[0]["card"] == "C5" and missing[0]["law"].startswith("14")
    h.put("W", "C5")  # found: the hand is complete, 14A: no change of call
    final = h.final_alerts()
    assert final[count[0]["id"]]["status"] == "resolved"
    assert final[missing[0]["id"]]["status"] == "resolved"
    assert "CARD_EXPOSED_DURING_AUCTION" not in h.codes()
    h.run("C:N:P")
    assert h.state()["auction"] == [["W", "1C"], ["N", "Pass"]]


@pytest.mark.parametrize("rules", [Rules.L2007, Rules.L2017])
def test_t02_bid_out_of_rotation_at_partners_turn(rules: Rules) -> None:
    h = Harness(1, D("N:9.JT52.KQ4.AK652 AQ4.K.A853.J8743 KT52.Q963.T972.Q J8763.A874.J6.T9"),
                rules=rules)
    h.board_tag(1)
    h.scan()
    h.run("C:N:1C C:W:1S")
    coor = h.alerts("CALL_OUT_OF_ROTATION")
    assert coor and coor[0]["seat"] == "W"
    h.rule("reject", alert=coor[0]["id"])
    h.run("C:E:P C:S:1H C:W:1S")
    if rules is Rules.L2017:
        h.rule("comparable", alert=coor[0]["id"])
    h.run("C:N:2C C:E:P C:S:P C:W:P")
    state = h.state()
    assert state["contract"] == "2C" and state["declarer"] == "N"
    assert ["W", "1S"] not in state["auction"][:2]
    assert h.t.board.auction.opening_leader.name == "E"  # type: ignore[union-attr]
    assert "CALL_BY_PLAYER_REQUIRED_TO_PASS" not in h.codes()


def test_t03_insufficient_bid_accepted() -> None:
    h = Harness(2, D("N:KJ.A7.AQ3.AKQJ63 A64.T9863.T8742. T9872.KQ2.KJ6.85 Q53.J54.95.T9742"))
    h.board_tag(2)
    h.scan()
    h.run("C:E:P C:S:1S C:W:P C:N:2C C:E:1H")
    ib = h.alerts("INSUFFICIENT_BID")
    assert ib and ib[0]["seat"] == "E" and ib[0]["status"] == "open"
    h.run("C:S:2S")
    assert h.final_alerts()[ib[0]["id"]]["status"] == "resolved"
    h.run("C:W:P C:N:4S C:E:P C:S:P C:W:P")
    state = h.state()
    assert state["contract"] == "4S" and state["declarer"] == "S"
    assert h.t.board.auction.opening_leader.name == "W"  # type: ignore[union-attr]


def test_t04_inadmissible_double_lho_calls_over_it() -> None:
    h = Harness(3, D("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643"))
    h.board_tag(3)
    h.scan()
    h.run("C:S:1H C:W:P C:N:3H C:E:P C:S:X")
    dbl = h.alerts("INADMISSIBLE_DOUBLE")
    assert dbl and dbl[0]["seat"] == "S"
    h.run("C:W:P")
    assert h.state()["turn"] == "S"
    h.run("C:S:4H C:W:P C:N:P C:E:P")
    state = h.state()
    assert state["contract"] == "4H" and state["declarer"] == "S"
    assert state["auction"] == [["S", "1H"], ["W", "Pass"], ["N", "3H"], ["E", "Pass"],
                                ["S", "4H"], ["W", "Pass"], ["N", "Pass"], ["E", "Pass"]]


def test_t05_honour_exposed_and_call_after_close() -> None:
    h = Harness(4, D("N:KQ86.T76.A42.AK7 J5.J985.J963.643 932..KQT75.QT952 AT74.AKQ432.8.J8"))
    h.board_tag(4)
    h.scan()
    h.run("C:W:1H C:N:X +E:HJ C:E:P C:S:2D C:W:P C:N:3N C:E:P C:S:P C:W:P C:E:X")
    exposed = h.alerts("CARD_EXPOSED_DURING_AUCTION")
    assert exposed and exposed[0]["seat"] == "E" and exposed[0]["card"] == "HJ"
    late = h.alerts("CALL_AFTER_AUCTION_CLOSED")
    assert late and late[0]["seat"] == "E"
    assert "CALL_BY_PLAYER_REQUIRED_TO_PASS" not in h.codes()
    state = h.state()
    assert state["contract"] == "3NT" and state["declarer"] == "N"
    assert state["penalty_cards"] == {"E": ["HJ"]}
    h.run("-E:HJ +E:HJ AUTO")
    result = h.result()
    assert result is not None
    assert result["tricks"] == 7 and result["score_ns"] == -200


def test_t06_leads_out_of_turn_accepted() -> None:
    h = Harness(5, D("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643"))
    h.board_tag(5)
    h.scan()
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:1N C:E:P C:S:3N C:W:P C:N:P C:E:P")
    assert h.state()["declarer"] == "N"
    h.run("W:CT N:C2 E:CQ S:CA(S)")
    olot = h.alerts("OPENING_LEAD_OUT_OF_TURN")
    assert olot and olot[0]["seat"] == "W"
    assert h.final_alerts()[olot[0]["id"]]["status"] == "resolved"
    h.run("S:DQ W:D2 N:D5 E:DA(E) W:C4 N:CJ E:CK S:C8(E)")
    lot = h.alerts("LEAD_OUT_OF_TURN")
    assert lot and lot[0]["seat"] == "W" and lot[0]["trick"] == 3
    assert h.final_alerts()[lot[0]["id"]]["status"] == "resolved"
    h.run("AUTO")
    result = h.result()
    assert result is not None and result["tricks"] == 7 and result["score_ns"] == -200
    assert "REVOKE" not in h.codes()


def test_t07_premature_play_by_a_defender() -> None:
    h = Harness(12, D("N:96.KJ4.A843.Q632 KQT5.732.T95.A87 A83.AT86.J2.JT94 J742.Q95.KQ76.K5"))
    h.board_tag(12)
    h.scan()
    h.run("C:W:1D C:N:P C:E:1S C:S:P C:W:1N C:N:P C:E:P C:S:P")
    h.run("N:C2 E:C7 S:C9 W:CK(W) W:DK +S:DJ")
    pp = h.alerts("PREMATURE_PLAY")
    assert pp and pp[0]["seat"] == "S"
    assert h.state()["penalty_cards"] == {"S": ["DJ"]}
    h.rule("option", alert=pp[0]["id"], option="lowest")
    h.run("N:D3 E:D5 -S:DJ +S:DJ")
    assert h.last_trick().winner.name == "W"
    h.run("AUTO")
    result = h.result()
    assert result is not None and result["contract"] == "1NT" and result["declarer"] == "W"
    assert result["tricks"] == 7 and result["score_ns"] == -90
    assert "REVOKE" not in h.codes()


def test_t08_established_revoke_won_by_offender() -> None:
    h = Harness(10, D("N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"))
    h.board_tag(10)
    h.scan()
    h.run("C:E:1C C:S:1H C:W:P C:N:4H C:E:P C:S:P C:W:P")
    h.run("W:CT N:C3 E:CA S:C7(E) E:CK S:CQ W:C4 N:C6(E) E:S3 S:S5 W:ST N:SQ(N)")
    h.run("N:H5 E:H2 S:HA W:H3(S) S:HK W:D2 N:HT E:H6(S) S:D5 W:D3 N:DK E:H9(E)")
    revoke = h.alerts("REVOKE")
    assert revoke and revoke[0]["seat"] == "E" and revoke[0]["trick"] == 6
    h.run("AUTO")
    final = h.final_alerts()[revoke[0]["id"]]
    assert final["status"] == "established"
    result = h.result()
    assert result is not None
    assert result["tricks_played"] == 9 and result["tricks"] == 11
    assert result["score_ns"] == 650


def test_t09_declarer_revokes_dummy_wins_second_revoke_same_suit() -> None:
    h = Harness(11, D("N:K73.A84.AKQ5.962 JT98.JT9.JT98.Q3 AQ5.KQ62.2.AKJ84 642.753.7643.T75"))
    h.board_tag(11)
    h.scan()
    h.run("C:S:2N C:W:P C:N:3N C:E:P C:S:P C:W:P")
    h.run("W:H3 N:H4 E:H9 S:HQ(S) S:S5 W:S2 N:SK E:S8(N) N:H8 E:HT S:H2 W:H5(E)")
    h.run("E:DJ S:C4 W:D3 N:DA(N) N:S3 E:S9 S:SQ W:S4(S) S:H6 W:H7 N:HA E:HJ(N)")
    h.run("N:DK E:D8 S:C8 W:D4(N) AUTO")
    revokes = [a for a in h.final_alerts().values() if a["code"] == "REVOKE"]
    assert [r["trick"] for r in revokes] == [4, 7]
    assert all(r["status"] == "established" and r["seat"] == "S" for r in revokes)
    result = h.result()
    assert result is not None
    assert result["tricks_played"] == 11 and result["tricks"] == 10
    assert result["score_ns"] == 430


def test_t10_revoke_corrected_and_declarers_fifth_card() -> None:
    h = Harness(9, D("N:KJ74.J8.AKJ5.AQ6 A.AQT94.82.KT932 Q532.763.T93.875 T986.K52.Q764.J4"))
    h.board_tag(9)
    h.scan()
    h.run("C:N:2N C:E:P C:S:P C:W:P")
    h.run("E:HT S:H3 W:H2 N:C6 -N:C6 +N:HJ")
    assert h.last_trick().winner.name == "N"
    revoke = h.alerts("REVOKE")
    assert revoke and h.final_alerts()[revoke[0]["id"]]["status"] == "corrected"
    h.run("N:SK E:SA S:S2 W:S6(E) +N:D5 -N:D5")
    fifth = h.alerts("FIFTH_CARD")
    assert fifth and fifth[0]["seat"] == "N" and fifth[0]["card"] == "D5"
    assert h.state()["penalty_cards"] == {}
    h.run("AUTO")
    result = h.result()
    assert result is not None and result["tricks"] == 8 and result["score_ns"] == 120


def test_t11_revoke_on_trick_twelve() -> None:
    h = Harness(13, D("N:KQ85.J82.Q8542.A 743.KT76.97.JT76 AJ9.A953.J3.Q542 T62.Q4.AKT6.K983"))
    h.board_tag(13)
    h.scan()
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:1S C:E:P C:S:4S C:W:P C:N:P C:E:P")
    h.run("E:D9 S:D3 W:DK N:D2(W) W:DA N:D4 E:D7 S:DJ(W) W:D6 N:D8 E:C6 S:S9(S)")
    h.run("S:SA W:S2 N:S5 E:S3(S) S:SJ W:S6 N:S8 E:S4(S) S:C2 W:C3 N:CA E:C7(N)")
    h.run("N:SK E:S7 S:H3 W:ST(N) N:SQ E:CT S:H5 W:C8(N) N:DQ E:H6 S:C4 W:DT(N)")
    h.run("N:D5 E:H7 S:C5 W:C9(N) N:H2 E:HT S:HA W:H4(S) S:CQ W:HQ N:H8 E:CJ")
    h.run("S:H9 W:CK N:HJ E:HK")
    revoke = [a for a in h.final_alerts().values() if a["code"] == "REVOKE"]
    assert revoke and revoke[0]["law"] == "62D" and revoke[0]["seat"] == "W"
    result = h.result()
    assert result is not None
    assert result["tricks_played"] == 10 and result["tricks"] == 9
    assert result["score_ns"] == -100


def test_t12_defective_trick() -> None:
    h = Harness(14, D("N:KQT2.8653.A7.K32 A.KJT.9654.AQ876 9743.74.QJ32.J95 J865.AQ92.KT8.T4"))
    h.board_tag(14)
    h.scan()
    h.run("C:E:1C C:S:P C:W:1H C:N:P C:E:2C C:S:P C:W:2N C:N:P C:E:3N C:S:P C:W:P C:N:P")
    h.run("N:SK E:SA S:S3 W:S5(E) E:CA S:C5 W:C4 N:C2(E) E:CQ S:C9 W:CT N:C3(E)")
    h.run("E:C6 S:CJ W:H2 N:CK(N) N:H3 E:HT S:H4 W:HQ(W) W:SJ N:SQ E:D4")
    h.run("+N:ST +E:D5")
    defective = h.alerts("DEFECTIVE_TRICK")
    assert defective and defective[-1]["seat"] == "S" and defective[-1]["trick"] == 6
    h.rule("accept", alert=defective[-1]["id"], seat="S", card="S4")
    h.run("S:S7 W:S6(N) AUTO")
    result = h.result()
    assert result is not None
    assert result["tricks_played"] == 9 and result["tricks"] == 10
    assert result["score_ns"] == -430


# -- the deal file checked against the hand scans, before anyone calls (a fouled deal found early)

DEAL8 = D("N:JT86.KJT4.QT52.A A9.973.76.Q98743 K32.A6.J9843.JT2 Q754.Q852.AK.K65")
DEAL9 = D("N:KJ74.J8.AKJ5.AQ6 A.AQT94.82.KT932 Q532.763.T93.875 T986.K52.Q764.J4")


def test_scans_matching_the_deal_raise_nothing() -> None:
    h = Harness(8, DEAL8, others={9: DEAL9})
    h.board_tag(8)
    h.scan()
    assert h.alerts() == []


@pytest.mark.parametrize("steps", [1, 2, 3])
def test_rotated_board_is_named_before_the_first_call(steps: int) -> None:
    h = Harness(8, DEAL8)
    h.board_tag(8)
    h.scan(deal=DEAL8.rotated(steps))
    found = h.alerts("CARDS_FROM_WRONG_BOARD")
    assert found and found[0]["detail"] == "rotated"
    assert found[0]["params"]["count"] == steps
    assert h.state()["auction"] == []  # nobody has called: the display says so first
    indicator = h.engine._tables["7"].indicator
    assert indicator is not None and found[0]["id"] in indicator["alerts"]


def test_cards_of_another_board_are_named() -> None:
    h = Harness(8, DEAL8, others={9: DEAL9})
    h.board_tag(8)
    h.scan(deal=DEAL9)
    found = h.alerts("CARDS_FROM_WRONG_BOARD")
    assert found and found[0]["detail"] == "cards_match_board"
    assert found[0]["params"]["board"] == 9


def test_a_card_in_the_wrong_hand_is_an_incorrect_count() -> None:
    n, e = sorted(DEAL8[Seat.N]), sorted(DEAL8[Seat.E])
    swapped = Deal.from_hands({Seat.N: frozenset(n[1:] + e[:1]), Seat.E: frozenset(e[1:] + n[:1]),
                               Seat.S: DEAL8[Seat.S], Seat.W: DEAL8[Seat.W]})
    h = Harness(8, DEAL8)
    h.board_tag(8)
    h.scan(deal=swapped)
    found = h.alerts("INCORRECT_CARD_COUNT")
    assert {a["card"] for a in found} == {str(n[0]), str(e[0])}
    assert all(a["law"] == "13" for a in found)
