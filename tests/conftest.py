from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from broker import Mosquitto  # noqa: E402

DATA = Path(__file__).parent / "data"


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A private mosquitto broker on a free loopback port for one test."""
    with Mosquitto(tmp_path / "broker") as broker:
        yield broker


@pytest.fixture
def data_dir() -> Path:
    return DATA


@pytest.fixture(scope="module")
def chromium_browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright (its own browser download is not used here).

    One per test module, not per session: Playwright's sync API leaves its event loop marked
    as running in the main thread while it is open, so an ``asyncio.run`` in a later module
    (the daemon's, the bridge's tests) would fail with "cannot be called from a running
    event loop".

    Skipped with the reason where the binary or Playwright is truly absent; ``make test``
    installs both, so CI has them.
    """
    import shutil

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (make test installs it)")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]')")
    # what a page waits for crosses the broker and the controller: on a loaded two-core
    # machine Playwright's 5 s were not always enough (a bound on waiting, not a timing)
    expect.set_options(timeout=20_000)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        try:
            yield browser
        finally:
            browser.close()
