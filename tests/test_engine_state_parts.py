"""``state`` built from kept parts (controller/engine/render.py ``Payloads.state``,
controller/engine/tables.py ``StateParts``): after every input of generated boards with
seeded irregular inputs (cards and calls out of turn, undo, claims, rulings, a board
replaced before it is finished), the state published and the one kept for ``snapshot``
equal, byte for byte, a state built from nothing (no parts kept), and the kept parts go
on from there."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller import wire
from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import record_events
from controller.laws.record import DealInfo
from tests.replay_golden import _junk


def full_state(engine: Engine, table: str) -> dict[str, Any]:
    """The table's state built with no part kept; the kept parts are put back after, so
    that the next input is built from them again."""
    ts = engine._tables[table]
    kept = ts.state_parts, ts.auction_calls, ts.auction_texts
    ts.state_parts, ts.auction_calls, ts.auction_texts = None, None, ()
    try:
        return engine.payloads.state(table, ts)
    finally:
        ts.state_parts, ts.auction_calls, ts.auction_texts = kept


def _replaced_board(rng: random.Random, boards: int) -> dict[str, Any]:
    number = rng.randint(1, boards + 1)
    return {"v": 1, "src": "pi", "seq": 0, "ts": 1_700_000_000.0, "type": "tag",
            "zone": "board", "action": "present", "uid": f"D{number:04d}", "board": number}


def _claim(rng: random.Random) -> dict[str, Any]:
    return {"v": 1, "src": "director", "seq": 0, "ts": 1_700_000_000.0, "ruling": "claim",
            "tricks": rng.randint(0, 13)}


@pytest.mark.slow
@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), boards=st.integers(1, 3),
       junk=st.floats(0.0, 0.3), known=st.booleans(), pairs=st.booleans())
def test_the_state_from_kept_parts_is_the_state_built_from_nothing(
        seed: int, boards: int, junk: float, known: bool, pairs: bool) -> None:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records} if known else {}
    engine = Engine(deals=deals,
                    pairs_at=(lambda table, board: (board, board + 1)) if pairs else None)
    seqs = {"pi": 0, "director": 0}
    states = 0
    for record in records:
        for event in record_events(record, src="pi", scans=rng.random() < 0.5):
            items = [dict(event)]
            roll = rng.random()
            if roll < junk:
                items.insert(0, _junk(rng, "pi", 0))
            elif roll < junk + 0.01:
                items.insert(0, _replaced_board(rng, boards))
            elif roll < junk + 0.02:
                items.insert(0, _claim(rng))
            for item in items:
                seqs[item["src"]] += 1
                item["seq"] = seqs[item["src"]]
                kind = "ruling" if "ruling" in item else "event"
                for out in engine.handle(f"bridge/1/{kind}", item):
                    if out.topic == "bridge/1/state":
                        full = full_state(engine, "1")
                        assert out.payload == full
                        assert out.data() == wire.encode(full)
                        assert engine.snapshot("1") is out.payload
                        states += 1
    assert states > 0


def test_a_state_kept_from_an_earlier_event_is_not_changed_by_later_ones() -> None:
    """Parts are shared between states only while they are unchanged: a state published
    earlier still says what it said (its bytes are those it was first encoded to)."""
    rng = random.Random(7)
    record = random_board(rng, 1).record
    while not record.tricks:  # a board that is played, not passed out
        record = random_board(rng, 1).record
    engine = Engine(deals={1: DealInfo(1, record.dealer, record.vulnerability, record.deal)})
    kept: list[tuple[dict[str, Any], bytes]] = []
    for seq, event in enumerate(record_events(record, src="pi", scans=False), 1):
        for out in engine.handle("bridge/1/event", dict(event, seq=seq)):
            if out.topic.endswith("/state"):
                kept.append((out.payload, wire.encode(out.payload)))
    assert len(kept) > 52
    for payload, data in kept:
        assert wire.encode(payload) == data
    assert len({data for _, data in kept}) == len(kept)
