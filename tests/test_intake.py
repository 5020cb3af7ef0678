"""The per-table intake bound (``controller.service.intake``): a token bucket per table, on a
clock the test turns."""

from __future__ import annotations

import pytest

from controller.service.intake import REPORT_EVERY, Intake


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_rate_and_other_tables_untouched() -> None:
    clock = Clock()
    intake = Intake(burst=10, rate=5.0, clock=clock)
    assert all(intake.admit("1") for _ in range(10))
    assert not intake.admit("1") and not intake.admit("1")
    assert intake.dropped == 2
    assert all(intake.admit("2") for _ in range(10))  # another table has its own bucket
    clock.now += 1.0  # five more a second
    assert [intake.admit("1") for _ in range(6)] == [True] * 5 + [False]
    clock.now += 100.0  # refilled up to the burst, never beyond
    assert sum(intake.admit("1") for _ in range(20)) == 10


def test_dropped_events_are_reported_at_most_once_a_second() -> None:
    clock = Clock()
    intake = Intake(burst=1, rate=1.0, clock=clock)
    assert intake.report("1") == 0
    intake.admit("1")
    for _ in range(5):
        intake.admit("1")
    assert intake.report("1") == 5
    intake.admit("1")
    assert intake.report("1") == 0  # told a moment ago
    clock.now += REPORT_EVERY
    assert intake.report("1") == 1


def test_tables_remembered_are_bounded() -> None:
    from controller.service import intake as module
    clock = Clock()
    intake = Intake(burst=1, rate=1.0, clock=clock)
    for n in range(module._MAX_TABLES + 50):  # noqa: SLF001 - the bound under test
        intake.admit(f"t{n}")
        intake.admit(f"t{n}")  # each one dropping: none is full again
    assert len(intake._buckets) <= module._MAX_TABLES  # noqa: SLF001


@pytest.mark.parametrize("burst, rate", [(0, 1.0), (1, 0.0), (1, -1.0)])
def test_bounds_must_let_something_in(burst: int, rate: float) -> None:
    with pytest.raises(ValueError):
        Intake(burst=burst, rate=rate)


def test_a_backlog_after_a_connection_is_no_flood_once() -> None:
    """What the broker queued while the daemon was away: each table may send that much more
    once, until the daemon first has nothing to read (or the allowance's time is up)."""
    clock = Clock()
    intake = Intake(burst=10, rate=1.0, clock=clock)
    intake.allow_backlog(events=100, seconds=60.0)
    assert sum(intake.admit("1") for _ in range(200)) == 110
    assert sum(intake.admit("2") for _ in range(40)) == 40  # each table its own allowance
    intake.end_backlog()  # too early: the broker's queue may still be on its way
    assert sum(intake.admit("2") for _ in range(10)) == 10
    clock.now += 1.0
    intake.end_backlog()
    assert sum(intake.admit("2") for _ in range(50)) == 1  # the bound: 1 a second
    intake.allow_backlog(events=100, seconds=60.0)
    clock.now += 61.0
    assert sum(intake.admit("3") for _ in range(200)) == 10  # the allowance's time is up
