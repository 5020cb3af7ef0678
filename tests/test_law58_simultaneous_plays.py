"""Law 58: simultaneous plays (58A) and two cards from one hand (58B), told by the reading times.

Each case is written from the Laws text (2017 and, where it differs, 2007), through the core,
the engine and the wire contract as the bridge and the director's console drive them. Deals are
laws.md section 7's; the notation is the one ``tests/scenarios.py`` reads.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, D
from scenarios import Harness

from controller.laws.cards import Card, Rules

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
