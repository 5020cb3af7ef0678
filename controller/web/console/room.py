"""The room's clock and progress, in the console's SQLite file.

The director starts each round's clock (its number and length); the console records every
board a table finished (its first ``result``) and the moment the director called the move.
From these the page shows the time left, each table's boards played of its round, and the
late and slow tables. Kept across console restarts like the calls and the ruling log.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from controller.sqlitefile import private_sqlite

_SCHEMA = """
CREATE TABLE IF NOT EXISTS played (
    table_id TEXT NOT NULL,
    board INTEGER NOT NULL,
    ts REAL NOT NULL,
    PRIMARY KEY (table_id, board)
);
CREATE TABLE IF NOT EXISTS rounds (
    round INTEGER PRIMARY KEY,
    started REAL NOT NULL,
    minutes REAL NOT NULL,
    move_called REAL
);
"""
MAX_MINUTES = 240


class RoomBook:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = private_sqlite(path, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def played(self, table: str, board: int, ts: float) -> bool:
        """A table finished a board (its first result); True when it is new."""
        with self._lock, self._db:
            cur = self._db.execute("INSERT OR IGNORE INTO played VALUES (?,?,?)",
                                   (table, board, ts))
            return cur.rowcount > 0

    def start_round(self, number: int, minutes: float, now: float) -> None:
        if not 1 <= number <= 999:
            raise ValueError("the round must be 1 to 999")
        if not 0 < minutes <= MAX_MINUTES:
            raise ValueError(f"a round lasts more than 0 and at most {MAX_MINUTES} minutes")
        with self._lock, self._db:
            self._db.execute("INSERT OR REPLACE INTO rounds VALUES (?,?,?,NULL)",
                             (number, now, minutes))

    def call_move(self, now: float) -> int | None:
        """The director calls the move of the current round; its number (None: no clock)."""
        with self._lock, self._db:
            row = self._db.execute("SELECT MAX(started), round FROM rounds").fetchone()
            if row is None or row[1] is None:
                return None
            self._db.execute("UPDATE rounds SET move_called=? WHERE round=?", (now, row[1]))
            return int(row[1])

    def snapshot(self) -> dict[str, Any]:
        """The current round's clock (the last started) and every board each table played."""
        with self._lock:
            clock = self._db.execute("SELECT round, started, minutes, move_called FROM "
                                     "rounds ORDER BY started DESC LIMIT 1").fetchone()
            played: dict[str, list[int]] = {}
            for table, board in self._db.execute(
                    "SELECT table_id, board FROM played ORDER BY ts"):
                played.setdefault(str(table), []).append(int(board))
        return {"clock": dict(zip(("round", "started", "minutes", "move_called"), clock,
                                  strict=True)) if clock else None,
                "played": played}
