"""Reader firmware speed on emulated chips with the datasheets' timings.

1. **Inventory rate per antenna**: the firmware's MFRC522 and PN532 drivers
   (``firmware_bridge/mcu/btreader``) listing 1, 4 and 13 tags lying on one antenna, on the
   emulated chips of ``firmware_bridge/sim/chips.py`` with ``AirTime``: every frame takes its
   ISO/IEC 14443 air time at 106 kbit/s plus the frame delay time, every receive timeout the
   chip's timer, every SPI/I2C byte its bus time; the driver's own waits (field off 5 ms, 5 ms
   for the tags to power up) are real sleeps. ``modelled`` is that time alone: what the chip
   and the air need, the floor for a real board. ``here`` is the wall time of the same loop
   under CPython on this machine (the emulation's own CPU time included).
2. **Tag laid -> event on MQTT**: the whole firmware (``EmulatedBoard``, one MFRC522 antenna,
   scan period ``--rate-ms``) on a pty, read by the real bridge (serial reader, spool,
   aiomqtt QoS 1) into a private mosquitto and a subscriber: from ``Field.place`` to the
   event's arrival.

    .venv/bin/python bench/bench_readers.py [--rounds 30] [--count 60] [--rate-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_bridge_latency import Arrivals, percentile, summary  # noqa: E402

from controller.broker.mosquitto import Mosquitto  # noqa: E402
from firmware_bridge.bridge import Bridge  # noqa: E402
from firmware_bridge.config import config_from_dict  # noqa: E402
from firmware_bridge.display import NullDisplay  # noqa: E402
from firmware_bridge.examples import example  # noqa: E402
from firmware_bridge.mcu import HOST_TICKS  # noqa: E402
from firmware_bridge.mcu.btreader.clock import Clock  # noqa: E402
from firmware_bridge.mcu.btreader.inventory import Frontend  # noqa: E402
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522  # noqa: E402
from firmware_bridge.mcu.btreader.pn532 import PN532, I2cTransport  # noqa: E402
from firmware_bridge.sim.chips import AirTime, ChipI2c, ChipSpi, EmuMFRC522, EmuPN532, Field  # noqa: E402
from firmware_bridge.sim.mcu import EmulatedBoard, Wiring  # noqa: E402


class SleepCount:
    """MicroPython's ticks on CPython, counting the driver's own sleeps."""

    def __init__(self) -> None:
        self.slept_ms = 0

    def ticks_ms(self) -> int:
        return HOST_TICKS.ticks_ms()

    def ticks_diff(self, later: int, earlier: int) -> int:
        return later - earlier

    def sleep_ms(self, ms: int) -> None:
        self.slept_ms += ms
        HOST_TICKS.sleep_ms(ms)


def inventory_rate(kind: str, tags: int, rounds: int) -> dict[str, float]:
    field = Field()
    air = AirTime()
    ticks = SleepCount()
    clock = Clock(ticks)
    driver: Frontend
    if kind == "mfrc522":
        driver = MFRC522(ChipSpi(EmuMFRC522(field, "a", air)), clock)
    else:
        # no busy NAKs: how long a real PN532 stays busy is in none of its documents; the
        # figure is the floor, as for the chip's processing time
        driver = PN532(I2cTransport(ChipI2c(EmuPN532(field, "a", air, busy_s=0.0))), clock)
    for i in range(tags):
        field.place("a", f"04{i:02X}A1B2C3D4E5")
    assert driver.check()
    found, problem = driver.inventory(16)
    assert len(found) == tags and not problem, (found, problem)
    air.spent, ticks.slept_ms = 0.0, 0
    start = time.perf_counter()
    for _ in range(rounds):
        found, _ = driver.inventory(16)
        assert len(found) == tags
    wall = (time.perf_counter() - start) / rounds
    modelled = (air.spent + ticks.slept_ms / 1000) / rounds
    return {"modelled_ms": modelled * 1000, "wall_ms": wall * 1000,
            "cards_per_s": tags / modelled, "cards_per_s_here": tags / wall}


async def laid_to_mqtt(count: int, rate_ms: int, work: Path) -> list[float]:
    field = Field()
    wiring = Wiring()
    wiring.spi[(0, 17)] = EmuMFRC522(field, "tray", AirTime())
    settings: dict[str, Any] = {
        "reader": "N1", "rate_ms": rate_ms, "misses": 3, "link": {"type": "uart", "id": 0},
        "buses": {"spi0": {"type": "spi", "id": 0, "sck": 18, "mosi": 19, "miso": 16}},
        "chips": [{"type": "mfrc522", "bus": "spi0", "cs": 17}], "antennas": [{"chip": 0}]}
    out: list[float] = []
    with Mosquitto(work / "broker", persistence=False) as broker, \
            EmulatedBoard(settings, wiring, link=work / "ttyN1") as board:
        config = config_from_dict({
            "table": {"id": "1", "src": "bench-pi"},
            "broker": {"url": broker.url},
            "registry": {"files": [str(example("tags-sim.toml"))]},
            "spool": {"path": str(work / "spool.sqlite"), "sync": "normal"},
            "readers": [{"name": "north", "url": f"serial://{work / 'ttyN1'}",
                         "kind": "inventory", "antennas": {"0": {"seat": "N", "zone": "tray"}}}],
            "gpio": {"factory": "mock"}, "display": {"type": "none"},
            "health": {"interval": 3600.0}}, work / "bench.toml")
        bridge = Bridge(config, display=NullDisplay())
        stop = asyncio.Event()
        bridge_task = asyncio.create_task(bridge.run(stop))
        arrivals = Arrivals(broker.port, "bridge/1/event",
                            lambda p: f"{json.loads(p)['uid']}/{json.loads(p)['action']}")
        sub_task = asyncio.create_task(arrivals.run())
        await arrivals.ready.wait()
        await bridge.ready.wait()
        assert bridge.publisher is not None
        await bridge.publisher.connected.wait()
        await asyncio.sleep(0.5)
        for i in range(count):
            uid = f"04BE{i:04X}C3D4E5"
            t0 = time.perf_counter()
            field.place("tray", uid)
            t1 = await arrivals.wait(f"{uid}/present", 30)
            out.append((t1 - t0) * 1000)
            field.lift("tray", uid)
            await arrivals.wait(f"{uid}/removed", 30)
            # lay the next card at a random point of the scan period
            await asyncio.sleep((i * 7 % rate_ms) / 1000)
        assert board.error is None, board.error
        stop.set()
        await bridge_task
        sub_task.cancel()
    return out


async def main_async(args: argparse.Namespace) -> None:
    print(f"# {' '.join(sys.argv)}")
    print(f"# {platform.uname().system} {platform.uname().release} {platform.machine()},"
          f" {platform.processor() or '?'}, python {platform.python_version()}")
    print("chip      tags  modelled/round  cards/s (modelled)  here/round  cards/s (here)")
    for kind in ("mfrc522", "pn532"):
        for tags in (1, 4, 13):
            r = inventory_rate(kind, tags, args.rounds)
            print(f"{kind:<9} {tags:>4}  {r['modelled_ms']:10.2f} ms  {r['cards_per_s']:18.0f}"
                  f"  {r['wall_ms']:7.2f} ms  {r['cards_per_s_here']:14.0f}")
    with tempfile.TemporaryDirectory(prefix="bench-readers-") as tmp:
        ms = await laid_to_mqtt(args.count, args.rate_ms, Path(tmp))
    print(summary(f"laid -> MQTT, RATE {args.rate_ms} ms", ms))
    print(f"{'':<28} max={max(ms):.1f} ms (p50 {percentile(ms, 50):.1f} ms)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=30)
    p.add_argument("--count", type=int, default=60)
    p.add_argument("--rate-ms", type=int, default=50)
    args = p.parse_args()
    logging.basicConfig(level=logging.ERROR)
    logging.getLogger("asyncio").setLevel(logging.CRITICAL)
    asyncio.run(main_async(args))


if __name__ == "__main__":
    main()
