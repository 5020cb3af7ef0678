"""The reader firmware (firmware_bridge/mcu/btreader) as shipped, under CPython, on a board of
emulated chips (tests/mcuboard.py): its serial output goes through a pseudo-terminal to the real
host reader (firmware_bridge/readers/serial.py) and comes out as TagRead / ReaderHealth.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from time import time as wall_clock

import pytest
from mcuboard import Board
from test_readers_serial import Watcher, has_health

from firmware_bridge.mcu.btreader import app as app_module
from firmware_bridge.mcu.btreader import proto
from firmware_bridge.mcu.btreader.app import App, Link
from firmware_bridge.mcu.btreader.clock import Clock
from firmware_bridge.mcu.btreader.inventory import Scanner
from firmware_bridge.mcu.btreader.iso14443 import crc_a
from firmware_bridge.protocol import (
    Command,
    CommandOp,
    Frame,
    FrameOp,
    LineDecoder,
    ProtocolError,
    crc16_ccitt,
    encode_command,
    parse_line,
)
from firmware_bridge.readers import ReaderHealth, TagRead, open_reader
from firmware_bridge.readers.base import Reader, ReaderSynced
from firmware_bridge.readers.serial import SerialReader
from firmware_bridge.sim.chips import COLLPOS_READINGS
from firmware_bridge.sim.mcu import EmulatedBoard

Item = TagRead | ReaderHealth
STACK = ["04A1B2C3D4E5F6", "04A1B2C3D4E5F7", "04112233445566"]  # two share cascade level 1


# ------------------------------------------------------------------ the firmware's line format


def test_firmware_lines_parse_on_the_host() -> None:
    assert proto.crc16(b"123456789") == crc16_ccitt(b"123456789") == 0x29B1
    line = proto.frame("N1", 0, 42, "+", ["04A1B2C3D4E5F6"])
    parsed = parse_line(line)
    assert parsed == Frame("N1", 0, 42, FrameOp.ADDED, ("04A1B2C3D4E5F6",))
    assert parse_line(proto.frame("N1", -1, 7, "HB", ["1234"])) == \
        Frame("N1", None, 7, FrameOp.HEARTBEAT, ("1234",))
    assert parse_line(proto.frame("N1", 3, 8, "INV", [])) == Frame("N1", 3, 8, FrameOp.INVENTORY)


def test_firmware_reads_the_hosts_commands() -> None:
    assert proto.parse_command(encode_command(CommandOp.INVENTORY, ("2",))) == ("INV", ["2"])
    assert proto.parse_command(encode_command(CommandOp.RATE, ("50",))) == ("RATE", ["50"])
    assert proto.parse_command(encode_command(CommandOp.PING, ("x",))) == ("PING", ["x"])
    assert proto.parse_command(encode_command(CommandOp.IDENT)) == ("IDENT", [])
    damaged = bytearray(encode_command(CommandOp.PING, ("x",)))
    damaged[2] ^= 1
    assert proto.parse_command(bytes(damaged)) == "crc_error"
    assert proto.parse_command(encode_command(CommandOp.RATE, ("5",))) == "malformed"
    assert proto.parse_command(b"INV*1234") == "noise"
    assert proto.parse_command(b"#INV") == "truncated"
    splitter = proto.LineSplitter()
    assert splitter.feed(b"#IN") == []
    assert splitter.feed(b"V*XXXX\r\n\r\n#PI") == [b"#INV*XXXX\r"]


def test_crc_a_check_value() -> None:
    # ISO/IEC 14443-3 annex B: CRC_A of 0x00 0x00 is 0x1EA0 (sent A0 1E)
    assert crc_a(b"\x00\x00") == b"\xa0\x1e"
    assert crc_a(bytes((0x50, 0x00))) == b"\x57\xcd"


# ------------------------------------------------------------------ a whole board


class Running:
    def __init__(self, board: Board, emulated: EmulatedBoard, reader: Reader,
                 watcher: Watcher) -> None:
        self.board = board
        self.emulated = emulated
        self.reader = reader
        self.watcher = watcher

    async def rounds(self, count: int) -> None:
        """Wait until the firmware polled every antenna ``count`` more times."""
        app = self.emulated.app
        target = app.rounds + count
        async with asyncio.timeout(30):
            while app.rounds < target:
                assert self.emulated.error is None, self.emulated.error
                await asyncio.sleep(0.01)

    async def until(self, predicate: Callable[[list[Item]], bool]) -> None:
        await self.watcher.until(predicate, timeout=30)

    def reads(self) -> list[tuple[str, str, str]]:
        return self.watcher.reads()


def read(antenna: int, uid: str, action: str) -> Callable[[list[Item]], bool]:
    def found(items: list[Item]) -> bool:
        return any(isinstance(i, TagRead) and (i.antenna, i.uid, i.action)
                   == (str(antenna), uid, action) for i in items)
    return found


def read_times(antenna: int, uid: str, action: str, times: int
               ) -> Callable[[list[Item]], bool]:
    def found(items: list[Item]) -> bool:
        return sum(isinstance(i, TagRead) and (i.antenna, i.uid, i.action)
                   == (str(antenna), uid, action) for i in items) >= times
    return found


@pytest.fixture(params=COLLPOS_READINGS)
async def running(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Running]:
    board = Board(collpos=request.param)
    board.field.place(0, "04C0FFEE000001")  # lies there at power-up: in the boot inventory
    emulated = EmulatedBoard(board.settings, board.wiring, link=tmp_path / "ttyACM0").start()
    assert emulated.error is None, emulated.error
    reader = open_reader("bidbox", f"serial://{tmp_path / 'ttyACM0'}", kind="inventory",
                         reader_id="BB1")
    await reader.__aenter__()
    watcher = Watcher(reader)
    try:
        # the boot inventory has arrived: the link is up both ways
        await watcher.until(read(0, "04C0FFEE000001", "present"), timeout=30)
        yield Running(board, emulated, reader, watcher)
    finally:
        await reader.__aexit__(None, None, None)
        emulated.stop()
    assert emulated.error is None, emulated.error


async def test_boot_inventory_and_ident(running: Running) -> None:
    await running.until(read(0, "04C0FFEE000001", "present"))
    assert isinstance(running.reader, SerialReader)
    running.reader.send(Command(CommandOp.IDENT))
    async with asyncio.timeout(30):
        while running.reader.session.ident is None:
            await asyncio.sleep(0.01)
    assert running.reader.session.ident == ("BTR-PICO", "btr-1.1", "E6614104032B5A2C", "6")
    assert not running.watcher.health("malformed") and not running.watcher.health("crc_error")


async def test_cards_laid_lifted_and_stacked_on_every_kind_of_antenna(running: Running) -> None:
    field = running.board.field
    await running.until(read(0, "04C0FFEE000001", "present"))
    for antenna in range(6):
        field.place(antenna, f"04AA00000000{antenna:02X}")
    for antenna in range(6):
        await running.until(read(antenna, f"04AA00000000{antenna:02X}", "present"))
    # a stack: three cards on one MFRC522 antenna (two share their first cascade level), two
    # on each PN532 antenna and on the multiplexed antenna 3
    for uid in STACK:
        field.place(1, uid)
    field.place(3, "DEADBEEF")
    field.place(4, "04BB000000000A")
    field.place(5, "CAFE0001")
    for antenna, uid in [(1, u) for u in STACK] + [(3, "DEADBEEF"), (4, "04BB000000000A"),
                                                  (5, "CAFE0001")]:
        await running.until(read(antenna, uid, "present"))
    # lifted: one from the stack, the card under the mux's other channel, one from a PN532
    field.lift(1, STACK[1])
    field.lift(2, "04AA0000000002")
    field.lift(5, "CAFE0001")
    for antenna, uid in [(1, STACK[1]), (2, "04AA0000000002"), (5, "CAFE0001")]:
        await running.until(read(antenna, uid, "removed"))
    await running.rounds(5)
    reads = running.reads()
    # each change exactly once; nothing else came and went
    assert len(reads) == len(set(reads))
    removed = {(a, u) for a, u, act in reads if act == "removed"}
    assert removed == {("1", STACK[1]), ("2", "04AA0000000002"), ("5", "CAFE0001")}
    app = running.emulated.app
    lying = {a.index: sorted(a.present) for a in app.scanner.antennas}
    assert lying[1] == sorted([STACK[0], STACK[2], "04AA0000000001"])
    assert lying[3] == sorted(["04AA0000000003", "DEADBEEF"])
    assert not running.watcher.health("gap") and not running.watcher.health("crc_error")


async def test_a_tag_flickering_at_the_edge_of_the_field_is_one_card(running: Running) -> None:
    field = running.board.field
    field.place(2, "04EDGE00000001".replace("EDGE", "ED6E"), flicker=True)
    await running.until(read(2, "04ED6E00000001", "present"))
    await running.rounds(12)  # it answered one round in two all along
    field.place(2, "04000000000077")  # a marker after the flickering
    await running.until(read(2, "04000000000077", "present"))
    assert [r for r in running.reads() if r[1] == "04ED6E00000001"] == \
        [("2", "04ED6E00000001", "present")]
    # taken away for good: removed once
    field.lift(2, "04ED6E00000001")
    await running.until(read(2, "04ED6E00000001", "removed"))


async def test_an_antenna_unplugged_is_reported_and_repaired(running: Running) -> None:
    board = running.board
    board.field.place(4, "04DD000000000D")
    board.field.place(0, "04DD000000000E")
    await running.until(read(4, "04DD000000000D", "present"))
    await running.until(read(0, "04DD000000000E", "present"))
    board.pn532_i2c.connected = False       # the PN532's cable pulled out
    board.mfrc[0].connected = False         # and the first MFRC522's
    # both reported (on a loaded machine a healthy chip's slow round may be reported too:
    # the emulated chips run in Python, so only the two expected lines are required)
    await running.until(lambda items: {"ANT4 no_answer pn532", "ANT0 no_answer mfrc522"} <= {
        h.detail for h in running.watcher.health("firmware_error")})
    # meanwhile the card on antenna 4 is taken away; the one on antenna 0 stays
    board.field.lift(4, "04DD000000000D")
    await running.rounds(3)
    assert read(4, "04DD000000000D", "removed")(running.watcher.items) is False
    board.pn532_i2c.connected = True
    board.mfrc[0].connected = True
    await running.until(read(4, "04DD000000000D", "removed"))
    await running.until(has_health("resync"))
    await running.rounds(3)
    assert read(0, "04DD000000000E", "removed")(running.watcher.items) is False


async def test_rate_and_ping_are_answered(running: Running) -> None:
    assert isinstance(running.reader, SerialReader)
    running.reader.send(Command(CommandOp.RATE, ("40",)))
    running.reader.send(Command(CommandOp.PING, ("tok",)))
    async with asyncio.timeout(30):
        while running.emulated.app.rate_ms != 40:
            await asyncio.sleep(0.01)
    # a damaged command is answered with ERR BADCMD, which the host counts
    running.reader._writer.write(b"#PING x*0000\r\n")  # type: ignore[union-attr]
    await running.until(has_health("firmware_error"))
    assert running.watcher.health("firmware_error")[0].detail == "BADCMD crc_error"


def test_protocol_error_type_is_a_value() -> None:
    assert isinstance(parse_line(b"$N1 0 1 + 04*0000"), ProtocolError)


async def test_every_card_laid_lifted_and_laid_again_on_every_kind_of_antenna(
        running: Running) -> None:
    field = running.board.field
    cards = {antenna: [f"04C{antenna}00000000{n:02X}" for n in range(3)]
             for antenna in range(6)}
    for time in (1, 2):   # laid, lifted, laid again, lifted again
        for antenna, uids in cards.items():
            for uid in uids:
                field.place(antenna, uid)
        for antenna, uids in cards.items():
            for uid in uids:
                await running.until(read_times(antenna, uid, "present", time))
        for antenna, uids in cards.items():
            for uid in uids:
                field.lift(antenna, uid)
        for antenna, uids in cards.items():
            for uid in uids:
                await running.until(read_times(antenna, uid, "removed", time))
    reads = running.reads()
    for antenna, uids in cards.items():
        for uid in uids:
            assert [r[2] for r in reads if r[:2] == (str(antenna), uid)] == \
                ["present", "removed", "present", "removed"]
    assert not running.watcher.health("firmware_error")


# ------------------------------------------------------------------ REPLAY: the host was away


def test_firmware_replay_command_and_dated_lines() -> None:
    assert proto.parse_command(encode_command(CommandOp.REPLAY, ("7",))) == ("REPLAY", ["7"])
    assert proto.parse_command(encode_command(CommandOp.REPLAY, ("65535", "1764400000123"))) \
        == ("REPLAY", ["65535", "1764400000123"])
    for bad in (("65536",), ("7", "x"), ("7", "1", "2"), ("7", "1234567890123456"), ()):
        assert proto.parse_command(encode_command(CommandOp.REPLAY, bad)) == "malformed"
    # a replayed line carries the time it was first sent; the host reads it as the hardware's
    assert parse_line(proto.frame("N1", 0, 42, "+", ["04A1B2C3D4E5F6"], 1764400000123)) == \
        Frame("N1", 0, 42, FrameOp.ADDED, ("04A1B2C3D4E5F6",), 1764400000123)


class _FakeTicks:
    """MicroPython's ticks for a board driven by hand: 10 ms a reading."""

    def __init__(self) -> None:
        self.now = 0

    def ticks_ms(self) -> int:
        self.now += 10
        return self.now

    def ticks_diff(self, later: int, earlier: int) -> int:
        return later - earlier

    def sleep_ms(self, ms: int) -> None:
        self.now += ms


class _Wire(Link):
    def __init__(self) -> None:
        self.out = bytearray()
        self.incoming = b""

    def write(self, data: bytes) -> None:
        self.out += data

    def read(self) -> bytes:
        data, self.incoming = self.incoming, b""
        return data


def test_the_lines_kept_for_replay_are_bounded_in_lines_and_bytes() -> None:
    """A small board's heap: the ring of lines never holds more than REPLAY_LINES lines nor
    much more than REPLAY_BYTES bytes, whatever it sends; a line too old is answered
    ``ERR REPLAY gone``, a kept one is sent again as first sent."""
    wire = _Wire()
    app = App("RB1", Scanner([], 3, 16), wire, Clock(_FakeTicks()))
    app.boot()
    for n in range(3 * app_module.REPLAY_LINES):
        # up to 60 tags a line
        app.send(n % 6, "INV", [f"04{n:04X}{k:06X}00" for k in range(n % 61)])
        assert len(app.history) <= app_module.REPLAY_LINES
        assert app.history_bytes <= app_module.REPLAY_BYTES + app_module.LINE_COST + 61 * 15
    kept = sum(app_module.LINE_COST + len(op) + sum(len(a) + 1 for a in args)
               for _, _, _, op, args in app.history)
    assert kept == app.history_bytes
    oldest, newest = app.history[0][0], app.history[-1][0]
    wire.out.clear()
    wire.incoming = encode_command(CommandOp.REPLAY, (str(oldest - 1), "1764400000000"))
    app.commands()
    frames = [f for f in LineDecoder().feed(bytes(wire.out)) if isinstance(f, Frame)]
    assert [(f.op, f.args) for f in frames] == [(FrameOp.ERROR, ("REPLAY", "gone"))]
    wire.out.clear()
    wire.incoming = encode_command(CommandOp.REPLAY, (str(newest - 2),))
    app.commands()
    frames = [f for f in LineDecoder().feed(bytes(wire.out)) if isinstance(f, Frame)]
    assert [f.seq for f in frames] == [newest - 2, newest - 1, newest, newest + 1]
    assert all(f.hw_time_ms is None for f in frames)   # no NOW_MS: undated
    assert frames[-2].args == tuple(app.history[-2][4])
    assert frames[-1].args == ("REPLAY", "gone")   # the answer to the first REPLAY is kept too


async def test_a_host_that_was_away_gets_what_happened_meanwhile_in_order(
        tmp_path: Path) -> None:
    """The bridge stopped and started again: its reader is opened anew with the spool's record
    (what lay on each antenna, the last line passed on). The firmware replays its lines from
    that one (``REPLAY SEQ NOW_MS``): what was laid and lifted meanwhile comes once, in the
    order it happened, dated when it happened; the inventory after it repairs nothing."""
    board = Board("RB2")
    board.field.place(0, "04C0FFEE000001")
    emulated = EmulatedBoard(board.settings, board.wiring, link=tmp_path / "ttyACM0").start()
    assert emulated.error is None, emulated.error
    url = f"serial://{tmp_path / 'ttyACM0'}"
    first = open_reader("bidbox", url, kind="inventory", reader_id="RB2")
    await first.__aenter__()
    watcher = Watcher(first)
    try:
        await watcher.until(read(0, "04C0FFEE000001", "present"), timeout=30)
        board.field.place(1, "04AA000000000A")
        await watcher.until(read(1, "04AA000000000A", "present"), timeout=30)
    finally:
        await first.__aexit__(None, None, None)   # the bridge stops
    last = [i for i in watcher.items if isinstance(i, TagRead)][-1]
    lying = {"0": {"04C0FFEE000001"}, "1": {"04AA000000000A"}}
    running = Running(board, emulated, first, watcher)
    # meanwhile at the table, one after the other
    moves = [(2, "04BB000000000B", "present"), (1, "04AA000000000A", "removed"),
             (4, "04CC000000000C", "present"), (0, "04C0FFEE000001", "removed")]
    when: list[float] = []
    for antenna, uid, action in moves:
        when.append(wall_clock())
        if action == "present":
            board.field.place(antenna, uid)
        else:
            board.field.lift(antenna, uid)
        await running.rounds(6)   # a removal is reported after 3 rounds without the tag
    await asyncio.sleep(0.3)
    second = open_reader("bidbox", url, kind="inventory", reader_id="RB2")
    second.restore_lying(lying)
    second.restore_mark(last.line)
    second.report_synced = True   # as the bridge has it
    await second.__aenter__()
    again = Watcher(second)
    try:
        await again.until(lambda items: any(isinstance(i, ReaderSynced) for i in items),
                          timeout=30)
        await running.rounds(3)
    finally:
        await second.__aexit__(None, None, None)
        emulated.stop()
    assert emulated.error is None, emulated.error
    reads = [i for i in again.items if isinstance(i, TagRead)]
    assert [(r.antenna, r.uid, r.action) for r in reads] == \
        [(str(a), u, action) for a, u, action in moves]
    # dated when they happened (each within the rounds after its move), not when replayed
    for r, moved in zip(reads, when, strict=True):
        assert moved - 0.2 <= r.ts <= moved + 1.5, (r, moved)
    assert not again.health("resync")


class _BitingWatchdog:
    """A watchdog on the fake ticks: records the longest stretch it went unfed."""

    def __init__(self, ticks: _FakeTicks, timeout: int) -> None:
        self.ticks = ticks
        self.timeout = timeout
        self.fed_at = ticks.now
        self.longest = 0

    def feed(self) -> None:
        self.longest = max(self.longest, self.ticks.now - self.fed_at)
        self.fed_at = self.ticks.now


@pytest.mark.parametrize("rate_ms", [10, 100, 4000, 10000])
def test_the_watchdog_is_armed_by_the_host_and_fed_at_any_scan_period(rate_ms: int) -> None:
    """Nothing arms the watchdog until a host speaks the protocol (mpremote does not); then
    it is fed every round and while the loop waits, so no accepted scan period starves it
    (RATE takes up to 10 s, the watchdog bites at 8)."""
    ticks = _FakeTicks()
    wire = _Wire()
    armed: list[_BitingWatchdog] = []

    def arm() -> _BitingWatchdog:
        armed.append(_BitingWatchdog(ticks, 8000))
        return armed[-1]

    class ThreeRounds(App):
        def round(self) -> None:
            super().round()
            self.running = self.rounds < 3

    app = ThreeRounds("RB1", Scanner([], 3, 16), wire, Clock(ticks), rate_ms=rate_ms,
                      arm_watchdog=arm)
    wire.incoming = b"\x03\x03\x01raw REPL noise\r\n"   # mpremote's Ctrl-C, Ctrl-A
    app.commands()
    assert app.watchdog is None and not armed
    wire.incoming = encode_command(CommandOp.PING, ("hello",))
    app.commands()
    assert len(armed) == 1 and app.watchdog is armed[0]
    app.run()
    assert app.rounds == 3
    assert 0 < armed[0].longest < armed[0].timeout
    assert armed[0].longest <= 50   # fed every few ms while waiting, whatever the period
