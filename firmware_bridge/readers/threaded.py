"""A reader whose device blocks (nfcpy, spidev, i2c-dev): its work runs in a thread of its own
and every observation is handed to the event loop."""

from __future__ import annotations

import abc
import asyncio
import threading
from typing import Any

from firmware_bridge.readers.base import Reader

__all__ = ["ThreadedReader"]


class ThreadedReader(Reader):
    """``_work`` runs in a daemon thread until ``_stopping`` is set; it reports through
    ``_to_loop(self._tag, ...)`` / ``_to_loop(self._health, ...)``."""

    thread_prefix = "reader"

    def _init_thread(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    @abc.abstractmethod
    def _work(self) -> None:
        """The device loop (in the worker thread)."""

    async def _start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stopping.clear()
        self._thread = threading.Thread(target=self._work,
                                        name=f"{self.thread_prefix}-{self.name}", daemon=True)
        self._thread.start()

    async def _stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            # the device loop checks `_stopping` between polls
            await asyncio.to_thread(self._thread.join, 10.0)
            self._thread = None

    def _to_loop(self, func: Any, *args: Any) -> None:
        loop = self._loop
        if loop is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(func, *args)
            except RuntimeError:  # the loop closed meanwhile: nobody is listening any more
                pass
