"""One language at a time: with ``--lang vi`` or ``zh`` the demo prints no English.

A word counts as English when the project's own English texts use it (every alert,
outcome phrase, display string, phase and demo label, and the alert codes) and its
Vietnamese texts do not. Card and call symbols (``♥9``, ``1C``, ``3NT``, ``3KC``, ``X``,
``XX``), the seat letters N E S W (NS, EW) and the product's name stay. The PBN record the
demo prints at its end is a file in a fixed format (tag names and all) and is not checked.
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


def _plain_lines(output: str) -> list[str]:
    return output.split("[pbn]", 1)[0].splitlines()


@pytest.mark.timeout(300)
@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_the_demo_prints_no_english(lang: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--lang", lang,
                           "--speed", "60", "--plain"], cwd=REPO, capture_output=True,
                          text=True, timeout=240, stdin=subprocess.DEVNULL,
                          env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = _plain_lines(proc.stdout)
    assert len(lines) > 100
    offenders = [(line, english_words(line)) for line in lines if english_words(line)]
    assert not offenders, offenders[:5]
    # the displays' rows the demo prints ([bàn] / [牌桌] lines) are in the language too
    table = "[bàn]" if lang == "vi" else "[牌桌]"
    assert any(line.startswith(table) for line in lines)


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
        offenders = [(line, english_words(line)) for line in view.lines()
                     if english_words(line)]
        assert not offenders, offenders
    passed = demo.result_line({"board": 3, "contract": "Pass"}, lang)
    assert not english_words(passed), passed
    assert english_words(demo.result_line({"board": 3, "contract": "Pass"}, "en"))


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_every_message_is_in_its_language(lang: str) -> None:
    from test_messages import _all_texts
    offenders = [(text, english_words(text)) for text in _all_texts(lang)
                 if english_words(text)]
    assert not offenders, offenders[:5]
