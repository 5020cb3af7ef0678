"""The simulated table: one virtual reader firmware per reader of a table config, and a driver
that turns wire-contract event dicts into the protocol lines real readers would send.

    async with SimTable.from_config("hw_configs/sim.toml") as table:
        ...                          # a bridge in this process opens sim://1/north etc.
        await table.play(events, rate=0)

A bridge in this process finds the firmware through the ``sim`` reader backend
(``sim://TABLE/READER`` -> :func:`get_sim_table`); one in another process opens the printed pty
paths (or the stable symlinks in ``link_dir``) as ``serial://`` readers.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import shutil
import tempfile
import weakref
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Literal, Protocol

from controller.tomlfile import read_toml
from firmware_bridge.sim.firmware import Collision, VirtualFirmware
from firmware_bridge.tags import TagRegistry, sim_registry

__all__ = [
    "SimTable", "SimReaderSpec", "SimError", "PlayReport", "Fault", "get_sim_table",
    "DEFAULT_LAYOUT", "read_events", "parse_event_line", "sim_tables", "Physics",
    "PASS_ROUNDS",
]

Fault = Literal["garbage", "bad_crc", "drop", "reset", "reset_mid_line", "unplug", "replug"]
Event = Mapping[str, Any]


class SimError(Exception):
    """The simulated table cannot do what it was asked (bad config, event it cannot play)."""


@dataclass(frozen=True)
class SimReaderSpec:
    """One simulated reader: its name, and what each antenna is: antenna -> (zone, seat)."""

    name: str
    antennas: Mapping[int, tuple[str, str | None]]
    #: "tap": a tag is in the field only while held to the reader, so a ``present`` event is
    #: played as put-on-then-taken-off (nothing stays in the reader's inventory)
    kind: str = "inventory"
    #: tags one antenna of this reader resolves at once (None: the table's ``tag_limit``);
    #: more only for readers built to inventory a pile (docs/sensing.md)
    tag_limit: int | None = None


@dataclass(frozen=True)
class Physics:
    """What one antenna can read (docs/sensing.md): ``tag_limit`` tags at once, each missing
    a polling round with probability ``miss_rate`` (drawn from ``seed``); a tag beyond the
    limit gives ``collision`` (an ``ERR`` line, or silence)."""

    tag_limit: int = 1
    miss_rate: float = 0.0
    seed: int = 0
    collision: Collision = "error"


#: polling rounds a card slid across an antenna stays over it (0.3 s at the 100 ms period)
PASS_ROUNDS: Final = 3

DEFAULT_LAYOUT: Final[tuple[SimReaderSpec, ...]] = (
    SimReaderSpec("north", {0: ("spot", "N")}),
    SimReaderSpec("east", {0: ("spot", "E")}),
    SimReaderSpec("south", {0: ("spot", "S")}),
    SimReaderSpec("west", {0: ("spot", "W")}),
    SimReaderSpec("bidbox", {0: ("bid", "N"), 1: ("bid", "E"), 2: ("bid", "S"), 3: ("bid", "W")}),
    SimReaderSpec("board", {0: ("board", None)}, kind="tap"),
)


class Mover(Protocol):
    """Where a tag goes when it leaves an antenna, and which antennas read it there
    (firmware_bridge/sim/placement.py: a table built from a geometry)."""

    def moved(self, table: SimTable, event: Event, fw: VirtualFirmware, antenna: int,
              uid: str) -> None: ...

    def planned(self, table: SimTable, events: Sequence[Event]) -> None:
        """The events about to be played (where cards will lie before they are played:
        dummy's hand, Law 41D)."""


@dataclass(frozen=True)
class PlayReport:
    played: int
    skipped: tuple[str, ...] = ()  # one line per event not played, and why


_TABLES: dict[str, SimTable] = {}


def sim_tables() -> Mapping[str, SimTable]:
    """The running simulated tables of this process, by table id."""
    return _TABLES


def get_sim_table(table_id: str, *, create: bool = True) -> SimTable:
    """The process's simulated table ``table_id``; with ``create``, a default-layout one
    (four play spots, four call spots, a board reader, the simulator's tag set) is made
    when none is registered. It registers itself; start it (or let the sim backend start it)."""
    table = _TABLES.get(table_id)
    if table is None:
        if not create:
            raise SimError(f"no simulated table {table_id!r} in this process")
        table = SimTable(table_id)
        _TABLES[table_id] = table
    return table


class SimTable:
    """Virtual reader firmware for each reader of one table, driven by event dicts.

    ``link_dir``: where each reader's stable symlink lives (``<link_dir>/<reader>``); a private
    temporary directory (removed on close) if not given. ``heartbeat_interval``: the firmware's
    idle heartbeat (the protocol asks for one at least every 2 s; None: none, for tests of
    silence). ``physics``: what each antenna reads (one tag at a time by default).
    """

    def __init__(self, table_id: str = "1", layout: Sequence[SimReaderSpec] = DEFAULT_LAYOUT, *,
                 registry: TagRegistry | None = None, link_dir: Path | None = None,
                 heartbeat_interval: float | None = 2.0,
                 physics: Physics = Physics(), placement: Mover | None = None) -> None:
        self.table_id = table_id
        self.physics = physics
        #: told of every tag moved, so that the antennas near where it lands read it
        self.placement = placement
        self.layout = {spec.name: spec for spec in layout}
        self._registry = registry
        self._own_link_dir = link_dir is None
        self.link_dir = link_dir
        self.heartbeat_interval = heartbeat_interval
        self.firmwares: dict[str, VirtualFirmware] = {}
        self.where: dict[tuple[str, str | None], tuple[str, int]] = {}
        for spec in layout:
            for antenna, (zone, seat) in spec.antennas.items():
                self.where.setdefault((zone, seat), (spec.name, antenna))
        #: readers whose host is in this process (delivery receipts work): reader name -> True
        self.local_hosts: set[str] = set()
        #: call card uid -> when it was last put down (the copies of a call are used in turn)
        self._call_used: dict[str, int] = {}
        self._ticks = itertools.count(1)
        self._lock = asyncio.Lock()
        self._finalizer: weakref.finalize[Any, Any] | None = None

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_config(cls, path: str | Path, *, registry: TagRegistry | None = None,
                    link_dir: Path | None = None, physics: Physics = Physics()) -> SimTable:
        """A table for a bridge config (the shipped sim.toml): ``[table] id``, the registry files,
        and every ``[[readers]]`` entry with a ``sim://`` URL (its antennas map)."""
        path = Path(path)
        data = read_toml(path, SimError, "a TOML table config")
        try:
            table_id = str(data.get("table", {}).get("id", "1"))
            layout: list[SimReaderSpec] = []
            for entry in data.get("readers", []):
                url = str(entry.get("url", ""))
                if not url.startswith("sim://"):
                    continue
                url_table, _, name = url[len("sim://"):].partition("/")
                if url_table != table_id or not name:
                    raise SimError(f"{path}: reader URL {url!r} is not sim://{table_id}/NAME")
                antennas: dict[int, tuple[str, str | None]] = {}
                for key, value in dict(entry.get("antennas", {})).items():
                    try:
                        antennas[int(key)] = (str(value["zone"]), value.get("seat"))
                    except (KeyError, ValueError, TypeError, AttributeError):
                        raise SimError(f"{path}: reader {name}: bad antenna {key!r}") from None
                kind = str(entry.get("kind", "inventory"))
                layout.append(SimReaderSpec(name, antennas or {0: ("spot", None)}, kind))
            files = [path.parent / str(f) for f in data.get("registry", {}).get("files", [])]
        except (AttributeError, TypeError) as error:  # a section or a key of the wrong type
            raise SimError(f"{path}: not a table config ({error}); docs/config.md has "
                           "every key") from None
        if registry is None and files:
            from firmware_bridge.tags import RegistryError
            try:
                registry = TagRegistry.load(files)
            except RegistryError as error:
                raise SimError(str(error)) from error
        return cls(table_id, layout, registry=registry, link_dir=link_dir, physics=physics)

    @property
    def registry(self) -> TagRegistry:
        if self._registry is None:
            self._registry = TagRegistry(sim_registry(Path("tags-sim.toml")).entries())
        return self._registry

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> SimTable:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    async def start(self) -> None:
        """Start every reader of the layout and register the table in this process."""
        other = _TABLES.get(self.table_id)
        if other is not None and other is not self:
            raise SimError(f"simulated table {self.table_id!r} already runs in this process")
        _TABLES[self.table_id] = self
        for name in self.layout:
            await self.start_reader(name)

    async def start_reader(self, name: str) -> VirtualFirmware:
        """The firmware of reader ``name``, started (created on demand: a one-antenna reader)."""
        async with self._lock:
            fw = self.firmwares.get(name)
            if fw is None:
                if name not in self.layout:
                    self.layout[name] = SimReaderSpec(name, {0: ("spot", None)})
                spec = self.layout[name]
                if self.link_dir is None:
                    self.link_dir = Path(tempfile.mkdtemp(prefix=f"bridge-sim-{self.table_id}-"))
                    # Removed on close(); this also covers a table never closed (interpreter exit).
                    self._finalizer = weakref.finalize(
                        self, shutil.rmtree, str(self.link_dir), True)
                self.link_dir.mkdir(parents=True, exist_ok=True)
                physics = self.physics
                fw = VirtualFirmware(_reader_id(name), max(spec.antennas, default=0) + 1,
                                     link=self.link_dir / name,
                                     heartbeat_interval=self.heartbeat_interval,
                                     tag_limit=spec.tag_limit or physics.tag_limit,
                                     miss_rate=physics.miss_rate,
                                     seed=f"{physics.seed}:{name}",
                                     collision=physics.collision)
                self.firmwares[name] = fw
            if not fw.running:
                await fw.start()
            return fw

    def peak_tags(self) -> int:
        """The most tags that lay on one antenna of this table at any moment."""
        return max((fw.peak_tags for fw in self.firmwares.values()), default=0)

    def reads(self) -> dict[str, int]:
        """What the antennas' physics did: ``peak_tags``, ``collisions``, ``late_reads``
        (read after missed rounds), ``lost_reads`` (passed across and never read)."""
        fws = self.firmwares.values()
        return {"peak_tags": self.peak_tags(),
                "collisions": sum(fw.collisions for fw in fws),
                "late_reads": sum(fw.late_reads for fw in fws),
                "lost_reads": sum(fw.lost_reads for fw in fws)}

    def close(self) -> None:
        for fw in self.firmwares.values():
            fw.close()
        if _TABLES.get(self.table_id) is self:
            del _TABLES[self.table_id]
        if self._own_link_dir and self.link_dir is not None:
            if self._finalizer is not None:
                self._finalizer()
            self.link_dir = None

    def paths(self) -> dict[str, tuple[str, Path]]:
        """reader -> (pty slave path, stable symlink) of every running reader."""
        return {name: (fw.slave_path or "", fw.link or Path())
                for name, fw in self.firmwares.items() if fw.running}

    async def wait_hosts(self, timeout: float = 10.0, readers: Iterable[str] | None = None) -> bool:
        """Wait until a host has opened every reader (it asks for an inventory on link-up)."""
        names = list(self.firmwares) if readers is None else list(readers)
        try:
            async with asyncio.timeout(timeout):
                for name in names:
                    await self.firmwares[name].host_seen.wait()
        except TimeoutError:
            return False
        return True

    # ------------------------------------------------------------------ playing events

    def locate(self, event: Event) -> tuple[VirtualFirmware, int, str]:
        """(firmware, antenna, uid) that an event's protocol line goes through; SimError if the
        table cannot play it."""
        if event.get("type", "tag") != "tag":
            raise SimError(f"not a tag event: type {event.get('type')!r}")
        zone = event.get("zone")
        seat = event.get("seat") if zone != "board" else None
        place = self.where.get((str(zone), seat))
        if place is None:
            raise SimError(f"no simulated reader for zone {zone!r} seat {seat!r}")
        name, antenna = place
        fw = self.firmwares.get(name)
        if fw is None:
            raise SimError(f"reader {name!r} is not running")
        # An unplugged reader's tags still move; it reports them by inventory when it is back.
        uid = self._uid(event, fw, antenna, seat)
        return fw, antenna, uid

    def _uid(self, event: Event, fw: VirtualFirmware, antenna: int, seat: str | None) -> str:
        from firmware_bridge.protocol import normalise_uid

        registry = self.registry
        uid: str | None = None
        if event.get("card") is not None:
            uid = registry.uid_for_card(str(event.get("deck")), str(event["card"]))
        elif event.get("call") is not None:
            call = str(event["call"])
            on_antenna = fw.present.get(antenna, [])
            box = seat if registry.uid_for_call(call, seat) is not None else None
            copies = []
            copy = 0
            while (candidate := registry.uid_for_call(call, box, copy)) is not None:
                copies.append(candidate)
                copy += 1
            if event.get("action") == "removed":
                # the copy lying there (the latest one put down and read: a copy laid on
                # it that the reader could not read yet is not the one taken off)
                lying = [u for u in on_antenna if u in copies]
                unread = fw.unread.get(antenna, set())
                read = [u for u in lying if u not in unread] or lying
                uid = read[-1] if read else (copies[0] if copies else None)
            else:
                # a call slid off the spot lies in the call row, not in the box: the seat's
                # next such call is another copy (the one put down longest ago, if all were)
                free = sorted((u for u in copies if u not in on_antenna),
                              key=lambda u: self._call_used.get(u, -1))
                uid = free[0] if free else None
                if uid is None and copies:
                    raise SimError(f"bidding box {box} has no {call} card left on the table "
                                   f"({len(copies)} copies all down)")
        elif event.get("board") is not None:
            try:
                uid = registry.uid_for_board(int(event["board"]))
            except (TypeError, ValueError):
                raise SimError(f"bad board number {event['board']!r}") from None
        if uid is None:
            # Unknown tags (and things the registry lacks) go out with the event's own UID.
            given = event.get("uid")
            uid = normalise_uid(given) if isinstance(given, str) else None
            if uid is None:
                raise SimError(f"no tag for {_what(event)} in the registry, and no usable uid "
                               f"({given!r}) in the event")
        return uid

    def send(self, event: Event, *, hardware_time: bool = False,
             dwell: int | None = None) -> tuple[VirtualFirmware, int | None]:
        """Write one event's protocol line now; returns (firmware, the seq of the last line
        it caused, None when the reader read nothing: a collision, a missed pass).
        ``dwell``: the polling rounds a ``present`` tag stays over the antenna (a card slid
        across it); None: it lies there."""
        fw, antenna, uid = self.locate(event)
        sent = self._line(event, fw, antenna, uid, hardware_time, dwell)
        if self.placement is not None:
            self.placement.moved(self, event, fw, antenna, uid)
        return fw, sent

    def _line(self, event: Event, fw: VirtualFirmware, antenna: int, uid: str,
              hardware_time: bool, dwell: int | None) -> int | None:
        ts = event.get("ts") if hardware_time else None
        hw_time = float(ts) if isinstance(ts, int | float) else None
        if event.get("action") == "removed":
            return fw.lift(antenna, uid, hw_time=hw_time)
        if event.get("action") == "present":
            if event.get("call") is not None:
                self._call_used[uid] = next(self._ticks)
            spec = next((s for s in self.layout.values() if self.firmwares.get(s.name) is fw),
                        None)
            tap = spec is not None and spec.kind == "tap"
            seq = fw.place(antenna, uid, hw_time=hw_time, dwell=PASS_ROUNDS if tap else dwell)
            if tap:
                lifted = fw.lift(antenna, uid, hw_time=hw_time)
                seq = lifted if lifted is not None else seq
            return seq
        raise SimError(f"bad action {event.get('action')!r}")

    async def play(
        self,
        events: Iterable[Event],
        *,
        rate: float = 0.0,
        speed: float | None = None,
        hardware_time: bool = False,
        faults: Mapping[int, tuple[str, Fault]] | None = None,
        on_button: Callable[[Event], Awaitable[None] | None] | None = None,
        strict: bool = False,
        delivery_timeout: float = 5.0,
    ) -> PlayReport:
        """Play events in order.

        Pace: ``speed`` (a multiplier of the gaps between the events' ``ts``: 1 = real time,
        10 = ten times faster) if given, else ``rate`` events per second; 0 = as fast as possible.
        As fast as possible still keeps order across readers: when the reading host is in this
        process, each line waits for the host to have applied the previous one.
        ``hardware_time``: the lines carry the events' ``ts`` as the reader's clock, so the
        bridge's events keep the file's times. ``faults``: event index -> (reader, fault),
        injected just before that event. Button events go to ``on_button`` (GPIO is simulated
        on the bridge side), or are skipped. An event the table cannot play is skipped and
        reported (``strict``: SimError instead).
        """
        played = 0
        skipped: list[str] = []
        last_ts: float | None = None
        events = list(events)
        if self.placement is not None:
            self.placement.planned(self, events)
        for index, event in enumerate(events):
            dropped: str | None = None
            if faults and index in faults:
                reader, fault = faults[index]
                await self.inject(reader, fault)
                dropped = reader if fault == "drop" else None
            ts = event.get("ts")
            delay = 0.0
            if speed is not None and speed > 0 and isinstance(ts, int | float):
                if last_ts is not None:
                    delay = max(0.0, (float(ts) - last_ts) / speed)
                last_ts = float(ts)
            elif rate > 0 and index > 0:
                delay = 1.0 / rate
            if delay:
                await asyncio.sleep(delay)
            if event.get("type") == "button":
                if on_button is None:
                    skipped.append(f"event {index}: button {event.get('button')!r} "
                                   "(no button handler)")
                    continue
                result = on_button(event)
                if result is not None:
                    await result
                played += 1
                continue
            try:
                fw, sent = self.send(event, hardware_time=hardware_time,
                                     dwell=PASS_ROUNDS if _passed(event, events, index)
                                     else None)
            except SimError as error:
                if strict:
                    raise SimError(f"event {index}: {error}") from None
                skipped.append(f"event {index}: {error}")
                continue
            played += 1
            name = next(n for n, f in self.firmwares.items() if f is fw)
            if sent is None:
                # nothing on the line (a tag the antenna could not read): nothing to wait for
                await asyncio.sleep(0)
                continue
            seq = sent
            if dropped == name:
                # This very line was lost: a heartbeat shows the host the gap, the host asks
                # for an inventory, and the inventory brings the event.
                fw.inventory_answered.clear()
                seq = fw.heartbeat()
                if name in self.local_hosts:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(delivery_timeout):
                            await fw.inventory_answered.wait()
                    seq = fw.last_inventory_seq if fw.last_inventory_seq is not None else seq
            if name in self.local_hosts and fw.running:
                if not await fw.wait_delivered(seq, delivery_timeout):
                    skipped.append(f"event {index}: reader {name} did not confirm delivery")
            else:
                await asyncio.sleep(0)
        return PlayReport(played, tuple(skipped))

    async def inject(self, reader: str, fault: Fault) -> None:
        """A fault on one reader's line: ``garbage`` (binary noise and a junk line), ``bad_crc``
        (a heartbeat with a broken CRC), ``drop`` (the next line is lost), ``reset`` (the
        firmware reboots), ``reset_mid_line`` (half a line, then a reboot), ``unplug``,
        ``replug``."""
        fw = self.firmwares.get(reader)
        if fw is None:
            raise SimError(f"no simulated reader {reader!r}")
        if fault == "garbage":
            fw.write_raw(b"\x00\xff\x13\x37 line noise \xfe\r\n$$ not a frame\r\n")
        elif fault == "bad_crc":
            fw.send_bad_crc_heartbeat()
        elif fault == "drop":
            fw.drop_next(1)
        elif fault == "reset":
            fw.boot("watchdog")
        elif fault == "reset_mid_line":
            fw.write_raw(b"$" + fw.reader_id.encode() + b" 0 1")
            fw.boot("watchdog")
        elif fault == "unplug":
            await fw.unplug()
        elif fault == "replug":
            await fw.replug()
        else:
            raise SimError(f"unknown fault {fault!r}")


def _reader_id(name: str) -> str:
    """A protocol-safe reader id from a config reader name."""
    cleaned = "".join(ch if ch.isalnum() or ch in "_.-" else "-" for ch in name)[:16]
    return cleaned or "reader"


def _passed(event: Event, events: Sequence[Event], index: int) -> bool:
    """Whether ``event`` lays a tag that the next event takes off the same place: a card
    slid across the antenna (the shoe-style hand read), over it for a few rounds only."""
    if event.get("action") != "present" or index + 1 >= len(events):
        return False
    after = events[index + 1]
    return after.get("action") == "removed" and all(
        after.get(k) == event.get(k) for k in ("type", "zone", "seat", "card", "deck", "call"))


def _what(event: Event) -> str:
    if event.get("card") is not None:
        return f"card {event.get('card')} of deck {event.get('deck')}"
    if event.get("call") is not None:
        return f"call {event.get('call')}"
    if event.get("board") is not None:
        return f"board {event.get('board')}"
    return "an unknown tag"


def read_events(path: str | Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Events of a JSONL file (each line the payload, or ``{"topic": ..., "payload": ...}``);
    lines that are not JSON objects are reported, not fatal."""
    events: list[dict[str, Any]] = []
    problems: list[str] = []
    with open(path, encoding="utf-8", errors="replace") as fp:
        for number, line in enumerate(fp, start=1):
            event, problem = parse_event_line(line, f"{path}:{number}")
            if problem is not None:
                problems.append(problem)
            elif event is not None:
                events.append(event)
    return events, problems


def parse_event_line(line: str, where: str) -> tuple[dict[str, Any] | None, str | None]:
    """One JSONL line: (the event, None), (None, the problem), or (None, None) for a blank
    line or another topic's message in a recorded stream."""
    if not line.strip():
        return None, None
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as error:
        return None, f"{where}: not JSON: {error.msg}"
    except RecursionError:
        return None, f"{where}: JSON nested too deeply"
    if isinstance(obj, dict) and isinstance(obj.get("payload"), dict):
        topic = str(obj.get("topic", ""))
        if topic and not topic.endswith("/event"):
            return None, None
        obj = obj["payload"]
    if not isinstance(obj, dict):
        return None, f"{where}: not a JSON object"
    return obj, None
