"""``bridge-table results`` against a real broker and controller: the ranking as the session
goes, from the controller's retained results, and every record at the end, from the broker
and from the controller's journal (the same)."""

from __future__ import annotations

import asyncio
import csv
import dataclasses
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from boardevents import BoardScript, EventWriter, clean_board
from broker import Mosquitto
from mqttwatch import Publisher, Watch

from controller.broker.settings import BrokerSettings
from controller.service.daemon import ControllerDaemon
from controller.service.engines import build_engine
from controller.service.journal import Journal
from firmware_bridge.examples import EXAMPLES

pytestmark = pytest.mark.timeout(180)

SESSION = """[session]
event = "Live Pairs"
date = "2026-12-01"
[movement]
type = "mitchell"
tables = 3
boards_per_round = 1
[pairs]
1 = ["Ann", "Bob"]
4 = ["Cy", "Di"]
"""


def passed_out(board: int) -> BoardScript:
    return dataclasses.replace(clean_board(board), calls=["Pass"] * 4, trump=None,
                               declarer=None)


async def run(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controller.cli", "results", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 60)
    return int(proc.returncode or 0), out.decode(), err.decode()


def four_spades(table: str, board: int, score: int) -> str:
    """A ``result`` payload: 4S by North, ten tricks, scored ``score`` for NS."""
    return json.dumps({
        "v": 1, "table": table, "board": board, "dealer": "N", "vul": "None",
        "contract": "4S", "declarer": "N", "tricks": 10, "tricks_played": 10,
        "score_ns": score, "irregularities": []})


def ranking(path: Path) -> list[tuple[str, str, str]]:
    with open(path, newline="") as fp:
        return [(r["pair"], r["points"], r["percent"]) for r in csv.DictReader(fp)]


def connections(broker: Mosquitto) -> int:
    """How many clients have connected to ``broker`` so far (its log says each)."""
    return broker.log.read_text(errors="replace").count("New client connected")


async def connected(broker: Mosquitto, before: int, timeout: float = 30.0) -> None:
    """Until a client more than ``before`` has connected: ``results`` subscribes right after
    connecting, and says nothing itself (a fixed pause was too short for a loaded machine
    to start Python)."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while connections(broker) <= before:
        assert loop.time() < end, "the results command never connected"
        await asyncio.sleep(0.05)


@pytest.mark.asyncio
async def test_results_live_and_at_the_end(mosquitto: Mosquitto, tmp_path: Path) -> None:
    session = tmp_path / "live.toml"
    session.write_text(SESSION)
    journal = tmp_path / "journal.sqlite"
    daemon = ControllerDaemon(broker=BrokerSettings.from_url(mosquitto.url),
                              engine=build_engine(session=session), journal=Journal(journal),
                              status_interval=0.5, reconnect_min=0.1, reconnect_max=0.5)
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    live = None
    try:
        await asyncio.wait_for(daemon.ready.wait(), 20)
        # the scorer starts the live ranking before the first board ends
        clients = connections(mosquitto)
        live = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "controller.cli", "results", "--session", str(session),
            "--broker", mosquitto.url, "--out", str(tmp_path / "live"),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        await connected(mosquitto, clients)   # and subscribes (a result before is retained)
        async with Watch(mosquitto.url) as watch:
            # round 1 and 2 of a 3-table Mitchell: board 1 at table 1 (4H by S) and at
            # table 3 (passed out), board 2 at table 2
            for table, script in (("1", clean_board(1)), ("2", clean_board(2)),
                                  ("3", passed_out(1))):
                await Publisher(mosquitto.url).events(
                    table, EventWriter(f"table-{table}-pi").board(script))
                await watch.wait(lambda m, t=table: m.kind == "result" and m.table == t,
                                 timeout=60)
            scores = {(m.table, m.payload["board"]): m.payload["score_ns"]
                      for m in watch.of("result")}
        assert scores[("1", 1)] > 0 and scores[("3", 1)] == 0
        assert live.stdout is not None
        headers = []
        while len(headers) < 3:
            line = (await asyncio.wait_for(live.stdout.readline(), 30)).decode()
            assert line, "the live ranking ended early"
            if line.startswith("-- after table"):
                headers.append(line.split()[3:6])
        assert headers == [["1", "board", "1"], ["2", "board", "2"], ["3", "board", "1"]]
        live.send_signal(signal.SIGINT)      # the session is over: Ctrl-C writes the records
        rest, err = await asyncio.wait_for(live.communicate(), 60)
        assert live.returncode == 0 and "Traceback" not in err.decode(), err.decode()
        assert "live-pairs-2026-12-01-1.pbn" in rest.decode()

        # late, from the retained results alone
        code, out, err = await run("--session", str(session), "--broker", mosquitto.url,
                                   "--once", "--out", str(tmp_path / "once"))
        assert code == 0, err
        assert "Ranking NS" in out and "Ranking EW" in out
        # the journal is the controller's while it runs: one line, follow the broker
        code, out, err = await run("--session", str(session), "--journal", str(journal))
        assert code == 2 and "in use" in err and "broker" in err and "Traceback" not in err
    finally:
        if live is not None and live.returncode is None:
            live.kill()
            await live.wait()
        stop.set()
        await asyncio.wait_for(task, 20)
        if daemon.journal is not None:
            daemon.journal.close()

    # Board 1 at tables 1 (NS 1, EW 4) and 3 (round 2: NS 3, EW 5): 2 results of the 3
    # the movement gives, Neuberg to a top of 4: (2 + 1) * 3 / 2 - 1 = 3.5 and
    # (0 + 1) * 3 / 2 - 1 = 0.5. Board 2 at table 2 alone (NS 2, EW 5): (0 + 1) * 3 - 1 = 2.
    expected = {"1": ("3.5", "87.50"), "4": ("0.5", "12.50"), "3": ("0.5", "12.50"),
                "5": ("5.5", "68.75"), "2": ("2", "50.00")}
    for name in ("live", "once"):
        got = {p: (pts, pct) for p, pts, pct in
               ranking(tmp_path / name / "live-pairs-2026-12-01-1-ranking.csv")}
        assert got == expected, name
    # the journal gives the same records once the controller is stopped
    code, out, err = await run("--session", str(session), "--journal", str(journal),
                               "--out", str(tmp_path / "journal"))
    assert code == 0, err
    for kind in ("-ranking.csv", ".csv"):
        assert (tmp_path / "journal" / f"live-pairs-2026-12-01-1{kind}").read_text() == \
            (tmp_path / "live" / f"live-pairs-2026-12-01-1{kind}").read_text()
    # ... and the messages file score and export read (issue 43: --journal wrote none)
    messages = tmp_path / "journal" / "live-pairs-2026-12-01-1-messages.jsonl"
    assert messages.is_file() and str(messages) in out
    scored = subprocess.run([sys.executable, "-m", "controller.cli", "score", "--results",
                             str(messages), "--session", str(session)],
                            capture_output=True, text=True, timeout=60)
    assert scored.returncode == 0 and "87.50" in scored.stdout, scored.stderr
    # the messages the live command kept are input again
    code, out, err = await run("--session", str(session), "--results",
                               str(tmp_path / "live" / "live-pairs-2026-12-01-1-messages.jsonl"))
    assert code == 0 and "87.50%" in out, err


@pytest.mark.asyncio
async def test_results_refuses_empty_truncated_or_missing_input(tmp_path: Path) -> None:
    session = tmp_path / "live.toml"
    session.write_text(SESSION)
    empty, cut = tmp_path / "empty.jsonl", tmp_path / "cut.jsonl"
    empty.write_text("")
    cut.write_text('{"topic": "bridge/1/result", "payload": {"table": "1", "boa')
    for args, said in ((["--results", str(empty)], "no result"),
                       (["--results", str(cut)], "truncated"),
                       (["--journal", str(tmp_path / "none.sqlite")], "no such journal"),
                       (["--journal", str(empty)], "not a controller journal"),
                       (["--broker", "mqtt://127.0.0.1:1", "--once"], "127.0.0.1:1")):
        code, out, err = await run("--session", str(session), *args)
        assert code == 2 and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1 and said in err, err



@pytest.mark.asyncio
async def test_a_broker_with_no_result_says_so_in_a_broker_s_words(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    session = tmp_path / "live.toml"
    session.write_text(SESSION)
    code, out, err = await run("--session", str(session), "--broker", mosquitto.url, "--once")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{mosquitto.url}: no result received" in err and "truncated" not in err, err


@pytest.mark.asyncio
async def test_results_until_complete_ends_by_itself(mosquitto: Mosquitto, tmp_path: Path) -> None:
    """--until-complete: the command ends when every table has every board's result (or the
    director's score); here the results come while it listens."""
    import aiomqtt

    session = tmp_path / "two.toml"
    session.write_text('[session]\nevent = "Two"\ndate = "2026-12-01"\n[movement]\n'
                       'type = "mitchell"\ntables = 2\nboards_per_round = 1\n'
                       'even_tables = "skip"\n'
                       '[[adjustment]]\ntable = "2"\nboard = 2\nns = "A+"\new = "A-"\n')
    clients = connections(mosquitto)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controller.cli", "results", "--session", str(session),
        "--broker", mosquitto.url, "--until-complete", "--out", str(tmp_path / "out"),
        "--format", "csv", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        await connected(mosquitto, clients)   # and subscribes: the result comes live
        host, port = mosquitto.url.removeprefix("mqtt://").split(":")
        async with aiomqtt.Client(host, int(port)) as client:
            # a 2-table skip Mitchell has one round: table 1 board 1, table 2 board 2, which
            # has the director's score: table 1's result completes the session
            for table, board, score in (("1", 1, 420),):
                await client.publish(f"bridge/{table}/result",
                                     four_spades(table, board, score), qos=1, retain=True)
        out, err = await asyncio.wait_for(proc.communicate(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert (tmp_path / "out" / "two-2026-12-01-1-ranking.csv").exists()
    assert "-- after table 1 board 1 (1 results)" in out.decode()


@pytest.mark.asyncio
async def test_sigterm_ends_the_live_ranking_with_the_records_written(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """``kill`` or ``systemctl stop`` (SIGTERM) ends a live ``results`` as Ctrl-C does: the
    records of the results received are written to ``--out``, exit status 0. Before, the
    process died at once and wrote nothing: a scorer's evening of results lost."""
    import aiomqtt

    session = tmp_path / "live.toml"
    session.write_text(SESSION)
    host, port = mosquitto.url.removeprefix("mqtt://").split(":")
    async with aiomqtt.Client(host, int(port)) as client:
        await client.publish("bridge/1/result", four_spades("1", 1, 420), qos=1,
                             retain=True)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "controller.cli", "results", "--session", str(session),
        "--broker", mosquitto.url, "--out", str(tmp_path / "out"), "--format", "csv",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        assert proc.stdout is not None
        while True:
            line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode()
            assert line, "the live ranking ended early"
            if line.startswith("-- after table 1 board 1"):
                break
        proc.send_signal(signal.SIGTERM)
        out, err = await asyncio.wait_for(proc.communicate(), 30)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode()
    assert "stopped: the records of the results received" in err.decode()
    assert ranking(tmp_path / "out" / "live-pairs-2026-12-01-1-ranking.csv")
    assert (tmp_path / "out" / "live-pairs-2026-12-01-1-messages.jsonl").exists()


async def test_a_message_arriving_at_an_idle_check_is_kept() -> None:
    """The live reader looks every 0.2 s whether it should stop (``--once``). A read that
    check cancelled could lose the message it had just taken off the client's queue: the
    live records lost one feed item in about 58. Here every message takes 0.3 s to come,
    longer than one check: each must still be kept."""
    import argparse
    from types import SimpleNamespace

    from controller.service.ranking import Collected, _serve
    from controller.session import load_session

    payloads = [json.dumps({"v": 1, "table": "1", "board": 1, "kind": "call", "n": n,
                            "seat": "N", "call": "Pass"}).encode() for n in range(1, 5)]

    class SlowMessages:
        def __init__(self) -> None:
            self.left = list(payloads)

        def __aiter__(self) -> SlowMessages:
            return self

        async def __anext__(self) -> SimpleNamespace:
            if not self.left:
                await asyncio.Event().wait()  # nothing more: the reader settles
            await asyncio.sleep(0.3)
            return SimpleNamespace(payload=self.left.pop(0), topic="bridge/1/feed",
                                   retain=False)

    client = SimpleNamespace(messages=SlowMessages())
    args = argparse.Namespace(once=True, settle=1.0, json=True, until_complete=False)
    session = load_session(EXAMPLES / "session-mitchell.toml")
    collected = Collected()
    assert await asyncio.wait_for(_serve(client, args, session, collected, set()),  # type: ignore[arg-type]
                                  30)
    assert [json.loads(line)["payload"]["n"] for line in collected.lines] == [1, 2, 3, 4]
