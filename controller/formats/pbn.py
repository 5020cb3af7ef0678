"""PBN 2.1 (Portable Bridge Notation): read forgivingly, write export format.

Reading takes an open text file, a ``Path`` or the text itself and never raises for a
broken file: each game that cannot be understood is reported as a ``FormatError`` (line
and message) and skipped, and reading goes on with the next game.

What is read (import format, PBN 2.1 sections 2-4):
- tag pairs, also spread over several lines and with ``#`` inheritance (4.8);
- ``%`` lines (2.4), ``;`` and ``{}`` comments (3.8), blank lines between games;
- the Auction section: calls in rotation from the tag's seat, ``-`` for a seat before
  the first caller, ``AP``, ``*``, ``+``, note references ``=n=``, NAGs ``$n``, suffixes
  (``!``, ``?``, ``!!``...), the irregularity tokens ``^I`` (accepted insufficient bid) and
  ``^S`` (a player skipped by an accepted call out of rotation), ``[Note "n:text"]``;
- the Play section in the column layout: one line (4 cards) per trick, columns in seat
  order from the Play tag's seat, ``-`` for an unknown card, ``*`` to end, ``^R`` (revoke)
  and ``^L`` (lead out of turn, accepted); lower-case cards;
- supplemental tables (``OptimumResultTable`` and the like) are kept as raw lines.

What is written (export format): ``% PBN 2.1`` / ``% EXPORT`` header, the 15 mandatory
tags in order, supplemental tags (tables with their rows), the Auction with ``^S`` and
notes, the Play. Written for other readers too (endplay and others abort on ``^I``, ``^R``,
``^L``, a caret in the Result or a comment among the calls): the Result is a bare number,
and what PBN cannot say is kept in tags a reader skips (4.9: new tags), so that a record
reads back the same: every irregularity as an ``[Irregularity "id=3 code=REVOKE ..."]`` tag,
the calls cancelled by a rectification and the link from a call to its irregularity in an
``[AuctionTrace "1=cancelled,W,1S,1 4=irregularity,1"]`` tag. ``^L`` is written only for an
accepted lead out of turn that no Irregularity tag names.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote, unquote

from controller.formats.errors import BadRecord, FormatError
from controller.formats.source import Source, read_source
from controller.laws.auction import auction_outcome
from controller.laws.cards import (
    Call,
    Card,
    Contract,
    Deal,
    ParseError,
    Seat,
    Suit,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from controller.laws.irregularities import Code, Irregularity, IrregularityLog, Status
from controller.laws.play import trick_winner
from controller.laws.record import AuctionEntry, BoardRecord, DealInfo, PlayedTrick
from controller.laws.scoring import record_score_ns

__all__ = [
    "PbnGame", "PbnFile", "Token", "DealInfo", "read_pbn", "deals_by_board", "game_to_record",
    "record_to_pbn", "write_pbn", "MANDATORY_TAGS",
]

#: The 15 tags of PBN's mandatory tag set, in export order (3.1).
MANDATORY_TAGS: tuple[str, ...] = (
    "Event", "Site", "Date", "Board", "West", "North", "East", "South", "Dealer",
    "Vulnerable", "Deal", "Scoring", "Declarer", "Contract", "Result",
)
# Tags a record carries in its own fields; the rest go to BoardRecord.tags.
_FIELD_TAGS = frozenset({
    "Board", "Dealer", "Vulnerable", "Deal", "Declarer", "Contract", "Result", "Auction",
    "Play", "Note", "Table", "Score", "Irregularity", "AuctionTrace",
})


@dataclass(frozen=True, slots=True)
class Token:
    """One token of an Auction or Play section, or a comment there (``kind == "comment"``)."""

    text: str
    line: int
    kind: str = "item"   # item | note | nag | suffix | mark | comment


@dataclass(frozen=True)
class PbnGame:
    """One game as read: its tags and its sections' tokens, not yet interpreted."""

    line: int
    tags: dict[str, str]
    tag_lines: dict[str, int]
    auction: tuple[Token, ...] = ()
    play: tuple[Token, ...] = ()
    auction_notes: dict[int, str] = field(default_factory=dict)
    play_notes: dict[int, str] = field(default_factory=dict)
    irregularity_tags: tuple[str, ...] = ()
    comments: tuple[str, ...] = ()
    tables: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: what reading found wrong in this game (for a skipped game, what stopped it last)
    problems: tuple[FormatError, ...] = ()


@dataclass(frozen=True)
class PbnFile:
    """The games read, every problem in file order, and the games that were not understood."""

    games: list[PbnGame]
    errors: list[FormatError]
    skipped: list[PbnGame] = field(default_factory=list)

    def records(self) -> list[BoardRecord]:
        """Every game as a BoardRecord (read_pbn keeps only games that convert)."""
        return [game_to_record(g) for g in self.games]


# --- scanning ----------------------------------------------------------------------------

_TAG = re.compile(r'\[\s*([A-Za-z0-9_]+)\s*"(.*?)"\s*\]', re.DOTALL)
_TAG_LOOSE = re.compile(r"\[\s*([A-Za-z0-9_]+)\s*([^\]\"]*)\]")
_PIECES = re.compile(r"(\^[A-Za-z])|(=\d+=)|(\$\d+)|([!?]{1,2})|([^=$!?^]+)|(.)")


@dataclass
class _Event:
    kind: str      # tag | token | comment | blank | error
    line: int
    text: str = ""
    value: str = ""


def _scan(text: str) -> Iterator[_Event]:
    """Tags, tokens, comments and game-separating blank lines, with line numbers."""
    i, n, line = 0, len(text), 1
    line_has_content = False
    at_line_start = True
    while i < n:
        ch = text[i]
        if ch == "\n":
            if not line_has_content:
                yield _Event("blank", line)
            line += 1
            i += 1
            line_has_content = False
            at_line_start = True
            continue
        if at_line_start and ch == "%":
            end = text.find("\n", i)
            i = n if end < 0 else end
            line_has_content = True   # an escape line does not separate games
            continue
        at_line_start = False
        if ch in " \t\r\f\v\ufeff":
            i += 1
            continue
        line_has_content = True
        if ch == "{":
            end = text.find("}", i + 1)
            body = text[i + 1:] if end < 0 else text[i + 1:end]
            yield _Event("comment", line, body)
            line += body.count("\n")
            i = n if end < 0 else end + 1
            continue
        if ch == ";":
            end = text.find("\n", i)
            yield _Event("comment", line, text[i + 1:] if end < 0 else text[i + 1:end])
            i = n if end < 0 else end
            continue
        if ch == "[":
            m = _TAG.match(text, i)
            # a value may run over lines, but not into the next tag or game
            if m and "\n\n" not in m.group(0) and "\n[" not in m.group(0):
                # PBN's escapes: \" and \\; any other backslash is kept as it stands
                value = re.sub(r'\\([\\"])', r"\1", m.group(2))
                yield _Event("tag", line, m.group(1), value)
                line += m.group(0).count("\n")
                i = m.end()
                continue
            loose = _TAG_LOOSE.match(text, i)
            if loose and "\n" not in loose.group(0):
                # an unquoted value: [Board 3]
                yield _Event("tag", line, loose.group(1), loose.group(2).strip())
                i = loose.end()
                continue
            end = text.find("\n", i)
            yield _Event("error", line, f"malformed tag: {text[i:end if end >= 0 else n]!r}")
            i = n if end < 0 else end
            continue
        j = i
        while j < n and text[j] not in " \t\r\n\f\v[{;":
            j += 1
        yield _Event("token", line, text[i:j])
        i = j


def _split_token(text: str, line: int) -> list[Token]:
    out: list[Token] = []
    for m in _PIECES.finditer(text):
        mark, note, nag, suffix, item, other = m.groups()
        if mark:
            out.append(Token(mark.upper(), line, "mark"))
        elif note:
            out.append(Token(note, line, "note"))
        elif nag:
            out.append(Token(nag, line, "nag"))
        elif suffix:
            out.append(Token(suffix, line, "suffix"))
        elif item:
            out.append(Token(item, line, "item"))
        elif other:
            out.append(Token(other, line, "item"))
    return out


class _GameBuilder:
    def __init__(self, line: int, previous: dict[str, str]) -> None:
        self.line = line
        self.previous = previous
        self.tags: dict[str, str] = {}
        self.tag_lines: dict[str, int] = {}
        self.section: str | None = None
        self.auction: list[Token] = []
        self.play: list[Token] = []
        self.auction_notes: dict[int, str] = {}
        self.play_notes: dict[int, str] = {}
        self.irregularity_tags: list[str] = []
        self.comments: list[str] = []
        self.tables: dict[str, list[str]] = {}
        self.errors: list[FormatError] = []
        self.table_line = -1

    def tag(self, name: str, value: str, line: int) -> None:
        if value == "#":
            # 4.8: the previous game's value; with none to inherit, the value is unknown
            value = self.previous.get(name, "")
        if name == "Note":
            notes = self.play_notes if self.section == "play" else self.auction_notes
            index, sep, text = value.partition(":")
            if sep and index.strip().isdigit():
                notes[int(index)] = text.strip()
            else:
                self.errors.append(FormatError(line, f"note without an index: {value!r}"))
            return
        if name == "Irregularity":
            self.irregularity_tags.append(value)
            return
        if name in self.tags:
            # PBN 3.3: a repeated tag is ignored
            return
        self.tags[name] = value
        self.tag_lines[name] = line
        if name == "Auction":
            self.section = "auction"
        elif name == "Play":
            self.section = "play"
        else:
            self.section = "table:" + name

    def token(self, text: str, line: int) -> None:
        if self.section == "auction":
            self.auction.extend(_split_token(text, line))
        elif self.section == "play":
            self.play.extend(_split_token(text, line))
        elif self.section is not None:
            rows = self.tables.setdefault(self.section[6:], [])
            # a row is the text of one line: a new line, or a table whose header ended the
            # line (a damaged file can put the next table's tag on its last row's line)
            if line != self.table_line or not rows:
                rows.append(text)
                self.table_line = line
            else:
                rows[-1] += " " + text
        else:
            self.errors.append(FormatError(line, f"text outside any tag or section: {text!r}"))

    def comment(self, text: str, line: int) -> None:
        if self.section == "auction":
            self.auction.append(Token(text, line, "comment"))
        elif self.section == "play":
            self.play.append(Token(text, line, "comment"))
        else:
            self.comments.append(text)

    def build(self) -> PbnGame:
        return PbnGame(
            line=self.line, tags=dict(self.tags), tag_lines=dict(self.tag_lines),
            auction=tuple(self.auction), play=tuple(self.play),
            auction_notes=dict(self.auction_notes), play_notes=dict(self.play_notes),
            irregularity_tags=tuple(self.irregularity_tags), comments=tuple(self.comments),
            tables={k: tuple(v) for k, v in self.tables.items()},
        )


def read_pbn(source: Source) -> PbnFile:
    """Read a PBN file: an open text file (the usual way), a ``Path``, or the PBN text.

    Reading never raises for a broken file. Problems are collected per game, as
    ``chess.pgn`` does: each game in ``games`` converts with ``game_to_record`` and carries
    the problems that did not stop it (``PbnGame.problems``); a game that cannot be
    understood goes to ``skipped`` with its problems, the one that stopped it last.
    ``errors`` lists every problem of the file in order, those outside any game included.
    """
    text = read_source(source)
    if isinstance(text, FormatError):
        return PbnFile([], [text])
    games: list[PbnGame] = []
    skipped: list[PbnGame] = []
    errors: list[FormatError] = []
    builder: _GameBuilder | None = None
    previous: dict[str, str] = {}

    def finish() -> None:
        nonlocal builder, previous
        if builder is None:
            return
        if not builder.tags:
            errors.extend(builder.errors)
            builder = None
            return
        game = builder.build()
        previous = dict(game.tags)
        board = _board_number(game.tags.get("Board", ""))
        problems = [replace(e, board=board) for e in builder.errors]
        try:
            game_to_record(game)
        except BadRecord as exc:
            problems.append(FormatError(exc.error.line or game.line, str(exc), board))
            skipped.append(replace(game, problems=tuple(problems)))
        else:
            games.append(replace(game, problems=tuple(problems)))
        errors.extend(problems)
        builder = None

    for event in _scan(text):
        if event.kind == "blank":
            finish()
            continue
        if event.kind == "error":
            errors.append(FormatError(event.line, event.text))
            continue
        if builder is None:
            builder = _GameBuilder(event.line, previous)
        if event.kind == "tag":
            if not builder.tags:
                builder.line = event.line
            builder.tag(event.text, event.value, event.line)
        elif event.kind == "token":
            builder.token(event.text, event.line)
        else:
            builder.comment(event.text, event.line)
    finish()
    return PbnFile(games, errors, skipped)


def _board_number(text: str) -> int | None:
    t = text.strip()
    return int(t) if t.isdigit() and int(t) >= 1 else None


# --- interpreting ------------------------------------------------------------------------

def _seat_of(text: str, what: str, line: int) -> Seat:
    try:
        return Seat.parse(text)
    except ParseError:
        raise BadRecord(f"{what} is not a seat: {text!r}", line) from None


def _declarer_tricks(result: str, declarer: Seat | None, line: int) -> int | None:
    """Result tag forms (3.4.15): ``9``, ``NS 9``, ``EW 4``, ``NS 9 EW 4``, ``^`` prefix."""
    t = result.strip().lstrip("^").strip()
    if not t or t == "?":
        return None
    if t.isdigit():
        value = int(t)
    else:
        parts = t.split()
        found: int | None = None
        for side, count in zip(parts[::2], parts[1::2], strict=False):
            if not count.isdigit() or side.upper() not in ("NS", "EW"):
                raise BadRecord(f"Result is not a number of tricks: {result!r}", line)
            if declarer is not None and declarer.side.value == side.upper():
                found = int(count)
            elif declarer is not None:
                found = 13 - int(count) if found is None else found
        if found is None:
            return None
        value = found
    if not 0 <= value <= 13:
        raise BadRecord(f"Result out of range: {result!r}", line)
    return value


def _score_tag(text: str) -> int | None:
    parts = text.split()
    if len(parts) == 2 and parts[0].upper() in ("NS", "EW"):
        try:
            value = int(parts[1])
        except ValueError:
            return None
        return value if parts[0].upper() == "NS" else -value
    return None


def _parse_irregularity_tag(value: str, line: int) -> Irregularity:
    fields: dict[str, str] = {}
    for part in value.split():
        key, sep, val = part.partition("=")
        if not sep:
            raise BadRecord(f"Irregularity tag field without '=': {part!r}", line)
        fields[key] = unquote(val)
    try:
        code = Code(fields.pop("code"))
        irr_id = int(fields.pop("id"))
        law = fields.pop("law")
        status = Status(fields.pop("status", "open"))
        seat = Seat.parse(s) if (s := fields.pop("seat", "")) else None
        trick = int(t) if (t := fields.pop("trick", "")) else None
        card = Card.parse(c) if (c := fields.pop("card", "")) else None
        call = Call.parse(c) if (c := fields.pop("call", "")) else None
    except (KeyError, ValueError) as exc:
        raise BadRecord(f"bad Irregularity tag {value!r}: {exc}", line) from None
    detail = fields.pop("detail", "")
    params: list[tuple[str, Any]] = []
    for key, val in sorted(fields.items()):
        params.append((key, int(val) if re.fullmatch(r"-?\d+", val) else val))
    return Irregularity(id=irr_id, code=code, law=law, status=status, seat=seat, trick=trick,
                        card=card, call=call, detail=detail, params=tuple(params))


_CANCELLED = re.compile(r"^\s*cancelled\s+([NESWnesw]):(\S+)(?:\s+irregularity\s+(\d+))?\s*$")
_IRR_LINK = re.compile(r"^\s*irregularity\s+(\d+)\s*$")


def _parse_auction(
    game: PbnGame, log: IrregularityLog,
) -> list[AuctionEntry]:
    first_text = game.tags.get("Auction", "")
    line = game.tag_lines.get("Auction", game.line)
    seat = _seat_of(first_text, "Auction tag", line)
    entries: list[AuctionEntry] = []
    pending_marks: list[str] = []
    skipped = 0
    standing: list[tuple[Seat, Call]] = []
    ended = False

    def add(call: Call, tok_line: int) -> None:
        nonlocal seat, skipped
        irr_id: int | None = None
        if skipped:
            irr = log.open(Code.CALL_OUT_OF_ROTATION, law="29A", seat=seat, call=call,
                           status=Status.RESOLVED, detail="accepted", skipped=skipped)
            irr_id = irr.id
        if "^I" in pending_marks:
            irr = log.open(Code.INSUFFICIENT_BID, law="27A1", seat=seat, call=call,
                           status=Status.RESOLVED, detail="accepted")
            irr_id = irr.id if irr_id is None else irr_id
        # a game with [Irregularity] tags links its calls by {irregularity n} comments
        if game.irregularity_tags:
            irr_id = None
        entries.append(AuctionEntry(seat, call, irregularity=irr_id))
        standing.append((seat, call))
        pending_marks.clear()
        skipped = 0
        seat = seat.lho

    for tok in game.auction:
        if ended:
            if tok.kind == "item":
                raise BadRecord(f"call after the end of the auction: {tok.text!r}", tok.line)
            continue
        if tok.kind == "comment":
            m = _CANCELLED.match(tok.text)
            if m:
                try:
                    call = Call.parse(m.group(2))
                except ParseError:
                    raise BadRecord(f"bad cancelled call {tok.text!r}", tok.line) from None
                link = int(m.group(3)) if m.group(3) else None
                entries.append(AuctionEntry(Seat.parse(m.group(1)), call, cancelled=True,
                                            irregularity=link))
                continue
            m = _IRR_LINK.match(tok.text)
            if m and entries:
                last = entries[-1]
                entries[-1] = AuctionEntry(last.seat, last.call, last.cancelled,
                                           int(m.group(1)), last.note)
            continue
        if tok.kind == "mark":
            if tok.text == "^S":
                skipped += 1
                seat = seat.lho
            elif tok.text == "^I":
                pending_marks.append("^I")
            else:
                raise BadRecord(f"{tok.text} is not an auction token", tok.line)
            continue
        if tok.kind == "note":
            if entries:
                index = int(tok.text.strip("="))
                last = entries[-1]
                note = game.auction_notes.get(index, "")
                entries[-1] = AuctionEntry(last.seat, last.call, last.cancelled,
                                           last.irregularity, note)
            continue
        if tok.kind in ("nag", "suffix"):
            continue
        text = tok.text
        upper = text.upper()
        if upper == "-":
            if entries:
                raise BadRecord("'-' after the first call of the auction", tok.line)
            seat = seat.lho
            continue
        if upper in ("*", "+"):
            ended = True
            continue
        if upper == "AP":
            while not auction_outcome(standing)[0]:
                add(Call.parse("Pass"), tok.line)
            ended = True
            continue
        try:
            call = Call.parse(text)
        except ParseError:
            raise BadRecord(f"not a call: {text!r}", tok.line) from None
        if auction_outcome(standing)[0]:
            raise BadRecord(f"call after the end of the auction: {text!r}", tok.line)
        add(call, tok.line)
    return entries


def _parse_play(
    game: PbnGame, log: IrregularityLog, contract: Contract | None, declarer: Seat | None,
    deal: Deal | None, tagged: Sequence[Irregularity] = (),
) -> tuple[PlayedTrick, ...]:
    line = game.tag_lines.get("Play", game.line)
    first = _seat_of(game.tags.get("Play", ""), "Play tag", line)
    columns = [first.rotated(i) for i in range(4)]
    trump: Suit | None = None
    if contract is not None and contract.bid is not None:
        trump = contract.bid.denomination.trump
    # column cells: (card or None, marks, line)
    cells: list[tuple[Card | None, tuple[str, ...], int]] = []
    marks: list[str] = []
    for tok in game.play:
        if tok.kind == "mark":
            if tok.text not in ("^R", "^L"):
                raise BadRecord(f"{tok.text} is not a play token", tok.line)
            marks.append(tok.text)
            continue
        if tok.kind != "item":
            continue
        if tok.text in ("*",):
            break
        if tok.text in ("-", "+"):
            cells.append((None, tuple(marks), tok.line))
        else:
            try:
                cells.append((Card.parse(tok.text), tuple(marks), tok.line))
            except ParseError:
                raise BadRecord(f"not a card: {tok.text!r}", tok.line) from None
        marks = []
    if len(cells) > 52:
        raise BadRecord("more than 13 tricks in the Play section", cells[52][2])
    seen: set[Card] = set()
    hands = {s: set(deal[s]) for s in Seat} if deal is not None and deal.is_complete else None
    tricks: list[PlayedTrick] = []
    leader: Seat | None = first
    leads = _tagged_leads(tagged)
    for start in range(0, len(cells), 4):
        number = start // 4 + 1
        row = cells[start:start + 4]
        by_seat = {columns[i]: row[i] for i in range(len(row))}
        marked_leader = [s for s, (_, m, _) in by_seat.items() if "^L" in m]
        # a tagged lead out of turn names this trick's leader only where that seat's card is
        # in the row: a "-" in its column (a trick cut short) is no lead, so the row reads
        # the same whether the missing cards are written as "-" or not at all
        if not marked_leader and number in leads \
                and by_seat.get(leads[number], (None,))[0] is not None:
            marked_leader = [leads[number]]
        this_leader = marked_leader[0] if marked_leader else leader
        order = ([this_leader.rotated(i) for i in range(4)] if this_leader is not None
                 else columns)
        cards: list[tuple[Seat, Card]] = []
        for seat in order:
            cell = by_seat.get(seat)
            if cell is None:
                continue
            maybe_card, cell_marks, cell_line = cell
            if maybe_card is None:
                continue
            card = maybe_card
            if card in seen:
                raise BadRecord(f"{card} played twice", cell_line)
            seen.add(card)
            if hands is not None:
                if card not in hands[seat]:
                    raise BadRecord(f"{seat} plays {card}, which is not in that hand",
                                    cell_line)
            cards.append((seat, card))
            if "^R" in cell_marks:
                log.open(Code.REVOKE, seat=seat, trick=number, card=card,
                         status=Status.ESTABLISHED)
        if marked_leader and this_leader is not None:
            lead_card = by_seat[this_leader][0]
            code = Code.OPENING_LEAD_OUT_OF_TURN if number == 1 else Code.LEAD_OUT_OF_TURN
            log.open(code, law="54B" if number == 1 else "53A", seat=this_leader,
                     trick=number, card=lead_card, status=Status.RESOLVED, detail="accepted")
        complete = len(cards) == 4 and this_leader is not None and contract is not None
        winner = trick_winner(cards, trump) if complete else None
        tricks.append(PlayedTrick(number, this_leader if this_leader is not None else first,
                                  tuple(cards), winner))
        leader = winner
    return tuple(tricks)


def game_to_record(game: PbnGame) -> BoardRecord:
    """Interpret one game; raises ``BadRecord`` when it cannot be understood."""
    tags = game.tags
    line_of = game.tag_lines.get
    board = _board_number(tags.get("Board", ""))
    if board is None:
        raise BadRecord(f"no board number: Board {tags.get('Board')!r}",
                        line_of("Board", game.line))
    dealer_text = tags.get("Dealer", "").strip()
    dealer = (_seat_of(dealer_text, "Dealer", line_of("Dealer", game.line))
              if dealer_text and dealer_text != "?" else board_dealer(board))
    vul_text = tags.get("Vulnerable", "").strip()
    try:
        vul = (Vulnerability.parse(vul_text) if vul_text and vul_text != "?"
               else board_vulnerability(board))
    except ParseError as exc:
        raise BadRecord(str(exc), line_of("Vulnerable", game.line)) from None
    deal: Deal | None = None
    deal_text = tags.get("Deal", "").strip()
    if deal_text and deal_text != "?":
        try:
            deal = Deal.from_pbn(deal_text)
        except ParseError as exc:
            raise BadRecord(f"Deal: {exc}", line_of("Deal", game.line)) from None
        if sum(len(h) for h in deal.hands) != len(frozenset().union(*deal.hands)):
            raise BadRecord("Deal: a card in two hands", line_of("Deal", game.line))
        if not any(deal.hands):
            deal = None         # "N:- - - -": no hand known
    log = IrregularityLog()
    # the record's irregularities when the game has Irregularity tags (the play reads the
    # accepted leads out of turn from them); otherwise the ^ tokens make them, in ``log``
    tagged = tuple(_parse_irregularity_tag(v, game.line) for v in game.irregularity_tags)
    auction: list[AuctionEntry] = []
    if "Auction" in tags:
        auction = _parse_auction(game, log)
        if tags.get("AuctionTrace", "").strip():
            auction = _apply_trace(auction, tags["AuctionTrace"],
                                   line_of("AuctionTrace", game.line))
    complete, auction_contract, auction_declarer = auction_outcome(
        [(e.seat, e.call) for e in auction if not e.cancelled])
    contract_text = tags.get("Contract", "").strip()
    contract: Contract | None = auction_contract
    if contract_text and contract_text != "?":
        try:
            contract = Contract.parse(contract_text)
        except ParseError as exc:
            raise BadRecord(str(exc), line_of("Contract", game.line)) from None
    declarer_text = tags.get("Declarer", "").strip().lstrip("^")
    declarer: Seat | None = auction_declarer
    if declarer_text and declarer_text != "?":
        declarer = _seat_of(declarer_text, "Declarer", line_of("Declarer", game.line))
    if contract is not None and contract.passed_out:
        declarer = None
    tricks: tuple[PlayedTrick, ...] = ()
    if "Play" in tags and game.play:
        tricks = _parse_play(game, log, contract, declarer, deal, tagged)
    tricks_played: int | None = None
    if declarer is not None and tricks and all(t.winner is not None for t in tricks):
        tricks_played = sum(1 for t in tricks if t.winner is not None
                            and t.winner.side is declarer.side)
    tricks_result = _declarer_tricks(tags.get("Result", ""), declarer,
                                     line_of("Result", game.line))
    if tricks_result is None and len(tricks) == 13 and tricks_played is not None:
        tricks_result = tricks_played
    score = record_score_ns(contract, declarer, vul, tricks_result)
    if score is None and "Score" in tags:
        score = _score_tag(tags["Score"])
    irregularities = tagged if tagged else tuple(log)
    # an empty value says nothing (export writes every mandatory tag, known or not)
    extra = {k: v for k, v in tags.items() if k not in _FIELD_TAGS and v.strip() not in ("", "?")}
    # a supplemental table's rows (OptimumResultTable, ScoreTable...) after its header,
    # one a line: the record's tags are plain strings, and the writer lays them out again
    for name, rows in game.tables.items():
        if name in extra and rows and name.endswith("Table"):
            extra[name] = "\n".join((extra[name].replace("\n", " "), *rows))
    del complete
    return BoardRecord(
        board=board, dealer=dealer, vulnerability=vul, deal=deal, auction=tuple(auction),
        contract=contract, declarer=declarer, tricks=tricks, tricks_played=tricks_played,
        tricks_result=tricks_result, score_ns=score, irregularities=irregularities,
        table=tags.get("Table", ""), tags=extra,
    )


def deals_by_board(source: PbnFile | TextIO | str | Path) -> dict[int, DealInfo]:
    """Board number -> dealer, vulnerability and deal, for ``--deals FILE.pbn``.

    The [Dealer] and [Vulnerable] tags override Law 2 (a board marked differently keeps
    its markings). Games without a deal are left out; when a board number appears twice
    (both rooms of a match), the first deal is kept.
    """
    pbn = source if isinstance(source, PbnFile) else read_pbn(source)
    out: dict[int, DealInfo] = {}
    for game in pbn.games:
        record = game_to_record(game)
        if record.deal is None or record.board in out:
            continue
        out[record.board] = record.deal_info
    return out


# --- writing -----------------------------------------------------------------------------

def _quote(value: str) -> str:
    # PBN's escapes are \\ and \": a backslash is doubled only where a reader would take it
    # for one of them (before \ or ", or last), so a table header's "Result\2R" stays as
    # every reader expects it
    value = re.sub(r'\\(?=[\\"]|$)', r"\\\\", value)
    return value.replace('"', '\\"').replace("\n", " ")


def _irregularity_tag(irr: Irregularity) -> str:
    parts = [f"id={irr.id}", f"code={irr.code.value}", f"law={quote(irr.law, safe='')}",
             f"status={irr.status.value}"]
    if irr.seat is not None:
        parts.append(f"seat={irr.seat.name}")
    if irr.trick is not None:
        parts.append(f"trick={irr.trick}")
    if irr.card is not None:
        parts.append(f"card={irr.card}")
    if irr.call is not None:
        parts.append(f"call={irr.call}")
    if irr.detail:
        parts.append(f"detail={quote(irr.detail, safe='')}")
    for key, value in irr.params:
        text = value.name if isinstance(value, Seat) else str(value)
        parts.append(f"{key}={quote(text, safe='')}")
    return " ".join(parts)


def _lines_of(cells: Iterable[tuple[bool, str]], per_line: int = 4) -> list[str]:
    """Lay out cells four to a line; non-cells (comments) go along without counting."""
    lines: list[str] = []
    current: list[str] = []
    count = 0
    for is_cell, text in cells:
        if is_cell and count == per_line:
            lines.append(" ".join(current))
            current, count = [], 0
        current.append(text)
        if is_cell:
            count += 1
    if current:
        lines.append(" ".join(current))
    return lines


def _auction_lines(record: BoardRecord) -> tuple[list[str], list[str]]:
    notes: dict[str, int] = {}
    cells: list[tuple[bool, str]] = []
    turn = record.dealer
    standing: list[tuple[Seat, Call]] = []
    for entry in record.auction:
        if entry.cancelled:
            continue        # in the AuctionTrace tag (auction_trace)
        for _ in range((entry.seat - turn) % 4):
            cells.append((True, "^S"))
        # No ^I before an insufficient bid: endplay and other readers take the token for a
        # call. The record's Irregularity tags say it; a record without one has none to say.
        text = str(entry.call)
        if entry.note:
            index = notes.setdefault(entry.note, len(notes) + 1)
            text += f" ={index}="
        cells.append((True, text))
        standing.append((entry.seat, entry.call))
        turn = entry.seat.lho
    if not auction_outcome(standing)[0]:
        cells.append((False, "*"))
    note_tags = [f'[Note "{i}:{_quote(text)}"]' for text, i in notes.items()]
    return _lines_of(cells), note_tags


def auction_trace(record: BoardRecord) -> str:
    """What the Auction section cannot hold, for the ``AuctionTrace`` tag: the calls a
    rectification cancelled and the link from a call to its irregularity, by the entry's
    place in the record's auction: ``2=cancelled,W,1S,1 3=irregularity,1``. A comment among
    the calls would say it too, but endplay and other readers abort on one; they skip a tag
    they do not know (PBN 4.9)."""
    items = []
    for i, entry in enumerate(record.auction):
        link = f",{entry.irregularity}" if entry.irregularity is not None else ""
        if entry.cancelled:
            items.append(f"{i}=cancelled,{entry.seat.name},{entry.call}{link}")
        elif link:
            items.append(f"{i}=irregularity{link}")
    return " ".join(items)


def _apply_trace(entries: list[AuctionEntry], value: str, line: int) -> list[AuctionEntry]:
    """The standing calls of the Auction section, with the AuctionTrace tag's cancelled calls
    put back at their places and the calls linked to their irregularities."""
    cancelled: list[tuple[int, AuctionEntry]] = []
    links: list[tuple[int, int]] = []
    for item in value.split():
        place, _, rest = item.partition("=")
        parts = rest.split(",")
        try:
            if parts[0] == "cancelled" and len(parts) in (3, 4):
                link = int(parts[3]) if len(parts) == 4 else None
                cancelled.append((int(place), AuctionEntry(Seat.parse(parts[1]),
                                                           Call.parse(parts[2]), True, link)))
            elif parts[0] == "irregularity" and len(parts) == 2:
                links.append((int(place), int(parts[1])))
            else:
                raise ValueError(item)
        except (ValueError, ParseError):
            raise BadRecord(f"AuctionTrace: not an entry: {item!r}", line) from None
    out = list(entries)
    for index, entry in sorted(cancelled, key=lambda x: x[0]):
        out.insert(min(index, len(out)), entry)
    for index, irr in links:
        if not 0 <= index < len(out):
            raise BadRecord(f"AuctionTrace: no call {index} in the auction", line)
        e = out[index]
        out[index] = AuctionEntry(e.seat, e.call, e.cancelled, irr, e.note)
    return out


_LEAD_CODES = (Code.OPENING_LEAD_OUT_OF_TURN, Code.LEAD_OUT_OF_TURN)


def _tagged_leads(irregularities: Iterable[Irregularity]) -> dict[int, Seat]:
    """Trick -> who led it out of turn and it stood, as the Irregularity tags say."""
    return {i.trick: i.seat for i in irregularities
            if i.code in _LEAD_CODES and i.trick is not None and i.seat is not None
            and i.status is Status.RESOLVED and i.detail == "accepted"}


def _play_lines(record: BoardRecord, leader: Seat) -> list[str]:
    # PBN's ^R and ^L marks break endplay and other readers. A revoke is in the record's
    # Irregularity tags, never as ^R; ^L is written only for a lead out of turn no tag
    # names, where the order of the trick would otherwise be lost.
    tagged_leads = _tagged_leads(record.irregularities)
    columns = [leader.rotated(i) for i in range(4)]
    lines: list[str] = []
    expected: Seat | None = leader
    complete = 0
    for trick in record.tricks:
        by_seat = dict(trick.cards)
        cells: list[str] = []
        for seat in columns:
            card = by_seat.get(seat)
            if card is None:
                cells.append("-")
                continue
            text = str(card)
            if seat is trick.leader and expected is not None and trick.leader is not expected \
                    and tagged_leads.get(trick.number) is not seat:
                text = "^L " + text
            cells.append(text)
        lines.append(" ".join(cells))
        expected = trick.winner
        if len(trick.cards) == 4:
            complete += 1
    if complete < 13:
        lines.append("*")
    return lines


def record_to_pbn(record: BoardRecord) -> str:
    """One game in PBN 2.1 export format (without the file header)."""
    tags = record.tags
    values: dict[str, str] = {
        "Event": tags.get("Event", ""), "Site": tags.get("Site", ""),
        "Date": tags.get("Date", ""), "Board": str(record.board),
        "West": tags.get("West", ""), "North": tags.get("North", ""),
        "East": tags.get("East", ""), "South": tags.get("South", ""),
        "Dealer": record.dealer.name, "Vulnerable": str(record.vulnerability),
        "Deal": (record.deal.to_pbn(record.dealer) if record.deal is not None
                 else f"{record.dealer.name}:- - - -"),
        "Scoring": tags.get("Scoring", ""),
        "Declarer": record.declarer.name if record.declarer is not None else "",
        "Contract": str(record.contract) if record.contract is not None else "",
        "Result": "",
    }
    result = record.tricks_result
    if result is None and len(record.tricks) == 13:
        result = record.tricks_played
    passed_out = record.contract is not None and record.contract.passed_out
    if result is not None and not passed_out:
        # the result after Law 64, 67B, a ruling or a claim, as a bare number: 3.4.15's caret
        # ("differs from the play") makes endplay abort the whole file and other readers
        # misread it; the tricks as played follow from the Play section, and why they differ
        # is in the Irregularity tags, which readers skip
        values["Result"] = str(result)
    out = [f'[{name} "{_quote(values[name])}"]' for name in MANDATORY_TAGS]
    if record.table:
        out.append(f'[Table "{_quote(record.table)}"]')
    if record.score_ns is not None:
        out.append(f'[Score "NS {record.score_ns}"]')     # "NS 0" on a passed-out board too
    for name, value in tags.items():
        if name not in values and name not in _FIELD_TAGS:
            if name.endswith("Table") and "\n" in value:
                header, *rows = value.split("\n")
                out.append(f'[{name} "{_quote(header)}"]')
                out.extend(rows)
            else:
                out.append(f'[{name} "{_quote(value)}"]')
    for irr in record.irregularities:
        out.append(f'[Irregularity "{_irregularity_tag(irr)}"]')
    trace = auction_trace(record)
    if trace:
        out.append(f'[AuctionTrace "{trace}"]')
    if record.auction:
        out.append(f'[Auction "{record.dealer.name}"]')
        lines, notes = _auction_lines(record)
        out.extend(lines)
        out.extend(notes)
    if record.tricks:
        # export format starts with the opening leader; with no declarer known, with
        # whoever led the first trick
        leader = (record.declarer.lho if record.declarer is not None
                  else record.tricks[0].leader)
        out.append(f'[Play "{leader.name}"]')
        out.extend(_play_lines(record, leader))
    return "\n".join(out) + "\n"


def write_pbn(records: Iterable[BoardRecord], fp: TextIO) -> None:
    """A PBN 2.1 export file: header, then each game followed by an empty line."""
    fp.write("% PBN 2.1\n% EXPORT\n")
    for record in records:
        fp.write("\n")
        fp.write(record_to_pbn(record))


def pbn_text(records: Iterable[BoardRecord]) -> str:
    buffer = io.StringIO()
    write_pbn(records, buffer)
    return buffer.getvalue()
