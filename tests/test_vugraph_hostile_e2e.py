"""The vugraph against a hostile table, end to end: mosquitto, the controller, the relay
(``bridge-table broadcast --release live``) and the vugraph as processes, and chromium.

A table's own Pi may write ``bridge/{t}/feed`` (``broker-config --table-controllers``) and
anyone who can reach the broker may try ``state``, ``result`` and ``alert``: markup, script
and bidi payloads are put in every field that reaches the vugraph (the feed's seat, card
and call, the state's contract and declarer, the result, an alert's code, Law, text and
detail, the state's notes), in the session file's event and names, and in the commentary.
The relay refuses what does not decode as its wire Struct, and ``broadcast status`` reports
it; what does decode (a name, a Law, a text, a commentary line) is shown as text, never run
or drawn, and with no bidi control.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from boardevents import EventWriter
from broker import Mosquitto
from mqttwatch import wait_until
from test_broadcast_e2e import Stack, operator, relay_took, script, status
from test_vugraph_browser import BIDI, IMG, SCRIPT, WatchedPage

from controller.broadcast.outgoing import problem, public_kind

SESSION = "hostile-1"
#: markup and script, as in the vugraph's own test; TOML-safe (no double quote, no backslash)
HOSTILE = f"{IMG}{SCRIPT}{BIDI}"
SCHEDULE = f"""
[session]
id = "{SESSION}"
event = "Open {HOSTILE}"

[pairs]
"1" = "Ann {IMG} - Bo {SCRIPT}{BIDI}"
"2" = "{HOSTILE} - Cy Ngo"

[[round]]
number = 1
[round.tables]
"1" = {{ ns = 1, ew = 2, boards = [1] }}
"""
#: the board's events up to the end of the auction and two tricks: the hostile messages
#: come in the middle of the play
MIDWAY = 1 + 104 + 8 + 8


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("vugraph-hostile")
    with Mosquitto(tmp / "broker") as broker:
        s = Stack(tmp, broker, SCHEDULE, ("--release", "live"))
        try:
            yield s
        finally:
            s.stop()


def _latest(stack: Stack, topic: str, **match: Any) -> dict[str, Any]:
    with stack.bridge.lock:
        found = [p for t, p, _ in stack.bridge.seen if t == topic and p and
                 all(p.get(k) == v for k, v in match.items())]
    assert found, f"no {topic} {match}"
    return dict(found[-1])


def hostile_messages(stack: Stack) -> tuple[list[tuple[str, dict[str, Any]]],
                                            list[tuple[str, dict[str, Any]]]]:
    """(refused, shown): what the relay must refuse (not its wire Struct), and what decodes
    and reaches the page as text; each built on a real message of the board."""
    card = _latest(stack, "bridge/1/feed", kind="card")
    call = _latest(stack, "bridge/1/feed", kind="call")
    state = _latest(stack, "bridge/1/state", board=1)
    alert = {"v": 1, "id": 90, "table": "1", "board": 1, "code": "INSUFFICIENT_BID",
             "law": HOSTILE, "seat": "N", "trick": None, "status": "open",
             "text": {"en": HOSTILE, "vi": HOSTILE, "zh": HOSTILE}, "detail": HOSTILE,
             "session": SESSION}
    refused = [
        ("bridge/1/feed", {**card, "seat": IMG, "n": 900}),
        ("bridge/1/feed", {**card, "card": SCRIPT, "n": 901}),
        ("bridge/1/feed", {**call, "call": IMG, "n": 902}),
        ("bridge/1/feed", {**card, "seat": f"N{BIDI}", "n": 903}),
        ("bridge/1/state", {**state, "contract": {"x": 1}}),
        ("bridge/1/state", {**state, "declarer": IMG}),
        ("bridge/1/alert", {**alert, "id": 91, "code": IMG}),
        ("bridge/1/result", {"v": 1, "table": "1", "board": 1, "dealer": "N", "vul": "None",
                             "contract": IMG, "declarer": SCRIPT, "tricks": 9,
                             "tricks_played": 9, "score_ns": 400, "irregularities": [],
                             "session": SESSION}),
    ]
    shown = [("bridge/1/alert", alert),
             ("bridge/1/state", {**state, "notes": [HOSTILE]})]
    return refused, shown


def test_the_relay_refuses_the_hostile_table_and_reports_it(stack: Stack) -> None:
    out = operator(stack, "comment", f"Board 1: {HOSTILE}")
    assert out.returncode == 0, out.stderr
    events = list(EventWriter("pi-1").board(script(1)))
    for ev in events[:MIDWAY]:
        stack.bridge.publish("bridge/1/event", ev)
    wait_until(lambda: any(t == "public/1/feed" and p and p.get("kind") == "card"
                           for t, p, _ in stack.public.snapshot()), 30, "cards released live")
    refused, shown = hostile_messages(stack)
    for topic, payload in refused + shown:
        stack.bridge.publish(topic, payload)
    for ev in events[MIDWAY:]:
        stack.bridge.publish("bridge/1/event", ev)
    wait_until(lambda: any(t == "public/1/board/1" and p.get("status") == "complete"
                           for t, p, _ in stack.public.snapshot()), 30, "the board released")
    relay_took(stack, "sentinel-hostile-taken", "relay")
    relay_took(stack, "sentinel-hostile-released", "relay")   # and its release step since
    # nothing the relay published is other than its wire Struct, and no markup went out
    # but as the text of a name, a Law, a text or the commentary
    public = stack.public.snapshot()
    for topic, payload, _ in public:
        kind = public_kind(topic)
        assert kind is not None and problem(kind, payload) is None, (topic, payload)
    feeds = json.dumps([p for t, p, _ in public if t.endswith(("/feed", "/now", "/result"))])
    assert "<img" not in feeds and "<script" not in feeds and '"x": 1' not in feeds
    view = [p for t, p, _ in public if t == "public/1/board/1"][-1]
    assert len(view["cards"]) == 52 and view["result"]["contract"] == "4H"
    assert any(i.get("law") == HOSTILE for i in view["irregularities"])
    # each refusal reported: the log, and broadcast status for the operator
    log = stack.log("relay")
    assert "refused: public/1/feed" in log and "refused: public/1/now" in log
    assert "refused: public/1/alert" in log
    # the relay stores its refusals once a second: wait for the store to hold them all
    # (an earlier save may already count six, before the alert's refusal)
    expected = {"public/1/feed", "public/1/now", "public/1/alert"}
    wait_until(lambda: expected <= {r["topic"] for r in status(stack)["refused"]["recent"]},
               10, "the refusals stored")
    assert status(stack)["refused"]["count"] >= 6
    assert "Refused (not published, not of the wire contract)" in operator(stack, "status").stdout
    # the live files: the whole board, the names without their bidi controls
    for suffix in ("lin", "pbn"):
        text = (stack.tmp / "out" / f"table-1.{suffix}").read_text(encoding="utf-8")
        assert "Ann" in text and "\u202e" not in text and "\u202c" not in text


PAGES = ("#/", "#/table/1", "#/table/1/1", "#/board/1")


def test_the_page_shows_the_hostile_table_as_text(stack: Stack, chromium_browser: Any) -> None:
    from playwright.sync_api import expect

    watched = WatchedPage(chromium_browser)
    try:
        for hash_ in PAGES:
            page = watched.open(f"{stack.web}/{hash_}")
            if hash_ == "#/":
                expect(page.locator("#event")).to_contain_text("Open <img src=x")
                expect(page.locator("#commentary")).to_contain_text("Board 1: <img src=x")
                expect(page.locator("#commentary")).to_contain_text("<script>alert")
            elif hash_.startswith("#/table/1"):
                expect(page.locator("#hand-N")).to_contain_text("Ann <img src=x")
                expect(page.locator("#irregularities")).to_contain_text("<script>alert")
                expect(page.locator("#result")).to_contain_text("4")
            else:
                expect(page.locator("main#main")).to_contain_text("<img src=x")
            watched.assert_text_only(hash_)
    finally:
        watched.close()


def test_no_process_failed(stack: Stack) -> None:
    for name in ("controller", "relay", "vugraph"):
        assert stack.procs[name].poll() is None, name
        assert "Traceback" not in stack.log(name), name
