"""``bridge-table firmware flash`` and then ``bridge-table tags enroll``, as a builder does it.

mpremote is replaced by tests/data/mcu/fake_mpremote.py (on PATH), which writes into a directory
standing for the board's filesystem. The board is then booted from *that* directory: the
flashed copy of the firmware, with the flashed reader.json, on emulated chips wired as
docs/hardware/wiring.md draws the Pico, and ``tags enroll`` reads a deck from it through a pty.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from controller.cli import main as cli
from firmware_bridge.flash import (
    FlashError,
    check_board,
    flash,
    mpremote_commands,
    settings_for,
)
from firmware_bridge.mcu import MAIN_FILE, firmware_files
from firmware_bridge.sim.chips import EmuMFRC522, EmuPN532, Field
from firmware_bridge.sim.mcu import EmulatedBoard, Wiring
from firmware_bridge.tags import CARD_ORDER, TagRegistry

FAKE = Path(__file__).parent / "data" / "mcu" / "fake_mpremote.py"


@pytest.fixture
def fake_board(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "mpremote"
    script.write_text(f"#!{sys.executable}\n" + FAKE.read_text())
    script.chmod(0o755)
    board = tmp_path / "board"
    board.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_BOARD", str(board))
    return board


def test_settings_follow_the_wiring_guide() -> None:
    one = settings_for("N1", 1)
    assert one["chips"] == [{"type": "mfrc522", "bus": "spi0", "cs": 17}]
    assert one["antennas"] == [{"chip": 0}] and "mux" not in one
    four = settings_for("BOX", 4)
    assert [c["cs"] for c in four["chips"]] == [17, 20, 21, 22]
    many = settings_for("BOX", 6)
    assert len(many["chips"]) == 1 and many["mux"] == {"pins": [10, 11, 12]}
    assert [a["channel"] for a in many["antennas"]] == list(range(6))
    pn = settings_for("W", 2, chip="pn532-i2c", board="esp32")
    assert pn["chips"] == [{"type": "pn532", "bus": "i2c0", "address": 0x24}]
    assert pn["buses"]["i2c0"]["sda"] == 21 and pn["mux"] == {"pins": [25]}
    # the UART link's pins, as wiring.md gives them: Pico GP0/GP1, ESP32 GPIO17/16
    assert settings_for("N1", 1, link="uart")["link"] == {
        "type": "uart", "id": 0, "baudrate": 115200, "tx": 0, "rx": 1}
    assert settings_for("N1", 1, link="uart", board="esp32")["link"]["tx"] == 17
    for reader, antennas in (("N 1", 1), ("N1", 0), ("N1", 17)):
        with pytest.raises(FlashError):
            settings_for(reader, antennas)


def test_flash_problems_are_messages(fake_board: Path, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["firmware", "flash", "--port", str(tmp_path / "nothing"), "--reader", "N1"]) == 1
    assert "no such port" in capsys.readouterr().err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    port = tmp_path / "ttyACM0"
    port.touch()
    assert cli(["firmware", "flash", "--port", str(port), "--reader", "N1",
                "--settings", str(bad)]) == 1
    assert "bad.json" in capsys.readouterr().err
    # the board's filesystem lacks the directory (the mkdir step fails): exit 1, no traceback
    assert cli(["firmware", "flash", "--port", str(port), "--reader", "N1",
                "--mpremote", f"{sys.executable} -c 'import sys; sys.exit(3)'"]) == 1
    assert "mpremote failed (exit 3)" in capsys.readouterr().err


async def test_flash_then_enroll_a_deck_from_the_flashed_board(
        fake_board: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = tmp_path / "ttyACM0"
    port.touch()  # the port exists; the fake mpremote writes to $FAKE_BOARD
    field = Field()
    wiring = Wiring()
    wiring.spi[(0, 17)] = EmuMFRC522(field, "tray")   # an MFRC522 on SPI0, chip select GP17
    booted: list[EmulatedBoard] = []

    async def power_on_after_reset() -> None:
        # the board boots from what was flashed (firmware copy, reader.json) once mpremote
        # has reset it after the copy, and comes back on the same port
        while not (fake_board / "main.py").exists() or \
                (fake_board / ".resets").read_text() != "2":
            await asyncio.sleep(0.02)
        settings = json.loads((fake_board / "reader.json").read_text())
        # (the flashed modules are MicroPython bytecode, which CPython cannot import: the
        # board runs their sources; test_mcu_micropython.py runs the bytecode itself)
        booted.append(EmulatedBoard(settings, wiring, link=port).start())

    power = asyncio.create_task(power_on_after_reset())
    code = await asyncio.to_thread(cli, ["firmware", "flash", "--port", str(port),
                                         "--reader", "N1", "--antennas", "1",
                                         "--rate-ms", "20"])
    await power
    board = booted[0]
    try:
        out = capsys.readouterr().out
        assert code == 0, out
        # the check after the reset: the board answered IDENT as the reader it was flashed as
        assert "reader N1 answers: BTR-PICO firmware btr-1.1, serial E6614104032B5A2C, " \
            "1 antenna(s)" in out
        log = [json.loads(line) for line in (tmp_path / "mpremote.log").read_text().splitlines()]
        # reset first (the watchdog off), then the copy, main.py last, then reset
        # reset first (the watchdog off), the bytecode, the stale sources removed, the
        # settings, main.py last, then reset
        assert [c[2] for c in log] == ["reset", "exec", "fs", "exec", "fs", "fs", "reset"]
        assert "os.remove" in log[3][3]
        assert log[-2][-1] == ":main.py"  # main.py goes last
        flashed = fake_board / "btreader"
        assert sorted(p.name for p in flashed.iterdir()) == \
            sorted(f.with_suffix(".mpy").name for f in firmware_files())
        for f in flashed.iterdir():
            assert f.read_bytes()[:2] == b"M\x06"   # MicroPython bytecode, mpy version 6
        assert (fake_board / "main.py").read_bytes() == MAIN_FILE.read_bytes()
        settings = json.loads((fake_board / "reader.json").read_text())
        assert settings["reader"] == "N1" and settings["link"] == {"type": "usb"}
        uids = [f"0477{i:02X}00ABCDEF" for i in range(52)]
        registry = tmp_path / "tags-club.toml"

        async def player() -> None:
            app = board.app
            for uid in uids:
                field.place("tray", uid)
                while uid not in app.scanner.antennas[0].present:
                    await asyncio.sleep(0.005)
                field.lift("tray", uid)
                while uid in app.scanner.antennas[0].present:
                    await asyncio.sleep(0.005)

        enrol = asyncio.create_task(asyncio.to_thread(cli, [
            "tags", "enroll", "--registry", str(registry), "--deck", "club-A",
            "--reader", f"serial://{port}?debounce=0"]))
        await asyncio.sleep(0)
        async with asyncio.timeout(120):
            await player()
            assert await enrol == 0
    finally:
        board.stop()
    assert board.error is None, board.error
    reg = TagRegistry.load([registry])
    assert [reg.uid_for_card("club-A", c) for c in CARD_ORDER] == uids


def test_a_board_that_does_not_answer_is_reported(fake_board: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    port = tmp_path / "ttyACM0"
    port.touch()   # a plain file: nothing ever answers on it
    assert cli(["firmware", "flash", "--port", str(port), "--reader", "N1",
                "--check-timeout", "1"]) == 1
    assert f"no answer from {port} within 1 s" in capsys.readouterr().err


def test_pn532_settings_boot_on_the_emulated_board(tmp_path: Path) -> None:
    """Every chip choice of ``firmware flash`` gives settings the firmware boots with."""
    for chip, antennas in (("pn532-i2c", 1), ("pn532-spi", 2), ("mfrc522", 6)):
        settings = settings_for("T1", antennas, chip=chip, link="uart")
        field = Field()
        wiring = Wiring()
        if chip == "pn532-i2c":
            wiring.i2c[(0, 0x24)] = EmuPN532(field, 0)
        else:
            emu = EmuPN532 if chip == "pn532-spi" else EmuMFRC522
            for spec in settings["chips"]:
                wiring.spi[(0, spec["cs"])] = emu(field, spec["cs"])
        with EmulatedBoard(settings, wiring) as board:
            app = board.app
            deadline = time.monotonic() + 30
            while app.rounds < 2 and board.error is None and time.monotonic() < deadline:
                time.sleep(0.01)
            assert board.error is None, board.error
            assert app.rounds >= 2
            assert len(app.scanner.antennas) == antennas
            assert all(a.fault == "" for a in app.scanner.antennas), chip


# ------------------------------------------------------------------ re-flashing a board in service


class EmulatedMpremote:
    """mpremote against an :class:`EmulatedBoard`, in this process, with a watchdog that
    bites: each call stops the reader's loop (mpremote's Ctrl-C) and spends ``seconds[op]``
    at the REPL, as on a real board. With the watchdog armed, nobody feeds it at the REPL:
    once the time there passes its timeout the board resets in the middle of the call,
    which fails (mpremote's "device disconnected"). ``reset`` boots the board again from its
    filesystem (``board_dir``: the flashed firmware and reader.json); a hard reset stops the
    watchdog."""

    SECONDS = {"reset": 0.5, "exec": 1.5, "fs": 3.0}

    def __init__(self, board_dir: Path, wiring: Wiring, port: Path) -> None:
        self.board_dir = board_dir
        self.wiring = wiring
        self.port = port
        self.board: EmulatedBoard | None = None
        self.at_repl = 0.0     # seconds at the REPL since the loop was stopped
        self.armed_ms = 0      # the watchdog's timeout while at the REPL (0: not armed)
        self.bitten = 0        # resets by the watchdog in the middle of a call

    def boot(self) -> EmulatedBoard:
        settings = json.loads((self.board_dir / "reader.json").read_text())
        self.board = EmulatedBoard(settings, self.wiring, link=self.port,
                                   firmware=self.board_dir / "btreader").start()
        self.at_repl, self.armed_ms = 0.0, 0
        return self.board

    def __call__(self, command: list[str]) -> int:
        op = command[3]   # mpremote connect PORT OP ...
        board = self.board
        if board is not None and board.app is not None and board.app.running:
            watchdog = board.app.watchdog
            self.armed_ms = watchdog.timeout if watchdog is not None else 0
            board.stop()   # Ctrl-C: the loop stops, the REPL answers
        self.at_repl += self.SECONDS[op]
        if self.armed_ms and self.at_repl * 1000 > self.armed_ms:
            self.bitten += 1
            self.boot()    # the watchdog resets the board in the middle of the call
            return 1
        if op == "exec":
            (self.board_dir / "btreader").mkdir(exist_ok=True)
        elif op == "fs":
            *sources, target = command[5:]
            for source in sources:
                name = target[1:] + Path(source).name if target.endswith("/") else target[1:]
                shutil.copyfile(source, self.board_dir / name)
        elif op == "reset":
            self.boot()
        return 0


def test_reflashing_a_board_in_service_never_races_its_watchdog(tmp_path: Path) -> None:
    """A board running the reader with its watchdog armed (a host has spoken to it) is
    flashed again, five times: each time the board is reset first, so the copy meets no
    watchdog; after each, the flash's own check (IDENT) arms it again."""
    mpremote, settings = _board_in_service(tmp_path)
    board_dir, port = mpremote.board_dir, mpremote.port
    try:
        for attempt in range(5):
            # in service: a host has spoken the protocol, so the watchdog is armed
            assert mpremote.board is not None
            _ask_ident(port)
            assert mpremote.board.app.watchdog is not None, attempt
            flash(dict(settings, rate_ms=20 + attempt), str(port), mpremote="mpremote",
                  run=mpremote, check_timeout=10)
            assert mpremote.bitten == 0, attempt
            assert json.loads((board_dir / "reader.json").read_text())["rate_ms"] == 20 + attempt
            assert mpremote.board.error is None
            assert mpremote.board.app.watchdog is not None   # the check armed it again
    finally:
        if mpremote.board is not None:
            mpremote.board.stop()


def test_without_the_reset_first_the_copy_races_the_watchdog(tmp_path: Path) -> None:
    """What the reset first prevents: the same copy on the board in service, without it,
    is cut by the watchdog (so the emulation above can fail)."""
    mpremote, settings = _board_in_service(tmp_path)
    port = mpremote.port
    try:
        _ask_ident(port)
        (tmp_path / "reader.json").write_text(json.dumps(settings))
        codes = [mpremote(c) for c in mpremote_commands(["mpremote"], str(port),
                                                        tmp_path / "reader.json")[1:]]
        assert 1 in codes and mpremote.bitten == 1
    finally:
        if mpremote.board is not None:
            mpremote.board.stop()


def _board_in_service(tmp_path: Path) -> tuple[EmulatedMpremote, dict[str, object]]:
    """A board flashed as reader N1 (one MFRC522), booted; its mpremote."""
    board_dir = tmp_path / "board"
    (board_dir / "btreader").mkdir(parents=True)
    for f in firmware_files():
        shutil.copyfile(f, board_dir / "btreader" / f.name)
    settings = settings_for("N1", 1, rate_ms=20)
    (board_dir / "reader.json").write_text(json.dumps(settings))
    wiring = Wiring()
    wiring.spi[(0, 17)] = EmuMFRC522(Field(), "tray")
    mpremote = EmulatedMpremote(board_dir, wiring, tmp_path / "ttyACM0")
    mpremote.boot()
    return mpremote, settings


def _ask_ident(port: Path) -> None:
    """A host speaks the protocol to the board (the bridge would): IDENT, until it answers."""
    check_board(str(port), "N1", 1, timeout=10)


def test_a_scan_period_the_watchdog_cannot_serve_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(["firmware", "settings", "--reader", "N1", "--rate-ms", "5000"]) == 1
    assert "scan period 5000 ms: 10 to 4000 (the 8000 ms watchdog must see two rounds)" in \
        capsys.readouterr().err
    assert cli(["firmware", "settings", "--reader", "N1", "--rate-ms", "4000"]) == 0
    # the defaults: docs/sensing.md's 100 ms, one tag an antenna
    assert cli(["firmware", "settings", "--reader", "N1"]) == 0
    written = json.loads(capsys.readouterr().out.split("\n}\n")[-2] + "\n}")
    assert (written["rate_ms"], written["limit"], written["watchdog_ms"]) == (100, 1, 8000)
    ready = tmp_path / "reader.json"
    ready.write_text(json.dumps(dict(settings_for("N1", 1), rate_ms=9000)))
    port = tmp_path / "ttyACM0"
    port.touch()
    assert cli(["firmware", "flash", "--port", str(port), "--reader", "N1",
                "--settings", str(ready), "--dry-run"]) == 1
    assert "reader.json: scan period 9000 ms" in capsys.readouterr().err
    assert cli(["firmware", "settings", "--reader", "N1", "--tag-limit", "0"]) == 1
    assert "tag limit 0" in capsys.readouterr().err
