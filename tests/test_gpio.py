from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory

from firmware_bridge.config import GpioConfig, config_from_dict
from firmware_bridge.errors import GpioError
from firmware_bridge.gpio import SeatLights, TableGpio, detect_factory, make_pin_factory

pytestmark = pytest.mark.timeout(60)


def gpio_config(tmp_path: Path, **gpio: Any) -> GpioConfig:
    section: dict[str, Any] = {
        "factory": "mock",
        "seats": {"N": {"turn_led": 17, "alert_led": 27, "claim": 26},
                  "E": {"turn_led": 22, "alert_led": 23},
                  "S": {"rgb_led": [9, 10, 11]}},
        "buttons": {"director": 5, "undo": 13, "next": 19},
        "bounce_time": 0.0,
    }
    section.update(gpio)
    return config_from_dict({"table": {"id": "1"}, "gpio": section},
                            tmp_path / "t.toml").gpio


class Presses:
    def __init__(self) -> None:
        self.got: list[tuple[str, str | None]] = []
        self.times: list[float] = []
        self.threads: set[int] = set()

    def __call__(self, button: str, seat: str | None, ts: float) -> None:
        self.got.append((button, seat))
        self.times.append(ts)
        self.threads.add(threading.get_ident())


def states(factory: MockFactory, pin: int) -> list[bool]:
    return [bool(s.state) for s in factory.pin(pin).states]


def test_turn_and_alert_leds_follow_the_indicator(tmp_path: Path) -> None:
    factory = MockFactory()
    table = TableGpio(gpio_config(tmp_path, alert_blink=False), Presses(), pin_factory=factory)
    table.show({"N": SeatLights(turn=True), "E": SeatLights(alert=True)})
    assert factory.pin(17).state and not factory.pin(27).state
    assert not factory.pin(22).state and factory.pin(23).state
    table.show({"E": SeatLights(turn=True)})  # N absent: goes dark
    assert not factory.pin(17).state and factory.pin(22).state and not factory.pin(23).state
    assert states(factory, 17) == [False, True, False]
    assert states(factory, 23) == [False, True, False]
    table.close()


def test_repeated_indicator_does_not_flicker(tmp_path: Path) -> None:
    factory = MockFactory()
    table = TableGpio(gpio_config(tmp_path, alert_blink=False), Presses(), pin_factory=factory)
    for _ in range(5):
        table.show({"N": SeatLights(turn=True)})
    assert states(factory, 17) == [False, True]
    table.close()


def test_open_alert_blinks(tmp_path: Path) -> None:
    factory = MockFactory()
    table = TableGpio(gpio_config(tmp_path), Presses(), pin_factory=factory)
    table.show({"N": SeatLights(alert=True)})
    pin = factory.pin(27)
    # wait (pytest-timeout bounds it) until the LED has gone on, off and on again
    while [bool(s.state) for s in pin.states][:4] != [False, True, False, True]:
        threading.Event().wait(0.05)
    table.show({"N": SeatLights()})
    assert not pin.state
    table.close()


def test_rgb_led_green_for_turn_red_for_alert(tmp_path: Path) -> None:
    factory = MockFactory()
    table = TableGpio(gpio_config(tmp_path, alert_blink=False), Presses(), pin_factory=factory)
    r, g, b = factory.pin(9), factory.pin(10), factory.pin(11)
    table.show({"S": SeatLights(turn=True)})
    assert (r.state, g.state, b.state) == (False, True, False)
    table.show({"S": SeatLights(turn=True, alert=True)})
    assert (r.state, g.state, b.state) == (True, False, False)
    table.show({})
    assert (r.state, g.state, b.state) == (False, False, False)
    table.close()


def test_buttons_report_name_and_seat(tmp_path: Path) -> None:
    factory = MockFactory()
    presses = Presses()
    table = TableGpio(gpio_config(tmp_path), presses, pin_factory=factory)
    for pin in (5, 26, 13, 19):
        factory.pin(pin).drive_low()   # pull-up buttons close to GND
        factory.pin(pin).drive_high()
    assert presses.got == [("director", None), ("claim", "N"), ("undo", None), ("next", None)]
    assert presses.times == sorted(presses.times) and all(t > 1e9 for t in presses.times)
    table.close()


def test_a_held_button_is_one_press(tmp_path: Path) -> None:
    factory = MockFactory()
    presses = Presses()
    table = TableGpio(gpio_config(tmp_path), presses, pin_factory=factory)
    factory.pin(5).drive_low()
    factory.pin(5).drive_low()
    factory.pin(5).drive_high()
    assert presses.got == [("director", None)]
    table.close()


def test_a_failing_handler_does_not_break_the_button(tmp_path: Path) -> None:
    factory = MockFactory()
    calls: list[str] = []

    def handler(button: str, seat: str | None, ts: float) -> None:
        calls.append(button)
        raise RuntimeError("bug")

    table = TableGpio(gpio_config(tmp_path), handler, pin_factory=factory)
    for _ in range(2):
        factory.pin(5).drive_low()
        factory.pin(5).drive_high()
    assert calls == ["director", "director"]
    table.close()


def test_close_releases_the_pins(tmp_path: Path) -> None:
    factory = MockFactory()
    config = gpio_config(tmp_path)
    TableGpio(config, Presses(), pin_factory=factory).close()
    again = TableGpio(config, Presses(), pin_factory=factory)  # would fail: pins in use
    again.close()


def test_factory_from_config_name(tmp_path: Path) -> None:
    table = TableGpio(gpio_config(tmp_path), Presses())
    assert isinstance(table.factory, MockFactory)
    table.close()


@pytest.mark.parametrize(("model", "expected"), [
    (b"Raspberry Pi 5 Model B Rev 1.0\x00", "lgpio"),
    (b"Raspberry Pi 4 Model B Rev 1.4\x00", "rpigpio"),
    (b"Raspberry Pi 3 Model B Plus Rev 1.3\x00", "rpigpio"),
    (b"Some Other Board\x00", "mock"),
])
def test_detect_factory_by_model(tmp_path: Path, model: bytes, expected: str) -> None:
    path = tmp_path / "model"
    path.write_bytes(model)
    assert detect_factory(path) == expected


def test_auto_on_a_non_pi_is_mock(tmp_path: Path) -> None:
    assert isinstance(make_pin_factory("auto", model_path=tmp_path / "absent"), MockFactory)


def test_unavailable_backend_is_a_gpio_error(tmp_path: Path) -> None:
    # RPi.GPIO does not load off a Pi: a clear error, not an ImportError from deep inside
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 4 Model B\x00")
    try:
        factory = make_pin_factory("auto", model_path=model)
    except GpioError as e:
        assert "rpigpio" in str(e)
    else:  # on a real Pi 4 it loads
        factory.close()
    with pytest.raises(GpioError, match="unknown GPIO pin factory"):
        make_pin_factory("pigpio")
