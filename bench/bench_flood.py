"""Another table's latency while one table floods the controller (issue 27).

A private mosquitto, the rules daemon (``controller.service.daemon``, journal synced ``normal``),
and two tables' bridges as paho clients: table 2 plays at a steady ``--rate`` events a
second (QoS 1) and measures each event's latency to its end-to-end acknowledgement
(``bridge/2/ack/table-2-pi``: journaled and applied); table 1 floods (QoS 0, ``--flood``
events a second, the issue's 10.8k) for ``--seconds``. Run twice: with the controller's
per-table intake bound (``controller.service.intake``, the default) and without it.

    .venv/bin/python bench/bench_flood.py [--seconds 10] [--flood 10800] [--rate 40]
                                          [--flood-qos 0|1]

Prints table 2's p50/p99/max before and during the flood, and what the flood got in.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import multiprocessing
import os
import platform
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.broker.identity import Identities  # noqa: E402
from controller.broker.mosquitto import Mosquitto  # noqa: E402
from controller.broker.settings import resolve  # noqa: E402
from controller.service.daemon import ControllerDaemon  # noqa: E402
from controller.service.engines import build_engine  # noqa: E402
from controller.service.intake import Intake  # noqa: E402
from controller.service.journal import Journal  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def event(src: str, seq: int) -> bytes:
    return json.dumps({"v": 1, "src": src, "seq": seq, "ts": 1_764_400_000.0 + seq,
                       "type": "button", "seat": "N", "button": "undo"}).encode()


class Player:
    """Table 2's bridge: one event every 1/rate s, its latency to the acknowledgement."""

    def __init__(self, port: int, rate: float) -> None:
        self.rate = rate
        self.sent: dict[int, float] = {}
        self.latency: list[tuple[float, float]] = []  # (sent at, ms)
        self.acked = 0
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-table-2")
        self.client.on_message = self._ack
        self.client.connect("127.0.0.1", port)
        self.client.subscribe("bridge/2/ack/table-2-pi", qos=0)
        self.client.loop_start()

    def _ack(self, client: Any, userdata: Any, m: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        seq = int(json.loads(m.payload)["seq"])
        with self.lock:
            for s in range(self.acked + 1, seq + 1):
                at = self.sent.pop(s, None)
                if at is not None:
                    self.latency.append((at, (now - at) * 1000))
            self.acked = max(self.acked, seq)

    def play(self, until: float) -> None:
        seq = 0
        next_at = time.perf_counter()
        while next_at < until:
            seq += 1
            with self.lock:
                self.sent[seq] = time.perf_counter()
            self.client.publish("bridge/2/event", event("table-2-pi", seq), qos=1)
            next_at += 1 / self.rate
            time.sleep(max(0.0, next_at - time.perf_counter()))

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


def play(port: int, rate: float, until: float, out: Any) -> None:
    """Table 2's bridge in a process of its own (as on its Pi): its latencies to ``out``."""
    player = Player(port, rate)
    player.play(until)
    time.sleep(max(0.0, until + DRAIN - time.perf_counter()))
    player.close()
    with player.lock:
        out.send((player.latency, len(player.sent)))


def flood_process(port: int, rate: float, start: float, until: float, qos: int,
                  out: Any) -> None:
    out.send(flood(port, rate, start, until, qos))


#: seconds after the flood for what is still queued to reach the controller
DRAIN = 5.0


def flood(port: int, rate: float, start: float, until: float, qos: int = 0) -> int:
    """Table 1 sends as many as ``rate`` a second between ``start`` and ``until``."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-table-1")
    client.max_queued_messages_set(0)
    client.connect("127.0.0.1", port)
    client.loop_start()
    time.sleep(max(0.0, start - time.perf_counter()))
    sent = 0
    while (now := time.perf_counter()) < until:
        due = int((now - start) * rate)
        while sent < due:
            sent += 1
            client.publish("bridge/1/event", event("table-1-pi", sent), qos=qos)
        time.sleep(0.001)
    client.loop_stop()
    client.disconnect()
    return sent


#: who is who, as broker-config writes it (each table's events on a topic of their own)
IDENTITIES = Identities(events={"1": frozenset({"table-1-pi"}), "2": frozenset({"table-2-pi"})},
                        rulings=frozenset({"console"}))


async def one_run(tmp: Path, intake: Intake | None, identities: Identities | None,
                  args: argparse.Namespace) -> dict[str, Any]:
    with Mosquitto(tmp / "broker") as broker:
        journal = Journal(tmp / "journal.sqlite", sync="normal")
        daemon = ControllerDaemon(broker=resolve(broker.url, env={}), engine=build_engine(),
                                  journal=journal, intake=intake, identities=identities,
                                  status_interval=3600)
        stop = asyncio.Event()
        task = asyncio.create_task(daemon.run(stop))
        await asyncio.wait_for(daemon.ready.wait(), 10)
        # each table's bridge in a process of its own, as on its own Pi (perf_counter is
        # CLOCK_MONOTONIC: one clock for every process of the machine)
        ctx = multiprocessing.get_context("fork")
        t0 = time.perf_counter() + 1.0
        flood_start, end = t0 + args.before, t0 + args.before + args.seconds
        (p_in, p_out), (f_in, f_out) = ctx.Pipe(False), ctx.Pipe(False)
        procs = [ctx.Process(target=play, args=(broker.port, args.rate, end, p_out)),
                 ctx.Process(target=flood_process,
                             args=(broker.port, args.flood, flood_start, end,
                                   args.flood_qos, f_out))]
        for proc in procs:
            proc.start()
        latency, lost = await asyncio.to_thread(p_in.recv)
        sent = await asyncio.to_thread(f_in.recv)
        for proc in procs:
            proc.join()
        stop.set()
        await asyncio.wait_for(task, 60)
        journal.close()
        before = [ms for at, ms in latency if at < flood_start]
        during = [ms for at, ms in latency if at >= flood_start]
        if args.trace:
            for second in range(int(args.before + args.seconds) + 1):
                ms = [v for at, v in latency if int(at - t0) == second]
                if ms:
                    print(f"   t={second:3d} s  n={len(ms):3d}  max={max(ms):7.1f} ms")
        return {"before": before, "during": during, "lost": lost,
                "flood_sent": sent, "applied": daemon.counters.applied,
                "throttled": daemon.counters.throttled}


def line(name: str, ms: list[float]) -> str:
    if not ms:
        return f"{name:<10} n=0"
    return (f"{name:<10} n={len(ms):<5} p50={percentile(ms, 50):8.1f} ms  "
            f"p99={percentile(ms, 99):8.1f} ms  max={max(ms):8.1f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="the flood's length")
    ap.add_argument("--before", type=float, default=4.0, help="seconds measured first")
    ap.add_argument("--flood", type=float, default=10_800.0, help="flood events a second")
    ap.add_argument("--rate", type=float, default=40.0, help="table 2's events a second")
    ap.add_argument("--flood-qos", type=int, choices=(0, 1), default=0)
    ap.add_argument("--trace", action="store_true", help="table 2's worst latency each second")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    print(f"{platform.node()}: {os.cpu_count()} CPUs, {platform.python_version()}; "
          f"flood {args.flood:.0f}/s (QoS {args.flood_qos}) for {args.seconds:.0f} s, table 2 at "
          f"{args.rate:.0f}/s")
    runs = (("--identities and the intake bound (as deployed)", Intake(), IDENTITIES),
            ("the intake bound, no --identities (no pause)", Intake(), None),
            ("no bound", None, None))
    for name, intake, identities in runs:
        with tempfile.TemporaryDirectory() as tmp:
            r = asyncio.run(one_run(Path(tmp), intake, identities, args))
        print(f"-- {name}: flood sent {r['flood_sent']}, applied {r['applied']}, "
              f"dropped by the bound {r['throttled']}; table 2 events unacknowledged at the "
              f"end {r['lost']}")
        print("   " + line("before", r["before"]))
        print("   " + line("during", r["during"]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
