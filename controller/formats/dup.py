"""Duplimate deal files: DUP (156 bytes a deal), and its two halves BRI and DGE on their own.

Layout followed (Jannersten/Duplimate "Convert" note, convert.pdf, as quoted by
njhammond/hand_record_utility DESIGN.md; DOS suit bytes and the 128-byte padding of
stand-alone BRI/DGE files as read by richardschneider/pbn ``lib/*-to-pbn.js``):

DUP, one record of 156 bytes per board, boards in ascending order::

    bytes   1-78   BRI part: 39 two-digit card numbers, 13 for North, East, South
                   (West holds the 13 cards not named). 01 = SA, 02 = SK .. 13 = S2,
                   14 = HA .. 26 = H2, 27 = DA .. 39 = D2, 40 = CA .. 52 = C2; any order.
    bytes  79-146  DGE part: the four hands N, E, S, W sorted, 17 bytes each: a suit byte
                   (DOS code page 437: 0x06 spade, 0x03 heart, 0x04 diamond, 0x05 club)
                   followed by that suit's ranks ``AKQJT98765432``, four suits in that order.
    byte   147     ``Y``/``N``: random hands?
    byte   148     ``Y``/``N``: backwards counting (the machine deals the set downwards;
                   records stay in ascending board order)
    bytes 149-151  lowest board number of the set, left-aligned, space padded
    bytes 152-153  copies of each board, left-aligned, space padded
    bytes 154-156  highest board number of the set, left-aligned, space padded
                   (a set of 32: ``YN1  1 32 ``)

BRI and DGE files hold only their part of each record, each padded to 128 bytes with
spaces and NUL bytes (we write spaces then NULs; we read any mix, and also unpadded
78/68-byte records).

Readers never raise on a broken record: every problem is a ``RecordProblem`` with the board
number and the byte position in the file, and the board is left out of ``deals`` when no
trustworthy hand can be made of it (in a DUP record, a broken BRI part falls back on a
sound DGE part, and the other way round).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from controller.formats.errors import FormatsError
from controller.laws.cards import Card, Deal, Rank, Seat, Suit

__all__ = [
    "DUP_RECORD", "BRI_PART", "DGE_PART", "CONTROL_PART", "PADDED_RECORD",
    "DupFormatError", "RecordProblem", "DupControl", "DealFile",
    "card_number", "card_from_number", "encode_bri", "encode_dge", "encode_control",
    "decode_bri", "decode_dge", "decode_control",
    "read_dup", "read_bri", "read_dge", "read_deal_file",
    "write_dup", "write_bri", "write_dge", "write_deal_file",
]

DUP_RECORD = 156
BRI_PART = 78
DGE_PART = 68
CONTROL_PART = 10
PADDED_RECORD = 128

#: Suit order of the card numbers and of the DGE hands.
_SUIT_ORDER: tuple[Suit, ...] = (Suit.S, Suit.H, Suit.D, Suit.C)
_RANKS_DOWN: tuple[Rank, ...] = tuple(sorted(Rank, reverse=True))
#: DOS code page 437 suit symbols; the ASCII letters are read too (some converters write them).
_SUIT_BYTE: dict[Suit, int] = {Suit.S: 0x06, Suit.H: 0x03, Suit.D: 0x04, Suit.C: 0x05}
_BYTE_SUIT: dict[int, Suit] = {v: k for k, v in _SUIT_BYTE.items()} | {
    ord("S"): Suit.S, ord("H"): Suit.H, ord("D"): Suit.D, ord("C"): Suit.C}
_PAD = frozenset(b" \x00\r\n\x1a")  # spaces, NULs, line ends, DOS end-of-file


class DupFormatError(FormatsError, ValueError):
    """A deal the format cannot hold (writers), or a file that is no deal file at all."""


@dataclass(frozen=True, slots=True)
class RecordProblem:
    """What is wrong with one record: ``offset`` is the byte position in the file (0-based)."""

    board: int
    offset: int
    detail: str

    def __str__(self) -> str:
        return f"board {self.board}, byte {self.offset}: {self.detail}"


@dataclass(frozen=True, slots=True)
class DupControl:
    """The ten control bytes that end a DUP record."""

    random_hands: bool = True
    backwards: bool = False
    lowest: int = 1
    copies: int = 1
    highest: int = 1


@dataclass(frozen=True, slots=True)
class DealFile:
    """What a deal file holds: the sound deals by board, and every problem met."""

    format: str
    deals: Mapping[int, Deal]
    problems: tuple[RecordProblem, ...] = ()
    control: DupControl | None = None
    records: int = 0
    broken_boards: frozenset[int] = field(default_factory=frozenset)

    @property
    def ok(self) -> bool:
        return not self.problems


# --- cards <-> numbers -------------------------------------------------------------------

def card_number(card: Card) -> int:
    """01 = SA .. 13 = S2, 14 = HA .. 52 = C2."""
    return _SUIT_ORDER.index(card.suit) * 13 + (Rank.ACE - card.rank) + 1


def card_from_number(number: int) -> Card:
    if not 1 <= number <= 52:
        raise ValueError(f"card numbers run 1..52, not {number}")
    suit, k = divmod(number - 1, 13)
    return Card(_SUIT_ORDER[suit], Rank(Rank.ACE - k))


def _check_complete(deal: Deal, what: str) -> None:
    if not deal.is_complete:
        counts = "/".join(str(len(deal[s])) for s in Seat)
        raise DupFormatError(f"{what}: a deal of four 13-card hands is needed, got {counts}")


# --- encoders ------------------------------------------------------------------------------

def encode_bri(deal: Deal) -> bytes:
    """The 78-byte BRI part: North, East, South, each sorted by card number."""
    _check_complete(deal, "BRI")
    out = bytearray()
    for seat in (Seat.N, Seat.E, Seat.S):
        for n in sorted(card_number(c) for c in deal[seat]):
            out += b"%02d" % n
    return bytes(out)


def encode_dge(deal: Deal) -> bytes:
    """The 68-byte DGE part: N, E, S, W; suit byte + ranks high to low, four suits each."""
    _check_complete(deal, "DGE")
    out = bytearray()
    for seat in Seat:
        hand = deal[seat]
        for suit in _SUIT_ORDER:
            out.append(_SUIT_BYTE[suit])
            out += "".join(r.char for r in _RANKS_DOWN if Card(suit, r) in hand).encode("ascii")
    return bytes(out)


def encode_control(control: DupControl) -> bytes:
    def field_(value: int, width: int) -> bytes:
        text = str(value).encode("ascii")
        if len(text) > width:
            raise DupFormatError(f"{value} does not fit a {width}-byte DUP field")
        return text.ljust(width)

    return (b"Y" if control.random_hands else b"N") + (b"Y" if control.backwards else b"N") \
        + field_(control.lowest, 3) + field_(control.copies, 2) + field_(control.highest, 3)


# --- decoders ------------------------------------------------------------------------------

def decode_bri(part: bytes, *, board: int, offset: int) -> tuple[Deal | None, list[RecordProblem]]:
    """A deal from a 78-byte BRI part; ``offset`` is where the part starts in the file."""
    problems: list[RecordProblem] = []
    if len(part) < BRI_PART:
        return None, [RecordProblem(board, offset + len(part),
                                    f"BRI part cut short: {len(part)} bytes of {BRI_PART}")]
    hands: dict[Seat, set[Card]] = {s: set() for s in Seat}
    where: dict[int, int] = {}
    for i in range(39):
        pos = offset + 2 * i
        raw = part[2 * i:2 * i + 2]
        seat = (Seat.N, Seat.E, Seat.S)[i // 13]
        if not (raw.isdigit() and raw.isascii()):
            problems.append(RecordProblem(board, pos, f"BRI card {i + 1} ({seat.name}) is not "
                                          f"a two-digit number: {raw!r}"))
            continue
        n = int(raw)
        if not 1 <= n <= 52:
            problems.append(RecordProblem(board, pos, f"BRI card {i + 1} ({seat.name}) is "
                                          f"{n:02d}, outside 01..52"))
            continue
        if n in where:
            problems.append(RecordProblem(
                board, pos, f"BRI card {card_from_number(n)} ({n:02d}) given twice "
                f"(first at byte {where[n]})"))
            continue
        where[n] = pos
        hands[seat].add(card_from_number(n))
    if problems:
        return None, problems
    hands[Seat.W] = {card_from_number(n) for n in range(1, 53) if n not in where}
    return Deal.from_hands(dict(hands)), []


def decode_dge(part: bytes, *, board: int, offset: int) -> tuple[Deal | None, list[RecordProblem]]:
    """A deal from a 68-byte DGE part; every hand must hold 13 cards and the pack be whole."""
    if len(part) < DGE_PART:
        return None, [RecordProblem(board, offset + len(part),
                                    f"DGE part cut short: {len(part)} bytes of {DGE_PART}")]
    problems: list[RecordProblem] = []
    hands: dict[Seat, set[Card]] = {s: set() for s in Seat}
    seen: dict[Card, int] = {}
    seat_no = -1
    suit: Suit | None = None
    for i, byte in enumerate(part[:DGE_PART]):
        pos = offset + i
        if byte in _BYTE_SUIT:
            new_suit = _BYTE_SUIT[byte]
            if new_suit is Suit.S:
                seat_no += 1
                if seat_no > 3:
                    problems.append(RecordProblem(board, pos, "DGE has a fifth hand"))
                    break
            elif suit is None or _SUIT_ORDER.index(new_suit) != _SUIT_ORDER.index(suit) + 1:
                problems.append(RecordProblem(
                    board, pos, f"DGE suit symbol for {new_suit.name} out of order"))
                break
            suit = new_suit
            continue
        ch = chr(byte)
        if suit is None or seat_no < 0:
            problems.append(RecordProblem(board, pos, f"DGE does not start with a spade "
                                          f"symbol (0x06): {bytes([byte])!r}"))
            break
        if ch not in "AKQJT98765432":
            problems.append(RecordProblem(board, pos, f"DGE byte {bytes([byte])!r} is no rank"))
            continue
        card = Card(suit, Rank.parse(ch))
        if card in seen:
            problems.append(RecordProblem(board, pos, f"DGE card {card} given twice "
                                          f"(first at byte {seen[card]})"))
            continue
        seen[card] = pos
        hands[Seat(seat_no)].add(card)
    if not problems:
        for seat in Seat:
            if len(hands[seat]) != 13:
                problems.append(RecordProblem(board, offset, f"DGE hand {seat.name} has "
                                              f"{len(hands[seat])} cards, not 13"))
    if problems:
        return None, problems
    return Deal.from_hands(dict(hands)), []


def _field_int(raw: bytes) -> int | None:
    text = raw.strip(b" \x00")
    return int(text) if text.isdigit() else None


def decode_control(part: bytes, *, board: int,
                   offset: int) -> tuple[DupControl | None, list[RecordProblem]]:
    if len(part) < CONTROL_PART:
        return None, [RecordProblem(board, offset + len(part), f"control bytes cut short: "
                                    f"{len(part)} of {CONTROL_PART}")]
    problems: list[RecordProblem] = []
    flags: list[bool] = []
    for i, what in ((0, "random hands"), (1, "backwards counting")):
        b = part[i:i + 1].upper()
        if b not in (b"Y", b"N"):
            problems.append(RecordProblem(board, offset + i, f"'{what}' flag is {b!r}, "
                                          "not Y or N"))
        flags.append(b == b"Y")
    values: list[int] = []
    for start, width, what in ((2, 3, "lowest board"), (5, 2, "copies"), (7, 3, "highest board")):
        v = _field_int(part[start:start + width])
        if v is None:
            problems.append(RecordProblem(board, offset + start, f"'{what}' field is "
                                          f"{part[start:start + width]!r}, not a number"))
            v = 0
        values.append(v)
    if problems:
        return None, problems
    return DupControl(flags[0], flags[1], values[0], values[1], values[2]), []


# --- file readers --------------------------------------------------------------------------

def _same(a: Deal, b: Deal) -> bool:
    return a.hands == b.hands


def _differences(bri: Deal, dge: Deal) -> str:
    parts = []
    for seat in Seat:
        if bri[seat] != dge[seat]:
            only_b = " ".join(str(c) for c in sorted(bri[seat] - dge[seat]))
            only_d = " ".join(str(c) for c in sorted(dge[seat] - bri[seat]))
            parts.append(f"{seat.name}: BRI only [{only_b}], DGE only [{only_d}]")
    return "; ".join(parts)


def read_dup(data: bytes, *, first_board: int | None = None) -> DealFile:
    """Every 156-byte record; boards numbered from the first record's 'lowest board' field
    (or ``first_board`` when given, or 1 when that field is broken)."""
    deals: dict[int, Deal] = {}
    problems: list[RecordProblem] = []
    broken: set[int] = set()
    first_control: DupControl | None = None
    base = first_board
    if base is None:
        control, _ = decode_control(data[BRI_PART + DGE_PART:DUP_RECORD], board=1,
                                    offset=BRI_PART + DGE_PART)
        base = control.lowest if control is not None and control.lowest >= 1 else 1
    count = 0
    for count, start in enumerate(range(0, len(data), DUP_RECORD), start=1):
        record = data[start:start + DUP_RECORD]
        board = base + count - 1
        if len(record) < DUP_RECORD:
            if all(b in _PAD for b in record):
                count -= 1  # trailing padding (an editor's newline, a DOS ^Z): not a record
                break
            problems.append(RecordProblem(board, start + len(record), f"record cut short: "
                                          f"{len(record)} bytes of {DUP_RECORD}"))
        bri, p_bri = decode_bri(record[:BRI_PART], board=board, offset=start)
        dge, p_dge = decode_dge(record[BRI_PART:BRI_PART + DGE_PART], board=board,
                                offset=start + BRI_PART)
        control, p_ctl = decode_control(record[BRI_PART + DGE_PART:], board=board,
                                        offset=start + BRI_PART + DGE_PART)
        problems += p_bri + p_dge + p_ctl
        if first_control is None and control is not None:
            first_control = control
        if bri is not None and dge is not None and not _same(bri, dge):
            problems.append(RecordProblem(board, start + BRI_PART, "BRI and DGE parts disagree "
                                          f"({_differences(bri, dge)}); the BRI part is kept"))
        deal = bri if bri is not None else dge
        if deal is None:
            broken.add(board)
        else:
            deals[board] = deal
    if count and first_control is not None:
        expected_highest = base + count - 1
        if first_control.highest != expected_highest and first_board is None:
            problems.append(RecordProblem(
                expected_highest, BRI_PART + DGE_PART + 7,
                f"control says boards {first_control.lowest}..{first_control.highest}, "
                f"the file holds {count} records ({base}..{expected_highest})"))
    return DealFile("dup", deals, tuple(problems), first_control, count, frozenset(broken))


def _record_size(data: bytes, part: int) -> int:
    """128 for padded files, ``part`` for packed ones."""
    if len(data) >= PADDED_RECORD and all(b in _PAD for b in data[part:PADDED_RECORD]):
        return PADDED_RECORD
    if len(data) % part == 0 or len(data) < PADDED_RECORD:
        return part
    return PADDED_RECORD


def _read_parts(data: bytes, part: int, kind: str, first_board: int) -> DealFile:
    size = _record_size(data, part)
    deals: dict[int, Deal] = {}
    problems: list[RecordProblem] = []
    broken: set[int] = set()
    count = 0
    for start in range(0, len(data), size):
        record = data[start:start + size]
        if all(b in _PAD for b in record):
            continue  # trailing padding
        count += 1
        board = first_board + (start // size)
        decode = decode_bri if kind == "bri" else decode_dge
        deal, p = decode(record[:part], board=board, offset=start)
        problems += p
        tail = record[part:]
        if len(record) == size and size > part and not all(b in _PAD for b in tail):
            problems.append(RecordProblem(board, start + part, f"padding after the {kind.upper()} "
                                          "part holds something other than spaces and NULs"))
        if deal is None:
            broken.add(board)
        else:
            deals[board] = deal
    return DealFile(kind, deals, tuple(problems), None, count, frozenset(broken))


def read_bri(data: bytes, *, first_board: int = 1) -> DealFile:
    return _read_parts(data, BRI_PART, "bri", first_board)


def read_dge(data: bytes, *, first_board: int = 1) -> DealFile:
    return _read_parts(data, DGE_PART, "dge", first_board)


def read_deal_file(path: str | Path, *, first_board: int | None = None) -> DealFile:
    """By extension: ``.dup``, ``.bri``, ``.dge`` (case-insensitive)."""
    p = Path(path)
    data = p.read_bytes()
    ext = p.suffix.lower()
    if ext == ".dup":
        return read_dup(data, first_board=first_board)
    if ext == ".bri":
        return read_bri(data, first_board=first_board or 1)
    if ext == ".dge":
        return read_dge(data, first_board=first_board or 1)
    raise DupFormatError(f"{p.name}: not a .dup, .bri or .dge file")


# --- file writers --------------------------------------------------------------------------

def _in_order(deals: Mapping[int, Deal]) -> list[tuple[int, Deal]]:
    boards = sorted(deals)
    if not boards:
        raise DupFormatError("no deals to write")
    if boards != list(range(boards[0], boards[0] + len(boards))):
        raise DupFormatError(f"boards must follow each other: {boards}")
    return [(b, deals[b]) for b in boards]


def write_dup(deals: Mapping[int, Deal], *, random_hands: bool = True, backwards: bool = False,
              copies: int = 1) -> bytes:
    ordered = _in_order(deals)
    control = encode_control(DupControl(random_hands, backwards, ordered[0][0], copies,
                                        ordered[-1][0]))
    return b"".join(encode_bri(d) + encode_dge(d) + control for _, d in ordered)


def _pad(part: bytes) -> bytes:
    # spaces up to 110 bytes then NULs to 128: what we understand Big Deal to write
    return part.ljust(110, b" ").ljust(PADDED_RECORD, b"\x00")


def write_bri(deals: Mapping[int, Deal], *, padded: bool = True) -> bytes:
    parts = [encode_bri(d) for _, d in _in_order(deals)]
    return b"".join(_pad(p) if padded else p for p in parts)


def write_dge(deals: Mapping[int, Deal], *, padded: bool = True) -> bytes:
    parts = [encode_dge(d) for _, d in _in_order(deals)]
    return b"".join(_pad(p) if padded else p for p in parts)


def write_deal_file(path: str | Path, deals: Mapping[int, Deal]) -> None:
    p = Path(path)
    ext = p.suffix.lower()
    if ext == ".dup":
        p.write_bytes(write_dup(deals))
    elif ext == ".bri":
        p.write_bytes(write_bri(deals))
    elif ext == ".dge":
        p.write_bytes(write_dge(deals))
    else:
        raise DupFormatError(f"{p.name}: not a .dup, .bri or .dge file")
