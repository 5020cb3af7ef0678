from __future__ import annotations

import ctypes.util
import platform
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from broker import Mosquitto  # noqa: E402
from tiers import SLOW_TIERS, Reader  # noqa: E402

pytest_plugins = ["pytester"]

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


# ---- the tiers: make check runs the fast one (pytest --fast), make test all of them ----------


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--fast", action="store_true", default=False,
        help="the fast tier (make check): leave out the tests marked "
             + ", ".join(SLOW_TIERS) + ", and fail a test left in that starts a process")


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks each test broker, processes or browser from what its source uses (tests/tiers.py),
    before ``-m`` selects on the marks; with ``--fast`` leaves out the slow tiers."""
    readers: dict[Path, Reader] = {}
    for item in items:
        if not isinstance(item, pytest.Function):
            continue
        path = Path(item.path)
        reader = readers.setdefault(path.parent, Reader(path.parent))
        cls = item.cls.__name__ if item.cls is not None else None
        for tier in sorted(reader.tiers_of_test(path.stem, item.originalname, cls,
                                                item.fixturenames)):
            item.add_marker(tier)
    if config.getoption("fast"):
        kept = [item for item in items
                if not any(item.get_closest_marker(tier) for tier in SLOW_TIERS)]
        kept_ids = {id(item) for item in kept}
        left_out = [item for item in items if id(item) not in kept_ids]
        if left_out:
            config.hook.pytest_deselected(items=left_out)
            items[:] = kept


class FastTierGuard:
    """Fails a test of the fast tier that starts a process or connects to a broker's port:
    the rule of tests/tiers.py that should have marked it missed it.

    An audit hook (it cannot be removed once added, so it is armed per test): it refuses the
    start, so the fast tier stays fast, and records it, so a test that catches the error fails
    all the same.
    """

    EVENTS = ("subprocess.Popen", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty",
              "os.system", "os.exec")
    MQTT_PORTS = (1883, 8883)
    #: where a child process is the standard library's probe of the machine, not the test's:
    #: ctypes.util.find_library runs ldconfig -p, platform.processor() uname -p (nfcpy)
    PROBES = frozenset({ctypes.util.__file__, platform.__file__})

    def __init__(self) -> None:
        self.armed = False
        self.seen: list[str] = []
        self._lock = threading.Lock()

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        if not self.armed:
            return
        if event in self.EVENTS:
            if self._probe():
                return
            what = f"{event} {args[1] if len(args) > 1 else args!r}"
        elif (event == "socket.connect" and isinstance(args[1], tuple) and len(args[1]) >= 2
              and args[1][1] in self.MQTT_PORTS):
            what = f"a connection to an MQTT broker at {args[1][0]}:{args[1][1]}"
        else:
            return
        with self._lock:
            self.seen.append(what)
        raise RuntimeError(f"the fast tier starts no process and connects to no broker: {what}")

    def _probe(self) -> bool:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename in self.PROBES:
                return True
            frame = frame.f_back  # type: ignore[assignment]
        return False

    def check(self, item: pytest.Item, phase: str) -> None:
        """Fails ``item`` if it started anything since the last check."""
        with self._lock:
            seen, self.seen = self.seen, []
        if seen:
            raise pytest.fail.Exception(
                f"{item.nodeid} ({phase}) is in the fast tier (not marked "
                f"{', '.join(SLOW_TIERS)}) but started: {'; '.join(seen)}. The rule of "
                "tests/tiers.py (used by tests/conftest.py) missed it: teach it what this test "
                "uses (ORIGIN_TIERS, PACKAGE_TIERS, FIXTURE_TIERS), or mark the test.",
                pytrace=False)


_GUARD = FastTierGuard()


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("fast"):
        sys.addaudithook(_GUARD.audit)


def _guarded(item: pytest.Item, phase: str) -> Iterator[None]:
    if not item.config.getoption("fast"):
        return (yield)
    _GUARD.armed = True
    try:
        return (yield)
    finally:
        # a start the test caught, or the error it raised, is reported as what it is
        _GUARD.armed = False
        _GUARD.check(item, phase)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item, "setup"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item, "call"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    return (yield from _guarded(item, "teardown"))
