"""The broadcast relay: the controllers' ``feed`` to the public, under a release policy.

The rules daemon publishes each call and card on ``{root}/{t}/feed`` as it happens (never a
hand). What the public may see, and when, is the broadcast operator's policy, applied here
so that no hand leaks to players who have yet to play it:

- ``live``: every item, ``delay`` seconds after it happened (a vugraph delay);
- ``board``: a board's items once that table has finished it (its ``result``), plus delay;
- ``round``: a board's items once every table that plays it this round (``--schedule``)
  has finished it, plus delay; tables the schedule does not name follow ``board``.

``result`` messages go through the same gate (a score tells the hand). Released items are
republished on ``{public}/{t}/feed`` and ``{public}/{t}/result`` (retained), in order per
table. Held items are kept in a small SQLite store, so a relay killed mid-round loses
nothing: on restart it releases them when their time comes.

``BroadcastGate`` is the policy, pure and clock-free (``now`` is passed in);
``bridge-table broadcast`` runs it on a broker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sqlite3
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .daemon import BrokerSettings

__all__ = ["BroadcastPolicy", "BroadcastGate", "Held", "HeldStore", "run_relay", "main"]

log = logging.getLogger("bridge_table.broadcast")

RELEASES = ("live", "board", "round")


@dataclass(frozen=True)
class BroadcastPolicy:
    delay: float = 0.0
    release: str = "live"
    schedule: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.release not in RELEASES:
            raise ValueError(f"release must be one of {', '.join(RELEASES)}, "
                             f"not {self.release!r}")
        if self.delay < 0:
            raise ValueError("delay must not be negative")


@dataclass(frozen=True)
class Held:
    """One message waiting: ``kind`` is ``feed`` or ``result``."""

    n: int
    table: str
    kind: str
    board: int | None
    payload: dict[str, Any]
    at: float


class BroadcastGate:
    """Holds feed and result messages until the policy lets them out."""

    def __init__(self, policy: BroadcastPolicy) -> None:
        self.policy = policy
        self._held: list[Held] = []
        self._done: dict[tuple[str, int], float] = {}   # (table, board) -> finished at
        self._n = 0

    # -- input ----------------------------------------------------------------------------
    def offer(self, table: str, kind: str, payload: dict[str, Any], now: float) -> Held:
        """A message from a controller; a ``result`` also marks the board finished."""
        board = payload.get("board")
        board = board if isinstance(board, int) and not isinstance(board, bool) else None
        if kind == "result" and board is not None:
            self._done.setdefault((table, board), now)
        self._n += 1
        item = Held(self._n, table, kind, board, payload, now)
        self._held.append(item)
        return item

    def restore(self, items: Sequence[Held], done: Mapping[tuple[str, int], float]) -> None:
        """Items and finished boards kept across a restart (``HeldStore``)."""
        self._held = sorted(items, key=lambda h: h.n)
        self._n = max((h.n for h in self._held), default=0)
        self._done.update(done)

    # -- output ---------------------------------------------------------------------------
    def release_time(self, item: Held) -> float | None:
        """When ``item`` may go out (None: not yet known: the board is still being played)."""
        p = self.policy
        if p.release == "live" or item.board is None:
            return item.at + p.delay
        finished = self._finished(item.table, item.board)
        return None if finished is None else finished + p.delay

    def _finished(self, table: str, board: int) -> float | None:
        here = self._done.get((table, board))
        if here is None:
            return None
        if self.policy.release == "board" or table not in self.policy.schedule:
            return here
        tables = [t for t, boards in self.policy.schedule.items() if board in boards]
        times = [self._done.get((t, board)) for t in tables]
        if any(t is None for t in times):
            return None
        return max([here, *(t for t in times if t is not None)])

    def due(self, now: float) -> list[Held]:
        """The items that may go out now, in arrival order; each table keeps its order
        (an item waits for the earlier items of its table)."""
        out: list[Held] = []
        blocked: set[str] = set()
        keep: list[Held] = []
        for item in self._held:
            when = self.release_time(item)
            if item.table in blocked or when is None or when > now:
                blocked.add(item.table)
                keep.append(item)
            else:
                out.append(item)
        self._held = keep
        return out

    def next_time(self) -> float | None:
        times = [t for t in (self.release_time(h) for h in self._held) if t is not None]
        return min(times) if times else None

    @property
    def held(self) -> list[Held]:
        return list(self._held)

    @property
    def finished(self) -> dict[tuple[str, int], float]:
        return dict(self._done)


class HeldStore:
    """SQLite: the held items and the finished boards, so a restart loses nothing."""

    def __init__(self, path: str | Path) -> None:
        self.db = sqlite3.connect(str(path))
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("CREATE TABLE IF NOT EXISTS held (n INTEGER PRIMARY KEY, tbl TEXT, "
                        "kind TEXT, board INTEGER, payload TEXT, at REAL)")
        self.db.execute("CREATE TABLE IF NOT EXISTS done (tbl TEXT, board INTEGER, at REAL, "
                        "PRIMARY KEY (tbl, board))")
        self.db.commit()

    def load(self) -> tuple[list[Held], dict[tuple[str, int], float]]:
        items = [Held(n, t, k, b, json.loads(p), at) for n, t, k, b, p, at in
                 self.db.execute("SELECT n, tbl, kind, board, payload, at FROM held")]
        done = {(t, b): at for t, b, at in self.db.execute("SELECT tbl, board, at FROM done")}
        return items, done

    def add(self, item: Held, finished: Mapping[tuple[str, int], float]) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO held VALUES (?, ?, ?, ?, ?, ?)",
                            (item.n, item.table, item.kind, item.board,
                             json.dumps(item.payload), item.at))
            if item.kind == "result" and item.board is not None:
                at = finished.get((item.table, item.board), item.at)
                self.db.execute("INSERT OR IGNORE INTO done VALUES (?, ?, ?)",
                                (item.table, item.board, at))

    def remove(self, items: Sequence[Held]) -> None:
        with self.db:
            self.db.executemany("DELETE FROM held WHERE n = ?", [(h.n,) for h in items])

    def close(self) -> None:
        self.db.close()


async def run_relay(broker: BrokerSettings, gate: BroadcastGate, *, root: str = "bridge",
                    public: str = "public", store: HeldStore | None = None,
                    stop: asyncio.Event | None = None, client_id: str = "bridge-table-broadcast",
                    ready: asyncio.Event | None = None) -> None:
    """Relay ``{root}/+/feed`` and ``{root}/+/result`` to ``{public}/...`` through ``gate``."""
    import aiomqtt

    stop = stop or asyncio.Event()
    if store is not None:
        gate.restore(*store.load())
    while not stop.is_set():
        try:
            async with aiomqtt.Client(
                    broker.host, broker.port, identifier=client_id, clean_session=False,
                    username=broker.username, password=broker.password,
                    tls_context=broker.tls_context(), keepalive=broker.keepalive) as client:
                await client.subscribe([(f"{root}/+/feed", 1), (f"{root}/+/result", 1)])
                if ready is not None:
                    ready.set()
                await _serve(client, gate, root, public, store, stop)
        except aiomqtt.MqttError as exc:
            log.warning("broker %s: %s; retrying", broker.url, exc)
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass


async def _serve(client: Any, gate: BroadcastGate, root: str, public: str,
                 store: HeldStore | None, stop: asyncio.Event) -> None:
    """Two loops: one takes messages in (never interrupted mid-read, so none is dropped),
    one lets them out when the gate says so."""
    wake = asyncio.Event()

    async def receive() -> None:
        async for message in client.messages:
            parts = str(message.topic).split("/")
            if len(parts) != 3 or parts[0] != root or parts[2] not in ("feed", "result"):
                continue
            try:
                payload = json.loads(bytes(message.payload))
            except (ValueError, TypeError):
                log.warning("bad payload on %s ignored", message.topic)
                continue
            if not isinstance(payload, dict):
                continue
            item = gate.offer(parts[1], parts[2], payload, time.time())
            if store is not None:
                store.add(item, gate.finished)
            wake.set()

    async def release() -> None:
        while True:
            wake.clear()
            for item in gate.due(time.time()):
                await client.publish(f"{public}/{item.table}/{item.kind}",
                                     json.dumps(item.payload), qos=1,
                                     retain=item.kind == "result")
                if store is not None:
                    store.remove([item])
            nxt = gate.next_time()
            timeout = None if nxt is None else max(0.0, nxt - time.time())
            try:
                await asyncio.wait_for(wake.wait(), timeout)
            except TimeoutError:
                pass

    tasks = [asyncio.create_task(receive()), asyncio.create_task(release()),
             asyncio.create_task(stop.wait())]
    done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        while not task.done():  # a cancellation can be swallowed on Python 3.11: repeat
            task.cancel()
            await asyncio.wait({task}, timeout=0.1)
    for task in done:
        if not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


def main(argv: list[str]) -> int:
    from .daemon import BrokerSettings, ControllerError
    from .schedule import ScheduleError, load_schedule

    ap = argparse.ArgumentParser(prog="bridge-table broadcast",
                                 description=__doc__.split("\n")[0])
    ap.add_argument("--broker", default="mqtt://127.0.0.1:1883",
                    help="mqtt://[user:password@]HOST:PORT or mqtts://... (TLS)")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds (default 0)")
    ap.add_argument("--release", choices=RELEASES, default="live")
    ap.add_argument("--schedule", help="the round's schedule (TOML), for --release round")
    ap.add_argument("--root", default="bridge")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    ap.add_argument("--store", default="var/broadcast.sqlite", help="held items (SQLite)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        broker = BrokerSettings.from_url(args.broker)
        schedule = load_schedule(args.schedule) if args.schedule else {}
        policy = BroadcastPolicy(args.delay, args.release, schedule)
    except (ControllerError, ScheduleError, ValueError) as exc:
        print(f"bridge-table broadcast: {exc}", file=sys.stderr)
        return 2
    Path(args.store).parent.mkdir(parents=True, exist_ok=True)
    store = HeldStore(args.store)
    try:
        asyncio.run(run_relay(broker, BroadcastGate(policy), root=args.root,
                              public=args.public, store=store))
    except KeyboardInterrupt:
        pass
    finally:
        store.close()
    return 0
