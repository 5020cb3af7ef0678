"""LIN (Bridge Base Online): hand records and vugraph files, read forgivingly and written.

A LIN file is a stream of ``key|value|`` pairs; line breaks carry no meaning. Keys read:

- ``pn`` players, South West North East (vugraph: eight, open room then closed room);
- ``md`` dealer digit (1 S, 2 W, 3 N, 4 E) and the hands S, W, N, E (the last may be
  left out: it is the rest of the pack); ``sv`` vulnerability (``o``/``0``/``-`` none,
  ``n``, ``e``, ``b``); ``ah`` the board header (``Board 12``); ``qx`` the vugraph board
  id (``o12`` open room, ``c12`` closed room); ``vg`` the vugraph event line;
- ``mb`` a call (``p`` ``d`` ``r`` ``1N`` ...; a trailing ``!`` is an alert), ``an`` the
  explanation of the call before it, ``pc`` a card in playing order, ``mc`` a claim (the
  declarer's total tricks), ``pg`` page breaks;
- ``rs`` (vugraph results: each board's entry goes to the record's ``VugraphResult`` tag;
  ``vugraph_result`` reads it), ``nt`` (commentary), ``st``, ``rh``, ``pw``, ``bn`` and any other
  key are accepted and ignored.

A board that cannot be understood (an unknown call, a card played twice or from a hand
that does not hold it, a call after the auction ended) is reported as a ``FormatError``
and skipped. Writing gives one line per board: ``pn md sv ah mb an pc mc pg``.
LIN has no notation for irregularities or cancelled calls: a LIN record keeps the calls
that stand and the cards as played.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TextIO

from controller.formats.errors import BadRecord, FormatError
from controller.formats.source import Source, read_source
from controller.laws.auction import auction_outcome
from controller.laws.cards import (
    PASSED_OUT,
    Call,
    CallKind,
    Card,
    Contract,
    Deal,
    Denomination,
    ParseError,
    Rank,
    Seat,
    Suit,
    Vulnerability,
    board_vulnerability,
)
from controller.laws.play import trick_winner
from controller.laws.record import AuctionEntry, BoardRecord, PlayedTrick
from controller.laws.scoring import record_score_ns

__all__ = ["LinFile", "read_lin", "record_to_lin", "write_lin", "LIN_SEATS", "vugraph_result",
           "ALERTED_TAG"]

#: LIN's seat order: md lists the hands, and pn the players, in this order.
LIN_SEATS: tuple[Seat, ...] = (Seat.S, Seat.W, Seat.N, Seat.E)
#: The record's tag naming (by place among the standing calls) the explained calls that were
#: also alerted: a note alone is an explanation, written without LIN's "!".
ALERTED_TAG = "Alerted"
_DEALER_DIGIT = {"1": Seat.S, "2": Seat.W, "3": Seat.N, "4": Seat.E}
_VUL = {"o": Vulnerability.NONE, "0": Vulnerability.NONE, "-": Vulnerability.NONE,
        "n": Vulnerability.NS, "e": Vulnerability.EW, "b": Vulnerability.ALL}
_VUL_OUT = {Vulnerability.NONE: "o", Vulnerability.NS: "n", Vulnerability.EW: "e",
            Vulnerability.ALL: "b"}


@dataclass(frozen=True)
class LinFile:
    records: list[BoardRecord]
    errors: list[FormatError]


@dataclass
class _Board:
    line: int
    items: list[tuple[str, str, int]]
    players: tuple[str, ...]
    qx: str = ""


def _pairs(text: str) -> list[tuple[str, str, int]]:
    """``key|value|`` pairs with the line each key is on."""
    out: list[tuple[str, str, int]] = []
    i, n, line = 0, len(text), 1
    while i < n:
        bar = text.find("|", i)
        if bar < 0:
            break
        key = text[i:bar]
        key_line = line + key.count("\n")
        end = text.find("|", bar + 1)
        if end < 0:
            end = n
        value = text[bar + 1:end]
        line = key_line + value.count("\n")
        key = key.strip().lower()
        if key:
            out.append((key, value.replace("\r", "").replace("\n", ""), key_line))
        i = end + 1
    return out


def _split_boards(
    pairs: list[tuple[str, str, int]],
) -> tuple[list[_Board], list[str], list[str]]:
    boards: list[_Board] = []
    players: tuple[str, ...] = ()
    pending: list[tuple[str, str, int]] = []
    current: _Board | None = None
    qx = ""
    event: list[str] = []
    results: list[str] = []

    def started(board: _Board | None) -> bool:
        return board is not None and any(k in ("mb", "pc") for k, _, _ in board.items)

    for key, value, line in pairs:
        if key in ("qx", "pn"):
            if current is not None and started(current):
                boards.append(current)
                current = None
            if key == "pn":
                players = tuple(p.strip() for p in value.split(","))
            else:
                qx = value.strip()
            continue
        if key == "vg":
            event = [p.strip() for p in value.split(",")]
            continue
        if key == "rs":
            results[:] = [r.strip() for r in value.split(",")]
            continue
        if key == "md":
            if current is not None:
                boards.append(current)
            current = _Board(line, [*pending, (key, value, line)], players, qx)
            pending = []
            qx = ""
            continue
        if current is None:
            pending.append((key, value, line))
        else:
            current.items.append((key, value, line))
    if current is not None:
        boards.append(current)
    return boards, event, results


def _hand(text: str, line: int) -> frozenset[Card]:
    cards: set[Card] = set()
    suit: Suit | None = None
    for ch in text.strip():
        up = ch.upper()
        if up in "SHDC":    # suit letters are never ranks, so there is no ambiguity
            suit = Suit.parse(up)
            continue
        if ch.isspace():
            continue
        if suit is None:
            raise BadRecord(f"md: a rank before any suit in {text!r}", line)
        try:
            cards.add(Card(suit, Rank.parse(ch)))
        except ParseError:
            raise BadRecord(f"md: {ch!r} is not a rank in {text!r}", line) from None
    return frozenset(cards)


def _deal(value: str, line: int) -> tuple[Seat, Deal | None]:
    text = value.strip()
    if not text or text[0] not in _DEALER_DIGIT:
        raise BadRecord(f"md: no dealer digit in {value!r}", line)
    dealer = _DEALER_DIGIT[text[0]]
    parts = text[1:].split(",")
    hands: dict[Seat, frozenset[Card]] = {}
    for seat, part in zip(LIN_SEATS, parts, strict=False):
        if part.strip():
            hands[seat] = _hand(part, line)
    if not hands:
        return dealer, None
    known = [s for s in LIN_SEATS if s in hands]
    union: frozenset[Card] = frozenset().union(*hands.values())
    if sum(len(h) for h in hands.values()) != len(union):
        raise BadRecord("md: a card in two hands", line)
    if len(known) == 3 and all(len(hands[s]) == 13 for s in known):
        missing = next(s for s in LIN_SEATS if s not in hands)
        hands[missing] = frozenset(Card(s, r) for s in Suit for r in Rank) - union
    return dealer, Deal.from_hands(dict(hands))


def _call(value: str, line: int) -> tuple[Call, bool]:
    text = value.strip()
    alerted = text.endswith("!")
    text = text.rstrip("!").strip()
    low = text.lower()
    try:
        if low in ("p", "pass"):
            return Call.parse("Pass"), alerted
        if low in ("d", "x", "dbl"):
            return Call.parse("X"), alerted
        if low in ("r", "xx", "rdbl"):
            return Call.parse("XX"), alerted
        return Call.parse(text), alerted
    except ParseError:
        raise BadRecord(f"mb: not a call: {value!r}", line) from None


def vugraph_result(text: str) -> tuple[Contract, Seat | None, int | None] | None:
    """A vugraph ``rs`` entry: ``3NN-1`` -> (3NT, N, 8 tricks); ``4HWx=``; ``P`` passed out.

    None when the entry is empty or not understood.
    """
    t = text.strip()
    if t.upper() in ("P", "PASS", "AP"):
        return PASSED_OUT, None, None
    m = re.fullmatch(r"([1-7])([CDHSN])([NESW])(x{0,2})([=+-])(\d*)", t, re.IGNORECASE)
    if m is None:
        return None
    level, denom, seat, dbl, sign, count = m.groups()
    try:
        contract = Contract.parse(f"{level}{denom.upper()}{dbl.upper()}")
    except ParseError:
        return None
    if sign != "=" and not count:
        return None
    tricks = int(level) + 6 + (0 if sign == "=" else int(count) * (1 if sign == "+" else -1))
    if not 0 <= tricks <= 13:
        return None
    return contract, Seat.parse(seat), tricks


def _board_record(board: _Board, number_hint: int, event: list[str],
                  results: list[str]) -> BoardRecord:
    dealer: Seat | None = None
    deal: Deal | None = None
    vul: Vulnerability | None = None
    number: int | None = None
    title = ""
    claim: int | None = None
    entries: list[AuctionEntry] = []
    alerted: list[int] = []             # calls with a "!" (an alert), by place
    plays: list[tuple[str, int]] = []
    qx = board.qx
    table = ""
    m = re.search(r"\d+", qx)
    if m:
        number = int(m.group())
    for key, value, line in board.items:
        if key == "md":
            dealer, deal = _deal(value, line)
        elif key == "st" and value.strip().startswith("Table "):
            table = value.strip()[6:]
        elif key == "sv":
            v = value.strip().lower()[:1]
            if v not in _VUL:
                raise BadRecord(f"sv: not a vulnerability: {value!r}", line)
            vul = _VUL[v]
        elif key == "ah":
            title = value.strip()
            m = re.search(r"\d+", title)
            if m and number is None:
                number = int(m.group())
        elif key == "mb":
            if plays:
                raise BadRecord(f"mb after the play began: {value!r}", line)
            if dealer is None:
                raise BadRecord("mb before md", line)
            call, is_alert = _call(value, line)
            standing = [(e.seat, e.call) for e in entries]
            if auction_outcome(standing)[0]:
                raise BadRecord(f"call after the end of the auction: {value!r}", line)
            seat = dealer.rotated(len(entries))
            if is_alert:
                alerted.append(len(entries))
            entries.append(AuctionEntry(seat, call, note="!" if is_alert else ""))
        elif key == "an":
            if entries:
                last = entries[-1]
                note = value.strip()
                entries[-1] = AuctionEntry(last.seat, last.call, last.cancelled,
                                           last.irregularity, note)
        elif key == "pc":
            plays.append((value.strip(), line))
        elif key == "mc":
            digits = value.strip()
            if not digits.isdigit() or int(digits) > 13:
                raise BadRecord(f"mc: not a number of tricks: {value!r}", line)
            claim = int(digits)
    if dealer is None:
        raise BadRecord("board without md", board.line)
    if number is None:
        number = number_hint
    if number < 1:
        raise BadRecord(f"board number {number}", board.line)
    if vul is None:
        vul = board_vulnerability(number)
    complete, contract, declarer = auction_outcome([(e.seat, e.call) for e in entries])
    tricks: list[PlayedTrick] = []
    if plays:
        if not complete or contract is None or declarer is None:
            raise BadRecord("cards played before the auction ended", plays[0][1])
        trump = contract.bid.denomination.trump if contract.bid is not None else None
        remaining = ({s: set(deal[s]) for s in Seat}
                     if deal is not None and deal.is_complete else None)
        leader = declarer.lho
        cards: list[tuple[Seat, Card]] = []
        seen: set[Card] = set()
        for text, line in plays:
            try:
                card = Card.parse(text)
            except ParseError:
                raise BadRecord(f"pc: not a card: {text!r}", line) from None
            if card in seen:
                raise BadRecord(f"pc: {card} played twice", line)
            seen.add(card)
            seat = leader.rotated(len(cards))
            if remaining is not None:
                # a revoke is kept as played: the Laws core, not the reader, judges it
                if card not in remaining[seat]:
                    raise BadRecord(f"pc: {seat} plays {card}, not in that hand", line)
                remaining[seat].discard(card)
            cards.append((seat, card))
            if len(cards) == 4:
                winner = trick_winner(cards, trump)
                tricks.append(PlayedTrick(len(tricks) + 1, leader, tuple(cards), winner))
                leader, cards = winner, []
            if len(tricks) > 13:
                raise BadRecord("more than 13 tricks", line)
        if cards:
            tricks.append(PlayedTrick(len(tricks) + 1, leader, tuple(cards), None))
    tricks_played: int | None = None
    if declarer is not None and tricks and all(t.winner is not None for t in tricks):
        tricks_played = sum(1 for t in tricks if t.winner is not None
                            and t.winner.side is declarer.side)
    tricks_result = claim
    if tricks_result is None and len(tricks) == 13:
        tricks_result = tricks_played
    score = record_score_ns(contract, declarer, vul, tricks_result)
    tags: dict[str, str] = {}
    names = board.players
    if qx.lower().startswith("c") and len(names) >= 8:
        names = names[4:8]
    for seat, name in zip(LIN_SEATS, names[:4], strict=False):
        if name:
            tags[{Seat.N: "North", Seat.E: "East", Seat.S: "South", Seat.W: "West"}[seat]] = name
    if event and event[0]:
        tags["Event"] = event[0]
    if title:
        tags["Title"] = title
    # A call both alerted and explained: its note is the explanation, and this tag keeps
    # the alert (a call explained but not alerted has its note alone).
    explained = [i for i in alerted if entries[i].note not in ("", "!")]
    if explained:
        tags[ALERTED_TAG] = " ".join(map(str, explained))
    if qx:
        closed = qx.lower().startswith("c")
        tags["Room"] = "Closed" if closed else "Open"
        # vugraph: rs lists the results open, closed, open, closed... from vg's first board
        first = event[3] if len(event) > 3 else ""
        if first.isdigit() and results:
            index = 2 * (number - int(first)) + (1 if closed else 0)
            if 0 <= index < len(results) and results[index]:
                tags["VugraphResult"] = results[index]
    return BoardRecord(
        board=number, dealer=dealer, vulnerability=vul, deal=deal, auction=tuple(entries),
        contract=contract if complete else None, declarer=declarer, tricks=tuple(tricks),
        tricks_played=tricks_played, tricks_result=tricks_result, score_ns=score, tags=tags,
        table=table,
    )


def _board_number(board: _Board) -> int | None:
    """The board's number as the file gives it (``qx``, else ``ah``), for reporting."""
    texts = [board.qx] + [value for key, value, _ in board.items if key == "ah"]
    for text in texts:
        m = re.search(r"\d+", text)
        if m and int(m.group()) >= 1:
            return int(m.group())
    return None


def read_lin(source: Source) -> LinFile:
    """Read a LIN file: an open text file (the usual way), a ``Path``, or the LIN text.

    Reading never raises for a broken file: a board that cannot be understood is skipped
    and its problem, with the board's number when the file gives one, goes to ``errors``.
    """
    text = read_source(source)
    if isinstance(text, FormatError):
        return LinFile([], [text])
    boards, event, results = _split_boards(_pairs(text))
    records: list[BoardRecord] = []
    errors: list[FormatError] = []
    for index, board in enumerate(boards, start=1):
        try:
            records.append(_board_record(board, index, event, results))
        except BadRecord as exc:
            errors.append(FormatError(exc.error.line or board.line, str(exc),
                                      _board_number(board)))
    return LinFile(records, errors)


# --- writing -----------------------------------------------------------------------------

def _lin_hand(cards: Iterable[Card]) -> str:
    held = set(cards)
    out = []
    for suit in (Suit.S, Suit.H, Suit.D, Suit.C):
        ranks = "".join(c.rank.char for c in sorted((c for c in held if c.suit is suit),
                                                     reverse=True))
        out.append(suit.name + ranks)
    return "".join(out)


def _lin_call(call: Call) -> str:
    if call.kind is CallKind.PASS:
        return "p"
    if call.kind is CallKind.DOUBLE:
        return "d"
    if call.kind is CallKind.REDOUBLE:
        return "r"
    assert call.bid is not None
    denom = "N" if call.bid.denomination is Denomination.NT else call.bid.denomination.name
    return f"{call.bid.level}{denom}"


def _clean(text: str) -> str:
    return text.replace("|", "/").replace("\n", " ")


def _check_rotation(record: BoardRecord) -> None:
    """LIN gives cards without seats: only a play in legal rotation can be written."""
    if not record.tricks:
        return
    if record.declarer is None:
        raise BadRecord(f"board {record.board}: cards played but no declarer")
    leader: Seat | None = record.declarer.lho
    for trick in record.tricks:
        if leader is not None and trick.leader is not leader:
            raise BadRecord(f"board {record.board}: trick {trick.number} led out of turn "
                            f"by {trick.leader}; LIN cannot say so")
        for i, (seat, _) in enumerate(trick.cards):
            if seat is not trick.leader.rotated(i):
                raise BadRecord(f"board {record.board}: trick {trick.number} played out "
                                f"of rotation; LIN cannot say so")
        leader = trick.winner


def record_to_lin(record: BoardRecord) -> str:
    """One board as one LIN line: ``pn md sv ah mb an pc mc pg``.

    Raises ``BadRecord`` for a play LIN cannot express (a lead out of turn).
    """
    _check_rotation(record)
    names = {Seat.N: "North", Seat.E: "East", Seat.S: "South", Seat.W: "West"}
    parts: list[str] = []
    players = [_clean(record.tags.get(names[s], "")).replace(",", " ") for s in LIN_SEATS]
    # the table and room: ``qx`` (BBO's board label: "o12" the open room's board 12, "c12"
    # the closed room's; a teams match's home table is the open room) and the small text
    # ``st`` naming the table (readers that do not know it skip it)
    room = record.tags.get("Room", "")
    if room or record.table:
        parts.append(f"qx|{'c' if room.lower() == 'closed' else 'o'}{record.board}|")
    table = f"Table {_clean(record.table)}" if record.table else ""
    parts.append(f"pn|{','.join(players)}|st|{table}|")
    digit = {v: k for k, v in _DEALER_DIGIT.items()}[record.dealer]
    hands = ""
    if record.deal is not None:
        hands = ",".join(_lin_hand(record.deal[s]) for s in LIN_SEATS)
    parts.append(f"md|{digit}{hands}|rh||")
    parts.append(f"ah|Board {record.board}|")
    parts.append(f"sv|{_VUL_OUT[record.vulnerability]}|")
    if not record.standing_calls and record.contract is not None and record.contract.passed_out:
        # a passed-out board known only by its result: LIN says it with the four passes
        parts.append("mb|p|" * 4)
    alerted = set(record.tags.get(ALERTED_TAG, "").split())
    for i, entry in enumerate(record.standing_calls):
        alert = "!" if entry.note == "!" or str(i) in alerted else ""
        parts.append(f"mb|{_lin_call(entry.call)}{alert}|")
        if entry.note and entry.note != "!":
            parts.append(f"an|{_clean(entry.note)}|")
    parts.append("pg||")
    for trick in record.tricks:
        parts.append("".join(f"pc|{card}|" for _, card in trick.cards))
        parts.append("pg||")
    played_out = len(record.tricks) == 13 and all(len(t.cards) == 4 for t in record.tricks)
    if record.tricks_result is not None and record.declarer is not None and (
            not played_out or record.tricks_result != record.tricks_played):
        parts.append(f"mc|{record.tricks_result}|")
    return "".join(parts) + "\n"


def write_lin(records: Iterable[BoardRecord], fp: TextIO,
              notes: Callable[[BoardRecord], str | None] | None = None) -> list[FormatError]:
    """One line per board; a board LIN cannot express is left out and reported.
    ``notes(record)``: a commentary for the board, written as an ``nt|...|`` note at the
    end of its line (the session export's tempo and claim evidence)."""
    skipped: list[FormatError] = []
    for record in records:
        try:
            line = record_to_lin(record)
        except BadRecord as exc:
            skipped.append(FormatError(0, str(exc), record.board))
            continue
        note = notes(record) if notes is not None else None
        if note:
            line = f"{line.rstrip(chr(10))}nt|{_clean(note)}|\n"
        fp.write(line)
    return skipped
