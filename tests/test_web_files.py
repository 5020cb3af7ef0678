"""Password files checked (controller/web/files.py); databases: tests/test_sqlitefile.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from controller.web.auth import read_accounts, write_account


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
