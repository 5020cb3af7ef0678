from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from installed import needs_truetype
from luma.core.device import dummy
from PIL import ImageChops
from RPLCD.i2c import CharLCD

from firmware_bridge.config import DisplayConfig, config_from_dict
from firmware_bridge.display import (
    HD44780Display,
    NullDisplay,
    SSD1306Display,
    TerminalDisplay,
    fit_lines,
    make_display,
    text_width,
    to_ascii,
    wrap_line,
)

INDICATOR = {
    "en": ["Board 7  Dealer N", "North to call", "Alert: insufficient bid by East"],
    "vi": ["Ván 7  Chia: Bắc", "Lượt của Bắc", "Cảnh báo: Đông gọi thiếu"],
    "zh": ["第7副 发牌：北", "轮到北叫牌", "警告：东叫牌不足"],
}


class _NoBus:
    def write_byte(self, address: int, value: int) -> None:
        pass

    def write_byte_data(self, address: int, register: int, value: int) -> None:
        pass


class RecordingLCD(CharLCD):  # type: ignore[misc]
    """RPLCD's I2C CharLCD with the bus cut off: the HD44780's DDRAM is emulated from the
    instructions and data bytes RPLCD sends, so a test reads what the glass would show."""

    def _init_connection(self) -> None:
        self.bus = _NoBus()
        self.ddram = bytearray(b" " * 128)
        self.address_counter = 0
        self.data_bytes: list[int] = []

    def _send_instruction(self, value: int) -> None:
        if value == 0x01:  # clear display
            self.ddram[:] = b" " * 128
            self.address_counter = 0
        elif value & 0x80:  # set DDRAM address
            self.address_counter = value & 0x7F

    def _send_data(self, value: int) -> None:
        self.data_bytes.append(value)
        self.ddram[self.address_counter] = value
        self.address_counter = (self.address_counter + 1) & 0x7F

    def screen(self) -> list[str]:
        cols, rows = self.lcd.cols, self.lcd.rows
        offsets = [0x00, 0x40, cols, 0x40 + cols][:rows]
        return [self.ddram[o:o + cols].decode("ascii") for o in offsets]


def hd_config(cols: int = 20, rows: int = 4) -> DisplayConfig:
    return DisplayConfig(type="hd44780", cols=cols, rows=rows)


def recording_lcd(cols: int = 20, rows: int = 4) -> RecordingLCD:
    return RecordingLCD("PCF8574", 0x27, cols=cols, rows=rows, auto_linebreaks=False)


# -- text fitting -------------------------------------------------------------------

def test_vietnamese_is_transliterated_to_ascii() -> None:
    assert to_ascii("Lượt của Bắc") == "Luot cua Bac"
    assert to_ascii("Đông gọi thiếu") == "Dong goi thieu"
    assert to_ascii("Ván 7  Chia: Bắc") == "Van 7  Chia: Bac"
    assert to_ascii("第7副") == "?7?"


def test_cjk_is_two_columns_wide() -> None:
    assert text_width("North") == 5
    assert text_width("轮到北") == 6
    assert text_width("Bắc") == 3


def test_wrap_breaks_at_words_and_cuts_long_words() -> None:
    assert wrap_line("Alert: insufficient bid by East", 16) == ["Alert:", "insufficient bid",
                                                               "by East"]
    assert wrap_line("abcdefghijklmnopqrstu", 8) == ["abcdefgh", "ijklmnop", "qrstu"]
    assert wrap_line("", 8) == [""]


def test_cjk_wraps_by_width() -> None:
    assert wrap_line("警告：东叫牌不足", 8) == ["警告：东", "叫牌不足"]


def test_fit_wraps_only_when_every_row_still_shows() -> None:
    assert fit_lines(INDICATOR["en"], 20, 4) == ["Board 7  Dealer N", "North to call",
                                                 "Alert: insufficient", "bid by East"]
    # wrapping would push the last line (the alert) off: one row a line, cut instead
    assert fit_lines(INDICATOR["en"], 20, 3) == ["Board 7  Dealer N", "North to call",
                                                 "Alert: insufficient"]
    assert fit_lines(INDICATOR["en"], 16, 2) == ["Board 7  Dealer", "North to call"]
    assert all(len(row) <= 16 for row in fit_lines(INDICATOR["en"] * 3, 16, 10))


# -- HD44780 through RPLCD -------------------------------------------------------------

def test_hd44780_writes_the_english_text_exactly() -> None:
    lcd = recording_lcd()
    display = HD44780Display(hd_config(), lcd=lcd)
    display.show_indicator(INDICATOR, "en")
    assert lcd.screen() == ["Board 7  Dealer N   ", "North to call       ",
                            "Alert: insufficient ", "bid by East         "]


def test_hd44780_16x2_truncates() -> None:
    lcd = recording_lcd(16, 2)
    display = HD44780Display(hd_config(16, 2), lcd=lcd)
    display.show(["North to call", "Alert: insufficient bid by East"])
    assert lcd.screen() == ["North to call   ", "Alert: insuffici"]


def test_hd44780_shows_vietnamese_without_diacritics() -> None:
    lcd = recording_lcd()
    HD44780Display(hd_config(), lcd=lcd).show_indicator(INDICATOR, "vi")
    assert lcd.screen() == ["Van 7  Chia: Bac    ", "Luot cua Bac        ",
                            "Canh bao: Dong goi  ", "thieu               "]
    assert all(b < 128 for b in lcd.data_bytes)


def test_hd44780_shows_english_for_a_chinese_table() -> None:
    lcd = recording_lcd()
    HD44780Display(hd_config(), lcd=lcd).show_indicator(INDICATOR, "zh")
    assert lcd.screen()[1] == "North to call       "


def test_hd44780_sends_only_what_changed() -> None:
    lcd = recording_lcd()
    display = HD44780Display(hd_config(), lcd=lcd)
    display.show(["North to call"])
    sent = len(lcd.data_bytes)
    display.show(["North to call"])
    assert len(lcd.data_bytes) == sent
    display.show(["East to call"])
    assert lcd.screen()[0] == "East to call        "
    assert len(lcd.data_bytes) - sent < 20  # not the whole screen again


def test_hd44780_without_a_bus_is_a_display_error() -> None:
    from firmware_bridge.errors import DisplayError
    with pytest.raises(DisplayError, match="HD44780 at I2C 7:0x27"):
        HD44780Display(DisplayConfig(type="hd44780", i2c_port=7))


# -- SSD1306 through luma ----------------------------------------------------------------

def blank(device: Any) -> Any:
    from PIL import Image
    return Image.new(device.image.mode, device.image.size)


def test_ssd1306_draws_text() -> None:
    device = dummy(width=128, height=64, mode="1")
    display = SSD1306Display(DisplayConfig(type="ssd1306"), device=device)
    needs_truetype(display)  # Vietnamese letters: PIL's own font has ASCII only
    display.show_indicator(INDICATOR, "en")
    assert device.image is not None
    assert ImageChops.difference(device.image, blank(device)).getbbox() is not None
    first = device.image.copy()
    display.show_indicator(INDICATOR, "vi")
    assert ImageChops.difference(device.image, first).getbbox() is not None
    assert display.lines is not None and display.lines[1] == "Lượt của Bắc"


def test_ssd1306_chinese_needs_a_cjk_font() -> None:
    device = dummy(width=128, height=64, mode="1")
    display = SSD1306Display(DisplayConfig(type="ssd1306"), device=device)
    display.show_indicator(INDICATOR, "zh")
    assert display.lines is not None
    if display.cjk:
        assert display.lines[0].startswith("第7副")
    else:
        assert display.lines[0].startswith("Board 7")


def test_ssd1306_rows_follow_the_height() -> None:
    display = SSD1306Display(DisplayConfig(type="ssd1306"), device=dummy(width=128, height=32,
                                                                          mode="1"))
    display.show(["one", "two", "three", "four", "five", "six"])
    assert display.lines == ["one", "two"]


# -- terminal and none -------------------------------------------------------------------

def test_terminal_draws_a_frame_in_any_language() -> None:
    out = io.StringIO()
    display = TerminalDisplay(20, 4, stream=out, title="table 1")
    display.show_indicator(INDICATOR, "zh")
    text = out.getvalue().splitlines()
    assert text[0] == "+------table 1-------+"
    assert text[1] == "|第7副 发牌：北      |"
    assert all(text_width(row) == 22 for row in text)
    display.show_indicator(INDICATOR, "zh")  # unchanged: not drawn again
    assert len(out.getvalue().splitlines()) == len(text)


def test_make_display_by_type(tmp_path: Path) -> None:
    def config(kind: str) -> DisplayConfig:
        return config_from_dict({"table": {"id": "1"}, "display": {"type": kind}},
                                tmp_path / "t.toml").display
    assert isinstance(make_display(config("terminal"), stream=io.StringIO()), TerminalDisplay)
    assert isinstance(make_display(config("none")), NullDisplay)


def test_missing_language_falls_back_to_english() -> None:
    display = NullDisplay()
    display.show_indicator({"en": ["North to call"]}, "vi")
    assert display.lines == ["North to call"]
    display.show_indicator({}, "vi")
    assert display.lines == []


def test_ssd1306_draws_a_wide_row_smaller_instead_of_wrapping_it() -> None:
    display = SSD1306Display(DisplayConfig(type="ssd1306"),
                             device=dummy(width=128, height=64, mode="1"))
    needs_truetype(display)  # smaller sizes: PIL's own font has one
    wide, narrow = "WWW MMM WWW MMM", "N to play"
    assert display.measure(wide) > 128    # too wide at 12 px
    display.show([wide, narrow, "", "Law 63A Revoke W"])
    assert display.lines == [wide, narrow, "", "Law 63A Revoke W"]
    sizes = [font.size for font in display.line_fonts]
    assert sizes[1] == 12 and SSD1306Display.MIN_FONT <= sizes[0] < 12
    assert display.measure(wide, display.line_fonts[0]) <= 128


def test_hd44780_measures_by_its_charmap() -> None:
    display = HD44780Display(hd_config(), lcd=recording_lcd())
    assert display.measure("Luot S rao gia") == 14
    # what the ROM cannot show still takes its one cell (RPLCD writes a space for it)
    assert display.measure("第7副") == 3


def test_an_oled_without_a_font_skips_with_the_reason_or_fails_under_ci(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """No TrueType font on the machine: the OLED's tests skip naming the package to install,
    and fail under CI (tests/installed.py), where a lost install step must show."""
    import installed

    import firmware_bridge.display as display_module

    monkeypatch.setattr(display_module, "CJK_FONTS", ())
    monkeypatch.setattr(display_module, "LATIN_FONTS", ())
    display = SSD1306Display(DisplayConfig(type="ssd1306"),
                             device=dummy(width=128, height=64, mode="1"))
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv(installed.REQUIRE_VARIABLE, raising=False)
    with pytest.raises(pytest.skip.Exception, match="fonts-dejavu-core"):
        needs_truetype(display)
    with pytest.raises(pytest.skip.Exception, match="fonts-wqy-microhei"):
        installed.needs_cjk(display)
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="fonts-dejavu-core"):
        needs_truetype(display)
