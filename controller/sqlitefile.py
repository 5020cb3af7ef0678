"""SQLite files nobody but their owner reads: every database the project creates is 0600.

A database holds what the room must not see: the controller's journal and the bridge's spool
(every hand of the session), the relay's held hands and results, the director's ruling log.
Each is created readable by its owner only (SQLite gives its ``-wal`` and ``-shm`` files the
database's mode), and one found open to others is closed to them, with a warning. It sits
with the foundations so that the firmware bridge (its spool), the service (its journal) and
the apps open their files through the same door.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

__all__ = ["make_private", "private_sqlite"]

log = logging.getLogger("bridge_table.files")


def make_private(path: str | Path) -> None:
    """Create ``path`` 0600 if it is missing; take the group's and others' bits from one
    that has them (its owner's stay: a file made read-only stays so). OSError if it cannot."""
    p = Path(path)
    # O_RDONLY: a read-only file is still opened, so its owner hears why it cannot be written
    fd = os.open(p, os.O_RDONLY | os.O_CREAT, 0o600)
    try:
        mode = stat.S_IMODE(os.fstat(fd).st_mode)
        if mode & 0o077:
            log.warning("%s was readable by others (mode %o): made %o", p, mode, mode & 0o700)
            os.fchmod(fd, mode & 0o700)
    finally:
        os.close(fd)


def private_sqlite(path: str | Path, **kw: Any) -> sqlite3.Connection:
    """``sqlite3.connect(path, **kw)`` on a file made private first (``make_private``);
    OSError if it cannot be."""
    if str(path) != ":memory:":
        make_private(path)
    connection: sqlite3.Connection = sqlite3.connect(str(path), **kw)
    return connection
