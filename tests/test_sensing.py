"""The sensing model (docs/sensing.md, wire contract 1.5): play spots read one card at a
time, the shoe-style hand read, call spots. What the pile inventory gave still works:
revoke detection without a deal file, hand counts, cards of another board; a card leaving
its spot after its trick is complete is quitted, not taken back."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterable
from typing import Any

import pytest

from controller.boards.generate import random_board, random_play_with_revoke
from controller.demo import load_board, plan_board
from controller.engine import Engine, Outgoing
from controller.formats.events import record_events
from controller.laws.cards import Card, Seat
from controller.laws.record import BoardRecord, DealInfo
from controller.laws.table import TURN_WINDOW

Event = dict[str, Any]


class Run:
    """An Engine fed events of table 1, numbering them; what it published, by kind."""

    def __init__(self, deals: dict[int, DealInfo] | None = None) -> None:
        self.engine = Engine(deals=deals)
        self.out: list[Outgoing] = []
        self.seq = 0

    def feed(self, events: Iterable[Event]) -> Run:
        for event in events:
            self.seq += 1
            self.out += self.engine.handle("bridge/1/event", dict(event, seq=self.seq,
                                                                  src="pi", v=1))
        return self

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [o.payload for o in self.out if o.topic.rsplit("/", 1)[-1] == kind]

    def alerts(self) -> list[tuple[str, str, str | None]]:
        return [(a["code"], a["status"], a.get("seat")) for a in self.of("alert")]

    @property
    def state(self) -> dict[str, Any]:
        return self.of("state")[-1]


def spot(seat: str, card: str, action: str = "present", deck: str = "10") -> Event:
    return {"type": "tag", "zone": "spot", "seat": seat, "action": action, "card": card,
            "deck": deck, "uid": f"C{deck}{card}", "ts": 1_700_000_000.0}


def t08() -> BoardRecord:
    plan = plan_board(load_board(), revoke_trick=6)   # laws.md T08: E ruffs holding a diamond
    return dataclasses.replace(plan.record, tricks=plan.tricks())


def _summary(run: Run) -> tuple[Any, ...]:
    results = [(r["board"], r["contract"], r.get("declarer"), r["tricks"], r["tricks_played"],
                r["score_ns"], [(i["code"], i["status"]) for i in r["irregularities"]])
               for r in run.of("result")]
    alerts = [(a["code"], a["status"], a.get("seat"), a.get("trick")) for a in run.of("alert")]
    feed = [(f["kind"], f.get("seat"), f.get("call"), f.get("card")) for f in run.of("feed")
            if f["kind"] in ("call", "card")]
    return results, alerts, feed


@pytest.mark.parametrize("scans", [True, False])
def test_the_spots_give_what_the_trays_gave(scans: bool) -> None:
    """Random boards and the T08 revoke: the play-spot stream and the pile stream of the same
    boards give the same results, alerts and feed, with and without the hands read."""
    rng = random.Random(2023)
    records = [t08()] + [random_board(rng, n).record for n in range(1, 13)]
    for number in range(13, 21):   # boards with a revoke somewhere
        record = random_board(rng, number).record
        if record.declarer is None or record.deal is None or record.contract is None:
            continue
        revoked = random_play_with_revoke(rng, record.deal, record.contract,
                                          record.declarer, rng.randint(2, 11))
        if revoked is not None:
            records.append(dataclasses.replace(record, tricks=tuple(revoked[0])))
    assert len(records) > 16
    revokes = 0
    for record in records:
        by_model = [_summary(Run().feed(record_events(record, sensing=sensing, scans=scans)))
                    for sensing in ("spot", "tray")]
        assert by_model[0] == by_model[1], record.board
        assert by_model[0][0], record.board   # a result, for a board played out or passed
        revokes += any(a[0] == "REVOKE" for a in by_model[0][1])
    assert revokes >= 5


def test_a_revoke_is_seen_at_once_without_a_deal_file_from_the_hands_passed() -> None:
    events = record_events(t08(), sensing="spot", scans=True)
    revoke = next(i for i, e in enumerate(events)
                  if e["zone"] == "spot" and e.get("card") == "H9" and e["action"] == "present"
                  and i > 110)
    run = Run().feed(events[:revoke + 1])
    assert run.alerts() == [("REVOKE", "open", "E")]
    run.feed(events[revoke + 1:])
    result = run.of("result")[-1]
    assert (result["tricks_played"], result["tricks"], result["score_ns"]) == (9, 11, 650)
    assert run.state["phase"] == "done"
    # without the read and without a deal file the revoke shows when E later follows suit
    late = Run().feed(record_events(t08(), sensing="spot", scans=False))
    assert [a for a in late.alerts() if a[1] == "open"] == []
    assert late.of("result")[-1]["tricks"] == 11


def _read(hands: dict[Seat, frozenset[Card]], skip: Card | None = None,
          twice: Card | None = None, extra: dict[Seat, Card] | None = None) -> list[Event]:
    """Each hand passed across its spot, N E S W; ``skip`` a card not passed, ``twice`` one
    passed again, ``extra`` a card passed in another hand too."""
    out: list[Event] = [{"type": "tag", "zone": "board", "action": "present",
                         "uid": "D000A", "board": 10,
                         "ts": 1_700_000_000.0}]
    for seat in Seat:
        cards = sorted(hands[seat]) + ([twice] if twice in hands[seat] else [])
        if extra and seat in extra:
            cards.append(extra[seat])
        for card in cards:
            if card != skip:
                out += [spot(seat.name, str(card)), spot(seat.name, str(card), "removed")]
    return out


def _call(seat: str, call: str, action: str = "present") -> Event:
    return {"type": "tag", "zone": "bid", "seat": seat, "action": action, "call": call,
            "uid": f"B{seat}{call}", "ts": 1_700_000_001.0}


def test_a_short_hand_read_is_counted_and_the_missing_card_completes_it() -> None:
    """Law 7B / 14A from the shoe-style read: E (dealer of board 10) calls with 12 cards
    read; the 13th laid on the spot during the auction is the read, not an exposed card."""
    deal = load_board().deal
    assert deal is not None
    hands = {s: deal[s] for s in Seat}
    missing = sorted(hands[Seat.E])[3]
    run = Run().feed(_read(hands, skip=missing, twice=sorted(hands[Seat.N])[0]))
    assert run.alerts() == []            # a card passed twice is read once
    run.feed([_call("E", "1C")])
    assert [(c, s) for c, s, _ in run.alerts()] == [("HAND_COUNT", "open"),
                                                    ("MISSING_CARD", "open")]
    run.feed([spot("E", str(missing)), spot("E", str(missing), "removed")])
    assert all(a[1] == "resolved" for a in run.alerts()[2:]) and len(run.alerts()) == 4
    assert "CARD_EXPOSED_DURING_AUCTION" not in {a[0] for a in run.alerts()}


def test_a_card_read_in_two_hands_and_a_card_of_another_board() -> None:
    deal = load_board().deal
    assert deal is not None
    hands = {s: deal[s] for s in Seat}
    stray = sorted(hands[Seat.N])[0]
    run = Run().feed(_read(hands, extra={Seat.S: stray}))
    assert ("INCORRECT_CARD_COUNT", "open", "S") in run.alerts()     # Law 13
    other = Run().feed(_read(hands))
    other.feed([spot("W", "SA", deck="11")])                          # Laws 13, 15
    (alert,) = other.of("alert")
    assert (alert["code"], alert["zone"] if "zone" in alert else alert["params"]["zone"],
            alert["params"]["deck"]) == ("CARD_FROM_OTHER_BOARD", "spot", "11")
    other.feed([spot("W", "SA", "removed", deck="11")])
    assert other.of("alert")[-1]["status"] == "resolved"


def _to_card(record: BoardRecord, cards: int, sensing: str) -> tuple[Run, list[Event]]:
    """A run of ``record`` (hands read) up to the ``cards``-th card played (spots: before
    the trick it completes is quitted), and the rest of its events."""
    events = record_events(record, sensing=sensing, scans=True)  # type: ignore[arg-type]
    first_call = next(i for i, e in enumerate(events) if e["zone"] == "bid")
    laid = 0
    for i, e in enumerate(events):
        if i > first_call and e["zone"] in ("spot", "tray") and e["action"] == "present":
            laid += 1
            if laid == cards:
                return Run().feed(events[:i + 1]), events[i + 1:]
    raise AssertionError("not that many cards")


def _lift(run: Run, event: Event) -> list[tuple[str, str, str | None]]:
    """The alerts the table raises when ``event``'s card is lifted (and, from a play spot,
    not laid again within the turn window: docs/sensing.md "A card turned")."""
    before = len(run.of("alert"))
    run.feed([dict(event, action="removed")])
    clock = run.engine._tables["1"].clock
    if clock is not None:   # (a tray reads a lifted card at once)
        run.out += run.engine.settle(clock[1] + TURN_WINDOW + 0.1)
    return run.alerts()[before:]


def test_a_quitted_card_is_not_taken_back_and_one_lifted_before_is() -> None:
    record = load_board()
    run, rest = _to_card(record, 4, "spot")
    quits, rest = rest[:4], rest[4:]
    assert all(e["action"] == "removed" and e["zone"] == "spot" for e in quits)
    run.feed(quits)                       # the first trick quitted: nothing happens
    assert run.alerts() == [] and run.state["current"] == []
    assert sum(run.state["tricks"].values()) == 1
    # trick 2's first two cards, and the second lifted before the trick is complete: taken
    # back exactly as a card lifted from a tray (Law 47)
    run.feed(rest[:2])
    tray, _ = _to_card(record, 6, "tray")
    lifted = _lift(run, rest[1])
    assert lifted == _lift(tray, {**rest[1], "zone": "tray"}) == [("CARD_WITHDRAWN", "open", "S")]
    assert run.state["current"] == tray.state["current"]


def test_a_revoke_corrected_by_laying_the_quitted_card_again_and_lifting_it() -> None:
    """62A: E's revoke on trick 6 (T08), the trick quitted; E lays the card on his spot again
    and lifts it: the card is taken back, exactly as lifting it from his tray."""
    run, rest = _to_card(t08(), 24, "spot")
    run.feed(rest[:4])                    # trick 6 quitted
    assert [a[:2] for a in run.alerts()] == [("REVOKE", "open")]
    # laid on the spot again, later than a turn would bring it back: nothing yet
    recalled = dict(spot("E", "H9"), ts=spot("E", "H9")["ts"] + 10 * TURN_WINDOW)
    run.feed([recalled])
    assert len(run.alerts()) == 1
    tray, _ = _to_card(t08(), 24, "tray")
    assert _lift(run, recalled) == _lift(tray, {**spot("E", "H9"), "zone": "tray"})
    assert run.state["current"] == tray.state["current"]
    # trick 6 open again without E's card: E is to follow suit (62A)
    assert [c["seat"] for c in run.state["current"]] == ["S", "W", "N"]
    assert run.state["irregularities"] == tray.state["irregularities"]


def test_a_card_still_on_its_spot_read_again_is_quitted_as_usual() -> None:
    """A reader restarting reads again the cards lying on the spots: a card of a complete
    trick not yet quitted is no recall, and quitting it is still nothing."""
    run, rest = _to_card(load_board(), 4, "spot")
    lying = [e for e in rest[:4] if e["action"] == "removed"]
    run.feed([dict(e, action="present") for e in lying])    # read again where they lie
    run.feed(rest[:4])
    assert run.alerts() == [] and run.state["current"] == []
    run.feed(rest[4:])
    assert run.of("result")[-1]["score_ns"] == 620 and run.alerts() == []


def test_the_last_trick_quitted_from_the_four_spots_ends_the_board() -> None:
    events = record_events(load_board(), sensing="spot", scans=False)
    run = Run().feed(events[:-4])
    assert run.state["phase"] == "complete" and run.of("result")
    run.feed(events[-4:-1])
    assert run.state["phase"] == "complete"
    run.feed(events[-1:])
    assert run.state["phase"] == "done"


def test_calls_slid_off_their_spot_are_not_changes_of_call() -> None:
    run = Run().feed([
        {"type": "tag", "zone": "board", "action": "present", "uid": "D000A", "board": 10,
                         "ts": 1_700_000_000.0},
        _call("E", "1C"), _call("S", "1H"), _call("W", "Pass"), _call("N", "4H"),
        _call("E", "1C", "removed"), _call("E", "Pass"),
    ])
    assert run.alerts() == []
    assert [c for _, c in run.state["auction"]] == ["1C", "1H", "Pass", "4H", "Pass"]
    # the call taken back before anyone called, and another put down: a change of call
    run.feed([_call("E", "Pass", "removed"), _call("E", "X")])
    assert [a[0] for a in run.alerts()] == ["CHANGE_OF_CALL"]


def test_a_spot_tag_needs_a_seat() -> None:
    run = Run().feed([{"type": "tag", "zone": "spot", "action": "present", "card": "SA",
                       "deck": "1", "uid": "C1SA", "ts": 1.0}])
    (error,) = run.of("error")
    assert "spot tag needs a seat" in error["error"]


def test_the_display_counts_the_hands_passed_and_lights_the_seats_still_to_pass() -> None:
    """docs/sensing.md: while the hands are passed across the spots, each seat's count is
    on the display and the seats still to pass are named and lit, in the three languages;
    once all 13 of every hand are read the dealer's call is due, as before."""
    deal = load_board().deal
    assert deal is not None
    hands = {s: deal[s] for s in Seat}
    events = _read(hands)
    east_done = 1 + 2 * 13 * 2 + 2 * 9     # the wallet, N and E passed, nine of S's
    run = Run().feed(events[:east_done])
    indicator = run.of("indicator")[-1]
    assert {s: v["turn"] for s, v in indicator["seats"].items()} == {
        "N": False, "E": False, "S": True, "W": True}
    assert indicator["display"]["en"][2:] == ["To pass hand: S W", "N 13 E 13 S 9 W 0"]
    assert indicator["display"]["zh"][2:] == ["请过牌：南 西", "北13 东13 南9 西0"]
    assert indicator["display"]["vi"][3] == "N 13 E 13 S 9 W 0"
    run.feed(events[east_done:])
    indicator = run.of("indicator")[-1]
    assert [s for s, v in indicator["seats"].items() if v["turn"]] == ["E"]   # E deals
    assert indicator["display"]["en"][2:] == ["E to call", "N 13 E 13 S 13 W 13"]
