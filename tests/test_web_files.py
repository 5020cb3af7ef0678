"""Databases created 0600 and password files checked (controller/web/files.py)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from controller.broadcast.store import HeldStore
from controller.web.auth import read_accounts, write_account
from controller.web.files import private_sqlite


def test_a_database_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        db = private_sqlite(tmp_path / "x.sqlite")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        db.close()
        HeldStore(tmp_path / "relay.sqlite").close()
    finally:
        os.umask(old)
    assert (tmp_path / "x.sqlite").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "relay.sqlite").stat().st_mode & 0o777 == 0o600
    assert all(p.stat().st_mode & 0o077 == 0 for p in tmp_path.iterdir())


def test_a_database_open_to_others_is_made_private(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "console.sqlite"
    path.touch()
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        private_sqlite(path).close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert "readable by others" in caplog.text


def test_a_password_file_readable_by_others_is_warned_about(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "console-password"
    write_account(path, "Ada", "correct horse battery")
    with caplog.at_level(logging.WARNING):
        read_accounts(path)
    assert "readable by others" not in caplog.text
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        assert "Ada" in read_accounts(path)
    assert "readable by others (mode 644)" in caplog.text
