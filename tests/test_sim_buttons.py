"""A simulated table's buttons pressed from another process (firmware_bridge/sim/buttons.py):
a line on the named pipe presses the mock pin, and the press takes a real press's path."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from firmware_bridge.sim.buttons import press_line, serve_presses

pytest.importorskip("gpiozero")


def _buttons() -> tuple[dict[tuple[str, str | None], object], list[tuple[str, str | None]]]:
    from gpiozero import Button
    from gpiozero.pins.mock import MockFactory

    factory = MockFactory()
    pressed: list[tuple[str, str | None]] = []
    buttons: dict[tuple[str, str | None], object] = {}
    for key, pin in ((("director", None), 5), (("claim", "N"), 6)):
        button = Button(pin, pin_factory=factory)
        button.when_pressed = lambda key=key: pressed.append(key)
        buttons[key] = button
    return buttons, pressed


def test_a_line_on_the_pipe_presses_the_button(tmp_path: Path) -> None:
    buttons, pressed = _buttons()
    fifo = tmp_path / "buttons"
    os.mkfifo(fifo)
    assert serve_presses(buttons, fifo) is not None
    done = threading.Event()
    with open(fifo, "w", encoding="utf-8") as pipe:
        pipe.write(press_line("director") + press_line("claim", "N") + "nothing\n")
    for _ in range(100):
        if len(pressed) == 2:
            done.set()
            break
        done.wait(0.05)
    assert pressed == [("director", None), ("claim", "N")]


def test_no_pipe_no_presses(tmp_path: Path) -> None:
    buttons, _ = _buttons()
    plain = tmp_path / "file"
    plain.write_text("")
    assert serve_presses(buttons, plain) is None
    assert serve_presses(buttons, tmp_path / "absent") is None
