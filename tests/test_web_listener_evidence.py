"""controller/web/listener.py: the console's data holds the director's evidence (tempo flags)
and checks a claim double dummy in its solver thread, off the event loop."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from test_evidence import TABLE, claimed_board, t08_board

from controller.engine import Outgoing, encode
from controller.evidence.claims import check_claim
from controller.web.listener import TableStore

pytest.importorskip("endplay.dds")


def feed(store: TableStore, outs: list[Outgoing]) -> None:
    for o in outs:
        store.handle(o.topic, encode(o.payload))


def test_tempo_flags_reach_the_consoles_data() -> None:
    store = TableStore()
    feed(store, t08_board({4: 18.0}, {17: 25.0}))
    view = store.tables[TABLE].as_json()
    kinds = [(f["kind"], f["seat"]) for f in view["evidence"]["tempo"]["flags"]]
    assert kinds == [("slow_pass_after_skip", "E"), ("slow_card", "W")]
    assert view["claim_check"] is None
    # what the table shows is untouched: the indicator's display says nothing of tempo
    assert "slow" not in json.dumps(view["indicator"])


def test_claim_checked_inline_without_an_event_loop() -> None:
    store = TableStore()
    _, outs, _ = claimed_board(24, 7)
    feed(store, outs)
    view = store.tables[TABLE].as_json()
    expected = check_claim(view["evidence"]["claim"]).to_wire()
    assert view["claim_check"] == expected and expected["verdict"] in (
        "exact", "exceeds", "concedes")


def test_claim_checked_in_the_solver_thread_then_published_to_the_streams() -> None:
    async def scenario() -> tuple[dict[str, Any], dict[str, Any] | None, list[str]]:
        store = TableStore()
        queue = store.hub.subscribe()
        _, outs, _ = claimed_board(28, 6)
        feed(store, outs)
        pending = dict(store.tables[TABLE].claim_check or {})
        kinds: list[str] = []
        try:
            while True:
                item = await asyncio.wait_for(queue.get(), 60)
                assert item is not None
                kinds.append(item["kind"])
                if item["kind"] == "claim_check":
                    return pending, item["view"]["claim_check"], kinds
        finally:
            store.close()

    pending, checked, kinds = asyncio.run(scenario())
    assert pending == {"verdict": "pending"}
    assert checked is not None and checked["verdict"] in ("exact", "exceeds", "concedes")
    assert checked["claimed"] == 6 and checked["remaining"] == 6
    assert "evidence" in kinds


def test_a_new_board_leaves_the_last_boards_evidence_behind() -> None:
    store = TableStore()
    _, outs, _ = claimed_board(24, 5)
    feed(store, outs)
    assert store.tables[TABLE].evidence is not None
    store.handle(f"bridge/{TABLE}/state", json.dumps({"v": 1, "table": TABLE, "board": 6,
                                                      "phase": "scanning"}).encode())
    view = store.tables[TABLE]
    assert view.evidence is None and view.claim_check is None


def test_bad_evidence_is_kept_without_a_check_and_never_raises() -> None:
    store = TableStore()
    store.handle(f"bridge/{TABLE}/evidence", b'{"v":1,"table":"7","board":3,"claim":{"x":1}}')
    check = store.tables[TABLE].claim_check
    assert check is not None and check["verdict"] == "invalid"
    store.handle(f"bridge/{TABLE}/evidence", b"[not json")
    assert store.malformed == 1
