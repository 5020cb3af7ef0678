"""The Engine: wire payloads validated, duplicates applied once, outputs per the contract."""

from __future__ import annotations

import json
from typing import Any

import pytest
from scenarios import Harness

from controller.engine import MAX_PAYLOAD, Engine, encode
from controller.laws.cards import Contract, Deal, Seat

DEAL = Deal.from_pbn("N:KJ4.AQ3.KT85.J72 Q963.T85.A94.KQ5 AT72.KJ74.QJ3.A8 85.962.762.T9643")


def event(seq: int, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "src": "pi-7", "seq": seq, "ts": 1.0 + seq, "type": "tag", **fields}


def topics(outs: list[Any]) -> list[str]:
    return [o.topic.rsplit("/", 1)[1] for o in outs]


def test_board_event_publishes_state_indicator_and_feed() -> None:
    engine = Engine()
    outs = engine.handle("bridge/7/event", event(1, zone="board", action="present", uid="B1",
                                                 board=3))
    kinds = topics(outs)
    assert "state" in kinds and "indicator" in kinds and "feed" in kinds
    state = engine.snapshot("7")
    assert state["board"] == 3 and state["dealer"] == "S" and state["vul"] == "EW"
    assert state["phase"] == "scanning" and state["last"] == {"src": "pi-7", "seq": 1}
    retained = {o.topic: o.retain for o in outs}
    assert retained["bridge/7/state"] and retained["bridge/7/indicator"]
    assert not retained["bridge/7/feed"]


def test_duplicate_src_seq_is_applied_once() -> None:
    engine = Engine()
    engine.handle("bridge/7/event", event(1, zone="board", action="present", uid="B", board=1))
    call = event(2, zone="bid", seat="N", action="present", uid="X", call="1C")
    assert engine.handle("bridge/7/event", call)
    assert engine.handle("bridge/7/event", json.dumps(call).encode()) == []
    assert engine.stats["duplicates"] == 1
    assert engine.snapshot("7")["auction"] == [["N", "1C"]]


@pytest.mark.parametrize("payload, fragment", [
    (b"{not json", "not JSON"),
    (b"[1, 2]", "not a JSON object"),
    (b'{"v": 2, "src": "a", "seq": 1, "ts": 1, "type": "tag"}', "version"),
    (b'{"v": 1, "src": "a", "seq": "1", "ts": 1, "type": "tag"}', "seq"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": "now", "type": "tag"}', "ts"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "smell"}', "type"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "tag", "zone": "bid", "action": '
     b'"present", "uid": "1", "call": "1C"}', "seat"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "tag", "zone": "tray", "seat": "N", '
     b'"action": "present", "uid": "1", "card": "ZZ"}', "card"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "tag", "zone": "tray", "seat": "Q", '
     b'"action": "present", "uid": "1", "card": "SA"}', "seat"),
    (b'{"v": 1, "src": "a", "seq": 1, "ts": 1, "type": "tag", "zone": "tray", "seat": "N", '
     b'"action": "present", "uid": "1", "card": "SA", "call": "1C"}', "exactly one"),
    (b"\xff\xfe\x00garbage", "not JSON"),
    (b"1" * (MAX_PAYLOAD + 1), "over"),
])
def test_malformed_event_answered_with_an_error_never_a_crash(payload: bytes,
                                                               fragment: str) -> None:
    engine = Engine()
    outs = engine.handle("bridge/7/event", payload)
    assert len(outs) == 1 and outs[0].topic == "bridge/7/error"
    assert fragment in outs[0].payload["error"]
    assert engine.stats["malformed"] == 1


@pytest.mark.parametrize("payload, fragment", [
    ({"v": 1, "src": "td", "seq": 1, "ts": 1, "ruling": "smile"}, "unknown ruling"),
    ({"v": 1, "src": "td", "seq": 1, "ts": 1, "ruling": "adjust"}, "tricks"),
    ({"v": 1, "src": "td", "seq": 1, "ts": 1, "ruling": "adjust", "tricks": 14}, "tricks"),
    ({"v": 1, "src": "td", "seq": 1, "ts": 1, "ruling": "accept", "alert": "x"}, "alert"),
])
def test_malformed_ruling_is_an_error(payload: dict[str, Any], fragment: str) -> None:
    engine = Engine()
    outs = engine.handle("bridge/7/ruling", payload)
    assert [o.topic for o in outs] == ["bridge/7/error"]
    assert fragment in outs[0].payload["error"]


@pytest.mark.parametrize("as_bytes", [True, False])
def test_unknown_fields_are_tolerated(as_bytes: bool) -> None:
    engine = Engine()
    payload = event(1, zone="board", action="present", uid="B", board=1, colour="red")
    outs = engine.handle("bridge/7/event", json.dumps(payload).encode() if as_bytes
                         else payload)
    assert "state" in topics(outs) and engine.snapshot("7")["board"] == 1


def test_other_topics_are_ignored() -> None:
    engine = Engine()
    assert engine.handle("bridge/7/state", b"{}") == []
    assert engine.handle("elsewhere/7/event", b"{}") == []
    assert engine.handle("bridge/+/event", b"{}") == []


def test_two_tables_do_not_cross() -> None:
    engine = Engine()
    engine.handle("bridge/1/event", event(1, zone="board", action="present", uid="B", board=1))
    engine.handle("bridge/2/event", event(1, zone="board", action="present", uid="B", board=2))
    engine.handle("bridge/1/event", event(2, zone="bid", seat="N", action="present", uid="c",
                                          call="1S"))
    assert engine.snapshot("1")["auction"] == [["N", "1S"]]
    assert engine.snapshot("2")["auction"] == []
    assert engine.tables == ["1", "2"]


def test_unknown_tag_raises_an_alert_with_texts_in_three_languages() -> None:
    engine = Engine()
    engine.handle("bridge/7/event", event(1, zone="board", action="present", uid="B", board=1))
    outs = engine.handle("bridge/7/event", event(2, zone="tray", seat="E", action="present",
                                                 uid="DEADBEEF", unknown=True))
    alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert["code"] == "UNKNOWN_TAG" and alert["status"] == "open"
    assert set(alert["text"]) == {"en", "vi", "zh"} and all(alert["text"].values())
    assert {"v", "id", "table", "board", "code", "law", "seat", "trick", "status",
            "text"} <= set(alert)
    outs = engine.handle("bridge/7/event", event(3, zone="tray", seat="E", action="removed",
                                                 uid="DEADBEEF", unknown=True))
    alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
    assert alerts and alerts[0]["status"] == "resolved" and alerts[0]["id"] == alert["id"]


def test_undo_strikes_the_last_event_exactly() -> None:
    h = Harness(3, DEAL)
    h.board_tag(3)
    h.run("C:S:1H C:W:P C:N:3H")
    before = h.state()
    h.run("C:E:1C")  # a misread: insufficient bid
    assert h.alerts("INSUFFICIENT_BID")
    h.rule("undo")
    after = h.state()
    assert after["auction"] == before["auction"] and after["turn"] == before["turn"]
    final = h.final_alerts()
    assert all(a["status"] == "resolved" for a in final.values() if a["code"] ==
               "INSUFFICIENT_BID")
    h.run("C:E:P")
    assert h.state()["auction"][-1] == ["E", "Pass"]


def test_passed_out_board_gives_a_result_of_zero() -> None:
    h = Harness(3, DEAL)
    h.board_tag(3)
    h.run("C:S:P C:W:P C:N:P C:E:P")
    result = h.result()
    assert result is not None
    assert result["contract"] == "Pass" and result["score_ns"] == 0 and "declarer" not in result


def test_indicator_hides_a_revoke_from_the_table_until_play_ends() -> None:
    h = Harness(10, Deal.from_pbn(
        "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"))
    h.board_tag(10)
    h.run("C:E:1C C:S:1H C:W:P C:N:4H C:E:P C:S:P C:W:P")
    h.run("W:CT N:C3 E:CA S:C7 E:CK S:CQ W:C4 N:C6 E:S3 S:S5 W:ST N:SQ")
    h.run("N:H5 E:H2 S:HA W:H3 S:HK W:D2 N:HT E:H6 S:D5 W:D3 N:DK E:H9")
    revoke = h.alerts("REVOKE")
    assert revoke
    indicator = h.engine._tables["7"].indicator
    assert indicator is not None
    assert revoke[0]["id"] not in indicator["alerts"] and not indicator["seats"]["E"]["alert"]
    h.run("AUTO")
    indicator = h.engine._tables["7"].indicator
    assert indicator is not None and indicator["board"] == 10


def test_encode_is_compact_json() -> None:
    assert encode({"a": 1, "b": [1, "x"]}) == b'{"a":1,"b":[1,"x"]}'


def test_a_board_seen_with_other_hands_at_another_table_is_a_fouled_board() -> None:
    from controller.formats.events import record_events
    from controller.laws.cards import PASS, board_dealer, board_vulnerability
    from controller.laws.record import AuctionEntry, BoardRecord

    dealer = board_dealer(5)
    passes = tuple(AuctionEntry(dealer.rotated(i), PASS) for i in range(4))
    n, e = sorted(DEAL[Seat.N]), sorted(DEAL[Seat.E])
    fouled = Deal.from_hands({Seat.N: frozenset(n[1:] + e[:1]), Seat.E: frozenset(e[1:] + n[:1]),
                              Seat.S: DEAL[Seat.S], Seat.W: DEAL[Seat.W]})
    engine = Engine()
    for table, deal in (("1", DEAL), ("2", fouled)):
        record = BoardRecord(5, dealer, board_vulnerability(5), deal, passes,
                             Contract.parse("Pass"))
        outs = []
        for event in record_events(record, return_hands=False):
            outs += engine.handle(f"bridge/{table}/event", event)
    alerts = [o.payload for o in outs if o.topic == "bridge/2/alert"]
    assert {a["seat"] for a in alerts} == {"N", "E"}
    assert all(a["code"] == "FOULED_BOARD" and a["law"] == "87" for a in alerts)
    assert all(a["params"]["other_table"] == "1" for a in alerts)
    assert set(alerts[0]["params"]["cards"].split()) == {str(n[0]), str(e[0])}
    assert "table 1" in alerts[0]["text"]["en"]


def test_feed_carries_each_call_and_card_once_in_order_and_corrections_whole() -> None:
    h = Harness(3, DEAL)
    h.board_tag(3)
    h.run("C:S:1H C:W:P C:N:3H C:E:P C:S:P C:W:P")
    h.run("W:S8 N:S4 E:S3 S:SA")
    feed = [o.payload for o in h.out if o.topic.endswith("/feed")]
    assert [f["kind"] for f in feed] == ["board"] + ["call"] * 6 + ["card"] * 4
    assert [f["n"] for f in feed] == list(range(1, 12))
    assert [f["card"] for f in feed if f["kind"] == "card"] == ["S8", "S4", "S3", "SA"]
    assert all(f["trick"] == 1 for f in feed if f["kind"] == "card")
    assert "hands" not in str(feed) and not any("deal" in f for f in feed)
    h.rule("undo")  # the ace was a misread
    feed = [o.payload for o in h.out if o.topic.endswith("/feed")][11:]
    assert feed[0]["kind"] == "play"
    assert feed[0]["cards"] == [["W", "S8"], ["N", "S4"], ["E", "S3"]]
    h.run("S:S2")
    last = [o.payload for o in h.out if o.topic.endswith("/feed")][-1]
    assert (last["kind"], last["card"]) == ("card", "S2")


def test_the_feeds_result_names_north_as_declarer() -> None:
    """North is seat 0: the feed's ``result`` item once wrote ``declarer: null`` for it
    (a truth test of the seat); it names the seat for every declarer."""
    import random

    from controller.boards.generate import random_board
    from controller.formats.events import record_events
    from controller.laws.record import DealInfo

    rng = random.Random(1)
    found: set[str | None] = set()
    for number in range(1, 40):
        record = random_board(rng, number).record
        engine = Engine(deals={number: DealInfo(number, record.dealer, record.vulnerability,
                                                record.deal)})
        for seq, event in enumerate(record_events(record, src="pi", scans=False), 1):
            for out in engine.handle("bridge/1/event", dict(event, seq=seq)):
                if out.topic.endswith("/feed") and out.payload["kind"] == "result":
                    declarer = record.declarer
                    assert out.payload["declarer"] == (None if declarer is None
                                                       else declarer.name)
                    found.add(out.payload["declarer"])
    assert "N" in found and len(found) >= 4
