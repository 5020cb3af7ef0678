"""The broadcast operator's commands on a running relay: release, hold, clear, status, comment.

They talk to the relay through its store (``store.py``), which the relay reads every second:
a decision (``release``, ``hold``, ``clear``) of a board at one table or every table, a line
of commentary for the audience, and the status in words (``status_text``) or as stored.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.broadcast.store import HeldStore
from controller.commandline import number_ranges

__all__ = ["ACTIONS", "MAX_COMMENT", "OperatorError", "clean_comment", "operate",
           "release_refusal", "status_text"]

#: the operator's commands (``bridge-table broadcast ACTION``)
ACTIONS = ("release", "hold", "clear", "status", "comment")

#: the longest commentary line (``broadcast comment``)
MAX_COMMENT = 280


class OperatorError(Exception):
    """An operator's command that cannot be done: no store, no session, a refusal."""


def clean_comment(text: str) -> str:
    """One line of at most ``MAX_COMMENT`` characters, no control characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if not line:
        raise ValueError("the commentary line is empty")
    if len(line) > MAX_COMMENT:
        raise ValueError(f"the commentary line has {len(line)} characters; at most "
                         f"{MAX_COMMENT}")
    return line


def operate(store_path: str | Path, action: str, *, session_id: str | None = None,
            board: int | None = None, table: str | None = None, force: bool = False,
            text: str = "", as_json: bool = False) -> str:
    """Do ``action`` on the running relay's store at ``store_path`` (its session, unless
    ``session_id``); what to tell the operator. OperatorError when it cannot be done."""
    if not Path(store_path).exists():
        raise OperatorError(f"no relay store at {store_path}")
    try:
        store = HeldStore(store_path)
    except sqlite3.DatabaseError as exc:
        raise OperatorError(f"{store_path}: not a relay store: {exc}") from None
    try:
        session = session_id or store.session()
        if session is None:
            raise OperatorError("the store names no session")
        if action == "status":
            status = store.status(session)
            return json.dumps(status, indent=1) if as_json else status_text(status)
        if action == "comment":
            try:
                line = clean_comment(text)
            except ValueError as exc:
                raise OperatorError(str(exc)) from None
            store.comment(session, line, time.time())
            return f"session {session}: commentary posted"
        assert board is not None
        refusal = release_refusal(store, session, board, table, force) \
            if action == "release" else None
        if refusal is not None:
            raise OperatorError(refusal)
        store.operator(session, action, board, table)
        where = f"table {table}" if table else "every table"
        return f"session {session}: board {board} at {where}: {action}"
    finally:
        store.close()


def status_text(status: Mapping[str, Any]) -> str:
    """``broadcast status`` for the operator: what the audience does not see yet and why,
    what is finished, the operator's decisions and the reports (``--json``: as stored)."""
    lines = [f"Session {status['session']}"]
    why = {(w["table"], w.get("board")): w for w in status.get("waiting", [])}
    held = status.get("held", [])
    if held:
        lines.append("Held (not yet shown to the audience):")
        for h in held:
            board = h.get("board")
            where = f"board {board} at table {h['table']}" if board is not None else \
                f"table {h['table']} (no board yet)"
            reasons = []
            w = why.get((h["table"], board), {})
            if w.get("waits_for"):
                reasons.append("waits for table(s) " + ", ".join(w["waits_for"]) +
                               " to finish it")
            if w.get("why"):
                reasons.append(str(w["why"]))
            items = f"{h['items']} item{'s' if h['items'] != 1 else ''}"
            lines.append(f"  {where}: {items}" + (f"; {'; '.join(reasons)}" if reasons else ""))
    else:
        lines.append("Held: nothing")
    finished: dict[str, list[int]] = {}
    for item in status.get("finished", []):
        table, _, board = str(item).rpartition("/")
        if board.isdigit():
            finished.setdefault(table, []).append(int(board))
    if finished:
        lines.append("Finished:")
        lines += [f"  table {t}: board{'s' if len(finished[t]) > 1 else ''} "
                  f"{number_ranges(finished[t])}" for t in sorted(finished, key=_natural)]
    else:
        lines.append("Finished: no board yet")
    manual = status.get("manual", [])
    if manual:
        lines.append("Operator decisions:")
        for m in manual:
            where = "every table" if m["table"] == "*" else f"table {m['table']}"
            lines.append(f"  board {m['board']} at {where}: {m['action']}")
    reports = status.get("reports", [])
    if reports:
        lines.append("Reports:")
        lines += [f"  table {r['table']} board {r['board']}: {r['reason']}" for r in reports]
    lines += _refused_lines(status.get("refused") or {})
    return "\n".join(lines)


#: the most recent refusals ``broadcast status`` shows in words (``--json``: all it kept)
SHOWN_REFUSALS = 10


def _refused_lines(refused: Mapping[str, Any]) -> list[str]:
    """The payloads the relay did not publish for not being the wire contract's."""
    count = int(refused.get("count") or 0)
    if not count:
        return ["Refused: nothing"]
    recent = list(refused.get("recent") or [])[-SHOWN_REFUSALS:]
    lines = [f"Refused (not published, not of the wire contract): {count} "
             f"payload{'s' if count != 1 else ''} since the relay started; the latest:"]
    lines += [f"  {r['topic']}: {r['reason']}" for r in recent]
    return lines


def release_refusal(store: HeldStore, session: str, board: int, table: str | None,
                    force: bool = False) -> str | None:
    """Why ``broadcast release`` must not go ahead: a board or table outside the session's
    movement (refused), or a board some table of the movement has not finished (only with
    ``--force``); None when it may."""
    movement = store.movement(session)
    if movement is None:   # an ad hoc relay (--release board|live): no movement to check
        return None
    tables = movement.get(board)
    if tables is None:
        return (f"board {board} is not in session {session}'s movement (boards "
                f"{number_ranges(movement)}): refused")
    if table is not None and table not in tables:
        return (f"table {table} does not play board {board} in session {session} "
                f"(tables {', '.join(sorted(tables, key=_natural))}): refused")
    unfinished = sorted(tables - store.finished(session, board), key=_natural)
    if unfinished and not force:
        return (f"board {board} is not finished at table(s) {', '.join(unfinished)}: "
                f"releasing it now shows its hands to them; add --force to release anyway")
    return None


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)
