"""controller/web/auth.py and ``bridge-table console passwd``: the director's password."""

from __future__ import annotations

import io
import stat
import warnings
from pathlib import Path

import pytest

from controller.web.auth import (
    PasswordFileError,
    hash_password,
    read_password_file,
    verify_password,
)
from controller.web.console.cli import passwd


def test_hash_and_verify() -> None:
    line = hash_password("a long password")
    assert line.startswith("scrypt$") and "a long password" not in line
    assert verify_password("a long password", line)
    assert not verify_password("a long passwore", line)
    assert hash_password("a long password") != line      # salted
    assert not verify_password("x", "garbage") and not verify_password("x", "md5$1$2$3$4$5")


def test_passwd_writes_a_private_file_the_console_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "pw"
    monkeypatch.setattr("sys.stdin", io.StringIO("director secret\n"))
    assert passwd([str(path), "--stdin"]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert verify_password("director secret", read_password_file(path))


def test_passwd_refuses_a_short_password(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert passwd([str(tmp_path / "pw"), "--stdin"]) == 2   # a usage error (README)
    assert not (tmp_path / "pw").exists()


def test_a_missing_or_wrong_password_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PasswordFileError, match="cannot read"):
        read_password_file(tmp_path / "absent")
    (tmp_path / "plain").write_text("hunter2\n")
    with pytest.raises(PasswordFileError, match="console passwd"):
        read_password_file(tmp_path / "plain")


def test_each_director_has_an_account(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.web.auth import read_accounts

    path = tmp_path / "pw"
    for name, password in (("Ada", "ada's secret"), ("Bo Li", "bo's secret"),
                           ("Ada", "ada's new one")):
        monkeypatch.setattr("sys.stdin", io.StringIO(password + "\n"))
        assert passwd([str(path), "--stdin", "--name", name]) == 0
    accounts = read_accounts(path)
    assert sorted(accounts) == ["Ada", "Bo Li"]
    assert verify_password("ada's new one", accounts["Ada"])
    assert not verify_password("ada's secret", accounts["Ada"])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for bad in ("a:b", " Ada", "", "x" * 61, "tab\there"):
        monkeypatch.setattr("sys.stdin", io.StringIO("long enough\n"))
        assert passwd([str(path), "--stdin", "--name", bad]) == 2, bad
    # a file that is not a password file is never overwritten
    (tmp_path / "notes").write_text("shopping list\n")
    monkeypatch.setattr("sys.stdin", io.StringIO("long enough\n"))
    assert passwd([str(tmp_path / "notes"), "--stdin", "--name", "Cy"]) == 2
    assert (tmp_path / "notes").read_text() == "shopping list\n"
    # the one shared password of an older file reads as the account ""
    (tmp_path / "shared").write_text(hash_password("shared secret") + "\n")
    assert list(read_accounts(tmp_path / "shared")) == [""]


def test_wrong_passwords_are_throttled_per_address() -> None:
    import asyncio

    from controller.web.auth import LoginThrottle

    now = [100.0]
    throttle = LoginThrottle(limit=3, lockout=60.0, clock=lambda: now[0])
    for _ in range(3):
        assert throttle.wait_left("10.0.0.9") == 0
        throttle.failed("10.0.0.9")
    assert throttle.wait_left("10.0.0.9") == 60.0
    assert throttle.wait_left("10.0.0.1") == 0            # another address is not held up
    now[0] += 61
    assert throttle.wait_left("10.0.0.9") == 0
    throttle.failed("10.0.0.1")
    throttle.succeeded("10.0.0.1")
    assert throttle.wait_left("10.0.0.1") == 0
    # one check at a time from an address, not from everyone
    assert throttle.lock("a") is throttle.lock("a") and throttle.lock("a") is not \
        throttle.lock("b")

    async def both() -> bool:
        async with throttle.lock("a"):
            return not throttle.lock("b").locked()
    assert asyncio.run(both())


@pytest.mark.parametrize(("piped", "code"), [("piped secret\npiped secret\n", 0),
                                             ("piped secret\nanother one\n", 2),
                                             ("piped secret\n", 2)])
def test_a_piped_password_without_stdin_is_read_and_repeated_quietly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        piped: str, code: int) -> None:
    path = tmp_path / "pw"
    monkeypatch.setattr("sys.stdin", io.StringIO(piped))
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # getpass's GetPassWarning would fail the test
        assert passwd([str(path)]) == code
    err = capsys.readouterr().err
    assert "password:" in err and "Warning" not in err
    assert path.exists() == (code == 0)
    if code == 0:
        assert verify_password("piped secret", read_password_file(path))
