"""``bridge-table selftest`` (firmware_bridge/selftest.py) with scripted technicians: on the
simulated table (virtual firmwares on ptys, read through the real serial path) and on a board of
emulated chips running the reader firmware (tests/mcuboard.py); and the command itself on bad
input and Ctrl-C."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from mcuboard import Board

from firmware_bridge.cli_selftest import main
from firmware_bridge.config import load_config
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.selftest import (
    FieldTechnician,
    SelfTest,
    Settings,
    SimTechnician,
    Spot,
    write_report,
)
from firmware_bridge.sim.mcu import EmulatedBoard
from firmware_bridge.sim.table import SimTable

ROOT = Path(__file__).resolve().parent.parent
SIM = EXAMPLES / "sim.toml"
QUICK = Settings(repeats=2, timeout=5.0, hold=0.2, settle=0.5, press_timeout=2.0)
SIM_READERS = {name: name for name in ("north", "east", "south", "west", "bidbox", "board")}


class HidingTechnician(SimTechnician):
    """Of two cards laid together, only the first is seen by the reader (the second lies in
    the first's shadow), or, with ``collide``, the reader reports a collision instead (and,
    with ``first_read``, after reading the first)."""

    def __init__(self, table: SimTable, readers: dict[str, str], *, collide: bool,
                 first_read: bool = False) -> None:
        super().__init__(table, readers)
        self.collide = collide
        self.first_read = first_read

    async def lay(self, spot: Spot, count: int) -> None:
        if count == 1 or not self.collide or self.first_read:
            await super().lay(spot, 1)
        if count == 2 and self.collide:
            self._firmware(spot).error(f"ANT{spot.antenna}", "collision_position_unknown")


@pytest.mark.slow
async def test_the_simulated_table_is_reported_per_antenna(tmp_path: Path) -> None:
    config = load_config(SIM)
    async with SimTable.from_config(SIM) as table:
        tech = SimTechnician(table, SIM_READERS)
        report = await SelfTest(config, tech, settings=QUICK).run()
    assert [(a.reader, a.antenna) for a in report.antennas] == [
        ("north", "0"), ("east", "0"), ("south", "0"), ("west", "0"), ("bidbox", "0"),
        ("bidbox", "1"), ("bidbox", "2"), ("bidbox", "3"), ("board", "0")]
    for a in report.antennas:
        assert (a.laid, a.read, a.dropouts) == (2, 2, 0), a
        assert len(a.read_ms) == 2 and all(t >= 0 for t in a.read_ms)
        if a.reader == "board":   # taps: nothing stays, no pile
            assert a.two_cards == "not tried" and a.lifted == 0
            continue
        assert a.removal_seen == a.lifted == 2
        # whatever the simulated readers do with two cards, the verdict says what they did
        if a.two_cards.startswith("both read"):
            assert "pile-capable" in a.verdict
        else:
            assert a.two_cards.endswith("(one card at a time)")
            assert a.verdict == "trusted: one card at a time only"
    assert [c.what for c in report.buttons] == ["button director (BCM 5)", "button claim (BCM 6)",
                                                "button undo (BCM 13)", "button next (BCM 19)"]
    assert all(c.ok for c in report.buttons + report.leds + report.display)
    assert len(report.leds) == 8 and not report.interrupted and not report.problems
    text, data = write_report(report, tmp_path / "report")
    saved = json.loads(data.read_text())
    assert saved["table"] == "1" and len(saved["antennas"]) == 9
    assert saved["antennas"][0]["misses"] == 0
    assert "What this table can be trusted to read" in text.read_text()


@pytest.mark.parametrize(("collide", "first_read", "two_cards"), [
    (False, False, "one read, the other not seen (one card at a time)"),
    (True, False, "a collision: ANT0 collision_position_unknown (one card at a time)"),
    (True, True, "one read, then a collision: ANT0 collision_position_unknown "
                 "(one card at a time)")])
async def test_an_antenna_for_one_card_at_a_time_is_reported_as_such(
        collide: bool, first_read: bool, two_cards: str) -> None:
    config = load_config(SIM)
    async with SimTable.from_config(SIM) as table:
        tech = HidingTechnician(table, SIM_READERS, collide=collide, first_read=first_read)
        report = await SelfTest(config, tech, settings=QUICK, readers=["north"]).run()
    [north] = report.antennas
    assert north.verdict == "trusted: one card at a time only"
    assert north.two_cards == two_cards
    if collide:
        assert any("collision_position_unknown" in e for e in north.errors)
    zone = config.readers[0].antennas["0"].zone   # the play spot's zone in sim.toml
    assert f"one card at a time (never a pile): N {zone} (north/0)" in report.text()


async def test_a_dead_antenna_and_a_silent_button_fail(tmp_path: Path) -> None:
    config = load_config(SIM)

    class Clumsy(SimTechnician):
        async def lay(self, spot: Spot, count: int) -> None:
            if spot.reader != "east":
                await super().lay(spot, count)

        async def press(self, label: str, button: object) -> None:
            if label != "undo":
                await super().press(label, button)

    async with SimTable.from_config(SIM) as table:
        settings = Settings(repeats=1, timeout=0.5, hold=0.1, settle=0.3, press_timeout=0.5)
        report = await SelfTest(config, Clumsy(table, SIM_READERS), settings=settings,
                                readers=["north", "east"]).run()
    east = report.antennas[1]
    assert (east.laid, east.read, east.verdict) == (1, 0, "NOT WORKING: no card read")
    assert report.antennas[0].read == 1
    assert [c.ok for c in report.buttons] == [True, True, False, True]
    assert "FAIL button undo (BCM 13): no press arrived" in report.text()


def _board_config(tmp_path: Path, link: Path) -> Path:
    spots = {0: ("tray", "N"), 1: ("tray", "E"), 2: ("tray", "S"), 3: ("tray", "W"),
             4: ("bid", "N"), 5: ("bid", "E")}
    antennas = ", ".join(f'"{a}" = {{ zone = "{z}", seat = "{s}" }}' for a, (z, s)
                         in spots.items())
    path = tmp_path / "board.toml"
    path.write_text(f"""
[table]
id = "7"
[broker]
url = "mqtt://127.0.0.1:1883"
[[readers]]
name = "pico"
url = "serial://{link}"
kind = "inventory"
antennas = {{ {antennas} }}
[gpio]
factory = "mock"
[gpio.seats.N]
rgb_led = [17, 27, 22]
undo = 13
[display]
type = "none"
""")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("collpos", ["nxp", "arduino"])
async def test_a_board_of_emulated_chips(tmp_path: Path, collpos: str) -> None:
    board = Board("PI1", collpos=collpos)
    link = tmp_path / "ttyACM0"
    emulated = EmulatedBoard(board.settings, board.wiring, link=link).start()
    try:
        config = load_config(_board_config(tmp_path, link))
        tech = FieldTechnician(board.field, {("pico", str(a)): a for a in range(6)})
        report = await SelfTest(config, tech, settings=QUICK).run()
    finally:
        emulated.stop()
    assert emulated.error is None
    assert len(report.antennas) == 6
    for a in report.antennas:
        # MFRC522s and PN532s alike resolve two tags in the field
        assert (a.read, a.removal_seen, a.two_cards) == (
            2, 2, "both read (a pile-capable antenna)"), a
    assert [(c.what, c.ok) for c in report.buttons] == [("button N undo (BCM 13)", True)]
    assert [c.what for c in report.leds] == ["N RGB LED green", "N RGB LED red"]
    assert all(c.ok for c in report.leds) and report.display == []


# ---------------------------------------------------------------------------------- the command


def test_bad_configs_end_with_a_message(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                        ) -> None:
    assert main(["--config", str(tmp_path / "missing.toml")]) == 2
    assert "missing.toml" in capsys.readouterr().err
    broken = tmp_path / "broken.toml"
    broken.write_text("[table\nid = ")
    assert main(["--config", str(broken)]) == 2
    assert "broken.toml" in capsys.readouterr().err
    board = _board_config(tmp_path, tmp_path / "tty")
    assert main(["--config", str(board), "--scripted"]) == 2
    assert "--scripted needs a simulated table" in capsys.readouterr().err
    assert main(["--config", str(SIM), "--reader", "nowhere"]) == 2
    assert "no reader nowhere" in capsys.readouterr().err
    assert main(["--config", str(SIM), "--repeats", "0"]) == 2


@pytest.mark.slow
def test_the_command_on_the_simulated_table(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    prefix = tmp_path / "out" / "table1"
    assert main(["--config", str(SIM), "--scripted", "--repeats", "1", "--reader", "bidbox",
                 "--report", str(prefix)]) == 0
    out = capsys.readouterr().out
    assert "W bid      bidbox/3" in out
    data = json.loads((tmp_path / "out" / "table1.json").read_text())
    assert [a["antenna"] for a in data["antennas"]] == ["0", "1", "2", "3"]
    assert (tmp_path / "out" / "table1.txt").read_text().startswith("Self-test of table 1")


def test_ctrl_c_ends_cleanly_with_a_partial_report(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    process = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "selftest", "--config", str(SIM),
         "--report", str(tmp_path / "partial")], cwd=tmp_path, env=env,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    deadline = time.monotonic() + 60
    line = ""
    while "Lay one card" not in line and time.monotonic() < deadline:
        line = process.stdout.readline()
    assert "Lay one card on the N " in line and "(reader north, antenna 0)" in line
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 130, err
    assert "interrupted (Ctrl-C)" in err and "Traceback" not in err
    data = json.loads((tmp_path / "partial.json").read_text())
    assert data["interrupted"] is True
    assert "INTERRUPTED" in out


async def test_leds_and_buttons_it_cannot_drive_are_reported_not_tested(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Without gpiozero (a laptop's install) the table's buttons and LEDs are listed as not
    tested, with the reason, not as "none configured"."""
    config = load_config(SIM)
    test = SelfTest(config, SimTechnician(None, SIM_READERS), settings=QUICK)
    monkeypatch.setitem(sys.modules, "gpiozero", None)  # import gpiozero: ImportError
    await test._gpio()
    report = test.report
    assert [(c.what, c.ok) for c in report.buttons + report.leds] == \
        [("buttons", False), ("LEDs", False)]
    assert all("not tested" in c.detail and "gpiozero" in c.detail
               for c in report.buttons + report.leds)
