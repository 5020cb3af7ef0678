"""``--listen`` for both web apps (controller/web/serving.py): a wrong value or a port in
use is one line and exit 2, before anything says it serves."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from controller.web.serving import ListenError, check_bindable, parse_listen

REPO = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1:8080", ("127.0.0.1", 8080)), ("localhost:1", ("localhost", 1)),
    ("[::1]:8443", ("::1", 8443)), (" 0.0.0.0:65535 ", ("0.0.0.0", 65535))])
def test_listen_addresses(text: str, expected: tuple[str, int]) -> None:
    assert parse_listen(text) == expected


@pytest.mark.parametrize(("text", "why"), [
    ("localhost", "must be HOST:PORT"), (":8080", "must be HOST:PORT"),
    ("localhost:http", "from 1 to 65535"), ("localhost:0", "from 1 to 65535"),
    ("localhost:70000", "from 1 to 65535")])
def test_bad_listen_addresses_say_why(text: str, why: str) -> None:
    with pytest.raises(ListenError, match=why):
        parse_listen(text)


def test_a_port_in_use_is_found_before_serving() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        with pytest.raises(ListenError, match="in use by another program"):
            check_bindable("127.0.0.1", port)
    check_bindable("127.0.0.1", port)  # free again
    with pytest.raises(ListenError, match="not an address of this machine"):
        check_bindable("no-such-host.invalid", 8080)


@pytest.mark.parametrize("command", [
    ["vugraph", "--broker", "mqtt://127.0.0.1:1"],
    ["console", "--broker", "mqtt://127.0.0.1:1", "--director-password-file", "absent"]])
def test_the_web_apps_say_a_port_in_use_in_one_line(command: list[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "controller.cli", *command, "--listen",
                               f"127.0.0.1:{port}"], cwd=REPO, capture_output=True, text=True,
                              timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "in use by another program" in proc.stderr
    assert f"on http://127.0.0.1:{port}" not in proc.stderr  # never says it serves
