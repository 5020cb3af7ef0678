"""The night itself: the venue's broker, the services, a simulated table and its bridge for
every table of the movement, the movement played round by round, faults on request, and at
the end the ranking from ``bridge-table results``' records, checked against the boards as
played.

Everything a club's room has runs as its own process (``children.py``) with its own login
(``venue.py``): mosquitto, ``controller``, ``console``, ``broadcast`` (the relay),
``vugraph``, ``results`` and one ``bridge`` a table. The tables' readers are simulated in
this process (``firmware_bridge.sim``) on pseudo-terminals, and each bridge opens them as
``serial://`` readers, as a built table's bridge opens its USB readers.

The pace: each thing laid on a table is played once the table's bridge has published the
previous one (readers are separate serial lines: two things played at the same instant on
two readers have no order), after the players' own gap divided by ``speed`` (0: no gap).
A round starts when every table has the result of every board of the round before, as a
director calls the move.

The check at the end (``check.py``): the records ``results`` wrote must give every table's
result and the ranking that the same events give through one ``Engine``, or the night
found a fault (exit status 1).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import secrets
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import aiomqtt

from controller import wire
from controller.boards.deals import load_deals
from controller.broker.mosquitto import Mosquitto, free_port
from controller.broker.settings import resolve
from controller.clubnight.check import compare, expected_messages
from controller.clubnight.children import Child
from controller.clubnight.plan import (
    Players,
    TablePlay,
    boards_of,
    deals_pbn,
    humanized,
    random_deals,
    session_with_deals,
    sim_players,
    table_rounds,
)
from controller.clubnight.venue import Venue, join_venue, write_venue
from controller.laws.record import DealInfo
from controller.session import Session, load_session
from controller.session.export import read_published, scores_of
from controller.session.report import print_report, report
from firmware_bridge.extras import MissingExtra, needs_extra
from firmware_bridge.publisher import wait_event
from firmware_bridge.sim.buttons import ENV as BUTTONS_ENV
from firmware_bridge.sim.buttons import press_line
from firmware_bridge.sim.players import CAREFUL, PlayerHabits
from firmware_bridge.sim.table import DEFAULT_LAYOUT, SimError, SimTable
from firmware_bridge.tags import TagRegistry, sim_registry

__all__ = ["NightOptions", "NightError", "FAULT_KINDS", "DEFAULT_HABITS", "run_night", "Night"]

#: what ``--faults`` may kill
FAULT_KINDS = ("bridge", "controller", "broker", "relay")
#: seconds a killed program stays down before it is started again (systemd's RestartSec is
#: two; a faster night keeps the same order of events)
RESTART_AFTER = 0.5
#: the players' habits by default: the demo's (cards turned, ``make demo``), with a few
#: late slides (a collision on the antenna) and hesitations
DEFAULT_HABITS = replace(CAREFUL, late_slide_rate=0.1, hesitate_rate=0.1)
#: seconds without a fault after which an event its bridge did not publish is given up
UNPUBLISHED_AFTER = 20.0
#: seconds after a round's last event (and the last fault) by which every board of the round
#: has its result, or the night ends there and says which did not (exit status 1): a board
#: the controller cannot finish is a fault the night found, not a night that never ends
RESULTS_AFTER = 120.0


class RoundStuck(Exception):
    """A round's results did not all come (``RESULTS_AFTER``): the night found a fault."""


class NightError(Exception):
    """The night cannot be set up (a bad session, a work directory in use, a program that
    would not start): one line, exit status 2."""


@dataclass
class NightOptions:
    session: Path
    work: Path
    seed: int = 1
    #: the players' pace multiplied (1: real time; 0: as fast as the tables take it)
    speed: float = 0.0
    #: share of boards with an irregularity (a revoke, Law 64)
    revoke_rate: float = 0.0
    #: share of boards on which a player presses the table's director button
    director_rate: float = 0.0
    deals: Path | None = None
    #: programs killed at random moments (seeded) and started again
    faults: int = 0
    fault_kinds: tuple[str, ...] = FAULT_KINDS
    console_port: int = 0
    vugraph_port: int = 0
    #: after the night, keep everything up until Ctrl-C (a director training on the console)
    keep_open: bool = False
    #: the players' bidding and play (before their habits)
    players: Players = sim_players
    #: how they handle the cards (firmware_bridge/sim/players.py); None: laid once, slid
    #: off at once
    habits: PlayerHabits | None = None
    log_level: str = "WARNING"
    #: a broker-config directory of a broker that already runs, joined instead of starting one
    join: Path | None = None


@dataclass
class Tally:
    """What this program heard from the broker: each table's published events by what they
    say, and its latest result of each board."""

    events: dict[str, Counter[tuple[Any, ...]]] = field(default_factory=dict)
    #: each event heard, by its bridge's numbering (src, boot, seq): a bridge sends again
    #: what the controller has not acknowledged (after a reconnect, a controller restart),
    #: and an event heard twice must count once, or a later wait for the same card on the
    #: same spot (another board, a turn) ends before the bridge has published it
    heard: set[tuple[Any, Any, Any]] = field(default_factory=set)
    results: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    #: set when anything is heard, then replaced by a fresh one: an Event, not an
    #: asyncio.Condition, whose lock a cancelled waiter must take again (under Python
    #: 3.11, a night stopped by SIGTERM once waited for that lock for ever)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def notify(self) -> None:
        """Wake every wait on what was heard."""
        self.changed.set()
        self.changed = asyncio.Event()


def event_key(event: Mapping[str, Any]) -> tuple[Any, ...]:
    """What identifies a reader's event whoever stamps it (the bridge has its own seq, ts)."""
    if event.get("type") == "button":
        return ("button", event.get("seat"), event.get("button"), None, None, None)
    zone = event.get("zone")
    return (zone, None if zone == "board" else event.get("seat"), event.get("action"),
            event.get("card"), event.get("call"), event.get("board"))


class Night:
    """One club night; :func:`run_night` runs it."""

    def __init__(self, options: NightOptions) -> None:
        self.o = options
        self.work = options.work.resolve()
        self.rng = random.Random(options.seed)
        self.children: dict[str, Child] = {}
        self.bridges: dict[str, Child] = {}
        self.sims: dict[str, SimTable] = {}
        self.broker: Mosquitto | None = None
        self.tally = Tally()
        self.played: dict[tuple[str, int], TablePlay] = {}
        self.acked = 0
        #: events no bridge published (played on after UNPUBLISHED_AFTER seconds)
        self.unpublished = 0
        self.last_fault = 0.0
        #: each table's events played, by what they say
        self.sent: dict[str, Counter[tuple[Any, ...]]] = {}
        self.fault_at: list[tuple[int, str]] = []
        self.faults_done: list[str] = []
        self.session: Session | None = None
        self.venue: Venue | None = None
        self.deals: dict[int, DealInfo] = {}
        #: (table, board) -> the index of the event before which the director is called
        self.presses: dict[tuple[str, int], int] = {}
        #: director calls made (and the ones no bridge was there to take)
        self.director_calls = 0
        self.calls_missed = 0

    # -- set-up --------------------------------------------------------------------------

    def prepare(self) -> None:
        """Every file of the night in the work directory (NightError when it cannot)."""
        if self.work.exists() and any(self.work.iterdir()):
            raise NightError(f"{self.work}: not empty (a night's state is in it); give "
                             f"another --work, or remove it")
        if self.o.director_rate > 0:
            # the simulated director buttons are gpiozero's mock pins: without it every
            # press is lost ("no bridge took the director call") in a night that ends well
            try:
                with needs_extra("pi", "--director-rate (the tables' simulated buttons)"):
                    import gpiozero  # noqa: F401
            except MissingExtra as no_buttons:
                raise NightError(str(no_buttons)) from None
        self.work.mkdir(parents=True, exist_ok=True)
        original = load_session(self.o.session)
        boards = boards_of(original)
        source = self.o.deals or original.deals
        if source is not None and Path(source).is_file():
            deals, _ = load_deals(source, original.deals_first_board)
            missing = [b for b in boards if b not in deals or deals[b].deal is None]
            if missing:
                raise NightError(f"{source}: no deal for board(s) "
                                 f"{', '.join(map(str, missing[:10]))}")
            self.deals = {b: deals[b] for b in boards}
            comment = f"the deals of {source}"
        else:
            self.deals = random_deals(boards, random.Random(f"deals:{self.o.seed}"))
            comment = f"random deals, seed {self.o.seed} (bridge-table club-night)"
        (self.work / "boards.pbn").write_text(deals_pbn(self.deals, comment), encoding="utf-8")
        text = self.o.session.read_text(encoding="utf-8")
        (self.work / "session.toml").write_text(
            session_with_deals(text, self.work / "boards.pbn"), encoding="utf-8")
        self.session = load_session(self.work / "session.toml")
        registry = sim_registry(self.work / "tags.toml", boards=max(boards))
        (self.work / "tags.toml").write_text(registry.to_toml(), encoding="utf-8")
        tables = self.session.movement.tables
        self.venue = join_venue(self.o.join, tables) if self.o.join is not None else \
            write_venue(self.work / "broker", tables)
        for t in self.session.movement.tables:
            (self.work / "tables").mkdir(exist_ok=True)
            (self.work / "tables" / f"table-{t}.toml").write_text(self.table_config(t),
                                                                   encoding="utf-8")
        self.console_password = secrets.token_urlsafe(9)
        done = subprocess.run(
            [sys.executable, "-m", "controller.cli", "console", "passwd",
             str(self.work / "console-password"), "--name", "director", "--stdin"],
            input=self.console_password + "\n", capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise NightError(f"console passwd: {done.stderr.strip()}")
        self.plan_faults()

    def table_config(self, table: str) -> str:
        """Table ``table``'s file, as hw_configs/table-boards.toml with its serial readers
        on the simulated table's pseudo-terminals."""
        assert self.venue is not None
        links = self.work / "sim" / table
        lines = ["# a simulated table of bridge-table club-night", "[table]",
                 f'id = "{table}"', f'src = "table-{table}-pi"', 'language = "en"', "",
                 "[broker]", f'url = "{self.venue.url}"', 'root = "bridge"', "keepalive = 10",
                 "", "[registry]", f'files = ["{(self.work / "tags.toml").as_posix()}"]', "",
                 "[spool]", f'path = "{(self.work / "spool" / f"table-{table}.sqlite")}"', ""]
        for spec in DEFAULT_LAYOUT:
            antennas = ", ".join(
                f'"{a}" = {{ zone = "{zone}"' + (f', seat = "{seat}"' if seat else "") + " }"
                for a, (zone, seat) in spec.antennas.items())
            lines += ["[[readers]]", f'name = "{spec.name}"',
                      f'url = "serial://{(links / spec.name).as_posix()}"',
                      f'kind = "{spec.kind}"', f"antennas = {{ {antennas} }}", ""]
        # the table's director button on simulated pins, pressed through the bridge's
        # test-only hook (--director-rate, firmware_bridge/sim/buttons.py)
        lines += ["[gpio]", 'factory = "mock"', "", "[gpio.buttons]", "director = 5", "",
                  "[display]", 'type = "none"', ""]
        return "\n".join(lines)

    def plan_faults(self) -> None:
        """The moments (the n-th event the tables play) and the programs of ``--faults``,
        from the seed: spread over the night's middle, every kind in turn."""
        assert self.session is not None
        if not self.o.faults:
            return
        total = sum(len(bs) for _, tables in table_rounds(self.session)
                    for bs in tables.values()) * 110
        rng = random.Random(f"faults:{self.o.seed}")
        kinds = list(self.o.fault_kinds)
        rng.shuffle(kinds)
        moments = sorted(rng.randint(total // 10, total * 8 // 10)
                         for _ in range(self.o.faults))
        self.fault_at = [(m, kinds[i % len(kinds)]) for i, m in enumerate(moments)]

    # -- the programs --------------------------------------------------------------------

    def start_services(self) -> None:
        assert self.venue is not None and self.session is not None
        v, w = self.venue, self.work
        if v.port is not None:  # a broker of its own; else the one joined
            self.broker = Mosquitto(w / "broker" / "run", port=v.port, config=v.conf,
                                    end_with_parent=True)
            self.broker.start()
        session = str(w / "session.toml")
        level = ["--log-level", self.o.log_level]
        self.o.console_port = self.o.console_port or free_port()
        self.o.vugraph_port = self.o.vugraph_port or free_port()
        specs: dict[str, list[str]] = {
            "controller": ["controller", "--session", session, "--credentials",
                           str(v.credentials("controller")), "--identities", str(v.identities),
                           "--journal", str(w / "controller-journal.sqlite"), *level],
            "relay": ["broadcast", "--session", session, "--credentials",
                      str(v.credentials("broadcast")), "--store", str(w / "relay.sqlite"),
                      "--out", str(w / "live"), *level],
            "console": ["console", "--session", session, "--credentials",
                        str(v.credentials("director")), "--listen",
                        f"127.0.0.1:{self.o.console_port}", "--db", str(w / "console.sqlite"),
                        "--director-password-file", str(w / "console-password"),
                        "--src", v.console_src, *level],
            "vugraph": ["vugraph", "--credentials", str(v.credentials("public")), "--listen",
                        f"127.0.0.1:{self.o.vugraph_port}", *level],
            "results": ["results", "--session", session, "--credentials",
                        str(v.credentials("scorer")), "--until-complete", "--out",
                        str(w / "records"), "--json"],
        }
        for name, args in specs.items():
            child = Child(name, args, w / "logs" / f"{name}.log", cwd=w)
            child.start()
            self.children[name] = child
        (w / "buttons").mkdir(exist_ok=True)
        for t in self.session.movement.tables:
            os.mkfifo(self.buttons_fifo(t), 0o600)
            child = Child(f"bridge {t}", ["bridge", "--config",
                                          str(w / "tables" / f"table-{t}.toml"),
                                          "--credentials", str(v.credentials(f"table-{t}")),
                                          *level], w / "logs" / f"bridge-{t}.log",
                          env={BUTTONS_ENV: str(self.buttons_fifo(t))}, cwd=w)
            self.bridges[t] = child

    def check_alive(self) -> None:
        for child in [*self.children.values(), *self.bridges.values()]:
            if child.proc is not None and not child.alive and child.name != "results":
                raise NightError(f"{child.name} stopped (exit status {child.returncode}):\n"
                                 f"{child.tail()}")

    async def start_tables(self) -> None:
        assert self.session is not None
        registry = TagRegistry(sim_registry(self.work / "tags.toml",
                                            boards=max(self.deals)).entries())
        for t in self.session.movement.tables:
            sim = SimTable(t, DEFAULT_LAYOUT, registry=registry, link_dir=self.work / "sim" / t)
            await sim.start()
            self.sims[t] = sim
            self.bridges[t].start()
        for t, sim in self.sims.items():
            if not await sim.wait_hosts(120):
                self.check_alive()
                raise NightError(f"table {t}: its bridge did not open its readers in 120 s")

    def stop_all(self) -> None:
        """Every program stopped: ``results`` first (it writes what it has), the tables'
        bridges, the services, the broker last."""
        results = self.children.get("results")
        if results is not None:
            results.stop(signal.SIGTERM, 60)
        for child in self.bridges.values():
            child.stop()
        for name in ("console", "vugraph", "relay", "controller"):
            if name in self.children:
                self.children[name].stop()
        for sim in self.sims.values():
            sim.close()
        if self.broker is not None:
            self.broker.stop()

    # -- following the broker -------------------------------------------------------------

    async def follow(self) -> None:
        """Each table's events and results, as this program's own login reads them; again
        after the broker went away (its session is kept: nothing queued meanwhile is lost)."""
        assert self.venue is not None
        settings = resolve(credentials=self.venue.credentials("clubnight"), env={})
        while True:
            try:
                async with aiomqtt.Client(**settings.client_args(), identifier="clubnight",
                                          clean_session=False) as client:
                    await client.subscribe([(wire.topic("+", "event"), 1),
                                            (wire.topic("+", "result"), 1)])
                    async for msg in client.messages:
                        # a retained result may be a joined broker's of an earlier night
                        if not msg.retain:
                            await self.heard(str(msg.topic), msg.payload)
            except aiomqtt.MqttError:
                await asyncio.sleep(0.3)

    async def heard(self, topic: str, payload: Any) -> None:
        parts = topic.split("/")
        if len(parts) != 3 or not isinstance(payload, bytes | bytearray):
            return
        try:
            data = json.loads(payload)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        table, kind = parts[1], parts[2]
        if kind == "event":
            number = (data.get("src"), data.get("boot"), data.get("seq"))
            if number[2] is not None:
                if number in self.tally.heard:
                    return
                self.tally.heard.add(number)
            self.tally.events.setdefault(table, Counter())[event_key(data)] += 1
        elif kind == "result" and isinstance(data.get("board"), int):
            self.tally.results.setdefault(table, {})[data["board"]] = data
        self.tally.notify()

    async def until(self, done: Callable[[], bool], what: str, patience: float = 60.0,
                    give_up: float | None = None) -> bool:
        """Wait until ``done()`` (True), or ``give_up`` seconds (False); a line on standard
        error each ``patience`` seconds of waiting."""
        start = said = time.monotonic()
        while True:
            changed = self.tally.changed   # taken before the test: no change is missed
            if done():
                break
            # not asyncio.wait_for: on 3.11 it can turn a cancellation arriving with its
            # timeout into a TimeoutError, and the night would not stop (publisher.wait_event)
            await wait_event(changed, 1.0)
            now = time.monotonic()
            if give_up is not None and now - start >= give_up:
                return False
            if now - said >= patience:
                print(f"club-night: still waiting for {what}", file=sys.stderr, flush=True)
                said = now
        return True

    # -- playing ---------------------------------------------------------------------------

    def deal_plays(self) -> None:
        """What every table plays, from the seed (the same night again for the same seed)."""
        assert self.session is not None
        players = self.o.players if self.o.habits is None else \
            humanized(self.o.players, self.o.habits)
        for _, tables in table_rounds(self.session):
            for t, bs in tables.items():
                for b in bs:
                    rng = random.Random(f"play:{self.o.seed}:{t}:{b}")
                    revoke = rng.random() < self.o.revoke_rate
                    self.played[(t, b)] = players(t, self.deals[b], rng, revoke)
                    calls = random.Random(f"director:{self.o.seed}:{t}:{b}")
                    if calls.random() < self.o.director_rate:
                        self.presses[(t, b)] = calls.randrange(
                            1, max(2, len(self.played[(t, b)].events)))

    async def play_table(self, table: str, boards: Sequence[int]) -> None:
        """The table's boards, event by event. Lines on one reader keep their order on its
        serial line; before an event on another reader, everything laid so far must have
        been published by the table's bridge (a card laid on a card not yet slid off, a
        collision, is read only when the one under it goes: the same reader). So must a
        tag's removal before it is laid again (a card turned face down and back on its
        spot): a bridge's reader takes a tag gone and back within its debounce (0.15 s,
        firmware_bridge/readers/base.py) for a card nudged at the edge of the field and
        reports neither, while players take longer than that to turn a card; at
        ``--speed 0`` their gaps are gone, so the table waits for the bridge instead."""
        sim = self.sims[table]
        sent = self.sent.setdefault(table, Counter())
        pending: list[tuple[Any, ...]] = []
        #: the tags those events took off: (reader, antenna, uid)
        lifted: set[tuple[str, int, str] | None] = set()
        reader: str | None = None
        for b in boards:
            last_ts: float | None = None
            for index, event in enumerate(self.played[(table, b)].events):
                # no settling first: the event before may be a card laid on another, read
                # only once the next event takes the one under it away
                if self.presses.get((table, b)) == index:
                    if await self.call_director(table):
                        key = ("button", None, "director", None, None, None)
                        sent[key] += 1
                        pending.append(key)
                ts = event.get("ts")
                if self.o.speed > 0 and isinstance(ts, int | float):
                    if last_ts is not None and ts > last_ts:
                        await asyncio.sleep((ts - last_ts) / self.o.speed)
                    last_ts = float(ts)
                zone, seat = str(event.get("zone")), event.get("seat")
                place = sim.where.get((zone, None if zone == "board" or seat is None
                                       else str(seat)))
                uid = self.uid_of(sim, event)
                tag = None if place is None or uid is None else (*place, uid)
                back = event.get("action") == "present" and tag in lifted
                if place is None or place[0] != reader or back:
                    await self.settle(table, pending)
                    lifted.clear()
                    reader = place[0] if place is not None else None
                sim.send(event)
                if event.get("action") == "removed":
                    lifted.add(tag)
                key = event_key(event)
                sent[key] += 1
                pending.append(key)
        await self.settle(table, pending)

    def buttons_fifo(self, table: str) -> Path:
        """The named pipe table ``table``'s bridge reads button presses from
        (firmware_bridge/sim/buttons.py)."""
        return self.work / "buttons" / f"table-{table}"

    async def call_director(self, table: str) -> bool:
        """A player presses the table's director button (through its bridge's simulated
        pins); False when no bridge reads the presses now (killed a moment ago)."""
        line = press_line("director").encode()
        for _ in range(40):
            try:
                fd = os.open(self.buttons_fifo(table), os.O_WRONLY | os.O_NONBLOCK)
            except OSError:   # ENXIO: no reader yet, or it is opening it again
                await asyncio.sleep(0.05)
                continue
            try:
                os.write(fd, line)
            finally:
                os.close(fd)
            self.director_calls += 1
            return True
        self.calls_missed += 1
        print(f"club-night: table {table}: no bridge took the director call",
              file=sys.stderr, flush=True)
        return False

    @staticmethod
    def uid_of(sim: SimTable, event: Mapping[str, Any]) -> str | None:
        """The uid of the tag an event moves; None if the table cannot say."""
        try:
            return sim.locate(dict(event))[2]
        except SimError:
            return None

    async def settle(self, table: str, pending: list[tuple[Any, ...]]) -> None:
        """Wait until ``table``'s bridge has published every event of ``pending`` (then
        emptied); a fault due then is made."""
        if not pending:
            return
        sent = self.sent[table]
        done = self.published(table, sent, set(pending))
        while not await self.until(done, f"table {table}'s bridge to publish {pending[-1]}",
                                   give_up=UNPUBLISHED_AFTER):
            if time.monotonic() - self.last_fault > UNPUBLISHED_AFTER \
                    and self.bridges[table].alive:
                # a thing the readers did not report (a missed read of a players' model):
                # the table plays on, as players would
                print(f"club-night: table {table}: its bridge published nothing for "
                      f"{pending[-1]} in {UNPUBLISHED_AFTER:g} s; playing on",
                      file=sys.stderr, flush=True)
                self.unpublished += 1
                break
        self.acked += len(pending)
        pending.clear()
        await self.fault_due(table)

    def published(self, table: str, sent: Counter[tuple[Any, ...]],
                  keys: set[tuple[Any, ...]]) -> Callable[[], bool]:
        """Whether ``table``'s bridge has published each of ``keys`` as often as played."""
        return lambda: all(self.tally.events.get(table, Counter())[k] >= sent[k]
                           for k in keys)

    def resulted(self, wanted: Sequence[tuple[str, int]]) -> Callable[[], bool]:
        """Whether every table and board of ``wanted`` has its result."""
        return lambda: all(b in self.tally.results.get(t, {}) for t, b in wanted)

    async def fault_due(self, table: str) -> None:
        while self.fault_at and self.acked >= self.fault_at[0][0]:
            _, kind = self.fault_at.pop(0)
            await self.fault(kind, table)

    async def fault(self, kind: str, table: str) -> None:
        """Kill one program (SIGKILL: a crash, a pulled plug) and start it again."""
        self.last_fault = time.monotonic()
        if kind == "broker":
            assert self.broker is not None
            self.broker.kill()
            await asyncio.sleep(RESTART_AFTER)
            self.broker.start()
            what = "the broker"
        elif kind == "bridge":
            child = self.bridges[table]
            sim = self.sims[table]
            child.kill()
            for fw in sim.firmwares.values():
                fw.host_seen.clear()
            await asyncio.sleep(RESTART_AFTER)
            child.start()
            if not await sim.wait_hosts(120):
                raise NightError(f"table {table}: its bridge did not come back")
            what = f"table {table}'s bridge"
        else:
            child = self.children["controller" if kind == "controller" else "relay"]
            child.kill()
            await asyncio.sleep(RESTART_AFTER)
            child.start()
            what = f"the {child.name}"
        self.faults_done.append(kind)
        self.last_fault = time.monotonic()
        print(f"fault: killed {what} (after {self.acked} events), started it again",
              flush=True)

    async def play_night(self) -> None:
        assert self.session is not None
        started = time.monotonic()
        for number, tables in table_rounds(self.session):
            await asyncio.gather(*(self.play_table(t, bs) for t, bs in tables.items()))
            wanted = [(t, b) for t, bs in tables.items() for b in bs]
            while not await self.until(self.resulted(wanted), f"round {number}'s results",
                                       give_up=RESULTS_AFTER):
                if time.monotonic() - self.last_fault >= RESULTS_AFTER:
                    self.say_stuck(number, wanted)
                    raise RoundStuck(f"round {number}")
            print(f"round {number}: {len(wanted)} board(s) played at {len(tables)} table(s) "
                  f"({time.monotonic() - started:.0f} s)", flush=True)
            self.check_alive()

    def say_stuck(self, number: int, wanted: Sequence[tuple[str, int]]) -> None:
        """On standard error: each board of round ``number`` without a result, and what its
        table played that this program did not hear its bridge publish (where to look)."""
        for table, board in wanted:
            if board in self.tally.results.get(table, {}):
                continue
            heard = self.tally.events.get(table, Counter())
            missing = self.sent.get(table, Counter()) - heard
            print(f"club-night: round {number}: table {table} has no result for board {board} "
                  f"{RESULTS_AFTER:g} s after its last event; played and not heard from its "
                  f"bridge: {', '.join(map(str, missing)) or 'nothing'}",
                  file=sys.stderr, flush=True)

    # -- the end ---------------------------------------------------------------------------

    def finish(self) -> int:
        """The ranking from the records ``results`` wrote, checked; the exit status."""
        assert self.session is not None
        results = self.children["results"]
        with contextlib.suppress(subprocess.TimeoutExpired):
            if results.proc is not None:
                results.proc.wait(60)
        if results.alive:
            print("club-night: results did not see every board's result; stopped it",
                  file=sys.stderr)
            results.stop(signal.SIGTERM, 60)
        messages = self.work / "records" / f"{self.session.id}-messages.jsonl"
        if not messages.is_file():
            print(f"club-night: results wrote no records ({results.tail()})", file=sys.stderr)
            return 1
        live = read_published(messages.read_text(encoding="utf-8").splitlines(True))
        want = read_published(expected_messages(self.session, self.deals, self.played))
        data = report(self.session, scores_of(live))
        (self.work / "ranking.json").write_text(json.dumps(data, indent=1) + "\n",
                                                encoding="utf-8")
        print(f"\n{self.session.event}: {len(self.played)} board(s) played")
        print_report({**data, "boards": []})
        print(f"\nrecords: {self.work / 'records'}")
        problems = compare(live, want)
        if not problems and data != report(self.session, scores_of(want)):
            problems.append("the ranking differs from the one the boards played give")
        for line in problems[:20]:
            print(f"club-night: {line}", file=sys.stderr)
        if problems:
            return 1
        if self.director_calls or self.calls_missed:
            print(f"director calls: {self.director_calls} (the console lists them)"
                  + (f"; {self.calls_missed} no bridge took" if self.calls_missed else ""))
        print(f"checked: every one of the {len(want)} results as the tables played it"
              + (f", through {len(self.faults_done)} fault(s)" if self.faults_done else ""))
        return 0



async def run_night(night: Night) -> int:
    """The night from its set-up to its ranking; every program stopped at the end, or on
    cancellation (Ctrl-C)."""
    follower: asyncio.Task[None] | None = None
    try:
        night.prepare()
        night.deal_plays()
        night.start_services()
        follower = asyncio.create_task(night.follow())
        assert night.venue is not None and night.session is not None
        print(f"broker: {night.venue.url} ({night.venue.directory})")
        print(f"console: http://127.0.0.1:{night.o.console_port}/ (login director, password "
              f"{night.console_password})")
        print(f"vugraph: http://127.0.0.1:{night.o.vugraph_port}/")
        # no wait for the controller: what a bridge publishes before the controller has
        # subscribed is sent again when it comes online (firmware_bridge.publisher; a
        # table's login reads the controller's status, controller.venue.config)
        await night.start_tables()
        night.check_alive()
        print(f"tables: {len(night.sims)} bridge(s) reading their simulated readers",
              flush=True)
        try:
            await night.play_night()
        except RoundStuck as stuck:
            print(f"club-night: the night stops at {stuck}: a board without its result is a "
                  f"fault the night found", file=sys.stderr, flush=True)
            night.finish()
            return 1
        status = night.finish()
        if night.o.keep_open:
            print("everything stays up until Ctrl-C", flush=True)
            await asyncio.Event().wait()
        return status
    finally:
        if follower is not None:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        night.stop_all()

