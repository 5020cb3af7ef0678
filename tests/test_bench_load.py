"""The daemon benchmark's load (bench/bench_daemon_cpu.py) is what it says: each table's
round start (the board tag and the four hands' 52 scans) and play, and boards back to back
(``--start steady``), replayed through the Engine, raise no alert and score each board. A
generator that sent two hands' scans once raised four alerts a board and timed their
texts (docs/benchmarks.md, issue #13)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from controller.engine import Engine, Outgoing
from controller.laws.record import BoardRecord, DealInfo

BENCH = Path(__file__).resolve().parent.parent / "bench"


def _bench() -> ModuleType:
    name = "bench_daemon_cpu"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, BENCH / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _engine(bench: ModuleType) -> Engine:
    records: list[BoardRecord] = [bench.board_record(n) for n in range(1, 17)]
    return Engine(deals={r.board: DealInfo(r.board, r.dealer, r.vulnerability, r.deal)
                         for r in records})


def _send(engine: Engine, feed: Any, events: list[dict[str, Any]]) -> list[Outgoing]:
    out: list[Outgoing] = []
    for ev in events:
        _, body = feed.encode(ev)
        out += engine.handle(feed.topic, body)
    return out


def test_round_start_is_the_board_and_four_hands() -> None:
    bench = _bench()
    scan, start, play = bench.round_start_and_play(5)
    assert len(scan) == 53 and len(start) == 105
    assert scan[0]["zone"] == "board" and scan[0]["board"] == 5
    cards = [(e["seat"], e["card"]) for e in scan[1:]]
    assert len(set(cards)) == 52
    assert {seat for seat, _ in cards} == {"N", "E", "S", "W"}
    assert all(sum(1 for s, _ in cards if s == seat) == 13 for seat in "NESW")
    assert play and play[0]["zone"] == "bid"


def test_boards_back_to_back_raise_no_alert_and_score_each_board() -> None:
    bench = _bench()
    engine = _engine(bench)
    feed = bench.Feed("PA0", 16)
    outs = _send(engine, feed, feed.scan + feed.play)
    boards = [16]
    for _ in range(2):  # --start steady: the next board's scans once a board is played
        feed.played = len(feed.play)  # sent above
        assert feed.next_play() is None
        feed.next_board()
        boards.append(feed.board)
        outs += _send(engine, feed, feed.scan + feed.play)
    assert boards == [16, 1, 2]  # 1-16 in turn
    topics = [o.topic.rsplit("/", 1)[-1] for o in outs]
    assert "alert" not in topics and "error" not in topics
    results = [o.payload for o in outs if o.topic.endswith("/result")]
    assert [(r["board"], r["contract"], r["declarer"]) for r in results] == \
        [(b, "4H", "S") for b in boards]


def test_a_table_with_half_a_hand_is_flagged() -> None:
    """The check above can fail: a round start missing a hand's scans raises alerts."""
    bench = _bench()
    engine = _engine(bench)
    feed = bench.Feed("PA1", 3)
    short = [e for e in feed.scan if e.get("seat") != "W"]
    outs = _send(engine, feed, short + feed.play)
    assert any(o.topic.endswith("/alert") for o in outs)
