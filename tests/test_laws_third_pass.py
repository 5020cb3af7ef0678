"""The Laws' third pass (issue 30): each case written from the Laws text, 2017 and 2007,
through the engine as the bridge and the director's console drive it.

1. Law 15A (2017) / 17D (2007): a hand picked up from another board's wallet.
2. Law 57A: the premature play's alert closes once declarer's option is applied.
3. A ruling option the engine does not apply is refused on ``error``, changing nothing.
4. Where the Laws give the director the choice, he chooses: 45E (penalty card or a lead),
   2017 53B / 2007 53C (the card led in error withdrawn once the proper lead followed),
   and an inadmissible double out of rotation (Law 36 or Law 32 first).

Deals are laws.md section 7's (T06 for board 5, T08 standing in for board 6's wallet).
"""

from __future__ import annotations

from typing import Any

import pytest
from scenarios import Harness
from test_laws_second_pass import t06_harness

from controller.laws.cards import Card, Contract, Deal, Rules, Seat, Vulnerability
from controller.laws.irregularities import Code
from controller.laws.rulings import RULING_OPTIONS, Ruling, RulingKind, option_problem
from controller.laws.scoring import score_ns

D = Deal.from_pbn
T06 = D("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643")
T08 = D("N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94")
BOTH = [Rules.L2007, Rules.L2017]


def calls(h: Harness) -> list[list[str]]:
    return [list(c) for c in h.state()["auction"]]


def errors(h: Harness) -> list[dict[str, Any]]:
    return [o.payload for o in h.out if o.topic.endswith("/error")]


def indicator(h: Harness) -> dict[str, Any]:
    return [o.payload for o in h.out if o.topic.endswith("/indicator")][-1]


# ------------------------------------------------------------------ 1: Law 15A / 17D
def wrong_wallet(rules: Rules, seats: str = "S") -> Harness:
    """Board 5 on the table; ``seats`` took their hands from board 6's wallet (tags of
    deck "6"), the others their own."""
    h = Harness(5, T06, rules=rules, others={6: T08})
    h.board_tag(5)
    own = "".join(s for s in "NESW" if s not in seats)
    if own:
        h.scan(own)
    for s in seats:
        cards = sorted(T08[Seat[s]])
        for c in cards:
            h.tag("tray", s, "present", card=str(c), deck="6", uid=f"W6{c}")
        for c in cards:
            h.tag("tray", s, "removed", card=str(c), deck="6", uid=f"W6{c}")
    return h


@pytest.mark.parametrize("rules", BOTH)
def test_hand_from_the_next_boards_wallet_is_one_open_alert(rules: Rules) -> None:
    """15A / 17D: cards picked up from a wrong board: one alert, open, naming the board;
    not thirteen stray-card alerts (13C) resolved as the tags leave the tray."""
    h = wrong_wallet(rules)
    items = h.alerts("CARDS_FROM_WRONG_BOARD")
    assert len({a["id"] for a in items}) == 1
    item = h.final_alerts()[items[0]["id"]]
    assert item["status"] == "open" and item["seat"] == "S"
    assert item["params"]["board"] == 6
    assert item["law"] == ("15A" if rules is Rules.L2017 else "17D")
    assert "CARD_FROM_OTHER_BOARD" not in h.codes()
    assert item["id"] in indicator(h)["alerts"]


@pytest.mark.parametrize("rules", BOTH)
def test_the_call_made_holding_a_wrong_boards_cards_is_cancelled(rules: Rules) -> None:
    """2017 15A1 (a call made holding cards from a wrong board is cancelled, with any
    subsequent call; the offender calls again after looking at his correct hand) and 2007
    17D (cancelled; LHO repeats his call): the auction does not go on over it, and no
    count or missing-card alerts (7B2, 14A) tell the director that it does."""
    h = wrong_wallet(rules)
    h.run("C:N:1D C:E:P C:S:1H")
    item = h.alerts("CARDS_FROM_WRONG_BOARD")[-1]
    assert item["status"] == "open" and item["detail"] == "cancelled"
    assert item["call"] == "1H"
    assert item["law"] == ("15A1" if rules is Rules.L2017 else "17D")
    assert calls(h) == [["N", "1D"], ["E", "Pass"]] and h.state()["turn"] == "S"
    assert not {"HAND_COUNT", "MISSING_CARD", "INCORRECT_CARD_COUNT"} & h.codes()
    h.run("C:W:P")                                  # LHO calls over the cancelled call
    item = h.alerts("CARDS_FROM_WRONG_BOARD")[-1]
    assert item["detail"] == "cancelled_later" and item["params"]["lho_called"]
    assert calls(h) == [["N", "1D"], ["E", "Pass"]]
    # he takes his own hand out of board 5's wallet and calls again
    h.scan("S")
    h.run("C:S:1H")
    assert calls(h)[-1] == ["S", "1H"] and h.state()["turn"] == "W"
    item = h.alerts("CARDS_FROM_WRONG_BOARD")[-1]
    assert item["status"] == "open" and item["params"]["repeat"] == "1H"
    assert item["params"]["differs"] is False
    # open until the director rules
    h.rule("clear", alert=item["id"])
    assert h.final_alerts()[item["id"]]["status"] == "resolved"
    assert not {"HAND_COUNT", "MISSING_CARD"} & h.codes()
    h.run("C:W:P C:N:3N C:E:P C:S:P C:W:P AUTO")
    result = h.result()
    assert result is not None and result["contract"] == "3NT"


@pytest.mark.parametrize("rules", BOTH)
def test_partner_called_over_the_cancelled_call_means_an_adjusted_score(rules: Rules) -> None:
    """2017 15A1(a) / 2007 17D2: the offender's partner has called since: the director
    awards an adjusted score (``adjusted`` named on the alert, still open)."""
    h = wrong_wallet(rules)
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:2D")
    item = h.alerts("CARDS_FROM_WRONG_BOARD")[-1]
    assert item["params"]["partner_called"] is True and item["params"]["later"] == 2
    assert item["detail"].split(",")[-1] == "adjusted" and item["status"] == "open"
    assert calls(h) == [["N", "1D"], ["E", "Pass"]]
    for lang in ("en", "vi", "zh"):
        assert item["text"][lang]


def test_2007_lho_called_and_the_new_call_differs_is_adjusted() -> None:
    """2007 17D2: LHO called over the cancelled call and the offender's substituted call
    differs: artificial adjusted score. 2017 15A1 has no such case (only partner)."""
    for rules, adjusted in ((Rules.L2007, True), (Rules.L2017, False)):
        h = wrong_wallet(rules)
        h.run("C:N:1D C:E:P C:S:1H C:W:P")
        h.scan("S")
        h.run("C:S:1S")
        item = h.alerts("CARDS_FROM_WRONG_BOARD")[-1]
        assert item["params"]["differs"] is True
        assert ("adjusted" in item["detail"].split(",")) is adjusted, rules


@pytest.mark.parametrize("rules", BOTH)
def test_all_four_hands_from_the_wrong_pack(rules: Rules) -> None:
    """Four hands from board 6's wallet: four open alerts, and the dealer's call is
    cancelled: nothing tells the director the auction is under way."""
    h = wrong_wallet(rules, "NESW")
    finals = h.final_alerts()
    assert sorted(a["seat"] for a in finals.values()
                  if a["code"] == "CARDS_FROM_WRONG_BOARD" and a["status"] == "open") == \
        ["E", "N", "S", "W"]
    assert set(h.codes()) == {"CARDS_FROM_WRONG_BOARD"}
    h.run("C:N:1D C:E:P")
    assert calls(h) == []


def test_a_few_cards_of_another_pack_are_still_stray_cards() -> None:
    """Fewer than a hand's worth of another board's cards among his own: Law 13C, one
    alert per card, resolved when the tag is taken away; his call stands."""
    h = Harness(5, T06, others={6: T08})
    h.board_tag(5)
    h.scan()
    h.tag("tray", "S", "present", card="SK", deck="6", uid="X6SK")
    h.tag("tray", "S", "removed", card="SK", deck="6", uid="X6SK")
    assert [a["status"] for a in h.alerts("CARD_FROM_OTHER_BOARD")] == ["open", "resolved"]
    h.run("C:N:1D C:E:P C:S:1H")
    assert "CARDS_FROM_WRONG_BOARD" not in h.codes() and calls(h)[-1] == ["S", "1H"]


def test_stray_cards_read_before_his_own_are_flagged_at_his_first_own_card() -> None:
    h = Harness(5, T06, others={6: T08})
    h.board_tag(5)
    h.tag("tray", "S", "present", card="SK", deck="6", uid="X6SK")
    h.tag("tray", "S", "removed", card="SK", deck="6", uid="X6SK")
    assert not h.alerts()
    h.scan("S")
    # recorded for the director, already resolved: its tag had been taken away
    stray = h.alerts("CARD_FROM_OTHER_BOARD")
    assert [a["status"] for a in stray] == ["resolved"] and stray[0]["card"] == "SK"
    assert "CARDS_FROM_WRONG_BOARD" not in h.codes()


# ------------------------------------------------------------------ 2: Law 57A closes
def t06_play(rules: Rules = Rules.L2017) -> Harness:
    """Board 5 (T06), 3NT by N, the opening lead E's."""
    return t06_harness(rules)


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


# ------------------------------------------------------------------ 3: unknown options
def board5(script: str, rules: Rules = Rules.L2017) -> Harness:
    """Board 5 (T06) read, the four hands scanned, then ``script``."""
    h = Harness(5, T06, rules=rules)
    h.board_tag(5)
    h.scan()
    h.run(script)
    return h


def insufficient_bid() -> Harness:
    """N 1S, E 1H: an insufficient bid awaiting LHO or the director (27)."""
    return board5("C:N:1S C:E:1H")


def ruled(h: Harness, code: str, ruling: str, **fields: Any) -> dict[str, Any]:
    """The director's ruling on the last alert of ``code``; that alert as it ends up."""
    item = h.alerts(code)[-1]
    h.rule(ruling, alert=item["id"], **fields)
    return h.final_alerts()[item["id"]]


@pytest.mark.parametrize("option", ["highest", "banana", "54A", "penalty_card"])
def test_an_option_of_another_ruling_is_refused_and_changes_nothing(option: str) -> None:
    """accept with an option that belongs to another ruling (or to none) was taken as a
    plain acceptance and cascaded; now it is refused on ``error`` with the reason."""
    h = Harness(5, T06)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1S C:E:1H")                          # insufficient bid, pending
    item = h.alerts("INSUFFICIENT_BID")[-1]
    before = h.state()
    n_alerts = len(h.alerts())
    out = h.rule("accept", alert=item["id"], option=option)
    assert [o.topic for o in out] == ["bridge/7/error"]
    err = out[0].payload
    assert err["input"] == "ruling" and option in err["error"] and "refused" in err["error"]
    assert len(h.alerts()) == n_alerts
    after = h.state()
    assert {k: v for k, v in after.items() if k != "last"} == \
        {k: v for k, v in before.items() if k != "last"}
    assert h.final_alerts()[item["id"]]["status"] == "open"
    # the same ruling without the option applies (27A1)
    h.rule("accept", alert=item["id"])
    assert h.final_alerts()[item["id"]]["detail"] == "accepted"


def test_an_option_ruling_that_cannot_be_applied_now_is_refused() -> None:
    h = t06_play()
    h.run("E:C5 S:CA W:C3 N:C2 S:D3 +E:D4")
    item = h.alerts("PREMATURE_PLAY")[-1]
    out = h.rule("option", alert=item["id"], option="must_lead")   # needs a suit
    assert out and out[0].topic.endswith("/error")
    out = h.rule("option", alert=item["id"])                       # no option at all
    assert out and out[0].topic.endswith("/error") and "needs an option" in \
        out[0].payload["error"]
    assert h.final_alerts()[item["id"]]["status"] == "open"


def test_an_undo_after_a_refused_ruling_strikes_the_last_event() -> None:
    """A refused ruling is not in the board's history: undo strikes the last event."""
    h = insufficient_bid()
    item = h.alerts("INSUFFICIENT_BID")[-1]
    h.rule("reject", alert=item["id"], option="36")
    assert errors(h)
    h.send({"type": "button", "button": "undo"})
    assert calls(h) == [["N", "1S"]]


def test_option_problem_on_the_core() -> None:
    accept = Ruling(RulingKind.ACCEPT, alert=1, option="54A")
    assert option_problem(accept, Code.OPENING_LEAD_OUT_OF_TURN) is None
    assert option_problem(accept, Code.INSUFFICIENT_BID) is not None
    assert option_problem(Ruling(RulingKind.OPTION, alert=1, option="lowest"),
                          Code.PREMATURE_PLAY) is None
    assert option_problem(Ruling(RulingKind.OPTION, option="lowest"), None) is not None
    assert option_problem(Ruling(RulingKind.REJECT, alert=1), Code.REVOKE) is None
    for code, kinds in RULING_OPTIONS.items():
        for kind, names in kinds.items():
            for name in names:
                assert option_problem(Ruling(kind, alert=1, option=name), code) is None


# ------------------------------------------------------------------ 4: 45E, 53B/53C
def fifth_card(rules: Rules) -> Harness:
    """T06, 3NT by N: dummy (S) wins trick 1 and is on lead; W (a defender) puts D2."""
    h = t06_play(rules)
    h.run("E:C5 S:CA W:C3 N:C2")
    h.run("+W:D2")
    return h


def scored(h: Harness) -> dict[str, Any]:
    """The result, checked against the scoring Laws for the tricks the play gave."""
    result = h.result()
    assert result is not None
    board = h.t.board
    assert board is not None and board.play is not None
    tricks = board.play.declarer_tricks
    assert result["tricks"] == tricks
    assert result["score_ns"] == score_ns(Contract.parse("3NT"), Seat.N,
                                          Vulnerability.NS, tricks)
    return result


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


# ------------------------------------------------------------------ 4: Law 36 or Law 32
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


@pytest.mark.parametrize("kind", ["undo", "board", "clear", "reject"])
def test_a_ruling_that_takes_no_option_is_refused_with_one(kind: str) -> None:
    h = insufficient_bid()
    item = h.alerts("INSUFFICIENT_BID")[-1]
    fields: dict[str, Any] = {"option": "highest"}
    if kind == "board":
        fields["board"] = 6
    elif kind != "undo":
        fields["alert"] = item["id"]
    out = h.rule(kind, **fields)
    assert [o.topic for o in out] == ["bridge/7/error"]
    assert h.state()["board"] == 5 and calls(h) == [["N", "1S"]]
    assert h.final_alerts()[item["id"]]["status"] == "open"


def test_the_core_returns_the_refusal_and_keeps_no_history() -> None:
    from controller.laws.table import Table

    h = insufficient_bid()
    table: Table = h.t
    board = table.board
    assert board is not None
    history = list(board.history)
    item = h.alerts("INSUFFICIENT_BID")[-1]
    update = table.apply(Ruling(RulingKind.ACCEPT, alert=item["id"], option="lowest"))
    assert "lowest" in update.refused and update.irregularities == ()
    assert board.history == history
    update = table.apply(Ruling(RulingKind.OPTION, alert=999, option="lowest"))
    assert "not on this board" in update.refused


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
