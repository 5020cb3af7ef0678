"""The director's console played as a director would, in chromium, on a 30-table Mitchell.

mosquitto, ``bridge-table controller`` and ``bridge-table console --session`` run as
subprocesses. Table 5 plays the replayed board 10 of scenario T08 (an established revoke)
through the controller; the other 29 tables report a state of their first board. Then:

- table 12 calls the director on board 23 and goes on to board 24; table 20's declarer
  presses "claim": both stay in the room's calls, across the new board and a reload,
  until the director answers them;
- the director adjusts the revoke (asked first; dismissing sends nothing), then reverses it
  from the ruling log (asked again): the result goes back to 11 tricks;
- table 5 goes on to board 11; the director gives an assigned score on board 10 (the
  previous board) and A+/A- on table 12's board 23: ``bridge-table score`` and
  ``bridge-table export`` read both from the session file.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from broker import Mosquitto, free_port
from screenshots import screenshot_dir

from controller.session import load_session
from controller.web.auth import write_password_file

pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                    "(pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402
from test_console_browser import (  # noqa: E402
    DATA,
    LAPTOP,
    PASSWORD,
    _client,
    _login,
    _publish,
    _replay,
    _start,
    _stop,
    _wait_http,
    _wait_retained,
    click_and_dismiss,
)

TABLES = 30
SESSION = f"""[session]
id = "thirty"
event = "Thirty tables"
date = "2026-12-01"
deals = "{DATA / 'replay_t08_revoke.pbn'}"
[movement]
type = "mitchell"
tables = {TABLES}
rounds = 2
boards_per_round = 2
[pairs]
5 = ["Ann Archer", "Bob Baker"]
35 = ["Cy Cole", "Di Dunn"]
"""


@dataclass
class Room:
    url: str
    broker: Mosquitto
    session: Path
    results: Path
    tmp: Path


class _Recorder:
    """Every result, feed and alert the controller publishes, as ``replay`` writes them
    (what ``score`` and ``export`` read)."""

    def __init__(self, broker: Mosquitto, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="recorder")
        self.client.on_message = self._on
        self.client.connect(broker.host, broker.port)
        self.client.subscribe([("bridge/+/result", 1), ("bridge/+/feed", 1),
                               ("bridge/+/alert", 1)])
        self.client.loop_start()

    def _on(self, _c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            return
        with self.lock, self.path.open("a") as f:
            f.write(json.dumps({"topic": msg.topic, "payload": payload}) + "\n")

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    tmp = tmp_path_factory.mktemp("room")
    pwfile = tmp / "console-password"
    write_password_file(pwfile, PASSWORD)
    session = tmp / "session.toml"
    session.write_text(SESSION)
    results = tmp / "published.jsonl"
    with Mosquitto(tmp / "broker") as broker:
        recorder = _Recorder(broker, results)
        controller = _start(["controller", "--broker", broker.url, "--no-journal",
                             "--deals", str(DATA / "replay_t08_revoke.pbn")],
                            tmp / "controller.log")
        port = free_port()
        console = _start(["console", "--broker", broker.url, "--listen", f"127.0.0.1:{port}",
                          "--director-password-file", str(pwfile),
                          "--db", str(tmp / "console.sqlite"), "--src", "console-room",
                          "--session", str(session)], tmp / "console.log")
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_http(url, console, tmp / "console.log")
            _wait_retained(broker, "bridge/controller/status",
                           lambda d: d.get("status") == "online")
            movement = load_session(session).movement
            client = _client(broker)
            try:
                for t in range(1, TABLES + 1):
                    if t != 5:   # table 5's state comes from the controller
                        client.publish(f"bridge/{t}/state", json.dumps({
                            "v": 1, "table": str(t), "board": movement.boards_at(str(t), 1)[0],
                            "phase": "auction", "last": None, "turn": "N"}),
                            qos=1, retain=True).wait_for_publish()
            finally:
                client.loop_stop()
                client.disconnect()
            _replay(broker, DATA / "replay_t08_revoke.jsonl", table="5")
            _wait_retained(broker, "bridge/5/result", lambda d: d.get("board") == 10)
            yield Room(url=url, broker=broker, session=session, results=results, tmp=tmp)
        finally:
            _stop(console)
            _stop(controller)
            recorder.stop()


def _press(broker: Mosquitto, table: int, button: str, seat: str, seq: int) -> None:
    _publish(broker, f"bridge/{table}/event", {
        "v": 1, "src": f"pi-{table}", "seq": seq, "boot": "b1", "ts": time.time(),
        "type": "button", "button": button, "seat": seat})


def _cli(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "controller.cli", *args], check=False,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_director_runs_the_room(room: Room, chromium_browser: Any) -> None:
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, room.url)
        expect(page.locator(".tcard")).to_have_count(TABLES)
        _calls_stay_until_answered(page, room)
        _the_rooms_clock(page)
        _destructive_ruling_asked_and_reversed(page)
        _adjusted_scores_reach_score_and_export(page, room)
    finally:
        context.close()


def _calls_stay_until_answered(page: Page, room: Room) -> None:
    # table 12's board 23 goes onto its reader: the controller follows it (the call is
    # published by the controller, with its board: wire 1.14)
    _publish(room.broker, "bridge/12/event", {
        "v": 1, "src": "pi-12", "seq": 1, "boot": "b1", "ts": time.time(), "type": "tag",
        "zone": "board", "action": "present", "uid": "BD0023", "board": 23})
    _press(room.broker, 12, "director", "E", 2)      # on board 23
    calls = page.locator("#calls li")
    expect(calls).to_have_count(1)
    # a new call rings (and vibrates on a phone)
    page.wait_for_function("document.body.dataset.lastAlarm !== undefined")
    time.sleep(1.1)                                   # the claim press comes a second later
    _press(room.broker, 20, "claim", "S", 1)
    expect(calls).to_have_count(2)
    # table 12 goes on to its next board: its call stays, the longest waiting first
    _publish(room.broker, "bridge/12/state", {"v": 1, "table": "12", "board": 24,
                                              "phase": "auction", "last": None}, retain=True)
    expect(page.locator("#table-12")).to_contain_text("Board 24")
    expect(calls).to_have_count(2)
    expect(calls.nth(0)).to_contain_text("Table 12")
    expect(calls.nth(0)).to_contain_text("Director called (E) · Board 23")
    expect(calls.nth(1)).to_contain_text("Claim pressed (S)")
    # the waiting tables lead the room
    assert page.locator(".tcard").evaluate_all(
        "cs => cs.slice(0, 2).map(c => c.dataset.table)") == ["12", "20"]
    page.reload()
    expect(calls).to_have_count(2)
    calls.nth(0).locator(".call-answer").click()
    expect(calls.nth(0)).to_contain_text("On my way (Ada)")
    expect(calls).to_have_count(2)                   # answered, still there until closed


def _the_rooms_clock(page: Page) -> None:
    """Round 1's clock: table 5 has played one board of two (its board 10); when the time
    is up the tables not done are late; the move is called; a call-back reminder falls due."""
    page.fill("#clock-round", "1")
    page.fill("#clock-minutes", "60")
    page.click("#clock-start")
    expect(page.locator("#clock")).to_contain_text("Round 1 · 59:")
    expect(page.locator("#table-5 .progress")).to_have_text("Boards played 1/2")
    expect(page.locator("#clock-summary")).to_contain_text("Late: - · Slow: -")
    page.fill("#clock-round", "1")
    page.fill("#clock-minutes", "0.01")     # the round's time is up within a second
    page.click("#clock-start")
    expect(page.locator("#clock")).to_contain_text("Round 1 · time up")
    expect(page.locator("#table-5 .progress")).to_have_attribute("data-progress", "late")
    expect(page.locator("#clock-summary")).to_contain_text("Late: 1, 2, 3, 4, 5, 6")
    page.click("#clock-move")
    expect(page.locator("#clock")).to_contain_text("move called")
    # "go back to table 12 in a moment": the reminder falls due with a sound
    rang = page.evaluate("document.body.dataset.lastAlarm")
    page.once("dialog", lambda dialog: dialog.accept("0.01"))
    page.locator("#calls li[data-table='12'] .call-back").click()
    expect(page.locator("#calls li[data-table='12'] .callback.due")).to_contain_text(
        "go back now")
    page.screenshot(path=str(screenshot_dir() / "console-calls-clock.png"))
    page.wait_for_function(f"document.body.dataset.lastAlarm !== '{rang}'")


def _destructive_ruling_asked_and_reversed(page: Page) -> None:
    # by its address: a click on the room's card could meet a card just redrawn
    page.evaluate("location.hash = '#table/5'")
    expect(page.locator("#tableview")).to_have_attribute("data-table", "5")
    expect(page.locator("#pairs")).to_have_text(
        "Pairs: NS 5 (Ann Archer - Bob Baker) · EW 35 (Cy Cole - Di Dunn)")
    expect(page.locator("#score")).to_have_text("650")
    page.locator("li.alert[data-code=REVOKE]").click()
    options = page.locator("#options")
    options.locator("input[name=tricks]").fill("10")
    page.locator('[id="record:5:facts"]').fill("East revoked at trick 6; NS lost a trick")
    asked = click_and_dismiss(page, options.locator("button[data-ruling=adjust]"))
    expect(page.locator("#answers li")).to_have_count(0)
    assert asked and "changes what the table did" in asked[0]
    page.once("dialog", lambda dialog: dialog.accept())
    options.locator("button[data-ruling=adjust]").click()
    expect(page.locator("#score")).to_have_text("620")
    expect(page.locator("#answers")).to_contain_text("applied")
    # reversed from the ruling log, asked first: the result is 11 tricks again
    page.click("#nav-log")
    row = page.locator("#log tr", has_text="REVOKE")
    expect(row.locator("details.record summary")).to_have_text(
        "East revoked at trick 6; NS lost a trick")
    page.once("dialog", lambda dialog: dialog.accept())
    row.locator("button.reverse").click()
    expect(page.locator("#log-status")).to_contain_text("reversal sent")
    expect(page.locator("#log")).to_contain_text("reversed by")
    page.goto(page.url.split("#")[0] + "#table/5")
    expect(page.locator("#score")).to_have_text("650")


def _score(page: Page, answer: str, **fields: str) -> None:
    """Fill the adjusted-score form (selects and inputs by name, in order), send it (the
    confirmation accepted) and wait for ``answer``."""
    form = page.locator("#score-form")
    for name, value in fields.items():
        if name in ("board", "kind", "ns", "ew"):
            form.locator(f"select[name={name}]").select_option(value)
        else:
            form.locator(f"input[name={name}]").fill(value)
    page.once("dialog", lambda dialog: dialog.accept())
    form.locator("#send-score").click()
    expect(page.locator("#score-status")).to_contain_text(answer)


def _adjusted_scores_reach_score_and_export(page: Page, room: Room) -> None:
    # table 5 goes on to board 11 (round 2): board 10 is the previous board
    _publish(room.broker, "bridge/5/event", {"v": 1, "src": "sim", "seq": 170,
                                             "ts": time.time(), "type": "tag",
                                             "zone": "board", "action": "present",
                                             "uid": "B0B", "board": 11})
    expect(page.locator("#tableview h2")).to_contain_text("Board 11")
    _score(page, "written: NS 620", board="10", kind="assigned", score_ns="620")
    # A+ / A- on table 12's board 23, which it has left
    page.goto(page.url.split("#")[0] + "#table/12")
    _score(page, "written: NS A+, EW A-", board="23", ns="A+", ew="A-")
    page.screenshot(path=str(screenshot_dir() / "console-adjusted-score.png"), full_page=True)
    # a weighted score (12C1c) on table 12's board 24: weights not summing to 100% refused
    # (the session file untouched), then 50% of 4H= and 50% of 3NT-1
    before = room.session.read_text()
    _score(page, "sum to 90%", board="24", kind="weighted",
           weighted="50% 4H S 10, 40% 3NT N 8")
    assert room.session.read_text() == before
    _score(page, "written: weighted: 50% 4H S 10, 50% 3NT N 8",
           weighted="50% 4H S 10, 50% 3NT N 8")
    # the calls are closed: ruled on table 12, the claim dismissed
    page.locator("#call li .call-ruled").click()
    page.click("#nav-room")
    page.locator("#calls li[data-table='20'] .call-dismiss").click()
    expect(page.locator("#calls li")).to_have_count(0)
    # no call waiting: nothing drawn, not an empty box in the alert's colour
    expect(page.locator("#calls")).to_be_hidden()
    # `score` and `export` read both from the session file
    scored = json.loads(_cli("score", str(room.results), "--session", str(room.session),
                             "--json"))
    text = json.dumps(scored)
    assert "A+" in text and "A-" in text, text[:2000]
    out = room.tmp / "export"
    _cli("export", str(room.session), "--results", str(room.results), "--out", str(out),
         "--format", "csv")
    rows = list(csv.DictReader((out / "thirty.csv").open()))
    by = {(r["table"], r["board"]): r for r in rows}
    # table 5's own result stays in the record (650); it is scored with the assigned 620
    assert (by["5", "10"]["score_ns"], by["5", "10"]["scored"]) == ("650", "+620")
    assert by["5", "10"]["ns_names"] == "Ann Archer - Bob Baker"
    assert by["12", "23"]["scored"] == "A+/A-"
    assert (by["12", "23"]["points_ns"], by["12", "23"]["points_ew"]) == ("1.2", "0.8")
    # board 24, none vulnerable: 4H= by South +420, 3NT-1 by North -50
    assert by["12", "24"]["scored"] == "50%+420/50%-50"
