"""Line protocol: CRC, framing, parsing, stream decoding, host session (pure, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    MAX_LINE,
    SEQ_MODULO,
    SYNC_TOKEN,
    Anomaly,
    Command,
    CommandOp,
    Frame,
    FrameOp,
    HostSession,
    LineDecoder,
    Mark,
    ProtocolError,
    SendCommand,
    Synced,
    TagChange,
    crc16_ccitt,
    encode_command,
    encode_frame,
    parse_command,
    parse_line,
)

UID_A = "04A1B2C3D4E5F6"
UID_B = "04A1B2C3D4E5F7"
UID_C = "DEADBEEF"


def test_crc_check_value() -> None:
    # CRC-16/CCITT-FALSE catalogue check value.
    assert crc16_ccitt(b"123456789") == 0x29B1
    assert crc16_ccitt(b"") == 0xFFFF


def test_documented_example_line() -> None:
    # The example in docs/serial-protocol.md, byte for byte.
    line = encode_frame("N1", 0, 42, FrameOp.ADDED, ["04A1B2C3D4E5F6"])
    body = b"N1 0 42 + 04A1B2C3D4E5F6"
    assert line == b"$" + body + b"*%04X\r\n" % crc16_ccitt(body)
    frame = parse_line(line)
    assert frame == Frame("N1", 0, 42, FrameOp.ADDED, (UID_A,))


def test_lower_case_uids_are_normalised() -> None:
    body = b"N1 0 1 - 04a1b2c3d4e5f6"
    frame = parse_line(b"$" + body + b"*%04X" % crc16_ccitt(body))
    assert isinstance(frame, Frame) and frame.uid == UID_A


@pytest.mark.parametrize(
    ("raw", "kind"),
    [
        (b"hello", "noise"),
        (b"$N1 0 1 + 04A1B2C3", "truncated"),
        (b"$N1 0 1 + 04A1B2C3*12", "truncated"),
        (b"$N1 0 1 + 04A1B2C3*ZZZZ", "truncated"),
        (b"$N1 0 1 + 04A1B2C3*0000", "crc_error"),
        (b"$" + b"X" * (MAX_LINE + 10), "overlong"),
    ],
)
def test_damaged_lines(raw: bytes, kind: str) -> None:
    result = parse_line(raw)
    assert isinstance(result, ProtocolError)
    assert result.kind == kind


def _sealed(body: bytes) -> bytes:
    return b"$" + body + b"*%04X" % crc16_ccitt(body)


@pytest.mark.parametrize(
    "body",
    [
        b"N1 0 1 + NOTHEX00",          # UID not hex
        b"N1 0 1 + 04A1B2",            # UID too short
        b"N1 0 1 +",                   # UID missing
        b"N1 - 1 + 04A1B2C3",          # tag line without an antenna
        b"N1 16 1 + 04A1B2C3",         # antenna out of range
        b"N1 0 65536 + 04A1B2C3",      # seq out of range
        b"N1 0 x + 04A1B2C3",          # seq not a number
        b"N1 0 1 FOO",                 # unknown op
        b"N1  0 1 + 04A1B2C3",         # double space
        b"N1 0 1 INV 04A1B2C3 04A1B2C3",  # UID twice
        b"N1 - 1 HB",                  # heartbeat without uptime
        b"N1 - 0 BOOT 1.0",            # banner without reason
        b"N1 - 0 ID A B C x",          # antennas not a number
        b"N1 - 0 @12x HB 5",           # bad hardware time
        b"N1 0 1 + 04A1\x01B2C3",      # control byte inside
        b"N\xff1 0 1 + 04A1B2C3",      # non-ASCII
    ],
)
def test_malformed_frames_with_good_crc(body: bytes) -> None:
    result = parse_line(_sealed(body))
    assert isinstance(result, ProtocolError)
    assert result.kind == "malformed", result


def test_all_ops_round_trip() -> None:
    frames = [
        Frame("N1", 0, 0, FrameOp.ADDED, (UID_A,)),
        Frame("N1", 3, 7, FrameOp.REMOVED, (UID_C,)),
        Frame("N1", 1, 65535, FrameOp.INVENTORY, (UID_A, UID_B)),
        Frame("N1", 2, 9, FrameOp.INVENTORY, ()),
        Frame("box", None, 9, FrameOp.HEARTBEAT, ("123456",)),
        Frame("box", None, 0, FrameOp.BOOT, ("1.2.3", "watchdog")),
        Frame("box", None, 4, FrameOp.ERROR, ("ANT2", "open", "circuit")),
        Frame("box", None, 4, FrameOp.PONG, ("abc",)),
        Frame("box", None, 4, FrameOp.IDENT, ("RC522x4", "1.2.3", "SN01", "4")),
        Frame("box", None, 4, FrameOp.ACK, ("RATE", "50")),
        Frame("N1", 0, 5, FrameOp.ADDED, (UID_A,), hw_time_ms=1764400000123),
    ]
    for frame in frames:
        assert parse_line(encode_frame(frame.reader, frame.antenna, frame.seq, frame.op,
                                       frame.args, hw_time_ms=frame.hw_time_ms)) == frame


def test_encoder_refuses_unsendable_values() -> None:
    with pytest.raises(ValueError):
        encode_frame("N 1", 0, 1, FrameOp.ADDED, [UID_A])
    with pytest.raises(ValueError):
        encode_frame("N1", None, 1, FrameOp.ADDED, [UID_A])
    with pytest.raises(ValueError):
        encode_frame("N1", 0, SEQ_MODULO, FrameOp.ADDED, [UID_A])
    with pytest.raises(ValueError):
        encode_frame("N1", None, 1, FrameOp.ERROR, ["bad*text"])


def test_commands_round_trip_and_validate() -> None:
    for command in (Command(CommandOp.INVENTORY), Command(CommandOp.INVENTORY, ("3",)),
                    Command(CommandOp.RATE, ("50",)), Command(CommandOp.PING, ("t1",)),
                    Command(CommandOp.IDENT)):
        assert parse_command(encode_command(command.op, command.args)) == command
    for bad in (b"RATE 5", b"RATE", b"INV 99", b"PING", b"IDENT x", b"FLY"):
        result = parse_command(b"#" + bad + b"*%04X" % crc16_ccitt(bad))
        assert isinstance(result, ProtocolError) and result.kind == "malformed"


# ---------------------------------------------------------------- stream decoder


def test_decoder_any_chunking() -> None:
    stream = b"".join(encode_frame("N1", 0, i, FrameOp.ADDED, [UID_A]) for i in range(5))
    for size in (1, 2, 3, 7, 64):
        decoder = LineDecoder()
        out = []
        for i in range(0, len(stream), size):
            out += decoder.feed(stream[i:i + size])
        assert [f.seq for f in out if isinstance(f, Frame)] == list(range(5))
        assert not [e for e in out if isinstance(e, ProtocolError)]


def test_decoder_noise_before_frame_and_empty_lines() -> None:
    decoder = LineDecoder()
    good = encode_frame("N1", 0, 1, FrameOp.ADDED, [UID_A])
    out = decoder.feed(b"\r\n\x00\xff\xfegarbage" + good + b"\r\n")
    assert [type(x) for x in out] == [ProtocolError, Frame]
    assert isinstance(out[0], ProtocolError) and out[0].kind == "noise"


def test_decoder_reset_mid_line() -> None:
    decoder = LineDecoder()
    half = encode_frame("N1", 0, 8, FrameOp.ADDED, [UID_A])[:10]
    banner = encode_frame("N1", None, 0, FrameOp.BOOT, ["1.0", "watchdog"])
    out = decoder.feed(half + banner)
    assert isinstance(out[0], ProtocolError) and out[0].kind == "truncated"
    assert isinstance(out[1], Frame) and out[1].op is FrameOp.BOOT


def test_decoder_overlong_line_is_skipped_once() -> None:
    decoder = LineDecoder()
    out = []
    for _ in range(10):  # a stream of junk with no newline, in chunks
        out += decoder.feed(b"$" + b"A" * 500)
    out += decoder.feed(b"still junk\n" + encode_frame("N1", 0, 1, FrameOp.ADDED, [UID_A]))
    kinds = [x.kind if isinstance(x, ProtocolError) else "frame" for x in out]
    assert kinds == ["overlong", "frame"]


# ---------------------------------------------------------------- fuzzing


@settings(max_examples=200)
@given(st.binary(max_size=2 * MAX_LINE))
def test_parse_line_never_raises(data: bytes) -> None:
    result = parse_line(data)
    assert isinstance(result, Frame | ProtocolError)
    command = parse_command(data)
    assert isinstance(command, Command | ProtocolError)


@settings(max_examples=200)
@given(st.lists(st.binary(max_size=300), max_size=8))
def test_decoder_never_raises(chunks: list[bytes]) -> None:
    decoder = LineDecoder()
    for chunk in chunks:
        for item in decoder.feed(chunk):
            assert isinstance(item, Frame | ProtocolError)


uids = st.binary(min_size=4, max_size=10).map(lambda b: b.hex().upper())
reader_ids = st.from_regex(r"[A-Za-z0-9_.-]{1,16}", fullmatch=True)
frames = st.one_of(
    st.builds(Frame, reader_ids, st.integers(0, 15), st.integers(0, SEQ_MODULO - 1),
              st.sampled_from([FrameOp.ADDED, FrameOp.REMOVED]), uids.map(lambda u: (u,)),
              st.none() | st.integers(0, 2**45)),
    st.builds(Frame, reader_ids, st.integers(0, 15), st.integers(0, SEQ_MODULO - 1),
              st.just(FrameOp.INVENTORY),
              st.lists(uids, unique=True, max_size=20).map(tuple)),
    st.builds(Frame, reader_ids, st.none(), st.integers(0, SEQ_MODULO - 1),
              st.just(FrameOp.HEARTBEAT), st.integers(0, 2**32).map(lambda n: (str(n),))),
    st.builds(Frame, reader_ids, st.none(), st.integers(0, SEQ_MODULO - 1),
              st.just(FrameOp.ERROR),
              st.lists(st.from_regex(r"[A-Za-z0-9_.:/-]{1,10}", fullmatch=True),
                       min_size=1, max_size=4).map(tuple)),
)


@settings(max_examples=200)
@given(frames)
def test_valid_frames_round_trip(frame: Frame) -> None:
    line = encode_frame(frame.reader, frame.antenna, frame.seq, frame.op, frame.args,
                        hw_time_ms=frame.hw_time_ms)
    assert parse_line(line) == frame
    assert LineDecoder().feed(line) == [frame]


@settings(max_examples=200)
@given(frames, st.integers(min_value=0), st.integers(1, 255))
def test_any_single_byte_corruption_is_caught(frame: Frame, where: int, flip: int) -> None:
    line = bytearray(encode_frame(frame.reader, frame.antenna, frame.seq, frame.op, frame.args,
                                  hw_time_ms=frame.hw_time_ms))
    body_end = line.rindex(b"*") + 5  # corrupt anything before the CR LF
    i = where % body_end
    line[i] ^= flip
    results = LineDecoder().feed(bytes(line))
    # CRC-16 catches every single-byte error; a corrupted '$' or '\n' still gives no frame.
    assert all(isinstance(r, ProtocolError) for r in results)
    assert results


# ---------------------------------------------------------------- host session


def frame(seq: int, op: FrameOp, *args: str, antenna: int | None = 0) -> Frame:
    return Frame("N1", antenna if op in (FrameOp.ADDED, FrameOp.REMOVED, FrameOp.INVENTORY)
                 else None, seq, op, tuple(args))


def test_session_asks_inventory_on_link_up() -> None:
    session = HostSession()
    # then a PING whose PONG says the link has caught up (nothing to replay: no mark yet)
    assert session.link_up(0.0) == [SendCommand(Command(CommandOp.INVENTORY)),
                                    SendCommand(Command(CommandOp.PING, (SYNC_TOKEN,)))]


def test_session_adds_and_removes_once() -> None:
    session = HostSession()
    session.link_up(0.0)
    out = session.handle(frame(0, FrameOp.INVENTORY), 0.0)
    out += session.handle(frame(1, FrameOp.ADDED, UID_A), 0.0)
    out += session.handle(frame(2, FrameOp.ADDED, UID_A), 0.0)  # repeated: nothing new
    out += session.handle(frame(3, FrameOp.REMOVED, UID_A), 0.0)
    out += session.handle(frame(4, FrameOp.REMOVED, UID_B), 0.0)  # never seen: nothing
    assert out == [TagChange(0, UID_A, "present"), TagChange(0, UID_A, "removed")]


def test_session_gap_is_repaired_by_inventory() -> None:
    session = HostSession()
    session.link_up(0.0)
    session.handle(frame(0, FrameOp.INVENTORY, UID_A), 0.0)
    # Lines 1 (+B) and 2 (-A) are lost; line 3 is a heartbeat.
    out = session.handle(frame(3, FrameOp.HEARTBEAT, "10"), 5.0)
    assert Anomaly("gap", "expected seq 1, got 3: 2 line(s) lost") in out
    assert SendCommand(Command(CommandOp.INVENTORY)) in out
    out = session.handle(frame(4, FrameOp.INVENTORY, UID_B), 5.1)
    assert [o.kind for o in out if isinstance(o, Anomaly)] == ["resync"]
    assert [o for o in out if isinstance(o, TagChange)] == [
        TagChange(0, UID_A, "removed"), TagChange(0, UID_B, "present")]


def test_session_inventory_requests_are_rate_limited() -> None:
    session = HostSession()
    session.link_up(0.0)
    session.handle(frame(0, FrameOp.INVENTORY), 0.0)
    errors = [ProtocolError("crc_error", "x")] * 3
    sends = [o for e in errors for o in session.handle(e, 10.0) if isinstance(o, SendCommand)]
    assert len(sends) == 1
    later = session.handle(ProtocolError("noise", "x"), 12.0)
    assert SendCommand(Command(CommandOp.INVENTORY)) in later


def test_session_reset_and_wrapping_sequence() -> None:
    session = HostSession()
    session.link_up(0.0)
    session.handle(frame(65534, FrameOp.INVENTORY), 0.0)
    assert session.handle(frame(65535, FrameOp.HEARTBEAT, "1"), 0.0) == []
    assert session.handle(frame(0, FrameOp.HEARTBEAT, "2"), 0.0) == []  # wrapped, no gap
    out = session.handle(frame(0, FrameOp.BOOT, "1.0", "brownout"), 0.0)
    assert out[0] == Anomaly("reset", "reader booted: firmware 1.0, reason brownout")
    assert session.handle(frame(1, FrameOp.HEARTBEAT, "2"), 0.0) == []


def test_session_reports_other_reader_id() -> None:
    session = HostSession(expected_reader="N1")
    out = session.handle(Frame("E1", None, 0, FrameOp.HEARTBEAT, ("1",)), 0.0)
    assert out and isinstance(out[0], Anomaly) and out[0].kind == "reader_id"


@settings(max_examples=100)
@given(st.lists(st.tuples(st.integers(0, 2), st.sampled_from([UID_A, UID_B, UID_C]),
                          st.booleans(), st.booleans()), max_size=30))
def test_session_converges_to_truth_after_inventory(
        moves: list[tuple[int, str, bool, bool]]) -> None:
    """Whatever lines are lost, the state after a full inventory equals the reader's truth."""
    truth: dict[int, set[str]] = {a: set() for a in range(3)}
    session = HostSession()
    session.link_up(0.0)
    believed: dict[tuple[int, str], bool] = {}
    seq = 0
    for antenna, uid, add, lost in moves:
        (truth[antenna].add if add else truth[antenna].discard)(uid)
        if not lost:
            op = FrameOp.ADDED if add else FrameOp.REMOVED
            for out in session.handle(frame(seq, op, uid, antenna=antenna), 1.0):
                if isinstance(out, TagChange):
                    believed[(out.antenna, out.uid)] = out.action == "present"
        seq += 1
    for antenna in range(3):
        for out in session.handle(
                frame(seq, FrameOp.INVENTORY, *sorted(truth[antenna]), antenna=antenna), 2.0):
            if isinstance(out, TagChange):
                believed[(out.antenna, out.uid)] = out.action == "present"
        seq += 1
    for antenna in range(3):
        assert {u for (a, u), on in believed.items() if a == antenna and on} == truth[antenna]
        assert session.present.get(antenna, set()) == truth[antenna]


# ---------------------------------------------------------------- replay after a host restart


def restarted_session() -> HostSession:
    """A host that restarted: A lay on antenna 0, and line 7 (+A) was the last passed on."""
    session = HostSession()
    session.restore({"0": {UID_A}}, Mark(7, 0, "+", (UID_A,)))
    return session


def changes(out: Sequence[object]) -> list[tuple[str, str, int | None]]:
    return [(o.uid, o.action, None if o.line is None else o.line.seq)
            for o in out if isinstance(o, TagChange)]


def test_link_up_asks_for_the_lines_from_the_mark_then_an_inventory_then_a_pong() -> None:
    assert restarted_session().link_up(0.0) == [
        SendCommand(Command(CommandOp.REPLAY, ("7", "0"))),
        SendCommand(Command(CommandOp.INVENTORY)),
        SendCommand(Command(CommandOp.PING, (SYNC_TOKEN,)))]


def test_replayed_lines_come_in_order_once_and_the_inventory_repairs_nothing() -> None:
    session = restarted_session()
    session.link_up(0.0)
    out: list[object] = []
    # a live line sent before the firmware read REPLAY: it comes again in the replay
    out += session.handle(frame(10, FrameOp.ADDED, UID_C), 0.0)
    for seq, op, uid in ((7, FrameOp.ADDED, UID_A), (8, FrameOp.REMOVED, UID_A),
                         (9, FrameOp.ADDED, UID_B), (10, FrameOp.ADDED, UID_C)):
        out += session.handle(frame(seq, op, uid), 0.0)
    out += session.handle(frame(11, FrameOp.INVENTORY, UID_B, UID_C), 0.0)
    out += session.handle(frame(12, FrameOp.PONG, SYNC_TOKEN), 0.0)
    # line 7 was passed on before the restart: not again
    assert changes(out) == [(UID_A, "removed", 8), (UID_B, "present", 9),
                            (UID_C, "present", 10)]
    assert not [o for o in out if isinstance(o, Anomaly)]
    assert out[-1] == Synced(Mark(12, None, "PONG", (SYNC_TOKEN,)))
    assert session.mark == Mark(12, None, "PONG", (SYNC_TOKEN,))


def test_a_firmware_that_cannot_replay_is_repaired_by_the_inventory() -> None:
    session = restarted_session()
    session.link_up(0.0)
    out: list[object] = []
    out += session.handle(frame(20, FrameOp.ERROR, "REPLAY", "gone"), 0.0)
    out += session.handle(frame(21, FrameOp.ADDED, UID_C), 0.0)  # dropped: the INV has it
    out += session.handle(frame(22, FrameOp.INVENTORY, UID_B, UID_C), 0.0)
    out += session.handle(frame(23, FrameOp.PONG, SYNC_TOKEN), 0.0)
    assert sorted(changes(out)) == [(UID_A, "removed", 22), (UID_B, "present", 22),
                                    (UID_C, "present", 22)]
    assert [o.kind for o in out if isinstance(o, Anomaly)] == ["resync"]
    assert isinstance(out[-1], Synced)


def test_lines_of_another_history_are_not_replayed() -> None:
    """The reader rebooted while the host was away and its seq came round to the mark: the
    line there says something else, so nothing of that replay is taken."""
    session = restarted_session()
    session.link_up(0.0)
    out: list[object] = []
    out += session.handle(frame(7, FrameOp.ADDED, UID_B), 0.0)
    out += session.handle(frame(8, FrameOp.REMOVED, UID_B), 0.0)
    out += session.handle(frame(9, FrameOp.INVENTORY, UID_A), 0.0)
    assert changes(out) == []


def test_a_reader_that_boots_forgets_the_mark() -> None:
    session = restarted_session()
    session.link_up(0.0)
    out = session.handle(frame(0, FrameOp.BOOT, "fw-2", "power"), 0.0)
    assert SendCommand(Command(CommandOp.INVENTORY)) in out and session.mark is None
    out = session.handle(frame(1, FrameOp.INVENTORY, UID_A, UID_B), 0.0)
    assert changes(out) == [(UID_B, "present", 1)]
    assert session.link_up(1.0)[0] == SendCommand(Command(CommandOp.REPLAY, ("1", "1000")))


def test_a_mark_is_kept_as_text_and_read_back() -> None:
    for mark in (Mark(7, 0, "+", (UID_A,)), Mark(65535, 3, "INV", (UID_A, UID_B)),
                 Mark(9, 2, "INV", ()), Mark(12, None, "PONG", (SYNC_TOKEN,))):
        assert Mark.from_row(mark.row()) == mark
    for row in ((70000, "0", "+", UID_A), (1, "x", "+", UID_A), (1, "0", "??", "")):
        assert Mark.from_row(row) is None


def test_replay_command_round_trip() -> None:
    line = encode_command(CommandOp.REPLAY, ("65535",))
    assert parse_command(line) == Command(CommandOp.REPLAY, ("65535",))
    assert isinstance(parse_command(encode_command(CommandOp.REPLAY, ("65536",))),
                      ProtocolError)
    assert isinstance(parse_command(encode_command(CommandOp.REPLAY)), ProtocolError)
    # with the host's clock (ms since the epoch), for a firmware that has none
    assert parse_command(encode_command(CommandOp.REPLAY, ("7", "1764400000123"))) == \
        Command(CommandOp.REPLAY, ("7", "1764400000123"))
    for bad in (("7", "x"), ("7", "1", "2"), ("7", "1234567890123456")):
        assert isinstance(parse_command(encode_command(CommandOp.REPLAY, bad)), ProtocolError)
