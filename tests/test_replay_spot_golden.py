"""``bridge-table replay`` of real tables' streams (bid cards picked up, quitted cards
leaving their spots, irregular inputs) writes the same bytes as the code before issue 32
item 2's second pass (tests/replay_spot_golden.py: inputs in tests/data/, digests
recorded with be5f41f): every kind of message, results only, one display language."""

from __future__ import annotations

import json

import pytest

from tests.replay_golden import digest, replay_output
from tests.replay_spot_golden import RUNS, SPOT_DEALS, SPOT_DIGESTS, SPOT_EVENTS


@pytest.mark.parametrize("name,extra", RUNS, ids=[r[0] for r in RUNS])
def test_a_spot_stream_replays_byte_identical_to_the_recorded_output(
        name: str, extra: tuple[str, ...]) -> None:
    expected = json.loads(SPOT_DIGESTS.read_text())[name]
    out = replay_output(SPOT_EVENTS, SPOT_DEALS, extra)
    assert out.count(b"\n") == expected["lines"]
    assert digest(out) == expected["sha256"]


def test_the_session_has_inputs_that_change_nothing_shown() -> None:
    """The stream exercises the short-cut: quitted cards and call cards picked up."""
    lines = [json.loads(line) for line in SPOT_EVENTS.read_text().splitlines()]
    removed = [m["payload"] for m in lines if m["payload"].get("action") == "removed"]
    assert sum(p["zone"] == "spot" for p in removed) > 100
    assert sum(p["zone"] == "bid" for p in removed) > 50
