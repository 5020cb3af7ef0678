"""Reader backends behind one interface, chosen by URL scheme and imported lazily.

>>> reader = open_reader("north", "serial:///dev/ttyUSB0?baudrate=115200")   # doctest: +SKIP
>>> async with reader:                                                          # doctest: +SKIP
...     async for item in reader: ...

Schemes: ``serial://PATH`` (docs/serial-protocol.md firmware), ``nfc://DEVICE`` (nfcpy:
``nfc://tty:AMA0:pn532``, ``nfc://usb:054c:06c1``, ``nfc://udp:127.0.0.1:54321``),
``sim://TABLE/READER`` (a simulated reader firmware on a pseudo-terminal, read through the real
serial path) and ``memory://CHANNEL`` (in-process, fed by a program: ``readers.memory``). Like
python-can's interfaces, a backend module is imported only when used, so a table without NFC
readers never imports nfcpy; another distribution adds a scheme through the entry-point group
``bridge_table.readers`` (docs/config.md, "Adding a reader or display backend").
"""

from __future__ import annotations

from typing import Any

from firmware_bridge.backends import BackendUnavailable, Registry, UnknownBackend
from firmware_bridge.readers.base import (
    Action,
    Reader,
    ReaderError,
    ReaderHealth,
    ReaderKind,
    TagRead,
)

__all__ = [
    "BACKENDS", "READERS", "open_reader", "reader_schemes", "Reader", "ReaderError",
    "ReaderHealth", "ReaderKind", "TagRead", "Action",
]

#: URL scheme -> reader class (``from_url(name, url, *, kind, **options)``), one line a
#: backend; third-party backends register under the entry-point group instead.
READERS = Registry("reader", "bridge_table.readers", {
    "serial": "firmware_bridge.readers.serial:SerialReader",
    "nfc": "firmware_bridge.readers.nfc:NfcReader",
    "sim": "firmware_bridge.sim.reader:SimReader",
    "memory": "firmware_bridge.readers.memory:MemoryReader",
    # chips wired straight to the Pi (firmware_bridge/readers/chipreader.py)
    "mfrc522": "firmware_bridge.readers.mfrc522:Mfrc522Reader",
    "pn532": "firmware_bridge.readers.pn532:Pn532Reader",
})
#: the built-in table itself (kept for code that read it before the registry)
BACKENDS: dict[str, str] = READERS.builtins


def reader_schemes() -> tuple[str, ...]:
    """Every URL scheme a table file may use: built in and from installed plug-ins."""
    return READERS.names()


def open_reader(name: str, url: str, *, kind: str | None = None, **options: Any) -> Reader:
    """A reader for ``url`` (not yet started: use it as an async context manager).

    ``kind`` ("inventory" or "tap") overrides the backend's default; ``options`` are the
    backend's keyword arguments (``debounce``, ``baudrate``, ...) and win over the URL's query.
    Raises ReaderError for an unknown scheme, a backend that cannot be loaded (its extra
    not installed) or bad options.
    """
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise ReaderError(f"reader {name!r}: URL {url!r} has no scheme "
                          f"({', '.join(s + '://' for s in reader_schemes())})")
    try:
        cls = READERS.load(scheme)
    except UnknownBackend:
        raise ReaderError(f"reader {name!r}: unknown scheme {scheme!r} "
                          f"(known: {', '.join(reader_schemes())})") from None
    except BackendUnavailable as error:
        raise ReaderError(f"reader {name!r}: {error}") from error
    try:
        reader = cls.from_url(name, url, kind=kind, **options)
    except TypeError as error:  # an option the backend does not take
        raise ReaderError(f"reader {name!r}: {error}") from error
    if not isinstance(reader, Reader):
        raise ReaderError(f"reader {name!r}: backend {scheme!r} made {reader!r}, not a Reader")
    return reader
