"""The vugraph against a hostile feed, in a real browser (Debian's chromium under Playwright),
and its security headers as ``curl -D-`` reads them.

Every text that reaches the page (the event, the session, the commentary, the pairs' and
players' names, an irregularity's code, Law, text and detail) carries markup, script and
bidi controls; the page must show them as text, never run or draw them. Fields that are
not what the wire contract says (put in the store behind the relay's check: a contract
that is an object, a seat that is markup) show as missing and never blank a page.
"""

from __future__ import annotations

import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from broker import free_port

from controller.web.app import CSP
from controller.web.vugraph.app import Store, build_app

DEAL = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"
IMG = "<img src=x onerror=alert('xss')>"
SCRIPT = "<script>alert('xss')</script>"
BIDI = "\u202egnp.exe\u202c"
HOSTILE = f"{IMG}{SCRIPT}{BIDI}"
CARDS = [["W", "SK"], ["N", "S4"], ["E", "S3"], ["S", "S5"]]


def _view(table: str, board: int, **extra: Any) -> dict[str, Any]:
    return {"v": 1, "session": HOSTILE, "table": table, "board": board, "deal": DEAL,
            "dealer": "N", "vul": "None", "status": "complete", "event": HOSTILE,
            "round": 1, "ns": f"1{IMG}", "ew": HOSTILE,
            "players": {"ns": f"Ann {IMG} - Bo {SCRIPT}", "ew": HOSTILE},
            "calls": [["N", "1NT", 1], ["E", "Pass", None], ["S", "3NT", None],
                      ["W", "Pass", None], ["N", "Pass", None], ["E", "Pass", None]],
            "cards": CARDS,
            "irregularities": [{"id": 1, "code": "INSUFFICIENT_BID", "law": HOSTILE,
                                "seat": "N", "status": "resolved", "detail": HOSTILE,
                                "text": {"en": HOSTILE, "vi": HOSTILE, "zh": HOSTILE}}],
            "claim": {"tricks": 9},
            "result": {"contract": "3NT", "declarer": "S", "tricks": 9, "tricks_played": 1,
                       "score_ns": 400, "table": table, "session": HOSTILE},
            **extra}


def hostile_store() -> Store:
    store = Store()
    assert store.take("public/session", {"v": 1, "session": HOSTILE, "tables": ["1", "2"],
                                         "event": HOSTILE})
    assert store.take("public/commentary", {"v": 1, "session": HOSTILE, "text": HOSTILE,
                                            "at": 1.0})
    assert store.take("public/1/now", {"v": 1, "session": HOSTILE, "table": "1", "board": 2,
                                       "phase": "play", "contract": "4H", "declarer": "S"})
    for table in ("1", "2"):
        assert store.take(f"public/{table}/board/1", _view(table, 1))
        assert store.take(f"public/{table}/snapshot", _view(table, 1))
    # behind the relay's check: what a page must survive all the same
    bad = _view("3", 1, dealer=IMG, vul={"x": 1}, deal=f"N:{IMG}",
                calls=[[IMG, IMG, IMG], "x", None], cards=[[IMG, "SA"], ["N", IMG], 7],
                irregularities=[{"id": IMG, "code": {"x": 1}, "text": IMG}, "x"],
                claim=IMG, players=IMG)
    bad["board"] = "<b>1</b>"
    bad["result"] = {"contract": {"x": 1}, "declarer": IMG, "tricks": IMG, "score_ns": IMG}
    store.snapshots[(HOSTILE, "3")] = bad
    store.boards[(HOSTILE, "3", 1)] = bad
    store.now[(HOSTILE, "3")] = {"board": 1, "contract": {"x": 1}, "declarer": IMG}
    store.now[(HOSTILE, "2")] = {"board": IMG, "contract": IMG}
    return store


@pytest.fixture(scope="module")
def served() -> Iterator[str]:
    """The vugraph's app on a free loopback port (uvicorn in a thread), its store hostile."""
    import uvicorn

    port = free_port()
    config = uvicorn.Config(build_app(hostile_store()), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="off", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "the vugraph did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def test_curl_reads_the_consoles_security_headers(served: str) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    for path in ("/", "/api/state", "/static/vugraph.js"):
        head = subprocess.run([curl, "-sS", "-D-", "-o", "/dev/null", served + path],
                              capture_output=True, text=True, timeout=30, check=True).stdout
        lines = {k.strip().lower(): v.strip() for k, _, v in
                 (x.partition(":") for x in head.splitlines()[1:] if ":" in x)}
        assert head.startswith("HTTP/1.1 200"), head
        assert lines["content-security-policy"] == CSP
        assert "frame-ancestors 'none'" in lines["content-security-policy"]
        assert lines["x-content-type-options"] == "nosniff"
        assert lines["referrer-policy"] == "no-referrer"


PAGES = ("#/", "#/table/1", "#/table/1/1", "#/table/2", "#/table/3", "#/table/3/1",
         "#/board/1")


class WatchedPage:
    """A chromium page whose dialogs (an ``alert`` run by injected markup) and script
    errors (a field that blanked the page) are collected, for ``assert_text_only``."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1200, "height": 900})
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, url: str) -> Any:
        """``url`` (a vugraph address with its ``#/...`` route) loaded and drawn."""
        from playwright.sync_api import expect

        self.page.goto(url)
        self.page.reload()   # a hash change alone does not load the page again
        expect(self.page.locator("main#main > *").first).to_be_visible()
        return self.page

    def assert_text_only(self, where: str) -> None:
        """Markup shown is never markup made: no image, no script but the page's own, no
        bidi control in what is shown, and (``close``) no dialog and no script error."""
        page = self.page
        assert page.locator("main img, header img, #commentary img").count() == 0, where
        assert page.locator("script").count() == 1, where
        assert page.locator("[onerror], [onload], iframe, object, embed").count() == 0, where
        shown = page.locator("body").inner_text()
        assert "\u202e" not in shown and "\u202c" not in shown, where
        assert self.dialogs == [] and self.errors == [], where

    def close(self) -> None:
        self.page.close()
        assert self.dialogs == []
        assert self.errors == []


def test_the_page_shows_every_hostile_field_as_text(served: str,
                                                    chromium_browser: Any) -> None:
    from playwright.sync_api import expect

    watched = WatchedPage(chromium_browser)
    try:
        for hash_ in PAGES:
            page = watched.open(f"{served}/{hash_}")
            main = page.locator("main#main")
            if hash_ == "#/":
                expect(page.locator("#tables tbody tr")).to_have_count(3)
                expect(page.locator("#commentary")).to_contain_text("<img src=x")
                expect(page.locator("#event")).to_contain_text("<script>alert")
            elif hash_ in ("#/table/1", "#/table/1/1", "#/table/2"):
                expect(page.locator("#board-title")).to_contain_text("<img src=x")
                expect(page.locator("#irregularities")).to_contain_text("<script>alert")
                expect(page.locator("#hand-N")).to_contain_text("Ann <img src=x")
                expect(page.locator("#result")).to_contain_text("9")
            elif hash_.startswith("#/table/3"):
                # every malformed field missing, the rest drawn
                expect(page.locator("#auction")).to_be_visible()
                expect(page.locator("#hand-N")).to_be_visible()
            else:
                expect(page.locator("#results tbody tr")).to_have_count(2)
                expect(main).to_contain_text("<img src=x")
            assert page.locator("b:has-text('1')").count() == 0 or hash_ != "#/table/3"
            watched.assert_text_only(hash_)
    finally:
        watched.close()
