"""The calls the director has not closed, in the console's SQLite file.

A "director called" press or a player's claim press, as the controller publishes it
(``bridge/{t}/evidence``, ``presses``: wire 1.14; the bridge's own ``button`` event is not
read) is kept here until the director closes it, whatever the table does meanwhile:
a new board, a new round, a console restart. "On my way" marks a call answered and
keeps it listed; "ruled" and "dismissed" close it. Open calls come oldest first: the
director sees who has waited longest.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from controller.sqlitefile import private_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    table_id TEXT NOT NULL,
    button TEXT NOT NULL,
    seat TEXT,
    board INTEGER,
    received REAL NOT NULL,
    press_key TEXT UNIQUE,
    answered REAL,
    answered_by TEXT,
    closed REAL,
    closed_how TEXT,
    closed_by TEXT,
    ruling_seq INTEGER
);
"""
#: columns added since the first book (an older file gets them on opening)
_ADDED = (("callback", "REAL"),)

COLUMNS = ("id", "table_id", "button", "seat", "board", "received", "answered",
           "answered_by", "closed", "closed_how", "closed_by", "ruling_seq", "callback")
#: the buttons a table presses for the director (docs/wire-contract.md, ``type: button``)
BUTTONS = ("director", "claim")
CLOSE_HOW = ("ruled", "dismissed")


class CallBook:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = private_sqlite(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        have = {row[1] for row in self._db.execute("PRAGMA table_info(calls)")}
        with self._db:
            for name, kind in _ADDED:
                if name not in have:
                    self._db.execute(f"ALTER TABLE calls ADD COLUMN {name} {kind}")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def press(self, *, table: str, button: str, seat: str | None, board: int | None,
              received: float, key: str | None) -> dict[str, Any] | None:
        """Keep a press; None for a press already kept (QoS 1 delivers some twice) or a
        button that is not a call."""
        if button not in BUTTONS:
            return None
        with self._lock, self._db:
            cur = self._db.execute(
                "INSERT OR IGNORE INTO calls (table_id, button, seat, board, received,"
                " press_key) VALUES (?,?,?,?,?,?)", (table, button, seat, board, received, key))
            if cur.rowcount == 0:
                return None
            row_id = cur.lastrowid
        return self.get(int(row_id or 0))

    def get(self, call_id: int) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM calls WHERE id=?",
                                   (call_id,)).fetchone()
        return dict(zip(COLUMNS, row, strict=True)) if row else None

    def open_calls(self, table: str | None = None) -> list[dict[str, Any]]:
        """The calls not closed, the longest waiting first."""
        where = "closed IS NULL" + (" AND table_id=?" if table is not None else "")
        with self._lock:
            cur = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM calls WHERE {where} "
                                   "ORDER BY received, id", (table,) if table else ())
            return [dict(zip(COLUMNS, row, strict=True)) for row in cur]

    def answer(self, call_id: int, director: str, now: float) -> bool:
        """"On my way": the call stays open, marked answered (the first answer counts)."""
        with self._lock, self._db:
            cur = self._db.execute("UPDATE calls SET answered=?, answered_by=? WHERE id=? "
                                   "AND closed IS NULL AND answered IS NULL",
                                   (now, director, call_id))
            return cur.rowcount > 0

    def answer_table(self, table: str, director: str, now: float) -> int:
        """A ruling sent for the table answers its open calls (they stay open)."""
        with self._lock, self._db:
            cur = self._db.execute("UPDATE calls SET answered=?, answered_by=? WHERE "
                                   "table_id=? AND closed IS NULL AND answered IS NULL",
                                   (now, director, table))
            return cur.rowcount

    def call_back(self, call_id: int, due: float | None) -> bool:
        """Remind the director to go back to the table at ``due`` (None: no reminder)."""
        with self._lock, self._db:
            cur = self._db.execute("UPDATE calls SET callback=? WHERE id=? AND closed IS NULL",
                                   (due, call_id))
            return cur.rowcount > 0

    def close_call(self, call_id: int, how: str, director: str, now: float,
                   ruling_seq: int | None = None) -> bool:
        """Close a call: ``ruled`` (with the ruling's seq, if one was sent) or ``dismissed``."""
        if how not in CLOSE_HOW:
            raise ValueError(f"a call is closed as {' or '.join(CLOSE_HOW)}, not {how!r}")
        with self._lock, self._db:
            cur = self._db.execute(
                "UPDATE calls SET closed=?, closed_how=?, closed_by=?, ruling_seq=?, "
                "answered=COALESCE(answered, ?), answered_by=COALESCE(answered_by, ?) "
                "WHERE id=? AND closed IS NULL",
                (now, how, director, ruling_seq, now, director, call_id))
            return cur.rowcount > 0
