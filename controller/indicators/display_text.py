"""The text a table's display shows, in each language, built from the board's state.

Four rows of at most ``WIDTH`` columns (a 20x4 character display; a CJK character takes
two columns, as on a terminal and, at twice the width of a Latin letter, on the OLED): the
board and its markings, the auction or the contract and tricks, whose turn it is, the score
once the board is played, and the first irregularity the table is allowed to show (over
the last rows). Every row is chosen to fit, never cut or
wrapped by the display: each text has shorter forms (controller/laws/messages.py), the
first that fits is taken. Seats are N E S W in English and Vietnamese, 北 东 南 西 in
Chinese. An alert shows its name, its
Law, the seat and its status whole: on the last row when that fits, else on the last two.

The indicator is rebuilt after every event, so the phrases are memoised: a table meets the
same few hundred of them all day. The rows are rendered from a ``display_key`` (the values
they show), once per key and language, and only in the languages asked for.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from functools import lru_cache

from controller.laws.cards import Call, Contract, Seat
from controller.laws.irregularities import Irregularity
from controller.laws.messages import alert_parts, call_text, ui_variants
from controller.laws.table import Board, Phase

LANGUAGES = ("en", "vi", "zh")
#: no value given, or no part rendered yet (never a key's part)
_UNSET: tuple[object, ...] = ("<unset>",)
#: Columns of a display row.
WIDTH = 20
#: Rows of the display.
ROWS = 4


def columns(text: str) -> int:
    """Columns ``text`` takes on a character display or a terminal: East Asian wide and
    fullwidth characters take two, combining marks none."""
    if text.isascii():
        return len(text)
    return _wide_columns(text)


@lru_cache(maxsize=16384)
def _wide_columns(text: str) -> int:
    # a table meets the same rows all day: counted once per text
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
def _open_forms(key: str, lang: str, values: tuple[tuple[str, object], ...],
                numbers: tuple[str, ...]) -> tuple[str, ...]:
    """The row's forms with ``values`` filled in and each of ``numbers`` left as its
    ``{name}`` placeholder (a number is written as ``str`` of it in every language)."""
    filled: dict[str, object] = dict(values)
    filled.update((name, "{" + name + "}") for name in numbers)
    return tuple(ui_variants(key, lang, **filled))


@lru_cache(maxsize=4096)
def _open_widths(key: str, lang: str, values: tuple[tuple[str, object], ...],
                 numbers: tuple[str, ...]) -> tuple[tuple[str, int, tuple[int, ...]], ...]:
    """Per form of ``_open_forms``: the form, its columns with every ``{name}`` left in,
    and how many times each of ``numbers`` is in it. A number is written in ASCII digits,
    one column each, and columns add up character by character: a form's columns once
    filled in are known without writing it."""
    return tuple((form, columns(form), tuple(form.count("{" + name + "}") for name in numbers))
                 for form in _open_forms(key, lang, values, numbers))


def _ui_numbers(key: str, lang: str, values: tuple[tuple[str, object], ...],
                **numbers: int) -> str:
    """``_ui(key, lang, **values, **numbers)``, rendered once per ``values`` and finished
    per call with the numbers (the tricks of a contract change every trick, a board's
    number every board: each would otherwise render every form of the row anew). The
    first form that fits is found from the forms' columns; only that one is written."""
    names = tuple(numbers)
    texts = [str(number) for number in numbers.values()]
    # each {name} (its length plus two braces) becomes its number's digits
    grows = [len(text) - len(name) - 2 for name, text in zip(names, texts, strict=True)]
    for form, width, counts in _open_widths(key, lang, values, names):
        for count, grow in zip(counts, grows, strict=True):
            width += count * grow
        if width <= WIDTH:
            for name, text in zip(names, texts, strict=True):
                form = form.replace("{" + name + "}", text)
            return form
    forms = _open_forms(key, lang, values, names)   # none fits: cut, as first_fit does
    for name, text in zip(names, texts, strict=True):
        mark = "{" + name + "}"
        forms = tuple(form.replace(mark, text) for form in forms)
    return first_fit(forms)


@lru_cache(maxsize=1024)
def _short_call(text: str, lang: str) -> str:
    return call_text(Call.parse(text), lang, short=True)


@lru_cache(maxsize=16384)
def _calls(calls: tuple[str, ...], lang: str) -> str:
    # the last calls (their PBN texts, ``str(call)``) that fit, newest kept
    shown = [_short_call(c, lang) for c in calls]
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


#: What a display's rows depend on (``display_key``): the board row's values, the middle
#: rows' values and the alert shown. Equal keys give equal rows, so the rows are rendered
#: once per key and language (cached), and a table whose key did not change is not
#: rendered at all (controller/engine.py keeps the last key per table).
DisplayKey = tuple[tuple[object, ...] | None, tuple[object, ...], Irregularity | None]


def display_key(board: Board | None, shown: Sequence[Irregularity],
                turn: Seat | None | object = _UNSET,
                last_calls: tuple[str, ...] | None = None,
                won: tuple[int, int] | None = None) -> DisplayKey:
    """The values the rows of ``board`` with ``shown`` alerts are rendered from: the board
    row's, the second row's (the auction's last four calls as text, or the contract and
    tricks) and the third's (whose turn it is), each its own key so that each row is
    rendered once per value, and the fourth row's (the score once the board is played,
    for the players to check before the hands go back). ``turn`` (``board.turn``),
    ``last_calls`` (the texts, ``str(call)``, of the auction's last four calls) and
    ``won`` (the play's ``tricks_won``) when the caller has them."""
    alert = shown[0] if shown else None
    if board is None:
        return None, (), alert
    if turn is _UNSET:
        turn = board.turn
    head = (board.number, board.dealer, board.vulnerability)
    auction = board.auction
    phase = board.phase
    second: tuple[object, ...]
    third: tuple[object, ...]
    fourth: tuple[object, ...] = ()
    if phase is Phase.SCANNING or phase is Phase.AUCTION:
        if last_calls is None:
            last_calls = tuple([str(c) for _, c in auction.calls[-4:]])
        second = (last_calls,)
        third = ("call_turn", turn)
    else:
        tricks = won if won is not None or board.play is None else board.play.tricks_won
        second = (auction.contract, auction.declarer, tricks)
        if phase is Phase.LEAD:
            third = ("lead", auction.opening_leader)
        elif phase is Phase.PLAY:
            third = ("turn", turn)
        elif phase is Phase.COMPLETE:
            third = ("board_complete" if board.done else "return_cards", board.number)
            score = board.score_ns
            if score is not None:
                fourth = (score,)
        else:
            third = ("", None)
    return head, (second, third, fourth), alert


def display_lines(board: Board | None, shown: Sequence[Irregularity],
                  languages: Sequence[str] = LANGUAGES) -> dict[str, list[str]]:
    """The display's rows in each of ``languages``."""
    return render_display(display_key(board, shown), languages)


def render_display(key: DisplayKey, languages: Sequence[str] = LANGUAGES
                   ) -> dict[str, list[str]]:
    """The rows for a ``display_key``, a fresh list per language (the payload's own)."""
    head, mid, alert = key
    out: dict[str, list[str]] = {}
    for lang in languages:
        if head is None:
            rows: Sequence[str] = (_ui("waiting_board", lang), "", "", "")
        else:
            rows = (_head_row(head, lang), *_mid_rows(mid, lang))
        out[lang] = with_alert(rows, _alert_lines(alert, lang)) if alert is not None \
            else list(rows)
    return out


@lru_cache(maxsize=4096)
def _head_row(head: tuple[object, ...], lang: str) -> str:
    number, dealer, vul = head
    assert isinstance(number, int)
    return _ui_numbers("board_info", lang, (("dealer", dealer), ("vul", vul)), n=number)


def _mid_rows(mid: tuple[object, ...], lang: str) -> tuple[str, str, str]:
    """The second, third and fourth rows (auction or contract and tricks; whose turn it
    is; the board's score once it is played)."""
    second, third, fourth = mid
    assert isinstance(second, tuple) and isinstance(third, tuple) and isinstance(fourth, tuple)
    return _second_row(second, lang), _third_row(third, lang), _fourth_row(fourth, lang)


def score_text(score: int) -> str:
    """A duplicate score as the players write it: ``+650``, ``-100``, ``0``."""
    return f"{score:+d}" if score else "0"


@lru_cache(maxsize=1024)
def _fourth_row(fourth: tuple[object, ...], lang: str) -> str:
    if not fourth:
        return ""
    (score,) = fourth
    assert isinstance(score, int)
    return _ui("score", lang, score=score_text(score))


@lru_cache(maxsize=16384)
def _second_row(second: tuple[object, ...], lang: str) -> str:
    if len(second) == 1:  # the auction's last calls
        calls = second[0]
        assert isinstance(calls, tuple)
        return _calls(calls, lang) if calls else _ui("auction", lang)
    contract, declarer, tricks = second
    if isinstance(contract, Contract) and contract.passed_out:
        return _ui("passed_out", lang)
    if contract is not None and declarer is not None:
        if isinstance(tricks, tuple):
            ns, ew = tricks
            return _ui_numbers("contract_tricks", lang,
                               (("contract", contract), ("seat", declarer)), ns=ns, ew=ew)
        return _ui("contract", lang, contract=contract, seat=declarer)
    return ""


@lru_cache(maxsize=1024)
def _third_row(third: tuple[object, ...], lang: str) -> str:
    key, value = third
    if not key or value is None:
        return ""
    assert isinstance(key, str)
    if key in ("board_complete", "return_cards"):
        return _ui(key, lang, n=value)
    return _ui(key, lang, seat=value)


def with_alert(rows: Sequence[str], alert: Sequence[str]) -> list[str]:
    """The board's rows with the alert's rows (one or two) in place of the last ones."""
    return [*rows[:ROWS - len(alert)], *alert]


@lru_cache(maxsize=256)
def _third_rows(third: tuple[object, ...], languages: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_third_row(third, lang) for lang in languages)


@lru_cache(maxsize=256)
def _fourth_rows(fourth: tuple[object, ...], languages: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_fourth_row(fourth, lang) for lang in languages)


class DisplayRenderer:
    """``render_display`` for one table, in its ``languages``: the board row and the
    second row are kept from the last key and rendered again only when their part of the
    key changes (compared, not hashed: a board's parts are the same objects event after
    event), the third row (whose turn it is: a few values all day) is looked up. The
    indicator is built after nearly every event (``turn`` changes), so this is its hot
    path (controller/engine.py, ``_indicator``); the rows are those of ``render_display``
    (tests/test_display_text_cache.py)."""

    __slots__ = ("languages", "_head", "_head_rows", "_second", "_second_rows", "_alert",
                 "_alert_rows")

    def __init__(self, languages: Sequence[str] = LANGUAGES) -> None:
        self.languages = tuple(languages)
        self._head: tuple[object, ...] | None = _UNSET
        self._head_rows: tuple[str, ...] = ()
        self._second: tuple[object, ...] = _UNSET
        self._second_rows: tuple[str, ...] = ()
        self._alert: Irregularity | None = None
        self._alert_rows: tuple[list[str], ...] = ()

    def render(self, key: DisplayKey) -> dict[str, list[str]]:
        """The rows for ``key``, a fresh list per language (the payload's own)."""
        head, mid, alert = key
        languages = self.languages
        if head is None:
            return render_display(key, languages)
        if head != self._head:
            self._head = head
            self._head_rows = tuple(_head_row(head, lang) for lang in languages)
        second, third, fourth = mid
        assert isinstance(second, tuple) and isinstance(third, tuple) and isinstance(fourth, tuple)
        if second != self._second:
            self._second = second
            self._second_rows = tuple(_second_row(second, lang) for lang in languages)
        thirds = _third_rows(third, languages)
        fourths = _fourth_rows(fourth, languages)
        if alert is None:
            return {lang: [h, s, t, f] for lang, h, s, t, f
                    in zip(languages, self._head_rows, self._second_rows, thirds, fourths,
                           strict=True)}
        if alert is not self._alert:
            self._alert = alert
            self._alert_rows = tuple(_alert_lines(alert, lang) for lang in languages)
        return {lang: with_alert((h, s, t, f), a) for lang, h, s, t, f, a
                in zip(languages, self._head_rows, self._second_rows, thirds, fourths,
                       self._alert_rows, strict=True)}
