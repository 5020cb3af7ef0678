"""A multi-table session under faults, with real processes: a mosquitto (persistence on), the
controller daemon (``python -m controller.service.cli_controller``, with its journal) and one
bridge process per table, while the controller, the broker (SIGTERM and SIGKILL) and the
bridges are killed and started again at random points.

A bridge process here is the bridge's MQTT side as shipped (``firmware_bridge.publisher``:
the spool, the acknowledgements, the resends) fed with a recorded session (boards from
``tests/boardevents.py``) instead of its readers; killed with SIGKILL, it starts again from
its spool (an event is spooled with its seq in one transaction, so the recording resumes at
``next_seq``). Once the controller has acknowledged every event it writes ``done-{t}.json``,
and runs on (it can still be killed) until the session's ``stop`` file appears.

At the end the journal is re-fed to a fresh Engine (as the daemon does on a restart) and
compared with a clean replay of the recording: every event applied exactly once, the same
states and results.

``python tests/faultsession.py run [--tables 3] [--rounds 2] [--seed 1]`` prints the figures
(docs/reliability.md); ``tests/test_fault_session.py`` runs it under pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

FAULTS = ("controller-kill", "controller-term", "broker-term", "broker-kill", "bridge-kill")


def recording(table: str) -> list[dict[str, Any]]:
    """The events of one table's session: two boards (one with a revoke), as a bridge sends
    them (``v``, ``src`` and ``seq`` are the bridge's)."""
    from boardevents import EventWriter, clean_board, t08_revoke

    writer = EventWriter(src(table))
    events = list(writer.board(t08_revoke())) + list(writer.board(clean_board(5)))
    return [{k: v for k, v in e.items() if k not in ("v", "src", "seq")} for e in events]


def src(table: str) -> str:
    return f"fault-pi-{table}"


# -- the bridge process -------------------------------------------------------------------

async def bridge_main(args: argparse.Namespace) -> int:
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.publisher import Publisher, Spool

    config = config_from_dict({
        "table": {"id": args.table, "src": src(args.table)},
        "broker": {"url": args.broker, "keepalive": 5},
        "spool": {"path": args.spool, "ack_timeout": 2.0, "acknowledge": args.acknowledge},
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
    }, Path(args.spool).parent / "table.toml")
    events = recording(args.table)
    spool = Spool(config.spool.path)
    publisher = Publisher(config, spool)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    task = asyncio.create_task(publisher.run(stop))
    # seq n is event n-1 of the recording: resume after the last one spooled
    for body in events[spool.next_seq - 1:]:
        if stop.is_set():
            break
        publisher.publish_event(body)
        await asyncio.sleep(1 / args.rate)
    while spool.depth() and not stop.is_set():
        await asyncio.sleep(0.05)
    workdir = Path(args.spool).parent
    if not stop.is_set():
        done = workdir / f"done-{args.table}.json"
        done.with_suffix(".tmp").write_text(json.dumps({"table": args.table,
                                                        "resends": publisher.resends}))
        done.with_suffix(".tmp").replace(done)
    while not stop.is_set() and not (workdir / "stop").exists():
        await asyncio.sleep(0.1)
    stop.set()
    await task
    spool.close()
    return 0


# -- the orchestra ----------------------------------------------------------------------

@dataclass
class Fault:
    kind: str
    at: float            # wall clock, when injected
    back: float = 0.0    # wall clock, when the component was started again
    table: str | None = None


@dataclass
class Figures:
    tables: int
    events_sent: int
    received: int = 0
    applied: int = 0
    duplicates_dropped: int = 0
    out_of_order_held: int = 0
    refused: int = 0
    lost: int = 0
    doubled: int = 0
    resends: int = 0
    results_equal: bool = False
    states_equal: bool = False
    faults: list[dict[str, Any]] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """Every event applied exactly once, and the outcome of a clean replay."""
        return self.lost == 0 and self.doubled == 0 and self.applied == self.events_sent \
            and self.states_equal and self.results_equal


class Session:
    def __init__(self, workdir: Path, *, tables: int = 3, rounds: int = 2, seed: int = 1,
                 rate: float = 25.0, acknowledge: str = "controller") -> None:
        from controller.broker.mosquitto import Mosquitto

        self.workdir = workdir
        self.tables = [str(t) for t in range(1, tables + 1)]
        self.rounds = rounds
        self.random = random.Random(seed)
        self.rate = rate
        self.acknowledge = acknowledge
        self.broker = Mosquitto(workdir / "broker", persistence=True)
        self.journal = workdir / "journal.sqlite"
        self.controller: subprocess.Popen[bytes] | None = None
        self.bridges: dict[str, subprocess.Popen[bytes]] = {}
        self.finished: dict[str, dict[str, Any]] = {}
        self.faults: list[Fault] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        return env

    def start_controller(self) -> None:
        log = open(self.workdir / "controller.log", "ab")  # noqa: SIM115 - the child's
        try:
            self.controller = subprocess.Popen(
                [sys.executable, "-m", "controller.service.cli_controller",
                 "--broker", self.broker.url, "--journal", str(self.journal),
                 "--status-interval", "1", "--log-level", "INFO"],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=self._env(), cwd=ROOT)
        finally:
            log.close()

    def stop_controller(self, sig: int) -> None:
        proc = self.controller
        if proc is not None and proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        self.controller = None

    def start_bridge(self, table: str) -> None:
        log = open(self.workdir / f"bridge-{table}.log", "ab")  # noqa: SIM115 - the child's
        try:
            self.bridges[table] = subprocess.Popen(
                [sys.executable, str(Path(__file__).resolve()), "bridge", "--broker",
                 self.broker.url, "--table", table, "--spool",
                 str(self.workdir / f"spool-{table}.sqlite"), "--rate", str(self.rate),
                 "--acknowledge", self.acknowledge],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL,
                env=self._env(), cwd=ROOT)
        finally:
            log.close()

    def _reap(self) -> None:
        for table, proc in self.bridges.items():
            if proc.poll() is not None:
                raise RuntimeError(f"bridge {table} exited {proc.returncode}: see "
                                   f"{self.workdir}/bridge-{table}.log")

    async def _flowing(self, fault: Fault, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not self._done():
            if self._journaled_since(fault):
                return
            await asyncio.sleep(0.05)

    def _journaled_since(self, fault: Fault) -> bool:
        if not self.journal.exists():
            return False
        try:
            db = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True, timeout=1.0)
            try:
                query = "SELECT 1 FROM incoming WHERE received >= ?"
                args: tuple[Any, ...] = (fault.back,)
                if fault.table is not None:
                    query += " AND topic = ?"
                    args += (f"bridge/{fault.table}/event",)
                return db.execute(query + " LIMIT 1", args).fetchone() is not None
            finally:
                db.close()
        except sqlite3.Error:
            return False

    def _done(self) -> bool:
        for table in self.tables:
            done = self.workdir / f"done-{table}.json"
            if done.exists():
                self.finished[table] = json.loads(done.read_text())
        return len(self.finished) == len(self.tables)

    async def _inject(self, kind: str) -> None:
        fault = Fault(kind, time.time())
        down = self.random.uniform(0.2, 1.0)
        if kind.startswith("controller"):
            self.stop_controller(signal.SIGKILL if kind.endswith("kill") else signal.SIGTERM)
            await asyncio.sleep(down)
            self.start_controller()
        elif kind.startswith("broker"):
            if kind.endswith("kill"):
                self.broker.kill()
            else:
                self.broker.stop()
            await asyncio.sleep(down)
            self.broker.start()
        else:
            table = self.random.choice(self.tables)
            fault.table = table
            self.bridges[table].kill()
            self.bridges[table].wait(5)
            await asyncio.sleep(down)
            self.start_bridge(table)
        fault.back = time.time()
        self.faults.append(fault)

    async def run(self, timeout: float = 240.0) -> Figures:
        started = time.monotonic()
        self.broker.start()
        try:
            self.start_controller()
            for table in self.tables:
                self.start_bridge(table)
            plan = [kind for kind in FAULTS for _ in range(self.rounds)]
            self.random.shuffle(plan)
            for kind in plan:
                await asyncio.sleep(self.random.uniform(0.2, 0.8))
                self._reap()
                await self._inject(kind)
                # one fault at a time: the next once events flow again (or 10 s), so that
                # each recovery time is that fault's own
                await self._flowing(self.faults[-1], 10.0)
            while not self._done():
                if time.monotonic() - started > timeout:
                    raise TimeoutError(f"tables {sorted(set(self.tables) - set(self.finished))}"
                                       f" not done in time")
                await asyncio.sleep(0.1)
                self._reap()
            (self.workdir / "stop").touch()
            for table, proc in self.bridges.items():
                if proc.wait(20) != 0:
                    raise RuntimeError(f"bridge {table} exited {proc.returncode}")
            self.bridges.clear()
            self.stop_controller(signal.SIGTERM)
        finally:
            for proc in self.bridges.values():
                if proc.poll() is None:
                    proc.kill()
                    proc.wait(5)
            self.stop_controller(signal.SIGKILL)
            self.broker.stop()
        figures = self.check()
        figures.seconds = round(time.monotonic() - started, 1)
        return figures

    def check(self) -> Figures:
        """Re-feed the journal to a fresh Engine and compare with a clean replay."""
        from controller.engine import Engine

        recordings = {t: recording(t) for t in self.tables}
        figures = Figures(tables=len(self.tables),
                          events_sent=sum(len(r) for r in recordings.values()))
        clean = Engine()
        for t, events in recordings.items():
            for n, body in enumerate(events, 1):
                clean.handle(f"bridge/{t}/event", json.dumps(
                    {"v": 1, "src": src(t), "seq": n, **body}).encode())
        rebuilt = Engine()
        db = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        rows = db.execute("SELECT topic, payload, received FROM incoming ORDER BY n").fetchall()
        db.close()
        for topic, payload, _ in rows:
            rebuilt.handle(str(topic), bytes(payload))
        figures.received = len(rows)
        figures.applied = rebuilt.stats["events"]
        figures.duplicates_dropped = rebuilt.stats["duplicates"]
        figures.out_of_order_held = rebuilt.stats["out_of_order"]
        figures.refused = rebuilt.stats["refused"]
        applied_per_table = {t: (rebuilt.snapshot(t).get("last") or {}).get("seq")
                             for t in self.tables}
        # strictly in order per (src, boot): the last seq applied is how far each table got
        reached = sum(applied_per_table[t] or 0 for t in self.tables)
        figures.lost = figures.events_sent - min(reached, figures.applied)
        figures.doubled = max(0, figures.applied - reached)
        figures.resends = sum(int(f.get("resends", 0)) for f in self.finished.values())
        figures.states_equal = all(rebuilt.snapshot(t) == clean.snapshot(t) for t in self.tables)
        figures.results_equal = [o.payload for o in rebuilt.retained()] == \
            [o.payload for o in clean.retained()]
        for fault in self.faults:
            after = [float(r[2]) for r in rows if float(r[2]) >= fault.back
                     and (fault.table is None or str(r[0]).split("/")[1] == fault.table)]
            figures.faults.append({
                "fault": fault.kind, "table": fault.table,
                "down_s": round(fault.back - fault.at, 2),
                # from the fault to the next event the controller journaled (downtime included)
                "recovered_s": round(min(after) - fault.at, 2) if after else None,
            })
        return figures


def print_figures(figures: Figures, out: Any = sys.stdout) -> None:
    f = figures
    print(f"tables {f.tables}, {len(f.faults)} faults, {f.seconds} s", file=out)
    print(f"events sent {f.events_sent}, received by the controller {f.received}, "
          f"applied {f.applied}, lost {f.lost}, doubled {f.doubled}", file=out)
    print(f"duplicates dropped {f.duplicates_dropped}, out of order held back "
          f"{f.out_of_order_held}, refused {f.refused}, bridge resends {f.resends}", file=out)
    print(f"final states equal a clean replay: {f.states_equal}; "
          f"retained outputs (state, indicator, result) equal: {f.results_equal}", file=out)
    print("| fault | table | down (s) | events flow again after (s) |", file=out)
    print("|---|---|---|---|", file=out)
    for x in f.faults:
        print(f"| {x['fault']} | {x['table'] or '-'} | {x['down_s']} | {x['recovered_s']} |",
              file=out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bridge", help="one table's bridge process (used by run)")
    b.add_argument("--broker", required=True)
    b.add_argument("--table", required=True)
    b.add_argument("--spool", required=True)
    b.add_argument("--rate", type=float, default=25.0, help="events a second")
    b.add_argument("--acknowledge", default="controller", choices=("controller", "broker"))
    r = sub.add_parser("run", help="the whole session under faults; prints the figures")
    r.add_argument("--tables", type=int, default=3)
    r.add_argument("--rounds", type=int, default=2, help="times each kind of fault")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--rate", type=float, default=25.0, help="events a second per table")
    r.add_argument("--workdir", help="keep logs, journal and spools here")
    r.add_argument("--acknowledge", default="controller", choices=("controller", "broker"),
                   help="broker: the spool empties on the PUBACK, as before contract 1.2")
    args = ap.parse_args(argv)
    if args.command == "bridge":
        import logging

        logging.basicConfig(level=logging.INFO,
                            format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        logging.getLogger("mqtt").setLevel(logging.ERROR)  # aiomqtt's pending-call notes
        return asyncio.run(bridge_main(args))
    import tempfile

    with contextlib.ExitStack() as stack:
        workdir = Path(args.workdir) if args.workdir else \
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="faults-")))
        workdir.mkdir(parents=True, exist_ok=True)
        session = Session(workdir, tables=args.tables, rounds=args.rounds, seed=args.seed,
                          rate=args.rate, acknowledge=args.acknowledge)
        figures = asyncio.run(session.run())
        print(f"python tests/faultsession.py run --tables {args.tables} --rounds "
              f"{args.rounds} --seed {args.seed} --rate {args.rate:g} --acknowledge "
              f"{args.acknowledge}")
        print_figures(figures)
        ok = figures.ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
