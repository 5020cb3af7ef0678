"""The text a table's display shows, in each language, built from the board's state.

Lines are meant for a 20x4 character display (the bridge fits them to its device): the
board and its markings, the auction or the contract and tricks, whose turn it is, and the
first irregularity the table is allowed to show. The indicator is rebuilt after every
event, so the phrases are memoised: a table meets the same few hundred of them all day.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from .laws.cards import Call
from .laws.irregularities import Irregularity
from .laws.messages import alert_text, call_text, ui_text
from .laws.table import Board, Phase

LANGUAGES = ("en", "vi", "zh")


@lru_cache(maxsize=8192)
def _ui_cached(key: str, lang: str, values: tuple[tuple[str, object], ...]) -> str:
    return ui_text(key, lang, short=True, **dict(values))


def _ui(key: str, lang: str, **values: object) -> str:
    return _ui_cached(key, lang, tuple(sorted(values.items())))


@lru_cache(maxsize=4096)
def _calls(calls: tuple[Call, ...], lang: str) -> str:
    return " ".join(call_text(c, lang, short=True) for c in calls)


@lru_cache(maxsize=4096)
def _alert(irr: Irregularity, lang: str) -> str:
    return alert_text(irr, lang, short=True)


def _alert_line(irr: Irregularity, lang: str) -> str:
    try:
        return _alert(irr, lang)
    except TypeError:  # a parameter that cannot be hashed: render it uncached
        return alert_text(irr, lang, short=True)


def display_lines(board: Board | None, shown: Sequence[Irregularity]) -> dict[str, list[str]]:
    return {lang: _lines(board, shown, lang) for lang in LANGUAGES}


def _lines(board: Board | None, shown: Sequence[Irregularity], lang: str) -> list[str]:
    if board is None:
        return [_ui("waiting_board", lang), "", "", ""]
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
            second = _ui("contract", lang, contract=contract, seat=auction.declarer)
            if board.play is not None:
                ns, ew = board.play.tricks_won()
                second += " " + _ui("tricks", lang, ns=ns, ew=ew)
        if phase is Phase.LEAD and auction.opening_leader is not None:
            third = _ui("lead", lang, seat=auction.opening_leader)
        elif phase is Phase.PLAY and board.turn is not None:
            third = _ui("turn", lang, seat=board.turn)
        elif phase is Phase.COMPLETE:
            third = _ui("board_complete" if board.done else "return_cards", lang,
                        n=board.number)
    fourth = _alert_line(shown[0], lang) if shown else ""
    return [first, second, third, fourth]
