"""What no request can take down (controller/web/limits.py), against real servers: uvicorn
in a thread for the throttle, the streams and the timeouts, the ``bridge-table console``
command in a process for the body limit's memory and 2,000 idle connections."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from broker import free_port

from controller.broker.settings import BrokerSettings
from controller.web.auth import LoginThrottle, hash_password, write_password_file
from controller.web.console.app import build_app
from controller.web.console.routes import Logins
from controller.web.console.state import ConsoleConfig
from controller.web.limits import (
    ClientAddress,
    Limits,
    StreamCounter,
    _forwarded_client,
    parse_trusted,
    uvicorn_config,
)
from controller.web.vugraph.app import Store
from controller.web.vugraph.app import build_app as vugraph_app

#: each test serves an app (uvicorn in a thread, or the command in a process): seconds each
pytestmark = pytest.mark.slow

PASSWORD = "correct horse battery"
#: a broker nobody listens on: the console serves its pages all the same
NO_BROKER = "mqtt://127.0.0.1:9"


@contextmanager
def served(app: Any, limits: Limits | None = None) -> Iterator[str]:
    """``app`` served as the commands serve it (``uvicorn_config``), in a thread."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn_config(app, "127.0.0.1", port, limits=limits))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def console(tmp_path: Path, trusted: frozenset[str] = frozenset(),
            names: tuple[str, ...] = (), **logins: Any) -> Any:
    """The console's app; ``names``: each its own account (else one shared password)."""
    accounts = {name: hash_password(PASSWORD) for name in names}
    app = build_app(ConsoleConfig(broker=BrokerSettings.from_url(NO_BROKER),
                                  password_hash="" if names else hash_password(PASSWORD),
                                  accounts=accounts, db=tmp_path / "console.sqlite",
                                  trusted_proxies=trusted))
    app.state.logins = Logins(**logins)
    return app


def test_forwarded_for_is_read_only_from_a_trusted_proxy() -> None:
    trusted = parse_trusted(["10.0.0.1, ::1", "10.0.0.2"])
    assert trusted == {"10.0.0.1", "::1", "10.0.0.2"}
    assert _forwarded_client("1.2.3.4, 5.6.7.8, 10.0.0.2", trusted) == "5.6.7.8"
    assert _forwarded_client("10.0.0.2", trusted) is None
    assert _forwarded_client("bogus", trusted) is None
    with pytest.raises(ValueError, match="not an IP address"):
        parse_trusted(["proxy.local"])
    seen: list[Any] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["client"])

    import asyncio
    for peer in ("10.0.0.1", "10.0.0.9"):
        asyncio.run(ClientAddress(app, trusted)(
            {"type": "http", "client": (peer, 5), "headers": [(b"x-forwarded-for",
                                                                  b"9.9.9.9")]}, None, None))
    assert seen == [("9.9.9.9", 0), ("10.0.0.9", 5)]


def _wrong(url: str, name: str, forwarded: str) -> int:
    return httpx.post(url + "/login", data={"name": name, "password": "wrong"},
                      headers={"X-Forwarded-For": forwarded}, follow_redirects=False,
                      timeout=30).status_code


def test_rotating_forwarded_for_does_not_bypass_the_throttle(tmp_path: Path) -> None:
    app = console(tmp_path, throttle=LoginThrottle(delay=0.01, limit=5),
                  accounts=LoginThrottle(delay=0.01, limit=1000))
    with served(app) as url:
        codes = [_wrong(url, f"d{i}", f"203.0.113.{i}") for i in range(7)]
    assert codes == [401] * 5 + [429] * 2


def test_a_per_account_limit_holds_when_addresses_rotate(tmp_path: Path) -> None:
    app = console(tmp_path, trusted=frozenset({"127.0.0.1"}), names=("Ada", "Bo"),
                  throttle=LoginThrottle(delay=0.01, limit=5),
                  accounts=LoginThrottle(delay=0.01, limit=8))
    with served(app) as url:
        codes = [_wrong(url, "Ada", f"203.0.113.{i}") for i in range(10)]
        other = _wrong(url, "Bo", "203.0.113.99")
    # each address tried once (under its own limit); the account was locked all the same
    assert codes == [401] * 8 + [429] * 2
    assert other == 401


def test_guesses_under_many_names_at_the_shared_password_are_one_accounts(
        tmp_path: Path) -> None:
    """A file of one password shared by all (any name logs in): the names rotated with the
    addresses still count against the one account."""
    app = console(tmp_path, trusted=frozenset({"127.0.0.1"}),
                  throttle=LoginThrottle(delay=0.01, limit=5),
                  accounts=LoginThrottle(delay=0.01, limit=4))
    with served(app) as url:
        codes = [_wrong(url, f"name{i}", f"203.0.113.{i}") for i in range(6)]
    assert codes == [401] * 4 + [429] * 2


def test_logout_ends_the_sessions_streams_and_needs_the_token(tmp_path: Path) -> None:
    app = console(tmp_path)
    with served(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        assert client.post("/login", data={"name": "d", "password": PASSWORD}).status_code \
            in (200, 303)
        csrf = re.search(r'name="csrf" content="([^"]+)"',
                         client.get("/console").text)
        assert csrf is not None
        ended = threading.Event()
        lines: list[str] = []

        def read() -> None:
            with client.stream("GET", "/console/events") as events:
                for line in events.iter_lines():
                    lines.append(line)
            ended.set()

        threading.Thread(target=read, daemon=True).start()
        deadline = time.monotonic() + 20
        while not any(x.startswith("event: snapshot") for x in lines) and \
                time.monotonic() < deadline:
            time.sleep(0.05)
        assert any(x.startswith("event: snapshot") for x in lines)
        refused = client.post("/logout", data={}, follow_redirects=False)
        assert refused.status_code == 403
        assert not ended.wait(1.0)                       # nothing ended
        assert client.get("/console/api/log").status_code == 200
        assert client.post("/logout", data={"csrf": csrf.group(1)},
                           follow_redirects=False).status_code == 303
        assert ended.wait(10), "the stream went on after the logout"


def test_event_streams_are_capped_per_client(tmp_path: Path) -> None:
    app = vugraph_app(Store())
    app.state.streams = StreamCounter(2)
    with served(app) as url, httpx.Client(base_url=url, timeout=30) as client:
        with client.stream("GET", "/events") as one, client.stream("GET", "/events") as two:
            assert one.status_code == two.status_code == 200
            assert client.get("/events").status_code == 429
        deadline = time.monotonic() + 10
        while app.state.streams.open and time.monotonic() < deadline:
            time.sleep(0.05)
        assert app.state.streams.open == {}


def test_a_connection_without_a_request_is_closed_and_connections_are_capped(
        tmp_path: Path) -> None:
    app = vugraph_app(Store())
    with served(app, Limits(header_seconds=0.5, connections=20)) as url:
        port = int(url.rsplit(":", 1)[1])
        slow = socket.create_connection(("127.0.0.1", port))
        slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")        # never finished
        slow.settimeout(10)
        assert slow.recv(100) == b""                          # closed by the server
        many = [socket.create_connection(("127.0.0.1", port)) for _ in range(30)]
        try:
            for s in many:
                s.settimeout(10)
            closed = sum(1 for s in many[20:] if _closed(s))
            assert closed == 10
            # the 20 held sent nothing: the header timeout closes them, and room is made
            assert all(_closed(s) for s in many[:20])
            assert httpx.get(url + "/api/state", timeout=10).status_code == 200
        finally:
            for s in many:
                s.close()
        slow.close()


def _closed(s: socket.socket) -> bool:
    try:
        return s.recv(100) == b""
    except (ConnectionResetError, TimeoutError):
        return True


# -- the command in a process: its memory, its file limit ------------------------------------
@pytest.fixture
def console_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    password_file = tmp_path / "console-password"
    write_password_file(password_file, PASSWORD)
    port = free_port()
    log = (tmp_path / "console.log").open("wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "console", "--broker", NO_BROKER,
         "--director-password-file", str(password_file), "--db",
         str(tmp_path / "console.sqlite"), "--listen", f"127.0.0.1:{port}"],
        stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/login", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        else:
            raise AssertionError((tmp_path / "console.log").read_text())
        yield proc, url
    finally:
        proc.terminate()
        proc.wait(10)
        log.close()


def _rss_kib(pid: int) -> int:
    text = Path(f"/proc/{pid}/status").read_text()
    match = re.search(r"VmRSS:\s+(\d+)", text)
    assert match is not None
    return int(match.group(1))


def _post_body(port: int, size: int) -> bytes:
    """POST /login with a body of ``size`` bytes, sent as fast as the server takes it;
    what the server answered."""
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(10)
        s.sendall(b"POST /login HTTP/1.1\r\nHost: x\r\nContent-Type: "
                  b"application/x-www-form-urlencoded\r\nContent-Length: " +
                  str(size).encode() + b"\r\n\r\n")
        chunk = b"a" * 65536
        try:
            for _ in range(size // len(chunk)):
                s.sendall(chunk)
        except OSError:
            pass       # the server answered and closed: the rest was never read
        try:
            return s.recv(1000)
        except OSError:
            return b""


def test_a_1_mb_login_is_refused_unread_and_memory_does_not_grow(
        console_process: tuple[subprocess.Popen[bytes], str]) -> None:
    proc, url = console_process
    port = int(url.rsplit(":", 1)[1])
    assert _post_body(port, 1 << 20).startswith(b"HTTP/1.1 413")
    before = _rss_kib(proc.pid)
    for _ in range(30):
        assert _post_body(port, 1 << 20).startswith(b"HTTP/1.1 413")
    grown = _rss_kib(proc.pid) - before
    assert grown < 8 * 1024, f"{grown} KiB more after 30 MiB of refused bodies"
    assert httpx.post(url + "/login", data={"name": "d", "password": "wrong"},
                      timeout=30).status_code == 401


def test_2000_idle_connections_leave_a_request_answered(
        console_process: tuple[subprocess.Popen[bytes], str]) -> None:
    import resource

    proc, url = console_process
    port = int(url.rsplit(":", 1)[1])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2200:
        pytest.skip(f"this machine allows {hard} open files, the test needs 2,200")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2200) if hard ==
                                                resource.RLIM_INFINITY else hard, hard))
    idle: list[socket.socket] = []
    try:
        for _ in range(2000):
            idle.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        answered = httpx.get(url + "/login", timeout=httpx.Timeout(1.0))   # the bound
        assert answered.status_code == 200
        assert proc.poll() is None
        # the server holds them (they are not refused at the door): it closes them itself
        # once the header timeout passes
        assert len(os.listdir(f"/proc/{proc.pid}/fd")) > 2000
    finally:
        for s in idle:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def _logged_in(client: httpx.Client) -> str:
    """Log ``client`` in; the session's CSRF token."""
    assert client.post("/login", data={"name": "d", "password": PASSWORD}).status_code \
        in (200, 303)
    found = re.search(r'name="csrf" content="([^"]+)"', client.get("/console").text)
    assert found is not None
    return found.group(1)


def test_numbers_too_large_and_json_too_deep_are_answered_400(tmp_path: Path) -> None:
    from controller.web.console.routes import read_json

    with pytest.raises(ValueError, match="nested too deeply"):
        read_json(b"[" * 100_000 + b"]" * 100_000)
    with served(console(tmp_path)) as url, httpx.Client(base_url=url, timeout=30) as client:
        headers = {"X-CSRF-Token": _logged_in(client), "Content-Type": "application/json"}
        for body in (b'{"table": "1", "ruling": "adjust", "board": 1e400}',
                     b'{"table": "1", "ruling": "adjust", "board": 12345678901234567890}',
                     b'{"table": "1", "ruling": NaN}',
                     b"[" * 30_000 + b"]" * 30_000):
            answer = client.post("/console/api/ruling", content=body, headers=headers)
            assert answer.status_code == 400, (body[:40], answer.text)
        deep = client.post("/console/api/ruling", content=b"[" * 100_000 + b"]" * 100_000,
                           headers=headers)
        assert deep.status_code in (400, 413)
        for path in ("/console/api/reverse/12345678901234567890",
                     "/console/api/record/123456789012345678901",
                     "/console/api/call/99999999999999999999/answered",
                     "/console/api/call/99999999999999999999/callback"):
            answer = client.post(path, content=b'{"confirmed": true, "minutes": 1}',
                                 headers=headers)
            assert answer.status_code == 400, (path, answer.text)


def test_hsts_only_when_served_over_https(tmp_path: Path) -> None:
    from starlette.testclient import TestClient

    app = vugraph_app(Store())
    with TestClient(app, base_url="https://vugraph.local") as client:
        assert client.get("/").headers["strict-transport-security"] == "max-age=31536000"
    with TestClient(app) as client:
        assert "strict-transport-security" not in client.get("/").headers
