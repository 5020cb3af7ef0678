"""The firmware's MFRC522 driver (firmware_bridge/mcu/btreader/mfrc522.py) on the emulated chip
(firmware_bridge/sim/chips.py) under both readings of CollReg's CollPos: stacks of two and three
tags resolved, the waits bounded by time, the field off long enough between rounds, the soft
reset waited for."""

from __future__ import annotations

import random

import pytest

from firmware_bridge.mcu.btreader import mfrc522
from firmware_bridge.mcu.btreader.clock import Clock
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522
from firmware_bridge.sim.chips import COLLPOS_READINGS, ChipSpi, EmuMFRC522, Field


class ManualTicks:
    """A clock that moves only when slept on, or by ``per_read`` ms on every ticks_ms call
    (each call standing for a bus transaction's time)."""

    def __init__(self, per_read: float = 0.0) -> None:
        self.now = 0.0
        self.per_read = per_read
        self.reads = 0

    def ticks_ms(self) -> int:
        self.reads += 1
        self.now += self.per_read
        return int(self.now)

    def ticks_diff(self, later: int, earlier: int) -> int:
        return later - earlier

    def sleep_ms(self, ms: int) -> None:
        self.now += ms


class Wire(ChipSpi):
    """The SPI lines to one emulated chip, noting when the field goes on and off."""

    def __init__(self, chip: EmuMFRC522, ticks: ManualTicks) -> None:
        super().__init__(chip)
        self.ticks = ticks
        self.field_changes: list[tuple[float, bool]] = []

    def transfer(self, data: bytes) -> bytes:
        back = super().transfer(data)
        if not data[0] & 0x80 and (data[0] >> 1) & 0x3F == mfrc522.TX_CONTROL:
            on = data[1] & 0x03 == 0x03
            if not self.field_changes or self.field_changes[-1][1] != on:
                self.field_changes.append((self.ticks.now, on))
        return back


def driver(collpos: str, tags: list[str], *, per_read: float = 0.0
           ) -> tuple[MFRC522, EmuMFRC522, Wire, Field]:
    field = Field()
    for uid in tags:
        field.place("A", uid)
    chip = EmuMFRC522(field, "A", collpos=collpos)
    ticks = ManualTicks(per_read)
    wire = Wire(chip, ticks)
    rc522 = MFRC522(wire, Clock(ticks))
    assert rc522.check()
    return rc522, chip, wire, field


def ntag(rng: random.Random) -> str:
    return "04" + "".join(f"{rng.randrange(256):02X}" for _ in range(6))


STACKS = [
    ["04A1B2C3D4E5F6", "04A1B2C3D4E5F7"],                       # differ in the last bit
    ["04A1B2C3D4E5F6", "04A1B2C3D4E5F7", "04112233445566"],     # two share cascade level 1
    ["04FFFFFFFFFFFF", "04000000000000", "04800000000001"],
    ["DEADBEEF", "DEADBEEE", "04A1B2C3D4E5F6"],                 # 4- and 7-byte UIDs
    ["04010000000001", "04030000000003", "04020000000002"],     # two collisions in one level
]


@pytest.mark.parametrize("collpos", COLLPOS_READINGS)
@pytest.mark.parametrize("stack", STACKS)
def test_two_and_three_tags_in_the_field_are_all_read(collpos: str, stack: list[str]) -> None:
    rc522, _, _, _ = driver(collpos, stack)
    uids, problem = rc522.inventory(16)
    assert problem == ""
    assert sorted(u.hex().upper() for u in uids) == sorted(stack)


@pytest.mark.parametrize("collpos", COLLPOS_READINGS)
def test_random_stacks_of_ntag_stickers(collpos: str) -> None:
    rng = random.Random(23)
    for _ in range(60):
        stack = sorted({ntag(rng) for _ in range(rng.choice((2, 3)))})
        rc522, _, _, _ = driver(collpos, stack)
        uids, problem = rc522.inventory(16)
        assert (problem, sorted(u.hex().upper() for u in uids)) == ("", stack)


@pytest.mark.parametrize("collpos", COLLPOS_READINGS)
def test_laid_lifted_and_laid_again(collpos: str) -> None:
    rc522, _, _, field = driver(collpos, ["04AA000000000A"])
    assert rc522.inventory(16) == ([bytes.fromhex("04AA000000000A")], "")
    field.place("A", "04AA000000000B")
    assert sorted(rc522.inventory(16)[0]) == [bytes.fromhex("04AA000000000A"),
                                              bytes.fromhex("04AA000000000B")]
    field.lift("A", "04AA000000000A")
    assert rc522.inventory(16) == ([bytes.fromhex("04AA000000000B")], "")
    field.lift("A", "04AA000000000B")
    assert rc522.inventory(16) == ([], "")
    field.place("A", "04AA000000000A")
    assert rc522.inventory(16) == ([bytes.fromhex("04AA000000000A")], "")


def test_the_readings_differ_where_the_answer_starts_mid_uid() -> None:
    # the second anticollision exchange of two tags that differ late: the two emulations set
    # different CollPos values, so the driver's tolerance is really exercised
    seen: dict[str, list[int]] = {}
    for collpos in COLLPOS_READINGS:
        rc522, chip, _, _ = driver(collpos, STACKS[-1])
        values: list[int] = []
        original = chip._answer

        def note(data: bytes, last_bits: int = 0, error: int = 0,
                 chip: EmuMFRC522 = chip, values: list[int] = values,
                 original: object = original) -> None:
            if error & 0x08:
                values.append(chip.regs[0x0E] & 0x1F)
            original(data, last_bits, error)  # type: ignore[operator]

        chip._answer = note  # type: ignore[method-assign]
        assert rc522.inventory(16)[1] == ""
        seen[collpos] = values
    assert seen["nxp"] != seen["arduino"]


def test_a_chip_that_never_raises_an_interrupt_is_given_up_after_a_time_not_a_count() -> None:
    # a fast bus: each poll takes a tenth of a millisecond; the wait lasts about 25 ms, i.e.
    # hundreds of polls (a fixed count of 200 would give up after 20 ms)
    rc522, chip, _, _ = driver("nxp", [], per_read=0.1)
    chip._transceive = lambda: None  # type: ignore[method-assign]
    ticks = rc522.clock._ticks.__self__
    start = ticks.now
    with pytest.raises(OSError):
        rc522.transceive(bytes((0x26,)), 7)
    assert mfrc522.WAIT_MS <= ticks.now - start <= mfrc522.WAIT_MS + 2


def test_the_field_stays_off_five_milliseconds_between_rounds() -> None:
    rc522, _, wire, _ = driver("arduino", ["04AA000000000A", "04AA000000000B"])
    for _ in range(4):
        rc522.inventory(16)
    changes = wire.field_changes
    offs = [(t, on) for t, on in changes]
    assert sum(1 for _, on in offs if on) == 4
    for (t_off, was_on), (t_on, now_on) in zip(offs, offs[1:], strict=False):
        if not was_on and now_on:
            assert t_on - t_off >= mfrc522.FIELD_OFF_MS


def test_the_soft_reset_is_waited_for() -> None:
    rc522, chip, _, _ = driver("nxp", [])
    assert chip.lost_writes == 0
    assert chip.regs[mfrc522.T_MODE] == 0x80 and chip.regs[mfrc522.TX_ASK] == 0x40
    # a chip that never wakes up is gone, not set up with writes it ignored
    chip.wake_reads, chip.wake_s = 10 ** 6, None
    rc522.ready = False
    with pytest.raises(OSError):
        rc522.check()


def test_the_emulated_chip_wakes_in_time_as_well_as_in_reads() -> None:
    """A real MFRC522's oscillator starts in time: a driver paused past its deadline
    between two reads (a busy machine) finds it up, not still waking, and takes it for a
    chip that answers (tests/test_mcu_firmware.py lost an antenna to 'no_answer' under load
    while the emulator counted only reads)."""
    import time

    def power_down(chip: EmuMFRC522) -> bool:
        # SPI read of CommandReg: address byte (reg << 1) | 0x80, then a dummy byte
        return bool(chip.spi_transfer(bytes(((mfrc522.COMMAND << 1) | 0x80, 0)))[1] & 0x10)

    counted = EmuMFRC522(Field(), "A", wake_reads=3, wake_s=None)
    assert [power_down(counted) for _ in range(4)] == [True, True, True, False]
    timed = EmuMFRC522(Field(), "A", wake_reads=3, wake_s=0.01)
    assert power_down(timed)
    time.sleep(0.02)
    assert not power_down(timed)


def test_the_emulator_knows_only_two_readings() -> None:
    with pytest.raises(ValueError, match="collpos"):
        EmuMFRC522(Field(), "A", collpos="sideways")


class PausedOnce(Wire):
    """The first read of ComIrqReg after a command finds nothing yet, and the loop that read
    it is then paused past WAIT_MS (a garbage collection, a busy host) before it looks at
    the time: by then the chip has answered."""

    def __init__(self, chip: EmuMFRC522, ticks: ManualTicks) -> None:
        super().__init__(chip, ticks)
        self.paused = False

    def transfer(self, data: bytes) -> bytes:
        back = super().transfer(data)
        if data[0] & 0x80 and (data[0] >> 1) & 0x3F == mfrc522.COM_IRQ and not self.paused:
            self.paused = True
            self.ticks.now += mfrc522.WAIT_MS + 5
            return bytes(len(data))
        return back


def test_a_pause_of_the_loop_itself_is_not_the_chips_silence() -> None:
    # seen as "ANT0 no_answer mfrc522" on the emulated board under a loaded machine: the
    # driver gave up on the time alone, without reading the chip once more after the pause
    field = Field()
    field.place("A", "04A1B2C3D4E5F6")
    ticks = ManualTicks()
    wire = PausedOnce(EmuMFRC522(field, "A", collpos="nxp"), ticks)
    rc522 = MFRC522(wire, Clock(ticks))
    assert rc522.check()
    uids, problem = rc522.inventory(16)
    assert wire.paused and problem == ""
    assert [uid.hex().upper() for uid in uids] == ["04A1B2C3D4E5F6"]
