"""The director's console end to end in a real browser (Debian's chromium under Playwright).

A real mosquitto, the rules daemon (``bridge-table controller``) and the console
(``bridge-table console``) run as subprocesses; the replayed board of scenario T08 (an
established revoke won by the offender, Law 64A1) is published as the table's bridge would.
The tests also take the screenshots of docs/console.md (``console-*.png``: in docs/img with
``make screenshots``, else in a scratch folder, tests/screenshots.py).
"""

from __future__ import annotations

import json
import os
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

from controller.web.auth import write_password_file

DATA = Path(__file__).parent / "data"
IMG = screenshot_dir()
PASSWORD = "correct horse battery"
PHONE = {"width": 360, "height": 740}
LAPTOP = {"width": 1280, "height": 800}

pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                    "(pip install -e '.[test]')")
from playwright.sync_api import Page, expect  # noqa: E402


@dataclass
class Env:
    url: str
    broker: Mosquitto
    db: Path


def _wait_http(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    import httpx
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the console exited: {log.read_text()[-2000:]}")
        try:
            if httpx.get(url + "/login", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("the console did not answer")


def _client(broker: Mosquitto) -> mqtt.Client:
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"test-{os.getpid()}")
    client.connect(broker.host, broker.port)
    client.loop_start()
    return client


def _wait_retained(broker: Mosquitto, topic: str, pred: Any) -> dict[str, Any]:
    """The retained message on ``topic`` once ``pred`` holds for it."""
    got = threading.Event()
    found: dict[str, Any] = {}

    def on_message(_c: Any, _u: Any, msg: mqtt.MQTTMessage) -> None:
        try:
            data = json.loads(msg.payload)
        except ValueError:
            return
        if pred(data):
            found.update(data)
            got.set()

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)
    client.on_message = on_message
    client.connect(broker.host, broker.port)
    client.subscribe(topic, 1)
    client.loop_start()
    try:
        if not got.wait(60):
            raise RuntimeError(f"nothing on {topic} as expected")
    finally:
        client.loop_stop()
        client.disconnect()
    return found


def _replay(broker: Mosquitto, path: Path, table: str = "7", lines: int | None = None) -> None:
    """The recorded events (the first ``lines``) as the bridge of ``table`` would send them."""
    client = _client(broker)
    try:
        for line in path.read_text().splitlines()[:lines]:
            item = json.loads(line)
            topic = item["topic"].replace("bridge/7/", f"bridge/{table}/")
            client.publish(topic, json.dumps(item["payload"]), qos=1).wait_for_publish()
    finally:
        client.loop_stop()
        client.disconnect()


def _publish(broker: Mosquitto, topic: str, payload: dict[str, Any],
             retain: bool = False) -> None:
    client = _client(broker)
    try:
        client.publish(topic, json.dumps(payload), qos=1, retain=retain).wait_for_publish()
    finally:
        client.loop_stop()
        client.disconnect()


def _start(args: list[str], log: Path) -> subprocess.Popen[bytes]:
    with open(log, "wb") as f:
        return subprocess.Popen([sys.executable, "-m", "controller.cli", *args],
                                stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    tmp = tmp_path_factory.mktemp("console")
    pwfile = tmp / "console-password"
    write_password_file(pwfile, PASSWORD)
    # the session's movement: board 10 is table 7's second round (the room view shows it)
    session = tmp / "session.toml"
    session.write_text(f"""[session]
event = "Console test"
deals = "{DATA / 'replay_t08_revoke.pbn'}"
[movement]
type = "explicit"
[[movement.round]]
"7" = {{ ns = 1, ew = 2, boards = [9] }}
[[movement.round]]
"7" = {{ ns = 1, ew = 3, boards = [10] }}
""")
    with Mosquitto(tmp / "broker") as broker:
        controller = _start(["controller", "--broker", broker.url, "--no-journal",
                             "--deals", str(DATA / "replay_t08_revoke.pbn")],
                            tmp / "controller.log")
        port = free_port()
        console = _start(["console", "--broker", broker.url, "--listen", f"127.0.0.1:{port}",
                          "--director-password-file", str(pwfile),
                          "--db", str(tmp / "console.sqlite"),
                          "--src", "console-test", "--session", str(session)],
                         tmp / "console.log")
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_http(url, console, tmp / "console.log")
            _wait_retained(broker, "bridge/controller/status",
                           lambda d: d.get("status") == "online")
            _replay(broker, DATA / "replay_t08_revoke.jsonl")
            # two more tables on the same board: one in the auction, one in the play
            _replay(broker, DATA / "replay_t08_revoke.jsonl", table="3", lines=110)
            _replay(broker, DATA / "replay_t08_revoke.jsonl", table="12", lines=131)
            # the table's bridge is online, and South pressed the "director" button
            _publish(broker, "bridge/7/bridge", {"v": 1, "src": "sim", "status": "online"},
                     retain=True)
            _publish(broker, "bridge/7/event", {"v": 1, "src": "sim", "seq": 165,
                                                "ts": time.time(), "type": "button",
                                                "button": "director", "seat": "S"})
            _wait_retained(broker, "bridge/7/result", lambda d: d.get("board") == 10)
            _wait_retained(broker, "bridge/12/state", lambda d: d.get("phase") == "play")
            yield Env(url=url, broker=broker, db=tmp / "console.sqlite")
        finally:
            _stop(console)
            _stop(controller)


def click_and_dismiss(page: Page, button: Any) -> list[str]:
    """Click ``button`` and dismiss the confirmation it asks for; what it asked."""
    asked: list[str] = []

    def dismiss(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()
    page.once("dialog", dismiss)
    button.click()
    return asked


def _login(page: Page, url: str, password: str = PASSWORD) -> None:
    page.goto(url + "/login")
    page.fill("input[name=name]", "Ada")
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")


def test_wrong_password_is_refused(env: Env, chromium_browser: Any) -> None:
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url, "not the password")
        expect(page.locator("#login-error")).to_be_visible()
        assert page.url.endswith("/login")
        # no way round it: the console page, its events and the ruling API stay closed
        page.goto(env.url + "/console")
        assert page.url.endswith("/login")
        assert page.request.get(env.url + "/console/api/options").status == 401
        answer = page.request.post(env.url + "/console/api/ruling",
                                   data={"table": "7", "ruling": "undo"})
        assert answer.status == 401
        expect(page.locator("#tableview")).to_have_count(0)
    finally:
        context.close()



def test_the_login_lands_on_the_page_asked_for(env: Env, chromium_browser: Any) -> None:
    """/#table/7 without a session goes to the login page; the login lands on table 7, not
    on the room (the fragment never reaches the server: the login page carries it), also
    after a wrong password first."""
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        page.goto(env.url + "/#table/7")
        assert page.url.endswith("/login#table/7")
        page.fill("input[name=name]", "Ada")
        page.fill("input[name=password]", "not the password")
        page.click("button[type=submit]")
        expect(page.locator("#login-error")).to_be_visible()
        page.fill("input[name=name]", "Ada")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        expect(page.locator("#tableview")).to_be_visible()
        assert page.url.endswith("/console#table/7")
    finally:
        context.close()

def test_phone_shows_the_room_with_the_revoke(env: Env, chromium_browser: Any) -> None:
    context = chromium_browser.new_context(viewport=PHONE, device_scale_factor=2,
                                           is_mobile=True, has_touch=True)
    page = context.new_page()
    try:
        _login(page, env.url)
        card = page.locator("#table-7")
        expect(card).to_be_visible()
        expect(card).to_contain_text("Round 2 · Board 10")
        expect(card).to_contain_text("Established revoke by East")
        expect(card).to_contain_text("Director called (S)")
        expect(card).to_contain_text("online")
        # the table with a call and an alert first, then the others by number
        expect(page.locator(".tcard")).to_have_count(3)
        assert page.locator(".tcard").evaluate_all("cs => cs.map(c => c.dataset.table)") == \
            ["7", "3", "12"]
        # the room fits the phone's width: no sideways scrolling
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        page.screenshot(path=str(IMG / "console-room-phone.png"))
        # the same room in Vietnamese and Chinese: the controller's alert text in that language
        page.select_option("#lang", "vi")
        expect(card).to_contain_text("Lỗi đánh sai được xác định")
        expect(page.locator("header h1")).to_have_text("Bàn điều khiển trọng tài")
        page.select_option("#lang", "zh")
        expect(card).to_contain_text("藏牌成立")
        card.click()
        expect(page.locator("#tableview")).to_be_visible()
        page.locator("li.alert[data-code=REVOKE]").click()
        expect(page.locator("#options button[data-ruling=adjust]")).to_be_visible()
        page.screenshot(path=str(IMG / "console-table-phone.png"), full_page=True)
    finally:
        context.close()


def _health(table: str, **faults: Any) -> dict[str, Any]:
    """A ``bridge/{t}/health`` as the bridge publishes it: every counter, most of them
    normal work (events sent, sequence numbers, the spool's size)."""
    readers = {name: {"kind": "inventory", "open": True, "connected": True, "anomalies": {}}
               for name in ("north", "east", "south", "west")}
    readers["north"]["anomalies"] = faults.pop("north_anomalies", {})
    return {"v": 1, "src": f"table-{table}-pi", "table": table, "ts": time.time(),
            "connected": True, "spool_depth": 0, "spool_max": 200000, "spool_refused": 0,
            "next_seq": 252, "boot": "8b5152cd0def4bcf", "acked_seq": 251, "resends": 0,
            "readers": readers, "events": 251, "buttons": 0, "unknown_tags": 0,
            "duplicate_sightings": 0, "last_duplicate": None, "unmapped_antennas": 0,
            "last_unmapped": None, "bad_indicators": 0, "last_bad_indicator": None,
            "output_errors": 0, **faults}


def test_the_room_shows_reader_faults_not_the_bridge_s_counters(
        env: Env, chromium_browser: Any) -> None:
    """A healthy table's health (events, sequence numbers, the spool's size) is no reader
    trouble: its card says nothing of readers, and its table view says all is well; a
    reader's anomaly and a fault counter are shown, in words a director reads."""
    _publish(env.broker, "bridge/3/health", _health("3"))
    _publish(env.broker, "bridge/12/health",
             _health("12", unknown_tags=3, north_anomalies={"crc_errors": 2}))
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        expect(page.locator("#table-12 .health")).to_have_text(
            "Readers: north crc_errors 2, unknown_tags 3")
        expect(page.locator("#table-3")).to_be_visible()
        expect(page.locator("#table-3 .health")).to_have_count(0)
        page.locator("#table-3").click()
        expect(page.locator("#tableview")).to_contain_text("Readers: all well")
        expect(page.locator("#tableview")).not_to_contain_text("spool_max")
    finally:
        context.close()


def test_the_adjusted_score_starts_on_the_board_on_the_table(
        env: Env, chromium_browser: Any) -> None:
    """Table 7 plays boards 9 and 10 and is on board 10: the adjusted score's board is 10
    until the director picks another, not the table's first board (a score written on the
    wrong board)."""
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        page.locator("#table-7").click()
        board = page.locator("#score-form select[name=board]")
        expect(board).to_have_value("10")
        expect(board.locator("option")).to_have_count(2)
    finally:
        context.close()


def test_a_log_that_loads_late_does_not_take_the_table_away(
        env: Env, chromium_browser: Any) -> None:
    """The ruling log is fetched, then drawn: a director who goes to a table while it loads
    (after a reversal, say) stays on the table when the log's answer comes."""
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    held: list[Any] = []
    try:
        _login(page, env.url)
        # the room drawn: the console has started (init() listens for the route only once
        # its options, deals, rounds and session are in; a slow start held the log back)
        expect(page.locator("#table-7")).to_be_visible()
        page.route("**/console/api/log", lambda route: held.append(route))
        page.click("#nav-log")
        page.wait_for_function("() => location.hash === '#log'")
        for _ in range(100):  # the log's request, held
            if held:
                break
            page.wait_for_timeout(50)
        assert held, "the log was never asked for"
        page.goto(page.url.split("#")[0] + "#table/7")
        expect(page.locator("#tableview")).to_have_attribute("data-table", "7")
        with page.expect_response("**/console/api/log"):
            held[0].continue_()
        # the page's handler of that answer runs next: give it the time to draw, if it would
        page.wait_for_timeout(500)
        expect(page.locator("#tableview")).to_have_attribute("data-table", "7")
        expect(page.locator("section#log")).to_have_count(0)
    finally:
        context.close()


def test_director_rules_on_the_revoke(env: Env, chromium_browser: Any) -> None:
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        expect(page.locator("#table-7")).to_contain_text("Established revoke by East")
        page.screenshot(path=str(IMG / "console-room-laptop.png"))
        page.click("#table-7")
        view = page.locator("#tableview")
        expect(view).to_contain_text("Table 7")
        # the controller's own Law 64A1 transfer: 9 tricks played, 11 after the revoke
        expect(page.locator("#result")).to_contain_text("Tricks 11 (as played 9)")
        expect(page.locator("#score")).to_have_text("650")
        # the hands of the deals file (the console's --deals), the auction and the play
        expect(page.locator("#hands")).to_contain_text("N\u2660AQ4 \u2665QT5 \u2666KQJT \u26638")
        expect(page.locator("table.auction")).to_contain_text("4\u2665")
        expect(page.locator("ol.play li")).to_have_count(13)
        # South's call: answered from the table view, it leaves the room's first place
        call = page.locator("#call li")
        expect(call).to_contain_text("Director called (S)")
        call.locator(".call-answer").click()
        # answered, but kept until the director closes it
        expect(call).to_contain_text("On my way (Ada)")
        page.locator("li.alert[data-code=REVOKE]").click()
        options = page.locator("#options")
        # only the rulings valid for a revoke: adjust (64C) and clear
        expect(options.locator("button")).to_have_count(2)
        expect(options).to_contain_text("Law 64C")
        options.locator("input[name=tricks]").fill("10")
        # a destructive ruling asks first: dismissed, nothing is sent
        asked = click_and_dismiss(page, options.locator("button[data-ruling=adjust]"))
        expect(page.locator("#answers li")).to_have_count(0)
        assert asked and "Adjust" in asked[0]
        page.once("dialog", lambda dialog: dialog.accept())
        options.locator("button[data-ruling=adjust]").click()
        # the controller's answer: the result published again, adjusted, and the ruling applied
        expect(page.locator("#score")).to_have_text("620")
        expect(page.locator("#result")).to_contain_text("Tricks 10 (as played 9)")
        expect(page.locator("#answers")).to_contain_text("applied")
        expect(view).to_contain_text("Established revoke by East")
        page.screenshot(path=str(IMG / "console-table-laptop.png"), full_page=True)
        call.locator(".call-ruled").click()
        expect(page.locator("#call")).to_have_count(0)
        # the ruling log: by whom, on which alert, with the controller's answer; as CSV too
        page.click("#nav-log")
        log = page.locator("#log")
        expect(log).to_contain_text("Ada")
        expect(log).to_contain_text("#1 REVOKE")
        expect(log).to_contain_text("applied")
        # the ruling as a director reads it, not the wire payload (which the CSV keeps)
        expect(log.locator("tr[data-seq] td").nth(8)).to_have_text("adjust tricks 10")
        csv = page.request.get(env.url + "/console/log.csv").text()
        assert "Ada" in csv and "REVOKE" in csv and '""tricks"":10' in csv
    finally:
        context.close()


def test_director_sees_the_tempo_and_the_claim_check(env: Env, chromium_browser: Any) -> None:
    """A board at table 21 with a slow pass after a skip bid and a slow card, claimed at
    trick 7: the table view shows each call's time, the flags and the double-dummy check."""
    pytest.importorskip("endplay.dds")
    from test_evidence import claimed_board, stamped

    from controller.evidence.claims import check_claim

    _, outs, script = claimed_board(24, 7)
    expected = check_claim([o.payload for o in outs if o.topic.endswith("/evidence")][-1]
                           ["claim"])
    client = _client(env.broker)
    try:
        # board 5 (dealer N): N Pass, E Pass, S 1H, W Pass, N 4H (a skip bid), E Pass after
        # 20 s, S Pass, W Pass; W's third card is slow
        for ev in stamped(script, {5: 20.0}, {6: 30.0}, hands_back=False):
            client.publish("bridge/21/event", json.dumps({**ev, "src": "table-21-pi"}),
                           qos=1).wait_for_publish()
        client.publish("bridge/21/ruling", json.dumps(
            {"v": 1, "src": "td-21", "seq": 1, "ts": time.time(), "ruling": "claim",
             "tricks": 7}), qos=1).wait_for_publish()
    finally:
        client.loop_stop()
        client.disconnect()
    _wait_retained(env.broker, "bridge/21/evidence", lambda d: "claim" in d)
    indicator = _wait_retained(env.broker, "bridge/21/indicator", lambda d: d.get("board") == 5)
    assert "slow" not in json.dumps(indicator) and "Law 16B" not in json.dumps(indicator)
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        # the room card says there is evidence to look at; the table view says what
        expect(page.locator("#table-21")).to_contain_text("Calls and cards to look at: 2")
        page.click("#table-21")
        flags = page.locator("#tempo-flags li")
        expect(flags).to_have_count(2)
        expect(flags.nth(0)).to_contain_text("E Pass: 20 s")
        expect(flags.nth(0)).to_contain_text("slow pass after skip · Law 16B")
        expect(flags.nth(1)).to_contain_text("(Trick 2): 30 s")
        expect(flags.nth(1)).to_contain_text("Law 73D1")
        expect(page.locator("#tempo-calls")).to_contain_text("E Pass 20 s")
        check = page.locator("#claim-check")
        expect(check).to_have_attribute("data-verdict", expected.verdict)
        expect(check).to_contain_text(f"claimed 7 / 7 · makeable {expected.makeable}")
        expect(check).to_contain_text("line: ")
        page.screenshot(path=str(IMG / "console-tempo-claim.png"), full_page=True)
    finally:
        context.close()


def _fifth_card_events(table: str) -> list[tuple[str, dict[str, Any]]]:
    """Board 5 (T06), 3NT by N; dummy wins trick 1 and is on lead, West (a defender) puts a
    card on the next trick: the controller's FIFTH_CARD waits for the director's choice
    (``params.choices`` ``penalty_card,lead``; docs/laws.md, 45E)."""
    from law_cases import T06
    from scenarios import Harness

    h = Harness(5, T06, table=table, deals_known=False)
    h.board_tag(5)
    h.scan()
    h.run("C:N:1D C:E:P C:S:1H C:W:P C:N:1N C:E:P C:S:3N C:W:P C:N:P C:E:P")
    h.run("E:C5 S:CA W:C3 N:C2")
    h.run("+W:D2")
    [alert] = h.alerts("FIFTH_CARD")[-1:]
    assert alert["params"]["choices"] == "penalty_card,lead"
    return [(topic, {**payload, "src": f"pi-{table}"}) for topic, payload in h.sent]


def test_only_the_choices_the_alert_lists_are_offered(env: Env, chromium_browser: Any) -> None:
    """An alert waiting for the director's choice (45E: penalty card or a lead) shows only
    those two rulings, not "withdrawn" (once the proper lead followed) nor "clear"; the
    server refuses the others (HTTP 400, nothing sent); the choice made goes through the
    controller and closes the alert."""
    client = _client(env.broker)
    try:
        for topic, payload in _fifth_card_events("21"):
            client.publish(topic, json.dumps(payload), qos=1).wait_for_publish()
    finally:
        client.loop_stop()
        client.disconnect()
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        page.goto(env.url + "/console#table/21")
        alert = page.locator("li.alert[data-code=FIFTH_CARD]")
        expect(alert).to_have_count(1)
        alert.click()
        options = page.locator("#options")
        buttons = options.locator("button")
        expect(buttons).to_have_count(2)
        assert buttons.evaluate_all("bs => bs.map(b => b.dataset.key)") == [
            "option:penalty_card", "lead"]
        expect(options).to_contain_text("Law 45E1")
        alert_id = int(alert.get_attribute("data-id") or "0")
        # the server's own check: what the alert does not list is refused, nothing sent
        for ruling, fixed in (("option", {"option": "withdraw"}), ("clear", {})):
            status = page.evaluate(
                """async ([body]) => (await fetch("/console/api/ruling", {method: "POST",
                     headers: {"Content-Type": "application/json",
                               "X-CSRF-Token": document.querySelector("meta[name=csrf]")
                                 .content},
                     body: JSON.stringify(body)})).status""",
                [{"table": "21", "alert": alert_id, "ruling": ruling, "fixed": fixed}])
            assert status == 400, ruling
        expect(page.locator("#answers li")).to_have_count(0)
        options.locator("button[data-key='option:penalty_card']").click()
        expect(page.locator("#answers")).to_contain_text("applied")
        expect(alert).to_have_class("alert resolved selected")
        expect(alert).to_contain_text("penalty card")
        expect(page.locator("#options.closed")).to_have_count(1)
    finally:
        context.close()


def test_the_tempo_block_says_no_calls_yet_before_the_first_call(
        env: Env, chromium_browser: Any) -> None:
    """Evidence for a board whose auction has not started: no empty "Auction:" line."""
    _publish(env.broker, "bridge/41/evidence",
             {"v": 1, "table": "41", "board": 3,
              "tempo": {"calls": [], "cards": [], "flags": []}}, retain=True)
    context = chromium_browser.new_context(viewport=LAPTOP)
    page = context.new_page()
    try:
        _login(page, env.url)
        page.click("#table-41")
        expect(page.locator("#tempo-calls")).to_have_text("Auction: no calls yet")
    finally:
        context.close()
        client = _client(env.broker)    # the retained evidence cleared
        try:
            client.publish("bridge/41/evidence", b"", qos=1, retain=True).wait_for_publish()
        finally:
            client.loop_stop()
            client.disconnect()
