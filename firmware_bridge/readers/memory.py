"""In-process reader backend: ``memory://CHANNEL``, as python-can ships its virtual bus.

A program (a test, a demonstration, a tool that replays recorded reads) writes tag reads
into a named channel; every reader open on that channel delivers them through the same
:class:`~firmware_bridge.readers.base.Reader` path as real hardware (kind semantics,
debounce, health counts). No device, no pseudo-terminal, no thread.

>>> from firmware_bridge.readers import memory, open_reader
>>> north = memory.channel("5/north")
>>> reader = open_reader("north", "memory://5/north?kind=inventory")
>>> north.see("0", "04A1B2C3D4E5F6")           # delivered once the reader is open

What is written while no reader is open waits for the next reader to open (a card lying on
a reader is seen when it opens). Options (query or keyword): ``kind`` (default
``inventory``) and ``debounce`` (default 0: written reads do not flicker). A channel can be
told to ``refuse`` opening, to exercise the bridge's reopening.
"""

from __future__ import annotations

import asyncio
import functools
import threading
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from firmware_bridge.readers.base import (
    Action,
    Reader,
    ReaderError,
    ReaderKind,
    options_from_query,
)

__all__ = ["MemoryChannel", "MemoryReader", "channel", "channels", "parse_memory_url", "reset"]


@dataclass(frozen=True)
class _Tag:
    antenna: str
    uid: str
    action: Action
    ts: float | None


@dataclass(frozen=True)
class _Health:
    kind: str
    detail: str


class MemoryChannel:
    """A named channel: what is written to it reaches every reader open on it."""

    def __init__(self, name: str) -> None:
        self.name = name
        #: the readers open on this channel now
        self.readers: list[MemoryReader] = []
        #: written while no reader was open: delivered to the next one to open
        self.backlog: list[_Tag | _Health] = []
        #: when set, opening a reader on this channel fails with this reason (OSError)
        self.refuse: str | None = None
        #: how many times a reader opened on this channel
        self.opened = 0
        self._lock = threading.Lock()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None], int]] = []

    def see(self, antenna: str, uid: str, action: Action = "present",
            ts: float | None = None) -> None:
        """A tag comes onto (``present``) or leaves (``removed``) an antenna. From any
        thread; ``ts`` defaults to when the reader receives it."""
        if action not in ("present", "removed"):
            raise ReaderError(f"memory channel {self.name!r}: action must be 'present' or "
                              f"'removed', not {action!r}")
        self._write(_Tag(antenna, uid, action, ts))

    def remove(self, antenna: str, uid: str, ts: float | None = None) -> None:
        self.see(antenna, uid, "removed", ts)

    def report(self, kind: str, detail: str = "") -> None:
        """A reader anomaly (``crc_error``, ``disconnected``...), counted like a device's."""
        self._write(_Health(kind, detail))

    async def wait_open(self, count: int = 1) -> None:
        """Until readers have opened on this channel ``count`` times in all."""
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.opened >= count:
                return
            future: asyncio.Future[None] = loop.create_future()
            self._waiters.append((loop, future, count))
        await future

    def _write(self, item: _Tag | _Health) -> None:
        with self._lock:
            readers = list(self.readers)
            if not readers:
                self.backlog.append(item)
                return
        for reader in readers:
            reader.deliver(item)

    def attach(self, reader: MemoryReader) -> None:
        """A reader opened on this channel: it gets what waited, then every read."""
        with self._lock:
            if self.refuse is not None:
                raise OSError(f"memory channel {self.name!r}: {self.refuse}")
            self.readers.append(reader)
            self.opened += 1
            backlog, self.backlog = self.backlog, []
            ready = [(loop, fut) for loop, fut, n in self._waiters if self.opened >= n]
            self._waiters = [w for w in self._waiters if self.opened < w[2]]
        for item in backlog:
            reader.deliver(item)
        for loop, fut in ready:
            loop.call_soon_threadsafe(_resolve, fut)

    def detach(self, reader: MemoryReader) -> None:
        """A reader of this channel closed."""
        with self._lock:
            if reader in self.readers:
                self.readers.remove(reader)


def _resolve(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_CHANNELS: dict[str, MemoryChannel] = {}
_CHANNELS_LOCK = threading.Lock()


def channel(name: str) -> MemoryChannel:
    """The channel of that name in this process (made on first use)."""
    with _CHANNELS_LOCK:
        found = _CHANNELS.get(name)
        if found is None:
            found = _CHANNELS[name] = MemoryChannel(name)
        return found


def channels() -> dict[str, MemoryChannel]:
    """Every channel of this process, by name."""
    with _CHANNELS_LOCK:
        return dict(_CHANNELS)


def reset() -> None:
    """Forget every channel (what was written and not read is dropped)."""
    with _CHANNELS_LOCK:
        _CHANNELS.clear()


def parse_memory_url(url: str) -> tuple[str, dict[str, str]]:
    """``memory://5/north?kind=tap`` -> ("5/north", {"kind": "tap"})."""
    parts = urllib.parse.urlsplit(url)
    name = urllib.parse.unquote(parts.netloc + parts.path).strip("/")
    if parts.scheme != "memory" or not name:
        raise ReaderError(f"not a memory reader URL (memory://CHANNEL): {url!r}")
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(parts.query).items()}
    return name, query


class MemoryReader(Reader):
    """A reader of a :class:`MemoryChannel`; ``see``/``report`` also write to it directly."""

    def __init__(self, name: str, channel_name: str | None = None, *,
                 kind: ReaderKind = "inventory", debounce: float = 0.0) -> None:
        super().__init__(name, kind=kind, debounce=debounce)
        self.channel = channel(channel_name if channel_name is not None else name)
        self._loop: asyncio.AbstractEventLoop | None = None

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> MemoryReader:
        channel_name, query = parse_memory_url(url)
        merged = options_from_query("memory", query, numbers=("debounce",))
        merged |= options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, channel_name, **merged)

    def see(self, antenna: str, uid: str, action: Action = "present",
            ts: float | None = None) -> None:
        """Straight into this reader (on its event loop), as if its channel saw it."""
        self._tag(antenna, uid, action, ts)

    async def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.channel.attach(self)

    async def _stop(self) -> None:
        self.channel.detach(self)

    def deliver(self, item: _Tag | _Health) -> None:
        """One read or health item from the channel, onto this reader's event loop."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return
        call: Callable[[], object] = (
            functools.partial(self._tag, item.antenna, item.uid, item.action, item.ts)
            if isinstance(item, _Tag) else functools.partial(self._health, item.kind, item.detail))
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            call()
        else:
            loop.call_soon_threadsafe(call)
