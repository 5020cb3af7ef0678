"""The ruling log in SQLite: every ruling sent, by whom, on which alert, and the answer.

It also keeps the console's ``seq`` (the contract's per-``src`` increasing number), so a
restarted console goes on from the last number and the controller never takes a new
ruling for a duplicate.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS rulings (
    seq INTEGER PRIMARY KEY,
    ts REAL NOT NULL,
    director TEXT NOT NULL,
    table_id TEXT NOT NULL,
    board INTEGER,
    alert INTEGER,
    code TEXT,
    ruling TEXT NOT NULL,
    payload TEXT NOT NULL,
    answer TEXT,
    answer_ts REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

COLUMNS = ("seq", "ts", "director", "table_id", "board", "alert", "code", "ruling",
           "payload", "answer", "answer_ts")


class RulingLog:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False)
        self._db.executescript(_SCHEMA)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._lock = threading.Lock()

    def close(self) -> None:
        self._db.close()

    def next_seq(self) -> int:
        """Reserve the next ``seq``: stored before the ruling is published."""
        with self._lock, self._db:
            row = self._db.execute("SELECT value FROM meta WHERE key='seq'").fetchone()
            top = self._db.execute("SELECT MAX(seq) FROM rulings").fetchone()[0] or 0
            seq = max(int(row[0]) if row else 0, top) + 1
            self._db.execute("INSERT OR REPLACE INTO meta VALUES ('seq', ?)", (str(seq),))
        return seq

    def add(self, *, seq: int, ts: float, director: str, table: str, board: int | None,
            alert: int | None, code: str | None, ruling: str, payload: dict[str, Any]) -> None:
        with self._lock, self._db:
            self._db.execute(
                "INSERT INTO rulings (seq, ts, director, table_id, board, alert, code, ruling,"
                " payload) VALUES (?,?,?,?,?,?,?,?,?)",
                (seq, ts, director, table, board, alert, code, ruling,
                 json.dumps(payload, separators=(",", ":"))))

    def answer(self, seq: int, answer: str, ts: float) -> bool:
        """Record the controller's answer once (the first one wins)."""
        with self._lock, self._db:
            cur = self._db.execute("UPDATE rulings SET answer=?, answer_ts=? "
                                   "WHERE seq=? AND answer IS NULL", (answer, ts, seq))
            return cur.rowcount > 0

    def unanswered(self) -> dict[int, str]:
        with self._lock:
            rows = self._db.execute("SELECT seq, table_id FROM rulings WHERE answer IS NULL")
            return {int(seq): str(table) for seq, table in rows}

    def rows(self) -> list[dict[str, Any]]:
        with self._lock:
            cur = self._db.execute(f"SELECT {', '.join(COLUMNS)} FROM rulings ORDER BY seq")
            return [dict(zip(COLUMNS, row, strict=True)) for row in cur]

    def csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(COLUMNS)
        for row in self.rows():
            writer.writerow([row[c] if row[c] is not None else "" for c in COLUMNS])
        return out.getvalue()
