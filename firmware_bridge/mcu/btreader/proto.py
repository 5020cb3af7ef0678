"""The reader side of docs/serial-protocol.md: CRC, reader lines, host commands.

A small copy of what ``firmware_bridge/protocol.py`` does on the host: that module needs re,
enum and dataclasses, which MicroPython lacks. ``tests/test_mcu_firmware.py`` checks both agree.
"""

SEQ_MODULO = 65536
MAX_LINE = 1024
MAX_ANTENNA = 15
HEX = "0123456789ABCDEF"


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF); check value of b"123456789" is 0x29B1."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
            crc &= 0xFFFF
    return crc


def hexstr(data: bytes) -> str:
    """Upper-case hex of ``data`` (bytes.hex is missing on some MicroPython ports)."""
    return "".join(HEX[b >> 4] + HEX[b & 15] for b in data)


def seal(start: str, body: str) -> bytes:
    raw = body.encode()
    return start.encode() + raw + f"*{crc16(raw):04X}\r\n".encode()


def frame(reader: str, antenna: int, seq: int, op: str, args: list[str],
          time_ms: int = -1) -> bytes:
    """One reader line; ``antenna`` < 0 writes ``-`` (a line about the whole reader);
    ``time_ms`` >= 0 writes ``@time_ms`` (ms since the epoch: a replayed line's time)."""
    parts = [reader, "-" if antenna < 0 else str(antenna), str(seq)]
    if time_ms >= 0:
        parts.append("@" + str(time_ms))
    parts.append(op)
    return seal("$", " ".join(parts + args))


def parse_command(line: bytes) -> tuple[str, list[str]] | str:
    """``#OP ARGS*CRC`` -> (op, args), or the error kind as a string (for ``ERR BADCMD``)."""
    line = line.strip()
    if len(line) > MAX_LINE:
        return "overlong"
    if not line.startswith(b"#"):
        return "noise"
    star = line.rfind(b"*")
    if star < 0 or len(line) - star - 1 != 4:
        return "truncated"
    body = line[1:star]
    try:
        crc = int(line[star + 1:].decode(), 16)
    except ValueError:
        return "truncated"
    if crc != crc16(body):
        return "crc_error"
    try:
        tokens = body.decode().split(" ")
    except UnicodeError:
        return "malformed"
    op, args = tokens[0], tokens[1:]
    if "" in tokens:
        return "malformed"
    if op == "INV" or op == "STAT":
        if not args or (len(args) == 1 and args[0].isdigit() and int(args[0]) <= MAX_ANTENNA):
            return op, args
    elif op == "RATE":
        if len(args) == 1 and args[0].isdigit() and 10 <= int(args[0]) <= 10000:
            return op, args
    elif op == "PING":
        if len(args) == 1:
            return op, args
    elif op == "IDENT":
        if not args:
            return op, args
    elif op == "REPLAY":
        # REPLAY SEQ [NOW_MS]: the host's clock (ms since the epoch) dates the replayed lines
        if 1 <= len(args) <= 2 and all(a.isdigit() and len(a) <= 15 for a in args) \
                and int(args[0]) < SEQ_MODULO:
            return op, args
    return "malformed"


class LineSplitter:
    """Bytes from the host -> complete lines (without the terminator); an overlong line is
    returned cut, and then rejected by :func:`parse_command`."""

    def __init__(self) -> None:
        self.buffer = b""

    def feed(self, data: bytes) -> list[bytes]:
        self.buffer += data
        lines = []
        while True:
            end = self.buffer.find(b"\n")
            if end < 0:
                if len(self.buffer) > MAX_LINE:
                    lines.append(self.buffer)
                    self.buffer = b""
                return lines
            line = self.buffer[:end]
            self.buffer = self.buffer[end + 1:]
            if line.strip():
                lines.append(line)
