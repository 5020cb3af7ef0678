"""Every database the project creates is 0600 (controller/sqlitefile.py): the helper, and no
module that opens a SQLite file around it."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest
from private_files import assert_private, permissive_umask

from controller.broadcast.store import HeldStore
from controller.sqlitefile import private_sqlite

ROOT = Path(__file__).resolve().parents[1]


def test_a_database_is_created_readable_by_its_owner_only(tmp_path: Path) -> None:
    with permissive_umask():
        db = private_sqlite(tmp_path / "x.sqlite")
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("CREATE TABLE t (x)")
        db.commit()
        HeldStore(tmp_path / "relay.sqlite").close()
        assert_private(tmp_path, "x.sqlite")
        db.close()
    assert (tmp_path / "relay.sqlite").stat().st_mode & 0o777 == 0o600


def test_a_database_open_to_others_is_made_private(tmp_path: Path,
                                                   caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "console.sqlite"
    path.touch()
    path.chmod(0o644)
    with caplog.at_level(logging.WARNING):
        private_sqlite(path).close()
    assert path.stat().st_mode & 0o777 == 0o600
    assert "readable by others" in caplog.text


def test_a_read_only_database_stays_read_only(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    path.touch()
    path.chmod(0o444)
    private_sqlite(path).close()
    assert path.stat().st_mode & 0o777 == 0o400


def test_no_module_opens_a_sqlite_file_but_through_the_helper() -> None:
    """``sqlite3.connect`` anywhere else would create a file with the umask's mode."""
    found = []
    for package in ("controller", "firmware_bridge"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path == ROOT / "controller" / "sqlitefile.py":
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Attribute) and node.attr == "connect" and \
                        isinstance(node.value, ast.Name) and node.value.id == "sqlite3":
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert found == [], "open it with controller.sqlitefile.private_sqlite"
