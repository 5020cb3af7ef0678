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
import sys
import time
from pathlib import Path

import pytest

from controller.cli import main as cli
from firmware_bridge.flash import FlashError, settings_for
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
        # has reset it, and comes back on the same port
        while not (fake_board / ".resets").exists():
            await asyncio.sleep(0.02)
        settings = json.loads((fake_board / "reader.json").read_text())
        booted.append(EmulatedBoard(settings, wiring, link=port,
                                    firmware=fake_board / "btreader").start())

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
        assert [c[2] for c in log] == ["exec", "fs", "fs", "fs", "reset"]
        assert log[-2][-1] == ":main.py"  # main.py goes last
        flashed = fake_board / "btreader"
        assert sorted(p.name for p in flashed.iterdir() if p.suffix == ".py") == \
            [f.name for f in firmware_files()]
        for f in firmware_files():
            assert (flashed / f.name).read_bytes() == f.read_bytes()
        assert (fake_board / "main.py").read_bytes() == MAIN_FILE.read_bytes()
        settings = json.loads((fake_board / "reader.json").read_text())
        assert settings["reader"] == "N1" and settings["link"] == {"type": "usb"}
        assert board.app.__class__.__module__.startswith("btreader_copy")
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
