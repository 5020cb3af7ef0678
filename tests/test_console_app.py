"""controller/web/console/app.py over HTTP (starlette's TestClient) with a real mosquitto:
login, CSRF, only the offered rulings published, with the console's src and seq, and the
controller's answer (an ``error``) recorded in the ruling log."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from broker import Mosquitto
from mqttwatch import daemon_process, stop_process
from starlette.testclient import TestClient

from controller.broker.settings import BrokerSettings
from controller.web.auth import hash_password
from controller.web.console.app import build_app
from controller.web.console.state import ConsoleConfig
from firmware_bridge.examples import EXAMPLES

PASSWORD = "director secret"


def _until(pred: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"never: {what}")


@pytest.fixture
def mqttc(mosquitto: Mosquitto) -> Iterator[tuple[mqtt.Client, list[tuple[str, Any]]]]:
    got: list[tuple[str, Any]] = []
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.on_message = lambda _c, _u, m: got.append((m.topic, json.loads(m.payload)))
    client.connect(mosquitto.host, mosquitto.port)
    client.subscribe("bridge/+/ruling", 1)
    client.loop_start()
    yield client, got
    client.loop_stop()
    client.disconnect()


def _app(mosquitto: Mosquitto, tmp_path: Path) -> Any:
    return build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                   password_hash=hash_password(PASSWORD),
                                   db=tmp_path / "console.sqlite", src="console-t"))


def _login(client: TestClient) -> str:
    r = client.post("/login", content=f"name=Ada&password={PASSWORD.replace(' ', '+')}",
                    headers={"Content-Type": "application/x-www-form-urlencoded"},
                    follow_redirects=False)
    assert r.status_code == 303
    page = client.get("/console").text
    return re.search(r'name="csrf" content="([^"]+)"', page).group(1)  # type: ignore[union-attr]


def test_rulings_offered_published_and_answered(
        mosquitto: Mosquitto, tmp_path: Path,
        mqttc: tuple[mqtt.Client, list[tuple[str, Any]]]) -> None:
    pub, got = mqttc
    app = _app(mosquitto, tmp_path)
    console = app.state.console
    with TestClient(app) as client:
        assert client.get("/console", follow_redirects=False).status_code == 303
        csrf = _login(client)
        _until(lambda: console.conn.client is not None, "the console connects")
        pub.publish("bridge/7/state", json.dumps({"v": 1, "table": "7", "board": 10,
                                                  "phase": "complete"}), qos=1, retain=True)
        pub.publish("bridge/7/alert", json.dumps({
            "v": 1, "id": 1, "table": "7", "board": 10, "code": "REVOKE", "law": "63A1",
            "seat": "E", "status": "established", "text": {"en": "x"}}), qos=1)
        _until(lambda: 1 in console.store.tables.get("7", None).alerts
               if "7" in console.store.tables else False, "the alert reaches the console")

        def post(body: dict[str, Any], token: str | None = csrf) -> Any:
            headers = {"X-CSRF-Token": token} if token else {}
            return client.post("/console/api/ruling", json=body, headers=headers)

        ruling = {"table": "7", "alert": 1, "ruling": "adjust", "tricks": 10,
                  "confirmed": True}
        assert post(ruling, token=None).status_code == 403
        assert post(ruling, token="forged").status_code == 403
        # not offered for a revoke, a bad number, an unknown alert or table
        for bad in ({**ruling, "ruling": "accept"}, {**ruling, "tricks": 14},
                    {**ruling, "alert": 2}, {**ruling, "table": "8"},
                    {**ruling, "table": "7/#"}, {"table": "7", "ruling": "comparable"},
                    {**ruling, "confirmed": False}, {"table": "7", "ruling": "undo"}):
            r = post(bad)
            assert r.status_code == 400, bad
        assert got == []      # nothing published for any of them
        r = post(ruling)
        assert r.status_code == 200 and r.json()["seq"] == 1
        topic, payload = _until(lambda: got[:1], "the ruling on the broker")[0]
        assert topic == "bridge/7/ruling"
        assert {k: payload[k] for k in ("v", "src", "seq", "ruling", "alert", "tricks")} == \
            {"v": 1, "src": "console-t", "seq": 1, "ruling": "adjust", "alert": 1, "tricks": 10}
        # answering a call needs the CSRF token too, and a table that exists
        assert client.post("/console/api/calls/7/answered").status_code == 403
        assert client.post("/console/api/calls/8/answered",
                           headers={"X-CSRF-Token": csrf}).status_code == 404
        assert client.post("/console/api/calls/7/answered",
                           headers={"X-CSRF-Token": csrf}).status_code == 200
        # a table ruling (no alert)
        assert post({"table": "7", "ruling": "undo", "confirmed": True}).json()["seq"] == 2
        # the controller refuses seq 1 (as it answers on bridge/7/error): the log says so
        pub.publish("bridge/7/error", json.dumps({
            "v": 1, "table": "7", "input": "ruling", "error": "some reason",
            "excerpt": json.dumps(payload, separators=(",", ":"))[:200]}), qos=1)
        rows = _until(lambda: [row for row in client.get("/console/api/log").json()["rulings"]
                               if row["answer"]], "the answer in the log")
        assert rows[0]["seq"] == 1 and rows[0]["answer"] == "refused: some reason"
        assert rows[0]["director"] == "Ada"
    # a restarted console goes on from the next seq
    app = _app(mosquitto, tmp_path)
    with TestClient(app) as client:
        csrf = _login(client)
        _until(lambda: "7" in app.state.console.store.tables, "the retained state")
        r = client.post("/console/api/ruling", json={"table": "7", "ruling": "undo",
                                                     "confirmed": True},
                        headers={"X-CSRF-Token": csrf})
        assert r.json()["seq"] == 3
        assert len(client.get("/console/api/log").json()["rulings"]) == 3


def test_wrong_password_gets_401_and_no_session(mosquitto: Mosquitto, tmp_path: Path) -> None:
    with TestClient(_app(mosquitto, tmp_path)) as client:
        r = client.post("/login", content="password=nope",
                        headers={"Content-Type": "application/x-www-form-urlencoded"},
                        follow_redirects=False)
        assert r.status_code == 401 and "Wrong password" in r.text
        assert "bt_session" not in r.cookies
        assert client.get("/console/events").status_code == 401
        assert client.get("/console/log.csv").status_code == 401



def test_the_login_lands_on_the_view_its_form_carried(mosquitto: Mosquitto,
                                                      tmp_path: Path) -> None:
    form = f"name=Ada&password={PASSWORD.replace(' ', '+')}&fragment="
    with TestClient(_app(mosquitto, tmp_path)) as client:
        for fragment, landing in (("%23table%2F7", "/console#table/7"), ("", "/console"),
                                  ("%23x%22%3E%3Cscript%3E", "/console"),
                                  ("https%3A%2F%2Felsewhere", "/console")):
            r = client.post("/login", content=form + fragment,
                            headers={"Content-Type": "application/x-www-form-urlencoded"},
                            follow_redirects=False)
            assert (r.status_code, r.headers["location"]) == (303, landing)

def test_the_session_gives_each_table_its_round(mosquitto: Mosquitto, tmp_path: Path) -> None:
    """--session: the room view's round of each table's board comes from the movement."""
    from controller.session import load_session
    from controller.web.console.app import rounds_of_session

    session = load_session(EXAMPLES / "session-mitchell.toml")
    rounds = rounds_of_session(session.movement)
    for rnd in session.movement.rounds:
        for table, at_table in rnd.tables.items():
            for board in at_table.boards:
                assert rounds[str(table)][board] == rnd.number
    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                  password_hash=hash_password(PASSWORD),
                                  db=tmp_path / "console.sqlite", src="console-t",
                                  rounds=rounds))
    with TestClient(app) as client:
        assert client.get("/console/api/rounds").status_code == 401
        _login(client)
        got = client.get("/console/api/rounds").json()
    table, boards = next(iter(rounds.items()))
    assert got[table] == {str(b): r for b, r in boards.items()}


@pytest.fixture
def controller(mosquitto: Mosquitto, tmp_path: Path) -> Iterator[None]:
    """``bridge-table controller`` on the test's broker: the presses the console keeps are
    those the controller publishes (1.14: ``evidence.presses``)."""
    online: list[Any] = []
    watch = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    watch.on_message = lambda _c, _u, m: online.append(json.loads(m.payload or b"{}"))
    watch.connect(mosquitto.host, mosquitto.port)
    watch.subscribe("bridge/controller/status", 1)
    watch.loop_start()
    proc = daemon_process(mosquitto.url, tmp_path / "journal.sqlite",
                          log=tmp_path / "controller.log")
    try:
        _until(lambda: any(d.get("status") == "online" for d in online), "the controller")
        yield
    finally:
        watch.loop_stop()
        watch.disconnect()
        stop_process(proc)


def _press(pub: mqtt.Client, table: str, button: str, seat: str, seq: int) -> None:
    pub.publish(f"bridge/{table}/event", json.dumps({
        "v": 1, "src": f"pi-{table}", "seq": seq, "boot": "b1", "ts": 1.0 * seq,
        "type": "button", "button": button, "seat": seat}), qos=1)


def test_calls_and_claim_presses_stay_until_the_director_closes_them(
        mosquitto: Mosquitto, tmp_path: Path, controller: None,
        mqttc: tuple[mqtt.Client, list[tuple[str, Any]]]) -> None:
    """A call pressed before the table's first state, a claim press, a new board and a
    console restart: both stay open until the director closes them, oldest first. The
    presses go through the controller (its ``evidence.presses``, 1.14)."""
    pub, _ = mqttc
    app = _app(mosquitto, tmp_path)
    console = app.state.console
    with TestClient(app) as client:
        csrf = _login(client)
        _until(lambda: console.conn.client is not None, "the console connects")
        _press(pub, "4", "director", "W", 1)            # before table 4 reports at all
        _until(lambda: console.open_calls(), "the first call")
        pub.publish("bridge/4/state", json.dumps({"v": 1, "table": "4", "board": 1,
                                                  "phase": "auction"}), qos=1, retain=True)
        _press(pub, "9", "claim", "S", 1)
        _press(pub, "9", "claim", "S", 1)                # delivered twice: kept once
        pub.publish("bridge/9/event", json.dumps({      # not the contract's: not kept
            "v": 1, "src": "pi-9", "ts": 1.0, "type": "button", "button": "claim"}), qos=1)
        _until(lambda: len(console.open_calls()) == 2, "the claim press")
        pub.publish("bridge/4/state", json.dumps({"v": 1, "table": "4", "board": 2,
                                                  "phase": "auction"}), qos=1, retain=True)
        _until(lambda: console.store.tables["4"].board == 2, "the next board")
        time.sleep(0.2)
        assert len(console.open_calls()) == 2
        first = console.open_calls()[0]
        assert (first["table_id"], first["button"], first["seat"]) == ("4", "director", "W")
        assert client.post(f"/console/api/call/{first['id']}/answered").status_code == 403
        r = client.post(f"/console/api/call/{first['id']}/answered",
                        headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200 and r.json()["call"]["answered_by"] == "Ada"
        assert client.post("/console/api/call/999/dismissed",
                           headers={"X-CSRF-Token": csrf}).status_code == 404
        assert client.post(f"/console/api/call/{first['id']}/forgotten",
                           headers={"X-CSRF-Token": csrf}).status_code == 400
    app = _app(mosquitto, tmp_path)
    console = app.state.console
    with TestClient(app) as client:
        csrf = _login(client)
        calls = console.open_calls()
        assert [(c["table_id"], c["button"]) for c in calls] == [("4", "director"),
                                                                   ("9", "claim")]
        assert calls[0]["answered"] is not None
        # a ruling on table 4, then its call closed as ruled: the call names that ruling
        _until(lambda: console.conn.client is not None and "4" in console.store.tables,
               "table 4 again")
        seq = client.post("/console/api/ruling", json={"table": "4", "ruling": "undo",
                                                       "confirmed": True},
                          headers={"X-CSRF-Token": csrf}).json()["seq"]
        r = client.post(f"/console/api/call/{calls[0]['id']}/ruled",
                        headers={"X-CSRF-Token": csrf})
        assert r.json()["call"]["ruling_seq"] == seq
        r = client.post(f"/console/api/call/{calls[1]['id']}/dismissed",
                        headers={"X-CSRF-Token": csrf})
        assert r.json()["changed"] is True and r.json()["call"]["ruling_seq"] is None
        assert console.open_calls() == []


SESSION = """[session]
event = "Console rulings"
[movement]
type = "explicit"
[[movement.round]]
"7" = { ns = 1, ew = 2, boards = [9] }
"8" = { ns = 3, ew = 4, boards = [10] }
[[movement.round]]
"7" = { ns = 1, ew = 4, boards = [10] }
"8" = { ns = 3, ew = 2, boards = [9] }
[pairs]
1 = ["Ann Archer", "Bob Baker"]
"""


def _state(table: str, board: int, last: dict[str, Any] | None = None,
           notes: list[str] | None = None, **more: Any) -> str:
    return json.dumps({"v": 1, "table": table, "board": board, "phase": "complete",
                       "last": last, **({"notes": notes} if notes else {}), **more})


def test_rulings_closed_alerts_no_change_confirmation_and_reversal(
        mosquitto: Mosquitto, tmp_path: Path,
        mqttc: tuple[mqtt.Client, list[tuple[str, Any]]]) -> None:
    """No ruling on a resolved alert; a ruling the controller says did nothing is logged
    "no change"; a destructive one needs confirming, and its reversal is sent and linked."""
    from controller.session import load_session
    from controller.web.console.app import rounds_of_session

    pub, got = mqttc
    path = tmp_path / "session.toml"
    path.write_text(SESSION)
    session = load_session(path)
    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                  password_hash=hash_password(PASSWORD),
                                  db=tmp_path / "console.sqlite", src="console-t",
                                  rounds=rounds_of_session(session.movement), session=session))
    console = app.state.console
    with TestClient(app) as client:
        csrf = _login(client)
        _until(lambda: console.conn.client is not None, "the console connects")
        pub.publish("bridge/7/state", _state("7", 10), qos=1, retain=True)
        pub.publish("bridge/7/result", json.dumps({"v": 1, "table": "7", "board": 10,
                                                   "tricks": 11, "score_ns": 650}), qos=1)
        pub.publish("bridge/7/alert", json.dumps({
            "v": 1, "id": 1, "table": "7", "board": 10, "code": "LEAD_OUT_OF_TURN",
            "law": "53A", "seat": "E", "status": "resolved", "text": {"en": "x"}}), qos=1)
        _until(lambda: "7" in console.store.tables and 1 in console.store.tables["7"].alerts
               and console.store.tables["7"].result, "the table")

        def post(body: dict[str, Any]) -> Any:
            return client.post("/console/api/ruling", json=body,
                               headers={"X-CSRF-Token": csrf})

        r = post({"table": "7", "alert": 1, "ruling": "accept"})
        assert r.status_code == 400 and "resolved" in r.json()["error"]
        # a claim once the play is over is not offered (adjust is)
        r = post({"table": "7", "ruling": "claim", "tricks": 3, "confirmed": True})
        assert r.status_code == 400 and "not offered" in r.json()["error"]
        # an undo the Laws core says did nothing: "no change", not "applied"
        r = post({"table": "7", "ruling": "undo", "confirmed": True})
        seq = r.json()["seq"]
        pub.publish("bridge/7/state", _state("7", 10, {"src": "console-t", "seq": seq},
                                             ["ruling undo had no effect in phase complete"]),
                    qos=1, retain=True)
        # an adjust that the controller applies without a new result: "no change" too
        r = post({"table": "7", "ruling": "adjust", "tricks": 11, "confirmed": True,
                  "facts": "East led out of turn", "note": "table result stands"})
        same = r.json()["seq"]
        pub.publish("bridge/7/state", _state("7", 10, {"src": "console-t", "seq": same}),
                    qos=1, retain=True)
        # an adjust to 10: the new result follows the state: "applied", reversible to 11
        r = post({"table": "7", "ruling": "adjust", "tricks": 10, "confirmed": True})
        adj = r.json()["seq"]
        pub.publish("bridge/7/state", _state("7", 10, {"src": "console-t", "seq": adj}),
                    qos=1, retain=True)
        pub.publish("bridge/7/result", json.dumps({"v": 1, "table": "7", "board": 10,
                                                   "tricks": 10, "score_ns": 620}), qos=1)

        def answers() -> dict[int, str]:
            return {row["seq"]: row["answer"] for row in
                    client.get("/console/api/log").json()["rulings"] if row["answer"]}
        _until(lambda: len(answers()) == 3, "three answers")
        got_answers = answers()
        assert got_answers[seq].startswith("no change: ruling undo had no effect")
        assert got_answers[same] == "no change"
        assert got_answers[adj] == "applied"
        rows = {row["seq"]: row for row in client.get("/console/api/log").json()["rulings"]}
        assert rows[same]["facts"] == "East led out of turn" and rows[same]["law"] == "12"
        assert rows[adj]["round"] == 2 and rows[adj]["pairs"] == "1 v 4"
        assert rows[seq]["reversal"] is None        # an undo: only the table can put it back
        assert json.loads(rows[adj]["reversal"]) == {"ruling": "adjust", "tricks": 11}
        # reversing needs confirming, goes out once, and the log links the two
        url = f"/console/api/reverse/{adj}"
        assert client.post(url, json={}, headers={"X-CSRF-Token": csrf}).status_code == 400
        assert client.post(url, json={"confirmed": True}).status_code == 403
        r = client.post(url, json={"confirmed": True}, headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200, r.text
        back = r.json()["seq"]
        published = _until(lambda: [p for _, p in got if p["seq"] == back], "the reversal")
        assert {k: published[0][k] for k in ("ruling", "tricks")} == \
            {"ruling": "adjust", "tricks": 11}
        assert client.post(url, json={"confirmed": True},
                           headers={"X-CSRF-Token": csrf}).status_code == 409
        assert client.post(f"/console/api/reverse/{seq}", json={"confirmed": True},
                           headers={"X-CSRF-Token": csrf}).status_code == 409
        rows = {row["seq"]: row for row in client.get("/console/api/log").json()["rulings"]}
        assert rows[adj]["reversed_by"] == back and rows[back]["reverses"] == adj
        # once the table is on its next board, a reversal would change the wrong board
        late = post({"table": "7", "ruling": "adjust", "tricks": 9, "confirmed": True})
        pub.publish("bridge/7/state", _state("7", 11), qos=1, retain=True)
        _until(lambda: console.store.tables["7"].board == 11, "the next board")
        r = client.post(f"/console/api/reverse/{late.json()['seq']}", json={"confirmed": True},
                        headers={"X-CSRF-Token": csrf})
        assert r.status_code == 400 and "is on board 11" in r.json()["error"]
        # the record: facts, note, appeal status
        r = client.post(f"/console/api/record/{adj}", json={"appeal": "appealed",
                                                            "note": "NS appeal"},
                        headers={"X-CSRF-Token": csrf})
        assert r.json()["ruling"]["appeal"] == "appealed"
        assert client.post(f"/console/api/record/{adj}", json={"appeal": "maybe"},
                           headers={"X-CSRF-Token": csrf}).status_code == 400
        csv_text = client.get("/console/log.csv").text
        assert "NS appeal" in csv_text and "1 v 4" in csv_text and ",12," in csv_text
        assert re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}", csv_text)


def test_adjusted_scores_go_into_the_session_file_and_come_out_again(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """A+/A- on the previous round's board, checked against the movement, written where
    `score` reads them (the session file's adjustments), and reversed."""
    from controller.session import load_session

    path = tmp_path / "session.toml"
    path.write_text(SESSION)
    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                  password_hash=hash_password(PASSWORD),
                                  db=tmp_path / "console.sqlite", src="console-t",
                                  session=load_session(path)))
    with TestClient(app) as client:
        csrf = _login(client)
        assert client.get("/console/api/session").json()["tables"] == {"7": [9, 10],
                                                                        "8": [9, 10]}

        def score(body: dict[str, Any]) -> Any:
            return client.post("/console/api/score", json={"confirmed": True, **body},
                               headers={"X-CSRF-Token": csrf})

        for bad in ({"table": "7", "board": 11, "kind": "artificial", "ns": "A+", "ew": "A-"},
                    {"table": "7", "board": 9, "kind": "artificial", "ns": "A+++", "ew": "A"},
                    {"table": "7", "board": 9, "kind": "assigned", "score_ns": "lots"},
                    {"table": "7", "board": 9, "kind": "weighted"},
                    {"table": "7\n[x]", "board": 9, "kind": "assigned", "score_ns": 100},
                    {"table": "7", "board": 9, "kind": "assigned", "score_ns": 100,
                     "confirmed": False}):
            assert score(bad).status_code == 400, bad
        assert load_session(path).adjustments == ()
        r = score({"table": "7", "board": 9, "kind": "artificial", "ns": "A+", "ew": "A-"})
        assert r.status_code == 200, r.text
        first = r.json()["seq"]
        r = score({"table": "8", "board": 10, "kind": "split", "split_ns": 620,
                   "split_ew": "650"})
        assert r.status_code == 200, r.text
        adjustments = load_session(path).adjustments
        assert [(a.table, a.board, a.ns, a.ew, a.split) for a in adjustments] == [
            ("7", 9, "A+", "A-", None), ("8", 10, None, None, (620, 650))]
        r = client.post(f"/console/api/reverse/{first}", json={"confirmed": True},
                        headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200, r.text
        assert [(a.table, a.board) for a in load_session(path).adjustments] == [("8", 10)]
        rows = {row["seq"]: row for row in client.get("/console/api/log").json()["rulings"]}
        assert rows[first]["law"] == "12C1(d)" and rows[first]["reversed_by"] == r.json()["seq"]
        assert rows[first]["answer"] == "written: NS A+, EW A-"


def test_the_rooms_clock_boards_played_and_call_backs(
        mosquitto: Mosquitto, tmp_path: Path, controller: None,
        mqttc: tuple[mqtt.Client, list[tuple[str, Any]]]) -> None:
    """A round's clock is started and the move called; each table's first result of a board
    counts it played; a call gets a call-back time; all kept across a restart."""
    pub, _ = mqttc
    app = _app(mosquitto, tmp_path)
    console = app.state.console
    with TestClient(app) as client:
        csrf = _login(client)
        _until(lambda: console.conn.client is not None, "the console connects")

        def clock(body: dict[str, Any]) -> Any:
            return client.post("/console/api/clock", json=body, headers={"X-CSRF-Token": csrf})
        assert clock({"move": True}).status_code == 400          # no clock yet
        for bad in ({"round": 0, "minutes": 15}, {"round": 1, "minutes": 0},
                    {"round": 1, "minutes": 999}, {"round": "1", "minutes": 15}, {}):
            assert clock(bad).status_code == 400, bad
        assert client.post("/console/api/clock", json={"round": 1, "minutes": 15}
                           ).status_code == 403
        assert clock({"round": 1, "minutes": 15}).json()["clock"]["minutes"] == 15
        assert clock({"move": True}).json()["clock"]["move_called"] is not None
        for board, tricks in ((3, 9), (3, 10), (4, 8)):          # board 3 published again
            pub.publish("bridge/6/result", json.dumps({"v": 1, "table": "6", "board": board,
                                                       "tricks": tricks}), qos=1)
        _until(lambda: console.room_snapshot()["played"].get("6") == [3, 4], "boards played")
        _press(pub, "6", "director", "N", 1)
        call = _until(lambda: console.open_calls(), "the call")[0]
        url = f"/console/api/call/{call['id']}/callback"
        assert client.post(url, json={"minutes": -1},
                           headers={"X-CSRF-Token": csrf}).status_code == 400
        r = client.post(url, json={"minutes": 10}, headers={"X-CSRF-Token": csrf})
        assert r.status_code == 200 and r.json()["call"]["callback"] > time.time() + 500
    app = _app(mosquitto, tmp_path)
    with TestClient(app) as client:
        _login(client)
        room = app.state.console.room_snapshot()
        assert room["clock"]["round"] == 1 and room["played"] == {"6": [3, 4]}
        assert app.state.console.open_calls()[0]["callback"] is not None


def test_accounts_and_a_login_not_held_up_by_guesses_from_elsewhere(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Each director logs in with their own password (another's is refused); wrong guesses
    in flight from one address do not hold up a login from another address."""
    import asyncio

    import httpx

    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                  password_hash="", db=tmp_path / "console.sqlite",
                                  accounts={"Ada": hash_password("ada's secret"),
                                            "Bo": hash_password("bo's secret")}))

    def form(name: str, password: str) -> dict[str, str]:
        return {"name": name, "password": password}

    async def run() -> None:
        guesser = httpx.AsyncClient(transport=httpx.ASGITransport(
            app=app, client=("10.0.0.66", 4000)), base_url="http://console")
        director = httpx.AsyncClient(transport=httpx.ASGITransport(
            app=app, client=("10.0.0.2", 5000)), base_url="http://console")
        for name, password, status in (("Ada", "bo's secret", 401), ("Bo", "bo's secret", 303),
                                       ("Cy", "bo's secret", 401), ("ada", "ada's secret", 401)):
            r = await director.post("/login", data=form(name, password))
            assert r.status_code == status, (name, password)
        guesses = [asyncio.ensure_future(guesser.post("/login", data=form("Ada", f"guess{i}")))
                   for i in range(10)]
        await asyncio.sleep(0.05)
        r = await director.post("/login", data=form("Ada", "ada's secret"))
        assert r.status_code == 303
        # the director is in while most of the guesses still wait their turn
        assert sum(g.done() for g in guesses) < 10
        assert all(g.status_code == 401 for g in await asyncio.gather(*guesses))
        page = await director.get("/console", cookies=r.cookies)
        assert 'name="director" content="Ada"' in page.text
        await guesser.aclose()
        await director.aclose()
    asyncio.run(run())
