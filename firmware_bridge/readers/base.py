"""What every reader backend gives the bridge: normalised tag reads and counted anomalies.

A :class:`Reader` is an async context manager and an async iterator of
``TagRead | ReaderHealth``. Backends push raw observations through :meth:`Reader._tag`
(which applies the reader kind's semantics and the debounce) and :meth:`Reader._health`
(which counts). Nothing a device does raises out of the iterator.
"""

from __future__ import annotations

import abc
import asyncio
import collections
import time
from collections.abc import AsyncIterator, Collection, Mapping
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Final, Literal

__all__ = ["TagRead", "ReaderHealth", "Reader", "ReaderKind", "Action", "ReaderError",
           "options_from_query"]

ReaderKind = Literal["inventory", "tap"]
Action = Literal["present", "removed"]


class ReaderError(Exception):
    """Base of the reader package's exceptions: bad URL, unknown scheme, bad options.

    Raised only when a reader is set up; a running reader reports trouble as ReaderHealth.
    """


def options_from_query(scheme: str, query: Mapping[str, str], *,
                       numbers: Collection[str] = (), integers: Collection[str] = (),
                       strings: Collection[str] = ("kind",)) -> dict[str, Any]:
    """A reader URL's query (``?debounce=0.1&kind=tap``) as keyword options for its backend:
    ``numbers`` become floats, ``integers`` ints, ``strings`` stay; any other key, or a
    number that is not one, is a ReaderError naming the scheme."""
    options: dict[str, Any] = {}
    for key, value in query.items():
        try:
            if key in integers:
                options[key] = int(value)
            elif key in numbers:
                options[key] = float(value)
            elif key in strings:
                options[key] = value
            else:
                raise ReaderError(f"unknown {scheme} reader option {key!r}")
        except ValueError:
            raise ReaderError(f"{scheme} reader option {key}={value!r} is not a number") \
                from None
    return options


#: a reader line, as ``firmware_bridge.protocol.Mark.row`` writes it
LineMark = tuple[int, str, str, str]


@dataclass(frozen=True)
class TagRead:
    """A tag seen or gone, already debounced and normalised (UID upper-case hex)."""

    reader: str
    antenna: str
    uid: str
    action: Action
    ts: float  # seconds since the epoch, when the hardware saw it
    #: the reader line that said so, if the backend numbers its lines (serial): (seq,
    #: antenna or "-", op, args), ``firmware_bridge.protocol.Mark.row``
    line: LineMark | None = None


@dataclass(frozen=True)
class ReaderSynced:
    """The reader has caught up after it was (re)opened: what it saw meanwhile has been
    reported (replayed in order, or repaired by an inventory); what follows is live. Only
    from backends with ``catches_up``, to a user that set ``report_synced``. ``line``: the
    line that said so, a mark to replay from once everything before it is passed on."""

    reader: str
    line: LineMark | None = None


@dataclass(frozen=True)
class ReaderHealth:
    """One anomaly of a reader; ``count`` is how many of this ``kind`` so far (1, 2, ...)."""

    reader: str
    #: line: crc_error, malformed, overlong, noise, truncated; sequence: gap, seq_backwards,
    #: resync (an inventory repaired lost changes), reset (reader rebooted), reader_id (the
    #: firmware reports another id); device: firmware_error, disconnected, reconnected,
    #: heartbeat_lost, heartbeat_back
    kind: str
    detail: str
    count: int


_CLOSED: Final = object()


class Reader(abc.ABC):
    """One reader device. Use as ``async with reader: async for item in reader: ...``.

    ``kind`` says what the hardware can see: ``inventory`` readers keep seeing a tag lying on
    them and report ``removed``; ``tap`` readers only see a tag held to them: ``present`` only,
    and a tag tapped again within ``debounce`` seconds is one tap.

    For inventory readers, ``debounce`` holds back a ``removed`` for that long: if the same tag is
    back on the same antenna in the meantime (a card nudged at the edge of the field), neither
    the removal nor the return is reported.
    """

    def __init__(self, name: str, *, kind: ReaderKind = "inventory",
                 debounce: float = 0.15) -> None:
        if kind not in ("inventory", "tap"):
            raise ReaderError(f"reader {name!r}: kind must be 'inventory' or 'tap', not {kind!r}")
        if debounce < 0:
            raise ReaderError(f"reader {name!r}: debounce must be >= 0")
        self.name = name
        self.kind: ReaderKind = kind
        self.debounce = debounce
        self.health_counts: collections.Counter[str] = collections.Counter()
        self._queue: asyncio.Queue[TagRead | ReaderHealth | ReaderSynced | object] = \
            asyncio.Queue()
        self._pending_removal: dict[tuple[str, str], tuple[TagRead, asyncio.TimerHandle]] = {}
        self._last_tap: dict[tuple[str, str], float] = {}
        self._closed = False
        self.restored: dict[str, set[str]] = {}
        self.restored_mark: LineMark | None = None

    #: the backend says ``ReaderSynced`` once it has caught up after each opening
    catches_up = False
    #: the user wants the ``ReaderSynced`` items (the bridge); others never see them
    report_synced = False

    # ------------------------------------------------------------------ for users

    async def __aenter__(self) -> Reader:
        self._closed = False
        await self._start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._closed = True
        await self._stop()
        # A removal held back by the debounce is real by now: deliver it rather than lose it.
        self._flush_removals()
        self._queue.put_nowait(_CLOSED)

    def restore_lying(self, lying: dict[str, set[str]]) -> None:
        """What lay on each antenna (antenna -> UIDs) when this reader was last seen, before
        it is opened: a backend that lists what lies on it (an inventory) reports only what
        differs. Backends that cannot list keep it for whoever asks (``restored``)."""
        self.restored = {antenna: set(uids) for antenna, uids in lying.items()}

    def restore_mark(self, mark: LineMark | None) -> None:
        """The last line of this reader passed on (``TagRead.line``), before it is opened. A
        backend that can replay its lines starts there."""
        self.restored_mark = mark

    def __aiter__(self) -> AsyncIterator[TagRead | ReaderHealth | ReaderSynced]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[TagRead | ReaderHealth | ReaderSynced]:
        while True:
            item = await self._queue.get()
            if item is _CLOSED:
                return
            if isinstance(item, ReaderSynced) and not self.report_synced:
                continue
            assert isinstance(item, TagRead | ReaderHealth | ReaderSynced)
            yield item

    # ------------------------------------------------------------------ for backends

    @abc.abstractmethod
    async def _start(self) -> None:
        """Open the device and start delivering (may return before the device is up)."""

    @abc.abstractmethod
    async def _stop(self) -> None:
        """Stop delivering and release the device."""

    def _health(self, kind: str, detail: str) -> ReaderHealth:
        self.health_counts[kind] += 1
        item = ReaderHealth(self.name, kind, detail, self.health_counts[kind])
        self._queue.put_nowait(item)
        return item

    def _tag(self, antenna: str, uid: str, action: Action, ts: float | None = None,
             line: LineMark | None = None) -> None:
        """Report a raw observation; kind semantics and debounce are applied here."""
        if self._closed:
            return
        ts = time.time() if ts is None else ts
        key = (antenna, uid)
        if self.kind == "tap":
            if action != "present":
                return
            last = self._last_tap.get(key)
            self._last_tap[key] = ts
            if last is not None and ts - last < self.debounce:
                return
            self._queue.put_nowait(TagRead(self.name, antenna, uid, "present", ts, line))
            return
        if action == "removed":
            if self.debounce <= 0:
                self._queue.put_nowait(TagRead(self.name, antenna, uid, "removed", ts, line))
                return
            read = TagRead(self.name, antenna, uid, "removed", ts, line)
            if key in self._pending_removal:
                return
            handle = asyncio.get_running_loop().call_later(
                self.debounce, self._release_removal, key)
            self._pending_removal[key] = (read, handle)
            return
        pending = self._pending_removal.pop(key, None)
        if pending is not None:
            pending[1].cancel()  # back within the window: it never left, as far as anyone cares
            return
        # Another tag arrives: removals held back must go first, or the order of events changes
        # meaning (a card taken back, then another played, is not two cards on the trick).
        self._flush_removals()
        self._queue.put_nowait(TagRead(self.name, antenna, uid, "present", ts, line))

    def _synced(self, line: LineMark | None = None) -> None:
        """For backends: caught up. Removals held back by the debounce go first (they are
        part of what happened meanwhile)."""
        self._flush_removals()
        self._queue.put_nowait(ReaderSynced(self.name, line))

    def _flush_removals(self) -> None:
        for read, handle in self._pending_removal.values():
            handle.cancel()
            self._queue.put_nowait(read)
        self._pending_removal.clear()

    def _release_removal(self, key: tuple[str, str]) -> None:
        pending = self._pending_removal.pop(key, None)
        if pending is not None:
            self._queue.put_nowait(pending[0])
