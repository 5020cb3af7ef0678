"""The controller's journal: each message accepted, before it is applied.

One SQLite file in WAL mode:

- ``incoming``: ``n`` (arrival order, 1, 2, ...), ``topic``, ``payload`` (the bytes as they
  came), ``received`` (wall clock, for people reading the journal; the Engine never sees it);
- ``meta.published_through``: the last incoming ``n`` whose outputs are all published
  (handed to the broker: sent for QoS 0, PUBACKed for QoS 1);
- ``outgoing``: what was published, each row tied to the incoming message that caused it.
  Schema 1 (journals written before contract 1.3) wrote every output there; since schema 2
  the daemon no longer does (the Engine is deterministic: a rebuild computes them again from
  ``incoming``), and the table keeps an old journal's rows readable.

The daemon's order for a batch of messages is: ``append_incoming`` (one transaction for the
batch, written: group commit) -> Engine -> publish without waiting -> ``sync`` (the batch
durable) -> MQTT acknowledgements -> ``mark_published`` once the broker has them, which
rides on the next ``append_incoming`` transaction (or ``flush_mark`` when idle) and costs
no sync of its own. A batch is written before it is applied (a journal that cannot write
stops it before the Engine sees it), and durable before it is acknowledged; its ``state``
goes out between the two, so that a table's display does not wait for the disk (an
``fsync`` of an SD card can take tens of milliseconds). A power cut between the two loses
nothing: the broker, not acknowledged, delivers the batch again, and the bridges resend it.
So a message the broker considers delivered is always in the journal, and a restart rebuilds
each table by feeding ``incoming`` to a fresh Engine, then publishes what was computed but
not marked published (everything after ``published_through``; at worst some twice).

Since schema 3, ``topics`` keeps each topic's first ``n`` (written with it), and
``snapshots`` each table's newest snapshot (``controller.service.snapshot``:
the values a table carries across boards, taken at the input ``n`` that started its board),
so that a restart restores it and replays only that table's entries from ``n`` on. A
snapshot is written in the same transaction as a later batch, and only once its input is
published (``n <= published_through``): it is never ahead of the journal. A schema 2
journal gains both tables on open (``topics`` filled from ``incoming`` once; its first
restart replays everything).

A journal is used by one process at a time (an exclusive ``flock`` on ``PATH.lock``,
released by the kernel however the process ends).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from controller.sqlitefile import private_sqlite

__all__ = ["Journal", "JournalError", "IncomingEntry", "OutgoingEntry", "SCHEMA_VERSION"]

SCHEMA_VERSION = 3
#: versions this program opens: 1 (outputs journaled too) is migrated on open (it only
#: changes the version: the tables are the same, ``outgoing`` is no longer written); 2
#: gains the ``snapshots`` table
_MIGRATES_FROM = (1, 2)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS incoming (
    n        INTEGER PRIMARY KEY AUTOINCREMENT,
    topic    TEXT NOT NULL,
    payload  BLOB NOT NULL,
    received REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS outgoing (
    n         INTEGER PRIMARY KEY AUTOINCREMENT,
    cause     INTEGER NOT NULL,
    topic     TEXT NOT NULL,
    payload   BLOB NOT NULL,
    retain    INTEGER NOT NULL,
    qos       INTEGER NOT NULL,
    published REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS topics (
    topic  TEXT PRIMARY KEY,
    first  INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS snapshots (
    tbl    TEXT PRIMARY KEY,
    n      INTEGER NOT NULL,
    format INTEGER NOT NULL,
    data   BLOB NOT NULL
);
"""


class JournalError(Exception):
    """The journal cannot be opened or written (not a journal, locked, disk full...)."""


@dataclass(frozen=True, slots=True)
class IncomingEntry:
    n: int
    topic: str
    payload: bytes
    received: float


@dataclass(frozen=True, slots=True)
class OutgoingEntry:
    n: int
    cause: int
    topic: str
    payload: bytes
    retain: bool
    qos: int
    published: float


class Journal:
    """``Journal(path)`` opens (creating if needed) and locks a journal file."""

    def __init__(self, path: str | Path, *, sync: Literal["full", "normal"] = "full") -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise JournalError(self._unwritable(self.path.parent, e)) from None
        self._lock_file: IO[bytes] | None = None
        # the daemon writes from a worker thread (asyncio.to_thread); one statement at a time
        self._mutex = threading.RLock()
        self._mark = 0           # published-through given by mark_published
        self._mark_written = 0   # ... and as written in meta
        #: written by append_incoming(durable=False) and not yet synced (``sync``)
        self._unsynced = False
        self._wal = self.path.with_name(self.path.name + "-wal")  # SQLite's name for it
        #: table -> (n, format, data): snapshots waiting for a transaction that may write them
        self._staged: dict[str, tuple[int, int, bytes]] = {}
        self._lock()
        try:
            # every hand of the session is in it: 0600 from its first moment, and one found
            # open to others is closed to them (controller/sqlitefile.py)
            self._db = private_sqlite(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            # FULL: each commit is fsync'ed, so an acknowledged event survives a power cut
            # on the Pi as well as a crash; NORMAL survives a crash of the process only.
            self._sync = "FULL" if sync == "full" else "NORMAL"
            self._db.execute(f"PRAGMA synchronous={self._sync}")
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise JournalError(f"{self.path}: journal schema {version} is newer than this "
                                   f"program's ({SCHEMA_VERSION})")
            self._db.executescript(_SCHEMA)
            self._check_tables()
            if version != SCHEMA_VERSION:  # new, or migrated from _MIGRATES_FROM
                self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            self.migrated_from = version if version in _MIGRATES_FROM else None
            if self.migrated_from is not None:  # once: each topic's first message
                self._db.execute("INSERT OR IGNORE INTO topics (topic, first) "
                                 "SELECT topic, MIN(n) FROM incoming GROUP BY topic")
            self._mark = self._mark_written = self._published_through(self._db)
            self._topics = {str(t) for (t,) in self._db.execute("SELECT topic FROM topics")}
        except sqlite3.DatabaseError as e:
            self._unlock()
            if _is_readonly(e):  # the journal is sound: say why it cannot be written
                raise JournalError(self._unwritable(self.path, e)) from None
            # never "repair" by starting afresh: the file may be the only record of a session
            raise JournalError(f"{self.path} is not a usable journal ({e}); move it away to "
                               "start a new one") from e
        except OSError as e:
            self._unlock()
            raise JournalError(self._unwritable(self.path, e)) from None
        except JournalError:
            self._unlock()
            raise

    # -- locking --------------------------------------------------------------------------
    def _lock(self) -> None:
        lock_path = self.path.with_name(self.path.name + ".lock")
        try:
            f = os.fdopen(os.open(lock_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
                          "ab")  # held for the journal's lifetime
        except OSError as e:
            raise JournalError(self._unwritable(lock_path, e)) from None
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.close()
            raise JournalError(f"{self.path} is in use by another process "
                               "(is another controller running?)") from None
        self._lock_file = f

    def _unwritable(self, where: Path, error: BaseException) -> str:
        """The cause of a journal that cannot be written, for the operator: a read-only file
        system or a permission, never "not a journal" (the file is sound and must be kept)."""
        probe = where if where.exists() else where.parent
        try:
            readonly_fs = bool(os.statvfs(probe).f_flag & os.ST_RDONLY)
        except OSError:
            readonly_fs = False
        if readonly_fs or getattr(error, "errno", None) == errno.EROFS:
            cause = f"{probe} is on a read-only file system (remount it read-write, or give " \
                    "--journal a path on a writable one)"
        else:
            user = _user_name()
            cause = f"permission denied: user {user} cannot write {where} or its directory " \
                    f"{where.parent} (give that user write access, or another --journal)"
        return f"cannot write the journal {self.path}: {cause}; the journal is kept as it is"

    def _write_failure(self, error: sqlite3.Error) -> str:
        if _is_readonly(error):  # e.g. the SD card remounted read-only under a running daemon
            return self._unwritable(self.path, error)
        return f"cannot write to journal {self.path}: {error}"

    def _unlock(self) -> None:
        if self._lock_file is not None:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
            self._lock_file.close()
            self._lock_file = None

    def _check_tables(self) -> None:
        cols = {r[1] for r in self._db.execute("PRAGMA table_info(incoming)")}
        if not {"n", "topic", "payload", "received"} <= cols:
            raise JournalError(f"{self.path}: table 'incoming' has unexpected columns {cols}")

    # -- writing --------------------------------------------------------------------------
    def append_incoming(self, messages: Sequence[tuple[str, bytes]],
                        received: float | None = None, *, durable: bool = True) -> list[int]:
        """Write messages in one transaction; return their ``n`` in order. Durable on return;
        with ``durable=False`` written (a crash of the process loses nothing) and durable
        once :meth:`sync` returns."""
        if not messages:
            return []
        when = time.time() if received is None else received
        try:
            new: dict[str, int] = {}
            with self._transaction(self._sync if durable else "NORMAL") as db:
                ns = []
                for topic, payload in messages:
                    cur = db.execute(
                        "INSERT INTO incoming (topic, payload, received) VALUES (?, ?, ?)",
                        (topic, bytes(payload), when))
                    n = int(cur.lastrowid or 0)
                    ns.append(n)
                    if topic not in self._topics and topic not in new:
                        new[topic] = n
                if new:  # each topic's first message: a restart finds its tables at once
                    db.executemany("INSERT OR IGNORE INTO topics (topic, first) VALUES (?, ?)",
                                   new.items())
                mark = self._write_mark(db)  # rides on this commit: no sync of its own
                self._write_snapshots(db)
            self._topics.update(new)
            self._mark_written = max(self._mark_written, mark)
            if not durable and self._sync == "FULL":
                self._unsynced = True
            return ns
        except sqlite3.Error as e:
            raise JournalError(self._write_failure(e)) from e

    def sync(self) -> None:
        """Make what ``append_incoming(..., durable=False)`` wrote durable: ``fsync`` of the
        write-ahead log, where SQLite's commits put it (``synchronous=FULL`` does the same
        at each commit; this lets the caller do its work in between). Nothing to do with
        ``sync="normal"``, or when nothing was written since the last sync. A failure is
        the journal's (:class:`JournalError`): the caller acknowledges nothing."""
        if not self._unsynced:
            return
        with self._mutex:
            try:
                try:
                    fd = os.open(self._wal, os.O_RDONLY)
                except FileNotFoundError:  # checkpointed and gone: the database holds it
                    fd = os.open(self.path, os.O_RDONLY)
                try:
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as e:
                raise JournalError(f"{self.path}: could not sync the journal: "
                                   f"{e.strerror or e}") from e
            self._unsynced = False

    def record_published(self, through: int,
                         published: Iterable[tuple[int, str, bytes, bool, int]],
                         when: float | None = None) -> None:
        """Record published messages ``(cause, topic, payload, retain, qos)`` and advance
        ``published_through`` to ``through`` (never backwards)."""
        stamp = time.time() if when is None else when
        try:
            # not synced on its own: the next incoming commit syncs the WAL up to here. A
            # crash in between only makes a restart publish some outputs again.
            with self._transaction("NORMAL") as db:
                db.executemany(
                    "INSERT INTO outgoing (cause, topic, payload, retain, qos, published) "
                    "VALUES (?, ?, ?, ?, ?, ?)",
                    [(c, t, bytes(p), int(r), q, stamp) for c, t, p, r, q in published])
                if through > self._published_through(db):
                    db.execute("INSERT INTO meta (key, value) VALUES ('published_through', ?) "
                               "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                               (str(through),))
        except sqlite3.Error as e:
            raise JournalError(self._write_failure(e)) from e

    def mark_published(self, through: int) -> None:
        """Every output of the incoming messages up to ``through`` is published: written
        with the next :meth:`append_incoming` (or :meth:`flush_mark`), never backwards."""
        with self._mutex:
            self._mark = max(self._mark, through)

    def flush_mark(self) -> None:
        """Write a pending :meth:`mark_published` now (not synced: a crash before the next
        synced commit only makes a restart publish some outputs again)."""
        with self._mutex:
            if self._mark <= self._mark_written and not self._snapshots_ready():
                return
            try:
                with self._transaction("NORMAL") as db:
                    mark = self._write_mark(db)
                    self._write_snapshots(db)
                self._mark_written = max(self._mark_written, mark)
            except sqlite3.Error as e:
                raise JournalError(self._write_failure(e)) from e

    def _write_mark(self, db: sqlite3.Connection) -> int:
        """Write the pending mark in ``db``'s transaction; the mark (0: none pending)."""
        mark = self._mark
        if mark <= self._mark_written:
            return 0
        if mark > self._published_through(db):
            db.execute("INSERT INTO meta (key, value) VALUES ('published_through', ?) "
                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value", (str(mark),))
        return mark

    def stage_snapshots(self, snapshots: Iterable[tuple[str, int, int, bytes]]) -> None:
        """Table snapshots ``(table, n, format, data)`` to write with a later transaction,
        once ``n`` is published (a newer one of a table replaces the older)."""
        with self._mutex:
            for table, n, fmt, data in snapshots:
                self._staged[table] = (n, fmt, bytes(data))

    def _snapshots_ready(self) -> bool:
        mark = self._mark
        return any(n <= mark for n, _, _ in self._staged.values())

    def _write_snapshots(self, db: sqlite3.Connection) -> None:
        """Write the staged snapshots whose input is published (``published_through`` as
        this transaction leaves it) in ``db``'s transaction; keep the others staged."""
        if not self._staged:
            return
        through = max(self._mark, self._published_through(db))
        ready = [(t, n, f, d) for t, (n, f, d) in self._staged.items() if n <= through]
        if ready:
            db.executemany("INSERT INTO snapshots (tbl, n, format, data) VALUES (?, ?, ?, ?) "
                           "ON CONFLICT(tbl) DO UPDATE SET n = excluded.n, "
                           "format = excluded.format, data = excluded.data "
                           "WHERE excluded.n > snapshots.n", ready)
            for t, *_ in ready:
                del self._staged[t]

    class _Txn:
        def __init__(self, db: sqlite3.Connection, mutex: threading.RLock, sync: str) -> None:
            self.db = db
            self.mutex = mutex
            self.sync = sync

        def __enter__(self) -> sqlite3.Connection:
            self.mutex.acquire()
            try:
                self.db.execute(f"PRAGMA synchronous={self.sync}")
                self.db.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.mutex.release()
                raise
            return self.db

        def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                     tb: TracebackType | None) -> None:
            try:
                self.db.execute("COMMIT" if et is None else "ROLLBACK")
            finally:
                self.mutex.release()

    def _transaction(self, sync: str) -> Journal._Txn:
        return Journal._Txn(self._db, self._mutex, sync)

    # -- reading --------------------------------------------------------------------------
    @staticmethod
    def _published_through(db: sqlite3.Connection) -> int:
        row = db.execute("SELECT value FROM meta WHERE key = 'published_through'").fetchone()
        return int(row[0]) if row else 0

    @property
    def published_through(self) -> int:
        with self._mutex:
            return self._published_through(self._db)

    @property
    def last_incoming(self) -> int:
        with self._mutex:
            row = self._db.execute("SELECT MAX(n) FROM incoming").fetchone()
        return int(row[0] or 0)

    def incoming(self, after: int = 0) -> Iterator[IncomingEntry]:
        """Incoming messages with ``n > after``, in arrival order (read in chunks, each
        under the journal's lock, so that the daemon's writer thread may go on)."""
        last = after
        while True:
            with self._mutex:
                rows = self._db.execute(
                    "SELECT n, topic, payload, received FROM incoming WHERE n > ? "
                    "ORDER BY n LIMIT 2000", (last,)).fetchall()
            if not rows:
                return
            for n, topic, payload, received in rows:
                yield IncomingEntry(int(n), str(topic), bytes(payload), float(received))
            last = int(rows[-1][0])

    def entry(self, n: int) -> IncomingEntry | None:
        """Incoming message ``n``, if there is one."""
        with self._mutex:
            row = self._db.execute("SELECT n, topic, payload, received FROM incoming "
                                   "WHERE n = ?", (n,)).fetchone()
        return None if row is None else IncomingEntry(int(row[0]), str(row[1]),
                                                      bytes(row[2]), float(row[3]))

    def snapshots(self) -> list[tuple[str, int, int, bytes]]:
        """Each table's newest snapshot as written: ``(table, n, format, data)``."""
        with self._mutex:
            rows = self._db.execute("SELECT tbl, n, format, data FROM snapshots "
                                    "ORDER BY tbl").fetchall()
        return [(str(t), int(n), int(f), bytes(d)) for t, n, f, d in rows]

    def first_by_topic(self) -> dict[str, int]:
        """Each topic's first incoming ``n`` (kept in ``topics`` as messages are written)."""
        with self._mutex:
            rows = self._db.execute("SELECT topic, first FROM topics").fetchall()
        return {str(t): int(n) for t, n in rows}

    def outgoing(self, after: int = 0) -> Iterator[OutgoingEntry]:
        last = after
        while True:
            with self._mutex:
                rows = self._db.execute(
                    "SELECT n, cause, topic, payload, retain, qos, published FROM outgoing "
                    "WHERE n > ? ORDER BY n LIMIT 2000", (last,)).fetchall()
            if not rows:
                return
            for n, cause, topic, payload, retain, qos, published in rows:
                yield OutgoingEntry(int(n), int(cause), str(topic), bytes(payload),
                                    bool(retain), int(qos), float(published))
            last = int(rows[-1][0])

    def counts(self) -> dict[str, int]:
        with self._mutex:
            return {
                "incoming": int(self._db.execute("SELECT COUNT(*) FROM incoming")
                                .fetchone()[0]),
                "outgoing": int(self._db.execute("SELECT COUNT(*) FROM outgoing")
                                .fetchone()[0]),
                "published_through": self._published_through(self._db),
            }

    def export_jsonl(self, out: IO[str], errors: IO[str] | None = None) -> int:
        """Write the incoming messages as ``bridge-table replay`` reads them
        (``{"topic": .., "payload": ..}`` a line); return how many.

        A payload that is not JSON, or JSON nested too deeply to rebuild, is written as text
        (replay then reports it as the daemon did) and named on ``errors``: one bad row
        never stops the export."""
        count = 0
        for entry in self.incoming():
            payload: Any
            problem = None
            try:
                payload = json.loads(entry.payload)
                line = json.dumps({"topic": entry.topic, "payload": payload}, ensure_ascii=False)
            except ValueError:  # kept as text so that replay reports it as the daemon did
                problem = "not JSON"
            except RecursionError:
                problem = "JSON nested too deeply"
            if problem is not None:
                text = entry.payload.decode("utf-8", "replace")
                line = json.dumps({"topic": entry.topic, "payload": text}, ensure_ascii=False)
                if errors is not None:
                    print(f"{self.path}: incoming row {entry.n}: {problem}, exported as text",
                          file=errors)
            out.write(line + "\n")
            count += 1
        return count

    # -- lifetime -------------------------------------------------------------------------
    def close(self) -> None:
        with self._mutex:
            if getattr(self, "_db", None) is not None:
                self._db.close()
                del self._db
            self._unlock()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()


def _is_readonly(error: sqlite3.Error) -> bool:
    code = getattr(error, "sqlite_errorcode", None)
    return code is not None and (code & 0xFF) == sqlite3.SQLITE_READONLY \
        or "readonly database" in str(error)


def _user_name() -> str:
    try:
        import pwd
        return pwd.getpwuid(os.geteuid()).pw_name
    except (ImportError, KeyError):
        return str(os.geteuid())


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m controller.service.journal export JOURNAL`` : the journal as replay input."""
    import argparse
    import sys

    ap = argparse.ArgumentParser(prog="python -m controller.service.journal")
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("export", help="incoming messages as JSONL for `bridge-table replay`")
    ex.add_argument("journal")
    st = sub.add_parser("stats", help="how many messages in and out")
    st.add_argument("journal")
    args = ap.parse_args(argv)
    if not os.path.exists(args.journal):
        print(f"no such journal: {args.journal}", file=sys.stderr)
        return 2
    try:
        with Journal(args.journal) as j:
            if args.cmd == "export":
                j.export_jsonl(sys.stdout, errors=sys.stderr)
            else:
                print(json.dumps(j.counts()))
    except JournalError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
