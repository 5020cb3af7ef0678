"""The table display: an HD44780 character LCD on I2C, an SSD1306 OLED, or the terminal.

The text comes from the controller's ``indicator`` message, one list of lines per
language; the bridge shows the table's language, fitted to the display (word wrap,
then the first ``rows`` rows). What a display cannot draw falls back:

- an HD44780's character ROM has no Vietnamese letters and no Chinese: Vietnamese is
  transliterated to ASCII (``Lượt của Bắc`` -> ``Luot cua Bac``) and a Chinese table
  shows the English lines (seats are N E S W in every language, so ``Đ`` never reads
  as a ``D`` of diamonds);
- an SSD1306 draws with a TrueType font: Chinese needs a CJK font (``[display] font``
  or one found at the usual Raspberry Pi OS places, e.g. Debian's fonts-wqy-microhei),
  else it shows English too; a line too wide is drawn in a smaller font;
- the terminal shows everything.
"""

from __future__ import annotations

import abc
import contextlib
import logging
import sys
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from controller.indicators.display_text import columns
from controller.laws import Suit
from firmware_bridge.config import DisplayConfig
from firmware_bridge.errors import DisplayError
from firmware_bridge.extras import MissingExtra, needs_extra

log = logging.getLogger(__name__)

#: Fonts with Chinese glyphs, where Debian / Raspberry Pi OS packages put them.
CJK_FONTS: tuple[Path, ...] = (
    Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc"),
    Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc"),
    Path("/usr/share/fonts/truetype/wqy/wqy-zenhei.ttc"),
    Path("/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"),
)
#: A font with Vietnamese letters, for the OLED when no CJK font is around.
LATIN_FONTS: tuple[Path, ...] = (
    Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
    Path("/usr/share/fonts/truetype/freefont/FreeSans.ttf"),
)

# Letters NFD does not take apart.
_ASCII_EXTRA = str.maketrans({"đ": "d", "Đ": "D", "ø": "o", "Ø": "O", "ß": "ss",
                              "æ": "ae", "Æ": "AE", "–": "-", "—": "-", "‘": "'", "’": "'",
                              "“": '"', "”": '"', "…": "..."}
                             | {s.symbol: s.name for s in Suit})   # the core's suit letters


def to_ascii(text: str) -> str:
    """Transliterate to ASCII: Vietnamese loses its diacritics, the rest becomes ``?``."""
    decomposed = unicodedata.normalize("NFD", text.translate(_ASCII_EXTRA))
    out = []
    for ch in decomposed:
        if unicodedata.combining(ch):
            continue
        out.append(ch if 32 <= ord(ch) < 127 else "?")
    return "".join(out)


def text_width(text: str) -> int:
    """Columns the text takes on a terminal: CJK (wide, fullwidth) characters take two (the
    measure the controller fits its rows to, controller/indicators/display_text.py)."""
    return columns(text)


def _split_to_fit(word: str, width: float, measure: Callable[[str], float]) -> tuple[str, str]:
    """The longest prefix of ``word`` that fits (at least one character) and the rest."""
    cut = 1
    while cut < len(word) and measure(word[:cut + 1]) <= width:
        cut += 1
    return word[:cut], word[cut:]


def wrap_line(line: str, width: float, measure: Callable[[str], float] = text_width
              ) -> list[str]:
    """Word-wrap one line to ``width``; words longer than a row (or CJK runs) are cut.

    A line that fits is kept as it is, spaces and all (the controller may align columns).
    """
    line = line.rstrip()
    if measure(line) <= width:
        return [line]
    rows: list[str] = []
    current = ""
    for word in line.split():
        candidate = f"{current} {word}" if current else word
        if measure(candidate) <= width:
            current = candidate
            continue
        if current:
            rows.append(current)
        while measure(word) > width:
            head, word = _split_to_fit(word, width, measure)
            rows.append(head)
        current = word
    rows.append(current)
    return rows


def cut_to_fit(line: str, width: float, measure: Callable[[str], float] = text_width) -> str:
    """The longest prefix of ``line`` that fits ``width``."""
    line = line.rstrip()
    while line and measure(line) > width:
        line = line[:-1].rstrip()
    return line


def fit_lines(lines: Sequence[str], width: float, rows: int,
              measure: Callable[[str], float] = text_width) -> list[str]:
    """Fit the lines to ``rows`` rows of ``width``: wrapped when the wrapped rows all fit,
    else one row a line, cut (a wrapped line must not push the next off the display: the
    controller's last rows are the alert, controller/indicators/display_text.py fits every row to 20
    columns, so cutting only happens on a display narrower than that)."""
    wrapped = [row for line in lines for row in wrap_line(line, width, measure)]
    if len(wrapped) <= rows:
        return wrapped
    return [cut_to_fit(line, width, measure) for line in lines[:rows]]


class Display(abc.ABC):
    """One table display. ``show`` takes the indicator's lines in the table language."""

    #: the display can draw Chinese
    cjk = True
    #: the display draws ASCII only (an HD44780's ROM): transliterate first
    ascii_only = False

    def choose_lines(self, by_language: Mapping[str, Sequence[str]], language: str) -> list[str]:
        """The lines to show: the table's language if this display can draw it, else English."""
        wanted = language
        if language == "zh" and not self.cjk:
            wanted = "en"
        lines = by_language.get(wanted)
        if lines is None:
            lines = by_language.get("en")
        if lines is None:
            lines = next(iter(by_language.values()), [])
        if self.ascii_only:
            return [to_ascii(line) for line in lines]
        return list(lines)

    @classmethod
    def from_config(cls, config: DisplayConfig, *, stream: TextIO | None = None,
                    title: str = "") -> Display:
        """The display a table file's ``[display]`` describes: what the registry
        (``firmware_bridge.backends.DISPLAYS``) calls; a backend overrides it."""
        return cls()

    def show_indicator(self, by_language: Mapping[str, Sequence[str]], language: str) -> None:
        self.show(self.choose_lines(by_language, language))

    @abc.abstractmethod
    def show(self, lines: Sequence[str]) -> None:
        """Show these lines (fitted to the display here)."""

    def close(self) -> None:  # noqa: B027 - most displays have nothing to let go of
        """Blank the display and let go of it."""


class NullDisplay(Display):
    """``type = "none"``: a table without a display."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def show(self, lines: Sequence[str]) -> None:
        self.lines = list(lines)


class TerminalDisplay(Display):
    """The simulator's display: a framed box on a text stream, redrawn on change."""

    def __init__(self, cols: int = 20, rows: int = 4, *, stream: TextIO | None = None,
                 title: str = "") -> None:
        self.cols = cols
        self.rows = rows
        self.stream = stream if stream is not None else sys.stdout
        self.title = title
        self.lines: list[str] = [""] * rows

    @classmethod
    def from_config(cls, config: DisplayConfig, *, stream: TextIO | None = None,
                    title: str = "") -> TerminalDisplay:
        return cls(config.cols, config.rows, stream=stream, title=title)

    def show(self, lines: Sequence[str]) -> None:
        fitted = fit_lines(lines, self.cols, self.rows)
        fitted += [""] * (self.rows - len(fitted))
        if fitted == self.lines:
            return
        self.lines = fitted
        top = f"+{self.title[:self.cols].center(self.cols, '-')}+"
        body = [f"|{line}{' ' * (self.cols - text_width(line))}|" for line in fitted]
        self.stream.write("\n".join([top, *body, "+" + "-" * self.cols + "+"]) + "\n")
        self.stream.flush()


class HD44780Display(Display):
    """A 16x2 / 20x4 character LCD behind an I2C backpack, driven by RPLCD.

    Its character ROM (A00, Japanese; A02, Western European) has no Vietnamese letters and
    no Chinese: Vietnamese is written without its diacritics (``to_ascii``), a Chinese table
    sees the English lines. A row is measured by the bytes RPLCD's codec for the ROM sends.
    """

    cjk = False
    ascii_only = True

    def __init__(self, config: DisplayConfig, *, lcd: Any | None = None) -> None:
        with _needs_pi("the HD44780 display"):
            from RPLCD.codecs import A00Codec, A02Codec

        self.cols = config.cols
        self.rows = config.rows
        self.codec = A00Codec() if config.charmap == "A00" else A02Codec()
        if lcd is None:
            try:
                with _needs_pi("the HD44780 display"):
                    from RPLCD.i2c import CharLCD
                lcd = CharLCD(config.expander, config.address, port=config.i2c_port,
                              cols=config.cols, rows=config.rows, charmap=config.charmap,
                              auto_linebreaks=False,
                              expander_params={"gpio_bank": "A"}
                              if config.expander == "MCP23017" else None)
            except DisplayError:
                raise
            except Exception as e:  # no I2C bus, nothing at the address, ...
                raise DisplayError(f"HD44780 at I2C {config.i2c_port}:0x{config.address:02x}:"
                                   f" {e}") from e
        self.lcd = lcd
        self.lines: list[str] | None = None

    @classmethod
    def from_config(cls, config: DisplayConfig, *, stream: TextIO | None = None,
                    title: str = "") -> HD44780Display:
        return cls(config)

    def measure(self, text: str) -> int:
        """Characters the LCD shows for ``text``: the bytes its charmap encodes it to."""
        return len(self.codec.encode(text))

    def show(self, lines: Sequence[str]) -> None:
        fitted = fit_lines([to_ascii(line) for line in lines], self.cols, self.rows,
                           self.measure)
        fitted += [""] * (self.rows - len(fitted))
        if fitted == self.lines:
            return
        self.lines = fitted
        for row, text in enumerate(fitted):
            # RPLCD keeps a copy of the screen and only sends characters that change
            self.lcd.cursor_pos = (row, 0)
            self.lcd.write_string(text.ljust(self.cols))

    def close(self) -> None:
        self.lcd.clear()
        self.lcd.close()


def _first_existing(paths: Sequence[Path]) -> Path | None:
    return next((p for p in paths if p.is_file()), None)


class SSD1306Display(Display):
    """A 128x64 (or 128x32) OLED through luma.oled; lines drawn with a TrueType font.

    A line wider than the screen at ``font_size`` is drawn smaller, down to ``MIN_FONT``
    pixels, so that every row of the controller's 20 columns shows whole.
    """

    #: the smallest font a line is drawn in before it is cut
    MIN_FONT = 8

    def __init__(self, config: DisplayConfig, *, device: Any | None = None,
                 font_size: int = 12) -> None:
        with _needs_pi("the SSD1306 display"):
            from PIL import ImageFont

        if device is None:
            try:
                with _needs_pi("the SSD1306 display"):
                    from luma.core.interface.serial import i2c
                    from luma.oled.device import ssd1306
                device = ssd1306(i2c(port=config.i2c_port, address=config.address),
                                 width=config.width, height=config.height)
            except DisplayError:
                raise
            except Exception as e:
                raise DisplayError(f"SSD1306 at I2C {config.i2c_port}:0x{config.address:02x}:"
                                   f" {e}") from e
        self.device = device
        cjk_font = config.font or _first_existing(CJK_FONTS)
        font_path = cjk_font or _first_existing(LATIN_FONTS)
        self.cjk = cjk_font is not None
        self.fonts: list[Any]  # font_size first, then smaller
        if font_path is not None:
            self.fonts = [ImageFont.truetype(str(font_path), size)
                          for size in range(font_size, min(font_size, self.MIN_FONT) - 1, -1)]
        else:
            self.fonts = [ImageFont.load_default()]
            self.ascii_only = True  # PIL's built-in font: ASCII only
        self.font: Any = self.fonts[0]
        self.line_height = font_size + 1
        self.width = device.width
        self.rows = max(1, device.height // self.line_height)
        self.lines: list[str] | None = None
        #: the font each shown line is drawn in
        self.line_fonts: list[Any] = []

    @classmethod
    def from_config(cls, config: DisplayConfig, *, stream: TextIO | None = None,
                    title: str = "") -> SSD1306Display:
        return cls(config)

    def measure(self, text: str, font: Any | None = None) -> float:
        return float((font or self.font).getlength(text))

    def font_for(self, line: str) -> Any:
        """The largest font the line fits the screen's width in (the smallest if none)."""
        return next((f for f in self.fonts if self.measure(line, f) <= self.width),
                    self.fonts[-1])

    def show(self, lines: Sequence[str]) -> None:
        from luma.core.render import canvas

        if self.ascii_only:
            lines = [to_ascii(line) for line in lines]
        smallest = self.fonts[-1]
        fitted = fit_lines(lines, self.width, self.rows,
                           lambda text: self.measure(text, smallest))
        if fitted == self.lines:
            return
        self.lines = fitted
        self.line_fonts = [self.font_for(text) for text in fitted]
        with canvas(self.device) as draw:
            for row, (text, font) in enumerate(zip(fitted, self.line_fonts, strict=True)):
                # bottom-aligned in the row, so that a smaller font keeps the baseline
                top = row * self.line_height + (self.line_height - 1 - font.size
                                                if hasattr(font, "size") else 0)
                draw.text((0, top), text, font=font, fill="white")

    def close(self) -> None:
        self.device.clear()
        self.device.cleanup()


def make_display(config: DisplayConfig, *, stream: TextIO | None = None,
                 title: str = "") -> Display:
    """The display the config asks for, from the registry
    (``firmware_bridge.backends.DISPLAYS``); raises DisplayError if its backend or its
    hardware is missing."""
    from firmware_bridge.backends import DISPLAYS, BackendUnavailable, UnknownBackend

    try:
        cls = DISPLAYS.load(config.type)
    except (UnknownBackend, BackendUnavailable) as e:
        raise DisplayError(str(e)) from None
    display = cls.from_config(config, stream=stream, title=title)
    if not isinstance(display, Display):
        raise DisplayError(f"display {config.type!r}: {cls!r} made {display!r}, not a Display")
    return display


@contextlib.contextmanager
def _needs_pi(what: str) -> Iterator[None]:
    """A display library of the ``[pi]`` extra imported here; missing: DisplayError."""
    try:
        with needs_extra("pi", what):
            yield
    except MissingExtra as e:
        raise DisplayError(str(e)) from None
