"""Where the browser tests save their screenshots.

An ordinary test run keeps them out of the work tree, in ``$TMPDIR/bridge-table-screenshots``
(each run overwrites them), so that ``make test`` leaves a clone as it found it.
``make screenshots`` sets ``BRIDGE_TABLE_DOC_SCREENSHOTS=1`` and they replace the pictures of
docs/console.md and docs/broadcast.md in ``docs/img``.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

DOCS_IMG = Path(__file__).resolve().parent.parent / "docs" / "img"
ENV = "BRIDGE_TABLE_DOC_SCREENSHOTS"


def screenshot_dir() -> Path:
    """``docs/img`` when ``BRIDGE_TABLE_DOC_SCREENSHOTS=1``, else a scratch folder."""
    folder = DOCS_IMG if os.environ.get(ENV) == "1" else \
        Path(tempfile.gettempdir()) / "bridge-table-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
