"""Publish what changed: the Engine skips an indicator whose inputs did not change, and
renders the display once per change. Over random boards with seeded irregular inputs,
after every input the table's last published indicator is the one built from scratch,
and its last published state is the current one: no change is ever dropped."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import record_events
from controller.indicators.display_text import LANGUAGES
from tests.replay_golden import _junk


def fresh_indicator(engine: Engine, table: str) -> dict[str, Any]:
    ts = engine._tables[table]
    ts.display_key = ts.display = None  # render the rows again, not the table's copy
    return engine.payloads.indicator(table, ts, engine.payloads.indicator_key(ts))


def fresh_state(engine: Engine, table: str) -> dict[str, Any]:
    return engine.payloads.state(table, engine._tables[table])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), boards=st.integers(1, 3),
       junk=st.floats(0.0, 0.25), languages=st.sampled_from([LANGUAGES, ("vi",), ("zh", "en")]),
       known=st.booleans())
def test_the_last_published_indicator_and_state_are_always_the_current_ones(
        seed: int, boards: int, junk: float, languages: tuple[str, ...], known: bool) -> None:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    deals = {r.board: r.deal_info for r in records} if known else {}
    engine = Engine(deals=deals, languages=languages)
    published: dict[str, dict[str, Any]] = {}
    seq = 0
    for record in records:
        for event in record_events(record, src="pi", scans=rng.random() < 0.5):
            items = [dict(event)]
            if rng.random() < junk:
                items.insert(0, _junk(rng, "pi", 0))
            for item in items:
                if item["src"] == "pi":
                    seq += 1
                    item["seq"] = seq
                kind = "ruling" if "ruling" in item else "event"
                outs = engine.handle(f"bridge/1/{kind}", item)
                kinds = {o.topic.rsplit("/", 1)[1] for o in outs}
                for out in outs:
                    published[out.topic.rsplit("/", 1)[1]] = out.payload
                if "1" not in engine.tables:
                    continue
                assert published["indicator"] == fresh_indicator(engine, "1")
                assert set(published["indicator"]["display"]) == set(languages)
                if "state" in kinds:
                    assert published["state"] == fresh_state(engine, "1")
    assert "state" in published


def test_only_the_languages_asked_for_and_only_known_ones() -> None:
    engine = Engine(languages=("vi",))
    outs = engine.handle("bridge/1/event", {"v": 1, "src": "pi", "seq": 1, "ts": 1.0,
                                            "type": "tag", "zone": "board",
                                            "action": "present", "uid": "B1", "board": 1})
    indicator = next(o.payload for o in outs if o.topic.endswith("/indicator"))
    assert list(indicator["display"]) == ["vi"]
    for bad in [("fr",), ()]:
        try:
            Engine(languages=bad)
        except ValueError as exc:
            assert "languages" in str(exc)
        else:
            raise AssertionError(f"languages {bad} accepted")
