"""``bridge-table broadcast``: the controllers' feed to the public, through the release gate.

The relay reads ``{root}/+/feed``, ``alert``, ``result`` and ``state`` and the controller's
status, and republishes what the gate (``gate.py``) releases on ``{public}/{t}/feed``,
``alert`` and ``result`` (retained), with the session id added, plus a retained view of
each released board (``{public}/{t}/board/{b}``, ``{public}/{t}/snapshot``: ``view.py``) and
the session (``{public}/session``) for late joiners, what each table plays now
(``{public}/{t}/now``: board and contract, no card) and the operator's commentary
(``{public}/commentary``). ``--out DIR`` writes a live LIN and PBN file per table as boards
are released. Exactly once: see ``Relay``.

Everything is kept in a SQLite store, per session id: held items, boards seen in play,
finished boards, the operator's decisions, reports. A relay killed mid-round loses
nothing. ``bridge-table broadcast release|hold|clear|status|comment --store FILE`` talk to
the running relay through that store (it reads the operator's decisions every second).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import logging
import signal
import sqlite3
import sys
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller import wire
from controller.broadcast.gate import RELEASES, Gate, GatePolicy, Item, Report
from controller.broadcast.view import apply_item, new_view, write_table_files
from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import (
    OutageLog,
    add_log_level,
    number_ranges,
    plain_help,
    setup_logging,
)

if TYPE_CHECKING:
    from controller.broker.settings import BrokerSettings

__all__ = ["HeldStore", "Publish", "Relay", "run_relay", "main"]

log = logging.getLogger("bridge_table.broadcast")

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

#: the longest commentary line (``broadcast comment``)
MAX_COMMENT = 280


def _digest(table: str, kind: str, payload: Mapping[str, Any]) -> str:
    """One controller message, for dropping a redelivered copy (QoS 1 is at least once)."""
    text = json.dumps([table, kind, payload], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class HeldStore:
    """SQLite: everything the relay must not forget, per session id."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.db = sqlite3.connect(str(path), timeout=5)
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


def clean_comment(text: str) -> str:
    """One line of at most ``MAX_COMMENT`` characters, no control characters."""
    line = " ".join("".join(c if c.isprintable() else " " for c in text).split())
    if not line:
        raise ValueError("the commentary line is empty")
    if len(line) > MAX_COMMENT:
        raise ValueError(f"the commentary line has {len(line)} characters; at most "
                         f"{MAX_COMMENT}")
    return line


@dataclass(frozen=True)
class Publish:
    """One message to publish; ``item`` (a released item) or ``view`` (a board's view,
    ``(table, board)``) is what to mark once the broker has acknowledged it."""

    topic: str
    payload: dict[str, Any]
    retain: bool
    item: Item | None = None
    view: tuple[str, int] | None = None


class Relay:
    """The relay's logic between the broker and the gate (testable without a broker).

    Exactly once: an item leaves the store only once the broker has acknowledged its
    public copy (``commit``), and a board's view is marked published only once its own
    publication was acknowledged (``view_published``): a relay killed anywhere publishes,
    once restarted, what it had not, and what was published is not published again (but
    for a copy whose acknowledgement was on its way at the moment of the kill)."""

    def __init__(self, gate: Gate, *, root: str = "bridge", public: str = "public",
                 store: HeldStore | None = None,
                 info: Mapping[tuple[str, int], Mapping[str, Any]] | None = None,
                 deals: Mapping[int, str] | None = None, out: Path | None = None,
                 session_info: Mapping[str, Any] | None = None) -> None:
        self.gate, self.root, self.public, self.store = gate, root, public, store
        self.session = gate.policy.session_id
        self.info = info or {}           # (table, board) -> view fields (round, pairs...)
        self.deals = deals or {}
        self.out = out
        self.session_info = dict(session_info or {})
        self.views: dict[tuple[str, int], dict[str, Any]] = {}
        self.reported: set[Any] = set()
        self.digests: set[str] = set()
        #: views changed by released items, not yet published (in order of change)
        self.dirty: dict[tuple[str, int], None] = {}
        #: per table, the board whose item was released last (its ``snapshot``)
        self.latest: dict[str, int] = {}
        self.files_due: set[str] = set()
        #: what each table plays now (board, phase, contract; never a card): the last sent
        #: and the ones to send (``public/{t}/now``)
        self.now_sent: dict[str, dict[str, Any]] = {}
        self.now_due: dict[str, dict[str, Any]] = {}
        self.comment_sent: tuple[float, str] | None = None
        if store is not None:
            self.views = store.load(gate)
            self.digests = store.digests(self.session)
            for key in store.unpublished(self.session):
                if key in self.views:
                    self.dirty[key] = None
                    self.latest[key[0]] = key[1]

    def take(self, topic: str, payload: Any, retained: bool, now: float) -> None:
        """One message of the controller's, stored before it is acknowledged."""
        parts = topic.split("/")
        if len(parts) < 3 or parts[0] != self.root or not isinstance(payload, dict):
            return
        if parts[1] == "controller":
            if len(parts) == 3 and parts[2] == "status":
                self.gate.controller_status(None, payload, now)
            elif len(parts) == 4 and parts[3] == "status":
                self.gate.controller_status(parts[2], payload, now)
            self._saved()
            return
        if len(parts) != 3:
            return
        table, kind = parts[1], parts[2]
        added: list[Item] = []
        digests: list[str] = []
        if kind == "state":
            self.gate.state(table, payload, retained=retained, now=now)
            self._now_playing(table, payload)
        elif kind in ("feed", "alert", "result"):
            fresh = not retained or (kind == "result" and "session" in payload)
            other = payload.get("session")
            if fresh and isinstance(other, str) and other and other != self.session:
                # another session's: kept in the store under its own id, never published
                # by this relay; a relay restarted for that session (same store) has it
                self.gate.ours(table, payload)   # reported
                if self.store is not None:
                    self.store.keep_other(other, table, kind, payload, now,
                                          _digest(table, kind, payload))
            elif fresh and self.gate.ours(table, payload):
                digest = _digest(table, kind, payload)
                if digest not in self.digests:   # not a redelivered copy
                    self.digests.add(digest)
                    digests.append(digest)
                    added.append(self.gate.offer(table, kind, payload, now))
                    board = payload.get("board")
                    if kind == "feed" and isinstance(board, int) and \
                            not isinstance(board, bool):
                        self.gate.seen(table, board)
            if kind == "result":
                self.gate.result(table, payload, now=now)
        self._saved(added, digests)

    def _now_playing(self, table: str, state: Mapping[str, Any]) -> None:
        """``public/{t}/now``: the board a table plays and its contract once the auction
        is over, from a state of this session; no call, card or hand."""
        mv = self.gate.policy.movement
        if state.get("table") != table or state.get("session") != self.session or (
                mv is not None and table not in {t for r in mv.rounds for t in r.tables}):
            return
        now = {"v": wire.VERSION, "session": self.session, "table": table,
               "board": state.get("board"), "phase": state.get("phase"),
               "contract": state.get("contract"), "declarer": state.get("declarer")}
        if self.now_sent.get(table) != now:
            self.now_due[table] = now

    def now_messages(self) -> list[Publish]:
        out = [Publish(f"{self.public}/{t}/now", p, True) for t, p in self.now_due.items()]
        self.now_sent.update(self.now_due)
        self.now_due = {}
        return out

    def comment_message(self) -> Publish | None:
        """The operator's latest commentary line (``broadcast comment``), once."""
        latest = self.store.commentary(self.session) if self.store is not None else None
        if latest is None or latest == self.comment_sent:
            return None
        self.comment_sent = latest
        return Publish(f"{self.public}/commentary",
                       {"v": wire.VERSION, "session": self.session, "text": latest[1],
                        "at": latest[0]}, True)

    def _saved(self, added: Sequence[Item] = (), digests: Sequence[str] = ()) -> None:
        if self.store is not None:
            self.store.save(self.gate, added, digests)
        else:
            self.gate.changes.clear()
        for key, report in self.gate.reports.items():
            if key not in self.reported:
                self.reported.add(key)
                where = f"table {report.table}" if report.board is None else \
                    f"table {report.table} board {report.board}"
                log.warning("held: %s: %s", where, report.reason)

    def plan(self, now: float) -> list[Publish]:
        """The items that may go out now, as messages; each leaves the store when
        ``commit``-ted (after the broker acknowledged it)."""
        return [Publish(f"{self.public}/{item.table}/{item.kind}",
                        {**item.payload, "session": self.session}, item.kind == "result",
                        item=item) for item in self.gate.ready(now)]

    def commit(self, item: Item) -> None:
        """``item``'s public copy was acknowledged: it leaves the gate and the store, and
        its board's view takes it in."""
        self.gate.released(item)
        view = None
        if item.board is not None:
            key = (item.table, item.board)
            view = self.views.get(key)
            if view is None:
                info = {**self.session_info, **self.info.get(key, {})}
                view = self.views[key] = new_view(self.session, item.table, item.board, info)
            apply_item(view, item.kind, item.payload, self.deals.get(item.board))
            self.dirty.pop(key, None)
            self.dirty[key] = None
            self.latest[item.table] = item.board
        if self.store is not None:
            self.store.released(self.session, item, view)

    def view_messages(self) -> list[Publish]:
        """The changed views (``public/{t}/board/{b}``) and snapshots of the tables whose
        latest board changed, to publish after the items."""
        out = []
        for key in self.dirty:
            table, board = key
            view = self.views[key]
            out.append(Publish(f"{self.public}/{table}/board/{board}", view, True, view=key))
            if self.latest.get(table) == board:
                out.append(Publish(f"{self.public}/{table}/snapshot", view, True))
        return out

    def view_published(self, key: tuple[str, int]) -> None:
        self.dirty.pop(key, None)
        self.files_due.add(key[0])
        if self.store is not None:
            self.store.view_published(self.session, *key)

    def write_files(self) -> None:
        """The live LIN and PBN files of the tables whose views were published."""
        due, self.files_due = self.files_due, set()
        if self.out is None:
            return
        for table in sorted(due):
            try:
                write_table_files(self.out, table,
                                  [v for (t, _), v in self.views.items() if t == table])
            except Exception as exc:  # never stop the relay for a file
                log.warning("table %s: LIN/PBN not written: %s", table, exc)

    def release(self, now: float) -> list[tuple[str, dict[str, Any], bool]]:
        """Everything to publish now, marked published at once (no broker to wait for):
        (topic, payload, retain)."""
        out: list[tuple[str, dict[str, Any], bool]] = []
        for p in self.plan(now):
            assert p.item is not None
            out.append((p.topic, p.payload, p.retain))
            self.commit(p.item)
        for p in self.view_messages():
            out.append((p.topic, p.payload, p.retain))
            if p.view is not None:
                self.view_published(p.view)
        self.write_files()
        out += [(p.topic, p.payload, p.retain) for p in self.now_messages()]
        if self.store is not None:
            self.store.save_waiting(self.gate)
        return out

    def session_payload(self) -> dict[str, Any]:
        mv = self.gate.policy.movement
        tables = sorted({t for r in mv.rounds for t in r.tables}) if mv is not None else []
        return {"v": wire.VERSION, "session": self.session, "tables": tables, **self.session_info}


async def run_relay(broker: BrokerSettings, relay: Relay, *, stop: asyncio.Event | None = None,
                    client_id: str | None = None, ready: asyncio.Event | None = None) -> None:
    """Run ``relay`` on a broker until ``stop``; reconnects after a broker error."""
    import aiomqtt

    stop = stop or asyncio.Event()
    cid = client_id or (relay.store.client_id() if relay.store is not None else
                        f"bridge-table-broadcast-{uuid.uuid4().hex[:12]}")
    root = relay.root
    outage = OutageLog(log, f"broker {broker.url}")
    while not stop.is_set():
        try:
            client = aiomqtt.Client(
                broker.host, broker.port, identifier=cid, clean_session=False,
                username=broker.username, password=broker.password,
                tls_context=broker.tls_context(), keepalive=broker.keepalive)
            # a message is acknowledged once the store has it (``_serve``): one that came
            # while the relay died is delivered again by the broker, not lost
            client._client.manual_ack_set(True)  # noqa: SLF001  # paho, under aiomqtt
            async with client:
                await client.subscribe(
                    [(wire.status_topic(root=root), 1), (wire.status_topic("+", root=root), 1)]
                    + [(wire.topic("+", kind, root=root), 1)
                       for kind in ("state", "feed", "alert", "result")])
                await client.publish(f"{relay.public}/session",
                                     json.dumps(relay.session_payload()), qos=1, retain=True)
                outage.recovered()
                if ready is not None:
                    ready.set()
                await _serve(client, relay, stop)
        except aiomqtt.MqttError as exc:
            outage.failed(exc, 1.0)
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass


async def _serve(client: Any, relay: Relay, stop: asyncio.Event) -> None:
    wake = asyncio.Event()
    stopping = asyncio.Event()

    async def receive() -> None:
        async for message in client.messages:
            try:
                payload = json.loads(bytes(message.payload))
            except (ValueError, TypeError):
                log.warning("bad payload on %s ignored", message.topic)
                payload = None
            if payload is not None:
                try:
                    relay.take(str(message.topic), payload, bool(message.retain),
                               time.time())
                except Exception:  # a defect must not stop the relay (nor lose the rest)
                    log.exception("message on %s not taken", message.topic)
            client._client.ack(message.mid, message.qos)  # noqa: SLF001  # stored: ack
            wake.set()

    async def release() -> None:
        last_sync = 0.0
        while not stopping.is_set():
            wake.clear()
            now = time.time()
            synced = relay.store is not None and now - last_sync >= 1.0
            if synced and relay.store is not None:
                last_sync = now
                relay.store.sync_manual(relay.gate)
            for p in relay.plan(now):
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
                assert p.item is not None
                relay.commit(p.item)       # acknowledged by the broker: released
                if stopping.is_set():
                    break
            for p in relay.view_messages():
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
                if p.view is not None:
                    relay.view_published(p.view)
            relay.write_files()
            extra = relay.now_messages()
            if synced:   # the operator's commentary, read with the decisions
                if relay.store is not None:
                    relay.store.save_waiting(relay.gate)
                comment = relay.comment_message()
                extra += [comment] if comment is not None else []
            for p in extra:
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
            if stopping.is_set():
                return
            nxt = relay.gate.next_time()
            timeout = 1.0 if nxt is None else min(1.0, max(0.0, nxt - time.time()))
            try:
                await asyncio.wait_for(wake.wait(), timeout)
            except TimeoutError:
                pass

    receiver = asyncio.create_task(receive())
    releaser = asyncio.create_task(release())
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({receiver, releaser, stopper},
                                 return_when=asyncio.FIRST_COMPLETED)
    # on a stop, the release in progress ends at a message boundary (an item is never
    # half released); a broker that does not answer within 5 s ends it anyway (the items
    # not acknowledged stay held and go out after a restart)
    stopping.set()
    wake.set()
    await _cancel(receiver)
    if releaser not in done:
        await asyncio.wait({releaser}, timeout=5.0)
    await _cancel(releaser)
    await _cancel(stopper)
    for task in done:
        if task is not stopper and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def _cancel(task: asyncio.Task[Any]) -> None:
    while not task.done():  # a cancellation can be swallowed on Python 3.11: repeat
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)


def _load_session(args: argparse.Namespace) -> Any:
    """The session: ``--session`` (the session file, controller.session) or ``--schedule``
    (the schedule TOML, one round or every round)."""
    if args.session:
        from controller.session import load_session
        return load_session(args.session)
    if args.schedule:
        from controller.session.schedule import load_movement
        return load_movement(args.schedule)
    return None


def _session_views(session: Any) -> tuple[dict[tuple[str, int], dict[str, Any]],
                                          dict[str, Any]]:
    info: dict[tuple[str, int], dict[str, Any]] = {}
    if session is None:
        return info, {}
    def name_of(number: Any) -> str | None:
        competitor = getattr(session, "competitor", None)
        if callable(competitor):   # the session file's Session: Competitor(players, name)
            try:
                c = competitor(int(number))
            except (TypeError, ValueError):
                return None
            players = " - ".join(getattr(c, "players", ()) or ())
            return players or getattr(c, "name", "") or None
        pairs = getattr(session, "pairs", None)
        if isinstance(pairs, Mapping):
            value = pairs.get(str(number), pairs.get(number))
            return value if isinstance(value, str) else None
        return None

    for rnd in session.movement.rounds:
        for table, tr in rnd.tables.items():
            ns, ew = getattr(tr, "ns", None), getattr(tr, "ew", None)
            for board in tr.boards:
                entry: dict[str, Any] = {"round": rnd.number}
                if ns is not None:
                    entry["ns"] = str(ns)
                if ew is not None:
                    entry["ew"] = str(ew)
                players = {side: n for side, n in (("ns", name_of(ns) if ns is not None
                                                        else None),
                                                       ("ew", name_of(ew) if ew is not None
                                                        else None)) if n}
                if players:
                    entry["players"] = players
                info[(str(table), board)] = entry
    # the file's Event, Site, Date and Scoring (PBN's tags; a session file names them)
    extra: dict[str, Any] = {}
    for key in ("event", "site", "date"):
        value = getattr(session, key, None)
        if isinstance(value, str) and value:
            extra[key] = value
    scoring = getattr(session, "scoring", None)
    kind = getattr(session.movement, "kind", None)
    extra["scoring"] = ({"matchpoints": "MP", "imps": "IMP", "butler": "Butler"}.get(
        scoring, scoring) if isinstance(scoring, str) and scoring else
        "IMP" if kind == "teams" else "MP")
    return info, extra


def _operator_main(action: str, argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog=f"bridge-table broadcast {action}")
    ap.add_argument("--store", default="var/broadcast.sqlite",
                    help="the running relay's store (default %(default)s)")
    ap.add_argument("--session-id", help="default: the session the relay runs")
    if action == "comment":
        ap.add_argument("text", help=f"one line for the audience (at most {MAX_COMMENT} "
                                     "characters)")
    elif action == "status":
        ap.add_argument("--json", action="store_true",
                        help="the status as JSON (held, waiting, finished, manual, reports)")
    else:
        ap.add_argument("--board", type=int, required=True, help="the board number")
        ap.add_argument("--table", help="one table (default: every table)")
    if action == "release":
        ap.add_argument("--force", action="store_true",
                        help="release a board some table of the movement has not finished")
    args = ap.parse_args(argv)
    if not Path(args.store).exists():
        print(f"bridge-table broadcast: no relay store at {args.store}", file=sys.stderr)
        return 2
    try:
        store = HeldStore(args.store)
    except sqlite3.DatabaseError as exc:
        print(f"bridge-table broadcast: {args.store}: not a relay store: {exc}", file=sys.stderr)
        return 2
    try:
        session = args.session_id or store.session()
        if session is None:
            print("bridge-table broadcast: the store names no session", file=sys.stderr)
            return 2
        if action == "status":
            status = store.status(session)
            print(json.dumps(status, indent=1) if args.json else status_text(status))
        elif action == "comment":
            try:
                line = clean_comment(args.text)
            except ValueError as exc:
                print(f"bridge-table broadcast: {exc}", file=sys.stderr)
                return 2
            store.comment(session, line, time.time())
            print(f"session {session}: commentary posted")
        else:
            refusal = _release_refusal(store, session, args) if action == "release" else None
            if refusal is not None:
                print(f"bridge-table broadcast: {refusal}", file=sys.stderr)
                return 2
            store.operator(session, action, args.board, args.table)
            where = f"table {args.table}" if args.table else "every table"
            print(f"session {session}: board {args.board} at {where}: {action}")
    finally:
        store.close()
    return 0


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
    return "\n".join(lines)


def _release_refusal(store: HeldStore, session: str, args: argparse.Namespace) -> str | None:
    """Why ``broadcast release`` must not go ahead: a board or table outside the session's
    movement (refused), or a board some table of the movement has not finished (only with
    ``--force``); None when it may."""
    movement = store.movement(session)
    if movement is None:   # an ad hoc relay (--release board|live): no movement to check
        return None
    tables = movement.get(args.board)
    if tables is None:
        return (f"board {args.board} is not in session {session}'s movement (boards "
                f"{number_ranges(movement)}): refused")
    if args.table is not None and args.table not in tables:
        return (f"table {args.table} does not play board {args.board} in session {session} "
                f"(tables {', '.join(sorted(tables, key=_natural))}): refused")
    unfinished = sorted(tables - store.finished(session, args.board), key=_natural)
    if unfinished and not args.force:
        return (f"board {args.board} is not finished at table(s) {', '.join(unfinished)}: "
                f"releasing it now shows its hands to them; add --force to release anyway")
    return None


def _natural(text: str) -> tuple[int, str]:
    return (int(text), "") if text.isdigit() else (1 << 30, text)


def main(argv: list[str]) -> int:
    if argv and argv[0] in ("release", "hold", "clear", "status", "comment"):
        return _operator_main(argv[0], argv[1:])
    from controller.commandline import ControllerError
    from controller.session.schedule import ScheduleError

    ap = argparse.ArgumentParser(
        prog="bridge-table broadcast", description=plain_help(__doc__, first_line=True),
        epilog="Operator: bridge-table broadcast release|hold|clear --board B [--table T] "
               "[--store FILE] (release: --force for a board not finished everywhere); "
               "bridge-table broadcast status; bridge-table broadcast comment TEXT.")
    add_broker_arguments(ap)
    ap.add_argument("--session", help="the session file (its movement and id)")
    ap.add_argument("--schedule", help="schedule TOML: every round (or one round)")
    ap.add_argument("--session-id", help="override the session id")
    ap.add_argument("--release", choices=RELEASES, default="round",
                    help="round (default): once every table of the session that plays the "
                         "board has finished it; board/live: explicit, may leak")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds on top (default 0)")
    ap.add_argument("--deals", help="deals file: the hands shown once a board is released")
    ap.add_argument("--out", help="directory for the live LIN and PBN files")
    ap.add_argument("--site", help="where the session is played (PBN Site; default: the "
                                   "session file's, else ?)")
    ap.add_argument("--date", help="the session's date, YYYY.MM.DD (PBN Date; default: the "
                                   "session file's, else the day the relay starts)")
    ap.add_argument("--root", default="bridge", help="topic root of the tables (default "
                                                     "%(default)s)")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    ap.add_argument("--store", default="var/broadcast.sqlite", help="the relay's SQLite store")
    ap.add_argument("--client-id", help="MQTT client id (default: unique, kept in the store)")
    add_log_level(ap)
    args = ap.parse_args(argv)
    setup_logging(args)
    try:
        broker = settings_from_args(args)
        session = _load_session(args)
        movement = session.movement if session is not None else None
        sid = args.session_id or (session.id if session is not None else None)
        if sid is None:
            if args.release == "round":
                raise ValueError("--release round needs the session's movement (--session or "
                                 "--schedule); refusing to start rather than release early")
            sid = time.strftime("adhoc-%Y%m%d")
        policy = GatePolicy(sid, movement, release=args.release, delay=args.delay)
        deals: dict[int, str] = {}
        if args.deals:
            from controller.boards.deals import DealsError, load_deals
            try:
                infos, _ = load_deals(args.deals)
            except DealsError as exc:
                raise ValueError(str(exc)) from None
            deals = {n: i.deal.to_pbn() for n, i in infos.items() if i.deal is not None}
    except (ControllerError, ScheduleError, ValueError, OSError) as exc:
        print(f"bridge-table broadcast: {exc}", file=sys.stderr)
        return 2
    if args.release != "round":
        log.warning("--release %s: boards go public before every table has played them",
                    args.release)
    try:
        Path(args.store).parent.mkdir(parents=True, exist_ok=True)
        store = HeldStore(args.store)
        store.set_session(sid, movement)
    except (OSError, sqlite3.DatabaseError) as exc:
        print(f"bridge-table broadcast: {args.store}: cannot use it as the relay's store: "
              f"{exc}", file=sys.stderr)
        return 2
    info, session_info = _session_views(session)
    if args.site:
        session_info["site"] = args.site
    if args.date:
        session_info["date"] = args.date
    session_info.setdefault("date", time.strftime("%Y.%m.%d"))
    relay = Relay(Gate(policy), root=args.root, public=args.public, store=store, info=info,
                  deals=deals, out=Path(args.out) if args.out else None,
                  session_info=session_info)
    log.info("session %s, release %s, delay %ss, client id %s", sid, args.release,
             args.delay, args.client_id or store.client_id())

    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_relay(broker, relay, stop=stop, client_id=args.client_id)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    log.info("stopped")     # as the console and the vugraph: systemd's log shows the end
    return 0
