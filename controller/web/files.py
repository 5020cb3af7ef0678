"""Files the web apps and the relay keep that are nobody else's to read.

A database holds what the room must not see (the relay's held hands and results, the
director's ruling log): it is created readable by its owner only (0600), and one found
readable by others is made so, with a warning. A password file readable by others is
warned about, as the broker's password files are (controller/broker/settings.py).
"""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from pathlib import Path
from typing import Any

__all__ = ["private_sqlite", "warn_if_readable"]

log = logging.getLogger("bridge_table.web")


def private_sqlite(path: str | Path, **kw: Any) -> sqlite3.Connection:
    """``sqlite3.connect(path)`` on a file created 0600 (its journal and WAL files take
    the same mode from it); an existing file open to others is made 0600."""
    p = Path(path)
    if str(p) != ":memory:":
        fd = os.open(p, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            mode = stat.S_IMODE(os.fstat(fd).st_mode)
            if mode & 0o077:
                log.warning("%s was readable by others (mode %o): made 0600", p, mode)
                os.fchmod(fd, 0o600)
        finally:
            os.close(fd)
    connection: sqlite3.Connection = sqlite3.connect(str(p), **kw)
    return connection


def warn_if_readable(path: Path, what: str = "a password") -> None:
    """A warning when ``path`` (holding ``what``) can be read by others than its owner."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("%s holds %s and is readable by others (mode %o): chmod 600 it",
                    path, what, stat.S_IMODE(mode))
