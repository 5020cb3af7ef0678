"""The firmware's clock: MicroPython's ``time.ticks_ms``/``ticks_diff``/``sleep_ms``.

Taken from an object rather than imported by name, so the firmware runs under CPython (the tests
and the Pi backends) with a stand-in that has the same three functions.
"""

import time


class Clock:
    def __init__(self, source: object = time) -> None:
        # getattr: CPython's time has none of the three, so mypy must not look them up
        self._ticks = getattr(source, "ticks_ms")  # noqa: B009
        self._diff = getattr(source, "ticks_diff")  # noqa: B009
        self._sleep = getattr(source, "sleep_ms")  # noqa: B009

    def ticks_ms(self) -> int:
        return int(self._ticks())

    def ticks_diff(self, later: int, earlier: int) -> int:
        return int(self._diff(later, earlier))

    def sleep_ms(self, ms: int) -> None:
        self._sleep(ms)
