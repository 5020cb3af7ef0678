"""A simulated table's buttons pressed from another process: a test-only hook.

A built table's buttons are GPIO pins on its Pi; a simulated one's are gpiozero's
``MockFactory`` pins in the bridge process (``[gpio] factory = "mock"``), which nothing
outside that process can reach. With ``BRIDGE_TABLE_SIM_BUTTONS`` naming a FIFO (a named
pipe), the bridge reads lines from it, each ``BUTTON`` or ``BUTTON SEAT`` (``director``,
``claim 'N'`` ...: a button of the table's ``[gpio]``), and drives that button's mock pin as
a finger does: pressed, then released. The press then takes the path a real one takes
(gpiozero's handler, the bridge's ``button`` event), so the controller and the console see
what a table's button gives. ``bridge-table club-night --director-rate`` presses through it.

Only on mock pins: with real ones the variable is refused in the log and ignored.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from pathlib import Path
from typing import Any

__all__ = ["ENV", "serve_presses", "press_line"]

log = logging.getLogger(__name__)

#: the environment variable naming the FIFO the bridge reads presses from
ENV = "BRIDGE_TABLE_SIM_BUTTONS"


def press_line(button: str, seat: str | None = None) -> str:
    """The line that presses ``button`` (of ``seat``, or the table's)."""
    return f"{button} {seat}\n" if seat else f"{button}\n"


def serve_presses(buttons: dict[tuple[str, str | None], Any], path: Path, *,
                  pull_up: bool = True) -> threading.Thread | None:
    """Read presses from the FIFO ``path`` in a daemon thread and drive ``buttons``' mock
    pins (``TableGpio.buttons``: (name, seat) -> gpiozero ``Button``); None when ``path``
    is no FIFO or a pin is not a mock one (a real table's)."""
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            log.warning("%s: not a named pipe; no simulated button presses", path)
            return None
    except OSError as e:
        log.warning("%s: %s; no simulated button presses", path, e.strerror)
        return None
    if any(type(b.pin).__name__ != "MockPin" for b in buttons.values()):
        log.warning("%s is set but the buttons are real pins: ignored", ENV)
        return None

    def press(line: str) -> None:
        words = line.split()
        if not words:
            return
        key = (words[0], words[1] if len(words) > 1 else None)
        button = buttons.get(key)
        if button is None:
            log.warning("simulated press %r: no such button in [gpio]", line.strip())
            return
        pin = button.pin
        # a press pulls the pin to the level gpiozero reads as pressed, then lets it go
        (pin.drive_low if pull_up else pin.drive_high)()
        (pin.drive_high if pull_up else pin.drive_low)()

    def serve() -> None:
        while True:
            try:
                with open(path, encoding="utf-8") as fifo:   # blocks until a writer opens
                    for line in fifo:
                        press(line)
            except OSError as e:
                log.warning("%s: %s; no more simulated button presses", path, e.strerror)
                return

    thread = threading.Thread(target=serve, name="sim-buttons", daemon=True)
    thread.start()
    return thread
