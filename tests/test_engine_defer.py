"""``Engine.defer``/``flush`` (wire contract 1.4): while the daemon applies a batch, each
table's ``state`` and ``indicator`` are built once, at the end, as ``handle`` alone would
have built them after the table's last input; every other output is ``handle``'s, in order.

The reference is the same Engine fed the same inputs one by one without deferring."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from typing import Any

from boardevents import EventWriter, clean_board, t08_revoke
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.boards.generate import random_board
from controller.engine import Engine, Outgoing
from controller.formats.events import record_events
from tests.replay_golden import _junk

SNAPSHOTS = ("state", "indicator")
Input = tuple[str, dict[str, Any]]


def kind(out: Outgoing) -> str:
    return out.topic.rsplit("/", 1)[1]


def table(out: Outgoing) -> str:
    return out.topic.split("/")[1]


def others(outs: Sequence[Outgoing]) -> list[tuple[str, dict[str, Any]]]:
    return [(o.topic, o.payload) for o in outs if kind(o) not in SNAPSHOTS]


def board_inputs(t: str, events: Sequence[dict[str, Any]]) -> list[Input]:
    return [(f"bridge/{t}/event", e) for e in events]


def interleave(*streams: Sequence[Input]) -> list[Input]:
    out: list[Input] = []
    for i in range(max(len(s) for s in streams)):
        out += [s[i] for s in streams if i < len(s)]
    return out


def batched(engine: Engine, batch: Sequence[Input]
            ) -> tuple[list[Outgoing], dict[str, list[Outgoing]]]:
    engine.defer()
    outs = [o for topic, payload in batch for o in engine.handle(topic, payload)]
    return outs, engine.flush()


def test_a_round_start_gives_one_state_and_one_indicator() -> None:
    events = list(EventWriter("table-1-pi").board(clean_board(1)))
    start = board_inputs("1", events[:53])  # the board tag and the four hands' 52 scans
    reference = Engine()
    ref = [o for topic, payload in start for o in reference.handle(topic, payload)]
    assert sum(kind(o) == "state" for o in ref) == 53  # today: one state per scan

    engine = Engine()
    outs, flushed = batched(engine, start)
    assert [kind(o) for o in outs if kind(o) in SNAPSHOTS] == []
    assert list(flushed) == ["1"]
    assert [kind(o) for o in flushed["1"]] in (["state"], ["state", "indicator"])
    state = flushed["1"][0].payload
    assert state["last"] == {"src": "table-1-pi", "seq": events[52]["seq"]}
    assert state == reference.snapshot("1") == engine.snapshot("1")
    last_indicator = [o.payload for o in ref if kind(o) == "indicator"][-1]
    assert engine.retained()[1].payload == last_indicator
    assert others(outs) == others(ref)
    # the rest of the board one by one: the same outputs as the reference's
    for topic, payload in board_inputs("1", events[53:]):
        assert engine.handle(topic, payload) == reference.handle(topic, payload)


def test_alerts_and_feed_of_a_batch_all_come_in_order() -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    inputs = board_inputs("1", events)
    reference = Engine()
    ref = [o for topic, payload in inputs for o in reference.handle(topic, payload)]
    engine = Engine()
    outs: list[Outgoing] = []
    flushed: list[Outgoing] = []
    for i in range(0, len(inputs), 25):  # batches of 25 across the auction and the play
        got, snaps = batched(engine, inputs[i:i + 25])
        outs += got
        assert list(snaps) == ["1"] and [kind(o) for o in snaps["1"]][0] == "state"
        flushed += snaps["1"]
    assert any(kind(o) == "alert" for o in outs) and any(kind(o) == "feed" for o in outs)
    assert any(kind(o) == "result" for o in outs)
    assert others(outs) == others(ref)
    assert [kind(o) for o in flushed].count("state") == -(-len(inputs) // 25)
    assert [o for o in flushed if kind(o) == "state"][-1].payload == reference.snapshot("1")
    assert engine.retained() == reference.retained()


def test_two_tables_in_one_batch_each_get_theirs() -> None:
    one = board_inputs("1", list(EventWriter("table-1-pi").board(clean_board(1)))[:53])
    two = board_inputs("2", list(EventWriter("table-2-pi").board(t08_revoke()))[:60])
    reference = Engine()
    ref = [o for topic, payload in interleave(one, two)
           for o in reference.handle(topic, payload)]
    engine = Engine()
    outs, flushed = batched(engine, interleave(one, two))
    assert sorted(flushed) == ["1", "2"]
    for t, stream in (("1", one), ("2", two)):
        states = [o.payload for o in flushed[t] if kind(o) == "state"]
        assert states == [reference.snapshot(t)]
        assert states[0]["last"]["seq"] == stream[-1][1]["seq"]
        assert all(table(o) == t for o in flushed[t])
    assert others(outs) == others(ref)
    assert engine.retained() == reference.retained()


def test_a_ruling_gets_its_state_at_once() -> None:
    """The director's console answers a ruling on the state whose ``last`` is the ruling:
    deferring never hides it behind a later event of the same batch."""
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    engine = Engine()
    for topic, payload in board_inputs("1", events[:60]):
        engine.handle(topic, payload)
    ruling = {"v": 1, "src": "console", "seq": 1, "ts": 1.0, "ruling": "clear"}
    outs, flushed = batched(engine, [("bridge/1/ruling", ruling),
                                     *board_inputs("1", events[60:62])])
    states = [o.payload for o in outs if kind(o) == "state"]
    assert [s["last"] for s in states] == [{"src": "console", "seq": 1}]
    assert [o.payload["last"] for o in flushed["1"] if kind(o) == "state"] == \
        [{"src": "table-1-pi", "seq": events[61]["seq"]}]


def test_a_batch_that_changes_nothing_publishes_nothing() -> None:
    events = list(EventWriter("table-1-pi").board(clean_board(1)))
    engine = Engine()
    for topic, payload in board_inputs("1", events[:10]):
        engine.handle(topic, payload)
    # duplicates and an unknown topic: not applied, so no table changed
    outs, flushed = batched(engine, [*board_inputs("1", events[:3]), ("bridge/1/x", {})])
    assert outs == [] and flushed == {}
    assert engine.flush() == {}  # flush without defer: nothing, and handle is as before
    topic, payload = board_inputs("1", events[10:11])[0]
    assert "state" in [kind(o) for o in engine.handle(topic, payload)]


def batches(rng: random.Random, inputs: Sequence[Input]) -> Iterator[list[Input]]:
    i = 0
    while i < len(inputs):
        size = rng.choice([1, 2, 5, 20, 60])
        yield list(inputs[i:i + size])
        i += size


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), junk=st.floats(0.0, 0.25), known=st.booleans())
def test_deferred_batches_end_as_one_by_one(seed: int, junk: float, known: bool) -> None:
    """Random boards with irregular inputs on two tables, cut into random batches: after
    every batch each table's last published state and indicator are the reference's, the
    other outputs are the reference's in order, and a table has at most one state per
    batch (one more per ruling)."""
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in (1, 2)]
    deals = {r.board: r.deal_info for r in records} if known else {}
    streams: list[list[Input]] = []
    for t, record in zip(("1", "2"), records, strict=True):
        stream: list[Input] = []
        seq = 0
        for event in record_events(record, src=f"pi-{t}", scans=rng.random() < 0.7):
            items = [dict(event)]
            if rng.random() < junk:
                items.insert(0, _junk(rng, f"pi-{t}", 0))
            for item in items:
                if item["src"] == f"pi-{t}":
                    seq += 1
                    item["seq"] = seq
                stream.append((f"bridge/{t}/{'ruling' if 'ruling' in item else 'event'}",
                               item))
        streams.append(stream)
    reference, engine = Engine(deals=deals), Engine(deals=deals)
    ref_last: dict[tuple[str, str], dict[str, Any]] = {}
    last: dict[tuple[str, str], dict[str, Any]] = {}
    ref_others: list[tuple[str, dict[str, Any]]] = []
    got_others: list[tuple[str, dict[str, Any]]] = []
    for batch in batches(rng, interleave(*streams)):
        for topic, payload in batch:
            outs = reference.handle(topic, payload)
            ref_others += others(outs)
            for o in outs:
                ref_last[(table(o), kind(o))] = o.payload
        outs, flushed = batched(engine, batch)
        got_others += others(outs)
        for o in [*outs, *(o for snaps in flushed.values() for o in snaps)]:
            last[(table(o), kind(o))] = o.payload
        for t, snaps in flushed.items():
            rulings = sum(topic == f"bridge/{t}/ruling" for topic, _ in batch)
            results = sum(kind(o) == "result" for o in outs if table(o) == t)
            states = sum(kind(o) == "state" for o in outs if table(o) == t)
            assert [kind(o) for o in snaps][:1] == ["state"] and states <= rulings + results
            assert [kind(o) for o in snaps].count("indicator") <= 1
        assert last == ref_last
    assert got_others == ref_others
    assert engine.retained() == reference.retained()


def test_a_board_finished_and_the_next_started_in_one_batch() -> None:
    """The broadcast gate trusts a board's result once a state shows that board over: the
    state that finishes a board goes out at once, before its result, even when the next
    board starts in the same batch (a backlog after an outage arrives in full batches)."""
    writer = EventWriter("table-1-pi")
    first, second = list(writer.board(t08_revoke())), list(writer.board(clean_board(5)))
    engine = Engine()
    for topic, payload in board_inputs("1", first[:150]):
        engine.handle(topic, payload)
    outs, flushed = batched(engine, board_inputs("1", first[150:] + second[:20]))
    seen = [(kind(o), o.payload.get("board"), o.payload.get("phase")) for o in outs
            if kind(o) in ("state", "result")]
    assert seen == [("state", 10, "complete"), ("result", 10, None)]
    assert [(o.payload["board"], o.payload["phase"]) for o in flushed["1"]
            if kind(o) == "state"] == [(5, "scanning")]
