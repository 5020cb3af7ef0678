"""Dealing-machine verification: boards verified per second.

1. File level alone: ``check_board`` on every board of a set (seen = the deal itself, and
   seen with one card moved), and reading the set from a DUP file.
2. The real path: the simulated station (``sim://`` readers: virtual reader firmware on ptys,
   read back through pyserial and the line protocol), the station following boards as an
   operator presents them (board tag, then the four pockets, waiting for each verdict before
   the next board), with and without publishing each verdict to a private mosquitto.

    .venv/bin/python bench/bench_verify.py [--boards 500] [--file-boards 5000] [--layout pockets]

Prints one line per measurement (boards/s and ms per board).
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from controller.broker.mosquitto import Mosquitto  # noqa: E402
from controller.formats.dup import read_dup, write_dup  # noqa: E402
from controller.laws.cards import FULL_DECK, Card, Deal, Seat  # noqa: E402
from controller.laws.dealcheck import DealIndex, check_board  # noqa: E402
from controller.verify.runs import MqttReporter  # noqa: E402
from controller.verify.station import Station, StationFollower, StationReader  # noqa: E402
from firmware_bridge.sim.station import SimStation, SimTags, plan_boards  # noqa: E402


def deals_for(n: int, seed: int = 1) -> dict[int, Deal]:
    rng = random.Random(seed)
    out: dict[int, Deal] = {}
    for b in range(1, n + 1):
        cards = list(FULL_DECK)
        rng.shuffle(cards)
        out[b] = Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})
    return out


def line(name: str, boards: int, seconds: float) -> str:
    return (f"{name:<52} {boards:>6} boards  {boards / seconds:>10.0f} boards/s"
            f"  {1000 * seconds / boards:8.3f} ms/board")


def bench_file(n: int) -> list[str]:
    deals = deals_for(n)
    seen_ok = {b: {s: list(d[s]) for s in Seat} for b, d in deals.items()}
    seen_bad: dict[int, dict[Seat, list[Card]]] = {}
    for b, d in deals.items():
        hands = {s: list(d[s]) for s in Seat}
        hands[Seat.W].append(hands[Seat.N].pop())
        seen_bad[b] = hands
    out = []
    t = time.perf_counter()
    for b, d in deals.items():
        assert check_board(d, seen_ok[b], board=b).ok
    out.append(line("check_board, right boards", n, time.perf_counter() - t))
    t = time.perf_counter()
    index = DealIndex(deals)
    for b, d in deals.items():
        assert not check_board(d, seen_bad[b], board=b, deals=index).ok
    out.append(line("check_board, one card moved (+ set look-up)", n, time.perf_counter() - t))
    # a DUP set holds at most 999 boards (3-digit fields): read a full one, several times
    size = min(n, 999)
    data = write_dup({b: deals[b] for b in range(1, size + 1)})
    rounds = max(1, n // size)
    t = time.perf_counter()
    for _ in range(rounds):
        f = read_dup(data)
        assert len(f.deals) == size and not f.problems
    out.append(line("read_dup (156-byte records, BRI/DGE cross-check)", size * rounds,
                    time.perf_counter() - t))
    return out


async def bench_station(n: int, layout: str, broker_url: str | None) -> str:
    deals = deals_for(n, seed=2)
    tags = SimTags()
    plans = plan_boards(deals, (), tags)
    async with SimStation(layout=layout) as sim:  # type: ignore[arg-type]
        readers = [StationReader(r, a) for r, a in sim.open_readers()]
        follower = StationFollower(deals, layout=layout,  # type: ignore[arg-type]
                                   tap=sim.feed)   # feed slots: one card at a time
        mqtt = MqttReporter(broker_url, "bridge", sim.station_id) if broker_url else None
        if mqtt is not None:
            await mqtt.__aenter__()
            assert mqtt.error is None, mqtt.error
        station = Station(readers, tags, follower,
                          on_result=[mqtt.board] if mqtt is not None else [])
        runner = asyncio.create_task(station.run())
        await station.ready.wait()
        await sim.table.wait_hosts()
        t = time.perf_counter()
        late = await sim.run(plans, station)
        elapsed = time.perf_counter() - t
        station.stop()
        results = await runner
        if mqtt is not None:
            await mqtt.__aexit__(None, None, None)
    assert late == 0 and len(results) == n and all(r.ok for r in results)
    where = "+ MQTT QoS 1 per verdict" if broker_url else "no broker"
    return line(f"simulated station ({layout}, serial path), {where}", n, elapsed)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--boards", type=int, default=500)
    p.add_argument("--file-boards", type=int, default=5000)
    p.add_argument("--layout", choices=("pockets", "sequential"), default="pockets")
    args = p.parse_args()
    print(f"# {platform.platform()}, Python {platform.python_version()}")
    for text in bench_file(args.file_boards):
        print(text)
    print(asyncio.run(bench_station(args.boards, args.layout, None)))
    with tempfile.TemporaryDirectory() as tmp, Mosquitto(Path(tmp)) as broker:
        print(asyncio.run(bench_station(args.boards, args.layout, broker.url)))


if __name__ == "__main__":
    main()
