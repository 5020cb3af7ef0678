"""``bridge-table`` itself: usage, ``--version``, and the conventions every command shares
(controller/commandline.py): exit codes, ``--log-level``, one log format."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.cli import COMMANDS, main, version
from controller.commandline import LOG_FORMAT, LOG_LEVELS, number_ranges

REPO = Path(__file__).resolve().parent.parent

#: the commands that take --log-level (docs/install.md: every long-running one, and verify)
LOGGING_COMMANDS = ("controller", "bridge", "run", "demo", "verify", "console", "results",
                    "score", "selftest", "vugraph", "broadcast")


def bridge_table(*args: str, env: dict[str, str] | None = None
                 ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL, env=env)


def test_numbers_in_a_message_are_written_as_ranges() -> None:
    # the one writer of "1-6, 9" (the session file's, the relay's and the dealing
    # station's messages)
    assert number_ranges([9, 3, 1, 2, 4, 5, 6]) == "1-6, 9"
    assert number_ranges([7]) == "7" and number_ranges([]) == ""
    assert number_ranges([1, 1, 2, 4, 5]) == "1, 1-2, 4-5"


def test_no_command_is_usage_on_stderr_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: bridge-table COMMAND")
    assert main(["--help"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("usage: bridge-table COMMAND") and err == ""
    assert main(["no-such-command"]) == 2
    assert "unknown command 'no-such-command'" in capsys.readouterr().err


def test_the_command_list_is_aligned(capsys: pytest.CaptureFixture[str]) -> None:
    main(["--help"])
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("  ") and line.split()[0] in COMMANDS]
    assert len(rows) == len(COMMANDS)
    # every description starts in the same column
    starts = {row.index(COMMANDS[row.split()[0]][1]) for row in rows}
    assert len(starts) == 1, rows


@pytest.mark.parametrize("args", [["--version"], ["-V"], ["replay", "--version"]])
def test_version(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 0
    text = capsys.readouterr().out.strip()
    assert text == version() and text.startswith("bridge-table ")
    assert "wire contract v1" in text


@pytest.mark.parametrize("command", LOGGING_COMMANDS)
def test_every_command_takes_the_same_log_levels(command: str) -> None:
    proc = bridge_table(command, "--log-level", "bogus")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "'bogus' is not a log level: choose from DEBUG, INFO, WARNING, ERROR" in proc.stderr
    assert "--log-level LEVEL" in bridge_table(command, "--help").stdout


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger as it was: setup_logging replaces its handlers, and a handler left on
    a captured stream that pytest closes breaks every later test's logging."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


def test_log_levels_are_taken_in_any_case_and_from_the_environment(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        root_logger: logging.Logger) -> None:
    import argparse

    from controller.commandline import add_log_level, setup_logging
    ap = argparse.ArgumentParser()
    add_log_level(ap, default="WARNING")
    monkeypatch.delenv("BRIDGE_TABLE_LOG_LEVEL", raising=False)
    assert setup_logging(ap.parse_args([])) == "WARNING"
    assert setup_logging(ap.parse_args(["--log-level", "debug"])) == "DEBUG"
    assert root_logger.level == logging.DEBUG
    monkeypatch.setenv("BRIDGE_TABLE_LOG_LEVEL", "error")
    assert setup_logging(ap.parse_args([])) == "ERROR"
    monkeypatch.setenv("BRIDGE_TABLE_LOG_LEVEL", "loud")
    assert setup_logging(ap.parse_args([])) == "WARNING"
    assert "'loud' is not a log level" in capsys.readouterr().err
    assert set(LOG_LEVELS) == {"DEBUG", "INFO", "WARNING", "ERROR"}


def test_logs_are_in_the_one_format() -> None:
    # what a command logs while running (the demo's bridge and controller at INFO)
    assert LOG_FORMAT == "%(asctime)s %(levelname)s %(name)s: %(message)s"
    proc = bridge_table("demo", "--speed", "40", "--log-level", "INFO",
                        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr[-2000:]
    logged = [line for line in proc.stderr.splitlines() if " INFO " in line]
    assert logged, proc.stderr[-2000:]
    for line in logged:
        date, clock, level, rest = line.split(" ", 3)
        assert len(date) == 10 and date[4] == "-" and clock.count(":") == 2
        assert level == "INFO" and ": " in rest


def test_a_broker_outage_is_said_once_then_at_growing_intervals(
        caplog: pytest.LogCaptureFixture) -> None:
    from controller.commandline import OutageLog
    now = [0.0]
    outage = OutageLog(logging.getLogger("test.outage"), "broker mqtt://x:1",
                       clock=lambda: now[0])
    caplog.set_level(logging.DEBUG, "test.outage")
    for _ in range(600):  # ten minutes of a retry every second
        outage.failed("connection refused", 1.0)
        now[0] += 1.0
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    # at 0 s, then 60 s later, then 120 s after that, then 240 s after that
    assert len(warnings) == 4, warnings
    assert "connection refused; retrying in 1.0 s, and again until it answers" in warnings[0]
    assert warnings[1].startswith("broker mqtt://x:1: still unreachable after 60 s (61 tries)")
    outage.recovered()
    assert caplog.records[-1].getMessage() == "broker mqtt://x:1: reachable again after 600 s"
    caplog.clear()
    outage.recovered()  # nothing to say when nothing was down
    assert caplog.records == []


def test_the_controller_does_not_warn_every_second_while_the_broker_is_down() -> None:
    from controller.broker.mosquitto import free_port
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "controller", "--broker",
                             f"mqtt://127.0.0.1:{free_port()}", "--no-journal"],
                            cwd=REPO, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        proc.wait(6)
    except subprocess.TimeoutExpired:
        proc.terminate()
    _, err = proc.communicate(timeout=30)
    warnings = [line for line in err.splitlines() if " WARNING " in line]
    assert len(warnings) == 1, err  # about five retries in those seconds, one line
    assert "retrying in 0.1 s" in warnings[0] and "Traceback" not in err


#: every command and subcommand with options of its own
HELP_PAGES = [[name] for name in COMMANDS if name not in ("sim", "firmware")] + [
    ["sim", "run"], ["sim", "play"], ["firmware", "flash"], ["broadcast", "release"],
    ["broadcast", "status"], ["console", "passwd"]]


@pytest.mark.parametrize("page", HELP_PAGES, ids=" ".join)
def test_every_option_says_what_it_is_for(page: list[str]) -> None:
    import re
    proc = bridge_table(*page, "--help", env={**os.environ, "COLUMNS": "200"})
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    bare = []
    for i, line in enumerate(lines):
        found = re.match(r"^  (-\S.*?)(\s{2,}\S.*)?$", line)
        if found and not found.group(2):
            following = lines[i + 1] if i + 1 < len(lines) else ""
            if not re.match(r"^\s{6,}\S", following):
                bare.append(found.group(1))
    assert bare == [], f"options without help: {bare}"
    assert "``" not in proc.stdout  # reStructuredText is for the docs, not the terminal
