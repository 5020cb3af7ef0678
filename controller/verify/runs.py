"""The runs of ``bridge-table verify`` (controller/verify/cli.py): on the station's own
readers, on a broker's events where a bridge runs them, or on the simulated station with
planted faults; the deal files, the station's config, and where verdicts go (the terminal,
the broker).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import random
import signal
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, TextIO

from controller import wire
from controller.boards.deals import DealsError, read_deals
from controller.broker.login import LoginWatch
from controller.broker.settings import DEFAULT_URL, BrokerSettings, BrokerSettingsError, resolve
from controller.laws.cards import FULL_DECK, Deal, Seat
from controller.laws.dealcheck import DuplicateBoardDetector
from controller.tomlfile import read_toml
from controller.verify.report import (
    VerifyReport,
    progress_bar,
    report_json,
    result_json,
    summary_text,
    verdict_line,
    write_report,
)
from controller.verify.station import (
    BoardResult,
    EventFollower,
    Layout,
    Station,
    StationFollower,
    StationReader,
    TagLookup,
    VerifyError,
)
from firmware_bridge.taginfo import NULL_REGISTRY

log = logging.getLogger(__name__)

__all__ = ["DealSet", "MqttReporter", "StationConfig", "VerifyOptions", "demo_deals",
           "follow_events", "load_deals", "run_live", "run_on_events", "run_simulated",
           "run_station", "station_config"]

DEMO_FILE = "verify-demo.pbn"


@dataclass(frozen=True, kw_only=True)
class VerifyOptions:
    """What a run is asked to do (``bridge-table verify --help`` says each, and the
    defaults)."""
    deals: str | None
    first_board: int | None
    config: str
    report: str | None
    broker: str | None
    simulate: bool
    boards: int
    layout: str | None
    order: str | None
    events: str | None
    station: str | None
    root: str
    no_faults: bool
    quiet: bool


@dataclass(frozen=True)
class DealSet:
    path: str
    deals: Mapping[int, Deal]
    broken: frozenset[int]
    problems: tuple[str, ...]


def load_deals(path: str | Path, first_board: int | None = None) -> DealSet:
    """A deal file by extension: .pbn (controller.formats.pbn), .dup/.bri/.dge (dup.py).
    Problems in the file are listed, and boards the file holds twice are named."""
    p = Path(path)
    if not p.is_file():
        raise VerifyError(f"{p}: no such deal file")
    if p.suffix.lower() not in (".pbn", ".dup", ".bri", ".dge"):
        raise VerifyError(f"{p.name}: deal files are .pbn, .dup, .bri or .dge")
    try:
        read = read_deals(p, first_board)
    except DealsError as e:
        raise VerifyError(str(e)) from None
    problems = list(read.problems)
    deals = {n: info.deal for n, info in read.deals.items() if info.deal is not None}
    broken = read.broken
    for n, d in sorted(deals.items()):
        if not d.is_complete:
            problems.append(f"board {n}: the deal is not four hands of 13 "
                            f"({'/'.join(str(len(d[s])) for s in Seat)})")
    seen = DuplicateBoardDetector()
    for n, d in sorted(deals.items()):
        earlier = seen.observe(n, d)
        if earlier is not None:
            problems.append(f"board {n}: the same deal as board {earlier}")
    if not deals and not problems:
        problems.append("no deals in the file")
    return DealSet(str(p), deals, frozenset(broken), tuple(problems))


def demo_deals(boards: int) -> DealSet:
    """The bundled demo set; boards beyond it are dealt deterministically (seeded by number)."""
    ref = resources.files("controller") / "data" / DEMO_FILE
    with resources.as_file(ref) as path:
        base = load_deals(path)
    deals = {n: d for n, d in base.deals.items() if n <= boards}
    for n in range(1, boards + 1):
        if n not in deals:
            cards = list(FULL_DECK)
            random.Random(n).shuffle(cards)
            deals[n] = Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})
    return DealSet(base.path, deals, frozenset(), base.problems)


def load_registry(files: Sequence[Path]) -> tuple[TagLookup, str | None]:
    """Engineer A's TagRegistry over the config's files; a warning when it is unavailable."""
    if not files:
        return NULL_REGISTRY, "no tag registry files in the config: every tag is unknown"
    from firmware_bridge.tags import RegistryError, TagRegistry
    try:
        return TagRegistry.load(list(files)), None
    except RegistryError as e:
        raise VerifyError(str(e)) from None


@dataclass(frozen=True)
class StationConfig:
    station_id: str
    root: str
    broker_url: str | None
    layout: Layout
    order: tuple[Seat, ...]
    readers: tuple[tuple[str, str, str | None, dict[str, Any],
                         dict[str, tuple[str, str | None]]], ...]
    registry_files: tuple[Path, ...]
    #: the [broker] section's login (credentials file, CA, client certificate), if any
    broker: BrokerSettings | None = None


def broker_settings(url: str | BrokerSettings) -> BrokerSettings:
    """A broker URL with the login from the environment or a credentials file
    (``controller.broker.settings``), as every command of the project reads it."""
    if isinstance(url, BrokerSettings):
        return url
    try:
        return resolve(url)
    except BrokerSettingsError as e:
        raise VerifyError(f"not a usable broker: {e}") from None


def station_config(data: Mapping[str, Any], path: Path) -> StationConfig:
    """Engineer B's table schema (validated by firmware_bridge.config) + ``[station]``."""
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.errors import ConfigError
    data = dict(data)
    station = dict(data.pop("station", {}) or {})
    has_broker = "broker" in data
    try:
        config = config_from_dict(data, path)
    except ConfigError as e:
        raise VerifyError(str(e)) from None
    layout_text = str(station.pop("layout", "pockets"))
    if layout_text not in ("pockets", "sequential"):
        raise VerifyError(f"{path}: station.layout must be 'pockets' or 'sequential'")
    layout: Layout = "pockets" if layout_text == "pockets" else "sequential"
    try:
        order = tuple(Seat.parse(s) for s in station.pop("order", ["N", "E", "S", "W"]))
    except (ValueError, AttributeError) as e:
        raise VerifyError(f"{path}: station.order: {e}") from None
    if station:
        raise VerifyError(f"{path}: station: unknown keys {', '.join(sorted(station))}")
    readers = tuple(
        (r.name, r.url, r.kind, dict(r.options),
         {k: (a.zone, a.seat) for k, a in r.antennas.items()}) for r in config.readers)
    zones = {z for r in readers for z, _ in r[4].values()}
    if "pocket" not in zones:
        raise VerifyError(f"{path}: no reader antenna has zone = \"pocket\"")
    return StationConfig(config.table.id, config.broker.root,
                         config.broker.url if has_broker else None, layout, order, readers,
                         config.registry.files,
                         config.broker.settings() if has_broker else None)


class MqttReporter:
    """Publishes each verdict (QoS 1) and, at the end, the report (QoS 1, retained) on
    ``{root}/{station}/verify``."""

    def __init__(self, url: str | BrokerSettings, root: str, station: str) -> None:
        self.settings = broker_settings(url)
        self.host, self.port = self.settings.host, self.settings.port
        self.tls = self.settings.tls
        self.topic = wire.topic(station, "verify", root=root)
        self.station = station
        self.error: str | None = None
        self._client: Any = None

    async def __aenter__(self) -> MqttReporter:
        import aiomqtt
        client = aiomqtt.Client(**self.settings.client_args(),
                                identifier=f"{self.station}-verify")
        try:
            await client.__aenter__()
        except aiomqtt.MqttError as e:
            # a login the broker refuses is the station's configuration to fix (exit 2,
            # as every client of the project, controller/broker/login.py); a broker that
            # cannot be reached is not: verifying does not need it, go on and say so once
            why = LoginWatch(log, self.settings.url, self.settings.username).refusal(e)
            if why is not None:
                login = repr(self.settings.username) if self.settings.username else \
                    "no user name"
                raise VerifyError(
                    f"{self.settings.url} refused the login of verify ({login}): {why}. "
                    f"Check the credentials ($BRIDGE_TABLE_MQTT_CREDENTIALS or the station "
                    f"file's [broker]) against the broker's password file") from None
            self.error = f"broker {self.host}:{self.port} unreachable ({e}): not publishing"
            return self
        self._client = client
        return self

    async def __aexit__(self, *exc: Any) -> None:
        if self._client is not None:
            client, self._client = self._client, None
            with contextlib.suppress(Exception):
                await client.__aexit__(*exc)

    async def _publish(self, payload: dict[str, Any], retain: bool) -> None:
        if self._client is None:
            return
        import aiomqtt
        try:
            await self._client.publish(self.topic, json.dumps(payload), qos=1, retain=retain)
        except aiomqtt.MqttError as e:
            self.error = f"publishing on {self.topic} failed ({e}): not publishing any more"
            await self.__aexit__(None, None, None)

    async def board(self, result: BoardResult) -> None:
        await self._publish({"v": wire.VERSION, "type": "board", "station": self.station}
                            | result_json(result), retain=False)

    async def report(self, report: VerifyReport) -> None:
        await self._publish(report_json(report), retain=True)


class _Console:
    """Verdict lines on stdout, the progress bar on stderr (redrawn in place on a terminal)."""

    def __init__(self, total: int, out: TextIO, err: TextIO, quiet: bool) -> None:
        self.total, self.out, self.err, self.quiet = total, out, err, quiet
        self.done = self.faulty = 0
        self.tty = err.isatty()

    def result(self, r: BoardResult) -> None:
        self.done += 1
        self.faulty += not r.ok
        if not self.quiet:
            self._clear()
            print(verdict_line(r), file=self.out, flush=True)
        if self.tty:
            print("\r" + progress_bar(self.done, self.total, self.faulty), end="", file=self.err,
                  flush=True)

    def note(self, text: str) -> None:
        self._clear()
        print(f"note: {text}", file=self.err, flush=True)

    def _clear(self) -> None:
        if self.tty:
            print("\r\x1b[K", end="", file=self.err)

    def end(self) -> None:
        if self.tty:
            print(file=self.err)
        else:
            print(progress_bar(self.done, self.total, self.faulty), file=self.err)


async def run_station(readers: Sequence[StationReader], registry: TagLookup,
                      follower: StationFollower, *, deals: Mapping[int, Deal],
                      console: _Console | None = None, mqtt: MqttReporter | None = None,
                      until_done: bool = True, driver: Any = None) -> Station:
    """Run a station until every board of ``deals`` has a verdict (``until_done``), the
    ``driver`` coroutine factory returns, or SIGINT/SIGTERM."""
    callbacks: list[Any] = []
    if console is not None:
        callbacks.append(console.result)
    if mqtt is not None:
        callbacks.append(mqtt.board)
    station: Station

    def check_done(_: BoardResult) -> None:
        if until_done and set(deals) <= {r.board for r in follower.results}:
            station.stop()

    callbacks.append(check_done)
    station = Station(readers, registry, follower, on_result=callbacks,
                      on_note=console.note if console is not None else None)
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, station.stop)
        except (NotImplementedError, RuntimeError):
            pass
    runner = asyncio.create_task(station.run())
    try:
        if driver is not None:
            await driver(station)
            station.stop()
        await runner
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.remove_signal_handler(sig)
            except (NotImplementedError, RuntimeError):
                pass
        if not runner.done():
            station.stop()
            await runner
    return station


async def run_simulated(options: VerifyOptions, out: TextIO, err: TextIO) -> int:
    """``--simulate``: the simulated station with the planted faults; 0 when every one
    was found and every board verified."""
    from firmware_bridge.sim.station import (
        FAULT_KINDS,
        SimStation,
        SimTags,
        demo_faults,
        plan_boards,
    )
    if options.boards < 1:
        raise VerifyError("--boards must be at least 1")
    dealset = load_deals(options.deals, options.first_board) if options.deals else \
        demo_deals(options.boards)
    deals = {n: d for n, d in sorted(dealset.deals.items())[:options.boards]}
    faults = [] if options.no_faults else demo_faults(sorted(deals))
    tags = SimTags()
    plans = plan_boards(deals, faults, tags)
    layout: Layout = "sequential" if options.layout == "sequential" else "pockets"
    sim = SimStation(layout=layout, station_id="station-sim",
                     broker_url=options.broker or DEFAULT_URL)
    console = _Console(len(deals), out, err, options.quiet)
    follower = StationFollower(deals, layout=layout, tap=sim.feed)
    async with sim:
        readers = [StationReader(r, a) for r, a in sim.open_readers()]
        mqtt = MqttReporter(options.broker, "bridge", sim.station_id) if options.broker else None

        async def drive(station: Station) -> None:
            late = await sim.run(plans, station)
            if late:
                console.note(f"{late} boards got no verdict in time")

        async def go() -> Station:
            return await run_station(readers, tags, follower, deals=deals, console=console,
                                     mqtt=mqtt, until_done=False, driver=drive)

        if mqtt is not None:
            async with mqtt:
                if mqtt.error:
                    print(f"warning: {mqtt.error}", file=err)
                station = await go()
                report = _report(station, "station-sim", dealset, deals)
                await mqtt.report(report)
        else:
            station = await go()
            report = _report(station, "station-sim", dealset, deals)
    console.end()
    print(summary_text(report), file=out)
    if options.report:
        for path in write_report(report, options.report):
            print(f"report: {path}", file=out)
    by_board = {r.board: r for r in report.results}
    missed = [f for f in faults if f.board not in by_board or FAULT_KINDS[f.kind] not in
              {k.value for k in by_board[f.board].verdict.kinds}]
    planted = {f.board for f in faults}
    clean = [r.board for r in report.results if not r.ok and r.board not in planted]
    if missed or clean:
        print(f"simulation: planted faults missed: {missed}; unexpected faulty boards: {clean}",
              file=out)
        return 1
    print(f"simulation: {len(faults)} planted faults, every one found "
          f"({', '.join(sorted({f.kind for f in faults})) or 'none'})", file=out)
    # as on a real station: a board of the set that got no verdict fails the run
    unverified = report.not_verified()
    if unverified:
        print(f"simulation: boards not verified: {unverified}", file=out)
        return 1
    return 0


def _report(station: Station, station_id: str, dealset: DealSet,
            deals: Mapping[int, Deal]) -> VerifyReport:
    return VerifyReport(station_id, Path(dealset.path).name, tuple(station.follower.results),
                        tuple(sorted(set(deals) | set(dealset.broken))), dealset.problems,
                        dict(station.notes) | {n: 1 for n in station.follower.notes})


def _required_deals(options: VerifyOptions, err: TextIO, missing: str) -> DealSet:
    """The deal file the command needs; its problems reported, at least one sound deal."""
    if not options.deals:
        raise VerifyError(missing)
    dealset = load_deals(options.deals, options.first_board)
    for problem in dealset.problems:
        print(f"deal file: {problem}", file=err)
    if not dealset.deals:
        raise VerifyError(f"{options.deals}: no usable deal in the file")
    return dealset


async def run_live(options: VerifyOptions, out: TextIO, err: TextIO) -> int:
    """The station's own readers, boards followed until each has a verdict or Ctrl-C."""
    from firmware_bridge.readers import ReaderError, open_reader
    dealset = _required_deals(options, err, "--deals FILE is needed (or --simulate)")
    path = Path(options.config)
    cfg = station_config(read_toml(path, VerifyError), path.resolve())
    registry, warning = load_registry(cfg.registry_files)
    if warning:
        print(f"warning: {warning}", file=err)
    try:
        readers = [StationReader(open_reader(name, url, kind=kind, **settings), ants)
                   for name, url, kind, settings, ants in cfg.readers]
    except ReaderError as e:
        raise VerifyError(str(e)) from None
    tap = any(r.reader.kind == "tap" for r in readers
              if any(z == "pocket" for z, _ in r.antennas.values()))
    layout: Layout = cfg.layout if options.layout is None else (
        "sequential" if options.layout == "sequential" else "pockets")
    follower = StationFollower(dealset.deals, broken=dealset.broken,
                               layout=layout, order=cfg.order, tap=tap)
    console = _Console(len(dealset.deals), out, err, options.quiet)
    broker: str | BrokerSettings | None = options.broker or cfg.broker or cfg.broker_url
    print(f"station {cfg.station_id}: {len(dealset.deals)} boards in {Path(dealset.path).name}; "
          "put a board on the board reader, then its pockets (Ctrl-C to stop)", file=err)
    if broker:
        mqtt = MqttReporter(broker, cfg.root, cfg.station_id)
        async with mqtt:
            if mqtt.error:
                print(f"warning: {mqtt.error}", file=err)
            station = await run_station(readers, registry, follower, deals=dealset.deals,
                                        console=console, mqtt=mqtt)
            report = _report(station, cfg.station_id, dealset, dealset.deals)
            await mqtt.report(report)
    else:
        station = await run_station(readers, registry, follower, deals=dealset.deals,
                                    console=console)
        report = _report(station, cfg.station_id, dealset, dealset.deals)
    return _finish(report, console, options, out)


def _finish(report: VerifyReport, console: _Console, options: VerifyOptions,
            out: TextIO) -> int:
    """The summary and the report files after a run; the exit code (1: a board not
    verified or faulty)."""
    console.end()
    print(summary_text(report), file=out)
    if options.report:
        for p in write_report(report, options.report):
            print(f"report: {p}", file=out)
    return 1 if report.faulty or report.not_verified() else 0


async def follow_events(url: str | BrokerSettings, topic: str, events: EventFollower,
                        stop: asyncio.Event, ready: asyncio.Event | None = None,
                        client: Any = None) -> None:
    """Feed ``events`` from ``topic`` on the broker at ``url`` until ``stop`` is set; on
    ``client`` (an open aiomqtt client: the reporter's) when given, so that the command
    holds one connection (a broker from broker-config binds a client id to its user)."""
    import aiomqtt
    settings = broker_settings(url)

    async def follow(client: Any) -> None:
        await client.subscribe(topic, qos=1)
        if ready is not None:
            ready.set()

        async def pump() -> None:
            async for message in client.messages:
                payload = message.payload
                await events.message(payload if isinstance(payload, bytes | str) else b"")

        task = asyncio.create_task(pump())
        stopper = asyncio.create_task(stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        for t in (task, stopper):
            t.cancel()
        await asyncio.gather(task, stopper, return_exceptions=True)

    try:
        if client is not None:
            await follow(client)
            return
        async with aiomqtt.Client(**settings.client_args()) as own:
            await follow(own)
    except aiomqtt.MqttError as e:
        raise VerifyError(f"broker {settings.url}: {e}") from None


async def run_on_events(options: VerifyOptions, out: TextIO, err: TextIO,
                        ready: asyncio.Event | None = None) -> int:
    """``--events``: the station's events as its bridge publishes them on a broker."""
    if not options.events:
        raise VerifyError("--events URL is needed")
    events_url = options.events
    dealset = _required_deals(options, err, "--deals FILE is needed")
    station_id, root, layout, order = options.station, options.root, options.layout, None
    path = Path(options.config)
    if path.is_file():
        cfg = station_config(read_toml(path, VerifyError), path.resolve())
        station_id = station_id or cfg.station_id
        layout = layout or cfg.layout
        order = cfg.order
    if options.order:
        try:
            order = tuple(Seat.parse(c) for c in options.order.replace(",", ""))
        except ValueError as e:
            raise VerifyError(f"--order: {e}") from None
    station_id = station_id or "station-1"
    follower = StationFollower(dealset.deals, broken=dealset.broken,
                               layout="sequential" if layout == "sequential" else "pockets",
                               order=order or tuple(Seat))
    console = _Console(len(dealset.deals), out, err, options.quiet)
    stop = asyncio.Event()

    def check_done(_: BoardResult) -> None:
        if set(dealset.deals) <= {r.board for r in follower.results}:
            stop.set()

    mqtt = MqttReporter(options.broker or events_url, root, station_id)
    async with mqtt:
        if mqtt.error:
            print(f"warning: {mqtt.error}", file=err)
        events = EventFollower(follower, on_result=[console.result, mqtt.board, check_done])
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop.set)
        topic = wire.topic(station_id, "event", root=root)
        print(f"station {station_id}: following {topic} on {events_url} for "
              f"{len(dealset.deals)} boards (Ctrl-C to stop)", file=err)
        try:
            # one connection: the reporter's, when it is on the same broker
            await follow_events(events_url, topic, events, stop, ready,
                                client=None if options.broker else mqtt._client)  # noqa: SLF001
        finally:
            for sig in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError):
                    loop.remove_signal_handler(sig)
        for result in follower.flush():
            console.result(result)
            await mqtt.board(result)
        notes = {n: 1 for n in follower.notes}
        if events.ignored:
            notes[f"{events.ignored} messages ignored (not station tags, or malformed)"] = 1
        if events.duplicates:
            notes[f"{events.duplicates} messages delivered twice, applied once"] = 1
        report = VerifyReport(station_id, Path(dealset.path).name, tuple(follower.results),
                              tuple(sorted(set(dealset.deals) | set(dealset.broken))),
                              dealset.problems, notes)
        await mqtt.report(report)
    return _finish(report, console, options, out)


