"""The demo's runner: the broker, the rules daemon, the firmware bridge on the simulated
table, the events played at the chosen speed, and an end that always comes (Ctrl-C too).

Everything is real but the cards: a private mosquitto on a free loopback port, the rules
daemon (``controller.service.daemon``), the firmware bridge (the shipped ``sim.toml``,
``firmware_bridge.examples``, pointed at that broker) reading virtual reader firmwares on
pseudo-terminals through the real serial path, and the simulated table placing and lifting
the tags.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import shutil
import signal
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

import aiomqtt
import msgspec

from controller import wire
from controller.broker.mosquitto import Mosquitto
from controller.broker.settings import BrokerSettings
from controller.demo.plan import DemoError, load_board, plan_board
from controller.demo.view import TableView, event_text, print_end
from controller.engine import Engine
from controller.laws.cards import Seat
from controller.laws.record import BoardRecord, DealInfo
from controller.service.daemon import ControllerDaemon, cancel_until_done
from controller.service.journal import Journal
from firmware_bridge.publisher import wait_event
from firmware_bridge.sim.players import CAREFUL, humanize

__all__ = ["TABLE", "Progress", "bridge_config_dict", "run_demo", "until_signal",
           "wait_for_result"]

TABLE = "1"


def bridge_config_dict(sim_toml: Path, *, broker_url: str, spool: Path,
                       lang: str) -> dict[str, Any]:
    """The shipped ``sim.toml`` pointed at the demo's broker and spool, in ``lang``; its
    readers stay ``sim://`` (the simulated table's virtual firmwares, read through the real
    serial path) and its registry ``tags-sim.toml``."""
    import tomllib

    data = tomllib.loads(sim_toml.read_text(encoding="utf-8"))
    data["broker"]["url"] = broker_url
    data["table"]["language"] = lang
    data["spool"]["path"] = str(spool)
    return data




async def _watch(url: BrokerSettings, view: TableView, done: asyncio.Event,
                 ready: asyncio.Event, progress: Progress) -> None:
    async with aiomqtt.Client(url.host, url.port) as client:
        await client.subscribe(wire.topic(TABLE, "#"), qos=1)
        ready.set()
        async for m in client.messages:
            kind = m.topic.value.rsplit("/", 1)[-1]
            progress.saw(kind)
            raw = m.payload if isinstance(m.payload, bytes | bytearray) else \
                str(m.payload).encode()
            try:
                payload = json.loads(raw)
            except ValueError:
                continue
            view.on_message(kind, payload)
            if kind == "result" and isinstance(payload, dict):
                done.set()


def _delay(event: dict[str, Any], speed: float) -> float:
    """Seconds before an event, at speed 1: scans are quick sweeps, calls and cards are not."""
    if event["zone"] == "bid":
        base = 0.8
    elif event["zone"] == "board":
        base = 0.5
    elif event["action"] == "removed":
        base = 0.01
    elif event["zone"] in ("spot", "tray") and "card" in event:
        base = 0.03 if event.get("_scan") else 0.5
    else:
        base = 0.1
    return base / max(speed, 0.01)


async def _play_direct(url: BrokerSettings, events: Iterable[dict[str, Any]],
                       speed: float) -> None:
    """Without the simulated table: publish the events as a bridge would."""
    async with aiomqtt.Client(url.host, url.port) as client:
        for seq, event in enumerate(events, start=1):
            await asyncio.sleep(_delay(event, speed))
            body = {k: v for k, v in event.items() if not k.startswith("_")}
            body.update(v=wire.VERSION, src="demo-direct", seq=seq, ts=round(time.time(), 3),
                        uid=_tag_uid(body, seq))
            message = msgspec.convert(body, wire.Event)  # as a bridge encodes it
            await client.publish(wire.topic(TABLE, "event"), wire.encode(message), qos=1)


def _tag_uid(event: Mapping[str, Any], seq: int) -> str:
    """The tag a bridge would report: a card's own, the same each time it is read (a card
    turned on its spot comes back as the same tag, docs/sensing.md "A card turned"; a new
    tag would be another card laid, Law 47); one per event for the rest (calls, boards)."""
    card = event.get("card")
    if card is not None:
        return f"04{zlib.crc32(str(card).encode()):08X}00"   # 7 bytes, as an NTAG's
    return f"{seq:08X}"


def _mark_scans(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tag the hand-scan events so that they go fast."""
    first_call = next((i for i, e in enumerate(events) if e["zone"] == "bid"), len(events))
    return [dict(e, _scan=True) if i < first_call else e for i, e in enumerate(events)]




@dataclasses.dataclass
class Progress:
    """What the demo's watcher has seen of the table's topics: how many messages, the kind
    of the last one and when it came (``time.monotonic()``); ``moved`` is set at each one."""

    messages: int = 0
    last_kind: str = ""
    last_at: float = dataclasses.field(default_factory=time.monotonic)
    moved: asyncio.Event = dataclasses.field(default_factory=asyncio.Event)

    def saw(self, kind: str) -> None:
        self.messages += 1
        self.last_kind = kind
        self.last_at = time.monotonic()
        self.moved.set()


async def wait_for_result(done: asyncio.Event, player: asyncio.Future[None],
                          progress: Progress, *, quiet: float, planned: int,
                          reported: Callable[[], int], what: str) -> None:
    """Wait until ``done`` (the controller's result arrived), however long the board takes:
    the player ending first (the events all published, the controller still working through
    them on a slow machine) goes on waiting. Gives up with a :class:`DemoError` when the
    player failed (with its reason), or when nothing at all came on the table's topics for
    ``quiet`` seconds, saying what it waited for and how long."""
    started = time.monotonic()
    while not done.is_set():
        if player.done() and not player.cancelled() and player.exception() is not None:
            raise DemoError(f"the simulated table stopped: {player.exception()}")
        silent = time.monotonic() - progress.last_at
        if silent >= quiet:
            last = (f"the last, {progress.messages} messages in, a {progress.last_kind}"
                    if progress.messages else "none at all")
            raise DemoError(
                f"no result: waited {_seconds(time.monotonic() - started)} for the "
                f"controller's result on {what}, the last {_seconds(quiet)} with no message "
                f"on the table's "
                f"topics ({last}); {reported()} of the {planned} events were reported"
                + ("" if player.done() else ", the simulated table still playing"))
        progress.moved.clear()
        waiters = [asyncio.ensure_future(done.wait()),
                   asyncio.ensure_future(progress.moved.wait())]
        watched: set[asyncio.Future[Any]] = {*waiters}
        if not player.done():
            watched.add(player)
        try:
            await asyncio.wait(watched, timeout=quiet - silent,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()


async def run_demo(*, lang: str = "en", speed: float = 1.0, out: IO[str] = sys.stdout,
                   live: bool | None = None, board_file: Path | None = None,
                   revoke_trick: int | None = 6, timeout: float = 300.0,
                   direct: bool = False) -> int:
    """The demo: 0 when the controller's result came and was printed. ``timeout`` is how
    long the table may stay silent (no message on its topics) before the demo gives up,
    not a bound on the board: a slow machine takes longer and is waited for. ``direct``
    publishes the events as a bridge would, without the simulated table (said on the
    screen)."""
    record = load_board(board_file)
    plan = plan_board(record, revoke_trick=revoke_trick)
    # the controller has the deal file (below): the hands are known, nothing is read before
    # the auction (docs/sensing.md)
    # the players turn their cards on the spots (firmware_bridge/sim/players.py)
    events = _mark_scans(humanize(plan.events(scans=False), CAREFUL))
    assert record.deal is not None
    live = out.isatty() if live is None else live
    names = {"N": record.tags.get("North", ""), "E": record.tags.get("East", ""),
             "S": record.tags.get("South", ""), "W": record.tags.get("West", "")}
    view = TableView(lang=lang, hands={str(s): sorted(record.deal[s]) for s in Seat},
                     names=names, out=out, live=live)
    view.plan(plan)
    workdir = Path(tempfile.mkdtemp(prefix="bridge-table-demo-"))
    try:
        with Mosquitto(workdir / "broker", persistence=False) as broker:
            settings = BrokerSettings.from_url(broker.url)
            # the deals file of the session: the controller knows the hands from it
            engine = Engine(deals={record.board: DealInfo(
                record.board, record.dealer, record.vulnerability, record.deal)})
            daemon = ControllerDaemon(broker=settings, engine=engine,
                                      journal=Journal(workdir / "journal.sqlite", sync="normal"),
                                      status_interval=3600, info={"demo": True})
            stop = asyncio.Event()
            done = asyncio.Event()
            watching = asyncio.Event()
            progress = Progress()
            tasks = [asyncio.create_task(daemon.run(stop), name="controller"),
                     asyncio.create_task(_watch(settings, view, done, watching, progress),
                                         name="watch")]
            try:
                await _started(daemon.ready, "the controller", timeout)
                await _started(watching, "the demo's watcher on the broker", timeout)
                if direct:
                    view.note(view.t["direct"])
                    player = asyncio.create_task(_play_direct(settings, events, speed))
                else:
                    player = asyncio.create_task(
                        _play_through_table(settings, workdir, events, speed, view, lang,
                                            finished=stop))
                tasks.append(player)
                progress.saw("start")  # the silence is counted from the first event on
                await wait_for_result(done, player, progress, quiet=timeout,
                                      planned=len(events),
                                      reported=lambda: view.events_seen,
                                      what=wire.topic(TABLE, "result"))
                await asyncio.sleep(0.3)  # the last state and indicator
            finally:
                stop.set()
                # the controller and the player end on ``stop``; the watcher is cancelled
                await _end_tasks([tasks[1]], [tasks[0], *tasks[2:]])
                if daemon.journal is not None:
                    daemon.journal.close()
            if live:
                view.draw(force=True)
            print_end(view, _played_record(engine, record), out)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


async def _started(ready: asyncio.Event, what: str, timeout: float) -> None:
    """Wait for a part of the demo to be ready: a :class:`DemoError` saying which and how
    long it was waited for when it is not."""
    if not await wait_event(ready, timeout):
        raise DemoError(f"{what} did not start: waited {_seconds(timeout)}")


def _seconds(value: float) -> str:
    """``12 s``, ``0.3 s``: whole seconds, tenths below ten."""
    return f"{value:.0f} s" if value >= 10 else f"{value:.1f} s"


async def _end_tasks(cancel: Sequence[asyncio.Task[Any]], stopping: Sequence[asyncio.Task[Any]],
                     grace: float = 15.0) -> None:
    """End the demo's tasks for sure: ``cancel`` cancelled; ``stopping`` (the controller and
    the player, told by the stop event) given ``grace`` seconds, then cancelled too.

    A single ``cancel()`` is not enough on Python 3.11: a cancellation that arrives while
    ``asyncio.wait_for`` is finishing (the player's wait for the bridge's report, aiomqtt's
    disconnect) is swallowed, the task runs on and awaiting it never returns: the demo hung
    after the result about one run in six. The parts that can stop by themselves are told
    to (no cancel to lose); the rest are cancelled until done (``cancel_until_done``).
    """
    for task in cancel:
        with contextlib.suppress(Exception):
            await cancel_until_done(task)
    if stopping:
        await asyncio.wait(stopping, timeout=grace)  # asyncio.wait never swallows a cancel
    for task in stopping:
        with contextlib.suppress(Exception):
            await cancel_until_done(task)


async def _play_through_table(settings: BrokerSettings, workdir: Path,
                              events: list[dict[str, Any]], speed: float, view: TableView,
                              lang: str, finished: asyncio.Event | None = None) -> None:
    """The firmware bridge on the shipped ``sim.toml`` (``firmware_bridge.examples``) reading
    the simulated table (``firmware_bridge.sim.table.SimTable``). A package installed without
    its examples is a :class:`DemoError` naming the file, never a quiet fallback."""
    import io

    from firmware_bridge.bridge import Bridge
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.display import TerminalDisplay
    from firmware_bridge.examples import ExampleError, example
    from firmware_bridge.extras import install_hint
    from firmware_bridge.sim.table import SimTable

    try:
        sim_toml = example("sim.toml")
    except ExampleError as error:
        raise DemoError(f"the simulated table's config: {error}") from None
    async with SimTable.from_config(sim_toml, link_dir=workdir / "readers") as table:
        data = bridge_config_dict(sim_toml, broker_url=settings.url,
                                  spool=workdir / "spool.sqlite", lang=lang)
        try:  # gpiozero's mock pins light the simulated LEDs; without [pi], the indicator
            from gpiozero.pins.mock import MockFactory
            factory: Any = MockFactory()
        except ImportError:
            factory = None
            data.pop("gpio", None)  # no LEDs to light: the bridge needs no GPIO library
            view.note(view.t["no_leds"].format(hint=install_hint("pi")))
        config = config_from_dict(data, sim_toml.resolve())
        display = TerminalDisplay(config.display.cols, config.display.rows,
                                  stream=io.StringIO(), title=f"table {config.table.id}")
        bridge = Bridge(config, pin_factory=factory, display=display)
        stop = asyncio.Event()
        running = asyncio.create_task(bridge.run(stop), name="bridge")
        try:
            if not await table.wait_hosts(20):
                view.note(view.t["no_readers"])
            view.hardware = (factory, config.gpio, display) if factory is not None else None
            finished = finished or asyncio.Event()
            for event in events:
                if finished.is_set():
                    break
                await asyncio.sleep(_delay(event, speed))
                seen = view.events_seen
                report = await table.play([{k: v for k, v in event.items()
                                            if not k.startswith("_")}])
                for problem in report.skipped:
                    view.note(view.t["skipped"].format(what=problem))
                # one tag at a time, as hands do: the next waits until the bridge said this one
                deadline = time.monotonic() + 10
                while view.events_seen <= seen and time.monotonic() < deadline \
                        and not finished.is_set():
                    view.event_arrived.clear()
                    await wait_event(view.event_arrived, 1.0)
                if view.events_seen <= seen and not finished.is_set():
                    view.note(view.t["not_reported"].format(what=event_text(event, lang)))
            await finished.wait()  # keep the bridge (LEDs, display) until the end
        finally:
            stop.set()
            await asyncio.wait({running}, timeout=10)  # asyncio.wait never swallows a cancel
            with contextlib.suppress(Exception):
                await cancel_until_done(running)


def _played_record(engine: Engine, original: BoardRecord) -> BoardRecord | None:
    """The board as the controller recorded it, with the board file's event, site and
    players (the rest is what was played)."""
    record = engine.record(TABLE)
    if record is None:
        return None
    tags = {**original.tags, **{k: v for k, v in record.tags.items() if v}}
    return dataclasses.replace(record, tags=tags)


async def until_signal(demo: Coroutine[Any, Any, int]) -> int:
    """Run the demo; Ctrl-C or SIGTERM (a closed terminal, ``kill``) cancels it, so that it
    stops its broker and removes its folder on the way out, and the command exits 130."""
    task = asyncio.ensure_future(demo)
    loop = asyncio.get_running_loop()
    interrupted = False

    def interrupt() -> None:
        nonlocal interrupted
        interrupted = True
        task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, interrupt)
    try:
        result = await task
    except asyncio.CancelledError:
        if not interrupted:
            raise
        return 130
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
    return 130 if interrupted else result
