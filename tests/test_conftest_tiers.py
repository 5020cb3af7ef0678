"""The tiers tests/conftest.py marks (tests/tiers.py): what a test's source uses puts it in
broker, processes or browser, and the fast tier's guard fails a test the rule missed."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from tiers import Reader, tier_of_origin

HERE = Path(__file__).resolve().parent

# a helper module of tests/ as tests/broker.py is: a launcher and a function that starts none
BROKER = """
from controller.broker.mosquitto import Mosquitto, free_port

def venue_broker(workdir):
    return Mosquitto(workdir, port=free_port())
"""

# a helper module that starts processes, as tests/faultsession.py does, and one name that
# starts none
HELPER = """
import subprocess
import sys

PYTHON = [sys.executable, "-c"]

def launch(code):
    return subprocess.Popen([*PYTHON, code])

class Session:
    def start(self):
        return launch("pass")

def parse(text):
    return text.split()
"""

MODULE = """
import asyncio
import os
import subprocess
import sys
from subprocess import run as run_command

import pytest

from broker import Mosquitto, free_port, venue_broker
from helper import Session, parse

PY = sys.executable


def _spawn():
    return run_command(["true"])


@pytest.fixture
def child():
    yield subprocess.Popen(["sleep", "1"])


@pytest.fixture
def plain():
    return 1


def test_pure():
    assert parse("a b") == ["a", "b"]


def test_uses_a_free_port():
    assert free_port() > 0


def test_subprocess():
    subprocess.run(["true"])


def test_imported_run_through_a_module_function():
    _spawn()


def test_constant_of_the_module():
    assert PY


def test_asyncio_child():
    asyncio.run(asyncio.create_subprocess_exec("true"))


def test_fork():
    os.fork()


def test_broker(tmp_path):
    Mosquitto(tmp_path)


def test_helper_broker(tmp_path):
    venue_broker(tmp_path)


def test_helper_session():
    Session().start()


def test_fixture_child(child):
    pass


def test_fixture_plain(plain):
    pass


def test_conftest_broker(mosquitto):
    pass


def test_conftest_browser(chromium_browser):
    pass


class TestInAClass:
    def _helper(self):
        return subprocess.check_output(["true"])

    def test_method_helper(self):
        self._helper()

    def test_method_pure(self):
        assert True


def make_test():
    def test():
        pass
    return test


test_made = make_test()
"""


@pytest.fixture
def reader(tmp_path: Path) -> Reader:
    (tmp_path / "broker.py").write_text(BROKER, encoding="utf-8")
    (tmp_path / "helper.py").write_text(HELPER, encoding="utf-8")
    (tmp_path / "test_mod.py").write_text(MODULE, encoding="utf-8")
    return Reader(tmp_path)


@pytest.mark.parametrize(("test", "cls", "fixtures", "tiers"), [
    ("test_pure", None, [], set()),
    ("test_uses_a_free_port", None, [], set()),
    ("test_subprocess", None, [], {"processes"}),
    ("test_imported_run_through_a_module_function", None, [], {"processes"}),
    ("test_constant_of_the_module", None, [], {"processes"}),
    ("test_asyncio_child", None, [], {"processes"}),
    ("test_fork", None, [], {"processes"}),
    ("test_broker", None, ["tmp_path"], {"broker"}),
    ("test_helper_broker", None, ["tmp_path"], {"broker"}),
    ("test_helper_session", None, [], {"processes"}),
    ("test_fixture_child", None, ["child"], {"processes"}),
    ("test_fixture_plain", None, ["plain"], set()),
    ("test_conftest_broker", None, ["mosquitto", "tmp_path"], {"broker"}),
    ("test_conftest_browser", None, ["chromium_browser"], {"browser"}),
    ("test_method_helper", "TestInAClass", [], {"processes"}),
    ("test_method_pure", "TestInAClass", [], set()),
])
def test_a_test_is_in_the_tiers_of_what_it_uses(
        reader: Reader, test: str, cls: str | None, fixtures: list[str], tiers: set[str]) -> None:
    assert reader.tiers_of_test("test_mod", test, cls, fixtures) == tiers


def test_a_test_not_found_in_its_module_is_read_as_the_whole_module(reader: Reader) -> None:
    assert reader.tiers_of_test("test_mod", "test_made", None, []) == {"processes", "broker"}


@pytest.mark.parametrize(("origin", "tier"), [
    ("subprocess", "processes"), ("subprocess.run", "processes"),
    ("sys.executable", "processes"), ("sys.argv", None), ("os.path.join", None),
    ("multiprocessing.get_context", "processes"), ("asyncio.run", None),
    ("controller.broker.mosquitto.Mosquitto", "broker"),
    ("controller.broker.mosquitto.free_port", None),
    ("playwright.sync_api.sync_playwright", "browser"),
])
def test_origins(origin: str, tier: str | None) -> None:
    assert tier_of_origin(origin) == tier


def test_the_suites_helpers_are_read_as_starting_processes() -> None:
    """The helper modules of tests/ that start processes put the tests that use them in
    their tier, read from their source, not from a list."""
    reader = Reader(HERE)
    for module, name, tier in [("faultsession", "Session", "processes"),
                               ("bridgerestart", "RestartSession", "processes"),
                               ("broker", "venue_broker", "broker")]:
        assert tier in reader._tiers_of_definition(module, name), (module, name)


def _suite_in(pytester: pytest.Pytester) -> None:
    """tests/conftest.py and the helpers it imports, in pytester's directory."""
    for name in ("conftest.py", "tiers.py", "broker.py"):
        shutil.copy(HERE / name, pytester.path / name)
    pytester.makeini(textwrap.dedent("""
        [pytest]
        markers =
            fault: f
            broker: b
            processes: p
            browser: b
            slow: s
    """))


def test_the_marks_select_and_fast_leaves_the_slow_tiers_out(pytester: pytest.Pytester) -> None:
    _suite_in(pytester)
    pytester.makepyfile(test_two="""
        import subprocess

        def test_pure():
            assert True

        def test_child():
            subprocess.run(["true"], check=True)
    """)
    processes = pytester.runpytest_subprocess("-m", "processes", "--collect-only", "-q")
    assert "test_two.py::test_child" in processes.stdout.str()
    assert "test_two.py::test_pure" not in processes.stdout.str()
    fast = pytester.runpytest_subprocess("--fast", "-v")
    fast.assert_outcomes(passed=1, deselected=1)
    assert "test_two.py::test_pure PASSED" in fast.stdout.str()


def test_the_fast_tier_fails_a_test_the_rule_missed(pytester: pytest.Pytester) -> None:
    _suite_in(pytester)
    pytester.makepyfile(test_hidden="""
        import importlib

        def test_hidden_child():
            # the module's name is not in the source: no rule can see it
            importlib.import_module("sub" + "process").run(["true"])

        def test_hidden_child_caught():
            try:
                importlib.import_module("sub" + "process").run(["true"])
            except Exception:
                pass

        def test_a_standard_library_probe_is_not_the_tests():
            import platform
            platform.processor()  # uname -p, as nfcpy asks

        def test_hidden_broker():
            import socket
            with socket.socket() as sock:
                try:
                    sock.connect(("127.0.0.1", 1883))
                except OSError:
                    pass
    """)
    fast = pytester.runpytest_subprocess("--fast")
    fast.assert_outcomes(failed=3, passed=1)
    output = fast.stdout.str()
    assert "test_hidden.py::test_hidden_child (call) is in the fast tier" in output
    assert "test_hidden.py::test_hidden_child_caught (call) is in the fast tier" in output
    assert "a connection to an MQTT broker at 127.0.0.1:1883" in output
    assert "missed it" in output
    # without --fast (make test) nothing is refused
    pytester.runpytest_subprocess().assert_outcomes(passed=4)


def test_a_modules_tests_that_share_a_stack_keep_their_order_on_two_workers(
        pytester: pytest.Pytester) -> None:
    """make test's -n 2 --dist loadfile: a module's tests run on one worker, in order, as
    tests/test_broadcast_e2e.py's numbered tests on one stack need (pytest-xdist's loadgroup
    would not keep them together under pytest 9: its group suffix on the node id is lost)."""
    pytest.importorskip("xdist")
    _suite_in(pytester)
    pytester.makepyfile(test_stack="""
        import pytest

        @pytest.fixture(scope="module")
        def stack():
            return []

        def test_1_starts(stack):
            stack.append(1)

        def test_2_goes_on(stack):
            assert stack == [1]

        def test_3_goes_on(stack):
            stack.append(3)
            assert stack == [1, 3]
    """, test_other="""
        def test_a():
            pass

        def test_b():
            pass
    """)
    pytester.runpytest_subprocess("-n", "2", "--dist", "loadfile").assert_outcomes(passed=5)
