"""The firmware's PN532 driver (firmware_bridge/mcu/btreader/pn532.py) on the emulated chip
(firmware_bridge/sim/chips.py): SAMConfiguration before anything else, an I2C chip that NAKs
while busy, the SPI wake-up, a chip whose cable comes back."""

from __future__ import annotations

import pytest

from firmware_bridge.mcu import HOST_TICKS
from firmware_bridge.mcu.btreader.clock import Clock
from firmware_bridge.mcu.btreader.pn532 import PN532, I2cTransport, SpiTransport, Transport
from firmware_bridge.sim.chips import ChipI2c, ChipSpi, EmuPN532, Field


def pn532(bus: str, *, busy_s: float = 0.002) -> tuple[PN532, EmuPN532, Field]:
    field = Field()
    chip = EmuPN532(field, "A", busy_s=busy_s)
    transport: Transport = I2cTransport(ChipI2c(chip)) if bus == "i2c" \
        else SpiTransport(ChipSpi(chip))
    return PN532(transport, Clock(HOST_TICKS)), chip, field


@pytest.mark.parametrize("bus", ["i2c", "spi"])
def test_samconfiguration_comes_first_and_the_chip_answers_at_once(bus: str) -> None:
    driver, chip, field = pn532(bus)
    field.place("A", "04AA000000000A")
    field.place("A", "DEADBEEF")
    assert driver.check()        # the first try: woken, set up, answering
    assert chip.refused == []
    assert chip.frames[0][1] == 0x14
    uids, problem = driver.inventory(16)
    assert problem == "" and sorted(uids) == sorted([bytes.fromhex("04AA000000000A"),
                                                     bytes.fromhex("DEADBEEF")])


def test_an_i2c_chip_busy_for_a_while_is_waited_for() -> None:
    driver, chip, field = pn532("i2c", busy_s=0.015)
    field.place("A", "04AA000000000A")
    assert driver.check()
    assert driver.inventory(16) == ([bytes.fromhex("04AA000000000A")], "")


def test_an_answer_left_unread_does_not_stick() -> None:
    # a host that gave up waiting (a stalled thread) sends its next command: the chip answers
    # that one, not the old one
    driver, chip, field = pn532("i2c")
    assert driver.check()
    driver.transport.send(b"\x00\x00\xff\x02\xfe\xd4\x02\x2a\x00")   # GetFirmwareVersion, unread
    field.place("A", "04AA000000000A")
    assert driver.inventory(16) == ([bytes.fromhex("04AA000000000A")], "")


@pytest.mark.parametrize("bus", ["i2c", "spi"])
def test_a_chip_whose_cable_comes_back_is_set_up_again(bus: str) -> None:
    driver, chip, field = pn532(bus)
    field.place("A", "04AA000000000A")
    assert driver.check()
    chip.connected = False
    assert not driver.check()
    chip.connected = True        # powered up again: LowVbat, and asleep on SPI
    assert driver.check()
    assert chip.refused == []
    assert driver.inventory(16) == ([bytes.fromhex("04AA000000000A")], "")


def test_a_command_before_samconfiguration_is_refused_by_the_emulator() -> None:
    # the emulation the tests above rely on: a driver asking for the version first gets
    # nothing, as the chip in LowVbat gives nothing
    driver, chip, _ = pn532("i2c")
    with pytest.raises(Exception, match="no answer|no ACK"):
        driver.call(0x02)
    assert chip.refused == [0x02]
