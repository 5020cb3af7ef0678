"""The daemon's hot path with real processes on a real broker: a batch killed mid-commit
loses nothing, and two partitioned controllers give the results of one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from boardevents import EventWriter, clean_board, t08_revoke
from broker import Mosquitto
from mqttwatch import Publisher, Seen, Watch, daemon_process, stop_process

from controller.engine import Engine
from controller.service.journal import Journal

pytestmark = pytest.mark.timeout(240)

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent


def reference(table: str, events: Sequence[dict[str, Any]]) -> Engine:
    engine = Engine()
    for e in events:
        engine.handle(f"bridge/{table}/event", json.dumps(e).encode())
    return engine


def is_state(table: str, seq: int, root: str = "bridge") -> Any:
    def pred(m: Seen) -> bool:
        return (m.topic == f"{root}/{table}/state" and isinstance(m.payload, dict)
                and (m.payload.get("last") or {}).get("seq") == seq)
    return pred


def is_status(topic: str, status: str, pred: Any = None) -> Any:
    def match(m: Seen) -> bool:
        return (m.topic == topic and isinstance(m.payload, dict)
                and m.payload.get("status") == status and (pred is None or pred(m.payload)))
    return match


def killer_process(url: str, journal: Path, log: Path) -> subprocess.Popen[bytes]:
    out = open(log, "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, str(TESTS / "killcommit.py"), "--broker", url, "--journal",
         str(journal), "--status-interval", "0.5"],
        cwd=REPO, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "KILL_AT_BATCH": "2",
             "PYTHONPATH": str(REPO)})
    out.close()
    return proc


async def test_a_batch_killed_mid_commit_loses_nothing_and_applies_once(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    journal, log = tmp_path / "journal.sqlite", tmp_path / "daemon.log"
    pub = Publisher(mosquitto.url)
    online = is_status("bridge/controller/status", "online")
    async with Watch(mosquitto.url) as w:
        # the daemon's persistent session exists; then it is stopped and a backlog builds up
        proc = daemon_process(mosquitto.url, journal, log=log)
        await w.wait(online)
        await pub.events("1", events[:20])
        await w.wait(is_state("1", events[19]["seq"]))
        assert stop_process(proc) == 0, log.read_text()[-3000:]
        await pub.events("1", events[20:80])
        # this one gets the 60 queued events at once: its first batch of 2+ dies mid-commit
        proc = killer_process(mosquitto.url, journal, log)
        assert proc.wait(60) == -signal.SIGKILL, log.read_text()[-3000:]
        with Journal(journal) as j:
            journaled = [json.loads(e.payload)["seq"] for e in j.incoming()]
        assert len(journaled) < 80  # the killed batch's rows were never committed
        assert journaled == [e["seq"] for e in events[:len(journaled)]]
        # the bridge re-sends what no ack covered (here all of it: a spool never acked),
        # then the rest of the board, to a daemon that comes back
        mark = len(w.seen)
        proc = daemon_process(mosquitto.url, journal, log=log)
        try:
            await w.wait(online, after=mark)
            await pub.events("1", events[20:])
            await w.wait(is_state("1", events[-1]["seq"]), after=mark)
            status = await w.wait(is_status(
                "bridge/controller/status", "online",
                lambda p: p["engine"]["events"] == len(events)), after=mark)
        finally:
            assert stop_process(proc) == 0, log.read_text()[-3000:]
    # applied once: every distinct event counted once, the rest dropped as duplicates
    assert status.payload["engine"]["duplicates"] >= 60
    assert w.last("state", "1") == reference("1", events).snapshot("1")
    result = w.last("result", "1")
    assert (result["tricks"], result["score_ns"]) == (11, 650)
    with Journal(journal) as j:
        seqs = [json.loads(e.payload)["seq"] for e in j.incoming()]
        assert set(seqs) == {e["seq"] for e in events}
        assert j.published_through == j.last_incoming  # every output out, and marked


async def test_two_partitioned_controllers_give_the_results_of_one(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """Tables 1-6 on one broker: one controller under root ``solo`` serves them all, two
    controllers under ``bridge`` serve three each (``--partition K/2`` of ``--tables 1-6``),
    each with its own journal, client id, status and subscriptions."""
    from controller.service.partition import hash_share, parse_tables

    tables = parse_tables("1-6")
    shares = [hash_share(tables, k, 2) for k in (1, 2)]
    assert all(shares) and sorted(shares[0] + shares[1]) == sorted(tables)
    boards = {t: list(EventWriter(f"table-{t}-pi").board(
        t08_revoke() if int(t) % 2 else clean_board(int(t)))) for t in tables}
    log = tmp_path / "daemons.log"
    procs = [daemon_process(mosquitto.url, tmp_path / f"p{k}.sqlite", "--tables", "1-6",
                            "--partition", f"{k}/2", log=log) for k in (1, 2)]
    procs.append(daemon_process(mosquitto.url, tmp_path / "solo.sqlite", "--root", "solo",
                                log=log))
    statuses = [f"bridge/controller/part{k}of2-tables-1-6/status" for k in (1, 2)]
    try:
        async with Watch(mosquitto.url, "bridge/#") as w, \
                Watch(mosquitto.url, "solo/#") as solo:
            for topic in statuses:
                await w.wait(is_status(topic, "online"))
            await solo.wait(is_status("solo/controller/status", "online"))
            mixed: list[tuple[str, Any]] = []
            for i in range(max(len(b) for b in boards.values())):
                for t, b in boards.items():
                    if i < len(b):
                        mixed += [(f"bridge/{t}/event", b[i]), (f"solo/{t}/event", b[i])]
            await Publisher(mosquitto.url).send(mixed)
            for t, b in boards.items():
                await w.wait(is_state(t, b[-1]["seq"]))
                await solo.wait(is_state(t, b[-1]["seq"], "solo"))
            # each partition followed its own tables only
            for topic, share in zip(statuses, shares, strict=True):
                status = await w.wait(is_status(topic, "online", lambda p: p["tables"]))
                assert status.payload["tables"] == sorted(share)
                # 1.15: whose results its word covers (a broadcast relay reads it)
                assert status.payload["serves"] == list(share)
            for t in tables:
                for kind in ("state", "result", "indicator"):
                    assert w.last(kind, t) == solo.last(kind, t), (t, kind)
                assert w.last("state", t) == reference(t, boards[t]).snapshot(t)
                assert [m.payload for m in w.of("alert", t)] == \
                    [m.payload for m in solo.of("alert", t)]
    finally:
        for p in procs:
            assert stop_process(p) == 0, log.read_text()[-3000:]
    # each partition journaled its own tables' events, and only those
    for k, share in zip((1, 2), shares, strict=True):
        with Journal(tmp_path / f"p{k}.sqlite") as j:
            seen = {e.topic.split("/")[1] for e in j.incoming()}
        assert seen == set(share)


def test_partition_arguments() -> None:
    from controller.service.partition import (
        PartitionError,
        hash_share,
        parse_partition,
        parse_tables,
        scope_name,
    )

    assert parse_tables("1-3,A1-A3,B7,2") == ("1", "2", "3", "A1", "A2", "A3", "B7")
    assert parse_tables("A8-10") == ("A8", "A9", "A10")
    assert parse_partition(" 2 / 3 ") == (2, 3)
    for bad in ("3-1", "", ",", "controller", "a b"):
        with pytest.raises(PartitionError):
            parse_tables(bad)
    for bad in ("0/2", "3/2", "1", "x/y"):
        with pytest.raises(PartitionError):
            parse_partition(bad)
    tables = parse_tables("1-2000")
    shares = [hash_share(tables, k, 4) for k in range(1, 5)]
    assert sorted(sum(shares, ())) == sorted(tables)  # every table in exactly one share
    assert all(400 < len(s) < 600 for s in shares)  # and the shares about even
    assert scope_name("1-500", None) == "tables-1-500"
    assert scope_name(None, (1, 2)) == "part1of2"


def test_partition_needs_known_tables_and_says_so(tmp_path: Path) -> None:
    from controller.service.cli_controller import main
    assert main(["--broker", "mqtt://127.0.0.1:9", "--partition", "1/2", "--journal",
                 str(tmp_path / "j.sqlite")]) == 2
    assert main(["--broker", "mqtt://127.0.0.1:9", "--tables", "9-1", "--journal",
                 str(tmp_path / "j.sqlite")]) == 2




@pytest.mark.parametrize("spec", ["1-", "-3", "1-4,7-"])
def test_half_a_range_of_tables_is_refused(spec: str) -> None:
    from controller.service.partition import PartitionError, parse_tables
    with pytest.raises(PartitionError, match="half a range"):
        parse_tables(spec)
