"""What the play keeps as its tricks grow (controller/laws/play.py: ``tricks_won``,
``card_count``, ``quitted``, ``declarer_tricks_played``, ``declarer_tricks``) equals what
counting the tricks again gives, after every input of generated boards with irregular
inputs mixed in: cards and calls on the wrong seat, out of turn, from no hand, unknown
tags, buttons (undo, claim), the director's rulings on the alerts actually open (accept,
reject, clear, undo, claims), a board replaced before it is finished; on play spots and
on trays, hands known from the deal file or not."""

from __future__ import annotations

import inspect
import itertools
import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import record_events
from controller.laws.cards import Card, Rules, Seat
from controller.laws.play import _LAST_TRICK, Play
from controller.laws.record import DealInfo
from tests import (
    test_law15_wrong_board,
    test_law25_change_of_call,
    test_law27_insufficient_bid,
    test_law28_call_out_of_rotation,
    test_law36_inadmissible_double,
    test_law45_fifth_card,
    test_law53_lead_out_of_turn,
    test_law54_opening_lead_out_of_turn,
    test_law55_declarer_lead_out_of_turn,
    test_law57_premature_play,
    test_law58_simultaneous_plays,
    test_law63_established_revoke,
    test_play,
    test_ruling_options,
    test_sensing,
    test_table,
)
from tests.replay_golden import _junk

_Tallies = tuple[tuple[int, int], int, set[tuple[Seat, Card]], int, int,
                 tuple[tuple[Seat, Card], ...]]


def counted(play: Play) -> _Tallies:
    """(tricks won NS/EW, cards in the tricks, quitted cards, declarer's tricks as played,
    declarer's tricks after Law 64 and rulings, the cards of the trick in progress), counted
    from the tricks themselves as the play did before it kept them."""
    ns = ew = cards = 0
    quitted: set[tuple[Seat, Card]] = set()
    for t in play._tricks:
        cards += len(t.cards)
        if t.winner is not None:
            if t.winner is Seat.N or t.winner is Seat.S:
                ns += 1
            else:
                ew += 1
            quitted.update(t.cards)
    claim = play._claim[0] if play._claim else 0
    played = sum(1 for t in play._tricks
                 if t.winner is not None and t.winner.side is play.declarer.side) + claim
    if play._adjusted is not None:
        result = play._adjusted
    else:
        transfer, corrected = play._transfer, play._corrected_winners
        if play.complete:
            transfer, corrected, _ = play._law64()
        won = sum(1 for t in play._tricks if t.winner is not None
                  and corrected.get(t.number, t.winner).side is play.declarer.side)
        result = max(0, min(_LAST_TRICK, won + claim + transfer))
    current = play.current_trick
    return (ns, ew), cards, quitted, played, result, current.cards if current else ()


def kept(play: Play) -> _Tallies:
    quitted = {(s, c) for s in Seat for c in _all_cards() if play.quitted(s, c)}
    return (play.tricks_won, play.card_count, quitted, play.declarer_tricks_played,
            play.declarer_tricks, play.current_cards)


_CARDS: list[Card] = []


def _all_cards() -> list[Card]:
    if not _CARDS:
        _CARDS.extend(Card.parse(s + r) for s in "SHDC" for r in "AKQJT98765432")
    return _CARDS


def _ruling(rng: random.Random, engine: Engine) -> dict[str, Any]:
    """A ruling on an alert the table has (most of the time an open one)."""
    alerts = list(engine._tables["1"].alerts) if "1" in engine._tables else []
    alert = rng.choice(alerts) if alerts and rng.random() < 0.9 else rng.randint(1, 4)
    return {"v": 1, "src": "director", "seq": 0, "ts": 1_700_000_000.0,
            "ruling": rng.choice(["reject", "accept", "clear", "undo", "claim"]),
            "alert": alert, "tricks": rng.randint(0, 13)}


def _on_spot(event: dict[str, Any]) -> dict[str, Any]:
    if event.get("zone") == "tray":
        return dict(event, zone="spot")
    return event


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), boards=st.integers(1, 3),
       junk=st.floats(0.0, 0.25), known=st.booleans(), spot=st.booleans())
def test_kept_tallies_equal_the_tricks_counted_again(
        seed: int, boards: int, junk: float, known: bool, spot: bool) -> None:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records} if known else {}
    engine = Engine(deals=deals)
    seqs = {"pi": 0, "director": 0}
    for record in records:
        events = record_events(record, src="pi", scans=rng.random() < 0.3,
                               sensing="spot" if spot else "tray")
        for event in events:
            items = [dict(event)]
            roll = rng.random()
            if roll < junk:
                extra = _junk(rng, "pi", 0)
                items.insert(0, _on_spot(extra) if spot and rng.random() < 0.5 else extra)
            elif roll < junk + 0.04:
                items.insert(0, _ruling(rng, engine))
            elif roll < junk + 0.05:
                number = rng.randint(1, boards + 1)
                items.insert(0, {"v": 1, "src": "pi", "seq": 0, "ts": 1_700_000_000.0,
                                 "type": "tag", "zone": "board", "action": "present",
                                 "uid": f"D{number:04d}", "board": number})
            for item in items:
                seqs[item["src"]] += 1
                item["seq"] = seqs[item["src"]]
                kind = "ruling" if "ruling" in item else "event"
                engine.handle(f"bridge/1/{kind}", item)
                board = engine._tables["1"].table.board
                if board is not None and board.play is not None:
                    assert kept(board.play) == counted(board.play)


def test_a_reopened_trick_and_a_revoke_are_counted_again() -> None:
    """The paths that change a closed trick (a card taken back into a trick after it
    closed, a revoke's transfer at the end) go through the recount, not the increments."""
    rng = random.Random(3)
    record = random_board(rng, 1).record
    while len(record.tricks) < 13:
        record = random_board(rng, 1).record
    engine = Engine(deals={1: DealInfo(1, record.dealer, record.vulnerability, record.deal)})
    events = record_events(record, src="pi", scans=False, sensing="spot")
    seq = 0
    for event in events:
        seq += 1
        engine.handle("bridge/1/event", dict(event, seq=seq))
        board = engine._tables["1"].table.board
        assert board is not None
        if board.play is not None and board.play.card_count == 5 and not board.play.complete:
            # the last card of the first trick put back on its spot and lifted: taken back
            # (62A) or quitted, whatever the Laws core decides, the tallies follow it
            first = board.play._tricks[0]
            seat, card = first.cards[-1]
            for action in ("present", "removed"):
                seq += 1
                engine.handle("bridge/1/event", {
                    "v": 1, "type": "tag", "src": "pi", "seq": seq, "ts": 1_700_000_000.0,
                    "zone": "spot", "action": action, "seat": seat.name,
                    "uid": f"R{seq}", "card": str(card), "deck": "1"})
                assert kept(board.play) == counted(board.play)
    board = engine._tables["1"].table.board
    assert board is not None and board.play is not None and board.play.complete
    assert kept(board.play) == counted(board.play)


_VALUES: dict[str, list[Any]] = {"rules": list(Rules), "known": [True, False]}


def test_the_laws_tests_keep_the_tallies_true(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Laws core's own scenarios (every irregularity and ruling they stage: revokes and
    their corrections, 62D, defective tricks, penalty cards, leads out of turn accepted or
    not, claims, withdrawn cards) run again with the tallies checked after every card put,
    taken or ruled on."""
    checks = [0]

    def checked(name: str) -> None:
        original = getattr(Play, name)

        def call(self: Play, *args: Any, **kwargs: Any) -> Any:
            result = original(self, *args, **kwargs)
            assert kept(self) == counted(self), f"after Play.{name}{args}"
            checks[0] += 1
            return result

        monkeypatch.setattr(Play, name, call)

    for name in ("put", "take", "rule"):
        checked(name)
    ran = 0
    for module in (test_play, test_law15_wrong_board, test_law25_change_of_call,
                   test_law27_insufficient_bid, test_law28_call_out_of_rotation,
                   test_law36_inadmissible_double, test_law45_fifth_card,
                   test_law53_lead_out_of_turn, test_law54_opening_lead_out_of_turn,
                   test_law55_declarer_lead_out_of_turn, test_law57_premature_play,
                   test_law58_simultaneous_plays, test_law63_established_revoke,
                   test_ruling_options, test_table, test_sensing):
        for name, test in sorted(vars(module).items()):
            if not name.startswith("test_") or not callable(test) \
                    or hasattr(test, "hypothesis"):
                continue
            params = list(inspect.signature(test).parameters)
            if any(p not in _VALUES for p in params):
                continue     # a fixture or a parameter of its own: run where it is
            for values in itertools.product(*(_VALUES[p] for p in params)):
                test(*values)
            ran += 1
    assert ran > 100 and checks[0] > 1000
