"""Reader firmware for microcontroller boards, and the host's tools for it.

``btreader/`` is the firmware itself (MicroPython; copied to the board as the package
``btreader`` with ``main.py`` beside it by ``bridge-table firmware flash``). It speaks
``docs/serial-protocol.md`` and drives PN532 and MFRC522 front ends (``btreader/pn532.py``,
``btreader/mfrc522.py``). The same driver and inventory modules run under CPython for the
Pi-attached reader backends (``firmware_bridge/readers/pn532.py``, ``mfrc522.py``) and for the
tests, which load them with a shimmed ``machine`` module against emulated chips
(``firmware_bridge/sim/chips.py``).
"""

from __future__ import annotations

import time
from pathlib import Path

__all__ = ["FIRMWARE_DIR", "MAIN_FILE", "firmware_files", "HostTicks", "HOST_TICKS"]

#: The firmware package as shipped (copied to the board's ``/btreader``).
FIRMWARE_DIR = Path(__file__).with_name("btreader")
#: The board's ``/main.py``: MicroPython runs it after boot.
MAIN_FILE = Path(__file__).with_name("board_main.py")


def firmware_files() -> list[Path]:
    """The firmware's files in copy order (``main.py`` last, so a half-flashed board does not
    start a half-copied firmware)."""
    return sorted(FIRMWARE_DIR.glob("*.py"))


class HostTicks:
    """MicroPython's ``time.ticks_ms``/``ticks_diff``/``sleep_ms`` on CPython's monotonic
    clock: what the firmware's ``clock.Clock`` reads when its modules run on a Pi or in tests."""

    @staticmethod
    def ticks_ms() -> int:
        return int(time.monotonic() * 1000)

    @staticmethod
    def ticks_diff(later: int, earlier: int) -> int:
        return later - earlier

    @staticmethod
    def sleep_ms(ms: int) -> None:
        time.sleep(ms / 1000)


HOST_TICKS = HostTicks()
