"""Serial reader backend: reader firmware speaking docs/serial-protocol.md on a USB or UART port.

``serial:///dev/ttyUSB0?baudrate=115200&debounce=0.15&heartbeat_timeout=5``

The port is opened with pyserial through ``serial_asyncio_fast``. When it vanishes (unplugged,
EIO) the reader reports ``disconnected``, keeps trying to open the same path every
``reconnect_interval`` seconds, reports ``reconnected``, asks the firmware to replay its lines
from the last one passed on (in order, as they happened) and for a full inventory, whose
difference with the last known state becomes the present/removed reads of whatever the replay
could not give; then ``ReaderSynced``. Everything the line protocol can go wrong with is a
counted ReaderHealth.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import urllib.parse
from collections.abc import Callable
from typing import Any

import serial_asyncio_fast

from firmware_bridge.protocol import (
    Anomaly,
    Command,
    CommandOp,
    Frame,
    HostSession,
    LineDecoder,
    Mark,
    SendCommand,
    Synced,
    TagChange,
    encode_command,
)
from firmware_bridge.readers.base import (
    LineMark,
    Reader,
    ReaderError,
    ReaderKind,
    options_from_query,
)

__all__ = ["SerialReader", "parse_serial_url", "serial_options"]


def parse_serial_url(url: str) -> tuple[str, dict[str, str]]:
    """``serial:///dev/ttyUSB0?baudrate=9600`` -> ("/dev/ttyUSB0", {"baudrate": "9600"}).

    ``serial://var/sim/north`` (no third slash) is the relative path ``var/sim/north``.
    """
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "serial":
        raise ReaderError(f"not a serial URL: {url!r}")
    path = urllib.parse.unquote(parts.netloc + parts.path)
    if not path:
        raise ReaderError(f"serial URL without a device path: {url!r}")
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
    return path, query


_FLOAT_OPTIONS = ("debounce", "reconnect_interval", "heartbeat_timeout")


def serial_options(query: dict[str, str]) -> dict[str, Any]:
    """A serial reader's options from its URL's query (the simulated reader's too)."""
    return options_from_query("serial", query, numbers=_FLOAT_OPTIONS, integers=("baudrate",),
                              strings=("kind", "reader_id"))


class SerialReader(Reader):
    """A reader on a serial port. ``reader_id``, if given, is the id its firmware must report."""

    catches_up = True

    def __init__(
        self,
        name: str,
        port: str,
        *,
        kind: ReaderKind = "inventory",
        baudrate: int = 115200,
        debounce: float = 0.15,
        reconnect_interval: float = 0.5,
        heartbeat_timeout: float = 5.0,
        reader_id: str | None = None,
        on_frame: Callable[[Frame], None] | None = None,
    ) -> None:
        super().__init__(name, kind=kind, debounce=debounce)
        if reconnect_interval <= 0 or heartbeat_timeout <= 0:
            raise ReaderError(f"reader {name!r}: intervals must be > 0")
        self.port = port
        self.baudrate = baudrate
        self.reconnect_interval = reconnect_interval
        self.heartbeat_timeout = heartbeat_timeout
        self.session = HostSession(reader_id)
        #: Called with every valid frame, after it is applied (the simulator's delivery receipt).
        self.on_frame = on_frame
        self.connected = asyncio.Event()
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> SerialReader:
        port, query = parse_serial_url(url)
        merged = serial_options(query) | options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, port, **merged)

    def restore_lying(self, lying: dict[str, set[str]]) -> None:
        """Start the host's view from what lay on the antennas (the bridge's record): the
        first inventory then reports as ``removed`` what went away and as ``present`` only
        what came, and counts as a ``resync``."""
        self.session.restore(lying, self._mark())

    def restore_mark(self, mark: LineMark | None) -> None:
        super().restore_mark(mark)
        restored = self._mark()
        if restored is not None:
            self.session.mark = restored

    def _mark(self) -> Mark | None:
        return None if self.restored_mark is None else Mark.from_row(self.restored_mark)

    async def _start(self) -> None:
        self._stopping = False
        self._task = asyncio.create_task(self._run(), name=f"serial-reader-{self.name}")

    async def _stop(self) -> None:
        self._stopping = True
        if self._task is not None:
            while not self._task.done():
                self._task.cancel()
                # Bounded: if a library swallows one cancellation, cancel again.
                await asyncio.wait({self._task}, timeout=1.0)
            with contextlib.suppress(asyncio.CancelledError):
                self._task.result()
            self._task = None
        self._close_writer()

    def send(self, command: Command) -> None:
        """Send a host command now (dropped while the port is down: the link-up inventory
        request covers what matters)."""
        if self._writer is not None:
            self._writer.write(encode_command(command.op, command.args))

    def _close_writer(self) -> None:
        if self._writer is not None:
            with contextlib.suppress(Exception):
                self._writer.close()
            self._writer = None
        self.connected.clear()

    async def _run(self) -> None:
        ever_up = False
        down = False
        while not self._stopping:
            try:
                # exclusive: a second bridge (or a terminal program) on the same reader
                # would share its lines, each getting some: it is refused, and says so
                reader, writer = await serial_asyncio_fast.open_serial_connection(
                    url=self.port, baudrate=self.baudrate, exclusive=True)
            except Exception as error:  # noqa: BLE001 - whatever the port does, retry later
                # (pyserial raises SerialException, OSError, ValueError, and termios.error
                # straight from tcsetattr when a device goes away while being opened.)
                if not down:
                    self._health("disconnected", f"cannot open {self.port}: "
                                                 f"{type(error).__name__}: {error}")
                    down = True
                await asyncio.sleep(self.reconnect_interval)
                continue
            if ever_up or down:
                self._health("reconnected", f"{self.port} is back")
            ever_up, down = True, False
            self._writer = writer
            self.connected.set()
            self._apply(self.session.link_up(time.time()))
            try:
                reason = await self._read(reader)
            except Exception as error:  # noqa: BLE001 - a dying port must not kill the reader
                reason = f"{self.port}: {type(error).__name__}: {error}"
            self._close_writer()
            self.session.link_lost()
            self._health("disconnected", reason)
            down = True
            await asyncio.sleep(self.reconnect_interval)

    async def _read(self, reader: asyncio.StreamReader) -> str:
        decoder = LineDecoder()
        silent = False
        while True:
            try:
                # asyncio.timeout, not wait_for: 3.11's wait_for can swallow our cancellation
                # when the read fails at the same moment (port unplugged while closing).
                async with asyncio.timeout(self.heartbeat_timeout):
                    data = await reader.read(4096)
            except TimeoutError:
                if not silent:
                    silent = True
                    self._health("heartbeat_lost",
                                 f"nothing from {self.port} for {self.heartbeat_timeout:g} s")
                self.send(Command(CommandOp.PING, ("alive?",)))
                continue
            if not data:
                return f"{self.port}: end of file"
            if silent:
                silent = False
                self._health("heartbeat_back", f"{self.port} talks again")
            now = time.time()
            for item in decoder.feed(data):
                self._apply(self.session.handle(item, now))
                if isinstance(item, Frame) and self.on_frame is not None:
                    self.on_frame(item)

    def _apply(self, outputs: list[Any]) -> None:
        for out in outputs:
            if isinstance(out, TagChange):
                ts = None if out.hw_time_ms is None else out.hw_time_ms / 1000
                self._tag(str(out.antenna), out.uid, out.action, ts,
                          None if out.line is None else out.line.row())
            elif isinstance(out, Synced):
                self._synced(out.line.row())
            elif isinstance(out, Anomaly):
                self._health(out.kind, out.detail)
            elif isinstance(out, SendCommand):
                self.send(out.command)
