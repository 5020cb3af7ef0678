"""Laws 41, 45, 47, 62 and 65 on play spots: a card turned where it lies is not withdrawn.

docs/sensing.md ("A card turned"): the opening lead is made face down and then faced (Law
41); each player turns his card face down on his spot before sliding it into his trick row
(Law 65A); dummy's card is straightened on dummy's spot. Each takes the card off the
antenna for a moment. The same card back on the same spot within ``TURN_WINDOW`` is a turn:
no alert, nothing open. A card lifted and another laid, or the same card laid again later,
is what Laws 45-47 and 62 say, exactly as on a tray. Both editions; board 5 (laws.md T06),
3NT by N, E's opening lead, dummy S.
"""

from __future__ import annotations

import pytest
from law_cases import BOTH, LATER, scored, t06_harness, t06_spots

from controller.laws.cards import Card, Rules, Seat


def _codes(alerts: list[dict[str, object]]) -> list[tuple[object, object, object, object]]:
    return [(a["code"], a["law"], a["status"], a.get("seat")) for a in alerts]


@pytest.mark.parametrize("rules", BOTH)
@pytest.mark.parametrize("gap", [0.05, 0.5, 1.0, 1.5])
def test_law41_the_face_down_opening_lead_faced_is_no_withdrawal(rules: Rules,
                                                                 gap: float) -> None:
    """41A/41C: E leads face down, the clarification period passes, the lead is faced."""
    s = t06_spots(rules)
    due = s.h.next_play()
    assert due is not None and due[0] is Seat.E
    s.lay(Seat.E, due[1])
    s.wait(10.0)                              # the clarification period: nothing read
    s.turn(Seat.E, due[1], gap=gap)           # faced
    s.wait(10.0)
    assert s.h.alerts() == []
    assert [c["card"] for c in s.h.state()["current"]] == [str(due[1])]
    s.play_out()
    assert s.h.alerts() == []
    scored(s.h)


@pytest.mark.parametrize("rules", BOTH)
def test_law65_every_trick_turned_face_down_before_it_is_slid_off(rules: Rules) -> None:
    """65A: the four cards of each trick turned face down on their spots, then quitted:
    thirteen tricks, no alert, the result as played, the board done when the spots empty."""
    s = t06_spots(rules)
    s.play_out()
    s.wait(LATER)
    assert s.h.alerts() == []
    result = scored(s.h)
    reference = t06_harness(rules)
    reference.auto()                          # the same cards on trays, nothing turned
    expected = reference.result()
    assert expected is not None
    assert (result["tricks"], result["score_ns"]) == (expected["tricks"], expected["score_ns"])
    assert s.h.state()["phase"] == "done"


@pytest.mark.parametrize("rules", BOTH)
def test_law65_the_four_cards_turned_at_once(rules: Rules) -> None:
    """The four players turn their cards together: all four spots empty for a moment, mid
    play and after the last trick; nothing is read as quitted early or as a new board."""
    s = t06_spots(rules)
    while s.h.next_play() is not None:
        laid = s.play_trick(turn=False, slide=False)
        for seat, card in laid:
            s.lift(seat, card, dt=0.1)
        for seat, card in laid:
            s.lay(seat, card, dt=0.2)
        for seat, card in laid:
            s.lift(seat, card)
    s.wait(LATER)
    assert s.h.alerts() == []
    scored(s.h)
    assert s.h.state()["phase"] == "done"


@pytest.mark.parametrize("rules", BOTH)
def test_law65_dummys_card_straightened_mid_trick_while_the_next_hand_plays(
        rules: Rules) -> None:
    """Declarer straightens dummy's card on dummy's spot as W plays: the same card is back
    within the window, W's card between; nothing happened."""
    s = t06_spots(rules)
    for _ in range(2):
        due = s.h.next_play()
        assert due is not None
        s.lay(*due[:2])
    dummy_card = due[1]
    assert due[0] is Seat.S
    s.lift(Seat.S, dummy_card)
    west = s.h.next_play()
    assert west is not None and west[0] is Seat.W
    s.lay(Seat.W, west[1], dt=0.3)
    s.lay(Seat.S, dummy_card, dt=0.6)
    s.wait(LATER)
    assert s.h.alerts() == []
    assert [c["seat"] for c in s.h.state()["current"]] == ["E", "S", "W"]
    s.play_out()
    assert s.h.alerts() == []
    scored(s.h)


def _tray_alerts(rules: Rules, script: str) -> list[tuple[object, object, object, object]]:
    h = t06_harness(rules)
    h.run(script)
    return _codes(h.alerts())


@pytest.mark.parametrize("rules", BOTH)
def test_law47_the_same_card_laid_again_after_the_window_was_withdrawn(rules: Rules) -> None:
    """47: a played card lifted and held is withdrawn (it stays played), shown once the
    turn window is over without the table's next event; laid again, it is replaced."""
    s = t06_spots(rules)
    s.lay(Seat.E, Card.parse("C5"))
    s.lay(Seat.S, Card.parse("CA"))
    s.lift(Seat.S, Card.parse("CA"))
    assert s.h.alerts() == []                 # maybe a turn: nothing yet
    s.wait(LATER)
    assert _codes(s.h.alerts()) == [("CARD_WITHDRAWN", "47", "open", "S")]
    s.lay(Seat.S, Card.parse("CA"))
    assert _codes(s.h.alerts()) == _tray_alerts(rules, "E:C5 S:CA -S:CA +S:CA") == [
        ("CARD_WITHDRAWN", "47", "open", "S"), ("CARD_WITHDRAWN", "47", "resolved", "S")]


@pytest.mark.parametrize("rules", BOTH)
def test_law45_47_a_played_card_lifted_and_another_laid(rules: Rules) -> None:
    """45C, 47: dummy's card lifted and another of dummy's laid at once (well within the
    window): the first stays played and was withdrawn, exactly as from a tray."""
    s = t06_spots(rules)
    s.lay(Seat.E, Card.parse("C5"))
    s.lay(Seat.S, Card.parse("CA"))
    s.lift(Seat.S, Card.parse("CA"))
    s.lay(Seat.S, Card.parse("C8"), dt=0.4)
    assert _codes(s.h.alerts()) == _tray_alerts(rules, "E:C5 S:CA -S:CA +S:C8")
    assert ("CARD_WITHDRAWN", "47", "open", "S") in _codes(s.h.alerts())


@pytest.mark.parametrize("rules", BOTH)
def test_law62_65_a_quitted_card_laid_again_later_and_lifted_is_taken_back(
        rules: Rules) -> None:
    """65 / 62A: a quitted card turned and slid off is nothing; the same card laid on the
    spot again long after and lifted is taken back (how a revoke is corrected from the
    spot), as lifting it from a tray."""
    s = t06_spots(rules)
    laid = s.play_trick()
    s.wait(LATER)
    assert s.h.alerts() == []
    seat, card = laid[1]
    s.lay(seat, card, dt=LATER)
    s.lift(seat, card)
    s.wait(LATER)
    tray = t06_harness(rules)
    tray.run(" ".join(f"{p.name}:{c}" for p, c in laid) + f" -{seat.name}:{card}")
    assert _codes(s.h.alerts()) == _codes(tray.alerts())
    assert s.h.alerts() and s.h.alerts()[0]["code"] == "CARD_WITHDRAWN"
