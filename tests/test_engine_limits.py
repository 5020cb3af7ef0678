"""The Engine against hostile input: deep nesting, bad table ids, unbounded tables and
sources: an error message, never a crash, and memory that stays bounded."""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.engine import MAX_TABLES, Engine


def event(seq: int, src: str = "pi", **fields: Any) -> dict[str, Any]:
    return {"v": 1, "src": src, "seq": seq, "ts": 1.0 + seq, "type": "tag", "zone": "board",
            "action": "present", "uid": "B1", "board": 1, **fields}


def nested(depth: int) -> bytes:
    return (b'{"v":1,"src":"a","seq":1,"ts":1,"type":"tag","x":' + b"[" * depth
            + b"]" * depth + b"}")


@pytest.mark.parametrize("depth", [1000, 5000, 30000])
@pytest.mark.parametrize("kind", ["event", "ruling"])
def test_deep_nesting_is_an_error_not_a_recursion_error(depth: int, kind: str) -> None:
    engine = Engine()
    outs = engine.handle(f"bridge/7/{kind}", nested(depth))
    assert [o.topic for o in outs] == ["bridge/7/error"]
    assert "nested too deeply" in outs[0].payload["error"]
    assert engine.stats["malformed"] == 1
    # the table goes on
    assert engine.handle("bridge/7/event", json.dumps(event(1)).encode())


@pytest.mark.parametrize("table", ["controller", "..", ".", "x" * 60_000, "a b", "-1", "é",
                                   "x" * 33, "a\x00b"])
def test_bad_table_ids_are_refused_with_an_error(table: str) -> None:
    engine = Engine()
    outs = engine.handle(f"bridge/{table}/event", json.dumps(event(1)).encode())
    assert [o.topic for o in outs] == ["bridge/controller/error"]
    payload = outs[0].payload
    assert payload["error"].startswith("refused: table id")
    assert len(payload["table"]) <= 64
    assert engine.tables == [] and engine.stats["refused"] == 1


@pytest.mark.parametrize("table", ["1", "7", "A12", "st9", "table-4.a_b", "x" * 32])
def test_good_table_ids_are_accepted(table: str) -> None:
    engine = Engine()
    outs = engine.handle(f"bridge/{table}/event", json.dumps(event(1)).encode())
    assert f"bridge/{table}/state" in [o.topic for o in outs]
    assert engine.tables == [table]


def test_tables_are_bounded_with_a_clear_error() -> None:
    engine = Engine(max_tables=3)
    for t in ("1", "2", "3"):
        engine.handle(f"bridge/{t}/event", event(1))
    outs = engine.handle("bridge/4/event", event(1))
    assert [o.topic for o in outs] == ["bridge/4/error"]
    assert "3 tables" in outs[0].payload["error"] and "--max-tables" in outs[0].payload["error"]
    assert engine.tables == ["1", "2", "3"]
    # a table already followed goes on
    assert engine.handle("bridge/2/event", event(2, board=2))


def test_the_default_bound_holds_against_ten_thousand_tables() -> None:
    engine = Engine()
    refused = 0
    for t in range(10_000):
        outs = engine.handle(f"bridge/{t}/event", event(1))
        refused += any(o.topic.endswith("/error") for o in outs)
    assert len(engine.tables) == MAX_TABLES and refused == 10_000 - MAX_TABLES


def test_sources_per_table_are_bounded_with_a_clear_error() -> None:
    engine = Engine(max_sources=2)
    assert engine.handle("bridge/7/event", event(1, src="a"))
    assert engine.handle("bridge/7/event", event(1, src="b", board=2))
    outs = engine.handle("bridge/7/event", event(1, src="c", board=3))
    assert [o.topic for o in outs] == ["bridge/7/error"]
    assert "--max-sources" in outs[0].payload["error"]
    assert engine.snapshot("7")["board"] == 2
    assert engine.handle("bridge/7/event", event(2, src="a", board=4))  # known sources go on


def test_an_overlong_src_is_malformed() -> None:
    outs = Engine().handle("bridge/7/event", event(1, src="s" * 129))
    assert [o.topic for o in outs] == ["bridge/7/error"] and "src" in outs[0].payload["error"]


def test_a_nested_deck_is_malformed_not_stringified() -> None:
    payload = {"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "tag", "zone": "tray",
               "seat": "N", "action": "present", "uid": "1", "card": "SA", "deck": [[1]]}
    outs = Engine().handle("bridge/7/event", payload)
    assert [o.topic for o in outs] == ["bridge/7/error"] and "deck" in outs[0].payload["error"]


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Engine(max_tables=0)


def test_the_controller_command_line_sets_the_limits() -> None:
    from controller.service.cli_controller import parser
    from controller.service.engines import build_engine

    args = parser().parse_args(["--max-tables", "2", "--max-sources", "5"])
    engine = build_engine(max_tables=args.max_tables, max_sources=args.max_sources)
    assert isinstance(engine, Engine)
    assert (engine.max_tables, engine.max_sources) == (2, 5)
    default = build_engine()
    assert isinstance(default, Engine) and default.max_tables == MAX_TABLES
    with pytest.raises(SystemExit):
        parser().parse_args(["--max-tables", "0"])


@pytest.mark.parametrize("table, where", [("7", "7"), ("..", "controller"),
                                          ("x" * 60_000, "controller")])
def test_the_daemon_reports_an_oversize_payload_under_a_valid_table_id(table: str,
                                                                       where: str) -> None:
    from controller.broker.settings import BrokerSettings
    from controller.service.daemon import ControllerDaemon

    daemon = ControllerDaemon(broker=BrokerSettings.from_url("mqtt://127.0.0.1:9"),
                              engine=Engine(), journal=None)
    out = daemon._too_large(f"bridge/{table}/event", 10**6)  # noqa: SLF001
    assert out.topic == f"bridge/{where}/error"
