"""NFC reader backend: a PN532/PN533/RC-S380... through nfcpy.

``nfc://tty:AMA0:pn532`` (UART on a Pi), ``nfc://usb:054c:06c1`` (USB), ``nfc://udp:127.0.0.1:54321``
(nfcpy's simulated link, used by the tests). Query options: ``debounce``, ``poll_interval``,
``reconnect_interval``, ``antenna``.

nfcpy is blocking, so it runs in a thread of its own; each read is handed to the event loop with
``loop.call_soon_threadsafe``. One tag is in the field at a time (ISO 14443-A anticollision picks
one), so these are ``tap`` readers by default: ``present`` when a tag is first seen, repeated
taps of the same tag within ``debounce`` seconds are one tap. As an ``inventory`` reader the
backend also reports ``removed`` when the tag stops answering its presence check.
"""

from __future__ import annotations

import time
import urllib.parse
from typing import Any

from firmware_bridge.extras import MissingExtra, needs_extra
from firmware_bridge.readers.base import ReaderError, ReaderKind, options_from_query
from firmware_bridge.readers.threaded import ThreadedReader

__all__ = ["NfcReader", "parse_nfc_url"]


def parse_nfc_url(url: str) -> tuple[str, dict[str, str]]:
    """``nfc://tty:AMA0:pn532?debounce=1`` -> ("tty:AMA0:pn532", {"debounce": "1"})."""
    if not url.startswith("nfc://"):
        raise ReaderError(f"not an nfc URL: {url!r}")
    device, _, query_text = url[len("nfc://"):].partition("?")
    if not device:
        raise ReaderError(f"nfc URL without a device (usb, tty:AMA0:pn532, udp:HOST:PORT): {url!r}")
    query = {k: v[-1] for k, v in urllib.parse.parse_qs(query_text).items()}
    return urllib.parse.unquote(device), query


def _import_nfcpy() -> Any:
    """nfcpy, imported when a reader starts: only tables with NFC readers load it."""
    try:
        with needs_extra("nfc", "the nfc:// reader"):
            import nfc
    except MissingExtra as error:
        raise ReaderError(str(error)) from None
    return nfc


class NfcReader(ThreadedReader):
    """An nfcpy contactless front end, polled in a worker thread."""

    thread_prefix = "nfc-reader"

    def __init__(self, name: str, device: str, *, kind: ReaderKind = "tap",
                 debounce: float = 1.0, poll_interval: float = 0.1,
                 reconnect_interval: float = 2.0, antenna: str = "0") -> None:
        super().__init__(name, kind=kind, debounce=debounce)
        if poll_interval <= 0 or reconnect_interval <= 0:
            raise ReaderError(f"reader {name!r}: intervals must be > 0")
        self.device = device
        self.poll_interval = poll_interval
        self.reconnect_interval = reconnect_interval
        self.antenna = antenna
        self._init_thread()
        self._nfc: Any = None

    @classmethod
    def from_url(cls, name: str, url: str, *, kind: str | None = None,
                 **options: Any) -> NfcReader:
        device, query = parse_nfc_url(url)
        merged = options_from_query("nfc", query, strings=("antenna", "kind"),
                                    numbers=("debounce", "poll_interval", "reconnect_interval"))
        merged |= options
        if kind is not None:
            merged["kind"] = kind
        return cls(name, device, **merged)

    async def _start(self) -> None:
        self._nfc = _import_nfcpy()
        await super()._start()

    # ------------------------------------------------------------------ worker thread

    def _work(self) -> None:
        nfc = self._nfc
        ever_up = False
        down = False
        while not self._stopping.is_set():
            try:
                clf = nfc.ContactlessFrontend(self.device)
            except Exception as error:  # noqa: BLE001 - IOError, ValueError, usb errors...
                if not down:
                    self._to_loop(self._health, "disconnected",
                                  f"cannot open {self.device}: {type(error).__name__}: {error}")
                    down = True
                self._stopping.wait(self.reconnect_interval)
                continue
            if ever_up or down:
                self._to_loop(self._health, "reconnected", f"{self.device} is back")
            ever_up, down = True, False
            reason = "device closed"
            try:
                while not self._stopping.is_set():
                    result = clf.connect(
                        rdwr={"targets": ["106A"], "on-connect": self._on_connect,
                              "on-release": self._on_release, "iterations": 1,
                              "interval": self.poll_interval, "beep-on-connect": False},
                        terminate=self._stopping.is_set)
                    if result is False and not self._stopping.is_set():
                        reason = f"{self.device}: I/O error while polling"
                        break
            except Exception as error:  # noqa: BLE001 - a dying device must not kill the reader
                reason = f"{self.device}: {type(error).__name__}: {error}"
            finally:
                try:
                    clf.close()
                except Exception:  # noqa: BLE001, S110 - closing a vanished device may fail
                    pass
            if not self._stopping.is_set():
                self._to_loop(self._health, "disconnected", reason)
                down = True
                self._stopping.wait(self.reconnect_interval)

    def _on_connect(self, tag: Any) -> bool:
        uid = bytes(tag.identifier).hex().upper()
        self._to_loop(self._tag, self.antenna, uid, "present", time.time())
        # True: nfcpy keeps checking the tag's presence and calls on-release when it leaves,
        # so a tag held to the reader is one read, not one per poll.
        return True

    def _on_release(self, tag: Any) -> bool:
        if not self._stopping.is_set():
            uid = bytes(tag.identifier).hex().upper()
            self._to_loop(self._tag, self.antenna, uid, "removed", time.time())
        return True
