"""controller/service/gcpolicy.py: the daemon freezes what survives and collects everything only
when idle; that is sound because the Engine's state makes no reference cycles, which a
session with every kind of input (junk, undo, rulings, claims, replaced boards, three
tables) checks with the collector off."""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator

import pytest

from controller.engine import Engine
from controller.service.gcpolicy import GcPolicy
from tests.replay_golden import mixed_session


@pytest.fixture
def collector() -> Iterator[None]:
    """The test process's collector back as it was, whatever the test did."""
    enabled = gc.isenabled()
    try:
        yield
    finally:
        gc.unfreeze()
        if enabled:
            gc.enable()


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def full_collections() -> int:
    return int(gc.get_stats()[2]["collections"])


def test_the_engine_makes_no_reference_cycles(collector: None) -> None:
    _, lines = mixed_session(boards=9, tables=3)
    engine = Engine()
    gc.collect()
    gc.disable()
    outputs = 0
    for line in lines.splitlines():
        item = json.loads(line)
        outputs += len(engine.handle(item["topic"], item["payload"]))
    engine.snapshot("1")
    engine.retained()
    found = gc.collect()
    assert outputs > 1000
    assert found == 0, f"{found} objects in reference cycles: the GC policy needs a full " \
                       "collection more often than at idle"


def test_survivors_are_frozen_after_a_batch_every_freeze_every_seconds(collector: None) -> None:
    clock = Clock()
    policy = GcPolicy(freeze_every=10, full_every=300, clock=clock)
    policy.start()
    assert gc.get_freeze_count() > 0
    kept = [object() for _ in range(10)] + [[i] for i in range(1000)]
    frozen = gc.get_freeze_count()
    clock.now += 5
    policy.after_batch()
    assert gc.get_freeze_count() == frozen  # not yet
    clock.now += 5
    policy.after_batch()
    assert gc.get_freeze_count() >= frozen + 1000
    assert kept


def test_by_default_what_survives_a_batch_is_frozen_after_it(collector: None) -> None:
    """No young collection visits what an earlier batch left (issue 32 item 3: freezing
    once a second let collections of 10-50 ms through at 1,024 tables)."""
    clock = Clock()
    policy = GcPolicy(clock=clock)
    policy.start()
    for _ in range(3):  # batches in the same instant
        kept = [[i] for i in range(500)]
        frozen = gc.get_freeze_count()
        policy.after_batch()
        assert gc.get_freeze_count() >= frozen + 500
        assert gc.get_count()[0] < 500  # the young generation emptied
        assert kept


def test_everything_is_collected_when_idle_and_a_full_collection_is_due(collector: None) -> None:
    clock = Clock()
    policy = GcPolicy(freeze_every=10, full_every=300, clock=clock)
    policy.start()
    cycle: list[object] = []
    cycle.append(cycle)
    policy.after_batch()
    clock.now += 10
    policy.after_batch()  # the cycle is frozen now: no automatic collection frees it
    del cycle
    before = full_collections()
    clock.now += 100
    policy.idle()
    assert full_collections() == before and policy.full_collections == 0  # not due
    clock.now += 200
    policy.idle()
    assert full_collections() == before + 1 and policy.full_collections == 1
    assert gc.get_freeze_count() > 0  # the survivors frozen again
    policy.stop()
    assert gc.get_freeze_count() == 0


def test_a_busy_daemon_still_collects_everything_once_full_every_busy_has_passed(
        collector: None) -> None:
    clock = Clock()
    policy = GcPolicy(freeze_every=1, full_every=300, full_every_busy=3600, clock=clock)
    policy.start()
    before = full_collections()
    for _ in range(3599):  # a batch a second, never idle
        clock.now += 1
        policy.after_batch()
    assert policy.full_collections == 0
    clock.now += 1
    policy.after_batch()
    assert policy.full_collections == 1 and full_collections() == before + 1
