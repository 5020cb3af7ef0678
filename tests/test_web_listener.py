"""controller/web/listener.py: the latest view of every table, from the MQTT messages."""

from __future__ import annotations

import json
from typing import Any

from controller.web.listener import TableStore


def _msg(store: TableStore, topic: str, payload: Any) -> None:
    store.handle(topic, payload if isinstance(payload, bytes) else json.dumps(payload).encode())


def _alert(aid: int, status: str, board: int = 10, **extra: Any) -> dict[str, Any]:
    return {"v": 1, "id": aid, "table": "7", "board": board, "code": "REVOKE", "law": "61",
            "seat": "E", "status": status, "text": {"en": status}, **extra}


def test_state_result_bridge_health_and_alert_history() -> None:
    store = TableStore(clock=lambda: 100.0)
    queue = store.hub.subscribe()
    _msg(store, "bridge/7/state", {"v": 1, "table": "7", "board": 10, "phase": "play"})
    _msg(store, "bridge/7/bridge", {"v": 1, "src": "pi", "status": "online"})
    _msg(store, "bridge/7/health", {"v": 1, "crc_errors": 2})
    _msg(store, "bridge/7/alert", _alert(1, "open"))
    _msg(store, "bridge/7/alert", _alert(1, "established", law="63A1"))
    _msg(store, "bridge/7/result", {"v": 1, "board": 10, "tricks": 11})
    view = store.tables["7"].as_json()
    assert view["state"]["phase"] == "play" and view["bridge"] == "online"
    assert view["health"] == {"v": 1, "crc_errors": 2}
    assert view["result"]["tricks"] == 11
    [alert] = view["alerts"]
    assert alert["status"] == "established"
    assert [h["status"] for h in alert["history"]] == ["open", "established"]
    assert queue.qsize() == 6     # one update per message, for the SSE streams


def test_reader_anomalies_are_the_faults_not_the_bridge_s_counters() -> None:
    """The bridge's health counts normal work too (events, sequence numbers, the spool's
    size): the console's ``anomalies`` name only what is wrong."""
    healthy = {"v": 1, "src": "table-1-pi", "table": "1", "ts": 1.0, "connected": True,
               "spool_depth": 0, "spool_max": 200000, "spool_refused": 0, "next_seq": 252,
               "boot": "8b5152cd0def4bcf", "acked_seq": 251, "resends": 0,
               "readers": {"north": {"kind": "inventory", "open": True, "connected": True,
                                     "anomalies": {}}},
               "events": 251, "buttons": 4, "unknown_tags": 0, "duplicate_sightings": 0,
               "last_duplicate": None, "unmapped_antennas": 0, "last_unmapped": None,
               "bad_indicators": 0, "last_bad_indicator": None, "output_errors": 0}
    store = TableStore()
    _msg(store, "bridge/1/health", healthy)
    assert store.tables["1"].as_json()["anomalies"] == []
    faulty = {**healthy, "unknown_tags": 3, "readers": {
        "north": {"kind": "inventory", "open": True, "connected": False,
                  "anomalies": {"crc_errors": 2, "timeouts": 0}}}}
    _msg(store, "bridge/1/health", faulty)
    assert store.tables["1"].as_json()["anomalies"] == [
        "north disconnected", "north crc_errors 2", "unknown_tags 3"]
    _msg(store, "bridge/1/health", {"v": 1, "crc_errors": 2})
    assert store.tables["1"].as_json()["anomalies"] == ["crc_errors 2"]


def test_a_new_board_leaves_the_last_boards_alerts_calls_and_result_behind() -> None:
    store = TableStore()
    _msg(store, "bridge/7/state", {"v": 1, "board": 10})
    _msg(store, "bridge/7/alert", _alert(1, "open"))
    _msg(store, "bridge/7/evidence", _presses(10, ("director", "S")))
    _msg(store, "bridge/7/result", {"v": 1, "board": 10, "tricks": 9})
    assert len(store.tables["7"].calls) == 1
    _msg(store, "bridge/7/state", {"v": 1, "board": 11})
    view = store.tables["7"]
    assert view.alerts == {} and view.calls == [] and view.result is None


def _presses(board: int, *presses: tuple[str, str | None]) -> dict[str, Any]:
    """The controller's evidence with its presses (1.14)."""
    return {"v": 1, "table": "7", "board": board,
            "tempo": {"calls": [], "cards": [], "flags": []},
            "presses": [{"button": b, "seat": s, "ts": 5.0 + i, "src": "pi", "seq": i}
                        for i, (b, s) in enumerate(presses)]}


def test_presses_come_from_the_controller_not_the_bridges_events() -> None:
    """The bridge's own button events are not read (only its hand scans): the presses for
    the director are those the controller publishes on ``evidence`` (1.14); an answered
    one stays answered when the next evidence repeats it."""
    store = TableStore()
    _msg(store, "bridge/7/event", {"v": 1, "type": "tag", "zone": "tray", "card": "SA"})
    _msg(store, "bridge/7/event", {"v": 1, "type": "button", "button": "undo"})
    _msg(store, "bridge/7/event", {"v": 1, "type": "button", "button": "claim", "seat": "S"})
    assert "7" not in store.tables
    _msg(store, "bridge/7/evidence", _presses(3, ("claim", "S")))
    assert [(c["button"], c["seat"]) for c in store.tables["7"].calls] == [("claim", "S")]
    assert store.answer_calls("7")
    _msg(store, "bridge/7/evidence", _presses(3, ("claim", "S"), ("director", None),
                                              ("undo", "N")))
    assert [(c["button"], c["seat"], c.get("answered")) for c in store.tables["7"].calls] \
        == [("claim", "S", True), ("director", None, None)]


def test_the_feed_gives_the_cards_played() -> None:
    store = TableStore()
    _msg(store, "bridge/7/feed", {"v": 1, "kind": "card", "seat": "W", "card": "CT",
                                  "trick": 1})
    _msg(store, "bridge/7/feed", {"v": 1, "kind": "card", "seat": "N", "card": "C3",
                                  "trick": 1})
    assert [c["card"] for c in store.tables["7"].cards] == ["CT", "C3"]
    _msg(store, "bridge/7/feed", {"v": 1, "kind": "play",
                                  "cards": [{"seat": "W", "card": "CT", "trick": 1}]})
    assert [c["card"] for c in store.tables["7"].cards] == ["CT"]


def test_garbage_is_counted_never_raised() -> None:
    store = TableStore()
    for topic, payload in [("bridge/7/state", b"\xff\x00"), ("bridge/7/alert", b"[1,2]"),
                           ("bridge/7/alert", json.dumps({"id": "x"}).encode()),
                           ("bridge/7/bridge", b"{}"), ("bridge/7/state", b"")]:
        store.handle(topic, payload)
    assert store.malformed == 4
    # topics of others (the daemon's status, other roots, deeper levels) are not tables
    for topic in ("bridge/controller/status", "public/7/feed", "bridge/7/x/state"):
        store.handle(topic, b'{"v":1}')
    assert "controller" not in store.tables and "7" not in store.tables


def test_a_stream_that_falls_behind_gets_a_snapshot_marker() -> None:
    store = TableStore()
    store.hub._maxsize = 2
    queue = store.hub.subscribe()
    for board in range(5):
        _msg(store, "bridge/7/state", {"v": 1, "board": board + 1})
    items = [queue.get_nowait() for _ in range(queue.qsize())]
    assert None in items    # the SSE stream sends the whole snapshot again


def test_hand_scans_are_kept_while_the_hands_are_scanned_only() -> None:
    store = TableStore()
    tag = {"v": 1, "type": "tag", "zone": "tray", "action": "present", "seat": "N"}
    _msg(store, "bridge/7/state", {"v": 1, "board": 10, "phase": "scanning"})
    _msg(store, "bridge/7/event", {**tag, "card": "SA"})
    _msg(store, "bridge/7/event", {**tag, "card": "SA"})
    _msg(store, "bridge/7/event", {**tag, "action": "removed", "card": "SA"})
    _msg(store, "bridge/7/state", {"v": 1, "board": 10, "phase": "play"})
    _msg(store, "bridge/7/event", {**tag, "card": "HK"})     # a card played: not a scan
    assert store.tables["7"].scans == {"N": ["SA"]}
    _msg(store, "bridge/7/state", {"v": 1, "board": 11, "phase": "scanning"})
    assert store.tables["7"].scans == {}
    # a hand passed card by card across the play spot (docs/sensing.md) is read the same way
    spot = {**tag, "zone": "spot", "seat": "E"}
    for card in ("HA", "HK"):
        _msg(store, "bridge/7/event", {**spot, "card": card})
        _msg(store, "bridge/7/event", {**spot, "action": "removed", "card": card})
    assert store.tables["7"].scans == {"E": ["HA", "HK"]}
