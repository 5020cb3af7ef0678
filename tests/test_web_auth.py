"""controller/web/auth.py and ``bridge-table console passwd``: the director's password."""

from __future__ import annotations

import io
import stat
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
    assert passwd([str(tmp_path / "pw"), "--stdin"]) == 1
    assert not (tmp_path / "pw").exists()


def test_a_missing_or_wrong_password_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(PasswordFileError, match="cannot read"):
        read_password_file(tmp_path / "absent")
    (tmp_path / "plain").write_text("hunter2\n")
    with pytest.raises(PasswordFileError, match="console passwd"):
        read_password_file(tmp_path / "plain")
