"""Where a reader's text comes from: the one I/O step the PBN and LIN readers share.

A reader takes an open text file (``read_pbn(fp)``, as ``chess.pgn.read_game`` does), a
``Path``, or the text itself as a ``str``. A ``str`` is always the text: a file name is
passed as a ``Path`` (no guessing whether a one-line string names a file).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from .errors import FormatError

__all__ = ["Source", "read_source"]

Source = TextIO | str | Path


def read_source(source: Source) -> str | FormatError:
    """The text of ``source``, or the problem that kept it from being read (a value: the
    readers report it with the file's other problems instead of raising)."""
    try:
        if isinstance(source, Path):
            text = source.read_bytes().decode("utf-8", errors="replace")
        elif isinstance(source, str):
            text = source
        else:
            text = source.read()
    except (OSError, UnicodeDecodeError) as exc:
        return FormatError(0, f"cannot read: {exc}")
    return text.lstrip("\ufeff")
