"""The text a table's display shows, in each language, built from the board's state.

Lines are meant for a 20x4 character display (the bridge fits them to its device): the
board and its markings, the auction or the contract and tricks, whose turn it is, and the
first irregularity the table is allowed to show.
"""

from __future__ import annotations

from collections.abc import Sequence

from .laws.irregularities import Irregularity
from .laws.messages import alert_text, call_text, ui_text
from .laws.table import Board, Phase

LANGUAGES = ("en", "vi", "zh")


def display_lines(board: Board | None, shown: Sequence[Irregularity]) -> dict[str, list[str]]:
    return {lang: _lines(board, shown, lang) for lang in LANGUAGES}


def _lines(board: Board | None, shown: Sequence[Irregularity], lang: str) -> list[str]:
    if board is None:
        return [ui_text("waiting_board", lang, short=True), "", "", ""]
    first = ui_text("board_info", lang, short=True, n=board.number, dealer=board.dealer,
                    vul=board.vulnerability)
    second = third = ""
    auction = board.auction
    if board.phase in (Phase.SCANNING, Phase.AUCTION):
        calls = auction.calls[-4:]
        second = " ".join(call_text(c, lang, short=True) for _, c in calls) \
            or ui_text("auction", lang, short=True)
        if board.turn is not None:
            third = ui_text("call_turn", lang, short=True, seat=board.turn)
    else:
        contract = auction.contract
        if contract is not None and contract.passed_out:
            second = ui_text("passed_out", lang, short=True)
        elif contract is not None and auction.declarer is not None:
            second = ui_text("contract", lang, short=True, contract=contract,
                             seat=auction.declarer)
            if board.play is not None:
                ns = sum(1 for t in board.play.tricks if t.winner and t.winner.side.value == "NS")
                ew = sum(1 for t in board.play.tricks if t.winner and t.winner.side.value == "EW")
                second += " " + ui_text("tricks", lang, short=True, ns=ns, ew=ew)
        if board.phase is Phase.LEAD and auction.opening_leader is not None:
            third = ui_text("lead", lang, short=True, seat=auction.opening_leader)
        elif board.phase is Phase.PLAY and board.turn is not None:
            third = ui_text("turn", lang, short=True, seat=board.turn)
        elif board.phase is Phase.COMPLETE:
            third = ui_text("return_cards" if not board.done else "board_complete", lang,
                            short=True, n=board.number)
    fourth = alert_text(shown[0], lang, short=True) if shown else ""
    return [first, second, third, fourth]
