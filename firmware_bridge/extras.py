"""Which optional extra of the ``bridge-table`` package brings which hardware library.

A scorer's or director's laptop installs ``bridge-table`` without GPIO, display and NFC
libraries; a table's Pi installs ``bridge-table[pi]`` (LEDs, buttons, HD44780 and SSD1306
displays) and ``bridge-table[nfc]`` for NFC readers, or ``bridge-table[all]``. Code that
needs one of them imports it at the point of use inside :func:`needs_extra`, which turns
a missing library into :class:`MissingExtra`: one line naming the extra to install.

>>> with needs_extra("pi", "the seat LEDs"):          # doctest: +SKIP
...     from gpiozero import LED
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping

__all__ = ["EXTRAS", "HARDWARE_MODULES", "MissingExtra", "install_hint", "needs_extra"]

#: extra -> the top-level modules its distributions install (pyproject.toml keeps the
#: distributions; tests/test_packaging.py checks that both agree)
EXTRAS: Mapping[str, tuple[str, ...]] = {
    "pi": ("gpiozero", "lgpio", "RPi", "RPLCD", "smbus2", "luma", "PIL"),
    "nfc": ("nfc",),
}
#: every module an extra brings: what a laptop install does not have
HARDWARE_MODULES: frozenset[str] = frozenset(m for mods in EXTRAS.values() for m in mods)


class MissingExtra(ImportError):
    """A hardware library is not installed; the message names the extra that brings it."""

    def __init__(self, what: str, module: str, extra: str) -> None:
        self.what = what
        self.extra = extra
        super().__init__(f"{what} needs {module}, which is not installed: "
                         f"{install_hint(extra)}", name=module)


def install_hint(extra: str) -> str:
    """``pip install 'bridge-table[pi]'``"""
    return f"pip install 'bridge-table[{extra}]'"


@contextlib.contextmanager
def needs_extra(extra: str, what: str) -> Iterator[None]:
    """Imports inside this block that fail for a module of ``extra`` raise MissingExtra."""
    if extra not in EXTRAS:
        raise ValueError(f"no extra {extra!r} (known: {', '.join(EXTRAS)})")
    try:
        yield
    except ImportError as error:
        if isinstance(error, MissingExtra):
            raise
        top = (error.name or "").split(".")[0]
        if top not in EXTRAS[extra]:
            raise
        raise MissingExtra(what, top, extra) from None
