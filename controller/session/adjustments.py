"""The director's adjusted scores: the one place a program changes them.

``score``, ``export``, ``results`` and the broadcast read a session's adjustments from its
session file's ``[[adjustment]]`` entries (docs/session.md). A program that sets them (the
director's console) uses these functions, which check an adjustment exactly as the file
is checked and write the file so that every reader sees the same scores:

- ``parse_adjustment(session, row)``: an ``Adjustment`` from the keys of an
  ``[[adjustment]]`` entry (a mapping such as ``{"table": "3", "board": 5, "ns": "A+"}``),
  or a ``SessionError`` saying what is wrong (a table or board outside the movement, an
  unknown key, an artificial score not named in the session or outside 0-100%);
- ``adjustment_toml(adjustment)``: the entry as the file writes it;
- ``set_adjustment(path, adjustment)``: the session file with the adjustment for that table
  and board set (an earlier one for them replaced), written whole or not at all (a
  temporary file renamed over it), and the session as read back from it;
- ``remove_adjustment(path, table, board)``: the same, taking the table's board's
  adjustment out (the table's own result scores again);
- ``with_adjustments(session, adjustments)``: a session with other adjustments, in memory
  (nothing written), checked as the file would be (a later one for a table and board
  replaces an earlier one, as in the file).

Every other line of the session file (comments, order, other entries) is kept as it is.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from controller.session.sessionfile import (
    Adjustment,
    FieldReader,
    Session,
    SessionError,
    WeightedPart,
    adjustment_of,
    load_session,
    parse_session,
)

__all__ = ["Adjustment", "parse_adjustment", "adjustment_toml", "set_adjustment",
           "remove_adjustment", "with_adjustments", "toml_value", "weighted_row",
           "write_session_text"]

_HEADER = re.compile(r"^\s*\[")
_ADJUSTMENT = re.compile(r"^\s*\[\[\s*adjustment\s*\]\]\s*(#.*)?$")


def parse_adjustment(session: Session, row: Mapping[str, Any],
                     source: str = "adjustment") -> Adjustment:
    """The adjustment an ``[[adjustment]]`` entry's keys give, checked against
    ``session``; SessionError (naming ``source`` and the key) if it cannot be used."""
    return adjustment_of(FieldReader(source), "", row, session.artificial, session.movement)


def with_adjustments(session: Session, adjustments: Iterable[Adjustment]) -> Session:
    """``session`` with ``adjustments`` in place of its own."""
    out: dict[tuple[str, int], Adjustment] = {}
    for adj in adjustments:
        parse_adjustment(session, _row(adj))
        out.pop((adj.table, adj.board), None)           # a later one replaces it
        out[(adj.table, adj.board)] = adj
    return dataclasses.replace(session, adjustments=tuple(out.values()))


def _row(adj: Adjustment) -> dict[str, Any]:
    row: dict[str, Any] = {"table": adj.table, "board": adj.board}
    if adj.weighted is not None:
        row["weighted"] = [weighted_row(p) for p in adj.weighted]
    elif adj.split is not None:
        row["split"] = list(adj.split)
    elif adj.score_ns is not None:
        row["score_ns"] = adj.score_ns
    else:
        row["ns"] = adj.ns or "A="
        if adj.ew is not None:
            row["ew"] = adj.ew
    return row


def weighted_row(part: WeightedPart) -> dict[str, Any]:
    """One result of a weighted score as the session file gives it."""
    row: dict[str, Any] = {"weight": int(part.weight) if part.weight.is_integer()
                           else part.weight}
    if part.contract is None:
        row["score_ns"] = part.score_ns
    else:
        row["contract"] = part.contract
        if part.declarer is not None:
            row["declarer"], row["tricks"] = part.declarer, part.tricks
    return row


def toml_value(value: Any) -> str:
    """A value of an ``[[adjustment]]`` entry as TOML: a JSON string, number or list of
    them is TOML; a table is written inline (``{ weight = 50, contract = "4H" }``)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value)


def adjustment_toml(adj: Adjustment) -> str:
    """The ``[[adjustment]]`` entry of ``adj``, as text for the session file."""
    lines = ["[[adjustment]]"]
    for key, value in _row(adj).items():
        lines.append(f"{key} = {toml_value(value)}")
    return "\n".join(lines) + "\n"


def _blocks(lines: list[str]) -> list[tuple[int, int]]:
    """(first line, line after the last) of each ``[[adjustment]]`` entry."""
    out = []
    i = 0
    while i < len(lines):
        if _ADJUSTMENT.match(lines[i]):
            j = i + 1
            while j < len(lines) and not _HEADER.match(lines[j]):
                j += 1
            out.append((i, j))
            i = j
        else:
            i += 1
    return out


def _entry_key(block: list[str]) -> tuple[str, int] | None:
    import tomllib
    try:
        row = tomllib.loads("".join(block)).get("adjustment", [{}])[0]
    except (tomllib.TOMLDecodeError, IndexError, AttributeError):
        return None
    table, board = row.get("table"), row.get("board")
    return (str(table), board) if isinstance(board, int) else None


def _rewrite(path: str | Path, table: str, board: int, new: Adjustment | None) -> Session:
    p = Path(path)
    load_session(p)                                     # the file as it is must be good
    lines = p.read_text(encoding="utf-8").splitlines(keepends=True)
    for start, end in reversed(_blocks(lines)):
        if _entry_key(lines[start:end]) == (table, board):
            del lines[start:end]
    text = "".join(lines)
    if new is not None:
        text += ("" if not text or text.endswith("\n") else "\n") + "\n" + adjustment_toml(new)
    return write_session_text(p, text)


def write_session_text(path: str | Path, text: str) -> Session:
    """Put ``text`` in place of the session file, all or nothing: read as a session first
    (every check ``score`` makes; SessionError, the file left as it was, if it is not one),
    then written beside it, synced, given the file's mode and moved over it. The session
    it gives. The one writer of session files: ``set_adjustment``, ``remove_adjustment``
    and the console's rulings (controller/web/console/adjust.py)."""
    from controller.tomlfile import TomlFileError, loads_toml

    p = Path(path)
    try:
        session = parse_session(loads_toml(text, str(p)), str(p), p.parent)
    except (SessionError, TomlFileError) as exc:       # the file is left as it was
        raise SessionError(f"{p}: not written: {exc}") from None
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fp:
            fp.write(text)
            fp.flush()
            os.fsync(fp.fileno())
        os.chmod(tmp, p.stat().st_mode & 0o777)       # mkstemp's 0600 is not the file's
        os.replace(tmp, p)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise SessionError(f"{p}: not written: {exc.strerror or exc}") from None
    object.__setattr__(session, "path", p)
    return session


def set_adjustment(path: str | Path, adjustment: Adjustment) -> Session:
    """Write ``adjustment`` into the session file (replacing one for the same table and
    board); the session as read back. SessionError, the file unchanged, if it cannot."""
    parse_adjustment(load_session(path), _row(adjustment), str(path))
    return _rewrite(path, adjustment.table, adjustment.board, adjustment)


def remove_adjustment(path: str | Path, table: str, board: int) -> Session:
    """Take the adjustment of ``table``'s ``board`` out of the session file."""
    return _rewrite(path, table, board, None)
