"""One language at a time: with ``--lang vi`` or ``zh`` every line the demo prints is in
that language, and an English run has no other.

A word counts as English when the project's own English texts use it (every alert,
outcome phrase, display string, phase and demo label, and the alert codes) and its
Vietnamese texts do not. Card and call symbols (``♥9``, ``1C``, ``3NT``, ``3KC``, ``X``,
``XX``), Law numbers and the product's name stay. Seats are named as the language names
them (Đông, 东), never by the letters N E S W (NS, EW), except in the table display's
rows, where the glossary keeps the letters for every language. The PBN record the demo
prints at its end is a file in a fixed format (tag names and all) and is not checked.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from controller import demo
from controller.demo import view as demo_view
from controller.laws import messages
from controller.laws.cards import Card
from controller.laws.irregularities import Code

REPO = Path(__file__).resolve().parent.parent

_SYMBOLS = re.compile(r"[♠♥♦♣](?:10|[AKQJT2-9])|(?<![^\W\d_])(?:[1-7](?:NT|KC|[CDHS])(?:XX|X)?"
                      r"|XX?|NS|EW|[NESW]|[CDHS](?:10|[AKQJT2-9]))(?![^\W\d_])|bridge-table")
_WORD = re.compile(r"[^\W\d_]+")


def _words(texts: object) -> set[str]:
    out: set[str] = set()
    if isinstance(texts, str):
        return {w.lower() for w in _WORD.findall(re.sub(r"\{\w+\}", " ", texts))}
    if isinstance(texts, dict):
        texts = list(texts.values())
    if isinstance(texts, (list, tuple)):
        for t in texts:
            out |= _words(t)
    return out


def _texts(lang: int) -> list[object]:
    tables: list[object] = [
        [v[lang] for v in messages._BASE.values()],
        [v[lang] for v in messages._BASE_BY_STATUS.values()],
        [v[lang] for v in messages._SHORT.values()],
        [v[lang] for v in messages._STATUS.values()],
        [v[lang] for v in messages.DETAILS.values()],
        [v[lang] for v in messages._UI.values()],
        messages._PHASES[messages.LANGUAGES[lang]],
        demo_view._LABELS[messages.LANGUAGES[lang]],
    ]
    return tables


VIETNAMESE = _words(_texts(1))
ENGLISH = (_words(_texts(0)) | {w.lower() for c in Code for w in c.value.split("_")}
           | set(demo_view._TAGS["vi"]) | {"law", "board", "trick", "alert", "open", "by"}) \
    - VIETNAMESE


def english_words(line: str) -> list[str]:
    return [w for w in _WORD.findall(_SYMBOLS.sub(" ", line)) if w.lower() in ENGLISH
            or (w.isascii() and w.isupper() and len(w) > 2 and w.lower() not in VIETNAMESE)]


def test_the_check_finds_english() -> None:
    assert english_words("[alert] #1 REVOKE (Law 63A) East: open - Revoke") != []
    assert english_words("[bài] Nước 6: Đông ♥9") == []
    assert english_words("[bàn] N:- E:lượt | Ván 10 E chia / 1C X 2NT nín / NS 3 EW 2") == []
    assert english_words("Board 10 passed out") == ["Board", "passed", "out"]


# Cards, calls (symbols, PBN letters) and Laws (63A1, 43B2b) as the demo prints them: not
# words of any language.
_CARDS_AND_CALLS = re.compile(r"[♠♥♦♣](?:10|[AKQJT2-9])|(?<![^\W\d_])(?:[1-7](?:NT|KC|[CDHS])"
                              r"(?:XX|X)?|XX?|[CDHS](?:10|[AKQJT2-9]))(?![^\W\d_])|bridge-table"
                              r"|(?<![^\W\d_])\d{1,2}[A-H](?:\d+[a-z]?)*")
# Latin letters, Vietnamese's included: a seat letter is one standing alone among them.
_LATIN = "0-9A-Za-z\u00c0-\u024f\u1e00-\u1eff"
_SEAT_LETTERS = re.compile(rf"(?<![{_LATIN}])(?:NS|EW|[NESW])(?![{_LATIN}])")
_LATIN_WORD = re.compile(rf"[{_LATIN[3:]}]+")
_CJK = re.compile(r"[\u2e80-\u9fff\uff00-\uffef]")
_VIETNAMESE_LETTERS = re.compile(r"[\u00c0-\u024f\u1e00-\u1eff]")


def seat_letters(text: str) -> list[str]:
    return _SEAT_LETTERS.findall(_CARDS_AND_CALLS.sub(" ", text))


def latin_words(text: str) -> list[str]:
    return _LATIN_WORD.findall(_CARDS_AND_CALLS.sub(" ", text))


def foreign(line: str, lang: str) -> list[str]:
    """What in a line of the demo's own text is not in ``lang``."""
    if lang == "en":
        return _CJK.findall(line) + _VIETNAMESE_LETTERS.findall(line)
    out = english_words(line) + seat_letters(line)
    if lang == "vi":
        return out + _CJK.findall(line)
    return out + latin_words(line)


def test_the_checks_find_other_languages() -> None:
    assert seat_letters("[bàn] N:- E:lượt | Ván 10") == ["N", "E"]
    assert seat_letters("[điểm] NS +650") == ["NS"]
    assert seat_letters("[giá] Nam 1S, Đông 2NT, Bắc X") == []
    assert seat_letters("[bài] Nước 6: Đông ♥9; Nữ") == []
    assert foreign("[得分] NS +650", "zh") == ["NS", "NS"]
    assert foreign("[出牌] 第1墩：西 ♣10 1NT XX 第63A1条 43B2b", "zh") == []
    assert foreign("[ván] 第10副", "vi") == ["第", "副"]
    assert foreign("[board] Ván 10", "en") == ["á"]


def _own_lines(output: str) -> list[str]:
    """The demo's own text: every line before the PBN record (a file in a fixed format, tag
    names and all), without the table display's rows after ``|`` (a 20-column display
    writes seats as N E S W in every language, as cards and PBN do)."""
    lines = output.split("[pbn]", 1)[0].splitlines()
    return [line.split(" | ", 1)[0] for line in lines]


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lang", ["en", "vi", "zh"])
def test_every_line_of_the_demo_is_in_the_chosen_language(lang: str) -> None:
    """The whole plain output of a demo run: no English words and no seat letters in a
    Vietnamese or Chinese run (no Latin word at all in Chinese but cards and calls), no
    Chinese in Vietnamese, neither Chinese nor Vietnamese in English."""
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--lang", lang,
                           "--speed", "60", "--plain"], cwd=REPO, capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _own_lines(proc.stdout)
    assert len(lines) > 100
    offenders = [(line, foreign(line, lang)) for line in lines if foreign(line, lang)]
    assert not offenders, offenders[:5]
    # the table display's rows are printed too, in the language: no other's script there
    rows = [line.split(" | ", 1)[1] for line in proc.stdout.split("[pbn]", 1)[0].splitlines()
            if " | " in line]
    assert rows
    other_script = {"en": _CJK, "vi": _CJK, "zh": _VIETNAMESE_LETTERS}[lang]
    assert not [row for row in rows if other_script.search(row)]


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_the_live_view_prints_no_english(lang: str) -> None:
    """The terminal drawing (``TableView.lines``) at the end of a board, passed out too."""
    hands = {s: [Card.parse("SA"), Card.parse("HT")] for s in "NESW"}
    view = demo.TableView(lang=lang, hands=hands, names=dict.fromkeys("NESW", ""),
                          out=io.StringIO(), live=True)
    view.state = {"board": 10, "dealer": "E", "vul": "All", "phase": "play",
                  "auction": [["E", "1C"], ["S", "1H"], ["W", "Pass"], ["N", "4H"]],
                  "contract": "4H", "declarer": "S", "tricks": {"NS": 3, "EW": 2}}
    view.indicator = {"display": {"en": ["Bd 10"], "vi": ["Ván 10 E chia"],
                                  "zh": ["第10副 E发牌"]}}
    view.tricks = [[("W", "CT"), ("N", "C3")]]
    view.alerts = {1: {"id": 1, "code": "REVOKE", "law": "63A1", "status": "established",
                       "seat": "E", "trick": 6, "text": {"en": "Law 63A1: Revoke.",
                                                         "vi": "Điều 63A1: Lỗi đánh sai.",
                                                         "zh": "第63A1条：藏牌。"}}}
    view.result = {"board": 10, "contract": "4H", "declarer": "S", "tricks": 11,
                   "tricks_played": 9, "score_ns": 650}
    for phase in ("scanning", "auction", "lead", "play", "complete", "waiting"):
        view.state["phase"] = phase
        # the display's box ("  |...|") shows the display's rows, seat letters and all
        lines = [line for line in view.lines() if not line.startswith("  |")]
        offenders = [(line, foreign(line, lang)) for line in lines if foreign(line, lang)]
        assert not offenders, offenders
    passed = demo.result_line({"board": 3, "contract": "Pass"}, lang)
    assert not foreign(passed, lang), passed
    assert english_words(demo.result_line({"board": 3, "contract": "Pass"}, "en"))


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_every_message_is_in_its_language(lang: str) -> None:
    from test_messages import _all_texts
    offenders = [(text, english_words(text)) for text in _all_texts(lang)
                 if english_words(text)]
    assert not offenders, offenders[:5]
