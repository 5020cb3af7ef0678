"""``bridge-table console``: clear errors for bad settings, a clean end on Ctrl-C."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from broker import Mosquitto, free_port

from controller.web.auth import write_password_file
from controller.web.console.cli import main


def test_missing_password_file_or_bad_listen_or_broker_is_a_clear_error(
        tmp_path: Path, capsys: object) -> None:
    assert main(["--director-password-file", str(tmp_path / "absent")]) == 2
    write_password_file(tmp_path / "pw", "long enough")
    assert main(["--director-password-file", str(tmp_path / "pw"), "--listen", "nowhere"]) == 2
    assert main(["--director-password-file", str(tmp_path / "pw"), "--broker", "http://x"]) == 2
    assert main(["--director-password-file", str(tmp_path / "pw"), "--deals",
                 str(tmp_path / "absent.pbn")]) == 2



def test_a_missing_input_fails_before_any_serving_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # a console that cannot start says only why: no "serving plain HTTP" line first
    write_password_file(tmp_path / "pw", "long enough")
    (tmp_path / "garbage.pem").write_text("not a certificate")
    for extra in (["--deals", str(tmp_path / "absent.pbn")],
                  ["--session", str(tmp_path / "absent.toml")],
                  ["--tls-cert", str(tmp_path / "absent.pem"), "--tls-key",
                   str(tmp_path / "absent-key.pem")],
                  ["--tls-cert", str(tmp_path / "garbage.pem"), "--tls-key",
                   str(tmp_path / "absent.pem")]):
        caplog.clear()
        with caplog.at_level(logging.INFO):
            assert main(["--director-password-file", str(tmp_path / "pw"), "--listen",
                         f"0.0.0.0:{free_port()}", *extra]) == 2
        assert [r.levelno for r in caplog.records] == [logging.ERROR], caplog.text
        assert "absent" in caplog.text and "plain HTTP" not in caplog.text
    caplog.clear()
    assert main(["--director-password-file", str(tmp_path / "absent")]) == 2
    assert "plain HTTP" not in caplog.text

def test_ctrl_c_ends_the_console_cleanly(mosquitto: Mosquitto, tmp_path: Path) -> None:
    write_password_file(tmp_path / "pw", "long enough")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "console", "--broker", mosquitto.url,
         "--listen", f"127.0.0.1:{port}", "--director-password-file", str(tmp_path / "pw"),
         "--db", str(tmp_path / "c.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/login", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        # an open event stream must not hold the shutdown up
        client = httpx.Client(base_url=f"http://127.0.0.1:{port}")
        client.post("/login", data={"password": "long enough"})
        opened = threading.Event()

        def listen() -> None:
            try:
                with client.stream("GET", "/console/events", timeout=60) as r:
                    for _ in r.iter_lines():
                        opened.set()
            except httpx.HTTPError:
                pass
        reader = threading.Thread(target=listen, daemon=True)
        reader.start()
        assert opened.wait(30)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert b"Traceback" not in err
    # the first line says the console serves plain HTTP, and how to have HTTPS
    first = err.decode().splitlines()[0]
    assert "serving plain HTTP" in first and "--tls-cert" in first and "reverse proxy" in first


def test_the_console_serves_https_with_a_certificate(mosquitto: Mosquitto,
                                                     tmp_path: Path) -> None:
    import shutil

    import pytest
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed (it makes the test's certificate)")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    from controller.web.auth import write_account
    write_account(tmp_path / "pw", "Ada", "long enough")
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "console", "--broker", mosquitto.url,
         "--listen", f"127.0.0.1:{port}", "--director-password-file", str(tmp_path / "pw"),
         "--db", str(tmp_path / "c.sqlite"), "--tls-cert", str(cert), "--tls-key", str(key)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        client = httpx.Client(base_url=f"https://127.0.0.1:{port}", verify=str(cert))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                if client.get("/login", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        r = client.post("/login", data={"name": "Ada", "password": "long enough"})
        assert r.status_code in (200, 303)
        cookie = next(v for k, v in r.history[0].headers.multi_items()
                      if k == "set-cookie" and v.startswith("bt_session")) \
            if r.history else r.headers["set-cookie"]
        assert "Secure" in cookie and "HttpOnly" in cookie
        with pytest.raises(httpx.HTTPError):     # no plain HTTP on that port
            httpx.get(f"http://127.0.0.1:{port}/login", timeout=2)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert "plain HTTP" not in err.decode() and "console on https://" in err.decode()
    assert main(["--director-password-file", str(tmp_path / "pw"), "--tls-cert", str(cert)]) \
        == 2
