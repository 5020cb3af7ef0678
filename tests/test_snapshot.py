"""Per-table snapshots (controller/service/snapshot.py): a daemon restarted on a journal with
snapshots restores each table and replays only what follows its last board start, and ends
exactly where an engine that handled everything is: the same state, retained messages and
acks, the same outputs for what was not published, and byte for byte the same outputs of
every input after it.

The sessions are generated: several tables playing random boards in their own order, with
hand scans and hardware times (tempo evidence), interleaved as they arrive, and irregular
inputs: duplicates, an out-of-order seq and its resend, a bridge reboot (a new boot, seqs
from 1), undo buttons, claims, a director's ``board`` ruling replacing a board in play, a
legacy (boot-less) source, and a board whose hands differ between tables (Law 87, fouled
board across three tables, no deals file for it)."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import msgspec
import pytest

from controller.boards.generate import random_board
from controller.broker.settings import BrokerSettings
from controller.engine import Engine, Outgoing
from controller.formats.events import record_events
from controller.laws.record import DealInfo
from controller.service.daemon import ControllerDaemon
from controller.service.journal import Journal
from controller.service.snapshot import FORMAT, record

Message = tuple[str, bytes]


def session(seed: int, tables: int = 4, boards: int = 4) -> tuple[dict[int, DealInfo],
                                                                  list[Message]]:
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    # board 2 has no deals file entry, and tables 2 and 3 got other cards in its wallet
    deals = {r.board: r.deal_info for r in records if r.board != 2}
    fouled = {t: random_board(random.Random(seed * 100 + t), 2).record for t in (2, 3)}
    streams: list[list[Message]] = []
    for t in range(1, tables + 1):
        order = records[t % boards:] + records[:t % boards]
        events: list[dict[str, Any]] = []
        ts = 1_700_000_000.0 + t
        for rec in order:
            rec = fouled.get(t, rec) if rec.board == 2 else rec
            board_events = record_events(rec, src="x", ts_start=ts, ts_step=rng.choice(
                [0.5, 2.0, 9.0]))
            ts += len(board_events) * 10.0
            board_events = irregular(rng, board_events, rec.board, boards)
            events += board_events
        streams.append(number(rng, t, events))
    messages: list[Message] = []
    cursors = [0] * len(streams)
    while any(c < len(s) for c, s in zip(cursors, streams, strict=True)):
        i = rng.choice([k for k, s in enumerate(streams) if cursors[k] < len(s)])
        take = rng.randint(1, 6)
        messages += streams[i][cursors[i]:cursors[i] + take]
        cursors[i] += take
    return deals, messages


def irregular(rng: random.Random, events: list[dict[str, Any]], board: int, boards: int
              ) -> list[dict[str, Any]]:
    """A board's events with a few irregular inputs among them (the ``seq`` comes later)."""
    out = list(events)
    cards = [i for i, e in enumerate(out) if e.get("zone") == "tray" and e.get("card")
             and i > 110]
    if cards and rng.random() < 0.5:  # a misread card undone and played again
        i = rng.choice(cards)
        out[i + 1:i + 1] = [{"type": "button", "button": "undo"}, dict(out[i])]
    if cards and rng.random() < 0.25:  # a claim agreed in the middle of the play
        i = rng.choice(cards)
        out.insert(i + 1, {"ruling": "claim", "tricks": rng.randint(0, 3)})
    if rng.random() < 0.15:  # the director puts another board on the table mid-board
        i = rng.randrange(1, len(out))
        out.insert(i, {"ruling": "board", "board": rng.randint(1, boards)})
    if rng.random() < 0.1:  # a ruling naming no alert
        out.insert(rng.randrange(1, len(out)), {"ruling": "clear", "alert": 99})
    return out


def number(rng: random.Random, table: int, events: list[dict[str, Any]]) -> list[Message]:
    """Seqs as the bridge (``src``) and the director's console (``td``) send them, with a
    reboot of the bridge half way (a new boot: seqs from 1 again), duplicates and an
    out-of-order seq followed by the missing one and its resend, a malformed payload. Table
    4's bridge is a legacy one (no boot)."""
    reboot = len(events) // 2
    seqs = {"bridge": 0, "td": 0}
    out: list[Message] = []
    for i, e in enumerate(events):
        e = dict(e)
        if "ruling" in e:
            seqs["td"] += 1
            e.update(v=1, src=f"td-{table}", seq=seqs["td"])
            out.append((f"bridge/{table}/ruling", msgspec.json.encode(e)))
            continue
        if i == reboot and table != 4:
            seqs["bridge"] = 0
        seqs["bridge"] += 1
        e.update(v=1, src=f"pi-{table}", seq=seqs["bridge"])
        if e.get("type") is None:
            e["type"] = "tag"
        if table != 4:
            e["boot"] = "b1" if i < reboot else "b2"
        out.append((f"bridge/{table}/event", msgspec.json.encode(e)))
    for _ in range(6):  # duplicates (a redelivery, a resend from the spool)
        i = rng.randrange(len(out) - 1)
        out.insert(i + rng.randint(1, 5), out[i])
    # a payload that is not JSON, on a table already followed (counted as its own)
    out.insert(rng.randrange(5, len(out)), (f"bridge/{table}/event", b"{not json"))
    i = rng.randrange(10, len(out) - 3)
    if out[i][0].endswith("event") and out[i + 1][0].endswith("event"):
        out[i:i + 2] = [out[i + 1], out[i], out[i + 1]]  # seq+1 early, then both in order
    return out


def payloads(outs: list[Outgoing] | list[Any]) -> list[tuple[str, bytes]]:
    return [(o.topic, o.data()) for o in outs]


def restarted(path: Path, deals: dict[int, DealInfo]) -> tuple[ControllerDaemon, Journal]:
    journal = Journal(path)
    daemon = ControllerDaemon(broker=BrokerSettings.from_url("mqtt://127.0.0.1:9"),
                              engine=Engine(deals=deals), journal=journal)
    daemon.rebuild()
    return daemon, journal


def assert_same(engine: Engine, reference: Engine) -> None:
    assert engine.tables == reference.tables
    for table in reference.tables:
        assert engine.snapshot(table) == reference.snapshot(table)
        assert engine.record(table) == reference.record(table)
    assert payloads(engine.retained()) == payloads(reference.retained())
    assert payloads(engine.acks()) == payloads(reference.acks())
    # each table's share of the counters comes back with it (no input here lacks a table)
    assert engine.stats == reference.stats


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_restarts_from_snapshots_equal_an_engine_that_handled_everything(
        tmp_path: Path, seed: int) -> None:
    deals, messages = session(seed)
    rng = random.Random(seed)
    reference = Engine(deals=deals)
    expected = [payloads(reference.handle(t, p)) for t, p in messages]
    reference = Engine(deals=deals)
    path = tmp_path / "journal.sqlite"
    engine = Engine(deals=deals)
    done = 0
    replayed = []
    # three restarts: mid-board, between boards or anywhere, some outputs not published
    cuts = sorted(rng.sample(range(len(messages) // 4, len(messages)), 3))
    for cut in cuts:
        unpublished = rng.choice([0, 0, 1, 4, 30])
        with Journal(path) as journal:
            got = record(journal, engine, messages[done:cut], batch=rng.choice([1, 7, 64]),
                         published=cut - unpublished)
            through = journal.published_through  # never back: at least the last restart's
        assert [payloads(o) for o in got] == expected[done:cut]
        for t, p in messages[done:cut]:
            reference.handle(t, p)
        done = cut
        daemon, journal = restarted(path, deals)
        try:
            engine = daemon.engine  # type: ignore[assignment]
            assert_same(engine, reference)
            # what was computed but not published goes out again, in order
            outbox = [(o.topic, o.data()) for _, o in daemon._outbox]  # type: ignore[attr-defined]
            assert outbox == [x for out in expected[through:cut] for x in out]
            replayed.append(daemon.counters.rebuilt)
            assert len(journal.snapshots()) == 4
        finally:
            journal.close()
    # from there on the same outputs, byte for byte
    assert [payloads(engine.handle(t, p)) for t, p in messages[done:]] == expected[done:]
    # and the snapshots were used: far fewer inputs replayed than journaled
    assert replayed[-1] < cuts[-1] * 0.75, (replayed, cuts)


def test_a_fouled_board_is_found_after_a_restart_as_before(tmp_path: Path) -> None:
    deals, messages = session(7, tables=3, boards=3)
    reference = Engine(deals=deals)
    expected = [payloads(reference.handle(t, p)) for t, p in messages]
    alerts = [i for i, out in enumerate(expected)
              if any(b'"FOULED_BOARD"' in data for _, data in out)]
    assert len(alerts) >= 2  # tables 2 and 3 each see it against the others
    # restart just before the second table finds it, with the first's check restored
    cut = alerts[1]
    path = tmp_path / "journal.sqlite"
    with Journal(path) as journal:
        record(journal, Engine(deals=deals), messages[:cut])
    daemon, journal = restarted(path, deals)
    with journal:
        engine: Engine = daemon.engine  # type: ignore[assignment]
        assert daemon.counters.rebuilt < cut
        assert [payloads(engine.handle(t, p)) for t, p in messages[cut:]] == expected[cut:]


def test_a_snapshot_that_does_not_fit_rebuilds_its_table_in_full(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    deals, messages = session(5, tables=3, boards=3)
    path = tmp_path / "journal.sqlite"
    with Journal(path) as journal:
        record(journal, Engine(deals=deals), messages)
        assert [t for t, *_ in journal.snapshots()] == ["1", "2", "3"]
    reference = Engine(deals=deals)
    for t, p in messages:
        reference.handle(t, p)
    db = sqlite3.connect(path)
    db.execute("UPDATE snapshots SET data = X'7b7b' WHERE tbl = '1'")  # not JSON
    db.execute("UPDATE snapshots SET format = ? WHERE tbl = '2'", (FORMAT + 1,))
    db.execute("UPDATE snapshots SET data = CAST('{\"format\": 1}' AS BLOB) WHERE tbl = '3'")
    db.commit()
    db.close()
    daemon, journal = restarted(path, deals)
    with journal:
        assert daemon.counters.rebuilt == len(messages)  # every table in full
        assert_same(daemon.engine, reference)  # type: ignore[arg-type]
    text = caplog.text
    assert "snapshot of table 1 not used (snapshot does not decode" in text
    assert f"snapshot of table 2 not used (snapshot format {FORMAT + 1}" in text
    assert "snapshot of table 3 not used" in text


def test_a_snapshot_of_another_input_is_not_used(tmp_path: Path,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    deals, messages = session(6, tables=2, boards=3)
    path = tmp_path / "journal.sqlite"
    with Journal(path) as journal:
        record(journal, Engine(deals=deals), messages)
    reference = Engine(deals=deals)
    for t, p in messages:
        reference.handle(t, p)
    db = sqlite3.connect(path)
    db.execute("UPDATE snapshots SET n = n + 1 WHERE tbl = '1'")  # not its board start
    db.commit()
    db.close()
    daemon, journal = restarted(path, deals)
    with journal:
        assert_same(daemon.engine, reference)  # type: ignore[arg-type]
    assert "rebuilding table 1 from all its entries" in caplog.text


def test_a_schema_2_journal_opens_and_replays_in_full(tmp_path: Path) -> None:
    deals, messages = session(8, tables=2, boards=2)
    path = tmp_path / "journal.sqlite"
    with Journal(path) as journal:
        record(journal, Engine(deals=deals), messages)
    db = sqlite3.connect(path)
    db.execute("DROP TABLE snapshots")
    db.execute("DROP TABLE topics")
    db.execute("PRAGMA user_version=2")
    db.commit()
    first = {t: n for t, n in db.execute("SELECT topic, MIN(n) FROM incoming GROUP BY topic")}
    db.close()
    reference = Engine(deals=deals)
    for t, p in messages:
        reference.handle(t, p)
    daemon, journal = restarted(path, deals)
    with journal:
        assert journal.migrated_from == 2
        assert journal.first_by_topic() == first  # filled once, on the migration
        assert daemon.counters.rebuilt == len(messages)
        assert_same(daemon.engine, reference)  # type: ignore[arg-type]
        # the rebuild's own board starts are journaled for the next restart
        journal.mark_published(journal.last_incoming)
        journal.flush_mark()
        assert [t for t, *_ in journal.snapshots()] == ["1", "2"]


def test_each_topics_first_message_is_kept_as_it_is_written(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as journal:
        journal.append_incoming([("bridge/1/event", b"1"), ("bridge/2/event", b"2"),
                                 ("bridge/1/event", b"3")])
        journal.append_incoming([("bridge/2/ruling", b"4"), ("bridge/1/event", b"5")])
        assert journal.first_by_topic() == {"bridge/1/event": 1, "bridge/2/event": 2,
                                            "bridge/2/ruling": 4}
    with Journal(tmp_path / "j.sqlite") as journal:  # reopened: known topics not again
        journal.append_incoming([("bridge/1/event", b"6"), ("bridge/3/event", b"7")])
        assert journal.first_by_topic() == {"bridge/1/event": 1, "bridge/2/event": 2,
                                            "bridge/2/ruling": 4, "bridge/3/event": 7}


def test_a_snapshot_is_written_only_once_its_input_is_published(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as journal:
        journal.append_incoming([("bridge/1/event", b"1"), ("bridge/1/event", b"2")])
        journal.stage_snapshots([("1", 2, FORMAT, b"{}")])
        journal.mark_published(1)
        journal.flush_mark()
        assert journal.snapshots() == []
        journal.mark_published(2)
        journal.append_incoming([("bridge/1/event", b"3")])
        assert journal.snapshots() == [("1", 2, FORMAT, b"{}")]
        # an older one never replaces a newer one
        journal.stage_snapshots([("1", 1, FORMAT, b"[]")])
        journal.append_incoming([("bridge/1/event", b"4")])
        assert journal.snapshots() == [("1", 2, FORMAT, b"{}")]
