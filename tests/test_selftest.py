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
from dataclasses import replace
from pathlib import Path

import pytest
from mcuboard import Board

from firmware_bridge.cli_selftest import main
from firmware_bridge.config import load_config
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.selftest import (
    FAILING,
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
    # the rows and dummy's area: a card in each, read by no antenna
    assert [c.what for c in report.silent] == [
        f"{seat} {row} row" for seat in "NESW" for row in ("trick", "call")] + ["dummy's area"]
    assert all(c.ok for c in report.silent)
    # the firmware's own counters, asked for through the serial protocol (STAT)
    for a in report.antennas:
        assert a.rounds is not None and a.rounds > 0 and a.missed_rounds == 0, a
        assert a.answered_rounds is not None and a.answered_rounds >= a.read, a
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
    # the two-card step's own collision is what the step is there to see, not an error
    assert north.errors == [] and north.advice == ""
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


class EdgeTechnician(FieldTechnician):
    """Lays the cards of ``weak`` antennas at the edge of their field: each tag answers one
    round in two (``firmware_bridge.sim.chips.Tag.flicker``)."""

    def __init__(self, chip_field: object, keys: dict[tuple[str, str], object],
                 weak: set[str]) -> None:
        super().__init__(chip_field, keys)
        self.weak = weak

    def _place(self, spot: Spot, uid: str) -> None:
        self.field.place(self.keys[(spot.reader, spot.antenna)], uid,
                         flicker=spot.antenna in self.weak)


@pytest.mark.slow
@pytest.mark.parametrize("collpos", ["nxp", "arduino"])
async def test_a_board_of_emulated_chips(tmp_path: Path, collpos: str) -> None:
    """The reader firmware on emulated MFRC522s (antennas 0-3) and PN532s (4, 5): its
    counters reach the report through the serial protocol (STAT), and an antenna whose card
    answers one round in two is UNRELIABLE with its figure, on either chip."""
    board = Board("PI1", collpos=collpos)
    link = tmp_path / "ttyACM0"
    emulated = EmulatedBoard(board.settings, board.wiring, link=link).start()
    try:
        config = load_config(_board_config(tmp_path, link))
        tech = EdgeTechnician(board.field, {("pico", str(a)): a for a in range(6)}, {"1", "5"})
        # the emulated board's read times are the host's, under whatever load the machine
        # has: a 500 ms period keeps them out of the verdict, which is the counters' here
        report = await SelfTest(config, tech, settings=replace(QUICK, period_ms=500)).run()
    finally:
        emulated.stop()
    assert emulated.error is None
    assert len(report.antennas) == 6
    for a in report.antennas:
        # MFRC522s and PN532s alike resolve two tags in the field (the harness's limit)
        assert (a.read, a.removal_seen, a.two_cards) == (
            2, 2, "both read (a pile-capable antenna)"), a
        assert a.rounds is not None and a.rounds > 0, a
        assert a.answered_rounds is not None and a.answered_rounds >= a.read, a
        rate = a.miss_rate
        assert rate is not None
        if a.antenna in ("1", "5"):
            assert rate > 0.2, a
            assert a.verdict.startswith("UNRELIABLE: a card lying there missed "), a
            assert f"missed {rate:.0%} of polling rounds, above 10%" in a.verdict
            assert "the field is weak" in a.advice
        else:
            assert a.missed_rounds == 0, a
            assert "missed" not in a.verdict and not a.verdict.startswith(FAILING), a
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


# ---------------------------------------------------- simulated faults, from the command line

TWO_SEATS = """
[table]
id = "1"
[broker]
url = "mqtt://127.0.0.1:1883"
[[readers]]
name = "north"
url = "sim://1/north"
kind = "inventory"
antennas = { "0" = { seat = "N", zone = "spot" }, "1" = { seat = "N", zone = "bid" } }
[[readers]]
name = "east"
url = "sim://1/east"
kind = "inventory"
antennas = { "0" = { seat = "E", zone = "spot" }, "1" = { seat = "E", zone = "bid" } }
[[readers]]
name = "board"
url = "sim://1/board"
kind = "tap"
antennas = { "0" = { zone = "board" } }
[display]
type = "none"
"""


def _trusted(name: str) -> str:
    """The verdict of a sound antenna of TWO_SEATS (the board reader takes taps)."""
    return "trusted: one card at a time (taps)" if name == "board/0" else \
        "trusted: one card at a time only"


def _scripted(tmp_path: Path, *faults: str) -> tuple[int, dict[str, dict[str, object]],
                                                      list[dict[str, object]], str]:
    """``selftest --scripted`` on a two-seat simulated table with ``faults``: exit code, the
    antennas' results by READER/ANTENNA, the rows' checks, the text report."""
    config = tmp_path / "two-seats.toml"
    config.write_text(TWO_SEATS)
    prefix = tmp_path / "report"
    code = main(["--config", str(config), "--scripted", "--repeats", "2", "--timeout", "2",
                 "--report", str(prefix), *faults])
    data = json.loads(prefix.with_suffix(".json").read_text())
    antennas = {f"{a['reader']}/{a['antenna']}": a for a in data["antennas"]}
    return code, antennas, data["silent"], prefix.with_suffix(".txt").read_text()


@pytest.mark.slow
def test_a_healthy_simulated_table_passes(tmp_path: Path) -> None:
    code, antennas, silent, text = _scripted(tmp_path)
    assert code == 0, text
    assert all(a["verdict"] == _trusted(name) for name, a in antennas.items())
    assert all(a["advice"] == "" and a["errors"] == [] for a in antennas.values())
    assert antennas["board/0"]["full_wallet"] == "read"
    assert all(a["miss_rate"] == 0.0 for a in antennas.values())
    assert len(silent) == 5 and all(c["ok"] for c in silent)


@pytest.mark.slow
@pytest.mark.parametrize(("faults", "failing", "verdict", "advice"), [
    (["--miss-rate", "north/0=0.9"], ["north/0"],
     "UNRELIABLE: read in up to", "the field is weak at this spot"),
    (["--dead", "east/1"], ["east/1"], "NOT WORKING: no card read", "check this antenna's module"),
    (["--swap", "north/0,east/0"], ["north/0", "east/0"],
     "MISWIRED: N spot is read by E spot's antenna (east/0): chip selects swapped, or E spot's "
     "antenna too close", "are swapped: swap them back"),
    (["--reads-neighbour", "east/0=north/0"], ["north/0"],
     "MISWIRED: N spot is also read by E spot's antenna (east/0): E spot's antenna too close",
     "keep at least 100 mm between antenna centres"),
    (["--unplugged", "east"], ["east/0", "east/1"],
     "NOT CONNECTED: reader east not connected (no port ", "check the reader's USB cable"),
    (["--wallet-cards", "3"], ["board/0"],
     "UNRELIABLE: a full wallet not read (", "the cards' stickers inside the wallet"),
])
def test_each_simulated_fault_gives_its_own_verdict(
        tmp_path: Path, faults: list[str], failing: list[str], verdict: str, advice: str) -> None:
    code, antennas, _, text = _scripted(tmp_path, *faults)
    assert code == 1, text
    for name, result in antennas.items():
        if name in failing:
            if name == failing[0]:
                assert str(result["verdict"]).startswith(verdict), result
                assert verdict in text
            else:
                assert str(result["verdict"]).startswith(verdict.partition(" ")[0]), result
            assert advice in str(result["advice"])
        else:
            assert result["verdict"] == _trusted(name), (name, result)
    if "--swap" in faults:
        assert "E spot is read by N spot's antenna (north/0)" in antennas["east/0"]["verdict"]
    if "--miss-rate" in faults:
        weak = antennas["north/0"]
        assert float(weak["miss_rate"]) > 0.5   # type: ignore[arg-type]
        assert "polling rounds, above 10%" in str(weak["verdict"])
    if "--unplugged" in faults:
        assert antennas["east/0"]["laid"] == 0   # said at once: no card laid, no timeout
    if "--wallet-cards" in faults:
        assert "collision_not_resolved" in str(antennas["board/0"]["full_wallet"])


@pytest.mark.slow
def test_a_tag_limit_and_a_row_read_by_an_antenna(tmp_path: Path) -> None:
    code, antennas, silent, text = _scripted(
        tmp_path, "--tag-limit", "2", "--reads-neighbour", "north/1=N call row")
    assert code == 1, text
    assert {a["verdict"] for name, a in antennas.items() if name != "board/0"} == {
        "trusted: one card, and two cards at once (pile-capable antenna)"}
    # a board reader that resolves two tags still reads a wallet whose cards lie out of it
    assert antennas["board/0"]["full_wallet"] == "read"
    failed = [c for c in silent if not c["ok"]]
    assert [c["what"] for c in failed] == ["N call row"]
    assert "read by N bid (north/1): move the row" in str(failed[0]["detail"])


def test_faults_are_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for faults, message in ((["--dead", "attic/0"], "no antenna 'attic/0'"),
                            (["--miss-rate", "1.5"], "miss rate '1.5'"),
                            (["--swap", "north/0"], "two antennas"),
                            (["--reads-neighbour", "north/0=the floor"], "no place 'the floor'"),
                            (["--unplugged", "attic"], "no reader 'attic'"),
                            (["--wallet-cards", "53"], "wallet cards 53")):
        assert main(["--config", str(SIM), "--scripted", *faults]) == 2
        assert message in capsys.readouterr().err
    assert main(["--config", str(SIM), "--dead", "north/0"]) == 2
    assert "need --scripted" in capsys.readouterr().err


async def test_a_firmware_without_counters_is_judged_without_them() -> None:
    """A serial protocol version-1 firmware answers STAT with ERR BADCMD: no counters, no
    error on the antenna's account, and no wait for an answer that will not come."""
    config = load_config(SIM)
    async with SimTable.from_config(SIM) as table:
        north = table.firmwares["north"]
        north.stats = lambda antenna=None: north.error("BADCMD", "malformed")  # type: ignore[method-assign]
        report = await SelfTest(config, SimTechnician(table, SIM_READERS), settings=QUICK,
                                readers=["north"]).run()
    [result] = report.antennas
    assert (result.rounds, result.miss_rate, result.errors) == (None, None, [])
    assert result.verdict == "trusted: one card at a time only"
    assert "firmware:" not in report.text()
