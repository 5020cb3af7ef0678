"""The daemon's event -> state histogram (controller/service/latency.py, wire 1.16)."""

from __future__ import annotations

import msgspec
import pytest

from controller import wire
from controller.service.latency import BOUNDS_MS, LatencyTally, percentile, window


def test_each_time_falls_in_the_first_bucket_whose_bound_holds_it() -> None:
    tally = LatencyTally()
    for ms in (0.2, 0.5, 0.51, 19.9, 20.0, 20.01, 10_000.0, 10_000.5, 86_400_000.0):
        tally.add(ms)
    counted = dict(zip([*BOUNDS_MS, "beyond"], tally.counts, strict=True))
    assert counted[0.5] == 2 and counted[1] == 1
    assert counted[20] == 2 and counted[25] == 1
    assert counted[10000] == 1 and counted["beyond"] == 2
    assert tally.events == 9 == sum(tally.counts)
    assert tally.max_ms == 86_400_000.0


def test_percentiles_are_the_bound_of_their_bucket_or_the_longest_time() -> None:
    tally = LatencyTally()
    tally.add_batch([10.0 - 0.0031] * 98 + [10.0 - 0.0155, 10.0 - 0.0312], now=10.0)
    # 98 at 3.1 ms, one at 15.5 ms, one at 31.2 ms: p50 "at most 4 ms", p99 at most 20
    assert percentile(tally.counts, 0.50, tally.max_ms) == 4
    assert percentile(tally.counts, 0.99, tally.max_ms) == 20
    assert percentile(tally.counts, 1.0, tally.max_ms) == pytest.approx(31.2)
    assert percentile([0] * (len(BOUNDS_MS) + 1), 0.99) is None
    small = LatencyTally()
    small.add(0.3)
    assert small.as_dict()["p99_ms"] == 0.3  # lower than the bucket's bound
    late = LatencyTally()
    late.add(25_000.0)
    assert late.as_dict()["p50_ms"] == 25_000.0  # beyond the last bound: the longest
    assert percentile(late.counts, 0.5) is None


def test_two_statuses_subtract_to_the_window_between_them() -> None:
    tally = LatencyTally()
    tally.add(1.5)
    before = tally.as_dict()
    tally.add(45.0)
    tally.add(46.0)
    after = tally.as_dict()
    between = window(before, after)
    assert sum(between) == 2 and percentile(between, 0.5) == 50
    assert window(None, after) == after["counts"]
    with pytest.raises(ValueError, match="restarted"):
        window(after, before)
    with pytest.raises(ValueError, match="buckets"):
        window(before, dict(after, le_ms=[1, 2]))


def test_the_status_field_round_trips_through_the_wire_struct() -> None:
    tally = LatencyTally()
    tally.add_batch([0.0, 0.001], now=0.004)
    status = {"v": 1, "src": "ctl", "status": "online", "latency": tally.as_dict()}
    decoded = msgspec.json.decode(msgspec.json.encode(status), type=wire.ControllerStatus)
    assert decoded.latency is not None and decoded.latency.events == 2
    assert decoded.latency.counts == tally.counts
