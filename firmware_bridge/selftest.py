"""``bridge-table selftest``: the commissioning test of a built table.

It walks a technician through every antenna of the table's config (lay one card, lift it, a
few times; then lay two), every button, every LED and the display, and writes a report (text and
JSON) of what this table can be trusted to read:

* per antenna: how many cards laid were read, how long the read took, drop-outs while a card
  lay still, whether the card's removal was seen, the firmware's own counters (``STAT``:
  rounds, and rounds a card lying there answered or missed), what two cards at once gave -
  both read (a pile-capable antenna), one read (the other hidden), or a collision/silence (an
  antenna for one card at a time) - and, for the board reader, a full wallet; every antenna
  of every reader is watched meanwhile, so a card read by the wrong antenna is a wiring fault
  that names both; a reader whose port is missing is said at once;
* a card in each row and on dummy's area, which no antenna may read;
* per button: the press arrived on its pin; per LED and the display: the technician saw it.

Each antenna's verdict says what to check or change when it fails (docs/hardware), with
thresholds from the pace of play (``Settings``: a card slid across a spot lies over it three
rounds of 100 ms).

Nothing is assumed about the readers: the report says what they did. The technician is
:class:`ConsoleTechnician` (prompts on a terminal); :class:`SimTechnician` and
:class:`FieldTechnician` are scripted ones for the simulated table (``--scripted``, on the
virtual firmwares of ``firmware_bridge/sim``) and for a board of emulated chips
(``firmware_bridge/sim/chips.py`` behind ``firmware_bridge/sim/mcu.py``).

Times measured with a console technician run from the prompt, so they include the
technician's hand; with a scripted one they are the reader's own.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import io
import itertools
import json
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from controller.laws import SEAT_NAMES
from firmware_bridge.config import BridgeConfig, ReaderConfig
from firmware_bridge.errors import BridgeError
from firmware_bridge.protocol import STATS_HEALTH
from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader
from firmware_bridge.readers.base import ReaderSynced

if TYPE_CHECKING:
    from firmware_bridge.sim.faults import SimFaults

__all__ = ["Spot", "Technician", "ConsoleTechnician", "SimTechnician", "FieldTechnician",
           "SelfTest", "Settings", "Report", "AntennaResult", "CheckResult", "run_selftest",
           "spots", "write_report"]


@dataclass(frozen=True)
class Spot:
    """One antenna of the config: where the technician lays cards."""

    reader: str
    antenna: str
    zone: str
    seat: str | None
    tap: bool  # a tap reader: a card is read while held to it, then taken away

    @property
    def label(self) -> str:
        where = f"{self.seat} {self.zone}" if self.seat else self.zone
        return f"{where} (reader {self.reader}, antenna {self.antenna})"


#: how the verdicts that fail begin (Report.failed, the summary)
FAILING = ("NOT", "UNRELIABLE", "MISWIRED")


@dataclass
class AntennaResult:
    reader: str
    antenna: str
    zone: str
    seat: str | None
    laid: int = 0
    read: int = 0
    read_ms: list[float] = field(default_factory=list)
    dropouts: int = 0
    lifted: int = 0
    removal_seen: int = 0
    two_cards: str = "not tried"
    #: the board reader: what a board's wallet laid on it with its four hands inside gave
    full_wallet: str = "not tried"
    errors: list[str] = field(default_factory=list)
    #: the firmware's own counters over this antenna's test (``STAT``, docs/serial-protocol.md):
    #: polling rounds, and rounds in which a tag on its list did / did not answer (None: the
    #: reader has no counters)
    rounds: int | None = None
    answered_rounds: int | None = None
    missed_rounds: int | None = None
    #: other antennas that read this spot's cards (a wiring fault), as "E spot (east/0)"
    read_by: list[str] = field(default_factory=list)
    #: "" or why no card was laid (the reader not connected)
    not_connected: str = ""
    verdict: str = ""
    #: what the technician checks or changes (docs/hardware), for a verdict that fails
    advice: str = ""

    @property
    def misses(self) -> int:
        return self.laid - self.read

    @property
    def miss_rate(self) -> float | None:
        """Of the polling rounds in which a card lay read on the antenna, the share in which
        it did not answer (None: no counters, or no card lay there)."""
        if self.answered_rounds is None or self.missed_rounds is None:
            return None
        total = self.answered_rounds + self.missed_rounds
        return self.missed_rounds / total if total else None


@dataclass
class CheckResult:
    what: str
    ok: bool
    detail: str = ""


@dataclass
class Report:
    table: str
    config: str
    technician: str
    started: str
    finished: str = ""
    interrupted: bool = False
    antennas: list[AntennaResult] = field(default_factory=list)
    #: places that no antenna may read (the rows, dummy's area): a card laid there, read or not
    silent: list[CheckResult] = field(default_factory=list)
    buttons: list[CheckResult] = field(default_factory=list)
    leds: list[CheckResult] = field(default_factory=list)
    display: list[CheckResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for antenna, result in zip(data["antennas"], self.antennas, strict=True):
            antenna["misses"] = result.misses
            antenna["miss_rate"] = result.miss_rate
        return data

    def text(self) -> str:
        lines = [f"Self-test of table {self.table} ({self.config})",
                 f"technician: {self.technician}; started {self.started}, "
                 f"finished {self.finished or '-'}"
                 + ("; INTERRUPTED: the results below are partial" if self.interrupted else ""),
                 "", "Antennas"]
        for a in self.antennas:
            lines.append(f"  {_where(a.seat, a.zone):<10} {a.reader}/{a.antenna}: {a.verdict}")
            if a.advice:
                lines.append(f"    what to do: {a.advice}")
            if a.not_connected:
                continue
            times = (f"read in {min(a.read_ms):.1f}-{max(a.read_ms):.1f} ms"
                     if a.read_ms else "no read time")
            lines.append(f"    {a.read} of {a.laid} cards read ({a.misses} missed), {times}, "
                         f"{a.dropouts} drop-outs, removal seen {a.removal_seen} of "
                         f"{a.lifted}; two cards at once: {a.two_cards}"
                         + (f"; a full wallet: {a.full_wallet}"
                            if a.full_wallet != "not tried" else ""))
            if a.rounds is not None:
                rate = a.miss_rate
                lines.append(f"    firmware: {a.rounds} polling rounds, a card lying there "
                             f"answered {a.answered_rounds} and missed {a.missed_rounds}"
                             + ("" if rate is None else f" ({rate:.0%} missed)"))
            lines += [f"    error: {e}" for e in a.errors]
        for title, checks in (("Rows and dummy's area (nothing may read them)", self.silent),
                              ("Buttons", self.buttons), ("LEDs", self.leds),
                              ("Display", self.display)):
            lines += ["", title]
            if not checks:
                lines.append("  none configured")
            lines += [f"  {'ok  ' if c.ok else 'FAIL'} {c.what}" + (f": {c.detail}"
                                                                  if c.detail else "")
                      for c in checks]
        if self.problems:
            lines += ["", "Problems"] + [f"  {p}" for p in self.problems]
        lines += ["", "What this table can be trusted to read"] + \
            [f"  {line}" for line in self.trusted()]
        return "\n".join(lines) + "\n"

    def trusted(self) -> list[str]:
        """The summary: which antennas read a card alone, which read two at once, which not."""
        groups: dict[str, list[str]] = {}
        for a in self.antennas:
            if a.verdict.startswith(FAILING):
                key = "not to be trusted (see above)"
            elif "pile-capable" in a.verdict:
                key = "one card, and two cards lying together"
            else:
                key = "one card at a time (never a pile)"
            groups.setdefault(key, []).append(f"{_where(a.seat, a.zone)} ({a.reader}/{a.antenna})")
        out = [f"{key}: {', '.join(places)}" for key, places in groups.items()]
        if self.interrupted:
            out.append("the test was interrupted: antennas not listed were not tested")
        return out or ["nothing was tested"]

    def failed(self) -> bool:
        """An antenna not working, unreliable or miswired, a row read, or a button, LED or
        display that failed."""
        return any(a.verdict.startswith(FAILING) for a in self.antennas) or \
            any(not c.ok for c in self.silent + self.buttons + self.leds + self.display)


def _where(seat: str | None, zone: str) -> str:
    return f"{seat} {zone}" if seat else zone


@dataclass(frozen=True)
class Settings:
    #: lay-and-lift cycles per antenna (the misses are counted over these)
    repeats: int = 3
    #: seconds to wait for a read (or a removal) before counting it missed
    timeout: float = 10.0
    #: seconds a read card is left lying, watched for drop-outs
    hold: float = 1.0
    #: seconds to watch two cards lying together
    settle: float = 2.0
    #: seconds to wait for a button press
    press_timeout: float = 20.0
    #: seconds to wait for a reader to come up before calling it not connected
    connect_timeout: float = 3.0
    #: the readers' scan period, ms (docs/sensing.md: one polling round of a reader)
    period_ms: int = 100
    #: rounds a card slid across a spot lies over its antenna (docs/sensing.md)
    pass_rounds: int = 3
    #: the most polling rounds a card lying still may go unanswered: above it, a card slid
    #: across in ``pass_rounds`` rounds goes unread more than once in a thousand passes
    max_miss_rate: float = 0.1

    @property
    def max_read_ms(self) -> int:
        """A read later than this misses a card slid across the spot at the pace of play."""
        return self.pass_rounds * self.period_ms


# ---------------------------------------------------------------------------------- technicians


class Technician(abc.ABC):
    """Who lays the cards and presses the buttons. ``lay`` returns when the cards lie there
    (a console technician says so; a scripted one has put them there)."""

    name = "?"
    #: where a terminal display of the table draws (None: standard output)
    display_stream: TextIO | None = None
    #: the read times are the reader's own (a scripted technician lays a card at once);
    #: a person's include the hand, so no threshold is put on them
    timed = False

    @abc.abstractmethod
    def say(self, text: str) -> None:
        """Tell the technician something."""

    @abc.abstractmethod
    async def lay(self, spot: Spot, count: int) -> None: ...

    @abc.abstractmethod
    async def lift(self, spot: Spot) -> None: ...

    @abc.abstractmethod
    async def lay_silent(self, area: str) -> None:
        """One card in ``area`` (a row, dummy's area: no antenna may read it)."""

    @abc.abstractmethod
    async def lift_silent(self, area: str) -> None: ...

    @abc.abstractmethod
    async def lay_wallet(self, spot: Spot) -> None:
        """A board's wallet, its four hands inside, on the board reader a moment."""

    @abc.abstractmethod
    async def press(self, label: str, button: Any) -> None: ...

    @abc.abstractmethod
    async def confirm(self, question: str, shown: Callable[[], bool]) -> bool:
        """Does the technician see it? (``shown``: what the software drove, for a scripted
        technician, who has no eyes)."""


class ConsoleTechnician(Technician):
    """A person at the table, answering on a terminal."""

    name = "console"

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin if stdin is not None else sys.stdin
        self.stdout = stdout if stdout is not None else sys.stdout

    def say(self, text: str) -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    async def _line(self, prompt: str) -> str:
        self.stdout.write(prompt)
        self.stdout.flush()
        loop = asyncio.get_running_loop()
        got: asyncio.Future[str] = loop.create_future()

        def readable() -> None:
            if not got.done():
                got.set_result(self.stdin.readline())

        try:
            loop.add_reader(self.stdin.fileno(), readable)
        except (OSError, ValueError, io.UnsupportedOperation, PermissionError):
            line = self.stdin.readline()   # a file: it does not block
        else:
            try:
                line = await got
            finally:
                loop.remove_reader(self.stdin.fileno())
        if not line:
            raise EOFError("no more answers on standard input")
        return line.strip()

    async def lay(self, spot: Spot, count: int) -> None:
        if spot.tap:
            self.say(f"Hold one card to the {spot.label}, then take it away.")
        elif count == 1:
            self.say(f"Lay one card on the {spot.label}.")
        else:
            await self._line(f"Lay {count} cards on top of each other on the {spot.label}, "
                             "then press Enter. ")

    async def lift(self, spot: Spot) -> None:
        if not spot.tap:
            self.say(f"Lift the cards from the {spot.label}.")

    async def lay_silent(self, area: str) -> None:
        await self._line(f"Lay one card in the {area} (no antenna may read it), then press "
                         "Enter. ")

    async def lift_silent(self, area: str) -> None:
        self.say(f"Lift the card from the {area}.")

    async def lay_wallet(self, spot: Spot) -> None:
        await self._line(f"Hold a board's wallet, its four hands inside, flat on the "
                         f"{spot.label} a moment, then press Enter. ")

    async def press(self, label: str, button: Any) -> None:
        self.say(f"Press the {label} button.")

    async def confirm(self, question: str, shown: Callable[[], bool]) -> bool:
        while True:
            answer = (await self._line(f"{question} [y/n] ")).lower()
            if answer in ("y", "yes", "n", "no"):
                return answer.startswith("y")


class _Scripted(Technician):
    """A scripted technician: lays fresh tags, presses mock pins, trusts the software."""

    name = "scripted"
    timed = True

    def __init__(self) -> None:
        self.display_stream = io.StringIO()
        self.lying: dict[Spot, list[str]] = {}
        self.lying_silent: dict[str, str] = {}
        self._serial = itertools.count(1)
        #: what the test told the technician, for the tests to read
        self.said: list[str] = []

    def say(self, text: str) -> None:
        self.said.append(text)

    def uid(self) -> str:
        return f"04E57E{next(self._serial):08X}"

    @abc.abstractmethod
    def _place(self, spot: Spot, uid: str) -> None: ...

    @abc.abstractmethod
    def _remove(self, spot: Spot, uid: str) -> None: ...

    def _place_silent(self, area: str, uid: str) -> None:
        """A card where no antenna is: nothing reads it (a wiring fault may say otherwise)."""

    def _remove_silent(self, area: str, uid: str) -> None:
        """The card laid by :meth:`_place_silent` taken away."""

    async def lay_silent(self, area: str) -> None:
        uid = self.uid()
        self.lying_silent[area] = uid
        self._place_silent(area, uid)

    async def lift_silent(self, area: str) -> None:
        uid = self.lying_silent.pop(area, None)
        if uid is not None:
            self._remove_silent(area, uid)

    def wallet_cards(self, spot: Spot) -> int:
        """How many of a full wallet's 52 card stickers lie in the board reader's field
        (none: the wallet's own sticker is at its corner over the antenna, the cards' at
        their centres, docs/hardware/wiring.md)."""
        return 0

    async def lay_wallet(self, spot: Spot) -> None:
        cards = [self.uid() for _ in range(self.wallet_cards(spot))]
        wallet = self.uid()
        for uid in [*cards, wallet]:   # all at once: the cards answer with the wallet
            self._place(spot, uid)
        await asyncio.sleep(0.3)       # held a moment, then taken away
        for uid in [wallet, *cards]:
            self._remove(spot, uid)

    async def lay(self, spot: Spot, count: int) -> None:
        for _ in range(count):
            uid = self.uid()
            self._place(spot, uid)
            self.lying.setdefault(spot, []).append(uid)
        if spot.tap:
            await asyncio.sleep(0.3)   # held a moment, then taken away
            await self.lift(spot)

    async def lift(self, spot: Spot) -> None:
        for uid in self.lying.pop(spot, []):
            self._remove(spot, uid)

    async def press(self, label: str, button: Any) -> None:
        pin = button.pin
        # pressed is the pin's active level: low with the pull-up, high without
        if button.pull_up:
            pin.drive_low()
            pin.drive_high()
        else:
            pin.drive_high()
            pin.drive_low()

    async def confirm(self, question: str, shown: Callable[[], bool]) -> bool:
        return shown()


class SimTechnician(_Scripted):
    """Lays tags on the virtual firmwares of a simulated table (``firmware_bridge.sim``).
    ``faults`` (``firmware_bridge.sim.faults.SimFaults``) says which antennas a card laid on a
    spot, or in a row, really lies over: its own, none (a dead antenna), another (two chip
    selects swapped), its own and a neighbour's (an antenna too close)."""

    def __init__(self, table: Any, readers: dict[str, str], faults: Any = None) -> None:
        super().__init__()
        self.table = table
        #: config reader name -> the simulated table's reader name (sim://TABLE/NAME)
        self.readers = readers
        self.faults = faults

    def _firmware(self, spot: Spot) -> Any:
        return self.table.firmwares[self.readers[spot.reader]]

    def _over(self, place: str) -> list[tuple[Any, int]]:
        """The firmwares and antennas a card laid at ``place`` (``reader/antenna`` or a row's
        name) lies over."""
        targets = self.faults.antennas_reading(place) if self.faults is not None else \
            ([place] if "/" in place else [])
        out = []
        for target in targets:
            reader, _, antenna = target.partition("/")
            firmware = self.table.firmwares.get(self.readers.get(reader, reader))
            if firmware is not None and firmware.running:
                out.append((firmware, int(antenna)))
        return out

    def _place(self, spot: Spot, uid: str) -> None:
        for firmware, antenna in self._over(f"{spot.reader}/{spot.antenna}"):
            # laid now: the firmware dates its line by it (plus the rounds the tag missed)
            firmware.place(antenna, uid, hw_time=time.time())

    def _remove(self, spot: Spot, uid: str) -> None:
        for firmware, antenna in self._over(f"{spot.reader}/{spot.antenna}"):
            firmware.lift(antenna, uid)

    def wallet_cards(self, spot: Spot) -> int:
        return int(getattr(self.faults, "wallet_cards", 0))

    def _place_silent(self, area: str, uid: str) -> None:
        for firmware, antenna in self._over(area):
            firmware.place(antenna, uid, hw_time=time.time())

    def _remove_silent(self, area: str, uid: str) -> None:
        for firmware, antenna in self._over(area):
            firmware.lift(antenna, uid)


class FieldTechnician(_Scripted):
    """Lays tags in the field of emulated chips (``firmware_bridge.sim.chips.Field``);
    ``keys``: (reader, antenna) -> the field's key for that antenna."""

    def __init__(self, chip_field: Any, keys: dict[tuple[str, str], object]) -> None:
        super().__init__()
        self.field = chip_field
        self.keys = keys

    def _place(self, spot: Spot, uid: str) -> None:
        self.field.place(self.keys[(spot.reader, spot.antenna)], uid)

    def _remove(self, spot: Spot, uid: str) -> None:
        self.field.lift(self.keys[(spot.reader, spot.antenna)], uid)


# ---------------------------------------------------------------------------------- the test


#: no antenna: every antenna's reads are "elsewhere" (the rows' step)
NOWHERE = Spot("", "", "", None, False)


@dataclass
class _Seen:
    at: float
    item: TagRead | ReaderHealth


class _Readers:
    """Every reader of the config running, what they report kept in arrival order."""

    def __init__(self, config: BridgeConfig, names: Sequence[str]) -> None:
        self.config = config
        self.names = names
        self.seen: list[_Seen] = []
        self.changed = asyncio.Event()
        self.tasks: list[asyncio.Task[None]] = []
        self.failures: list[str] = []
        #: the readers opened, by name (to ask a serial reader's firmware for its counters)
        self.opened: dict[str, Any] = {}
        #: readers that came up (caught up, or reported anything but a disconnection)
        self.up: set[str] = set()
        #: readers whose firmware has no counters (serial protocol version 1)
        self.no_stats: set[str] = set()

    async def start(self) -> None:
        for rc in self.config.readers:
            if rc.name in self.names:
                self.tasks.append(asyncio.create_task(self._run(rc), name=f"selftest-{rc.name}"))

    async def _run(self, rc: ReaderConfig) -> None:
        try:
            reader = open_reader(rc.name, rc.url, kind=rc.kind, **dict(rc.options))
            # a serial reader says when it has caught up: the link is up
            reader.report_synced = True
            self.opened[rc.name] = reader
            if not reader.catches_up:
                self.up.add(rc.name)   # no way to tell: its first report will say
            async with reader:
                async for item in reader:
                    if isinstance(item, ReaderSynced) or isinstance(item, TagRead) or (
                            isinstance(item, ReaderHealth)
                            and item.kind not in ("disconnected", "heartbeat_lost")):
                        self.up.add(rc.name)
                    if isinstance(item, ReaderHealth) and item.kind == "disconnected":
                        self.up.discard(rc.name)
                    if isinstance(item, TagRead | ReaderHealth):
                        self.seen.append(_Seen(time.monotonic(), item))
                    self.changed.set()
        except (ReaderError, OSError) as error:
            self.failures.append(f"reader {rc.name}: {error}")
            self.changed.set()

    async def stop(self) -> None:
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def not_connected(self, reader: str, timeout: float) -> str:
        """"" once ``reader`` is up; else, when it reported a disconnection (at once) or said
        nothing within ``timeout``, why it is not connected (``no port PATH``)."""
        await self.wait(lambda: reader in self.up or self._down(reader) is not None, timeout)
        if reader in self.up:
            return ""
        down = self._down(reader)
        if down is not None:
            port = getattr(self.opened.get(reader), "port", "")
            return f"no port {port}" if port and "cannot open" in down else down
        failed = [f for f in self.failures if f.startswith(f"reader {reader}:")]
        return failed[0] if failed else f"nothing heard from it in {timeout:g} s"

    def _down(self, reader: str) -> str | None:
        health = self.health(reader, 0)
        if health and health[-1].kind == "disconnected":
            return health[-1].detail
        return None

    async def stats(self, reader: str, antenna: str, timeout: float = 2.0
                    ) -> tuple[int, int, int] | None:
        """The firmware's counters of one antenna, asked for now (``STAT``): rounds,
        answered, missed; None from a reader without them."""
        opened = self.opened.get(reader)
        send = getattr(opened, "send", None)
        if send is None or not antenna.isdigit() or reader in self.no_stats:
            return None
        from firmware_bridge.protocol import Command, CommandOp, parse_stats

        mark = self.mark()
        send(Command(CommandOp.STAT, (antenna,)))

        def answer() -> tuple[int, int, int] | None:
            for health in self.health(reader, mark):
                if health.kind == STATS_HEALTH:
                    got = parse_stats(health.detail)
                    if got is not None and str(got[0]) == antenna:
                        return got[1:]
            return None

        def refused() -> bool:   # a version-1 firmware: ERR BADCMD malformed
            return any(h.kind == "firmware_error" and h.detail.startswith("BADCMD")
                       for h in self.health(reader, mark))

        await self.wait(lambda: answer() is not None or refused(), timeout)
        if answer() is None and refused():
            self.no_stats.add(reader)
        return answer()

    def mark(self) -> int:
        return len(self.seen)

    def reads(self, spot: Spot, since: int) -> list[tuple[float, TagRead]]:
        return [(s.at, s.item) for s in self.seen[since:]
                if isinstance(s.item, TagRead) and s.item.reader == spot.reader
                and s.item.antenna == spot.antenna]

    def elsewhere(self, spot: Spot, since: int) -> list[tuple[str, str]]:
        """The other antennas (reader, antenna) that reported a card arriving since
        ``since``, in the order they did."""
        out: list[tuple[str, str]] = []
        for s in self.seen[since:]:
            item = s.item
            if isinstance(item, TagRead) and item.action == "present" and \
                    (item.reader, item.antenna) != (spot.reader, spot.antenna) and \
                    (item.reader, item.antenna) not in out:
                out.append((item.reader, item.antenna))
        return out

    def arrived(self, spot: Spot, since: int) -> bool:
        """A card came onto ``spot``'s antenna, or onto any other, since ``since``."""
        return self.has(spot, since, "present") or bool(self.elsewhere(spot, since))

    def left(self, antennas: Sequence[tuple[str, str]], since: int) -> bool:
        """What came onto ``antennas`` since ``since`` is gone."""
        return not any(self.lying(Spot(reader, antenna, "", None, False), since)
                       for reader, antenna in antennas)

    def health(self, reader: str, since: int) -> list[ReaderHealth]:
        return [s.item for s in self.seen[since:]
                if isinstance(s.item, ReaderHealth) and s.item.reader == reader]

    def has(self, spot: Spot, since: int, action: str) -> bool:
        return any(r.action == action for _, r in self.reads(spot, since))

    def cleared(self, spot: Spot, laid: int, lifted: int) -> bool:
        """What was laid since ``laid`` is gone, or a removal came since ``lifted``."""
        return not self.lying(spot, laid) or self.has(spot, lifted, "removed")

    def lying(self, spot: Spot, since: int) -> set[str]:
        """The tags lying on ``spot`` by the changes since ``since``."""
        now: set[str] = set()
        for _, read in self.reads(spot, since):
            if read.action == "removed":
                now.discard(read.uid)
            else:
                now.add(read.uid)
        return now

    async def wait(self, done: Callable[[], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.1))
        return True


def spots(config: BridgeConfig, names: Sequence[str] = ()) -> list[Spot]:
    """The antennas to test, in the config's order (only readers ``names`` if given)."""
    out = []
    for rc in config.readers:
        if names and rc.name not in names:
            continue
        for antenna, ac in rc.antennas.items():
            out.append(Spot(rc.name, antenna, ac.zone, ac.seat, tap=rc.kind == "tap"))
    return out


class SelfTest:
    def __init__(self, config: BridgeConfig, technician: Technician, *,
                 settings: Settings | None = None, readers: Sequence[str] = (),
                 pin_factory: Any = None) -> None:
        self.config = config
        self.technician = technician
        self.settings = settings or Settings()
        self.spots = spots(config, readers)
        #: only some readers tested: the rows' step, which watches them all, is left out
        self.only = tuple(readers)
        self.pin_factory = pin_factory
        self.report = Report(table=config.table.id, config=str(config.path),
                             technician=technician.name, started=_now())

    async def run(self) -> Report:
        """Every step in turn; the report so far stays in ``self.report`` if interrupted."""
        names = sorted({s.reader for s in self.spots})
        readers = _Readers(self.config, names)
        try:
            await readers.start()
            for spot in self.spots:
                await self._antenna(readers, spot)
            if not self.only:
                await self._silent_areas(readers)
            self.report.problems += readers.failures
            await self._gpio()
            await self._display()
        except (asyncio.CancelledError, KeyboardInterrupt, EOFError):
            self.report.interrupted = True
            raise
        finally:
            self.report.finished = _now()
            await readers.stop()
        return self.report

    # ------------------------------------------------------------------ antennas

    def _name(self, reader: str, antenna: str) -> str:
        """An antenna as the technician knows it: "E spot (east/0)"."""
        for spot in spots(self.config):
            if (spot.reader, spot.antenna) == (reader, antenna):
                return f"{_where(spot.seat, spot.zone)} ({reader}/{antenna})"
        return f"antenna {antenna} of reader {reader}, not in the table file"

    async def _antenna(self, readers: _Readers, spot: Spot) -> None:
        s = self.settings
        tech = self.technician
        result = AntennaResult(spot.reader, spot.antenna, spot.zone, spot.seat)
        self.report.antennas.append(result)
        tech.say(f"-- {spot.label}")
        result.not_connected = await readers.not_connected(spot.reader, s.connect_timeout)
        if result.not_connected:
            # said at once: the technician looks at the cable, not at the antenna
            result.verdict, result.advice = _verdict(result, s, timed=tech.timed)
            tech.say(f"  {result.verdict}")
            return
        first_health = readers.mark()
        before = await readers.stats(spot.reader, spot.antenna)
        elsewhere: list[tuple[str, str]] = []
        for _ in range(s.repeats):
            mark = readers.mark()
            result.laid += 1
            laid_at = time.time()
            await tech.lay(spot, 1)
            got = await readers.wait(partial(readers.arrived, spot, mark), s.timeout)
            if got and not readers.has(spot, mark, "present"):
                # read by another antenna first: give its own a moment more
                await readers.wait(partial(readers.has, spot, mark, "present"), s.hold)
            elsewhere += [o for o in readers.elsewhere(spot, mark) if o not in elsewhere]
            if not readers.has(spot, mark, "present"):
                tech.say("  not read")
                await tech.lift(spot)
                await readers.wait(partial(readers.left, elsewhere, mark), s.timeout)
                continue
            first = next(r for _, r in readers.reads(spot, mark) if r.action == "present")
            result.read += 1
            # the reader's own time of the read where it has one (else its arrival)
            result.read_ms.append(round(max(0.0, first.ts - laid_at) * 1000, 1))
            if spot.tap:
                continue
            await asyncio.sleep(s.hold)
            result.dropouts += sum(1 for _, r in readers.reads(spot, mark)
                                   if r.uid == first.uid and r.action == "removed")
            lift_mark = readers.mark()
            result.lifted += 1
            await tech.lift(spot)
            if await readers.wait(partial(readers.cleared, spot, mark, lift_mark), s.timeout):
                result.removal_seen += 1
            tech.say(f"  read in {result.read_ms[-1]:.0f} ms")
        if spot.tap and spot.zone == "board" and result.read:
            await self._full_wallet(readers, spot, result)
        after = await readers.stats(spot.reader, spot.antenna)
        if before is not None and after is not None:
            result.rounds, result.answered_rounds, result.missed_rounds = (
                max(0, a - b) for a, b in zip(after, before, strict=True))
        result.read_by = [self._name(r, a) for r, a in elsewhere]
        two_cards = (readers.mark(), readers.mark())
        if not spot.tap and result.read:
            two_cards = await self._two_cards(readers, spot, result)
        for index, seen in enumerate(readers.seen[first_health:], start=first_health):
            health = seen.item
            if not isinstance(health, ReaderHealth) or health.reader != spot.reader or \
                    health.kind not in ("firmware_error", "disconnected"):
                continue
            if two_cards[0] <= index < two_cards[1] and _collision(health.detail):
                continue   # the two-card step's own collision: what it is there to see
            if health.detail.startswith("BADCMD"):
                continue   # the test's own STAT, refused by a version-1 firmware
            result.errors.append(f"{health.kind}: {health.detail}")
        result.verdict, result.advice = _verdict(result, s, timed=tech.timed)
        tech.say(f"  {result.verdict}")

    async def _two_cards(self, readers: _Readers, spot: Spot, result: AntennaResult
                         ) -> tuple[int, int]:
        """Two cards at once; the stretch of ``readers.seen`` the step covered."""
        s = self.settings
        mark = readers.mark()
        await self.technician.lay(spot, 2)
        await readers.wait(lambda: len(readers.lying(spot, mark)) >= 2, s.settle)
        lying = len(readers.lying(spot, mark))
        errors = [h for h in readers.health(spot.reader, mark) if h.kind == "firmware_error"]
        if lying >= 2:
            result.two_cards = "both read (a pile-capable antenna)"
        elif errors:
            first = "one read, then " if lying else ""
            result.two_cards = f"{first}a collision: {errors[0].detail} (one card at a time)"
        elif lying == 1:
            result.two_cards = "one read, the other not seen (one card at a time)"
        else:
            result.two_cards = "silence, neither read (one card at a time)"
        await self.technician.lift(spot)
        await readers.wait(lambda: not readers.lying(spot, mark), s.timeout)
        return mark, readers.mark()

    async def _full_wallet(self, readers: _Readers, spot: Spot, result: AntennaResult) -> None:
        """The board reader with what it reads in play: a wallet holding its four hands."""
        mark = readers.mark()
        await self.technician.lay_wallet(spot)
        if await readers.wait(partial(readers.has, spot, mark, "present"),
                              self.settings.timeout):
            await asyncio.sleep(self.settings.hold)   # whatever else answers with it
        uids = {r.uid for _, r in readers.reads(spot, mark) if r.action == "present"}
        errors = [h.detail for h in readers.health(spot.reader, mark)
                  if h.kind == "firmware_error"]
        # the board is read when its wallet's sticker alone answers: a card's sticker read
        # instead would be taken for the board, a collision reads none
        if len(uids) == 1 and not errors:
            result.full_wallet = "read"
        else:
            why = [f"{len(uids)} tags answered"] if len(uids) > 1 else []
            why += errors[:1]
            result.full_wallet = "not read" + (f" ({', '.join(why)})" if why else "")

    async def _silent_areas(self, readers: _Readers) -> None:
        """A card in each seat's trick row and call row and on dummy's area: no antenna of
        any reader may read it (docs/hardware/wiring.md, "Rows")."""
        seats = [seat for seat in SEAT_NAMES
                 if any(spot.seat == seat for spot in self.spots)]
        areas = [f"{seat} {row} row" for seat in seats for row in ("trick", "call")]
        if seats:
            areas.append("dummy's area")
        for area in areas:
            mark = readers.mark()
            await self.technician.lay_silent(area)
            await readers.wait(partial(readers.arrived, NOWHERE, mark), self.settings.hold)
            read = readers.elsewhere(NOWHERE, mark)
            await self.technician.lift_silent(area)
            if read:
                names = ", ".join(self._name(r, a) for r, a in read)
                detail = (f"read by {names}: move the row (or the antenna) so that at least "
                          "60 mm of table lie between the loop's edge and the row's nearest "
                          "card (docs/hardware/wiring.md, Rows)")
            else:
                detail = ""
            self.report.silent.append(CheckResult(area, not read, detail))
            await readers.wait(partial(readers.left, read, mark), self.settings.timeout)

    # ------------------------------------------------------------------ buttons, LEDs, display

    async def _gpio(self) -> None:
        g = self.config.gpio
        if not g.buttons and not g.seats:
            return
        from firmware_bridge.gpio import TableGpio

        loop = asyncio.get_running_loop()
        pressed: asyncio.Queue[tuple[str, str | None]] = asyncio.Queue()

        def on_button(name: str, seat: str | None, _at: float) -> None:
            loop.call_soon_threadsafe(pressed.put_nowait, (name, seat))

        try:
            gpio = TableGpio(g, on_button, pin_factory=self.pin_factory)
        except BridgeError as error:
            self.report.problems.append(f"LEDs and buttons: {error}")
            # configured but not tested: said where they are listed, not "none configured"
            if g.buttons:
                self.report.buttons.append(CheckResult("buttons", False, f"not tested: {error}"))
            if g.seats:
                self.report.leds.append(CheckResult("LEDs", False, f"not tested: {error}"))
            return
        try:
            for (name, seat), button in gpio.buttons.items():
                label = f"{seat} {name}" if seat else name
                pin = g.seats[seat].buttons[name] if seat else g.buttons[name]
                while not pressed.empty():
                    pressed.get_nowait()
                await self.technician.press(label, button)
                got = await _next_press(pressed, (name, seat), self.settings.press_timeout)
                self.report.buttons.append(CheckResult(f"button {label} (BCM {pin})", got,
                                                       "" if got else "no press arrived"))
            for seat, leds in gpio.leds.items():
                devices = [("turn LED", leds.turn), ("alert LED", leds.alert)]
                for what, device in devices:
                    if device is None:
                        continue
                    device.on()
                    seen = await self.technician.confirm(f"Is the {seat} {what} lit?",
                                                         partial(_lit, device))
                    device.off()
                    self.report.leds.append(CheckResult(f"{seat} {what}", seen,
                                                        "" if seen else "not seen lit"))
                if leds.rgb is not None:
                    for colour, rgb in (("green", (0, 1, 0)), ("red", (1, 0, 0))):
                        leds.rgb.color = rgb
                        seen = await self.technician.confirm(
                            f"Is the {seat} LED {colour}?", partial(_colour, leds.rgb, rgb))
                        self.report.leds.append(CheckResult(f"{seat} RGB LED {colour}", seen,
                                                            "" if seen else "not seen"))
                    leds.rgb.off()
        finally:
            gpio.close()

    async def _display(self) -> None:
        if self.config.display.type == "none":
            return
        from firmware_bridge.display import make_display

        try:
            display = make_display(self.config.display, stream=self.technician.display_stream,
                                   title="selftest")
        except BridgeError as error:
            self.report.display.append(CheckResult(f"display {self.config.display.type}", False,
                                                   str(error)))
            return
        code = f"SELFTEST {int(time.time()) % 10000:04d}"
        try:
            display.show([code, "1234567890ABCDEFGHIJ"])
            stream = self.technician.display_stream
            seen = await self.technician.confirm(
                f"Does the display show {code!r} over 1234567890ABCDEFGHIJ?",
                lambda: stream is not None and isinstance(stream, io.StringIO)
                and code in stream.getvalue())
        finally:
            display.close()
        self.report.display.append(CheckResult(f"display {self.config.display.type}", seen,
                                               "" if seen else "not seen"))


async def _next_press(queue: asyncio.Queue[tuple[str, str | None]],
                      wanted: tuple[str, str | None], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        try:
            got = await asyncio.wait_for(queue.get(), left)
        except TimeoutError:
            return False
        if got == wanted:
            return True


def _lit(led: Any) -> bool:
    return bool(led.is_lit)


def _colour(led: Any, rgb: tuple[int, int, int]) -> bool:
    return tuple(led.color) == rgb


#: what to check or change, per verdict (docs/hardware/README.md, wiring.md)
ADVICE_NOT_CONNECTED = (
    "check the reader's USB cable (a powered hub, docs/hardware/wiring.md, Power) and that the "
    "table file's url names its port (ls /dev/serial/by-id/); a board that does not come up "
    "is flashed again (bridge-table firmware flash, docs/hardware/README.md); stop the "
    "table's bridge first, a port is opened by one program at a time")
ADVICE_DEAD = (
    "check this antenna's module: its cable, its chip select pin and 3.3 V "
    "(docs/hardware/wiring.md, the board's table; an error 'no_answer' says the chip does "
    "not answer), then that its loop lies centred under the spot, loop side up, at most 6 mm "
    "below the card (wiring.md, Antenna placement)")
ADVICE_WEAK = (
    "the field is weak at this spot: centre the module's loop under the spot, loop side up, "
    "with at most 6 mm of wood or plastic over it and no metal near it, and check the "
    "reader's 3.3 V supply (docs/hardware/wiring.md, Antenna placement and Power); then test "
    "it again")
ADVICE_WALLET = (
    "the cards' stickers inside the wallet reach the board reader's field with the wallet's "
    "own: put the wallet's sticker at the same corner of every wallet, over the reader, so "
    "that the cards' stickers (the centre of each card's back) lie outside the marked "
    "100 x 100 mm square (docs/hardware/wiring.md, Board reader)")
ADVICE_CLOSE = (
    "keep at least 100 mm between antenna centres (docs/hardware/wiring.md, Antenna "
    "placement), or shield the two loops from each other")
ADVICE_SWAPPED = (
    "if the other spot is read by this one's antenna, the two chip selects (or the two "
    "readers' antenna maps in the table file) are swapped: swap them back "
    "(docs/hardware/wiring.md, the board's table); otherwise the other antenna lies too close: "
    + ADVICE_CLOSE)


def _collision(detail: str) -> bool:
    """An ERR line about more tags than the antenna resolves (the two-card step's own)."""
    return any(word in detail for word in ("collision", "too_many_tags"))


def _verdict(r: AntennaResult, s: Settings, *, timed: bool) -> tuple[str, str]:
    """The verdict on one antenna and what to do about it ("" when it is trusted)."""
    here = _where(r.seat, r.zone)
    if r.not_connected:
        return f"NOT CONNECTED: reader {r.reader} not connected ({r.not_connected})", \
            ADVICE_NOT_CONNECTED
    if r.read_by:
        other, _, ref = r.read_by[0].partition(" (")
        by = f"{other}'s antenna" + (f" ({ref}" if ref else "") + \
            "".join(f", and {name}'s" for name in r.read_by[1:])
        if r.read == 0:
            return (f"MISWIRED: {here} is read by {by}: chip selects swapped, or {other}'s "
                    "antenna too close"), ADVICE_SWAPPED
        return f"MISWIRED: {here} is also read by {by}: {other}'s antenna too close", \
            ADVICE_CLOSE
    if r.read == 0:
        gone = [e for e in r.errors if "no_answer" in e]
        return "NOT WORKING: no card read" + (f" ({gone[0]})" if gone else ""), ADVICE_DEAD
    problems = []
    if r.misses:
        problems.append(f"{r.misses} of {r.laid} cards missed")
    if timed and r.read_ms and max(r.read_ms) > s.max_read_ms:
        problems.append(f"read in up to {max(r.read_ms):.0f} ms, above {s.max_read_ms} ms "
                        f"({s.pass_rounds} rounds of {s.period_ms} ms: a card slid across "
                        "the spot would be missed)")
    rate = r.miss_rate
    if rate is not None and rate > s.max_miss_rate:
        unread = rate ** s.pass_rounds
        problems.append(f"a card lying there missed {rate:.0%} of polling rounds, above "
                        f"{s.max_miss_rate:.0%} (a card slid across in {s.pass_rounds} rounds "
                        f"would go unread {unread:.0%} of the time)")
    if r.full_wallet.startswith("not read"):
        problems.append(f"a full wallet {r.full_wallet}")
    if r.dropouts:
        problems.append(f"{r.dropouts} drop-outs of a card lying still")
    if r.lifted and r.removal_seen < r.lifted:
        problems.append(f"{r.lifted - r.removal_seen} removals not seen")
    if problems:
        wallet_only = len(problems) == 1 and r.full_wallet.startswith("not read")
        return "UNRELIABLE: " + ", ".join(problems), ADVICE_WALLET if wallet_only else \
            ADVICE_WEAK
    if r.two_cards.startswith("both"):
        return "trusted: one card, and two cards at once (pile-capable antenna)", ""
    if r.two_cards == "not tried":
        return "trusted: one card at a time (taps)", ""
    return "trusted: one card at a time only", ""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def write_report(report: Report, prefix: Path) -> tuple[Path, Path]:
    """``PREFIX.txt`` and ``PREFIX.json``."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    text, data = prefix.with_name(prefix.name + ".txt"), prefix.with_name(prefix.name + ".json")
    text.write_text(report.text(), encoding="utf-8")
    data.write_text(json.dumps(report.to_json(), indent=2) + "\n", encoding="utf-8")
    return text, data


# ---------------------------------------------------------------------------------- running


async def run_selftest(config: BridgeConfig, *, repeats: int, timeout: float, scripted: bool,
                       readers: Sequence[str] = (),
                       hold: Callable[[SelfTest], None] = lambda test: None,
                       faults: SimFaults | None = None) -> Report:
    """The self-test of ``config``'s table (only ``readers`` when given): with a technician
    at the console, or (``scripted``) the simulated table's scripted one, with ``faults``
    built into it. ``hold`` gets the test before it starts, so that an interrupted run's
    partial report can be read."""
    settings = Settings(repeats=repeats, timeout=timeout, press_timeout=timeout)
    if not scripted:
        test = SelfTest(config, ConsoleTechnician(), settings=settings, readers=readers)
        hold(test)
        return await test.run()
    from firmware_bridge.sim.faults import SimFaults
    from firmware_bridge.sim.table import SimTable

    faults = faults or SimFaults()
    table = SimTable.from_config(config.path, physics=faults.physics())
    names = {rc.name: rc.url.partition("://")[2].partition("/")[2] for rc in config.readers}
    async with table:
        faults.apply(table, names)
        tech = SimTechnician(table, names, faults)
        test = SelfTest(config, tech, settings=Settings(
            # a reader unplugged says so at once; one that is there syncs in milliseconds,
            # or seconds on a loaded machine: the wait costs nothing when all is well
            repeats=repeats, timeout=timeout, hold=0.3, settle=1.0, press_timeout=2.0,
            connect_timeout=10.0), readers=readers)
        test.report.problems += [f"simulated fault: {f}" for f in faults.describe()]
        hold(test)
        return await test.run()
