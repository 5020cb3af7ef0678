"""The Laws' second pass: each case written from the Laws text (2017 and, where
it differs, 2007), through the core and through the wire contract.

Deals are laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

from typing import Any

import pytest
from scenarios import Harness

from controller.laws.cards import Card, Contract, Deal, Rules, Seat
from controller.laws.irregularities import Code, IrregularityLog, Status
from controller.laws.messages import LANGUAGES, alert_texts, ui_text
from controller.laws.play import Play
from controller.laws.rulings import Ruling, RulingKind

D = Deal.from_pbn
C = Card.parse
T06 = D("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643")
T08 = D("N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94")
BOTH = [Rules.L2007, Rules.L2017]


def feed(play: Play, events: str) -> None:
    for token in events.split():
        take = token.startswith("-")
        seat, card = token.lstrip("+-").split(":")
        (play.take if take else play.put)(Seat[seat], C(card))


def only(log: IrregularityLog, code: Code) -> Any:
    items = [i for i in log if i.code is code]
    assert len(items) == 1, items
    return items[0]


def feed_items(h: Harness, kind: str) -> list[dict[str, Any]]:
    return [o.payload for o in h.out if o.topic.endswith("/feed") and o.payload["kind"] == kind]


# ------------------------------------------------------------------ point 6: citations
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


# ------------------------------------------------------------------ point 3: Law 54A
def t06_harness(rules: Rules = Rules.L2017) -> Harness:
    h = Harness(5, T06, rules=rules)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:1N C:E:P C:S:3N C:W:P C:N:P C:E:P")
    return h


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


# ------------------------------------------------------------------ point 7: another pack
def test_card_of_another_boards_pack_is_never_played() -> None:
    """Laws 13/15 (2007 13/17D): a card that is not of this board's pack is not that seat's
    card: flagged with what the director can do, not played, resolved when taken away."""
    h = t06_harness()
    h.tag("tray", "E", "present", card="C5", deck="9", uid="FOREIGN1")
    item = h.alerts("CARD_FROM_OTHER_BOARD")[-1]
    assert item["status"] == "open" and item["seat"] == "E" and item["card"] == "C5"
    assert item["params"]["deck"] == "9" and item["law"] == "13C"
    for lang in LANGUAGES:
        assert item["text"][lang]
    assert "not played" in item["text"]["en"] and "director" in item["text"]["en"]
    assert h.state()["current"] == [] and h.state()["turn"] == "E"
    assert h.state()["phase"] == "lead"
    indicator = [o.payload for o in h.out if o.topic.endswith("/indicator")][-1]
    assert item["id"] in indicator["alerts"] and indicator["seats"]["E"]["alert"]
    h.tag("tray", "E", "removed", card="C5", deck="9", uid="FOREIGN1")
    assert h.final_alerts()[item["id"]]["status"] == "resolved"
    h.put("E", "C5")                     # his own club five: played
    assert h.state()["current"] == [{"seat": "E", "card": "C5"}]


def test_card_of_another_pack_in_the_hand_scan_and_the_auction() -> None:
    h = Harness(5, T06)
    h.board_tag(5)
    h.tag("tray", "N", "present", card="SA", deck="B6", uid="F6SA")
    # read before any card of his own it may be the first of a wrong board's hand (15A,
    # issue 30): the first card of his own shows it a stray card of another pack (13C)
    assert not h.alerts("CARD_FROM_OTHER_BOARD")
    h.scan()
    assert h.alerts("CARD_FROM_OTHER_BOARD")[0]["status"] == "open"
    h.run("C:N:1D")
    # not counted in N's scan: N holds 13 of his own cards, no count alert
    assert "INCORRECT_CARD_COUNT" not in h.codes() and "HAND_COUNT" not in h.codes()
    h.tag("tray", "E", "present", card="H2", deck="B6", uid="F6H2")
    assert "CARD_EXPOSED_DURING_AUCTION" not in h.codes()
    assert len(h.alerts("CARD_FROM_OTHER_BOARD")) == 2


@pytest.mark.parametrize("deck", ["5", "B5", "05"])
def test_the_boards_own_pack_is_never_flagged(deck: str) -> None:
    h = Harness(5, T06)
    h.board_tag(5)
    h.tag("tray", "N", "present", card="SK", deck=deck, uid="OWN")
    assert "CARD_FROM_OTHER_BOARD" not in h.codes()


def test_pack_without_a_number_is_learnt_from_the_first_card() -> None:
    h = Harness(5, T06)
    h.board_tag(5)
    h.tag("tray", "N", "present", card="SK", deck="red", uid="R1")
    h.tag("tray", "N", "present", card="SJ", deck="red", uid="R2")
    assert "CARD_FROM_OTHER_BOARD" not in h.codes()
    h.tag("tray", "N", "present", card="S4", deck="blue", uid="B1")
    assert h.alerts("CARD_FROM_OTHER_BOARD")[-1]["params"]["deck"] == "blue"


def test_messages_for_the_new_code_in_every_language() -> None:
    from controller.laws.irregularities import Irregularity
    irr = Irregularity(id=1, code=Code.CARD_FROM_OTHER_BOARD, law="13C", seat=Seat.E,
                       card=C("C5"), params=(("deck", "9"),))
    for short in (False, True):
        texts = alert_texts(irr, short=short)
        assert set(texts) == set(LANGUAGES) and all(texts.values())
    assert "13C" in alert_texts(irr)["en"]


# ------------------------------------------------------------------ point 8: board life cycle
def play_out(h: Harness) -> None:
    h.run("E:C5")
    h.auto()
    for seat in Seat:
        for card in sorted(h.deal[seat]):
            h.take(seat.name, str(card))


@pytest.mark.parametrize("rules", BOTH)
def test_wallet_of_the_board_just_finished_read_again_is_wrong_board(rules: Rules) -> None:
    """15B (2007 15): a board already played at this table: the director is told; the next
    hand is that board again, not an unnamed board."""
    h = t06_harness(rules)
    play_out(h)
    assert h.state()["phase"] == "done"
    h.board_tag(5)
    wrong = h.alerts("WRONG_BOARD")
    assert wrong and wrong[-1]["detail"] == "already_played" and wrong[-1]["board"] == 5
    assert wrong[-1]["law"] == ("15" if rules is Rules.L2007 else "15B")
    assert h.state()["board"] == 5 and h.state()["phase"] == "scanning"


def test_wallet_read_again_once_play_is_complete_is_wrong_board() -> None:
    h = t06_harness()
    h.run("E:C5")
    h.auto()
    assert h.state()["phase"] == "complete"
    h.board_tag(5)
    assert h.alerts("WRONG_BOARD")[-1]["detail"] == "already_played"


def test_wallet_read_again_during_its_board_changes_nothing() -> None:
    h = t06_harness()
    h.board_tag(5)
    h.run("E:C5")
    h.board_tag(5)
    assert "WRONG_BOARD" not in h.codes()
    assert h.state()["current"] == [{"seat": "E", "card": "C5"}]


def test_board_ruling_keeps_the_replaced_boards_number_on_its_alerts() -> None:
    h = Harness(5, T06)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1D C:S:1H")                      # S calls out of rotation: open
    coor = h.alerts("CALL_OUT_OF_ROTATION")[-1]
    assert coor["board"] == 5 and coor["status"] == "open"
    h.rule("board", board=7)
    closing = [a for a in h.alerts() if a["id"] == coor["id"]][-1]
    assert closing["status"] == "resolved" and closing["detail"] == "board_replaced"
    assert closing["board"] == 5
    assert h.state()["board"] == 7
    assert all(i["id"] != coor["id"] for i in h.state()["irregularities"])
    # the new board's own alerts carry its number (its cards are its own pack's, deck 7:
    # board 5's pack would be a hand from a wrong board, 15A)
    h.board = 7
    h.scan()
    h.run("C:E:1C")                                # S (dealer of 7) was due
    assert h.alerts("CALL_OUT_OF_ROTATION")[-1]["board"] == 7


def test_swapped_board_before_the_first_call_keeps_its_number_too() -> None:
    h = Harness(8, T06, schedule=range(6, 9))
    h.board_tag(15)
    wrong = h.alerts("WRONG_BOARD")[-1]
    assert wrong["board"] == 15
    h.board_tag(8)
    closing = [a for a in h.alerts() if a["id"] == wrong["id"]][-1]
    assert closing["status"] == "resolved" and closing["board"] == 15


# ------------------------------------------------------------------ the auction: harness
T02 = D("N:9.JT52.KQ4.AK652 AQ4.K.A853.J8743 KT52.Q963.T972.Q J8763.A874.J6.T9")


def auction(rules: Rules, script: str = "") -> Harness:
    h = Harness(1, T02, rules=rules)     # board 1: N deals
    h.board_tag(1)
    h.scan()
    h.run(script)
    return h


def calls(h: Harness) -> list[list[str]]:
    return h.state()["auction"]


# ------------------------------------------------------------------ point 1: Law 28B
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


# ------------------------------------------------------------------ point 2: Law 36
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


# ------------------------------------------------------------------ point 4: 2017 27B4
def test_27b4_insufficient_bid_replaced_by_another_accepted_by_lho() -> None:
    """2017 27B4: the insufficient bid replaced by another insufficient bid: LHO may accept
    it; the auction goes on from it and later calls are judged against it."""
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.final_alerts()[h.alerts("INSUFFICIENT_BID")[0]["id"]]
    assert ib["status"] == "open" and ib["law"] == "27B4" and ib["call"] == "1D"
    h.run("C:S:1H")                          # sufficient over 1D: S accepts it
    ib = h.final_alerts()[ib["id"]]
    assert (ib["status"], ib["detail"], ib["law"]) == ("resolved", "accepted", "27B4")
    assert calls(h) == [["N", "1S"], ["E", "1D"], ["S", "1H"]]
    assert len(h.alerts("INSUFFICIENT_BID")) == len([a for a in h.alerts("INSUFFICIENT_BID")
                                                      if a["id"] == ib["id"]])
    h.run("C:W:P C:N:P C:E:P")
    assert h.state()["contract"] == "1H"


def test_27b4_accepted_by_a_ruling_and_later_insufficient_bid_judged_against_it() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.alerts("INSUFFICIENT_BID")[0]
    h.rule("accept", alert=ib["id"])
    assert h.final_alerts()[ib["id"]]["law"] == "27B4"
    h.run("C:S:1C")                          # insufficient over 1D: a new irregularity
    assert h.alerts("INSUFFICIENT_BID")[-1]["id"] != ib["id"]
    assert h.alerts("INSUFFICIENT_BID")[-1]["params"]["last_bid"] == "1D"


def test_27b4_replacement_not_accepted_then_replaced_legally() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:1H C:E:1D")
    ib = h.alerts("INSUFFICIENT_BID")[0]
    h.rule("reject", alert=ib["id"])
    h.run("C:E:2H")                          # lowest sufficient in the original denomination
    final = h.final_alerts()[ib["id"]]
    assert final["law"] == "27B1a" and final["detail"] == "lowest_sufficient"
    assert calls(h)[-1] == ["E", "2H"]


def test_2007_has_no_27b4_second_insufficient_bid_is_struck() -> None:
    h = auction(Rules.L2007, "C:N:1S C:E:1H C:E:1D")
    ib = h.final_alerts()[h.alerts("INSUFFICIENT_BID")[0]["id"]]
    assert ib["law"] == "27" and ib["params"]["invalid_replacement"] == "1D"
    h.run("C:S:P")                           # S calls: the original 1H is accepted (27A1)
    assert calls(h) == [["N", "1S"], ["E", "1H"], ["S", "Pass"]]


# ------------------------------------------------------------------ point 5: Law 25A
@pytest.mark.parametrize("rules", BOTH)
def test_25a_unintended_call_corrected_after_lho_called(rules: Rules) -> None:
    """25A1: until partner calls, an unintended call may be replaced by the intended one,
    even after LHO has called; 25A4: LHO may then withdraw his call, no rectification."""
    h = auction(rules, "C:N:1C C:E:1H C:N:1D")   # N meant 1D; E already called
    coor = h.alerts("CALL_OUT_OF_ROTATION")[-1]
    h.rule("unintended", alert=coor["id"])
    assert calls(h) == [["N", "1D"], ["E", "1H"]] and h.state()["turn"] == "S"
    change = h.alerts("CHANGE_OF_CALL")[-1]
    assert (change["law"], change["detail"], change["status"]) == ("25A", "unintended",
                                                                   "resolved")
    assert change["params"]["original"] == "1C"
    assert h.final_alerts()[coor["id"]]["status"] == "resolved"
    h.run("C:E:2C")                          # E withdraws his 1H for 2C: no irregularity
    assert calls(h) == [["N", "1D"], ["E", "2C"]]
    assert {a["code"] for a in h.alerts()} == {"CALL_OUT_OF_ROTATION", "CHANGE_OF_CALL"}
    h.run("C:S:P C:W:P C:N:P")
    assert h.state()["contract"] == "2C"


def test_25a_lho_call_no_longer_sufficient_is_withdrawn() -> None:
    h = auction(Rules.L2017, "C:N:1C C:E:1D")
    h.rule("unintended", seat="N", call="1H")     # the director rules from seat and call
    assert calls(h) == [["N", "1H"]] and h.state()["turn"] == "E"
    assert h.alerts("CHANGE_OF_CALL")[-1]["params"]["lho_withdrawn"] == "1D"
    h.run("C:E:1S")
    assert calls(h) == [["N", "1H"], ["E", "1S"]] and "INSUFFICIENT_BID" not in h.codes()


def test_25a_lho_may_take_his_call_back() -> None:
    h = auction(Rules.L2017, "C:N:1C C:E:1H")
    h.rule("unintended", seat="N", call="1D")
    h.tag("bid", "E", "removed", call="1H", uid="BIDE1H")
    assert calls(h) == [["N", "1D"]] and h.state()["turn"] == "E"


@pytest.mark.parametrize("rules", BOTH)
def test_25a_not_after_partner_has_called(rules: Rules) -> None:
    """25A2: no substitution once partner has made a call."""
    h = auction(rules, "C:N:1C C:E:1H C:S:P")
    h.rule("unintended", seat="N", call="1D")
    assert calls(h) == [["N", "1C"], ["E", "1H"], ["S", "Pass"]]
    assert "CHANGE_OF_CALL" not in h.codes()


def test_25a_ruling_needs_alert_or_seat_and_call() -> None:
    h = auction(Rules.L2017, "C:N:1C")
    outs = h.rule("unintended", seat="N")
    assert outs and outs[0].topic.endswith("/error")


# ------------------------------------------------------------------ point 9: Law 58
T07 = D("N:96.KJ4.A843.Q632 KQT5.732.T95.A87 A83.AT86.J2.JT94 J742.Q95.KQ76.K5")
T0 = 1_800_000_000.0


def t07(rules: Rules) -> Harness:
    """Board 12: 1NT by W, N leads; trick 1 played, W (declarer) to lead trick 2."""
    h = Harness(12, T07, rules=rules)
    h.board_tag(12)
    h.scan()
    h.run("C:W:1D C:N:P C:E:1S C:S:P C:W:1N C:N:P C:E:P C:S:P N:C2 E:C7 S:C9 W:CK(W)")
    return h


def put_at(h: Harness, seat: str, card: str, ts: float) -> None:
    c = Card.parse(card)
    h.tag("tray", seat, "present", card=card, deck="12", uid=f"C{c.index:02X}", ts=ts)


def trick_cards(h: Harness) -> list[tuple[str, str]]:
    board = h.t.board
    assert board is not None and board.play is not None
    return [(s.name, str(c)) for s, c in board.play.tricks[-1].cards]


@pytest.mark.parametrize("rules", BOTH)
def test_58a_card_with_rhos_proper_play_is_deemed_subsequent(rules: Rules) -> None:
    """58A: a play made simultaneously with another player's proper play is deemed
    subsequent to it. S's card, read a moment before dummy's proper play (within the
    window), is S's play in turn: no play out of turn, no penalty card."""
    h = t07(rules)
    put_at(h, "W", "DK", T0)
    put_at(h, "N", "D3", T0 + 2)
    put_at(h, "S", "D2", T0 + 4.0)           # S (due after E) ...
    put_at(h, "E", "D5", T0 + 4.1)           # ... with dummy's proper play
    assert trick_cards(h) == [("W", "DK"), ("N", "D3"), ("E", "D5"), ("S", "D2")]
    item = h.final_alerts()[h.alerts("PREMATURE_PLAY")[0]["id"]]
    assert (item["law"], item["detail"], item["status"]) == ("58A", "simultaneous", "resolved")
    assert h.state()["penalty_cards"] == {}


@pytest.mark.parametrize("rules", BOTH)
def test_58a_outside_the_window_the_card_was_out_of_turn(rules: Rules) -> None:
    h = t07(rules)
    put_at(h, "W", "DK", T0)
    put_at(h, "N", "D3", T0 + 2)
    put_at(h, "S", "D2", T0 + 4.0)
    put_at(h, "E", "D5", T0 + 5.0)           # a second later: one after the other
    item = h.final_alerts()[h.alerts("PREMATURE_PLAY")[0]["id"]]
    assert item["law"] == ("57D" if rules is Rules.L2017 else "49")
    if rules is Rules.L2007:
        assert h.state()["penalty_cards"] == {"S": ["D2"]}


def test_58a_card_before_partners_proper_play_is_not_premature() -> None:
    """57 is a defender's play before his partner's; read within the window of partner's
    proper play it is simultaneous with it (58A): no Law 57 penalty card or options."""
    h = t07(Rules.L2017)
    put_at(h, "W", "DK", T0)
    put_at(h, "S", "DJ", T0 + 2.0)           # S before N, his partner ...
    put_at(h, "N", "D3", T0 + 2.1)           # ... who plays at the same moment
    first = h.final_alerts()[h.alerts("PREMATURE_PLAY")[0]["id"]]
    assert (first["law"], first["detail"]) == ("58A", "simultaneous")
    assert "S" not in h.state()["penalty_cards"]
    put_at(h, "E", "D5", T0 + 5)             # S's card now counts at his turn (57D)
    assert trick_cards(h) == [("W", "DK"), ("N", "D3"), ("E", "D5"), ("S", "DJ")]


@pytest.mark.parametrize("rules", BOTH)
@pytest.mark.parametrize("second, penalty", [("D4", "minor"), ("DA", "major")])
def test_58b_two_cards_from_a_defenders_hand(rules: Rules, second: str, penalty: str) -> None:
    """58B: a defender plays two cards at once: one is played, the other is a penalty card,
    minor or major per 50B (a single card below honour rank exposed inadvertently is
    minor), and declarer has none of Law 57's options."""
    h = t07(rules)
    put_at(h, "W", "DK", T0)
    put_at(h, "N", "D3", T0 + 2.0)
    put_at(h, "N", second, T0 + 2.05)
    assert trick_cards(h) == [("W", "DK"), ("N", "D3")]
    extra = h.alerts("EXTRA_CARD_SAME_TRICK")[-1]
    assert extra["law"] == "58B" and extra["detail"] == f"{penalty}_penalty_card"
    assert extra["status"] == "resolved" and extra["card"] == second
    assert "PREMATURE_PLAY" not in h.codes()
    assert h.state()["penalty_cards"] == {"N": [second]}
    h.rule("option", alert=extra["id"], option="lowest")       # no 57 option to take
    board = h.t.board
    assert board is not None and board.play is not None and board.play.requirements == {}


def test_58b_two_cards_from_declarers_hand_one_goes_back() -> None:
    h = t07(Rules.L2017)
    put_at(h, "W", "DK", T0)
    put_at(h, "W", "DQ", T0 + 0.1)
    assert trick_cards(h) == [("W", "DK")]
    extra = h.alerts("EXTRA_CARD_SAME_TRICK")[-1]
    assert (extra["law"], extra["detail"]) == ("58B", "returned")
    assert h.state()["penalty_cards"] == {} and h.state()["turn"] == "N"


def test_second_card_a_second_later_is_still_judged_as_before() -> None:
    h = t07(Rules.L2017)
    put_at(h, "W", "DK", T0)
    put_at(h, "N", "D3", T0 + 2.0)
    put_at(h, "N", "D4", T0 + 3.0)           # not simultaneous: a lead before partner played
    assert h.alerts("PREMATURE_PLAY")[-1]["law"] == "57A"


def test_a_fast_table_is_not_simultaneous_play() -> None:
    """Cards put down one after the other, however quickly (a simulated table at high
    speed), are never Law 58: a hand's next card comes after other hands' cards, and the
    winner of a trick leads to the next one at once."""
    h = t07(Rules.L2017)
    board = h.t.board
    assert board is not None and board.play is not None
    ts = T0
    for _ in range(60):
        play = board.play
        if play.complete:
            break
        seat = play.turn
        assert seat is not None
        card = min(play.legal_cards(seat))
        ts += 0.01
        put_at(h, seat.name, str(card), ts)
        board = h.t.board
        assert board is not None and board.play is not None
    assert board.play.complete
    assert not {"EXTRA_CARD_SAME_TRICK", "PREMATURE_PLAY"} & h.codes()


@pytest.mark.parametrize("rules", BOTH)
def test_25a_after_the_auction_ended_before_partners_turn(rules: Rules) -> None:
    """The auction ends with W's unintended pass, before E (his partner) calls again. 2017
    25A2: a substitution is possible until the end of the auction period (the opening lead
    faced): the auction goes on. 2007 25A3: none after the end of the auction."""
    h = auction(rules, "C:N:1S C:E:P C:S:P C:W:P")
    assert h.state()["phase"] == "lead"
    h.rule("unintended", seat="W", call="2H")
    if rules is Rules.L2007:
        assert h.state()["phase"] == "lead" and h.state()["contract"] == "1S"
        assert "CHANGE_OF_CALL" not in h.codes()
        return
    state = h.state()
    assert state["phase"] == "auction" and state["contract"] is None and state["turn"] == "N"
    assert calls(h)[-1] == ["W", "2H"]
    h.run("C:N:P C:E:P C:S:P")
    assert h.state()["contract"] == "2H" and h.state()["declarer"] == "W"
    assert h.state()["phase"] == "lead"


def test_25a_not_once_the_opening_lead_is_on_the_table() -> None:
    h = auction(Rules.L2017, "C:N:1S C:E:P C:S:P C:W:P")
    h.put("E", "C7")                         # the opening lead (E is N's LHO)
    h.rule("unintended", seat="W", call="2H")
    assert h.state()["contract"] == "1S" and "CHANGE_OF_CALL" not in h.codes()
