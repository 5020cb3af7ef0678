"""The director's console against a hostile table, in a real browser (Debian's chromium under
Playwright): markup, script and bidi controls in every field a table's controller (or
anyone who may write ``bridge/{t}/...``) sends and in the session's players' names are
shown as text, never run or drawn; a field of the wrong shape never blanks the page."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from broker import Mosquitto
from test_web_limits import PASSWORD, served

from controller.broker.settings import BrokerSettings
from controller.session import load_session
from controller.web.auth import hash_password
from controller.web.console.app import build_app, rounds_of_session
from controller.web.console.state import ConsoleConfig

pytest.importorskip("playwright.sync_api", reason="playwright is not installed "
                    "(pip install -e '.[test]')")
from playwright.sync_api import expect  # noqa: E402

IMG = "<img src=x onerror=alert('xss')>"
SCRIPT = "<script>alert('xss')</script>"
BIDI = "\u202egnp.exe\u202c"
HOSTILE = f"{IMG}{SCRIPT}{BIDI}"


def _messages() -> list[tuple[str, dict[str, Any]]]:
    irregularity = {"id": 1, "code": "REVOKE", "status": "open", "seat": "N"}
    return [
        ("bridge/7/state", {"v": 1, "table": "7", "board": 1, "phase": "play", "last": None,
                            "dealer": "N", "vul": "None", "turn": "E", "contract": "4S",
                            "declarer": "N", "dummy": "S", "trick": 2,
                            "tricks": {"NS": 1, "EW": 0}, "notes": [HOSTILE],
                            "current": [{"seat": "N", "card": "SA"}],
                            "irregularities": [irregularity], "session": HOSTILE}),
        ("bridge/7/alert", {"v": 1, "id": 1, "table": "7", "board": 1, "code": "REVOKE",
                            "law": HOSTILE, "seat": "N", "trick": 2, "status": "open",
                            "text": {"en": HOSTILE, "vi": HOSTILE, "zh": HOSTILE},
                            "detail": HOSTILE, "session": HOSTILE}),
        ("bridge/7/feed", {"v": 1, "table": "7", "board": 1, "n": 1, "kind": "card",
                           "seat": "N", "card": "SA", "trick": 1, "session": HOSTILE}),
        ("bridge/7/error", {"v": 1, "table": "7", "input": "event", "error": HOSTILE,
                            "excerpt": HOSTILE}),
        # a table whose controller sends fields of the wrong shape
        ("bridge/8/state", {"v": 1, "table": "8", "board": IMG, "phase": IMG, "last": IMG,
                            "contract": {"x": 1}, "declarer": IMG, "turn": {"x": 1},
                            "tricks": IMG, "current": [IMG, {"seat": IMG}],
                            "irregularities": [IMG], "notes": IMG}),
        ("bridge/8/alert", {"v": 1, "id": 2, "table": "8", "board": {"x": 1}, "code": IMG,
                            "law": {"x": 1}, "seat": IMG, "status": IMG, "text": IMG}),
        ("bridge/8/result", {"v": 1, "table": "8", "board": 1, "contract": {"x": 1},
                             "declarer": IMG, "tricks": IMG, "score_ns": IMG}),
    ]


def test_every_field_from_the_broker_and_the_names_are_text(
        tmp_path: Path, mosquitto: Mosquitto, chromium_browser: Any) -> None:
    session_file = tmp_path / "session.toml"
    session_file.write_text(f"""[session]
event = {json.dumps(HOSTILE)}
[movement]
type = "explicit"
[[movement.round]]
"7" = {{ ns = 1, ew = 2, boards = [1] }}
"8" = {{ ns = 3, ew = 4, boards = [2] }}
[pairs]
1 = [{json.dumps("Ann " + IMG)}, {json.dumps("Bo " + BIDI)}]
2 = {{ name = {json.dumps(HOSTILE)}, players = [{json.dumps(SCRIPT)}, "Di"] }}
""")
    session = load_session(session_file)
    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(mosquitto.url),
                                  password_hash=hash_password(PASSWORD),
                                  db=tmp_path / "console.sqlite", session=session,
                                  rounds=rounds_of_session(session.movement)))
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="hostile-table")
    client.connect(mosquitto.host, mosquitto.port)
    client.loop_start()
    for topic, payload in _messages():
        client.publish(topic, json.dumps(payload), qos=1, retain=True).wait_for_publish(10)
    client.loop_stop()
    client.disconnect()
    with served(app) as url:
        context = chromium_browser.new_context(viewport={"width": 1280, "height": 800})
        page = context.new_page()
        dialogs: list[str] = []
        errors: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            page.goto(url + "/login")
            page.fill("input[name=name]", "Ada")
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            expect(page.locator("body")).to_contain_text("7")
            for fragment in ("", "#table/7", "#table/8", "#log"):
                page.goto(url + "/console" + fragment)
                page.reload()
                expect(page.locator("main, #app, body").first).to_be_visible()
                if fragment == "#table/7":
                    expect(page.locator("body")).to_contain_text("<img src=x onerror")
                    expect(page.locator("body")).to_contain_text("<script>alert")
                page.wait_for_timeout(500)     # what the event stream brings, drawn
                assert page.locator("img").count() == 0, fragment
                assert page.locator("script:not([src])").count() == 0, fragment
                shown = page.locator("body").inner_text()
                assert "\u202e" not in shown and "\u202c" not in shown, fragment
                assert shown.strip(), fragment
        finally:
            context.close()
    assert dialogs == []
    assert errors == []
