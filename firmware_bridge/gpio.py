"""The table's LEDs and buttons, through gpiozero.

Per seat a turn LED and an alert LED (or one RGB LED: green = turn, red = alert), and
the buttons director / claim / undo / next, table-level or per seat. The pin factory
comes from the config: ``lgpio`` on a Pi 5 (its GPIOs sit behind the RP1 chip, which
RPi.GPIO cannot drive), ``rpigpio`` on older Pis, ``mock`` (gpiozero's MockFactory)
in tests and the simulator; ``auto`` picks by ``/proc/device-tree/model``. Backend
modules are imported only when chosen, so a laptop never needs lgpio or RPi.GPIO.

Button callbacks run on gpiozero's own thread: the handler must hand the press over
to the event loop (the bridge uses ``loop.call_soon_threadsafe``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_bridge.config import SEATS, GpioConfig
from firmware_bridge.errors import GpioError
from firmware_bridge.extras import MissingExtra, needs_extra

log = logging.getLogger(__name__)

#: (button, seat or None for a table button, wall-clock time of the press)
ButtonHandler = Callable[[str, str | None, float], None]

MODEL_PATH = Path("/proc/device-tree/model")
BLINK_ON = 0.4
BLINK_OFF = 0.4


@dataclass(frozen=True)
class SeatLights:
    """What one seat's LEDs show."""

    turn: bool = False
    alert: bool = False


def detect_factory(model_path: Path = MODEL_PATH) -> str:
    """The pin factory for this machine: lgpio (Pi 5), rpigpio (older Pi), mock elsewhere."""
    try:
        model = model_path.read_bytes().decode("ascii", "replace").rstrip("\x00\n")
    except OSError:
        return "mock"
    if "Raspberry Pi 5" in model or "Raspberry Pi Compute Module 5" in model:
        return "lgpio"
    if "Raspberry Pi" in model:
        return "rpigpio"
    return "mock"


def make_pin_factory(name: str, *, model_path: Path = MODEL_PATH) -> Any:
    """A gpiozero pin factory by config name; raises GpioError if it cannot be made."""
    chosen = detect_factory(model_path) if name == "auto" else name
    if name == "auto" and chosen == "mock":
        log.warning("not a Raspberry Pi (%s): LEDs and buttons are simulated", model_path)
    try:
        with needs_extra("pi", f"GPIO pin factory {chosen!r}"):
            if chosen == "mock":
                from gpiozero.pins.mock import MockFactory
                return MockFactory()
            if chosen == "lgpio":
                from gpiozero.pins.lgpio import LGPIOFactory
                return LGPIOFactory()
            if chosen == "rpigpio":
                from gpiozero.pins.rpigpio import RPiGPIOFactory
                return RPiGPIOFactory()
    except MissingExtra as e:
        raise GpioError(str(e)) from None
    except Exception as e:  # ImportError, or the backend's own failure to open the chip
        raise GpioError(f"GPIO pin factory {chosen!r} is not available: {e}") from e
    raise GpioError(f"unknown GPIO pin factory {name!r} (auto, lgpio, rpigpio, mock)")


class _SeatLeds:
    """One seat's LEDs; remembers what it shows so a repeated indicator changes nothing."""

    def __init__(self, seat: str, config: GpioConfig, factory: Any) -> None:
        with needs_extra("pi", "the seat LEDs"):
            from gpiozero import LED, RGBLED

        self.seat = seat
        self.blink = config.alert_blink
        self.shown: SeatLights | None = None
        c = config.seats[seat]
        self.turn = LED(c.turn_led, active_high=config.active_high, pin_factory=factory) \
            if c.turn_led is not None else None
        self.alert = LED(c.alert_led, active_high=config.active_high, pin_factory=factory) \
            if c.alert_led is not None else None
        # pwm=False: plain on/off colours, which every pin factory (and MockPin) supports
        self.rgb = RGBLED(*c.rgb_led, active_high=config.active_high, pwm=False,
                          pin_factory=factory) if c.rgb_led is not None else None

    def show(self, lights: SeatLights) -> None:
        if lights == self.shown:
            return
        self.shown = lights
        if self.turn is not None:
            self.turn.value = lights.turn
        if self.alert is not None:
            if lights.alert and self.blink:
                self.alert.blink(on_time=BLINK_ON, off_time=BLINK_OFF, background=True)
            else:
                self.alert.value = lights.alert
        if self.rgb is not None:
            green = (0, 1, 0) if lights.turn else (0, 0, 0)
            if lights.alert and self.blink:
                # red blinking over the turn colour: both stay visible
                self.rgb.blink(on_time=BLINK_ON, off_time=BLINK_OFF, on_color=(1, 0, 0),
                               off_color=green, background=True)
            elif lights.alert:
                self.rgb.color = (1, 0, 0)
            else:
                self.rgb.color = green

    def close(self) -> None:
        # dark first: a closed pin keeps its last level on some factories
        self.show(SeatLights())
        for device in (self.turn, self.alert, self.rgb):
            if device is not None:
                device.close()


class TableGpio:
    """All LEDs and buttons of one table."""

    def __init__(self, config: GpioConfig, on_button: ButtonHandler, *,
                 pin_factory: Any | None = None) -> None:
        try:
            with needs_extra("pi", "driving the table's LEDs and buttons"):
                from gpiozero import Button
        except MissingExtra as e:
            raise GpioError(str(e)) from e  # the bridge tells a missing library by its cause

        self.config = config
        self.factory = pin_factory if pin_factory is not None else \
            make_pin_factory(config.factory)
        self._on_button = on_button
        self.leds: dict[str, _SeatLeds] = {}
        self.buttons: dict[tuple[str, str | None], Any] = {}
        try:
            for seat in config.seats:
                self.leds[seat] = _SeatLeds(seat, config, self.factory)
            wanted: list[tuple[str, str | None, int]] = \
                [(name, None, pin) for name, pin in config.buttons.items()]
            for seat, seat_config in config.seats.items():
                wanted += [(name, seat, pin) for name, pin in seat_config.buttons.items()]
            for name, owner, pin in wanted:
                button = Button(pin, pull_up=config.pull_up,
                                bounce_time=config.bounce_time or None,
                                pin_factory=self.factory)
                button.when_pressed = self._press_handler(name, owner)
                self.buttons[(name, owner)] = button
        except Exception as e:
            self.close()
            if isinstance(e, GpioError):
                raise
            raise GpioError(f"cannot set up the table's LEDs and buttons: {e}") from e

    def _press_handler(self, name: str, seat: str | None) -> Callable[[], None]:
        def pressed() -> None:
            try:
                self._on_button(name, seat, time.time())
            except Exception:  # never let a handler bug kill gpiozero's thread
                log.exception("button handler failed for %s", name)
        return pressed

    def show(self, seats: Mapping[str, SeatLights]) -> None:
        """Set every seat's LEDs; a seat absent from ``seats`` goes dark."""
        for seat in SEATS:
            leds = self.leds.get(seat)
            if leds is not None:
                leds.show(seats.get(seat, SeatLights()))

    def close(self) -> None:
        for leds in self.leds.values():
            leds.close()
        for button in self.buttons.values():
            button.close()
        self.leds.clear()
        self.buttons.clear()
