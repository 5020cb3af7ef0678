"""The daemon on a real broker, killed in the middle of the second board and started again:
it restores both tables from the snapshots its journal holds (controller/service/snapshot.py),
replays only the second board, and ends with the states, results and counters of a clean
replay of every event."""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from boardevents import EventWriter, clean_board, t08_revoke
from broker import Mosquitto
from mqttwatch import Publisher, Seen, Watch, daemon_process, stop_process

from controller.engine import Engine

pytestmark = pytest.mark.timeout(240)

TABLES = ("1", "2")


def is_state(table: str, seq: int) -> Any:
    def pred(m: Seen) -> bool:
        return (m.topic == f"bridge/{table}/state" and isinstance(m.payload, dict)
                and (m.payload.get("last") or {}).get("seq") == seq)
    return pred


def is_online(pred: Any) -> Any:
    def match(m: Seen) -> bool:
        return (m.topic == "bridge/controller/status" and isinstance(m.payload, dict)
                and m.payload.get("status") == "online" and pred(m.payload))
    return match


async def snapshots_written(journal: Path, board_starts: dict[str, int]) -> dict[str, int]:
    """The journal's snapshots (table -> n), once every table has one at or after its
    second board's start (read beside the running daemon: SQLite WAL readers)."""
    deadline = time.monotonic() + 30
    while True:
        db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
        try:
            found = {str(t): int(n) for t, n in db.execute("SELECT tbl, n FROM snapshots")}
        except sqlite3.OperationalError:
            found = {}
        finally:
            db.close()
        if all(found.get(t, 0) >= n for t, n in board_starts.items()):
            return found
        assert time.monotonic() < deadline, found
        await asyncio.sleep(0.2)


def journal_numbers(journal: Path) -> dict[tuple[str, int], int]:
    """(table, seq) -> journal n of each event."""
    db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True)
    try:
        return {(topic.split("/")[1], json.loads(payload)["seq"]): int(n)
                for n, topic, payload in db.execute("SELECT n, topic, payload FROM incoming")}
    finally:
        db.close()


async def test_a_killed_daemon_restarts_from_its_snapshots(mosquitto: Mosquitto,
                                                           tmp_path: Path) -> None:
    sessions: dict[str, list[dict[str, Any]]] = {}
    second: dict[str, int] = {}
    for t in TABLES:
        writer = EventWriter(f"table-{t}-pi")
        first = list(writer.board(t08_revoke() if t == "1" else clean_board(3)))
        sessions[t] = first + list(writer.board(clean_board(5)))
        second[t] = len(first)  # index of the second board's board tag
    half = {t: second[t] + (len(sessions[t]) - second[t]) // 2 for t in TABLES}
    journal, log = tmp_path / "journal.sqlite", tmp_path / "daemon.log"
    pub = Publisher(mosquitto.url)
    async with Watch(mosquitto.url) as w:
        proc = daemon_process(mosquitto.url, journal, log=log)
        try:
            await w.wait(is_online(lambda p: True))
            for t in TABLES:
                await pub.events(t, sessions[t][:half[t]])
            for t in TABLES:
                await w.wait(is_state(t, sessions[t][half[t] - 1]["seq"]))
            numbers = journal_numbers(journal)
            starts = {t: numbers[(t, sessions[t][second[t]]["seq"])] for t in TABLES}
            assert await snapshots_written(journal, starts) == starts
        finally:
            assert stop_process(proc, signal.SIGKILL) == -signal.SIGKILL
        mark = len(w.seen)
        proc = daemon_process(mosquitto.url, journal, log=log)
        try:
            total = sum(len(s) for s in sessions.values())
            await w.wait(is_online(lambda p: True), after=mark)
            for t in TABLES:
                await pub.events(t, sessions[t][half[t]:])
            for t in TABLES:
                await w.wait(is_state(t, sessions[t][-1]["seq"]), after=mark)
            status = await w.wait(is_online(lambda p: p["engine"]["events"] == total),
                                  after=mark)
        finally:
            assert stop_process(proc) == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert "2 table(s) restored from their snapshots" in text, text[-3000:]
    # the restart replayed the second boards' first halves only, not the first boards
    rebuilt = status.payload["counters"]["rebuilt"]
    assert rebuilt == sum(half[t] - second[t] for t in TABLES), rebuilt
    for t in TABLES:
        clean = Engine()
        for e in sessions[t]:
            clean.handle(f"bridge/{t}/event", json.dumps(e).encode())
        assert w.last("state", t) == clean.snapshot(t)
        assert w.last("result", t) == clean.retained()[2].payload
    # each event applied once (the wait above: events == total) and journaled once; a kill may
    # leave events received but not yet acknowledged, which the broker sends again (QoS 1):
    # those come back as duplicates, dropped, and only events sent before the kill can
    assert set(journal_numbers(journal)) == {(t, e["seq"]) for t in TABLES for e in sessions[t]}
    assert 0 <= status.payload["engine"]["duplicates"] <= sum(half.values())
