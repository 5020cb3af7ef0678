"""Checking that a database is created 0600 (controller/sqlitefile.py) under a umask that
would leave any other file open to all: the journal's, the spool's and the apps' tests."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


@contextlib.contextmanager
def permissive_umask() -> Iterator[None]:
    """A umask of 0: a plain file is created readable and writable by everyone."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def assert_private(folder: Path, database: str) -> None:
    """``database`` in ``folder`` and its WAL are 0600, and no file there is open to others;
    a file created now (under ``permissive_umask``) is open to all (the positive control)."""
    control = folder / "control"
    control.touch()
    try:
        assert control.stat().st_mode & 0o777 == 0o666, "not under permissive_umask()"
    finally:
        control.unlink()
    modes = {p.name: p.stat().st_mode & 0o777 for p in folder.iterdir()}
    assert modes[database] == modes[f"{database}-wal"] == 0o600, modes
    assert all(mode & 0o077 == 0 for mode in modes.values()), modes


def assert_made_private(path: Path, open_it: Callable[[Path], Any]) -> None:
    """A database found 0644 is 0600 once opened by ``open_it(path)`` (then closed)."""
    path.chmod(0o644)
    open_it(path).close()
    assert path.stat().st_mode & 0o777 == 0o600
