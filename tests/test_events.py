"""A played board as the wire contract's sensor events."""

from __future__ import annotations

import dataclasses
import io
import json
import re
from pathlib import Path

import pytest

from controller.formats.errors import BadRecord
from controller.formats.events import (
    default_call_uid,
    default_card_uid,
    record_events,
    write_jsonl,
)
from controller.formats.pbn import read_pbn
from controller.laws.cards import FULL_DECK, Call, Seat
from controller.laws.record import BoardRecord

DATA = Path(__file__).parent / "data"
HEX = re.compile(r"^[0-9A-F]+$")


def _t08() -> BoardRecord:
    records = {r.board: r for r in read_pbn(DATA / "laws_scenarios.pbn").records()}
    return records[10]          # T08: 4H by S, E deals, 7 calls, 13 tricks


def test_full_board_in_order() -> None:
    record = _t08()
    events = record_events(record, src="t1", seq_start=100, ts_start=1000.0, ts_step=0.5)
    assert len(events) == 1 + 4 * 26 + 7 + 52 + 52
    assert [e["seq"] for e in events] == list(range(100, 100 + len(events)))
    assert [e["ts"] for e in events] == [1000.0 + 0.5 * k for k in range(len(events))]
    for event in events:
        assert (event["v"], event["src"], event["type"]) == (1, "t1", "tag")
        assert event["action"] in ("present", "removed")
        assert HEX.match(event["uid"]), event["uid"]
    board = events[0]
    assert board == {"v": 1, "src": "t1", "seq": 100, "ts": 1000.0, "type": "tag",
                     "zone": "board", "action": "present", "uid": "D000A", "board": 10}
    assert "seat" not in board
    # each seat scans its 13 cards, then picks the hand up
    assert record.deal is not None
    for i, seat in enumerate(Seat):
        scan = events[1 + 26 * i: 1 + 26 * i + 26]
        assert {e["seat"] for e in scan} == {seat.name}
        assert [e["action"] for e in scan] == ["present"] * 13 + ["removed"] * 13
        assert {e["card"] for e in scan[:13]} == {str(c) for c in record.deal[seat]}
        assert all(e["zone"] == "tray" and e["deck"] == "10" for e in scan)
    # the calls that stand, at their seats
    calls = events[105:112]
    assert [(e["zone"], e["seat"], e["call"]) for e in calls] == [
        ("bid", "E", "1C"), ("bid", "S", "1H"), ("bid", "W", "Pass"), ("bid", "N", "4H"),
        ("bid", "E", "Pass"), ("bid", "S", "Pass"), ("bid", "W", "Pass")]
    # the cards as played, dummy's (N) at dummy's seat
    plays = events[112:164]
    assert [(e["seat"], e["card"]) for e in plays] == [
        (s.name, str(c)) for t in record.tricks for s, c in t.cards]
    assert all(e["action"] == "present" for e in plays)
    assert any(e["seat"] == "N" for e in plays)
    # then every hand back into the board
    back = events[164:]
    assert all(e["action"] == "removed" for e in back)
    for seat in Seat:
        assert {e["card"] for e in back if e["seat"] == seat.name} == {
            str(c) for c in record.deal[seat]}


def test_options_leave_parts_out() -> None:
    record = _t08()
    no_scan = record_events(record, scans=False)
    assert len(no_scan) == 1 + 7 + 52 + 52
    tap = record_events(record, pickup=False, return_hands=False, board_event=False)
    assert len(tap) == 52 + 7 + 52
    assert all(e["action"] == "present" for e in tap)


def test_uids_are_deterministic_unique_and_replaceable() -> None:
    record = _t08()
    first = record_events(record)
    assert first == record_events(record)
    cards = {e["card"]: e["uid"] for e in first if "card" in e}
    assert len(set(cards.values())) == 52
    assert cards["C2"] == default_card_uid(FULL_DECK[-1]) == "C00"
    assert cards["SA"] == "C33"
    # a seat's second Pass is another physical bidding card
    assert default_call_uid(Seat.W, Call.parse("Pass"), 0) != default_call_uid(
        Seat.W, Call.parse("Pass"), 1)
    bids = [e["uid"] for e in first if e["zone"] == "bid"]
    assert len(set(bids)) == len(bids)
    custom = record_events(record, card_uid=lambda c: f"AB{c.index:04X}",
                           board_uid=lambda n: "FF")
    assert custom[0]["uid"] == "FF"
    assert {e["uid"] for e in custom if e.get("card") == "SA"} == {"AB0033"}


def test_hands_from_the_play_when_the_deal_is_unknown() -> None:
    record = dataclasses.replace(_t08(), deal=None)
    events = record_events(record)
    assert len(events) == 1 + 4 * 26 + 7 + 52 + 52
    with pytest.raises(BadRecord):
        record_events(dataclasses.replace(record, tricks=record.tricks[:5]))
    partial = record_events(dataclasses.replace(record, tricks=record.tricks[:5]), scans=False)
    assert len(partial) == 1 + 7 + 20          # no hands go back before the last trick


def test_write_jsonl() -> None:
    events = record_events(_t08(), scans=False)
    buffer = io.StringIO()
    assert write_jsonl(events, buffer) == len(events)
    lines = buffer.getvalue().splitlines()
    assert [json.loads(line) for line in lines] == events
    wrapped = io.StringIO()
    write_jsonl(events[:2], wrapped, topic="bridge/7/event")
    first = json.loads(wrapped.getvalue().splitlines()[0])
    assert first == {"topic": "bridge/7/event", "payload": events[0]}
