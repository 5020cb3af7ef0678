"""The journal's schema 2 (outputs no longer journaled): a schema-1 journal, as the previous
version wrote it, opens and rebuilds; the published-through mark rides on the group commit."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from boardevents import EventWriter, t08_revoke

from controller.broker.settings import BrokerSettings
from controller.engine import Engine
from controller.service.daemon import ControllerDaemon
from controller.service.engines import build_engine
from controller.service.journal import SCHEMA_VERSION, Journal

#: the schema the previous version created (controller/service/journal.py, schema 1), verbatim
SCHEMA_1 = """
CREATE TABLE incoming (
    n        INTEGER PRIMARY KEY AUTOINCREMENT,
    topic    TEXT NOT NULL,
    payload  BLOB NOT NULL,
    received REAL NOT NULL
);
CREATE TABLE outgoing (
    n         INTEGER PRIMARY KEY AUTOINCREMENT,
    cause     INTEGER NOT NULL,
    topic     TEXT NOT NULL,
    payload   BLOB NOT NULL,
    retain    INTEGER NOT NULL,
    qos       INTEGER NOT NULL,
    published REAL NOT NULL
);
CREATE TABLE meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""


def write_schema_1(path: Path, messages: list[tuple[str, bytes]], through: int) -> int:
    """A journal as the previous daemon left it: every message and every output of the first
    ``through`` messages journaled, ``published_through`` set. Returns the outgoing rows."""
    engine = Engine()
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.executescript(SCHEMA_1)
    db.execute("PRAGMA user_version=1")
    rows = 0
    for n, (topic, payload) in enumerate(messages, 1):
        db.execute("INSERT INTO incoming (topic, payload, received) VALUES (?, ?, ?)",
                   (topic, payload, 1000.0 + n))
        outs = engine.handle(topic, payload)
        if n <= through:
            for o in outs:
                db.execute("INSERT INTO outgoing (cause, topic, payload, retain, qos, "
                           "published) VALUES (?, ?, ?, ?, ?, ?)",
                           (n, o.topic, json.dumps(o.payload).encode(), int(o.retain), o.qos,
                            1000.0 + n))
                rows += 1
    db.execute("INSERT INTO meta (key, value) VALUES ('published_through', ?)", (str(through),))
    db.close()
    return rows


def test_a_schema_1_journal_opens_migrates_and_rebuilds(tmp_path: Path) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    messages = [("bridge/1/event", json.dumps(e).encode()) for e in events]
    path = tmp_path / "old.sqlite"
    through = len(messages) - 5  # the old daemon died with five messages' outputs unsent
    rows = write_schema_1(path, messages, through)
    with Journal(path) as j:
        assert j.migrated_from == 1
        assert [(e.topic, e.payload) for e in j.incoming()] == messages
        assert j.published_through == through
        assert len(list(j.outgoing())) == rows  # the old record stays readable
        d = ControllerDaemon(broker=BrokerSettings.from_url("mqtt://127.0.0.1:9"),
                             engine=build_engine(), journal=j)
        assert d.rebuild() == len(messages)
        reference = Engine()
        for topic, payload in messages:
            reference.handle(topic, payload)
        assert d.engine.snapshot("1") == reference.snapshot("1")  # type: ignore[attr-defined]
        # the outputs of the five unsent messages wait for the next connection
        assert {n for n, _ in d._outbox} == set(range(through + 1, len(messages) + 1))  # noqa: SLF001
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 3
    db.close()
    with Journal(path) as j:  # reopened: already schema 3, nothing to migrate
        assert j.migrated_from is None
        assert len(list(j.incoming())) == len(messages)


def test_the_mark_rides_on_the_next_commit_and_never_goes_back(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        j.append_incoming([("bridge/1/event", b"1"), ("bridge/1/event", b"2")])
        j.mark_published(2)
        assert j.published_through == 0  # not written on its own ...
        j.append_incoming([("bridge/1/event", b"3")])
        assert j.published_through == 2  # ... but with the next batch, in its transaction
        j.mark_published(1)
        j.mark_published(3)
        j.flush_mark()  # idle: written without waiting for an event
        assert j.published_through == 3
        j.mark_published(2)
        j.flush_mark()
        assert j.published_through == 3
        assert list(j.outgoing()) == []  # outputs are not journaled
    with Journal(path) as j:
        assert j.published_through == 3
