"""``Engine.rebuild``: inputs applied without building outputs (a restart's journal) leave
the engine exactly where ``handle`` leaves it, for the whole golden session (three tables,
scans, irregular inputs, rulings, redeliveries)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from controller.boards.deals import load_deals
from controller.engine import Engine, Outgoing
from tests.replay_golden import MIXED_DEALS, MIXED_EVENTS, T08_DEALS, T08_EVENTS


def inputs(events: object, table: str = "1") -> list[tuple[str, bytes]]:
    out: list[tuple[str, bytes]] = []
    for line in events.read_bytes().splitlines():  # type: ignore[attr-defined]
        data = msgspec.json.decode(line)
        if "topic" in data:
            out.append((data["topic"], msgspec.json.encode(data["payload"])))
        else:
            kind = "ruling" if "ruling" in data else "event"
            out.append((f"bridge/{table}/{kind}", line))
    return out


def handled(engine: Engine, items: list[tuple[str, bytes]]) -> Iterator[list[Outgoing]]:
    for topic, payload in items:
        yield engine.handle(topic, payload)


def payloads(outs: list[Outgoing]) -> list[tuple[str, bytes]]:
    return [(o.topic, o.data()) for o in outs]


@pytest.mark.parametrize("events,deals", [(MIXED_EVENTS, MIXED_DEALS), (T08_EVENTS, T08_DEALS)],
                         ids=["mixed", "t08"])
@pytest.mark.parametrize("cut", [0.0, 0.37, 0.8, 1.0])
def test_a_rebuilt_engine_equals_the_one_that_handled_everything(
        events: object, deals: object, cut: float) -> None:
    items = inputs(events)
    boards, _ = load_deals(deals)  # type: ignore[arg-type]
    k = int(len(items) * cut)
    original = Engine(deals=boards)
    for _ in handled(original, items[:k]):
        pass
    rebuilt = Engine(deals=boards)
    assert rebuilt.rebuild(iter(items[:k])) == k
    assert rebuilt.tables == original.tables
    assert rebuilt.stats == original.stats
    for table in original.tables:
        assert rebuilt.snapshot(table) == original.snapshot(table)
        assert rebuilt.record(table) == original.record(table)
    assert payloads(rebuilt.retained()) == payloads(original.retained())
    assert payloads(rebuilt.acks()) == payloads(original.acks())
    # and from there on both publish the same messages, byte for byte
    after = [payloads(o) for o in handled(original, items[k:])]
    assert [payloads(o) for o in handled(rebuilt, items[k:])] == after
    if cut < 1.0:
        assert any(after)


def test_rebuild_builds_no_output() -> None:
    items = inputs(MIXED_EVENTS)
    boards, _ = load_deals(MIXED_DEALS)
    engine = Engine(deals=boards)
    engine.rebuild(items)
    assert engine.stats["events"] > 1000
    # no state was built: a table's state and the parts it is built from (Payloads.state
    # keeps them per board) are made only when next asked for. (Not counted by patching
    # Payloads.state: a class of the mypyc build cannot be patched.)
    tables = engine._tables
    assert tables and all(ts.state is None and ts.state_parts is None
                          for ts in tables.values())
    snapshot = engine.snapshot(engine.tables[0])
    assert snapshot["table"] == engine.tables[0]
