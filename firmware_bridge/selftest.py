"""``bridge-table selftest``: the commissioning test of a built table.

It walks a technician through every antenna of the table's config (lay one card, lift it, a
few times; then lay two), every button, every LED and the display, and writes a report (text and
JSON) of what this table can be trusted to read:

* per antenna: how many cards laid were read, how long the read took, drop-outs while a card
  lay still, whether the card's removal was seen, and what two cards at once gave - both read
  (a pile-capable antenna), one read (the other hidden), or a collision/silence (an antenna for
  one card at a time);
* per button: the press arrived on its pin; per LED and the display: the technician saw it.

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
from typing import Any, TextIO

from firmware_bridge.config import BridgeConfig, ReaderConfig
from firmware_bridge.errors import BridgeError
from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader

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
    errors: list[str] = field(default_factory=list)
    verdict: str = ""

    @property
    def misses(self) -> int:
        return self.laid - self.read


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
    buttons: list[CheckResult] = field(default_factory=list)
    leds: list[CheckResult] = field(default_factory=list)
    display: list[CheckResult] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for antenna, result in zip(data["antennas"], self.antennas, strict=True):
            antenna["misses"] = result.misses
        return data

    def text(self) -> str:
        lines = [f"Self-test of table {self.table} ({self.config})",
                 f"technician: {self.technician}; started {self.started}, "
                 f"finished {self.finished or '-'}"
                 + ("; INTERRUPTED: the results below are partial" if self.interrupted else ""),
                 "", "Antennas"]
        for a in self.antennas:
            where = f"{a.seat} {a.zone}" if a.seat else a.zone
            times = (f"read in {min(a.read_ms):.1f}-{max(a.read_ms):.1f} ms"
                     if a.read_ms else "no read time")
            lines.append(f"  {where:<10} {a.reader}/{a.antenna}: {a.verdict}")
            lines.append(f"    {a.read} of {a.laid} cards read ({a.misses} missed), {times}, "
                         f"{a.dropouts} drop-outs, removal seen {a.removal_seen} of "
                         f"{a.lifted}; two cards at once: {a.two_cards}")
            lines += [f"    error: {e}" for e in a.errors]
        for title, checks in (("Buttons", self.buttons), ("LEDs", self.leds),
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
            where = f"{a.seat} {a.zone}" if a.seat else a.zone
            if a.verdict.startswith(("NOT", "UNRELIABLE")):
                key = "not to be trusted (see above)"
            elif "pile-capable" in a.verdict:
                key = "one card, and two cards lying together"
            else:
                key = "one card at a time (never a pile)"
            groups.setdefault(key, []).append(f"{where} ({a.reader}/{a.antenna})")
        out = [f"{key}: {', '.join(places)}" for key, places in groups.items()]
        if self.interrupted:
            out.append("the test was interrupted: antennas not listed were not tested")
        return out or ["nothing was tested"]

    def failed(self) -> bool:
        """An antenna not working or unreliable, or a button, LED or display that failed."""
        return any(a.verdict.startswith(("NOT", "UNRELIABLE")) for a in self.antennas) or \
            any(not c.ok for c in self.buttons + self.leds + self.display)


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


# ---------------------------------------------------------------------------------- technicians


class Technician(abc.ABC):
    """Who lays the cards and presses the buttons. ``lay`` returns when the cards lie there
    (a console technician says so; a scripted one has put them there)."""

    name = "?"
    #: where a terminal display of the table draws (None: standard output)
    display_stream: TextIO | None = None

    @abc.abstractmethod
    def say(self, text: str) -> None:
        """Tell the technician something."""

    @abc.abstractmethod
    async def lay(self, spot: Spot, count: int) -> None: ...

    @abc.abstractmethod
    async def lift(self, spot: Spot) -> None: ...

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

    def __init__(self) -> None:
        self.display_stream = io.StringIO()
        self.lying: dict[Spot, list[str]] = {}
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
    """Lays tags on the virtual firmwares of a simulated table (``firmware_bridge.sim``)."""

    def __init__(self, table: Any, readers: dict[str, str]) -> None:
        super().__init__()
        self.table = table
        #: config reader name -> the simulated table's reader name (sim://TABLE/NAME)
        self.readers = readers

    def _firmware(self, spot: Spot) -> Any:
        return self.table.firmwares[self.readers[spot.reader]]

    def _place(self, spot: Spot, uid: str) -> None:
        self._firmware(spot).place(int(spot.antenna), uid)

    def _remove(self, spot: Spot, uid: str) -> None:
        self._firmware(spot).lift(int(spot.antenna), uid)


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

    async def start(self) -> None:
        for rc in self.config.readers:
            if rc.name in self.names:
                self.tasks.append(asyncio.create_task(self._run(rc), name=f"selftest-{rc.name}"))

    async def _run(self, rc: ReaderConfig) -> None:
        try:
            reader = open_reader(rc.name, rc.url, kind=rc.kind, **dict(rc.options))
            async with reader:
                async for item in reader:
                    if not isinstance(item, TagRead | ReaderHealth):
                        continue  # ReaderSynced: a reader caught up, nothing to measure
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

    def mark(self) -> int:
        return len(self.seen)

    def reads(self, spot: Spot, since: int) -> list[tuple[float, TagRead]]:
        return [(s.at, s.item) for s in self.seen[since:]
                if isinstance(s.item, TagRead) and s.item.reader == spot.reader
                and s.item.antenna == spot.antenna]

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

    async def _antenna(self, readers: _Readers, spot: Spot) -> None:
        s = self.settings
        tech = self.technician
        result = AntennaResult(spot.reader, spot.antenna, spot.zone, spot.seat)
        self.report.antennas.append(result)
        tech.say(f"-- {spot.label}")
        first_health = readers.mark()
        so_far = readers.health(spot.reader, 0)
        if so_far and so_far[-1].kind == "disconnected":
            # said now, so that the technician looks at the cable before laying cards
            tech.say(f"  the reader is not connected: {so_far[-1].detail}")
        for _ in range(s.repeats):
            mark = readers.mark()
            start = time.monotonic()
            result.laid += 1
            await tech.lay(spot, 1)
            if not await readers.wait(partial(readers.has, spot, mark, "present"), s.timeout):
                tech.say("  not read")
                continue
            at, first = next((at, r) for at, r in readers.reads(spot, mark)
                             if r.action == "present")
            result.read += 1
            result.read_ms.append(round((at - start) * 1000, 1))
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
        if not spot.tap and result.read:
            await self._two_cards(readers, spot, result)
        for health in readers.health(spot.reader, first_health):
            if health.kind in ("firmware_error", "disconnected"):
                result.errors.append(f"{health.kind}: {health.detail}")
        result.verdict = _verdict(result)
        tech.say(f"  {result.verdict}")

    async def _two_cards(self, readers: _Readers, spot: Spot, result: AntennaResult) -> None:
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


def _verdict(r: AntennaResult) -> str:
    if r.read == 0:
        return "NOT WORKING: no card read"
    problems = []
    if r.misses:
        problems.append(f"{r.misses} of {r.laid} cards missed")
    if r.dropouts:
        problems.append(f"{r.dropouts} drop-outs of a card lying still")
    if r.lifted and r.removal_seen < r.lifted:
        problems.append(f"{r.lifted - r.removal_seen} removals not seen")
    if problems:
        return "UNRELIABLE: " + ", ".join(problems)
    if r.two_cards.startswith("both"):
        return "trusted: one card, and two cards at once (pile-capable antenna)"
    if r.two_cards == "not tried":
        return "trusted: one card at a time (taps)"
    return "trusted: one card at a time only"


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
                       hold: Callable[[SelfTest], None] = lambda test: None) -> Report:
    """The self-test of ``config``'s table (only ``readers`` when given): with a technician
    at the console, or (``scripted``) the simulated table's scripted one. ``hold`` gets the
    test before it starts, so that an interrupted run's partial report can be read."""
    settings = Settings(repeats=repeats, timeout=timeout, press_timeout=timeout)
    if not scripted:
        test = SelfTest(config, ConsoleTechnician(), settings=settings, readers=readers)
        hold(test)
        return await test.run()
    from firmware_bridge.sim.table import SimTable

    table = SimTable.from_config(config.path)
    names = {rc.name: rc.url.partition("://")[2].partition("/")[2] for rc in config.readers}
    async with table:
        tech = SimTechnician(table, names)
        test = SelfTest(config, tech, settings=Settings(
            repeats=repeats, timeout=timeout, hold=0.3, settle=1.0, press_timeout=2.0),
            readers=readers)
        hold(test)
        return await test.run()
