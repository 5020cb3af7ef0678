"""The text a table's display shows, in each language, built from the board's state.

Four rows of at most ``WIDTH`` columns (a 20x4 character display; a CJK character takes
two columns, as on a terminal and, at twice the width of a Latin letter, on the OLED): the
board and its markings, the auction or the contract and tricks, whose turn it is, and the
first irregularity the table is allowed to show. Every row is chosen to fit, never cut or
wrapped by the display: each text has shorter forms (controller/laws/messages.py), the
first that fits is taken. Seats are N E S W in every language. An alert shows its name, its
Law, the seat and its status whole: on the last row when that fits, else on the last two.

The indicator is rebuilt after every event, so the phrases are memoised: a table meets the
same few hundred of them all day.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from .laws.cards import Call
from .laws.irregularities import Irregularity
from .laws.messages import alert_parts, call_text, ui_variants
from .laws.table import Board, Phase

LANGUAGES = ("en", "vi", "zh")
#: Columns of a display row.
WIDTH = 20
#: Rows of the display.
ROWS = 4


def columns(text: str) -> int:
    """Columns ``text`` takes on a character display or a terminal: East Asian wide and
    fullwidth characters take two, combining marks none."""
    return sum(0 if unicodedata.combining(ch) else
               2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def first_fit(forms: Iterable[str]) -> str:
    """The first form that fits a row (the last one cut if none does)."""
    last = ""
    for form in forms:
        if columns(form) <= WIDTH:
            return form
        last = form
    # no form fits (a board number of many digits): cut, never wrap onto the alert's row
    while columns(last) > WIDTH:
        last = last[:-1]
    return last


@lru_cache(maxsize=8192)
def _ui_cached(key: str, lang: str, values: tuple[tuple[str, object], ...]) -> str:
    return first_fit(ui_variants(key, lang, **dict(values)))


def _ui(key: str, lang: str, **values: object) -> str:
    return _ui_cached(key, lang, tuple(sorted(values.items())))


@lru_cache(maxsize=4096)
def _calls(calls: tuple[Call, ...], lang: str) -> str:
    # the last calls that fit, newest kept
    shown = [call_text(c, lang, short=True) for c in calls]
    while shown and columns(" ".join(shown)) > WIDTH:
        shown.pop(0)
    return " ".join(shown)


def alert_rows(irr: Irregularity, lang: str) -> list[str]:
    """The alert's rows: one when the Law, the name, the seat and the status fit on it,
    else the name with the seat and then the Law with the status (or the seat there)."""
    parts = alert_parts(irr, lang)

    def join(*pieces: str) -> str:
        return " ".join(p for p in pieces if p)

    # the fullest citation first ("Điều 27" before "27"), then the fullest status; one row
    # before two
    for cite in parts.cites:
        for status in parts.statuses:
            for rows in ([join(cite, parts.name, parts.seat, status)],
                         [join(parts.name, parts.seat), join(cite, status)],
                         [parts.name, join(cite, parts.seat, status)]):
                if all(columns(r) <= WIDTH for r in rows):
                    return rows
    return [first_fit([parts.name]),
            first_fit([join(parts.cites[-1], parts.seat, parts.statuses[-1])])]


@lru_cache(maxsize=4096)
def _alert(irr: Irregularity, lang: str) -> tuple[str, ...]:
    return tuple(alert_rows(irr, lang))


def _alert_lines(irr: Irregularity, lang: str) -> list[str]:
    try:
        return list(_alert(irr, lang))
    except TypeError:  # a parameter that cannot be hashed: render it uncached
        return alert_rows(irr, lang)


def display_lines(board: Board | None, shown: Sequence[Irregularity]) -> dict[str, list[str]]:
    return {lang: _lines(board, shown, lang) for lang in LANGUAGES}


def _lines(board: Board | None, shown: Sequence[Irregularity], lang: str) -> list[str]:
    if board is None:
        rows = [_ui("waiting_board", lang), "", "", ""]
    else:
        rows = _board_lines(board, lang)
    return with_alert(rows, _alert_lines(shown[0], lang)) if shown else rows


def with_alert(rows: Sequence[str], alert: Sequence[str]) -> list[str]:
    """The board's rows with the alert's rows (one or two) in place of the last ones."""
    return [*rows[:ROWS - len(alert)], *alert]


def _board_lines(board: Board, lang: str) -> list[str]:
    first = _ui("board_info", lang, n=board.number, dealer=board.dealer,
                vul=board.vulnerability)
    second = third = ""
    auction = board.auction
    phase = board.phase
    if phase is Phase.SCANNING or phase is Phase.AUCTION:
        calls = tuple(c for _, c in auction.calls[-4:])
        second = _calls(calls, lang) if calls else _ui("auction", lang)
        turn = board.turn
        if turn is not None:
            third = _ui("call_turn", lang, seat=turn)
    else:
        contract = auction.contract
        if contract is not None and contract.passed_out:
            second = _ui("passed_out", lang)
        elif contract is not None and auction.declarer is not None:
            if board.play is not None:
                ns, ew = board.play.tricks_won
                second = _ui("contract_tricks", lang, contract=contract, seat=auction.declarer,
                             ns=ns, ew=ew)
            else:
                second = _ui("contract", lang, contract=contract, seat=auction.declarer)
        if phase is Phase.LEAD and auction.opening_leader is not None:
            third = _ui("lead", lang, seat=auction.opening_leader)
        elif phase is Phase.PLAY and board.turn is not None:
            third = _ui("turn", lang, seat=board.turn)
        elif phase is Phase.COMPLETE:
            third = _ui("board_complete" if board.done else "return_cards", lang,
                        n=board.number)
    return [first, second, third, ""]
