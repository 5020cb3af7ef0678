"""Inputs that change nothing shown (``Update.shown_unchanged``: a quitted card leaving its
spot mid-play, a call card picked up that changes nothing): on a real table's stream
(``sensing="spot"``) with seeded irregular inputs (cards on and off the spots and trays,
call cards put and picked up, rulings, undo), after every such input the state published
equals, byte for byte, a state built from nothing, the indicator built from nothing is the
last one published, and the table's feed and alerts did not move; the engine published the
state alone. The Laws core sets the flag only when the board's shown values are unchanged:
the same checks on the board itself before and after."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller import wire
from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import record_events
from controller.laws.table import Board
from tests.replay_golden import _junk
from tests.replay_spot_golden import spot_junk, taken_back
from tests.test_engine_state_parts import full_state


def _shown(board: Board | None) -> tuple[Any, ...]:
    """What the Laws core lets a listener see of the board (state, indicator, feed)."""
    if board is None:
        return ()
    play = board.play
    return (board.number, board.phase, board.done, board.turn, board.auction.calls,
            board.auction.contract, board.auction.declarer, board.auction.obligations,
            None if play is None else (play.tricks, play.tricks_won, play.current_trick,
                                       play.trick_number, play.card_count,
                                       dict(play.penalty_cards), play.complete),
            tuple(board.log))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), boards=st.integers(1, 3),
       junk=st.floats(0.0, 0.3), known=st.booleans())
def test_an_input_that_changes_nothing_shown_publishes_the_same_state(
        seed: int, boards: int, junk: float, known: bool) -> None:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records} if known else {}
    engine = Engine(deals=deals)
    seqs = {"pi": 0, "director": 0}
    quiet = 0
    last_state: dict[str, Any] | None = None
    for record in records:
        for event in record_events(record, src="pi", scans=False, sensing="spot",
                                   return_hands=False):
            items = [dict(event), *taken_back(rng, dict(event))]
            roll = rng.random()
            if roll < junk:
                items.insert(0, _junk(rng, "pi", 0))
            elif roll < 2 * junk:
                items.insert(0, spot_junk(rng, "pi"))
            for item in items:
                seqs[item["src"]] += 1
                item["seq"] = seqs[item["src"]]
                kind = "ruling" if "ruling" in item else "event"
                ts = engine._tables.get("1")
                table = ts.table if ts is not None else None
                before = _shown(table.board) if table is not None else None
                board_before = table.board if table is not None else None
                version = board_before.version if board_before is not None else -1
                feed_before = ts.feed_seq if ts is not None else None
                indicator = ts.indicator if ts is not None else None
                outs = engine.handle(f"bridge/1/{kind}", item)
                board = engine._tables["1"].table.board
                # this input applied to this board (not a board rebuilt by an undo)
                applied = board is not None and board is board_before \
                    and board.version == version + 1
                if applied and board is not None and board.quiet and last_state is not None:
                    quiet += 1
                    assert _shown(board) == before
                    assert engine._tables["1"].feed_seq == feed_before
                    assert [o.topic for o in outs] == ["bridge/1/state"]
                    full = full_state(engine, "1")
                    assert outs[0].payload == full
                    assert outs[0].data() == wire.encode(full)
                    # the last state but ``last`` (and the notes of the input before)
                    last_state.pop("notes", None)
                    assert {**last_state, "last": full["last"]} == full
                    key = engine.payloads.indicator_key(engine._tables["1"])
                    assert key == engine._tables["1"].indicator_key
                    assert engine.payloads.indicator("1", engine._tables["1"], key) == indicator
                for out in outs:
                    if out.topic == "bridge/1/state":
                        last_state = dict(out.payload)
    assert quiet > 0
