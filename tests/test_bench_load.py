"""The daemon benchmark's load (bench/bench_daemon_cpu.py) is what it says: each table's
round start (the board tag alone with the deal file, ``--start tag``; the hands slid across
the play spots one card at a time, ``--start pass``; the board tag and the four hands' 52
scans, ``--start scan``) and play, and boards back to back (``--start steady``), replayed
through the Engine, raise no alert and score each board. A generator that sent two hands'
scans once raised four alerts a board and timed their texts (docs/benchmarks.md, issue
#13)."""

from __future__ import annotations

import random
from types import ModuleType
from typing import Any

import pytest
from benchmodule import load_bench

from controller.engine import Engine, Outgoing
from controller.laws.record import BoardRecord


def _bench() -> ModuleType:
    return load_bench("bench_daemon_cpu")


def _engine(bench: ModuleType) -> Engine:
    records: list[BoardRecord] = [bench.board_record(n) for n in range(1, 17)]
    return Engine(deals={r.board: r.deal_info for r in records})


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


def _deal_file_engine(bench: ModuleType, hands_known: bool) -> Engine:
    """The controller as the bench starts it (``--deals``), or without a deal file."""
    return _engine(bench) if hands_known else Engine()


@pytest.mark.parametrize("kind", ["tag", "pass"])
def test_a_round_start_as_a_table_sends_it_raises_no_alert_and_scores(kind: str) -> None:
    """``--start tag`` and ``--start pass``, in the order run_pace sends them, boards back
    to back; ``pass`` also without the deal file (the controller reads the hands from it)."""
    bench = _bench()
    for hands_known in (True, False) if kind == "pass" else (True,):
        engine = _deal_file_engine(bench, hands_known)
        feed = bench.Feed("PA2", 15)
        rng = random.Random(7)
        boards, outs = [], []
        for _ in range(3):
            if kind == "tag":
                start = feed.tag
            else:
                start = [ev for _, ev in feed.passed(rng, 0.6)]
            assert start[0]["zone"] == "board" and start[0]["board"] == feed.board
            outs += _send(engine, feed, start + feed.play)
            boards.append(feed.board)
            feed.next_board()
        topics = [o.topic.rsplit("/", 1)[-1] for o in outs]
        assert "alert" not in topics and "error" not in topics
        results = [o.payload for o in outs if o.topic.endswith("/result")]
        assert [(r["board"], r["contract"], r["declarer"]) for r in results] == \
            [(b, "4H", "S") for b in boards]
    assert boards == [15, 16, 1]


def test_the_pass_round_start_is_one_card_at_a_time_at_a_human_pace() -> None:
    bench = _bench()
    feed = bench.Feed("PA3", 7)
    timed = feed.passed(random.Random(3), 0.6)
    assert [at for at, _ in timed] == sorted(at for at, _ in timed)
    assert timed[0] == (0.0, feed.tag[0]) and len(timed) == 105
    on_spot: dict[str, str] = {}   # seat -> the card lying on its play spot
    read: dict[str, list[tuple[float, str]]] = {seat: [] for seat in "NESW"}
    for at, ev in timed[1:]:
        assert ev["zone"] == "spot"
        seat, card = ev["seat"], ev["card"]
        if ev["action"] == "present":
            assert seat not in on_spot, "two cards on one antenna"
            on_spot[seat] = card
            read[seat].append((at, card))
        else:
            assert on_spot.pop(seat) == card
    assert not on_spot
    assert all(len(cards) == 13 for cards in read.values())
    assert len({card for cards in read.values() for _, card in cards}) == 52
    for cards in read.values():   # a card every 0.6 s, each seat from its own moment
        gaps = {round(b[0] - a[0], 6) for a, b in zip(cards, cards[1:], strict=False)}
        assert gaps == {0.6}
        assert 0 <= cards[0][0] <= bench.PASS_LATEST
    with pytest.raises(ValueError, match="pass-interval"):
        feed.passed(random.Random(3), bench.PASS_REMOVED)


def test_a_pass_missing_a_card_is_flagged() -> None:
    """The check above can fail: a hand passed without one of its cards, no deal file."""
    bench = _bench()
    engine = Engine()
    feed = bench.Feed("PA4", 3)
    start = [ev for _, ev in feed.passed(random.Random(1), 0.6)]
    lost = next(ev["card"] for ev in start if ev.get("seat") == "E")
    outs = _send(engine, feed, [ev for ev in start if ev.get("card") != lost] + feed.play)
    assert any(o.topic.endswith("/alert") for o in outs)
