"""The browser the web tests use: Debian's Chromium under Playwright renders a page."""

from __future__ import annotations

from typing import Any


def test_chromium_renders_a_page(chromium_browser: Any) -> None:
    page = chromium_browser.new_page(viewport={"width": 360, "height": 740})
    try:
        page.set_content("<main><h1 id=t>Bàn 7 · 第7桌</h1><button>Accept</button></main>")
        assert page.inner_text("#t") == "Bàn 7 · 第7桌"
        assert page.evaluate("window.innerWidth") == 360
    finally:
        page.close()
