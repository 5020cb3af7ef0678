"""Files the web apps keep that are nobody else's to read: a password file readable by
others is warned about, as the broker's password files are (controller/broker/settings.py).
Their databases are opened with ``controller.sqlitefile.private_sqlite`` (0600).
"""

from __future__ import annotations

import logging
import stat
from pathlib import Path

__all__ = ["warn_if_readable"]

log = logging.getLogger("bridge_table.web")


def warn_if_readable(path: Path, what: str = "a password") -> None:
    """A warning when ``path`` (holding ``what``) can be read by others than its owner."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("%s holds %s and is readable by others (mode %o): chmod 600 it",
                    path, what, stat.S_IMODE(mode))
