"""Fuzzing the serial surface beyond tests/test_protocol.py, what a noisy line may bring:
sealed lines (a good CRC) of random tokens, streams of valid and damaged frames cut
anywhere, fed through the decoder into the host session. The decoder yields frames or
``ProtocolError``s, the session answers with tag changes, anomalies and commands; nothing
raises, and the session's view stays a set of well-formed UIDs per antenna."""

from __future__ import annotations

from fuzzing import fuzz_settings
from hypothesis import given
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    SEQ_MODULO,
    Anomaly,
    Command,
    Frame,
    FrameOp,
    HostSession,
    LineDecoder,
    ProtocolError,
    SendCommand,
    TagChange,
    crc16_ccitt,
    encode_command,
    encode_frame,
    normalise_uid,
    parse_command,
    parse_line,
)

SETTINGS = fuzz_settings(200)

TOKENS = [b"N1", b"E1", b"-", b"0", b"1", b"15", b"99", b"+", b"-", b"INV", b"HB", b"BOOT",
          b"ERR", b"PONG", b"ID", b"ACK", b"RATE", b"04A1B2C3D4E5F6", b"DEADBEEF", b"@123",
          b"@", b"1.0", b"power", b"65535", b"65536", b"-1", b"", b"x" * 40]


def sealed(body: bytes) -> bytes:
    return b"$" + body + b"*%04X" % crc16_ccitt(body) + b"\r\n"


bodies = st.lists(st.sampled_from(TOKENS) | st.binary(max_size=6), max_size=8).map(b" ".join)
uids = st.sampled_from(["04A1B2C3D4E5F6", "04A1B2C3D4E5F7", "DEADBEEF", "04C10002000000"])
valid_frames = st.builds(
    lambda ant, seq, op, uid, n: encode_frame("N1", ant if op in ("+", "-", "INV") else None,
                                              seq, FrameOp(op), (uid,) if op in ("+", "-")
                                              else (uid,) * min(n, 1) if op == "INV"
                                              else (str(n),)),
    st.integers(0, 3), st.integers(0, SEQ_MODULO - 1),
    st.sampled_from(["+", "-", "INV", "HB"]), uids, st.integers(0, 5)) | bodies.map(sealed)


@SETTINGS
@given(bodies)
def test_sealed_lines_of_random_tokens_parse_or_are_malformed(body: bytes) -> None:
    line = sealed(body)
    assert isinstance(parse_line(line.rstrip()), Frame | ProtocolError)
    assert isinstance(parse_command(line.rstrip()), Command | ProtocolError)


@SETTINGS
@given(st.lists(valid_frames | st.binary(max_size=40), max_size=30),
       st.lists(st.integers(1, 64), min_size=1, max_size=10), st.booleans())
def test_streams_through_the_decoder_and_the_session(parts: list[bytes], cuts: list[int],
                                                     commands: bool) -> None:
    stream = b"".join(parts)
    decoder = LineDecoder(commands=commands)
    session = HostSession(expected_reader="N1")
    session.link_up(0.0)
    now = 0.0
    at = 0
    i = 0
    while at < len(stream):  # the stream cut into chunks as a serial port delivers it
        size = cuts[i % len(cuts)]
        i += 1
        for item in decoder.feed(stream[at:at + size]):
            assert isinstance(item, Frame | Command | ProtocolError)
            now += 0.01
            for out in session.handle(item, now):
                assert isinstance(out, TagChange | Anomaly | SendCommand)
                if isinstance(out, SendCommand):
                    assert parse_command(encode_command(out.command.op,
                                                        out.command.args).rstrip())
        at += size
    for antenna, present in session.present.items():
        assert isinstance(antenna, int)
        assert all(normalise_uid(uid) == uid for uid in present)
    session.link_lost()
    assert session.link_up(now + 5)
