"""The broadcast relay's SQLite store: everything the relay must not forget, per session id.

Held items, boards seen in play, finished boards, the operator's decisions, reports, the
boards' public views and the commentary. A relay killed mid-round loses nothing; the
operator's commands (``broadcast.operator``) talk to the running relay through this file
(the relay reads the operator's decisions every second).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from controller.broadcast.gate import Gate, Item, Report
from controller.sqlitefile import private_sqlite

__all__ = ["HeldStore", "open_relay_store"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS held (session TEXT, n INTEGER, tbl TEXT, kind TEXT,
    board INTEGER, payload TEXT, at REAL, PRIMARY KEY (session, n));
CREATE TABLE IF NOT EXISTS seen_boards (session TEXT, tbl TEXT, board INTEGER, ord INTEGER,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS left_boards (session TEXT, tbl TEXT, board INTEGER,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS done (session TEXT, tbl TEXT, board INTEGER, at REAL,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS manual (session TEXT, tbl TEXT, board INTEGER, action TEXT,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS reports (session TEXT, tbl TEXT, board INTEGER, reason TEXT,
    PRIMARY KEY (session, tbl, board, reason));
CREATE TABLE IF NOT EXISTS views (session TEXT, tbl TEXT, board INTEGER, view TEXT,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS unpublished_views (session TEXT, tbl TEXT, board INTEGER,
    PRIMARY KEY (session, tbl, board));
CREATE TABLE IF NOT EXISTS digests (session TEXT, digest TEXT, PRIMARY KEY (session, digest));
CREATE TABLE IF NOT EXISTS commentary (session TEXT, at REAL, text TEXT);
"""


class HeldStore:
    """SQLite: everything the relay must not forget, per session id."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = private_sqlite(path, timeout=5)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(_SCHEMA)
        self.db.commit()

    # meta: the relay's own client id (kept, so a restart resumes its broker session)
    def client_id(self) -> str:
        row = self.db.execute("SELECT value FROM meta WHERE key='client_id'").fetchone()
        if row:
            return str(row[0])
        cid = f"bridge-table-broadcast-{uuid.uuid4().hex[:12]}"
        with self.db:
            self.db.execute("INSERT INTO meta VALUES ('client_id', ?)", (cid,))
        return cid

    def set_session(self, session: str, movement: Any = None) -> None:
        """The session the relay runs, and its movement (board -> tables), which the
        operator's commands check a release against."""
        boards: dict[str, list[str]] = {}
        for rnd in getattr(movement, "rounds", ()) or ():
            for table, tr in rnd.tables.items():
                for board in tr.boards:
                    boards.setdefault(str(board), []).append(str(table))
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES ('session', ?)", (session,))
            if movement is not None:
                self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                                (f"movement/{session}", json.dumps(boards)))

    def session(self) -> str | None:
        return self._meta("session")

    def _meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return str(row[0]) if row else None

    def movement(self, session: str) -> dict[int, set[str]] | None:
        text = self._meta(f"movement/{session}")
        if text is None:
            return None
        return {int(b): set(ts) for b, ts in json.loads(text).items()}

    def finished(self, session: str, board: int) -> set[str]:
        return {str(t) for (t,) in self.db.execute(
            "SELECT tbl FROM done WHERE session=? AND board=?", (session, board))}

    def load(self, gate: Gate) -> dict[tuple[str, int], dict[str, Any]]:
        s = gate.policy.session_id
        q = self.db.execute
        gate.done.update({(t, b): at for t, b, at in
                          q("SELECT tbl, board, at FROM done WHERE session=?", (s,))})
        gate.left |= {(t, b) for t, b in
                      q("SELECT tbl, board FROM left_boards WHERE session=?", (s,))}
        for t, b, order in q("SELECT tbl, board, ord FROM seen_boards WHERE session=? "
                             "ORDER BY ord", (s,)):
            gate.seen(t, b, order)
        gate.restore([Item(n, t, k, b, json.loads(p), at) for n, t, k, b, p, at in
                      q("SELECT n, tbl, kind, board, payload, at FROM held WHERE session=?",
                        (s,))])
        for t, b, r in q("SELECT tbl, board, reason FROM reports WHERE session=?", (s,)):
            gate.reports.setdefault((t, b, r), Report(t, b, r))
        self.sync_manual(gate)
        return {(t, b): json.loads(v) for t, b, v in
                q("SELECT tbl, board, view FROM views WHERE session=?", (s,))}

    def digests(self, session: str) -> set[str]:
        return {d for (d,) in self.db.execute("SELECT digest FROM digests WHERE session=?",
                                              (session,))}

    def unpublished(self, session: str) -> list[tuple[str, int]]:
        return [(t, b) for t, b in self.db.execute(
            "SELECT tbl, board FROM unpublished_views WHERE session=? ORDER BY rowid",
            (session,))]

    def sync_manual(self, gate: Gate) -> bool:
        rows = {(t, b): a for t, b, a in self.db.execute(
            "SELECT tbl, board, action FROM manual WHERE session=?", (gate.policy.session_id,))}
        changed = rows != gate.manual
        gate.manual = rows
        return changed

    def save(self, gate: Gate, added: Sequence[Item] = (), digests: Sequence[str] = ()
             ) -> None:
        """What the gate learnt (its ``changes``) and the items it now holds, in one
        transaction: a message is acknowledged to the broker only after this."""
        s = gate.policy.session_id
        changes, gate.changes = gate.changes, []
        if not added and not changes and not digests:
            return
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?, ?, ?, ?)",
                                [(s, i.n, i.table, i.kind, i.board, json.dumps(i.payload),
                                  i.at) for i in added])
            self.db.executemany("INSERT OR IGNORE INTO digests VALUES (?, ?)",
                                [(s, d) for d in digests])
            for what, key in changes:
                if what == "started":
                    self.db.execute("INSERT OR IGNORE INTO seen_boards VALUES (?, ?, ?, ?)",
                                    (s, *key))
                elif what == "left":
                    self.db.execute("INSERT OR IGNORE INTO left_boards VALUES (?, ?, ?)",
                                    (s, *key))
                elif what == "done":
                    (t, b), at = key
                    self.db.execute("INSERT OR IGNORE INTO done VALUES (?, ?, ?, ?)",
                                    (s, t, b, at))
                elif what == "report":
                    self.db.execute("INSERT OR IGNORE INTO reports VALUES (?, ?, ?, ?)",
                                    (s, key.table, key.board, key.reason))

    def keep_other(self, session: str, table: str, kind: str, payload: Mapping[str, Any],
                   at: float, digest: str) -> None:
        """An item of another session than the relay's: held in the store under that
        session (numbered after its items), taken once."""
        board = payload.get("board")
        board = board if isinstance(board, int) and not isinstance(board, bool) else None
        with self.db:
            if self.db.execute("INSERT OR IGNORE INTO digests VALUES (?, ?)",
                               (session, digest)).rowcount == 0:
                return
            (last,) = self.db.execute("SELECT COALESCE(MAX(n), 0) FROM held WHERE session=?",
                                      (session,)).fetchone()
            self.db.execute("INSERT INTO held VALUES (?, ?, ?, ?, ?, ?, ?)",
                            (session, int(last) + 1, table, kind, board, json.dumps(payload),
                             at))

    def save_waiting(self, gate: Gate) -> None:
        """What each held board waits for (``broadcast status``); the relay writes it once
        a second, not on every message."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            (f"waiting/{gate.policy.session_id}", json.dumps(gate.waiting())))

    def save_refusals(self, session: str, refusals: Mapping[str, Any]) -> None:
        """The payloads the relay refused (``outgoing.Refusals.status``), for ``broadcast
        status``; written with the waiting boards, once a second when they change."""
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                            (f"refused/{session}", json.dumps(refusals)))

    def released(self, session: str, item: Item, view: Mapping[str, Any] | None) -> None:
        """``item`` is public (the broker acknowledged it): it leaves the store, and its
        board's view, changed, waits to be published."""
        with self.db:
            self.db.execute("DELETE FROM held WHERE session=? AND n=?", (session, item.n))
            if view is not None:
                self.db.execute("INSERT OR REPLACE INTO views VALUES (?, ?, ?, ?)",
                                (session, view["table"], view["board"], json.dumps(view)))
                self.db.execute("INSERT OR IGNORE INTO unpublished_views VALUES (?, ?, ?)",
                                (session, view["table"], view["board"]))

    def view_published(self, session: str, table: str, board: int) -> None:
        with self.db:
            self.db.execute("DELETE FROM unpublished_views WHERE session=? AND tbl=? "
                            "AND board=?", (session, table, board))

    def save_view(self, session: str, view: Mapping[str, Any]) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO views VALUES (?, ?, ?, ?)",
                            (session, view["table"], view["board"], json.dumps(view)))

    def operator(self, session: str, action: str, board: int, table: str | None) -> None:
        with self.db:
            if action == "clear":
                self.db.execute("DELETE FROM manual WHERE session=? AND tbl=? AND board=?",
                                (session, table or "*", board))
            else:
                self.db.execute("INSERT OR REPLACE INTO manual VALUES (?, ?, ?, ?)",
                                (session, table or "*", board, action))

    def status(self, session: str) -> dict[str, Any]:
        q = self.db.execute
        waiting = self._meta(f"waiting/{session}")
        refused = self._meta(f"refused/{session}")
        return {
            "session": session,
            "held": [{"table": t, "board": b, "items": n} for t, b, n in q(
                "SELECT tbl, board, count(*) FROM held WHERE session=? GROUP BY tbl, board "
                "ORDER BY tbl, board", (session,))],
            # each held board: the tables it waits for, and why its result is not trusted
            "waiting": json.loads(waiting) if waiting else [],
            "finished": [f"{t}/{b}" for t, b in q(
                "SELECT tbl, board FROM done WHERE session=? ORDER BY tbl, board", (session,))],
            "manual": [{"table": t, "board": b, "action": a} for t, b, a in q(
                "SELECT tbl, board, action FROM manual WHERE session=?", (session,))],
            "reports": [{"table": t, "board": b, "reason": r} for t, b, r in q(
                "SELECT tbl, board, reason FROM reports WHERE session=?", (session,))],
            # the payloads not published for not being the wire contract's (outgoing.py)
            "refused": json.loads(refused) if refused else {"count": 0, "recent": []},
        }

    def comment(self, session: str, text: str, at: float) -> None:
        with self.db:
            self.db.execute("INSERT INTO commentary VALUES (?, ?, ?)", (session, at, text))

    def commentary(self, session: str) -> tuple[float, str] | None:
        row = self.db.execute("SELECT at, text FROM commentary WHERE session=? "
                              "ORDER BY rowid DESC LIMIT 1", (session,)).fetchone()
        return (float(row[0]), str(row[1])) if row else None

    def close(self) -> None:
        self.db.close()


def open_relay_store(path: str | Path, session: str, movement: Any = None) -> HeldStore:
    """The relay's store at ``path`` (its folder made), set to run ``session``; OSError or
    sqlite3.DatabaseError for a path that cannot be one."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    store = HeldStore(path)
    store.set_session(session, movement)
    return store
