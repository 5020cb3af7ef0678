"""Firmware bridge latency: a reader line written on the pty -> the event at an MQTT subscriber.

The reader is the simulated one (``sim://1/north``): a virtual reader firmware on a pty master,
read back by the bridge through the real serial path (pyserial-asyncio, line protocol, host
session), then the bridge's own path (antenna map, lookup in the sim tag registry, SQLite
spool, aiomqtt QoS 1) to a private mosquitto and a subscriber. In the same run, the bare
broker: a QoS 1 publish from one client to a subscriber, measured the same way. One tag at
a time, so this is latency, not throughput.

    .venv/bin/python bench/bench_bridge_latency.py [--count 500] [--sync normal|full]

Prints p50/p90/p99 for both and the difference at p50 (the goal: < 1 ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import aiomqtt

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.broker.mosquitto import Mosquitto  # noqa: E402
from firmware_bridge.bridge import Bridge  # noqa: E402
from firmware_bridge.config import config_from_dict  # noqa: E402
from firmware_bridge.display import NullDisplay  # noqa: E402
from firmware_bridge.examples import example  # noqa: E402
from firmware_bridge.sim.table import SimReaderSpec, SimTable  # noqa: E402
from firmware_bridge.tags import TagRegistry  # noqa: E402


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def summary(name: str, ms: list[float]) -> str:
    return (f"{name:<28} n={len(ms):<5} p50={percentile(ms, 50):7.3f} ms"
            f"  p90={percentile(ms, 90):7.3f} ms  p99={percentile(ms, 99):7.3f} ms"
            f"  mean={statistics.fmean(ms):7.3f} ms")


class Arrivals:
    """Subscriber side: perf_counter time of each payload's arrival, by a key."""

    def __init__(self, port: int, topic: str, key: Callable[[bytes], str]) -> None:
        self.port, self.topic, self.key = port, topic, key
        self.times: dict[str, float] = {}
        self.waiting: dict[str, asyncio.Event] = {}
        self.ready = asyncio.Event()

    async def run(self) -> None:
        async with aiomqtt.Client("127.0.0.1", self.port) as client:
            await client.subscribe(self.topic, qos=1)
            self.ready.set()
            async for m in client.messages:
                now = time.perf_counter()
                assert isinstance(m.payload, bytes)
                k = self.key(m.payload)
                self.times.setdefault(k, now)
                event = self.waiting.get(k)
                if event is not None:
                    event.set()

    async def wait(self, k: str, timeout: float = 10.0) -> float:
        event = self.waiting.setdefault(k, asyncio.Event())
        if k not in self.times:
            await asyncio.wait_for(event.wait(), timeout)
        return self.times[k]


async def bench_broker(broker: Mosquitto, count: int, warmup: int) -> list[float]:
    arrivals = Arrivals(broker.port, "bench/bare", lambda p: p.decode())
    task = asyncio.create_task(arrivals.run())
    await arrivals.ready.wait()
    out: list[float] = []
    async with aiomqtt.Client("127.0.0.1", broker.port) as client:
        for i in range(count + warmup):
            key = f"m{i}"
            t0 = time.perf_counter()
            # not awaited to PUBACK first: the bridge does not wait for it either
            publish = asyncio.create_task(client.publish("bench/bare", key.encode(), qos=1))
            t1 = await arrivals.wait(key)
            await publish
            if i >= warmup:
                out.append((t1 - t0) * 1000)
            await asyncio.sleep(0.002)
    task.cancel()
    return out


async def bench_bridge(broker: Mosquitto, work: Path, count: int, warmup: int,
                       sync: str) -> list[float]:
    tags = example("tags-sim.toml")
    registry = TagRegistry.load([tags])
    cards = [registry.uid_for_card("1", s + r) for s in "SHDC" for r in "AKQJT98765432"]
    table = SimTable("1", [SimReaderSpec("north", {0: ("spot", "N")})], registry=registry,
                     link_dir=work / f"ttys-{sync}")
    await table.start()
    firmware = table.firmwares["north"]
    config = config_from_dict({
        "table": {"id": "1", "src": "bench-pi"},
        "broker": {"url": broker.url},
        "registry": {"files": [str(tags)]},
        "spool": {"path": str(work / f"spool-{sync}.sqlite"), "sync": sync},
        "readers": [{"name": "north", "url": "sim://1/north", "kind": "inventory",
                     "antennas": {"0": {"seat": "N", "zone": "spot"}}}],
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
        "health": {"interval": 3600.0},
    }, work / "bench.toml")
    bridge = Bridge(config, display=NullDisplay())
    stop = asyncio.Event()
    bridge_task = asyncio.create_task(bridge.run(stop))
    # the reader's clock (hw_time) goes into the event's ts: a unique key per line
    arrivals = Arrivals(broker.port, "bridge/1/event",
                        lambda p: f"{json.loads(p)['ts']}/{json.loads(p)['action']}")
    sub_task = asyncio.create_task(arrivals.run())
    await arrivals.ready.wait()
    await bridge.ready.wait()
    assert bridge.publisher is not None
    await bridge.publisher.connected.wait()
    assert await table.wait_hosts(10)
    out: list[float] = []
    for i in range(count + warmup):
        uid = cards[i % len(cards)]
        assert uid is not None
        hw_time = 1_000_000_000.0 + i
        t0 = time.perf_counter()
        firmware.place(0, uid, hw_time=hw_time)       # the line goes onto the pty now
        t1 = await arrivals.wait(f"{hw_time}/present")
        if i >= warmup:
            out.append((t1 - t0) * 1000)
        firmware.lift(0, uid, hw_time=hw_time + 0.5)  # the card goes back (not measured)
        await arrivals.wait(f"{hw_time + 0.5}/removed")
        await asyncio.sleep(0.002)
    stop.set()
    await bridge_task
    sub_task.cancel()
    table.close()
    return out


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="bench-bridge-") as tmp:
        work = Path(tmp)
        with Mosquitto(work / "broker", persistence=False) as broker:
            bare = await bench_broker(broker, args.count, args.warmup)
            bridged = {sync: await bench_bridge(broker, work, args.count, args.warmup, sync)
                       for sync in args.sync}
    print(f"# {' '.join(sys.argv)}")
    print(f"# {platform.uname().system} {platform.uname().release} {platform.machine()},"
          f" python {platform.python_version()}")
    print(summary("bare broker (QoS 1)", bare))
    for sync, ms in bridged.items():
        print(summary(f"bridge, spool sync={sync}", ms))
        added = percentile(ms, 50) - percentile(bare, 50)
        print(f"{'':<28} bridge adds {added:.3f} ms at p50"
              f" (goal < 1 ms: {'met' if added < 1.0 else 'NOT met'})")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=500)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--sync", nargs="+", default=["normal", "full"], choices=("normal", "full"))
    args = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    # aiomqtt schedules add_writer for a socket that a cancelled subscriber has just closed:
    # harmless at exit, but asyncio logs it as an error with a traceback
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
