"""Where a reader's text comes from: the one I/O step the PBN and LIN readers share.

A reader takes an open text file (``read_pbn(fp)``, as ``chess.pgn.read_game`` does), a
``Path``, or the text itself as a ``str``. A ``str`` is always the text: a file name is
passed as a ``Path`` (no guessing whether a one-line string names a file).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from controller.formats.errors import FormatError

__all__ = ["Source", "binary_reason", "read_source"]

Source = TextIO | str | Path

#: how much of a file the binary check looks at
_SNIFF = 65536
_TEXT_CONTROLS = frozenset(b"\t\n\r\f\x1a")  # \x1a: DOS end of file, in old PBN files


def binary_reason(data: bytes) -> str | None:
    """Why ``data`` (a file's first bytes) is not a text file, or None when it may be one.

    A NUL byte, or more than one byte in ten a control character, is binary. Bytes that are
    not UTF-8 are not: PBN's own character set is ISO 8859-1, and the readers decode it."""
    head = data[:_SNIFF]
    nul = head.find(0)
    if nul >= 0:
        return f"binary data, not text (a NUL byte at offset {nul})"
    controls = sum(1 for b in head if b < 32 and b not in _TEXT_CONTROLS)
    if head and controls * 10 > len(head):
        return f"binary data, not text ({controls} control bytes in the first {len(head)})"
    return None


def read_source(source: Source) -> str | FormatError:
    """The text of ``source``, or the problem that kept it from being read (a value: the
    readers report it with the file's other problems instead of raising)."""
    try:
        if isinstance(source, Path):
            data = source.read_bytes()
            reason = binary_reason(data)
            if reason is not None:
                return FormatError(0, reason)
            text = data.decode("utf-8", errors="replace")
        elif isinstance(source, str):
            text = source
        else:
            text = source.read()
    except (OSError, UnicodeDecodeError) as exc:
        return FormatError(0, f"cannot read: {exc}")
    return text.lstrip("\ufeff")
