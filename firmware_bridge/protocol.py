"""The reader line protocol: framed ASCII lines with a CRC, between reader firmware and host.

Specified in ``docs/serial-protocol.md``. Everything here is pure (no I/O, no clock):

* :func:`crc16_ccitt` - CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF), check("123456789")=0x29B1;
* :func:`parse_line` / :func:`encode_frame` - one reader line <-> :class:`Frame`;
* :func:`parse_command` / :func:`encode_command` - one host command line <-> :class:`Command`;
* :class:`LineDecoder` - a byte stream (any chunking, any garbage) -> frames and error values;
* :class:`HostSession` - the host's state of one link: sequence checking, inventory diffing,
  "ask for an inventory" after a gap, a reset or a damaged line.

Parsing never raises: bad input comes back as a :class:`ProtocolError` *value*.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, Literal

from firmware_bridge.mcu.btreader.proto import crc16 as _firmware_crc16

__all__ = [
    "MAX_LINE", "SEQ_MODULO", "MAX_INVENTORY", "crc16_ccitt", "FrameOp", "Frame", "ProtocolError",
    "ErrorKind", "CommandOp", "Command", "parse_line", "encode_frame", "parse_command",
    "encode_command", "LineDecoder", "TagChange", "Anomaly", "SendCommand", "SessionOutput",
    "HostSession", "normalise_uid", "next_seq", "Mark", "MarkRow", "Synced", "SYNC_TOKEN",
    "READER_ID", "PROTOCOL_VERSION", "STATS_HEALTH", "parse_stats",
]

#: docs/serial-protocol.md's version: 2 added ``STAT`` (the firmware's per-antenna counters)
PROTOCOL_VERSION: Final = 2
#: the ReaderHealth kind a ``STAT`` line becomes on the host (asked for, never unprompted)
STATS_HEALTH: Final = "antenna_stats"

#: Longest accepted line, terminator included. A 13-card inventory with 7-byte UIDs is ~220 bytes.
MAX_LINE: Final = 1024
#: Sequence numbers count 0..65535 and wrap; a boot banner always carries 0.
SEQ_MODULO: Final = 65536
#: Most UIDs one inventory line may list.
MAX_INVENTORY: Final = 60
#: Antennas are numbered 0..MAX_ANTENNA.
MAX_ANTENNA: Final = 15

FRAME_START: Final = b"$"
COMMAND_START: Final = b"#"

#: a reader id the host accepts (the firmware flasher checks ids by it too)
READER_ID = re.compile(r"[A-Za-z0-9_.-]{1,16}\Z")
_UID = re.compile(r"(?:[0-9A-Fa-f]{2}){4,10}\Z")
_DECIMAL = re.compile(r"[0-9]{1,10}\Z")
_TIME_MS = re.compile(r"[0-9]{1,15}\Z")
_FORBIDDEN_IN_TEXT = frozenset("$#*\r\n")


def crc16_ccitt(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final xor.

    The reader firmware's own (``firmware_bridge/mcu/btreader/proto.py``, written to run under
    MicroPython too): one implementation for both ends of the line."""
    return _firmware_crc16(data, crc)


def next_seq(seq: int) -> int:
    return (seq + 1) % SEQ_MODULO


def normalise_uid(text: str) -> str | None:
    """Upper-case hex of a 4..10 byte UID, or None when ``text`` is not one."""
    return text.upper() if _UID.match(text) else None


class FrameOp(enum.Enum):
    """What a reader line says. Values are the op tokens on the wire."""

    ADDED = "+"          # + UID: a tag came into the antenna's field
    REMOVED = "-"        # - UID: a tag left the field
    INVENTORY = "INV"    # INV [UID...]: everything the antenna sees now (complete list)
    HEARTBEAT = "HB"     # HB UPTIME_MS
    BOOT = "BOOT"        # BOOT FIRMWARE REASON: the reader (re)started; seq restarts at 0
    ERROR = "ERR"        # ERR CODE [TEXT...]: the firmware reports a fault
    PONG = "PONG"        # PONG TOKEN: answer to PING
    IDENT = "ID"         # ID MODEL FIRMWARE SERIAL ANTENNAS: answer to IDENT
    ACK = "ACK"          # ACK COMMAND [ARGS...]: a command was applied (RATE)
    #: STAT ROUNDS ANSWERED MISSED: one antenna's counters since boot (protocol 2): polling
    #: rounds, and tag-rounds in which a tag on its list answered / did not answer
    STAT = "STAT"


#: Ops whose antenna field is a number (the others are reader-wide and carry "-").
ANTENNA_OPS: Final = frozenset({FrameOp.ADDED, FrameOp.REMOVED, FrameOp.INVENTORY,
                                FrameOp.STAT})


@dataclass(frozen=True)
class Frame:
    """One reader line. ``args`` are the op's arguments as text (UIDs already upper-case)."""

    reader: str
    antenna: int | None
    seq: int
    op: FrameOp
    args: tuple[str, ...] = ()
    #: Reader's own clock (ms since the epoch) if it has one (``@<ms>`` on the wire), else None.
    hw_time_ms: int | None = None

    @property
    def uid(self) -> str:
        """The UID of a ``+`` / ``-`` frame."""
        return self.args[0]

    @property
    def uids(self) -> tuple[str, ...]:
        """The UIDs of an inventory frame."""
        return self.args


ErrorKind = Literal["crc_error", "malformed", "overlong", "noise", "truncated"]


@dataclass(frozen=True)
class ProtocolError:
    """A line (or stretch of bytes) that is not a valid frame. A value, never raised."""

    kind: ErrorKind
    detail: str
    raw: bytes = field(default=b"", repr=False)


class CommandOp(enum.Enum):
    """Host -> reader commands."""

    INVENTORY = "INV"    # INV [ANTENNA]: send an INV line for one antenna, or for all
    RATE = "RATE"        # RATE MS: scan period in milliseconds (10..10000)
    PING = "PING"        # PING TOKEN: answer PONG TOKEN
    IDENT = "IDENT"      # IDENT: answer ID ...
    #: REPLAY SEQ [NOW_MS]: send again, as first sent, line SEQ and every line after it that
    #: the firmware still holds (this boot); ERR REPLAY if it holds no line SEQ. NOW_MS, the
    #: host's clock (ms since the epoch), dates the lines of a firmware without such a clock
    REPLAY = "REPLAY"
    #: STAT [ANTENNA]: send a STAT line for one antenna, or for all (protocol 2)
    STAT = "STAT"


@dataclass(frozen=True)
class Command:
    op: CommandOp
    args: tuple[str, ...] = ()


# --------------------------------------------------------------------------- encoding


def _seal(start: bytes, body: str) -> bytes:
    raw = body.encode("ascii")
    return start + raw + b"*%04X\r\n" % crc16_ccitt(raw)


def _check_text_arg(arg: str) -> None:
    if not arg or any(ch in _FORBIDDEN_IN_TEXT or ch == " " for ch in arg) or not arg.isascii():
        raise ValueError(f"argument not sendable: {arg!r}")


def encode_frame(
    reader: str,
    antenna: int | None,
    seq: int,
    op: FrameOp,
    args: Iterable[str] = (),
    *,
    hw_time_ms: int | None = None,
) -> bytes:
    """One reader line, terminator included. Raises ValueError on values the wire cannot carry
    (encoding is done by our own code - firmware simulator, tests - so a bad value is a bug)."""
    return encode(Frame(reader, antenna, seq, op, tuple(args), hw_time_ms))


def encode(frame: Frame) -> bytes:
    """:func:`encode_frame` for a ready :class:`Frame`."""
    if not READER_ID.match(frame.reader):
        raise ValueError(f"bad reader id {frame.reader!r}")
    if not 0 <= frame.seq < SEQ_MODULO:
        raise ValueError(f"seq out of range: {frame.seq}")
    if frame.op in ANTENNA_OPS:
        if frame.antenna is None or not 0 <= frame.antenna <= MAX_ANTENNA:
            raise ValueError(f"{frame.op.value} needs an antenna 0..{MAX_ANTENNA}")
        antenna = str(frame.antenna)
    else:
        antenna = "-" if frame.antenna is None else str(frame.antenna)
    parts = [frame.reader, antenna, str(frame.seq)]
    if frame.hw_time_ms is not None:
        parts.append(f"@{frame.hw_time_ms}")
    parts.append(frame.op.value)
    for arg in frame.args:
        _check_text_arg(arg)
    parts.extend(frame.args)
    problem = _check_args(frame.op, frame.args)
    if problem:
        raise ValueError(problem)
    return _seal(FRAME_START, " ".join(parts))


def encode_command(op: CommandOp, args: Iterable[str] = ()) -> bytes:
    args = tuple(args)
    for arg in args:
        _check_text_arg(arg)
    return _seal(COMMAND_START, " ".join((op.value, *args)))


# --------------------------------------------------------------------------- parsing


def _unseal(line: bytes, start: bytes) -> str | ProtocolError:
    """Check start, terminator-free body, ASCII and CRC; return the body text."""
    line = line.rstrip(b"\r\n")
    if len(line) > MAX_LINE:
        return ProtocolError("overlong", f"line of {len(line)} bytes (max {MAX_LINE})", line[:64])
    if not line.startswith(start):
        return ProtocolError("noise", "line does not start with " + start.decode(), line)
    star = line.rfind(b"*")
    if star < 0:
        return ProtocolError("truncated", "no '*CRC' at the end of the line", line)
    body, crc_text = line[1:star], line[star + 1:]
    if len(crc_text) != 4 or not all(c in b"0123456789ABCDEF" for c in crc_text):
        return ProtocolError(
            "truncated", f"CRC field is not 4 upper-case hex digits: {crc_text!r}", line)
    if int(crc_text, 16) != crc16_ccitt(body):
        return ProtocolError(
            "crc_error", f"CRC {crc_text.decode()} != computed {crc16_ccitt(body):04X}", line)
    if not all(0x20 <= b < 0x7F for b in body):
        return ProtocolError("malformed", "non-printable bytes inside a frame", line)
    return body.decode("ascii")


def _check_args(op: FrameOp, args: tuple[str, ...]) -> str | None:
    """A description of what is wrong with ``args`` for ``op``, or None."""
    if op in (FrameOp.ADDED, FrameOp.REMOVED):
        if len(args) != 1 or normalise_uid(args[0]) is None:
            return f"'{op.value}' needs one UID (8..20 hex digits), got {args!r}"
    elif op is FrameOp.INVENTORY:
        if len(args) > MAX_INVENTORY:
            return f"inventory of {len(args)} UIDs (max {MAX_INVENTORY})"
        bad = [a for a in args if normalise_uid(a) is None]
        if bad:
            return f"inventory holds non-UIDs {bad[:3]!r}"
        if len({a.upper() for a in args}) != len(args):
            return "inventory lists a UID twice"
    elif op is FrameOp.HEARTBEAT:
        if len(args) != 1 or not _DECIMAL.match(args[0]):
            return f"HB needs UPTIME_MS, got {args!r}"
    elif op is FrameOp.BOOT:
        if len(args) != 2:
            return f"BOOT needs FIRMWARE REASON, got {args!r}"
    elif op is FrameOp.ERROR:
        if not args:
            return "ERR needs a CODE"
    elif op is FrameOp.PONG:
        if len(args) != 1:
            return f"PONG needs one TOKEN, got {args!r}"
    elif op is FrameOp.IDENT:
        if len(args) != 4 or not _DECIMAL.match(args[3]):
            return f"ID needs MODEL FIRMWARE SERIAL ANTENNAS, got {args!r}"
    elif op is FrameOp.ACK:
        if not args:
            return "ACK needs the COMMAND it answers"
    elif op is FrameOp.STAT:
        if len(args) != 3 or not all(_DECIMAL.match(a) for a in args):
            return f"STAT needs ROUNDS ANSWERED MISSED, got {args!r}"
    return None


_OPS_BY_TOKEN: Final = {op.value: op for op in FrameOp}
_COMMANDS_BY_TOKEN: Final = {op.value: op for op in CommandOp}


def parse_line(line: bytes) -> Frame | ProtocolError:
    """One reader line (with or without its CR LF) -> a :class:`Frame`, or a :class:`ProtocolError`.

    Never raises, whatever the bytes.
    """
    body = _unseal(line, FRAME_START)
    if isinstance(body, ProtocolError):
        return body
    tokens = body.split(" ")
    if len(tokens) < 4 or "" in tokens:
        return ProtocolError("malformed", "need READER ANTENNA SEQ OP, single spaces", line)
    reader, antenna_text, seq_text, *rest = tokens
    if not READER_ID.match(reader):
        return ProtocolError("malformed", f"bad reader id {reader!r}", line)
    hw_time_ms: int | None = None
    if rest[0].startswith("@"):
        if not _TIME_MS.match(rest[0][1:]) or len(rest) < 2:
            return ProtocolError("malformed", f"bad hardware time {rest[0]!r}", line)
        hw_time_ms = int(rest[0][1:])
        rest = rest[1:]
    op = _OPS_BY_TOKEN.get(rest[0])
    if op is None:
        return ProtocolError("malformed", f"unknown op {rest[0]!r}", line)
    if not _DECIMAL.match(seq_text) or int(seq_text) >= SEQ_MODULO:
        return ProtocolError("malformed", f"bad sequence number {seq_text!r}", line)
    antenna: int | None
    if antenna_text == "-":
        antenna = None
    elif antenna_text.isdigit() and len(antenna_text) <= 2 and int(antenna_text) <= MAX_ANTENNA:
        antenna = int(antenna_text)
    else:
        return ProtocolError("malformed", f"bad antenna {antenna_text!r}", line)
    if op in ANTENNA_OPS and antenna is None:
        return ProtocolError("malformed", f"'{op.value}' without an antenna", line)
    args = tuple(rest[1:])
    problem = _check_args(op, args)
    if problem:
        return ProtocolError("malformed", problem, line)
    if op in ANTENNA_OPS:
        args = tuple(a.upper() for a in args)
    return Frame(reader, antenna, int(seq_text), op, args, hw_time_ms)


def parse_command(line: bytes) -> Command | ProtocolError:
    """One host command line -> a :class:`Command`, or a :class:`ProtocolError`. Never raises."""
    body = _unseal(line, COMMAND_START)
    if isinstance(body, ProtocolError):
        return body
    tokens = body.split(" ")
    op = _COMMANDS_BY_TOKEN.get(tokens[0])
    if op is None or "" in tokens:
        return ProtocolError("malformed", f"unknown command {tokens[0]!r}", line)
    args = tuple(tokens[1:])
    if op in (CommandOp.INVENTORY, CommandOp.STAT) and not (
            not args or (len(args) == 1 and args[0].isdigit() and int(args[0]) <= MAX_ANTENNA)):
        return ProtocolError("malformed", f"{op.value} takes at most one antenna, got {args!r}",
                             line)
    if op is CommandOp.RATE and not (
            len(args) == 1 and args[0].isdigit() and 10 <= int(args[0]) <= 10000):
        return ProtocolError("malformed", f"RATE needs MS 10..10000, got {args!r}", line)
    if op is CommandOp.PING and len(args) != 1:
        return ProtocolError("malformed", "PING needs one TOKEN", line)
    if op is CommandOp.IDENT and args:
        return ProtocolError("malformed", "IDENT takes no arguments", line)
    if op is CommandOp.REPLAY and not (
            1 <= len(args) <= 2 and args[0].isdigit() and int(args[0]) < SEQ_MODULO
            and all(_TIME_MS.match(a) for a in args[1:])):
        return ProtocolError("malformed", f"REPLAY needs SEQ 0..{SEQ_MODULO - 1} [NOW_MS], "
                             f"got {args!r}", line)
    return Command(op, args)


_STATS = re.compile(r"antenna ([0-9]+): ([0-9]+) rounds, ([0-9]+) answered, ([0-9]+) missed\Z")


def parse_stats(detail: str) -> tuple[int, int, int, int] | None:
    """A ``STAT`` line as the host reports it (:data:`STATS_HEALTH`'s detail) -> (antenna,
    rounds, answered, missed), or None."""
    match = _STATS.match(detail)
    if match is None:
        return None
    antenna, rounds, answered, missed = (int(g) for g in match.groups())
    return antenna, rounds, answered, missed


# --------------------------------------------------------------------------- stream decoding


class LineDecoder:
    """Split a byte stream into lines and parse each one; resynchronise on anything.

    * a line is ended by LF (a CR before it is dropped);
    * bytes before the start character are noise (reported once per line);
    * a start character in the middle of a line means the sender restarted mid-line (a reset):
      the part before it is reported ``truncated`` and decoding goes on from the new start;
    * a line longer than :data:`MAX_LINE` is reported ``overlong`` once and skipped to its end;
    * empty lines are ignored (firmware sends one at boot to end whatever was half-sent).

    ``parse`` is :func:`parse_line` for the host side, :func:`parse_command` for the reader side.
    """

    def __init__(self, *, commands: bool = False) -> None:
        self._start = COMMAND_START if commands else FRAME_START
        self._parse = parse_command if commands else parse_line
        self._buffer = bytearray()
        self._skipping = False  # inside an overlong line, waiting for its end

    def feed(self, data: bytes) -> list[Frame | Command | ProtocolError]:
        out: list[Frame | Command | ProtocolError] = []
        start = 0
        while True:
            newline = data.find(b"\n", start)
            if newline < 0:
                self._take_partial(data[start:], out)
                return out
            piece = data[start:newline]
            start = newline + 1
            if self._skipping:
                self._skipping = False
                self._buffer.clear()
                continue
            if len(self._buffer) + len(piece) > MAX_LINE:
                out.append(ProtocolError(
                    "overlong", f"line longer than {MAX_LINE} bytes", bytes(self._buffer[:64])))
                self._buffer.clear()
                continue
            self._buffer += piece
            line = bytes(self._buffer)
            self._buffer.clear()
            self._line(line, out)

    def _take_partial(self, tail: bytes, out: list[Frame | Command | ProtocolError]) -> None:
        if self._skipping:
            return
        self._buffer += tail
        if len(self._buffer) > MAX_LINE:
            out.append(ProtocolError(
                "overlong", f"line longer than {MAX_LINE} bytes", bytes(self._buffer[:64])))
            self._buffer.clear()
            self._skipping = True

    def _line(self, line: bytes, out: list[Frame | Command | ProtocolError]) -> None:
        line = line.rstrip(b"\r")
        pieces = line.split(self._start)
        head = pieces[0].strip(b" \t\r\x00")
        if head:
            out.append(ProtocolError("noise", f"{len(head)} bytes of noise", head[:64]))
        for i, piece in enumerate(pieces[1:], start=1):
            if i < len(pieces) - 1:
                out.append(ProtocolError(
                    "truncated", "frame cut short by a new frame start (sender reset?)",
                    self._start + piece))
            else:
                out.append(self._parse(self._start + piece))


# --------------------------------------------------------------------------- host session


@dataclass(frozen=True)
class TagChange:
    """A tag came (``present``) or went (``removed``) on one antenna, as the link reports it."""

    antenna: int
    uid: str
    action: Literal["present", "removed"]
    hw_time_ms: int | None = None
    #: the reader line that reported it (the host's mark, ``HostSession.restore``); not
    #: part of what the change is
    line: Mark | None = field(default=None, compare=False)


#: a mark as text, as the bridge's spool keeps it: (seq, antenna or "-", op, args)
MarkRow = tuple[int, str, str, str]


@dataclass(frozen=True)
class Mark:
    """A reader line the host has passed on, to recognise when it is replayed: its seq and
    what it says (antenna, op, arguments; not its hardware time)."""

    seq: int
    antenna: int | None
    op: str
    args: tuple[str, ...] = ()

    @classmethod
    def of(cls, frame: Frame) -> Mark:
        return cls(frame.seq, frame.antenna, frame.op.value, frame.args)

    def matches(self, frame: Frame) -> bool:
        return (frame.seq, frame.antenna, frame.op.value, frame.args) == \
            (self.seq, self.antenna, self.op, self.args)

    def row(self) -> MarkRow:
        return (self.seq, "-" if self.antenna is None else str(self.antenna), self.op,
                " ".join(self.args))

    @classmethod
    def from_row(cls, row: MarkRow) -> Mark | None:
        """The mark of a row, or None for a row that cannot be one (a damaged spool)."""
        seq, antenna, op, args = row
        if not 0 <= seq < SEQ_MODULO or op not in _OPS_BY_TOKEN or \
                not (antenna == "-" or antenna.isdigit()):
            return None
        return cls(seq, None if antenna == "-" else int(antenna), op,
                   tuple(args.split(" ")) if args else ())


@dataclass(frozen=True)
class Synced:
    """The link is caught up: what the reader said while the host was away (replayed, or
    repaired by an inventory) has been passed on; what follows is live. ``line``: the line
    that said so (a mark to replay from, once everything before it is passed on)."""

    line: Mark


@dataclass(frozen=True)
class Anomaly:
    """Something wrong with the link: the host counts and reports it."""

    kind: str
    detail: str


@dataclass(frozen=True)
class SendCommand:
    """The host should send this command to the reader now."""

    command: Command


SessionOutput = TagChange | Anomaly | SendCommand | Synced

#: the PING token whose PONG ends the catching up after a link came up
SYNC_TOKEN: Final = "synced"


class HostSession:
    """The host's view of one reader link.

    Feed it every decoded item; it answers with tag changes, anomalies and commands to send.
    Lost lines are found by the sequence numbers; the session then asks for a full inventory and
    diffs it against what it believes is present, which repairs the state whatever was lost.
    Tag state is kept across :meth:`link_lost` so that the inventory after a reconnection
    reports exactly what changed while the cable was out.

    In order, too, when the firmware can: the session keeps the last line whose change it
    passed on (``mark``, restored by a host that restarted), and a (re)opened link first asks
    the firmware to replay its lines from that one (``REPLAY``): what happened while the host
    was away comes as it happened, then the inventory confirms it, then ``PONG synced`` ends
    the catching up (:class:`Synced`). A firmware that cannot replay (it rebooted, the lines
    are gone, or it has no ``REPLAY``) answers ``ERR``: its lines are dropped until the
    inventory, which repairs the state as before.
    """

    #: After asking for an inventory, do not ask again for this many seconds.
    INVENTORY_RETRY: Final = 1.0

    def __init__(self, expected_reader: str | None = None) -> None:
        self.expected_reader = expected_reader
        self.present: dict[int, set[str]] = {}
        self.reader_id: str | None = None
        self.ident: tuple[str, ...] | None = None
        self._expected_seq: int | None = None
        self._inventory_asked_at: float | None = None
        self._trouble: str | None = None  # why the next inventory is a repair
        self._repairing = False  # an inventory burst after trouble has begun
        self._seen_inventory: set[int] = set()  # antennas whose first inventory came in
        #: the last line whose change was passed on (None: none known)
        self.mark: Mark | None = None
        self._awaiting_replay: Mark | None = None  # REPLAY asked; its first line not seen yet
        self._replay_failed = False  # lines are dropped until the inventory repairs

    def restore(self, lying: dict[str, set[str]], mark: Mark | None = None) -> None:
        """Believe ``lying`` (antenna -> UIDs) is on the reader: a state kept by the host
        across its own restart. The next inventory of each antenna is diffed against it.
        ``mark``: the last line of this reader the host passed on (the replay starts there)."""
        if mark is not None:
            self.mark = mark
        for antenna, uids in lying.items():
            if not antenna.isdigit():
                continue
            number = int(antenna)
            self.present[number] = {u.upper() for u in uids}
            self._seen_inventory.add(number)
        if lying:
            self._trouble = self._trouble or "host restart"

    def link_up(self, now: float) -> list[SessionOutput]:
        """A (re)opened link: we know nothing of what happened meanwhile; ask for everything."""
        self._expected_seq = None
        if self._seen_inventory:
            self._trouble = "reconnection"
        out: list[SessionOutput] = []
        self._replay_failed = False
        self._awaiting_replay = self.mark
        if self.mark is not None:
            # with the host's time: a firmware without a clock of the epoch dates its lines
            out.append(SendCommand(Command(CommandOp.REPLAY, (str(self.mark.seq),
                                                              str(round(now * 1000))))))
        out += self._ask_inventory(now, force=True)
        return out + [SendCommand(Command(CommandOp.PING, (SYNC_TOKEN,)))]

    def link_lost(self) -> None:
        self._expected_seq = None
        self._inventory_asked_at = None

    def handle(self, item: Frame | Command | ProtocolError, now: float) -> list[SessionOutput]:
        if isinstance(item, ProtocolError):
            out: list[SessionOutput] = [Anomaly(item.kind, item.detail)]
            # The damaged line may have been a tag change: repair from an inventory.
            self._trouble = self._trouble or item.kind
            return out + self._ask_inventory(now)
        if isinstance(item, Command):
            return [Anomaly("malformed", "a host command came back from the reader (echo?)")]
        return self._frame(item, now)

    def _ask_inventory(self, now: float, *, force: bool = False) -> list[SessionOutput]:
        if (not force and self._inventory_asked_at is not None
                and now - self._inventory_asked_at < self.INVENTORY_RETRY):
            return []
        self._inventory_asked_at = now
        return [SendCommand(Command(CommandOp.INVENTORY))]

    def _frame(self, frame: Frame, now: float) -> list[SessionOutput]:
        out: list[SessionOutput] = []
        if self.reader_id != frame.reader:
            if self.reader_id is not None or (
                    self.expected_reader is not None and frame.reader != self.expected_reader):
                out.append(Anomaly(
                    "reader_id", f"reader calls itself {frame.reader!r}, "
                    f"expected {self.reader_id or self.expected_reader!r}"))
            self.reader_id = frame.reader
        if frame.op is FrameOp.BOOT:
            out.append(Anomaly("reset", f"reader booted: firmware {frame.args[0]}, "
                                        f"reason {frame.args[1]}"))
            self._expected_seq = next_seq(frame.seq)
            self._trouble = "reset"
            # its lines of before are gone: nothing to replay; its inventory repairs
            self.mark = self._awaiting_replay = None
            self._replay_failed = False
            return out + self._ask_inventory(now, force=True)
        if self._awaiting_replay is not None or self._replay_failed:
            if not self._catching_up(frame):
                return out
        out += self._frame_body(frame, now)
        self.mark = Mark.of(frame)
        return out

    def _catching_up(self, frame: Frame) -> bool:
        """While a replay is awaited or failed: False to drop ``frame``. A live line sent
        before the replay began comes again in it; after a failed replay the inventory
        repairs whatever the dropped lines said."""
        mark = self._awaiting_replay
        if mark is not None:
            if frame.op is FrameOp.ERROR and frame.args[:1] in (("REPLAY",), ("BADCMD",)):
                self._awaiting_replay = None
                self._replay_failed = True
                return False
            if mark.matches(frame):
                # the line passed on before: the replay is ours; what follows is new
                self._awaiting_replay = None
                self._expected_seq = next_seq(frame.seq)
                return False
            if frame.op not in (FrameOp.INVENTORY, FrameOp.PONG):
                return False
            self._awaiting_replay = None  # no replay came (a firmware without REPLAY)
        elif frame.op not in (FrameOp.INVENTORY, FrameOp.PONG):
            return False
        self._replay_failed = False
        self._expected_seq = None
        return True

    def _frame_body(self, frame: Frame, now: float) -> list[SessionOutput]:
        out: list[SessionOutput] = []
        if frame.op is not FrameOp.INVENTORY and self._repairing:
            # The inventory burst (one INV line per antenna) is over: the state is repaired.
            self._repairing = False
            self._trouble = None
        expected = self._expected_seq
        self._expected_seq = next_seq(frame.seq)
        if expected is not None and frame.seq != expected:
            lost = (frame.seq - expected) % SEQ_MODULO
            if lost < SEQ_MODULO // 2:
                out.append(Anomaly("gap", f"expected seq {expected}, got {frame.seq}: "
                                          f"{lost} line(s) lost"))
                self._trouble = "gap"
                out += self._ask_inventory(now)
            else:
                # An old number again: a repeated line, or a reader restarted without a banner.
                out.append(Anomaly("seq_backwards", f"expected seq {expected}, got {frame.seq}"))
                self._trouble = "seq_backwards"
                out += self._ask_inventory(now)
        if frame.op is FrameOp.ADDED:
            assert frame.antenna is not None
            seen = self.present.setdefault(frame.antenna, set())
            if frame.uid not in seen:
                seen.add(frame.uid)
                out.append(TagChange(frame.antenna, frame.uid, "present", frame.hw_time_ms,
                                     Mark.of(frame)))
        elif frame.op is FrameOp.REMOVED:
            assert frame.antenna is not None
            seen = self.present.setdefault(frame.antenna, set())
            if frame.uid in seen:
                seen.discard(frame.uid)
                out.append(TagChange(frame.antenna, frame.uid, "removed", frame.hw_time_ms,
                                     Mark.of(frame)))
        elif frame.op is FrameOp.INVENTORY:
            out += self._inventory(frame)
        elif frame.op is FrameOp.ERROR:
            out.append(Anomaly("firmware_error", " ".join(frame.args)))
        elif frame.op is FrameOp.IDENT:
            self.ident = frame.args
        elif frame.op is FrameOp.STAT:
            assert frame.antenna is not None
            rounds, answered, missed = frame.args
            out.append(Anomaly(STATS_HEALTH, f"antenna {frame.antenna}: {rounds} rounds, "
                                             f"{answered} answered, {missed} missed"))
        elif frame.op is FrameOp.PONG and frame.args[:1] == (SYNC_TOKEN,):
            out.append(Synced(Mark.of(frame)))
        return out

    def _inventory(self, frame: Frame) -> list[SessionOutput]:
        assert frame.antenna is not None
        old = self.present.get(frame.antenna, set())
        new = set(frame.uids)
        self.present[frame.antenna] = new
        self._inventory_asked_at = None
        changes: list[SessionOutput] = [
            TagChange(frame.antenna, uid, "removed", frame.hw_time_ms, Mark.of(frame))
            for uid in sorted(old - new)]
        changes += [
            TagChange(frame.antenna, uid, "present", frame.hw_time_ms, Mark.of(frame))
            for uid in sorted(new - old)]
        out: list[SessionOutput] = []
        if changes and frame.antenna in self._seen_inventory:
            why = self._trouble or "no known loss"
            out.append(Anomaly("resync", f"antenna {frame.antenna}: inventory repaired "
                                         f"{len(changes)} change(s) after {why}"))
        self._seen_inventory.add(frame.antenna)
        self._repairing = self._trouble is not None
        return out + changes
