"""What some tests need installed on the machine besides the package: the fonts an OLED
draws with (Debian's fonts-dejavu-core for Vietnamese, fonts-wqy-microhei for Chinese;
``make deps-system`` and docs/install.md's steps for a table's Pi install both).

Where one is missing the test is skipped with the reason and the package that brings it, as
tests/shared_data.py does for ``../shared``; under CI (``CI=true``, which .ci/run's machine
sets, as tools/compiled_build.py reads it) or ``BRIDGE_TABLE_REQUIRE_INSTALLED=1`` a
missing install is a failure instead, so that CI never hides a step the Makefile lost.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

from firmware_bridge.display import SSD1306Display

REQUIRE_VARIABLE = "BRIDGE_TABLE_REQUIRE_INSTALLED"


def required() -> bool:
    return (os.environ.get("CI", "").lower() in ("true", "1")
            or os.environ.get(REQUIRE_VARIABLE, "") not in ("", "0"))


def missing(reason: str) -> NoReturn:
    """Skip with ``reason``; fail with it where the install is required (CI)."""
    if required():
        pytest.fail(f"{reason} (CI or {REQUIRE_VARIABLE} is set, so this is a failure)")
    pytest.skip(reason)


def needs_truetype(display: SSD1306Display) -> None:
    """The OLED found a TrueType font (else PIL's built-in one: ASCII only, one size)."""
    if display.ascii_only:
        missing("no TrueType font for the OLED, which then draws ASCII in one size: "
                "apt-get install fonts-dejavu-core (make deps-system)")


def needs_cjk(display: SSD1306Display) -> None:
    """The OLED found a font with Chinese glyphs (else a Chinese table sees English)."""
    if not display.cjk:
        missing("no CJK font for the OLED, which then shows a Chinese table English: "
                "apt-get install fonts-wqy-microhei (make deps-system)")
