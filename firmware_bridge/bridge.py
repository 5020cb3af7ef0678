"""The firmware bridge of one table: readers and buttons in, MQTT events out; indicator in,
LEDs and display out.

``Bridge(config).run(stop)`` runs every reader of the config (``open_reader``), maps each
(reader, antenna) to its (seat, zone), looks tags up in the registry (an unknown UID is
published with ``unknown: true``), notices a tag seen at two places at once (counted in
health, still published), and publishes contract events through the spooled
:class:`~firmware_bridge.publisher.Publisher`. It follows ``{root}/{t}/indicator`` with the
LEDs and the display, turns button presses into ``button`` events, and publishes
``{root}/{t}/health`` periodically and whenever a counter changes.

What lies on each antenna of the inventory readers is kept in the spool's SQLite, in the
transaction of the event that put it there or took it away. A reader (re)opened, after a
restart of the bridge or a failure of the reader, starts from that state
(``Reader.restore_lying``): its first inventory reports only the tags put down or taken
away meanwhile, not every card on the table again.

In order, too: with every event the spool keeps the reader line it came from (its ``seq``), and
a serial reader (re)opened asks its firmware to replay its lines from there
(``firmware_bridge.protocol.HostSession``). While readers catch up (after the bridge starts, or
a reader dropped and comes back), every reader's events are held, at most ``CATCH_UP_MAX``
seconds, and published merged in the order of their times: what the table did while the bridge
was away reaches the controller as it happened, once.

``bridge-table bridge --config TABLE.toml`` runs it until SIGINT or SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO, cast

from controller import wire
from controller.broker.login import LoginRefused
from controller.laws.events import Action, Button, Zone
from firmware_bridge.collisions import Collisions
from firmware_bridge.config import BridgeConfig, ReaderConfig
from firmware_bridge.display import Display, NullDisplay, make_display
from firmware_bridge.errors import (
    BridgeError,
    DisplayError,
    GpioError,
    IndicatorError,
)
from firmware_bridge.extras import MissingExtra
from firmware_bridge.gpio import SeatLights, TableGpio
from firmware_bridge.publisher import Publisher, Spool, wait_event
from firmware_bridge.readers.base import LineMark, Reader, ReaderHealth, ReaderSynced, TagRead
from firmware_bridge.taginfo import NULL_REGISTRY, TagLookup

log = logging.getLogger(__name__)

#: reader health kinds that say whether the device is there
_DOWN_KINDS = frozenset({"disconnected", "heartbeat_lost"})
_UP_KINDS = frozenset({"reconnected", "connected", "heartbeat_back"})
#: seconds to wait before reopening a reader that could not be opened or failed
REOPEN_MIN = 0.5
REOPEN_MAX = 30.0
#: on-change health messages are coalesced over this many seconds
HEALTH_COALESCE = 0.2
#: seconds the publisher gets to say "offline" and disconnect when the bridge stops
PUBLISHER_GRACE = 5.0
#: the longest the bridge holds events while readers catch up (then it publishes what it has)
CATCH_UP_MAX = 3.0


ReaderOpener = Callable[..., Reader]


@dataclass(frozen=True)
class Indicator:
    """One validated ``indicator`` message."""

    seats: Mapping[str, SeatLights]
    display: Mapping[str, tuple[str, ...]]


def parse_indicator(payload: bytes, table: str) -> Indicator:
    """An ``indicator`` payload, decoded by the wire module (``wire.decode_indicator``: a
    partial one is read too, a missing seat dark, a missing language empty); raises
    IndicatorError saying what is wrong. An empty payload (a cleared retained message)
    means: all dark, nothing to show."""
    shown = wire.decode_indicator(payload)
    if isinstance(shown, wire.Malformed):
        raise IndicatorError(shown.reason)
    if shown.table is not None and shown.table != table:
        raise IndicatorError(f"for table {shown.table!r}, this is table {table!r}")
    return Indicator(
        seats={seat: SeatLights(turn=lights.turn, alert=lights.alert)
               for seat, lights in shown.seats.items()},
        display={language: tuple(lines) for language, lines in shown.display.items()})


@dataclass
class _ReaderState:
    kind: str | None = None
    open: bool = False
    connected: bool = False
    anomalies: dict[str, int] = field(default_factory=dict)


@dataclass
class BridgeHealth:
    """The bridge's counters (mutable state, published as ``health``)."""

    readers: dict[str, _ReaderState] = field(default_factory=dict)
    events: int = 0
    buttons: int = 0
    unknown_tags: int = 0
    duplicate_sightings: int = 0
    unmapped_antennas: int = 0
    bad_indicators: int = 0
    output_errors: int = 0
    #: events refused because the spool was full or could not be written
    spool_refused: int = 0
    last_duplicate: dict[str, Any] | None = None
    last_unmapped: dict[str, Any] | None = None
    last_bad_indicator: str | None = None


class Bridge:
    """One table's bridge. Parts can be injected (tests, the simulator); by default they
    are built from the config."""

    def __init__(self, config: BridgeConfig, *, registry: TagLookup | None = None,
                 open_reader: ReaderOpener | None = None, pin_factory: Any | None = None,
                 display: Display | None = None, stream: TextIO | None = None) -> None:
        self.config = config
        self._registry = registry
        self._open_reader = open_reader
        self._pin_factory = pin_factory
        self.display = display
        self._stream = stream
        self.health = BridgeHealth(readers={r.name: _ReaderState(kind=r.kind)
                                            for r in config.readers})
        self.gpio: TableGpio | None = None
        self.publisher: Publisher | None = None
        self.indicator: Indicator | None = None
        # shown over the indicator until cleared, fitted to the display's columns
        self.collisions = Collisions(width=min(config.display.cols, 20),
                                     rows=max(1, config.display.rows))
        self.ready = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        # uid -> {(reader, antenna): (ts of its present, held: True for inventory readers)}
        self._sightings: dict[str, dict[tuple[str, str], tuple[float, bool]]] = {}
        self._warned_antennas: set[tuple[str, str]] = set()
        self._health_due: asyncio.TimerHandle | None = None
        self._display_wanted: Indicator | None = None
        self._display_wake = asyncio.Event()
        self._display_task: asyncio.Task[None] | None = None
        #: readers catching up, the tag reads held meanwhile, and when holding ends anyway
        self._catching_up: set[str] = set()
        self._held: list[tuple[ReaderConfig, TagRead]] = []
        self._catch_up_timer: asyncio.TimerHandle | None = None
        #: the line each reader caught up at, kept once what came before it is published
        self._synced_lines: dict[str, LineMark] = {}

    # -- setup ---------------------------------------------------------------------------

    def _load_registry(self) -> TagLookup:
        if not self.config.registry.files:
            log.warning("no tag registry configured: every tag is published as unknown")
            return NULL_REGISTRY
        from firmware_bridge.tags import TagRegistry  # the tag registry (engineer A's module)
        try:
            return TagRegistry.load(list(self.config.registry.files))
        except Exception as e:  # a broken tag file stops the start, with its reason
            raise BridgeError(f"tag registry: {e}") from e

    def _opener(self) -> ReaderOpener:
        if self._open_reader is None:
            from firmware_bridge.readers import open_reader
            self._open_reader = open_reader
        return self._open_reader

    def _serve_sim_presses(self, gpio: TableGpio) -> None:
        """Simulated pins only: presses from another process (firmware_bridge/sim/buttons.py,
        a test-only hook for bridge-table club-night's director calls)."""
        import os
        from pathlib import Path

        from firmware_bridge.sim.buttons import ENV, serve_presses

        fifo = os.environ.get(ENV)
        if fifo:
            serve_presses(gpio.buttons, Path(fifo), pull_up=self.config.gpio.pull_up)

    def _setup_outputs(self) -> None:
        try:
            # a table with no LED and no button wired needs no GPIO library at all
            if self.config.gpio.seats or self.config.gpio.buttons:
                self.gpio = TableGpio(self.config.gpio, self._button_from_thread,
                                      pin_factory=self._pin_factory)
                if self.config.gpio.factory == "mock":
                    self._serve_sim_presses(self.gpio)
        except GpioError as e:
            # The cards still have to be read: carry on without LEDs and buttons. On the
            # simulated pins (factory "mock", a laptop without the [pi] extra) that is the
            # expected case, not a fault of the table.
            simulated = self.config.gpio.factory == "mock" and \
                isinstance(e.__cause__, MissingExtra)
            log.log(logging.INFO if simulated else logging.ERROR,
                    "%s: the table runs without LEDs and buttons", e)
            if not simulated:
                self.health.output_errors += 1
        if self.display is None:
            try:
                self.display = make_display(self.config.display, stream=self._stream,
                                            title=f"table {self.config.table.id}")
            except DisplayError as e:
                log.error("%s: the table runs without a display", e)
                self.health.output_errors += 1
                self.display = NullDisplay()

    # -- running -------------------------------------------------------------------------

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Run until ``stop`` is set (or forever, or until cancelled); always says
        ``offline``, leaves the LEDs dark and closes the spool."""
        outer = stop if stop is not None else asyncio.Event()
        # Our own stop: set by the caller's, and on the way out whatever the reason. The
        # publisher stops on it rather than by cancellation alone: on Python 3.11 a cancel can
        # be lost inside aiomqtt (asyncio.wait_for returning a result that came in together
        # with the cancel), and the task would then run on.
        stop = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        if self._registry is None:
            self._registry = self._load_registry()
        spool = Spool(self.config.spool.path, sync=self.config.spool.sync,
                      max_events=self.config.spool.max_events)
        self.publisher = Publisher(self.config, spool, on_message=self._on_message,
                                   on_connection=lambda _up: self._health_changed())
        self._setup_outputs()
        tasks: list[asyncio.Task[None]] = []
        publisher_task: asyncio.Task[None] | None = None
        try:
            publisher_task = asyncio.create_task(self.publisher.run(stop), name="publisher")
            tasks = [asyncio.create_task(self._run_reader(r, stop), name=f"reader {r.name}")
                     for r in self.config.readers]
            tasks.append(asyncio.create_task(self._health_loop(stop), name="health"))
            self._display_task = asyncio.create_task(self._display_loop(), name="display")
            tasks.append(self._display_task)
            self.ready.set()
            self._publish_health()
            await self._until_stopped(outer, publisher_task)
        finally:
            stop.set()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if publisher_task is not None:
                # it drains what it can, says "offline" and disconnects by itself
                await asyncio.wait({publisher_task}, timeout=PUBLISHER_GRACE)
                if not publisher_task.done():
                    publisher_task.cancel()
                    await asyncio.wait({publisher_task}, timeout=PUBLISHER_GRACE)
            if self._health_due is not None:
                self._health_due.cancel()
            if self._catch_up_timer is not None:
                self._catch_up_timer.cancel()
            if self.gpio is not None:
                self.gpio.close()
            if self.display is not None:
                with contextlib.suppress(Exception):
                    self.display.close()
            spool.close()
        if publisher_task is not None and publisher_task.done() and \
                not publisher_task.cancelled() and \
                isinstance(publisher_task.exception(), LoginRefused):
            raise publisher_task.exception()  # type: ignore[misc]

    @staticmethod
    async def _until_stopped(stop: asyncio.Event, publisher: asyncio.Task[None]) -> None:
        """Until ``stop``, or until the publisher ends on a login the broker refused at
        start (``controller.broker.login``: the command exits 2, the table's file or its
        credentials need an edit)."""
        stopped = asyncio.ensure_future(stop.wait())
        try:
            done, _ = await asyncio.wait({stopped, publisher},
                                         return_when=asyncio.FIRST_COMPLETED)
            if publisher in done and not publisher.cancelled() and \
                    isinstance(publisher.exception(), LoginRefused):
                return
            await stopped
        finally:
            stopped.cancel()

    async def _run_reader(self, rc: ReaderConfig, stop: asyncio.Event) -> None:
        state = self.health.readers[rc.name]
        delay = REOPEN_MIN
        while not stop.is_set():
            try:
                reader = self._opener()(rc.name, rc.url, kind=rc.kind, **dict(rc.options))
                state.kind = reader.kind
                if self.publisher is not None:
                    reader.restore_mark(self.publisher.spool.mark(rc.name))
                if reader.kind == "inventory" and self.publisher is not None:
                    reader.restore_lying(self.publisher.spool.lying(rc.name))
                if reader.catches_up:
                    reader.report_synced = True
                    self._begin_catch_up(rc.name)
                async with reader:
                    state.kind = reader.kind  # a simulated reader learns its kind on opening
                    state.open = state.connected = True
                    self._health_changed()
                    delay = REOPEN_MIN
                    async for item in reader:
                        self.handle(rc, item)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # a reader that cannot open or fails is retried, not fatal
                log.error("reader %s (%s): %s; retrying in %.1f s", rc.name, rc.url, e, delay)
                self._anomaly(state, "open_failed")
            finally:
                state.open = state.connected = False
                self._end_catch_up(rc.name)
            self._health_changed()
            await wait_event(stop, delay)
            delay = min(REOPEN_MAX, delay * 2)

    def _anomaly(self, state: _ReaderState, kind: str) -> None:
        state.anomalies[kind] = state.anomalies.get(kind, 0) + 1
        self._health_changed()

    # -- readers -> events -----------------------------------------------------------------

    def handle(self, rc: ReaderConfig, item: TagRead | ReaderHealth | ReaderSynced
               ) -> int | None:
        """One item from a reader; returns the seq of the event published, if any."""
        if isinstance(item, ReaderSynced):
            if item.line is not None:
                self._synced_lines[rc.name] = item.line
            self._end_catch_up(rc.name)
            if not self._holding():
                self._keep_synced_lines()
            return None
        if isinstance(item, ReaderHealth):
            if item.kind == "firmware_error" and self.collisions.reported(rc, item.detail):
                self._show_collisions()   # at once: the reader reads nothing meanwhile
            state = self.health.readers[rc.name]
            # the reader counts; keep its count (it knows about what happened before us)
            state.anomalies[item.kind] = max(item.count, state.anomalies.get(item.kind, 0))
            if item.kind == "disconnected" and state.connected:
                # it comes back with what it saw meanwhile: the others' events wait for it
                self._begin_catch_up(rc.name)
            if item.kind in _DOWN_KINDS:
                state.connected = False
            elif item.kind in _UP_KINDS:
                state.connected = True
            log.info("reader %s: %s (%s) #%d", rc.name, item.kind, item.detail, item.count)
            self._health_changed()
            return None
        if self.collisions.waiting and self.collisions.read_again(rc.name, item.antenna):
            self._show_collisions()   # the antenna reads again: the old tag has left
        # a later line of this reader: its event says how far the reader is passed on
        self._synced_lines.pop(rc.name, None)
        if self._holding():
            self._held.append((rc, item))
            return None
        return self._on_tag(rc, item)

    # -- catching up -------------------------------------------------------------------------

    def _holding(self) -> bool:
        return bool(self._catching_up) and self._catch_up_timer is not None

    def _keep_synced_lines(self) -> None:
        """Record where the readers caught up, now that what came before is published: a
        reader with no event yet (the bidding box before the first call) is replayed from
        there after a restart, not repaired out of order by its inventory."""
        lines, self._synced_lines = self._synced_lines, {}
        if self.publisher is not None:
            for reader, line in lines.items():
                self.publisher.spool.set_mark(reader, line)

    def _begin_catch_up(self, reader: str) -> None:
        self._catching_up.add(reader)
        if self._catch_up_timer is None and self._loop is not None:
            self._catch_up_timer = self._loop.call_later(CATCH_UP_MAX, self._release_held)

    def _end_catch_up(self, reader: str) -> None:
        self._catching_up.discard(reader)
        if not self._catching_up:
            self._release_held()

    def _release_held(self) -> None:
        """Publish the reads held while readers caught up, merged in the order of their
        times (each reader's own order kept): replayed lines carry the time they were first
        sent."""
        if self._catch_up_timer is not None:
            self._catch_up_timer.cancel()
            self._catch_up_timer = None
        if self._catching_up:
            log.warning("reader(s) %s not caught up in %.0f s: publishing what the others saw",
                        ", ".join(sorted(self._catching_up)), CATCH_UP_MAX)
            self._catching_up.clear()
        held, self._held = self._held, []
        for rc, read in sorted(held, key=lambda item: item[1].ts):
            self._on_tag(rc, read)
        self._keep_synced_lines()

    def _on_tag(self, rc: ReaderConfig, read: TagRead) -> int | None:
        antenna = rc.antennas.get(read.antenna)
        if antenna is None:
            # no zone, so no contract event; health carries the read so it is not lost unseen
            self.health.unmapped_antennas += 1
            self.health.last_unmapped = {"reader": rc.name, "antenna": read.antenna,
                                         "uid": read.uid.upper(), "action": read.action,
                                         "ts": read.ts}
            if (rc.name, read.antenna) not in self._warned_antennas:
                self._warned_antennas.add((rc.name, read.antenna))
                log.warning("reader %s: antenna %r is not in the config; its tags are dropped",
                            rc.name, read.antenna)
            self._health_changed()
            return None
        uid = read.uid.upper()
        self._note_sighting(rc, read, uid)
        assert self._registry is not None
        info: Any = self._registry.lookup(uid)
        kind = getattr(info, "kind", None)
        what: dict[str, Any]
        if kind == "card":
            what = {"card": info.card, "deck": info.deck}
        elif kind == "call":
            what = {"call": info.call}
        elif kind == "marker":
            what = {"call": info.marker}  # STOP / ALERT: bidding-box markers, as the contract says
        elif kind == "board":
            what = {"board": info.board}
        else:
            what = {"unknown": True}
            self.health.unknown_tags += 1
            self._health_changed()
        # zone and seat come from the validated config (firmware_bridge.config); the
        # publisher numbers the event (seq, boot)
        event = wire.TagEvent(v=wire.VERSION, src=self.config.table.src, seq=0, ts=read.ts,
                              zone=Zone(antenna.zone), seat=cast(Any, antenna.seat),
                              action=Action(read.action), uid=uid, **what)
        held = self.health.readers[rc.name].kind == "inventory"
        return self._publish(event, lying=(rc.name, read.antenna, uid, read.action) if held
                             else None,
                             mark=None if read.line is None else (rc.name, *read.line))

    def _note_sighting(self, rc: ReaderConfig, read: TagRead, uid: str) -> None:
        """A tag present at two places at once is a duplicate sighting: counted, logged,
        and the event still goes out (the controller decides what it means)."""
        where = (rc.name, read.antenna)
        places = self._sightings.setdefault(uid, {})
        if read.action == "removed":
            places.pop(where, None)
            if not places:
                del self._sightings[uid]
            return
        window = self.config.health.duplicate_window
        for place, (ts, held) in list(places.items()):
            if not held and read.ts - ts > window:
                del places[place]  # a tap long ago
        others = sorted(place for place in places if place != where)
        if others:
            self.health.duplicate_sightings += 1
            self.health.last_duplicate = {
                "uid": uid, "ts": read.ts, "at": f"{rc.name}/{read.antenna}",
                "also": [f"{r}/{a}" for r, a in others]}
            log.warning("tag %s seen by %s/%s while also at %s", uid, rc.name, read.antenna,
                        ", ".join(f"{r}/{a}" for r, a in others))
            self._health_changed()
        held = self.health.readers[rc.name].kind != "tap"
        places[where] = (read.ts, held)

    def _publish(self, body: wire.Event | Mapping[str, Any], *,
                 lying: tuple[str, str, str, str] | None = None,
                 mark: tuple[str, int, str, str, str] | None = None) -> int | None:
        if self.publisher is None:
            return None
        self.health.events += 1
        try:
            return self.publisher.publish_event(body, lying=lying, mark=mark)
        except BridgeError as e:  # spool full or write failed: say so loudly, keep going
            log.error("event lost, the spool cannot take it: %s (%s)", e, body)
            self.health.output_errors += 1
            self.health.spool_refused += 1
            self._health_changed()
            return None

    # -- buttons ---------------------------------------------------------------------------

    def _button_from_thread(self, button: str, seat: str | None, ts: float) -> None:
        # gpiozero calls from its own thread; events are made on the loop's
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.press, button, seat, ts)

    def press(self, button: str, seat: str | None, ts: float | None = None) -> int | None:
        """A button press -> a ``button`` event."""
        body = wire.ButtonEvent(v=wire.VERSION, src=self.config.table.src, seq=0,
                                ts=time.time() if ts is None else ts,
                                button=Button(button), seat=cast(Any, seat))
        self.health.buttons += 1
        return self._publish(body)

    # -- indicator -> LEDs and display ----------------------------------------------------

    def _on_message(self, topic: str, payload: bytes) -> None:
        if self.publisher is None or topic != self.publisher.indicator_topic:
            return
        try:
            indicator = parse_indicator(payload, self.config.table.id)
        except IndicatorError as e:
            self.health.bad_indicators += 1
            self.health.last_bad_indicator = str(e)
            log.warning("indicator ignored: %s: %r", e, payload[:200])
            self._health_changed()
            return
        self.show(indicator)

    def show(self, indicator: Indicator) -> None:
        """LEDs now; the display from its own thread (an HD44780 on I2C takes tens of ms for a
        screenful, which must not hold up the events), the latest indicator winning."""
        self.indicator = indicator
        if self.collisions.waiting:   # what the players must do first (collisions.py)
            seats, display = self.collisions.overlay(dict(indicator.seats),
                                                     dict(indicator.display))
            indicator = Indicator(seats=seats, display=display)
        try:
            if self.gpio is not None:
                self.gpio.show(indicator.seats)
        except Exception as e:  # a GPIO hiccup must not stop the bridge
            self._output_error("LEDs", e)
        self._display_wanted = indicator
        if self._display_task is not None and not self._display_task.done():
            self._display_wake.set()
        else:  # not running (a test, or before run()): draw here
            self._draw(indicator)

    def _show_collisions(self) -> None:
        """The last indicator again, with the collisions waiting (or without, cleared)."""
        self.show(self.indicator if self.indicator is not None
                  else Indicator(seats={}, display={}))

    def _draw(self, indicator: Indicator) -> None:
        try:
            if self.display is not None:
                self.display.show_indicator(indicator.display, self.config.table.language)
        except Exception as e:  # an I2C hiccup must not stop the bridge
            self._output_error("display", e)

    def _output_error(self, what: str, error: Exception) -> None:
        log.error("cannot drive the %s: %s", what, error)
        self.health.output_errors += 1
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._health_changed)

    async def _display_loop(self) -> None:
        loop = asyncio.get_running_loop()
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="display") as pool:
            while True:
                await self._display_wake.wait()
                self._display_wake.clear()
                indicator = self._display_wanted
                if indicator is not None:
                    await loop.run_in_executor(pool, self._draw, indicator)

    # -- health ----------------------------------------------------------------------------

    def health_payload(self) -> dict[str, Any]:
        h = self.health
        publisher = self.publisher
        return {
            "v": wire.VERSION, "src": self.config.table.src, "table": self.config.table.id,
            "ts": time.time(),
            "connected": bool(publisher and publisher.connected.is_set()),
            "spool_depth": publisher.spool.depth() if publisher else 0,
            "spool_max": self.config.spool.max_events,
            "spool_refused": h.spool_refused,
            "next_seq": publisher.spool.next_seq if publisher else None,
            "boot": publisher.boot if publisher else None,
            "acked_seq": publisher.acked_seq if publisher else None,
            "resends": publisher.resends if publisher else 0,
            "readers": {name: {"kind": s.kind, "open": s.open, "connected": s.connected,
                               "anomalies": dict(s.anomalies)}
                        for name, s in h.readers.items()},
            "events": h.events, "buttons": h.buttons,
            "unknown_tags": h.unknown_tags,
            "duplicate_sightings": h.duplicate_sightings,
            "last_duplicate": h.last_duplicate,
            "unmapped_antennas": h.unmapped_antennas,
            "last_unmapped": h.last_unmapped,
            "bad_indicators": h.bad_indicators,
            "last_bad_indicator": h.last_bad_indicator,
            "output_errors": h.output_errors,
        }

    def _publish_health(self) -> None:
        self._health_due = None
        if self.publisher is not None:
            self.publisher.publish_health(self.health_payload())

    def _health_changed(self) -> None:
        if self._loop is None or self._health_due is not None:
            return
        self._health_due = self._loop.call_later(HEALTH_COALESCE, self._publish_health)

    async def _health_loop(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not await wait_event(stop, self.config.health.interval):
                self._publish_health()


async def run_until_signal(bridge: Bridge) -> None:
    """``bridge.run`` until SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await bridge.run(stop)
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.remove_signal_handler(sig)
