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


class _NumberedRow:
    """A row's forms with ``values`` filled in and each of ``names`` (numbers, written as
    ``str`` of them in every language) left as its ``{name}`` placeholder: rendered once,
    finished per call with the numbers (the tricks of a contract change every trick, a
    board's number every board: each would otherwise render every form of the row anew).

    A number is written in ASCII digits (and a minus sign), one column each, and columns
    add up character by character: which form fits depends only on how many characters
    each number takes, so the form is chosen once per such tuple of lengths and only that
    one is written."""

    __slots__ = ("forms", "widths", "counts", "marks", "names", "_fits")

    def __init__(self, key: str, lang: str, values: tuple[tuple[str, object], ...],
                 names: tuple[str, ...]) -> None:
        filled: dict[str, object] = dict(values)
        filled.update((name, "{" + name + "}") for name in names)
        self.names = names
        self.marks = tuple("{" + name + "}" for name in names)
        self.forms = tuple(ui_variants(key, lang, **filled))
        #: per form: its columns with every {name} left in, and how many times each
        #: {name} is in it
        self.widths = tuple(columns(form) for form in self.forms)
        self.counts = tuple(tuple(form.count(mark) for mark in self.marks)
                            for form in self.forms)
        #: the index of the first form that fits, per tuple of the numbers' lengths (-1:
        #: none does); a few entries (the lengths of the numbers a row is given)
        self._fits: dict[tuple[int, ...], int] = {}

    def _first_fit(self, lengths: tuple[int, ...]) -> int:
        # each {name} (its length plus two braces) becomes its number's characters
        grows = [length - len(name) - 2
                 for name, length in zip(self.names, lengths, strict=True)]
        for at, (width, counts) in enumerate(zip(self.widths, self.counts, strict=True)):
            for count, grow in zip(counts, grows, strict=True):
                width += count * grow
            if width <= WIDTH:
                return at
        return -1

    def text(self, numbers: tuple[int, ...]) -> str:
        """The row with ``numbers`` (one per name, in order) written in."""
        texts = [str(number) for number in numbers]
        lengths = tuple([len(text) for text in texts])
        at = self._fits.get(lengths)
        if at is None:
            at = self._fits[lengths] = self._first_fit(lengths)
        marks = self.marks
        if at < 0:  # none fits: cut, as first_fit does
            forms = self.forms
            for mark, text in zip(marks, texts, strict=True):
                forms = tuple(form.replace(mark, text) for form in forms)
            return first_fit(forms)
        form = self.forms[at]
        for mark, text in zip(marks, texts, strict=True):
            form = form.replace(mark, text)
        return form


@lru_cache(maxsize=4096)
def _numbered_row(key: str, lang: str, values: tuple[tuple[str, object], ...],
                  names: tuple[str, ...]) -> _NumberedRow:
    return _NumberedRow(key, lang, values, names)


class _TricksRows:
    """The contract and tricks row of one contract and declarer in each of some
    languages, finished per tricks (NS, EW) and kept: the row changes every trick, and a
    contract's tricks are met again on its next board (at most 105 pairs)."""

    __slots__ = ("rows", "_done")

    def __init__(self, contract: object, declarer: object, languages: tuple[str, ...]) -> None:
        values = (("contract", contract), ("seat", declarer))
        self.rows = tuple([_numbered_row("contract_tricks", lang, values, _TRICKS)
                           for lang in languages])
        #: the rows per tricks (ints: equal tricks are written alike)
        self._done: dict[tuple[int, ...], tuple[str, ...]] = {}

    def texts(self, tricks: tuple[int, ...]) -> tuple[str, ...]:
        done = self._done.get(tricks)
        if done is None:
            if len(self._done) >= 256:  # never reached by tricks that add up to 13: a bound
                self._done.clear()
            done = self._done[tricks] = tuple([row.text(tricks) for row in self.rows])
        return done


@lru_cache(maxsize=1024)
def _tricks_rows(contract: object, declarer: object, languages: tuple[str, ...]
                 ) -> _TricksRows:
    # all the rows depend on: the contract, the declarer, the language and the tricks
    return _TricksRows(contract, declarer, languages)


def _ui_numbers(key: str, lang: str, values: tuple[tuple[str, object], ...],
                **numbers: int) -> str:
    """``_ui(key, lang, **values, **numbers)``, rendered once per ``values`` and finished
    per call with the numbers (``_NumberedRow``)."""
    return _numbered_row(key, lang, values, tuple(numbers)).text(tuple(numbers.values()))


@lru_cache(maxsize=1024)
def _short_call(text: str, lang: str) -> tuple[str, int]:
    """The call's short text and its columns."""
    short = call_text(Call.parse(text), lang, short=True)
    return short, columns(short)


@lru_cache(maxsize=16384)
def _calls(calls: tuple[str, ...], lang: str) -> str:
    # the last calls (their PBN texts, ``str(call)``) that fit, newest kept. Columns add
    # up character by character (``columns``): the calls joined by spaces take the calls'
    # columns and one a space, counted without joining them
    shown = [_short_call(c, lang) for c in calls]
    width = sum([call_width for _, call_width in shown]) + len(shown) - 1
    while shown and width > WIDTH:
        width -= shown.pop(0)[1] + 1
    return " ".join([short for short, _ in shown])


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
#: rendered at all (controller/engine/render.py keeps the last key per table).
DisplayKey = tuple[tuple[object, ...] | None,
                   tuple[tuple[object, ...], tuple[object, ...], tuple[object, ...]],
                   Irregularity | None]
#: the middle rows' values of a table with no board
_NO_MID: tuple[tuple[object, ...], tuple[object, ...], tuple[object, ...]] = ((), (), ())


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
        return None, _NO_MID, alert
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
        if phase is Phase.SCANNING:
            scans = board.scans
            if any(scans.values()):
                # the shoe-style read (docs/sensing.md): each seat's count, and who has
                # not passed his 13 cards yet
                counts = tuple([len(scans[seat]) for seat in Seat])
                short = tuple([seat for seat in Seat if len(scans[seat]) < 13])
                if short:
                    third = ("pass_hands", short)
                fourth = ("counts", counts)
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


def _mid_rows(mid: tuple[tuple[object, ...], tuple[object, ...], tuple[object, ...]],
              lang: str) -> tuple[str, str, str]:
    """The second, third and fourth rows (auction or contract and tricks; whose turn it
    is; the board's score once it is played)."""
    second, third, fourth = mid
    return _second_row(second, lang), _third_row(third, lang), _fourth_row(fourth, lang)


def score_text(score: int) -> str:
    """A duplicate score as the players write it: ``+650``, ``-100``, ``0``."""
    return f"{score:+d}" if score else "0"


@lru_cache(maxsize=1024)
def _fourth_row(fourth: tuple[object, ...], lang: str) -> str:
    if not fourth:
        return ""
    if fourth[0] == "counts":
        counts = fourth[1]
        assert isinstance(counts, tuple)
        return first_fit([" ".join(_ui("hand_count", lang, seat=seat, count=count)
                                   for seat, count in zip(Seat, counts, strict=True))])
    (score,) = fourth
    assert isinstance(score, int)
    return _ui("score", lang, score=score_text(score))


#: the numbers of the contract and tricks row (``_second_row``)
_TRICKS = ("ns", "ew")


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
        if isinstance(tricks, tuple):  # DisplayRenderer._second_rows_of: the same row
            ns, ew = tricks
            return _ui_numbers("contract_tricks", lang,
                               (("contract", contract), ("seat", declarer)), ns=ns, ew=ew)
        return _ui("contract", lang, contract=contract, seat=declarer)
    return ""


@lru_cache(maxsize=8192)
def _second_rows(second: tuple[object, ...], languages: tuple[str, ...]) -> tuple[str, ...]:
    # the auction's rows (a few hundred all day), looked up once for all the languages
    return tuple([_second_row(second, lang) for lang in languages])


@lru_cache(maxsize=1024)
def _third_row(third: tuple[object, ...], lang: str) -> str:
    key, value = third
    if not key or value is None:
        return ""
    assert isinstance(key, str)
    if key == "pass_hands":
        assert isinstance(value, tuple)
        return _ui(key, lang, seats=" ".join(_ui("seat", lang, seat=seat) for seat in value))
    if key in ("board_complete", "return_cards"):
        if isinstance(value, int):  # the board's number: a new one every board
            return _ui_numbers(key, lang, (), n=value)
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
    event; the contract and tricks row, new every trick, is finished from its contract's
    ``_TricksRows``), the third row (whose turn it is: a few values all day) is looked up
    in the renderer's own table. The indicator is built after nearly every event
    (``turn`` changes), so this is its hot path (controller/engine/render.py,
    ``Payloads.indicator``); the rows are those of ``render_display``
    (tests/test_display_text_cache.py)."""

    __slots__ = ("languages", "_head", "_head_rows", "_second", "_second_rows", "_alert",
                 "_alert_rows", "_contract", "_declarer", "_tricks", "_thirds", "_blank")

    def __init__(self, languages: Sequence[str] = LANGUAGES) -> None:
        self.languages = tuple(languages)
        self._head: tuple[object, ...] | None = _UNSET
        self._head_rows: tuple[str, ...] = ()
        self._second: tuple[object, ...] = _UNSET
        self._second_rows: tuple[str, ...] = ()
        self._alert: Irregularity | None = None
        self._alert_rows: tuple[list[str], ...] = ()
        #: the contract and declarer of the last contract-and-tricks row, and that row
        #: per tricks (``_second_rows_of``)
        self._contract: object = _UNSET
        self._declarer: object = _UNSET
        self._tricks: _TricksRows | None = None
        #: the third row per language, by its part of the key: all the row depends on,
        #: the languages being the renderer's (``_third_rows``)
        self._thirds: dict[tuple[object, ...], tuple[str, ...]] = {}
        #: an empty row per language (the fourth row before the board is played)
        self._blank = tuple(_fourth_row((), lang) for lang in self.languages)

    def _second_rows_of(self, second: tuple[object, ...]) -> tuple[str, ...]:
        """``_second_row(second, lang)`` per language. The contract and tricks row changes
        every trick: its rows (``_TricksRows``) are looked up once per contract and
        declarer (compared by identity: the board's objects, the same from trick to
        trick), then by the tricks alone."""
        if len(second) == 3:
            contract, declarer, tricks = second
            # the branch of _second_row that writes the tricks in
            if isinstance(tricks, tuple) and len(tricks) == 2 and contract is not None \
                    and declarer is not None \
                    and not (isinstance(contract, Contract) and contract.passed_out):
                rows = self._tricks
                if rows is None or contract is not self._contract \
                        or declarer is not self._declarer:
                    self._contract, self._declarer = contract, declarer
                    rows = self._tricks = _tricks_rows(contract, declarer, self.languages)
                return rows.texts(tricks)
        return _second_rows(second, self.languages)

    def _thirds_of(self, third: tuple[object, ...]) -> tuple[str, ...]:
        rows = _third_rows(third, self.languages)
        if len(self._thirds) >= 64:  # a board's number is in its last row: a new one a board
            self._thirds.clear()
        self._thirds[third] = rows
        return rows

    def render(self, key: DisplayKey) -> dict[str, list[str]]:
        """The rows for ``key``, a fresh list per language (the payload's own)."""
        head, (second, third, fourth), alert = key
        if head is None:
            return render_display(key, self.languages)
        if head != self._head:
            self._head = head
            self._head_rows = tuple([_head_row(head, lang) for lang in self.languages])
        if second != self._second:
            self._second = second
            self._second_rows = self._second_rows_of(second)
        # whose turn it is: a few values per table, looked up in the table's own
        thirds = self._thirds.get(third)
        if thirds is None:
            thirds = self._thirds_of(third)
        fourths = _fourth_rows(fourth, self.languages) if fourth else self._blank
        if alert is None:
            if len(thirds) == 3:  # the three languages (the default) written out
                h0, h1, h2 = self._head_rows
                s0, s1, s2 = self._second_rows
                t0, t1, t2 = thirds
                f0, f1, f2 = fourths
                l0, l1, l2 = self.languages
                return {l0: [h0, s0, t0, f0], l1: [h1, s1, t1, f1], l2: [h2, s2, t2, f2]}
            return dict(zip(self.languages,
                            map(list, zip(self._head_rows, self._second_rows, thirds,
                                          fourths, strict=True)), strict=True))
        if alert is not self._alert:
            self._alert = alert
            self._alert_rows = tuple(_alert_lines(alert, lang) for lang in self.languages)
        return {lang: with_alert((h, s, t, f), a) for lang, h, s, t, f, a
                in zip(self.languages, self._head_rows, self._second_rows, thirds, fourths,
                       self._alert_rows, strict=True)}
