"""Fuzzing the wire surface, the controller's input from the network: random payloads, random
events in random order, topics and table ids through ``Engine.handle``. Whatever comes, the
Engine answers with contract messages (an ``error`` for what it cannot apply) and never
raises; a stream of well-formed events in any order is applied without an internal error (a
defect of the Laws core)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fuzzing import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from controller.engine import Engine, Outgoing
from controller.laws.cards import FULL_DECK, Deal, board_dealer, board_vulnerability
from controller.laws.record import DealInfo
from controller.wire import TABLE_ID, table_id_problem

SETTINGS = fuzz_settings(200)
KINDS = {"state", "alert", "indicator", "result", "feed", "error", "evidence"}
DEAL = Deal.from_pbn("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)
seats = st.sampled_from(["N", "E", "S", "W"])
cards = st.sampled_from([str(c) for c in FULL_DECK])
calls = st.sampled_from([f"{lv}{d}" for lv in range(1, 8) for d in ("C", "D", "H", "S", "NT")]
                        + ["Pass", "X", "XX", "STOP", "ALERT"])


def valid_event() -> st.SearchStrategy[dict[str, Any]]:
    tray = st.fixed_dictionaries({"type": st.just("tag"), "zone": st.just("tray"),
                                  "seat": seats, "action": st.sampled_from(["present",
                                                                             "removed"]),
                                  "card": cards, "deck": st.just("1")})
    bid = st.fixed_dictionaries({"type": st.just("tag"), "zone": st.just("bid"), "seat": seats,
                                 "action": st.sampled_from(["present", "removed"]),
                                 "call": calls})
    board = st.fixed_dictionaries({"type": st.just("tag"), "zone": st.just("board"),
                                   "action": st.just("present"),
                                   "board": st.integers(1, 3)})
    button = st.fixed_dictionaries({"type": st.just("button"),
                                    "button": st.sampled_from(["director", "claim", "undo",
                                                               "next"]),
                                    "seat": seats | st.none()})
    unknown = st.fixed_dictionaries({"type": st.just("tag"), "zone": st.just("tray"),
                                     "seat": seats, "action": st.just("present"),
                                     "unknown": st.just(True)})
    return st.one_of(tray, tray, tray, bid, bid, board, button, unknown)


def valid_ruling() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "ruling": st.sampled_from(["accept", "reject", "undo", "adjust", "comparable",
                                   "not_comparable", "lead", "option", "board", "claim",
                                   "clear"]),
    }, optional={"alert": st.integers(1, 5), "tricks": st.integers(0, 13), "seat": seats,
                 "card": cards, "call": calls, "suit": st.sampled_from(["S", "H", "D", "C"]),
                 "option": st.sampled_from(["highest", "lowest", "must_lead", "must_not_lead",
                                            "54A"]),
                 "board": st.integers(1, 3)})


def check(outs: list[Outgoing], root: str = "bridge") -> None:
    for out in outs:
        parts = out.topic.split("/")
        assert parts[0] == root and parts[-1] in KINDS, out.topic
        assert table_id_problem(parts[1]) is None or parts[1] == "controller"
        json.dumps(out.payload)  # every payload encodes


def engine() -> Engine:
    deals = {n: DealInfo(n, board_dealer(n), board_vulnerability(n), DEAL) for n in (1, 2, 3)}
    return Engine(deals=deals, max_tables=8, max_sources=4)


@SETTINGS
@given(st.binary(max_size=600), st.sampled_from(["event", "ruling"]))
def test_random_bytes_never_raise(payload: bytes, kind: str) -> None:
    e = engine()
    outs = e.handle(f"bridge/7/{kind}", payload)
    check(outs)
    assert [o.topic for o in outs] == ["bridge/7/error"]


@pytest.mark.slow
@SETTINGS
@given(st.dictionaries(st.sampled_from(["v", "src", "seq", "ts", "type", "zone", "seat",
                                        "action", "uid", "card", "deck", "call", "board",
                                        "unknown", "button", "ruling", "alert", "tricks", "suit",
                                        "option", "note"]), json_values, max_size=12),
       st.sampled_from(["event", "ruling"]), st.booleans())
def test_random_json_objects_never_raise(payload: dict[str, Any], kind: str,
                                         as_bytes: bool) -> None:
    e = engine()
    outs = e.handle(f"bridge/7/{kind}", json.dumps(payload).encode() if as_bytes else payload)
    check(outs)
    assert e.stats["internal_errors"] == 0


@SETTINGS
@given(st.lists(st.tuples(st.sampled_from(["event", "event", "event", "ruling"]),
                          st.sampled_from(["1", "2"]), valid_event(), valid_ruling(),
                          st.sampled_from(["pi-1", "pi-2", "td"])), max_size=80))
def test_well_formed_inputs_in_any_order_apply_without_a_defect(
        steps: list[tuple[str, str, dict[str, Any], dict[str, Any], str]]) -> None:
    e = engine()
    seq = 0
    for kind, table, event, ruling, src in steps:
        seq += 1
        body = event if kind == "event" else ruling
        payload = {"v": 1, "src": src, "seq": seq, "ts": 1000.0 + seq, "uid": f"{seq:08X}",
                   **body}
        outs = e.handle(f"bridge/{table}/{kind}", json.dumps(payload).encode())
        check(outs)
        errors = [o.payload["error"] for o in outs if o.topic.endswith("/error")]
        assert not any("internal error" in err for err in errors), (errors, steps)
    assert e.stats["internal_errors"] == 0
    for table in e.tables:
        json.dumps(e.snapshot(table))
        e.record(table)
    check(e.retained())


@SETTINGS
@given(st.text(max_size=80), st.sampled_from(["event", "ruling", "state", "x", ""]))
def test_any_topic_and_table_id_is_answered_or_ignored(table: str, kind: str) -> None:
    e = engine()
    payload = {"v": 1, "src": "pi", "seq": 1, "ts": 1.0, "type": "tag", "zone": "board",
               "action": "present", "uid": "B", "board": 1}
    outs = e.handle(f"bridge/{table}/{kind}", json.dumps(payload).encode())
    check(outs)
    followed = e.tables
    assert all(TABLE_ID.fullmatch(t) and t != "controller" for t in followed)
    if followed:
        assert followed == [table]


@SETTINGS
@given(st.lists(st.text(max_size=6), min_size=1, max_size=6))
def test_random_topics_never_raise(parts: list[str]) -> None:
    e = engine()
    check(e.handle("/".join(parts), b'{"v":1}'))
