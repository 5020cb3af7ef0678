"""Every display row, in every language, fits every display, measured the display's own way.

The controller's rows (controller/indicators/display_text.py) are rendered for every alert code x
status x language, on boards in the auction and in play, and shown on each display the
bridge drives: the terminal (East Asian width: a CJK character takes two columns), the
HD44780 20x4 (characters after its charmap, A00 and A02, through RPLCD's codec and an
emulated DDRAM) and the SSD1306 OLED (the font's width in pixels). Nothing may be wrapped
or cut, and the alert's Law, name, seat and status stay visible.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import pytest
from boardevents import t08_revoke
from installed import needs_cjk
from luma.core.device import dummy
from scenarios import Harness
from test_display import RecordingLCD

from controller.indicators.display_text import (
    WIDTH,
    alert_rows,
    columns,
    display_lines,
    first_fit,
    with_alert,
)
from controller.laws.cards import Contract, Seat, Vulnerability
from controller.laws.irregularities import DEFAULT_LAW, Code, Irregularity, Status
from controller.laws.messages import LANGUAGES, alert_parts, ui_variants
from controller.laws.table import Phase
from firmware_bridge.config import DisplayConfig
from firmware_bridge.display import (
    HD44780Display,
    SSD1306Display,
    TerminalDisplay,
    text_width,
    to_ascii,
)

#: Laws an alert may cite: its default and the longest the core sets.
LONG_LAWS = ("27B1a", "64A1", "57C3")


def _board_rows() -> Iterator[dict[str, list[str]]]:
    """The t08 board's rows (no alert) in the auction (three calls made), at the opening
    lead, in play and after play (hands going back), taken as the board gets there."""
    script = t08_revoke()
    h = Harness(board=script.board, deal=script.parsed)
    h.board_tag(script.board)
    h.scan()
    for i, call in enumerate(script.calls):
        board = h.t.board
        assert board is not None and board.auction.turn is not None
        h.call(str(board.auction.turn), call)
        if i == 2:
            assert board.phase is Phase.AUCTION
            yield display_lines(board, [])
    board = h.t.board
    assert board is not None and board.phase is Phase.LEAD
    yield display_lines(board, [])
    for n, (seat, card) in enumerate(script.full_play()):
        h.put(str(seat), str(card))
        if n == 20:
            yield display_lines(board, [])
    assert board.phase is Phase.COMPLETE
    yield display_lines(board, [])


BOARD_ROWS = list(_board_rows())


def _alerts(code: Code) -> Iterator[Irregularity]:
    for status in Status:
        for law in (DEFAULT_LAW[code], *LONG_LAWS):
            for seat in (Seat.W, None):
                yield Irregularity(id=1, code=code, law=law, status=status, seat=seat)


def _screens(code: Code) -> Iterator[tuple[Irregularity, dict[str, list[str]]]]:
    for irr in _alerts(code):
        for rows in BOARD_ROWS:
            yield irr, {lang: with_alert(rows[lang], alert_rows(irr, lang))
                        for lang in LANGUAGES}


class Displays:
    """One display of each kind, showing screens and measuring rows their own way."""

    def __init__(self) -> None:
        self.terminal = TerminalDisplay(20, 4, stream=io.StringIO())
        self.lcds = {charmap: RecordingLCD("PCF8574", 0x27, cols=20, rows=4,
                                           auto_linebreaks=False, charmap=charmap)
                     for charmap in ("A00", "A02")}
        self.hd44780 = {charmap: HD44780Display(DisplayConfig(type="hd44780", charmap=charmap),
                                                lcd=lcd) for charmap, lcd in self.lcds.items()}
        self.oled = SSD1306Display(DisplayConfig(type="ssd1306"),
                                   device=dummy(width=128, height=64, mode="1"))
        # without a CJK font a Chinese table would see English: the test must see Chinese
        needs_cjk(self.oled)

    def row_fits(self, lang: str, row: str) -> None:
        """One row, by each display's measure: columns, LCD characters, OLED pixels."""
        assert text_width(row) <= 20, row
        if lang != "zh":    # a Chinese table's LCD shows the English rows
            for display in self.hd44780.values():
                assert display.measure(to_ascii(row)) <= 20, row
        font = self.oled.font_for(row)
        assert self.oled.measure(row, font) <= self.oled.width, (row, font.size)

    def show(self, lang: str, by_lang: dict[str, list[str]]) -> None:
        """The whole screen on each display: shown as given, neither wrapped nor cut."""
        rows = by_lang[lang]
        self.terminal.show_indicator(by_lang, lang)
        assert self.terminal.lines == rows
        self.oled.show_indicator(by_lang, lang)
        assert self.oled.lines == rows
        for row, font in zip(self.oled.lines, self.oled.line_fonts, strict=True):
            assert self.oled.measure(row, font) <= self.oled.width, (row, font.size)
        shown = by_lang["en" if lang == "zh" else lang]
        for charmap, display in self.hd44780.items():
            display.show_indicator(by_lang, lang)
            assert [r.rstrip() for r in self.lcds[charmap].screen()] == \
                [to_ascii(r) for r in shown]


@pytest.fixture(scope="module")
def displays() -> Displays:
    return Displays()


def _visible(irr: Irregularity, lang: str, rows: list[str]) -> None:
    """The alert's name, a citation of its Law, its seat and a status are on the rows."""
    parts = alert_parts(irr, lang)
    text = " | ".join(rows)
    assert parts.name in text, (parts.name, rows)
    assert any(cite in text for cite in parts.cites), rows
    if parts.seat:
        assert f" {parts.seat}" in text, rows
    assert any(status in text for status in parts.statuses), rows


@pytest.mark.parametrize("code", list(Code))
def test_every_alert_fits_every_display_in_every_language(code: Code,
                                                         displays: Displays) -> None:
    seen: set[tuple[str, str]] = set()
    longest: dict[str, dict[str, list[str]]] = {}
    for irr, by_lang in _screens(code):
        for lang in LANGUAGES:
            rows = by_lang[lang]
            assert len(rows) == 4
            _visible(irr, lang, rows)
            for row in rows:
                if (lang, row) not in seen:
                    seen.add((lang, row))
                    displays.row_fits(lang, row)
            if sum(map(columns, rows)) > sum(map(columns, longest.get(lang, {lang: []})[lang])):
                longest[lang] = by_lang
    # every row fits each display: the fullest screens in each language, shown whole
    for lang, by_lang in longest.items():
        displays.show(lang, by_lang)


def test_the_controller_shows_an_alert_in_place_of_the_turn() -> None:
    script = t08_revoke()
    h = Harness(board=script.board, deal=script.parsed)
    h.board_tag(script.board)
    h.scan()
    h.call("S", "1C")    # E deals board 10: S calls out of rotation
    alert = h.alerts("CALL_OUT_OF_ROTATION")[-1]
    indicator = [o.payload for o in h.out if o.topic.endswith("/indicator")][-1]
    irr = Irregularity(id=alert["id"], code=Code.CALL_OUT_OF_ROTATION, law=alert["law"],
                       seat=Seat.S)
    for lang in LANGUAGES:
        rows = indicator["display"][lang]
        assert rows[-len(alert_rows(irr, lang)):] == alert_rows(irr, lang), rows
        assert all(columns(r) <= WIDTH for r in rows)
    assert indicator["display"]["en"] == ["Bd 10 Dlr E All vul", "Auction",
                                          "Call out of rotation", "Law 28 S open"]


def test_a_played_board_shows_its_score_for_the_players_to_check() -> None:
    # the t08 board: 4H by S, nine tricks played and two transferred for the revoke (64A1)
    done = BOARD_ROWS[-1]
    assert [done[lang][3] for lang in LANGUAGES] == ["NS +650", "NS +650", "南北+650"]
    assert done["en"][2] == "Cards back in board"
    # no score before the board ends
    assert all(rows[lang][3] == "" for rows in BOARD_ROWS[:-1] for lang in LANGUAGES)


def test_an_alert_keeps_its_laws_citation_and_says_its_status() -> None:
    revoke = Irregularity(id=1, code=Code.REVOKE, law="63A", seat=Seat.W)
    assert alert_rows(revoke, "en") == ["Revoke W", "Law 63A open"]
    assert alert_rows(revoke, "vi") == ["Lỗi đánh sai chất W", "Điều 63A chưa xử lý"]
    assert alert_rows(revoke, "zh") == ["藏牌 西", "第63A条 待处理"]
    established = Irregularity(id=1, code=Code.REVOKE, law="64A1", seat=Seat.E,
                               status=Status.ESTABLISHED)
    assert alert_rows(established, "en") == ["Revoke E", "Law 64A1 established"]
    assert alert_rows(established, "zh") == ["藏牌 东", "第64A1条 已成立"]
    rows = with_alert(BOARD_ROWS[0]["vi"], alert_rows(established, "vi"))
    assert rows[2:] == ["Lỗi đánh sai chất E", "64A1 được xác định"]
    assert rows[1] == "1C 1H nín"   # the auction stays in view


def _worst_values() -> Iterator[dict[str, Any]]:
    for n in (1, 9, 16, 99, 108, 999):
        for seat in Seat:
            for vul in Vulnerability:
                yield {"n": n, "dealer": seat, "seat": seat, "vul": vul,
                       "contract": Contract.parse("7NTXX"), "ns": 10, "ew": 13,
                       "tricks": 13, "score": -2980, "phase": "clarification"}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_display_key_has_a_form_that_fits(lang: str) -> None:
    keys = ("board_info", "contract", "contract_tricks", "passed_out", "lead", "turn",
            "call_turn", "board_complete", "return_cards", "waiting_board", "auction",
            "lead_face_down", "scan_hand", "must_pass", "wait_director", "call_director")
    for values in _worst_values():
        for key in keys:
            forms = ui_variants(key, lang, **values)
            assert any(columns(f) <= WIDTH for f in forms), (key, lang, forms)
            assert first_fit(forms) in forms


def test_a_passed_out_board_reads_in_the_language() -> None:
    passed = Contract.parse("Pass")
    assert [first_fit(ui_variants("contract", lang, contract=passed, seat=Seat.N))
            for lang in LANGUAGES] == ["Pass N", "bốn nín N", "四家不叫 北"]
