"""Law 15 (2007 Law 17D): a wrong board or a hand from another board's wallet, another board's pack,
and a board's wallet read again.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, T06, C, D, calls, indicator, t06_harness
from scenarios import Harness

from controller.laws.cards import Rules, Seat
from controller.laws.irregularities import Code
from controller.laws.messages import LANGUAGES, alert_texts


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


T08 = D("N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94")


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
