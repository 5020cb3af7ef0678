"""Reader backends behind one interface, chosen by URL scheme and imported lazily.

>>> reader = open_reader("north", "serial:///dev/ttyUSB0?baudrate=115200")   # doctest: +SKIP
>>> async with reader:                                                          # doctest: +SKIP
...     async for item in reader: ...

Schemes: ``serial://PATH`` (docs/serial-protocol.md firmware), ``nfc://DEVICE`` (nfcpy:
``nfc://tty:AMA0:pn532``, ``nfc://usb:054c:06c1``, ``nfc://udp:127.0.0.1:54321``) and
``sim://TABLE/READER`` (a simulated reader firmware on a pseudo-terminal, read through the real
serial path). Like python-can's interfaces, a backend module is imported only when used, so a
table without NFC readers never imports nfcpy.
"""

from __future__ import annotations

import importlib
from typing import Any

from firmware_bridge.readers.base import (
    Action,
    Reader,
    ReaderError,
    ReaderHealth,
    ReaderKind,
    TagRead,
)

__all__ = [
    "BACKENDS", "open_reader", "Reader", "ReaderError", "ReaderHealth", "ReaderKind", "TagRead",
    "Action",
]

#: URL scheme -> "module:Class"; each class has ``from_url(name, url, *, kind, **options)``.
BACKENDS: dict[str, str] = {
    "serial": "firmware_bridge.readers.serial:SerialReader",
    "nfc": "firmware_bridge.readers.nfc:NfcReader",
    "sim": "firmware_bridge.readers.sim:SimReader",
    # chips wired straight to the Pi (firmware_bridge/readers/chipreader.py)
    "mfrc522": "firmware_bridge.readers.mfrc522:Mfrc522Reader",
    "pn532": "firmware_bridge.readers.pn532:Pn532Reader",
}


def open_reader(name: str, url: str, *, kind: str | None = None, **options: Any) -> Reader:
    """A reader for ``url`` (not yet started: use it as an async context manager).

    ``kind`` ("inventory" or "tap") overrides the backend's default; ``options`` are the
    backend's keyword arguments (``debounce``, ``baudrate``, ...) and win over the URL's query.
    Raises ReaderError for an unknown scheme or bad options.
    """
    scheme, sep, _ = url.partition("://")
    if not sep:
        raise ReaderError(f"reader {name!r}: URL {url!r} has no scheme (serial://, nfc://, sim://)")
    target = BACKENDS.get(scheme)
    if target is None:
        raise ReaderError(
            f"reader {name!r}: unknown scheme {scheme!r} (known: {', '.join(sorted(BACKENDS))})")
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ReaderError(f"reader {name!r}: backend {scheme!r} unavailable: {error}") from error
    cls = getattr(module, class_name)
    try:
        reader: Reader = cls.from_url(name, url, kind=kind, **options)
    except TypeError as error:  # an option the backend does not take
        raise ReaderError(f"reader {name!r}: {error}") from error
    return reader
