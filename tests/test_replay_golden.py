"""``bridge-table replay`` writes the same bytes as before its output side was made cheap
(tests/replay_golden.py: inputs in tests/data/, digests recorded from the earlier code)."""

from __future__ import annotations

import json

import pytest

from controller.cli import compiled
from tests.replay_golden import (
    DIGESTS,
    SESSIONS,
    digest,
    replay_output,
    replay_output_from_sources,
)

#: the modules this process imports, and, where those are the compiled wheel's (the
#: compiled run of tools/compiled_build.py), the clone's Python sources too
RUNS = {"installed": replay_output,
        **({"sources": replay_output_from_sources} if compiled() else {})}


@pytest.mark.parametrize("run", RUNS)
@pytest.mark.parametrize("name,events,deals,extra", SESSIONS, ids=[s[0] for s in SESSIONS])
def test_replay_output_is_byte_identical_to_the_recorded_one(
        name: str, events: object, deals: object, extra: tuple[str, ...], run: str) -> None:
    expected = json.loads(DIGESTS.read_text())[name]
    out = RUNS[run](events, deals, extra)  # type: ignore[arg-type]
    assert out.count(b"\n") == expected["lines"]
    assert digest(out) == expected["sha256"]


def test_replay_in_one_language_shows_only_that_one() -> None:
    from tests.replay_golden import T08_DEALS, T08_EVENTS

    out = replay_output(T08_EVENTS, T08_DEALS, ("--languages", "zh", "--topics", "indicator"))
    lines = [json.loads(line) for line in out.splitlines()]
    assert lines and all(list(m["payload"]["display"]) == ["zh"] for m in lines)


def test_replay_refuses_an_unknown_language() -> None:
    import io

    from controller.replay import cli as replay
    from tests.replay_golden import T08_EVENTS

    assert replay.main([str(T08_EVENTS), "--languages", "fr"], out=io.BytesIO()) == 2
