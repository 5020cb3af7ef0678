"""The daemon's CPU per event, latency at a human pace with round-start scan bursts, and the
time to drain a whole room's round start.

    .venv/bin/python bench/bench_daemon_cpu.py [--tables 512,1024] [--duration 40]
        [--drain 2000] [--rate 0.5] [--write-docs]

A private mosquitto (no persistence) and ``bridge-table controller`` in a subprocess with its
journal at ``--journal-sync full`` (every commit fsync'ed). The load comes from this process
through paho-mqtt on its own network thread (the cheapest Python client; it takes most of a
core at 2,000 tables).

- **pace**: N tables. Each table starts its round at its own moment, spread over the first
  ``--spread`` seconds, then sends one call or card every ``1/rate`` seconds (0.5: a card
  every 2 s): the board as ``controller.demo.plan_board`` plays it, no irregularity. The
  round start (``--start``) is what a table sends when its board starts:

  - ``tag``: the board tag alone. The controller has the boards' deal file (``--deals``), so
    nothing is read before the auction (docs/sensing.md: boards dealt by machine, the
    normal case);
  - ``pass``: the board tag, then each player slides his 13 cards one by one across his
    play spot (the shoe-style read of docs/sensing.md, for a table without a deal file),
    the four players at once: a card ``present`` every ``--pass-interval`` seconds (0.6)
    and ``removed`` ``PASS_REMOVED`` (0.45 s: 3 polling rounds over the antenna and the
    bridge's 150 ms hold on a removal) after it; the auction starts once the hands are
    read. 105 events over about 8 s;
  - ``scan`` (the round start of issue #13, before docs/sensing.md): the board tag and the
    52 cards of the four hands read at once (53 events in one burst); ``full``: each card's
    ``present`` and ``removed`` at once (105 events in one burst); ``before``: the scans
    sent before the level is timed, so that it times the play alone.

  ``--start steady``: a room
  in the middle of a session, boards back to back: before the level is timed each table is
  brought to a random point of its board; then every ``1/rate`` seconds it sends its next
  call or card, or, its board played, the next board's tag and 52 scans at once.
  Latency: event ``publish`` -> the first ``state`` of its table whose ``last.seq`` covers it.
  Its p99 is given for every event, for the round starts' events alone ("round start")
  and for the calls and cards alone.
  CPU: the daemon's process CPU time (``/proc/PID/stat``, user + system) over the events it
  applied in the level: the figure that decides how many tables one core serves, and robust
  to the machine being shared (latency is not).
- **drain**: M tables' round starts at once (M x 53 events, 104,000 scans for 2,000 tables),
  published as fast as this process can; the time from the first publish until every table's
  last scan is in a ``state`` received here.
- ``--controllers N``: N partitioned controllers (``--partition K/N`` of every table the run
  uses, each with its own journal) on the one broker; CPU is the sum of theirs, and each
  one's share of the events is printed.
- **the daemon's own time** ("own p50/p99"): the controller publishes its status every
  second here, with the histogram of its own event -> outputs times (wire 1.16,
  ``controller.service.latency``: from an event's arrival in its network thread to its
  batch's outputs handed back to it). The level's window is the difference between the
  last status before the level and the first after it; the figures are the upper bounds of
  the histogram's buckets ("at most 20 ms").
- ``--controller null``: in place of ``bridge-table controller``, a client that does
  nothing but answer each event with a ``state`` naming it (no Laws, no journal): what the
  generator, the broker and the machine alone give, the floor under the daemon's latency
  on this machine.
"""

from __future__ import annotations

import argparse
import collections
import functools
import gc
import itertools
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import msgspec
import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from bench_controller import DEAL, board_record, pct, proc_cpu  # noqa: E402

from controller.broker.mosquitto import Mosquitto  # noqa: E402
from controller.broker.settings import BrokerSettings  # noqa: E402
from controller.demo import plan_board  # noqa: E402
from controller.laws.cards import board_dealer, board_vulnerability  # noqa: E402
from controller.service import latency  # noqa: E402

WINDOW = 20_000
SECTION = "## Daemon CPU per event and round-start bursts"
#: ``--start pass``: seconds from a card's ``present`` to its ``removed`` as it is slid across
#: a play spot (``firmware_bridge.sim.table.PASS_ROUNDS`` polling rounds of 100 ms over the
#: antenna, then the bridge's 150 ms hold on a removal, docs/serial-protocol.md)
PASS_REMOVED = 0.45
#: ``--start pass``: the most a player waits after the board tag before his first card
PASS_LATEST = 1.0


@functools.cache
def round_start_and_play(board: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]],
                                             list[dict[str, Any]]]:
    """A board's events as the bridges send them, in three parts: the scan (the board tag
    and the 52 cards of the four hands read at once: the round start of issue #13), the
    whole round start (the board tag, each card passed across its play spot: 105 events) and
    the play (calls and cards). Either start is followed by the board's own play without
    an alert (a generator that sent two hands' scans and pick-ups raised four a board)."""
    events = plan_board(board_record(board), revoke_trick=None).events()
    first_call = next(i for i, e in enumerate(events) if e["zone"] == "bid")
    start = events[:first_call]
    # the hands passed across the play spots (docs/sensing.md); "scan" keeps the reads only
    assert start[0]["zone"] == "board" and all(e["zone"] == "spot" for e in start[1:])
    scan = [start[0], *(e for e in start[1:] if e["action"] == "present")]
    assert len(scan) == 53 and len(start) == 105
    return scan, start, events[first_call:]


#: run_pace's steps that are not an event of their own: a round start sent at once, and a
#: table's next call or card
BURST: Final = "burst"
PLAY: Final = "play"
Step = dict[str, Any] | str


class Feed:
    def __init__(self, table: str, board: int) -> None:
        self.table = table
        self.topic = f"bridge/{table}/event"
        self.src = f"bench-{table}"
        self.seq = 0
        self.board = board
        self.scan, self.start, self.play = round_start_and_play(board)
        self.played = 0

    @property
    def tag(self) -> list[dict[str, Any]]:
        """The round start of ``--start tag``: the board tag alone."""
        return self.scan[:1]

    def next_board(self) -> None:
        """The table's next board (``--start steady``): 1-16 in turn."""
        self.board = self.board % 16 + 1
        self.scan, self.start, self.play = round_start_and_play(self.board)
        self.played = 0

    def encode(self, ev: dict[str, Any]) -> tuple[int, bytes]:
        self.seq += 1
        body = dict(ev, v=1, src=self.src, seq=self.seq, ts=round(time.time(), 3),
                    uid=f"{self.seq:08X}")
        return self.seq, json.dumps(body).encode()

    def next_play(self) -> dict[str, Any] | None:
        if self.played >= len(self.play):
            return None
        self.played += 1
        return self.play[self.played - 1]

    def passed(self, rng: random.Random, interval: float) -> list[tuple[float, dict[str, Any]]]:
        """The round start of ``--start pass``, each event with its time after the board
        tag: the four players slide their hands across their play spots at once, each
        starting within ``PASS_LATEST`` s, a card every ``interval`` s, each card
        ``removed`` ``PASS_REMOVED`` s after its ``present``. In time order; at most one
        card on a spot at any moment."""
        if interval <= PASS_REMOVED:
            raise ValueError(f"--pass-interval must be over {PASS_REMOVED} s: a card must "
                             "leave the spot before the next is laid on it")
        timed: list[tuple[float, int, dict[str, Any]]] = [(0.0, 0, self.start[0])]
        first = {seat: rng.uniform(0, PASS_LATEST) for seat in "NESW"}
        count = dict.fromkeys("NESW", 0)
        for n, ev in enumerate(self.start[1:], start=1):
            seat = ev["seat"]
            at = first[seat] + interval * count[seat]
            if ev["action"] == "removed":
                at += PASS_REMOVED
                count[seat] += 1
            timed.append((at, n, ev))
        timed.sort(key=lambda x: (x[0], x[1]))
        return [(at, ev) for at, _, ev in timed]


@dataclass
class Timing:
    """Send times per table (ascending seq) and the latencies measured."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: table -> (seq, sent at, a scan?) of what has no state yet
    sent: dict[str, collections.deque[tuple[int, float, bool]]] = field(default_factory=dict)
    #: (received at, latency, a scan?) of each event whose state came
    samples: list[tuple[float, float, bool]] = field(default_factory=list)
    done_at: float = 0.0
    expected: dict[str, int] = field(default_factory=dict)   # drain: table -> last seq
    remaining: int = 0
    finished: threading.Event = field(default_factory=threading.Event)

    def note_sent(self, table: str, seq: int, t0: float, scan: bool) -> None:
        with self.lock:
            self.sent.setdefault(table, collections.deque()).append((seq, t0, scan))

    def on_state(self, table: str, seq: int, now: float) -> None:
        with self.lock:
            q = self.sent.get(table)
            while q and q[0][0] <= seq:
                _, t0, scan = q.popleft()
                self.samples.append((now, now - t0, scan))
            want = self.expected.get(table)
            if want is not None and seq >= want:
                del self.expected[table]
                self.remaining -= 1
                if self.remaining == 0:
                    self.done_at = now
                    self.finished.set()

    def outstanding(self) -> int:
        with self.lock:
            return sum(len(q) for q in self.sent.values())


class _Last(msgspec.Struct):
    seq: int | None = None
    src: str = ""


class _StateLast(msgspec.Struct):
    """What the generator reads of a ``state``: its ``last`` (the rest is skipped)."""

    last: _Last | None = None


_STATE_LAST = msgspec.json.Decoder(_StateLast)


class Load:
    """The load generator: one paho client, its network thread, ``state`` subscriptions."""

    def __init__(self, port: int) -> None:
        self.timing = Timing()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-daemon-cpu")
        # paho's own window scans every in-flight message on each PUBACK (the load generator,
        # not the daemon, became the bottleneck); without one, more than 65,535 messages in
        # flight reuse packet ids and events went missing. So: no paho window, and publish()
        # waits while more than WINDOW are unacknowledged (2,000 bridges would each have a
        # handful in flight on their own connections).
        self.client.max_inflight_messages_set(0)
        self.sent = 0
        self.acked = 0
        self.client.on_publish = self._on_publish
        self.client.max_queued_messages_set(0)
        self.client.on_message = self._on_message
        self.client.on_socket_open = _nodelay
        subscribed = threading.Event()
        self.client.on_subscribe = lambda *a: subscribed.set()
        self.client.connect("127.0.0.1", port, keepalive=60)
        #: each controller's src -> (when its last online status came, its ``latency``)
        self.statuses: dict[str, tuple[float, dict[str, Any]]] = {}
        self.client.loop_start()
        self.client.subscribe([("bridge/+/state", 0), ("bridge/controller/status", 0),
                               ("bridge/controller/+/status", 0)])
        if not subscribed.wait(10):
            raise RuntimeError("no SUBACK from the broker")

    def _on_message(self, client: Any, userdata: Any, m: mqtt.MQTTMessage) -> None:
        now = time.perf_counter()
        table = m.topic.split("/")[1]
        if table == "controller":
            status = json.loads(m.payload)
            if status.get("status") == "online" and "latency" in status:
                self.statuses[status["src"]] = (now, status["latency"])
            return
        try:  # only ``last``: a whole state decoded was most of this thread at 1,024 tables
            last = _STATE_LAST.decode(m.payload).last
        except msgspec.DecodeError:
            return
        if last is not None and last.seq is not None and last.src.startswith("bench-"):
            self.timing.on_state(table, last.seq, now)

    def _on_publish(self, *args: Any) -> None:
        self.acked += 1

    def publish(self, feed: Feed, ev: dict[str, Any], scan: bool = False) -> None:
        while self.sent - self.acked > WINDOW:
            time.sleep(0.001)
        self.sent += 1
        seq, body = feed.encode(ev)
        self.timing.note_sent(feed.table, seq, time.perf_counter(), scan)
        self.client.publish(feed.topic, body, qos=1)

    def latencies(self) -> dict[str, dict[str, Any]]:
        return {src: lat for src, (_, lat) in self.statuses.items()}

    def latencies_after(self, t: float, timeout: float = 5.0) -> dict[str, dict[str, Any]]:
        """Each controller's first status (``latency``) sent after ``t`` (perf_counter)."""
        limit = time.perf_counter() + timeout
        while time.perf_counter() < limit and not (
                self.statuses and all(at > t for at, _ in self.statuses.values())):
            time.sleep(0.05)
        return self.latencies()

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def _nodelay(client: Any, userdata: Any, sock: Any) -> None:
    import socket
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


@dataclass
class PaceResult:
    tables: int
    events: int
    cpu_s: float
    wall_s: float
    lat: list[float]
    missing: int
    behind_s: float
    scan_lat: list[float]
    play_lat: list[float]
    #: the controllers' own event -> outputs times in the level (``latency.window``), summed
    own: list[int] | None = None

    def own_pct(self, q: float) -> str:
        if self.own is None:
            return "-"
        v = latency.percentile(self.own, q)
        return "-" if v is None else f"<= {v:g}"

    def row(self) -> str:
        return (f"| {self.tables} | {self.events} | {self.events / self.wall_s:.0f} | "
                f"{self.cpu_s * 1000 / max(1, len(self.lat)):.3f} | "
                f"{self.cpu_s / self.wall_s * 100:.0f}% | {pct(self.lat, 50):.1f} | "
                f"{pct(self.lat, 99):.1f} | {max(self.lat, default=0) * 1000:.0f} | "
                f"{self.missing} | {self.behind_s * 1000:.0f} | "
                f"{pct(self.scan_lat, 99):.1f} | {pct(self.play_lat, 99):.1f} | "
                f"{self.own_pct(0.5)} | {self.own_pct(0.99)} |")


PACE_HEADER = ("| tables | events | events/s | daemon CPU ms/event applied | daemon CPU "
               "| state p50 ms | state p99 ms | max ms | missing | sender late max ms "
               "| round start p99 ms | calls/cards p99 ms | own p50 ms | own p99 ms |\n"
               "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")


def cpu_of(pids: list[int]) -> float:
    return sum(proc_cpu(pid) for pid in pids)


def level_prefix(n: int) -> str:
    """Table ids of pace level ``n``: ``PA0``, ``PA1``...; letters then digits, so that a
    controller's ``--tables PA0-PA1023`` names them (controller/service/partition.py)."""
    return "P" + chr(ord("A") + n)


DRAIN_PREFIX = "D"


def run_pace(load: Load, pids: list[int], tables: int, duration: float, rate: float, spread: float,
             prefix: str, seed: int = 1, start_kind: str = "scan",
             trace: Path | None = None, pass_interval: float = 0.6) -> PaceResult:
    """``start_kind``: what each table's round start sends (the module's docstring): ``tag``
    (the board tag: the hands come from the deal file), ``pass`` (the board tag and the
    hands slid across the play spots one card at a time, every ``pass_interval`` s a seat),
    ``scan`` (the board tag and the four hands' 52 scans at once), ``full`` (each hand's
    cards passed at once: 105 events), ``before`` (the scans sent and applied before the
    level is timed: play only) or ``steady`` (every table brought to a random point of its
    board before the level; then boards back to back: the next board's scans when one is
    played). The latencies of the round start's events are the "scans" column."""
    rng = random.Random(seed)
    feeds = [Feed(f"{prefix}{i}", 1 + i % 16) for i in range(tables)]
    if start_kind in ("before", "steady"):
        for feed in feeds:
            for ev in feed.scan:
                load.publish(feed, ev)
            if start_kind == "steady":  # each table somewhere in its board
                for _ in range(rng.randrange(len(feed.play))):
                    load.publish(feed, feed.play[feed.played])
                    feed.played += 1
        limit = time.perf_counter() + 120
        while load.timing.outstanding() and time.perf_counter() < limit:
            time.sleep(0.05)
        # the daemon, idle after that flood, collects its garbage in full
        # (controller/service/gcpolicy.py): not part of the level
        time.sleep(3)
    # (at, order, table, step): step is BURST (the round start at once), PLAY (the table's
    # next call or card) or one event of a paced round start
    schedule: list[tuple[float, int, int, Step]] = []
    order = itertools.count()
    for i in range(tables):
        if start_kind == "steady":
            # a step every 1/rate s: the next call or card, or once the board is played
            # the next board's scans (decided when the step comes)
            t = rng.uniform(0, 1 / rate)
            while t < duration:
                schedule.append((t, next(order), i, PLAY))
                t += 1 / rate
            continue
        # each table: its round start at its own moment, then one call/card every 1/rate s
        t = rng.uniform(0, spread)
        if start_kind == "pass":
            passed = feeds[i].passed(rng, pass_interval)
            schedule += [(t + after, next(order), i, ev) for after, ev in passed]
            t += passed[-1][0]  # the auction starts once the hands are read
        elif start_kind != "before":
            schedule.append((t, next(order), i, BURST))
        t += 1 / rate * rng.uniform(0.5, 1.5)
        while t < duration:
            schedule.append((t, next(order), i, PLAY))
            t += 1 / rate
    schedule.sort(key=lambda x: (x[0], x[1]))
    burst_of = {"full": "start", "tag": "tag"}.get(start_kind, "scan")
    timing = load.timing
    with timing.lock:
        timing.samples = []
    events = 0
    behind = 0.0
    # this process's own collections would be timed as the daemon's latency: the schedule
    # (100,000 entries at 1,024 tables passing their hands) and the samples are visited by
    # every full collection, tens of milliseconds each; nothing here makes cycles
    own_before = load.latencies_after(time.perf_counter(), timeout=3.0)
    gc.collect()
    gc.freeze()
    gc.disable()
    cpu0 = cpu_of(pids)
    start = time.perf_counter()
    for at, _, i, step in schedule:
        due = start + at
        now = time.perf_counter()
        if due > now:
            time.sleep(due - now)
        else:
            behind = max(behind, now - due)
        feed = feeds[i]
        if isinstance(step, dict):  # one event of a paced round start
            load.publish(feed, step, scan=True)
            events += 1
        elif step == BURST:
            for ev in getattr(feed, burst_of):
                load.publish(feed, ev, scan=True)
                events += 1
        elif step == PLAY:
            play = feed.next_play()
            if play is None and start_kind == "steady":
                feed.next_board()
                for ev in feed.scan:
                    load.publish(feed, ev, scan=True)
                    events += 1
            elif play is not None:
                load.publish(feed, play)
                events += 1
    # until every event's state is in (or 30 s more)
    limit = time.perf_counter() + 30
    while timing.outstanding() and time.perf_counter() < limit:
        time.sleep(0.05)
    wall = time.perf_counter() - start
    cpu = cpu_of(pids) - cpu0
    gc.enable()
    gc.unfreeze()
    with timing.lock:
        samples = list(timing.samples)
    if trace is not None:  # one line an event: s into the level, latency ms, scan 0/1
        with open(trace, "a") as f:
            f.writelines(f"{tables} {now - start:.3f} {lat * 1000:.2f} {int(scan)}\n"
                         for now, lat, scan in samples)
    lat = [lat for _, lat, _ in samples]
    scan_lat = [lat for _, lat, scan in samples if scan]
    play_lat = [lat for _, lat, scan in samples if not scan]
    return PaceResult(tables, events, cpu, wall, lat, timing.outstanding(), behind, scan_lat,
                      play_lat, own_window(own_before, load.latencies_after(time.perf_counter())))


def own_window(before: dict[str, dict[str, Any]], after: dict[str, dict[str, Any]]
               ) -> list[int] | None:
    """The controllers' own event -> outputs counts between two sets of statuses, summed;
    None without statuses (``--controller null``) or across a restart."""
    if not after:
        return None
    total: list[int] | None = None
    for src, lat in after.items():
        try:
            counts = latency.window(before.get(src), lat)
        except ValueError as e:
            print(f"  {src}: {e}", file=sys.stderr)
            return None
        total = counts if total is None else [a + b for a, b in zip(total, counts, strict=True)]
    return total


@dataclass
class DrainResult:
    tables: int
    events: int
    publish_s: float
    drain_s: float
    cpu_s: float
    complete: bool


def run_drain(load: Load, pids: list[int], tables: int, prefix: str, timeout: float) -> DrainResult:
    feeds = [Feed(f"{prefix}{i}", 1 + i % 16) for i in range(tables)]
    timing = load.timing
    with timing.lock:
        timing.sent.clear()
        timing.samples = []
        timing.expected = {f.table: len(f.scan) for f in feeds}
        timing.remaining = tables
        timing.finished.clear()
    cpu0 = cpu_of(pids)
    start = time.perf_counter()
    events = 0
    for f in feeds:  # the whole room at once: every table's board tag and four hands
        for ev in f.scan:
            load.publish(f, ev, scan=True)
            events += 1
    published = time.perf_counter() - start
    complete = timing.finished.wait(timeout)
    drain = (timing.done_at if complete else time.perf_counter()) - start
    return DrainResult(tables, events, published, drain, cpu_of(pids) - cpu0, complete)


def slow_fsync(work: Path, ms: float) -> dict[str, str]:
    """The environment of a controller whose disk syncs in ``ms`` milliseconds at least:
    ``bench/slow_fsync.c`` compiled and preloaded (a C compiler needed)."""
    lib = work / "slow_fsync.so"
    done = subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(lib),
                           str(REPO / "bench" / "slow_fsync.c"), "-ldl"],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"--fsync-delay: could not build bench/slow_fsync.c: {done.stderr}")
    return {**os.environ, "LD_PRELOAD": str(lib), "SLOW_FSYNC_MS": f"{ms:.0f}"}


def start_daemon(url: str, work: Path, deals: Path, extra: list[str],
                 part: tuple[int, int, str] | None = None,
                 env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``part``: (K, N, the --tables of the whole run) for the K-th of N controllers."""
    scope = [] if part is None else ["--tables", part[2], "--partition", f"{part[0]}/{part[1]}"]
    journal = work / ("journal.sqlite" if part is None else f"journal-{part[0]}.sqlite")
    return subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "controller", "--broker", url, *scope,
         "--deals", str(deals), "--journal", str(journal),
         "--journal-sync", "full", "--max-tables", "100000", "--status-interval", "1",
         "--log-level", "WARNING", *extra],
        cwd=REPO, stdin=subprocess.DEVNULL, env=env)


def start_null(url: str) -> subprocess.Popen[bytes]:
    """``--controller null``: :func:`serve_null` in a subprocess."""
    return subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "--serve-null", url],
                            cwd=REPO, stdin=subprocess.DEVNULL)


def serve_null(url: str) -> int:
    """The null controller: each event answered with a ``state`` whose ``last`` names it, at
    once, nothing else (QoS 1 in, QoS 0 out, as the daemon); until SIGTERM."""
    import signal
    broker = BrokerSettings.from_url(url)
    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="bench-null-controller")
    last = msgspec.json.Decoder(_Last)
    encode = msgspec.json.Encoder().encode

    def on_message(c: Any, userdata: Any, m: mqtt.MQTTMessage) -> None:
        ev = last.decode(m.payload)
        c.publish(m.topic.rsplit("/", 1)[0] + "/state",
                  encode({"last": {"seq": ev.seq, "src": ev.src}}), 0)

    client.on_message = on_message
    client.on_connect = lambda c, *a: c.subscribe("bridge/+/event", 1)
    client.on_socket_open = _nodelay
    client.connect(broker.host, broker.port)
    signal.signal(signal.SIGTERM, lambda *a: client.disconnect())
    client.loop_forever()
    return 0


def machine() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            model = next((ln.split(":", 1)[1].strip() for ln in f
                          if ln.startswith("model name")), platform.machine())
    except OSError:
        model = platform.machine()
    load = os.getloadavg()
    return (f"{model}, {os.cpu_count()} cores shared with other work (load average "
            f"{load[0]:.1f} at the end), Python {platform.python_version()}, mosquitto on "
            "loopback")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tables", default="512,1024", help="pace levels (comma-separated)")
    ap.add_argument("--duration", type=float, default=40.0, help="seconds per pace level")
    ap.add_argument("--spread", type=float, default=20.0,
                    help="the round starts are spread over this many seconds")
    ap.add_argument("--rate", type=float, default=0.5, help="calls/cards per table per second")
    ap.add_argument("--drain", type=int, default=2000, help="tables in the burst (0: none)")
    ap.add_argument("--label", default="", help="a name for this run in the output")
    ap.add_argument("--daemon-arg", action="append", default=[],
                    help="extra argument for the controller (repeatable)")
    ap.add_argument("--start", choices=("tag", "pass", "scan", "full", "before", "steady"),
                    default="scan",
                    help="each table's round start in the pace levels: tag (the board tag; "
                    "the hands from the deal file), pass (the board tag, then the four hands "
                    "slid across the play spots one card at a time at --pass-interval), "
                    "scan (the four hands' 52 scans at once), full (each card's present "
                    "and removed at once: 105 events), before (the scans sent before the "
                    "level is timed: play only), or steady: every table somewhere in a "
                    "board, and the next board's scans when it is played (boards back to "
                    "back at --rate; --spread unused)")
    ap.add_argument("--pass-interval", type=float, default=0.6,
                    help="--start pass: seconds between two cards a player slides across "
                    f"his play spot (over {PASS_REMOVED}; default %(default)s)")
    ap.add_argument("--trace", type=Path, help="append each event's latency to this file: "
                    "tables, seconds into the level, latency ms, scan (1) or not (0)")
    ap.add_argument("--controllers", type=int, default=1,
                    help="partitioned controllers sharing the tables (--partition K/N)")
    ap.add_argument("--controller", choices=("daemon", "null"), default="daemon",
                    help="daemon: bridge-table controller; null: a client that answers each "
                    "event with a state at once and does nothing else (the floor of the "
                    "generator, the broker and the machine)")
    ap.add_argument("--fsync-delay", type=float, default=0.0, metavar="MS",
                    help="make the controller's disk sync in at least MS milliseconds (an "
                    "SD card's, simulated: bench/slow_fsync.c preloaded; needs cc)")
    ap.add_argument("--serve-null", metavar="URL", help=argparse.SUPPRESS)
    ap.add_argument("--write-docs", action="store_true",
                    help="append the figures to docs/benchmarks.md (our section)")
    args = ap.parse_args()
    if args.serve_null:
        return serve_null(args.serve_null)
    if args.controller == "null" and args.controllers > 1:
        ap.error("--controller null answers every table: one of it, not --controllers")
    if args.pass_interval <= PASS_REMOVED:
        ap.error(f"--pass-interval must be over {PASS_REMOVED} s: a card leaves the spot "
                 "before the next is laid on it")
    work = Path(tempfile.mkdtemp(prefix="bench-daemon-cpu-"))
    deals = work / "deals.pbn"
    deals.write_text("".join(
        f'[Board "{n}"]\n[Dealer "{board_dealer(n)}"]\n'
        f'[Vulnerable "{board_vulnerability(n)}"]\n[Deal "{DEAL}"]\n\n' for n in range(1, 17)))
    paces: list[PaceResult] = []
    drain: DrainResult | None = None
    levels = [int(t) for t in args.tables.split(",") if t]
    spec = ",".join([f"{level_prefix(n)}0-{level_prefix(n)}{t - 1}"
                     for n, t in enumerate(levels) if t > 0]
                    + ([f"{DRAIN_PREFIX}0-{DRAIN_PREFIX}{args.drain - 1}"] if args.drain else []))
    with Mosquitto(work / "broker", persistence=False) as broker:
        n_ctl = max(1, args.controllers)
        env = slow_fsync(work, args.fsync_delay) if args.fsync_delay > 0 else None
        daemons = [start_null(broker.url) if args.controller == "null" else
                   start_daemon(broker.url, work, deals, args.daemon_arg,
                                None if n_ctl == 1 else (k, n_ctl, spec), env)
                   for k in range(1, n_ctl + 1)]
        pids = [d.pid for d in daemons]
        load: Load | None = None
        try:
            time.sleep(1.5 * n_ctl)
            load = Load(broker.port)
            time.sleep(0.5)
            print(PACE_HEADER, flush=True)
            for n, tables in enumerate(levels):
                shares = [proc_cpu(pid) for pid in pids]
                r = run_pace(load, pids, tables, args.duration, args.rate,
                             min(args.spread, args.duration), level_prefix(n),
                             start_kind=args.start, trace=args.trace,
                             pass_interval=args.pass_interval)
                paces.append(r)
                print(r.row(), flush=True)
                if n_ctl > 1:
                    print("  CPU per controller (s): " + ", ".join(
                        f"{proc_cpu(pid) - s0:.1f}" for pid, s0 in zip(pids, shares, strict=True)),
                        flush=True)
            if args.drain:
                drain = run_drain(load, pids, args.drain, DRAIN_PREFIX, timeout=300)
                print(f"drain: {drain}", flush=True)
        finally:
            if load is not None:
                load.close()
            for d in daemons:
                d.terminate()
            for d in daemons:
                d.wait(30)
    lines = [SECTION + (f" ({args.label})" if args.label else ""), ""]
    flags = "" if args.daemon_arg == [] else " " + " ".join(
        f"--daemon-arg={a}" for a in args.daemon_arg)
    if args.controllers > 1:
        flags += f" --controllers {args.controllers}"
    if args.controller != "daemon":
        flags += f" --controller {args.controller}"
    if args.fsync_delay > 0:
        flags += f" --fsync-delay {args.fsync_delay:g}"
    if args.start != "scan":
        flags += f" --start {args.start}"
    if args.start == "pass" and args.pass_interval != 0.6:
        flags += f" --pass-interval {args.pass_interval:g}"
    lines.append(f"Command: `.venv/bin/python bench/bench_daemon_cpu.py --tables {args.tables} "
                 f"--duration {args.duration:g} --spread {args.spread:g} --rate {args.rate:g} "
                 f"--drain {args.drain}{flags}` "
                 f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}).")
    lines.append(f"Machine: {machine()}; " + (
        "journal `sync = full`." if args.controller == "daemon" else
        "the null controller (no Laws, no journal)."))
    lines.append("")
    lines.append(PACE_HEADER)
    lines += [r.row() for r in paces]
    if drain is not None:
        lines.append("")
        state = "drained" if drain.complete else "NOT drained (timeout)"
        lines.append(
            f"Round-start burst: {drain.tables} tables x 53 events = {drain.events} events "
            f"published in {drain.publish_s:.1f} s, {state} in **{drain.drain_s:.1f} s** "
            f"({drain.events / drain.drain_s:.0f} events/s); daemon CPU "
            f"{drain.cpu_s:.1f} s = {drain.cpu_s * 1000 / drain.events:.3f} ms/event.")
    text = "\n".join(lines) + "\n"
    print()
    print(text)
    if args.write_docs:
        path = REPO / "docs" / "benchmarks.md"
        path.write_text(path.read_text().rstrip("\n") + "\n\n" + text)
        print("appended to docs/benchmarks.md")
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    import signal
    signal.signal(signal.SIGTERM, _interrupt)  # the daemon and broker are stopped on the way
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        raise SystemExit(130) from None
