"""The Pi-attached reader backends (mfrc522://, pn532://) at the bus-transaction level: fake
``spidev`` and ``smbus2`` modules whose transfers go to the emulated chips of
firmware_bridge/sim/chips.py (an MFRC522 at the register level, a PN532 at the frame level)."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from typing import Any

import pytest
from test_readers_serial import Watcher, has_health

from firmware_bridge.examples import EXAMPLES
from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader, reader_schemes
from firmware_bridge.readers.chipreader import ChipReader
from firmware_bridge.readers.mfrc522 import Mfrc522Reader
from firmware_bridge.readers.pn532 import Pn532Reader
from firmware_bridge.readers.serial import SerialReader
from firmware_bridge.sim.chips import COLLPOS_READINGS, EmuMFRC522, EmuPN532, Field

Item = TagRead | ReaderHealth


class FakeSpidev:
    """The ``spidev`` module: SpiDev().open(bus, device) reaches the chip on that chip select;
    every xfer2 is logged."""

    def __init__(self, chips: dict[tuple[int, int], EmuMFRC522 | EmuPN532]) -> None:
        self.chips = chips
        self.log: list[tuple[tuple[int, int], bytes]] = []
        self.opened: list[tuple[int, int]] = []
        self.closed = 0
        fake = self

        class SpiDev:
            def __init__(self) -> None:
                self.where = (-1, -1)
                self.max_speed_hz = 0
                self.mode = -1

            def open(self, bus: int, device: int) -> None:
                if (bus, device) not in fake.chips:
                    raise FileNotFoundError(f"/dev/spidev{bus}.{device}")
                self.where = (bus, device)
                fake.opened.append(self.where)

            def xfer2(self, data: list[int]) -> list[int]:
                assert self.mode == 0 and self.max_speed_hz > 0
                fake.log.append((self.where, bytes(data)))
                return list(fake.chips[self.where].spi_transfer(bytes(data)))

            def close(self) -> None:
                fake.closed += 1

        self.SpiDev = SpiDev


class FakeSmbus2:
    """The ``smbus2`` module: SMBus(n).i2c_rdwr(i2c_msg.write/read) at one address."""

    def __init__(self, bus: int, address: int, chip: EmuPN532) -> None:
        self.log: list[tuple[str, int, bytes]] = []
        fake = self

        class Msg:
            def __init__(self, kind: str, address: int, data: bytes) -> None:
                self.kind, self.addr, self.data = kind, address, data

            def __iter__(self) -> Any:
                return iter(self.data)

        class i2c_msg:  # noqa: N801 - smbus2's name
            @staticmethod
            def write(address: int, data: list[int]) -> Msg:
                return Msg("w", address, bytes(data))

            @staticmethod
            def read(address: int, count: int) -> Msg:
                return Msg("r", address, bytes(count))

        class SMBus:
            def __init__(self, number: int) -> None:
                if number != bus:
                    raise FileNotFoundError(f"/dev/i2c-{number}")

            def i2c_rdwr(self, *messages: Msg) -> None:
                for m in messages:
                    if m.addr != address:
                        raise OSError(121, "Remote I/O error")
                    if m.kind == "w":
                        chip.i2c_write(m.data)
                    else:
                        m.data = chip.i2c_read(len(m.data))
                    fake.log.append((m.kind, m.addr, m.data))

            def close(self) -> None:
                pass

        self.i2c_msg = i2c_msg
        self.SMBus = SMBus


def read(antenna: int, uid: str, action: str) -> Callable[[list[Item]], bool]:
    return lambda items: any(isinstance(i, TagRead) and (i.antenna, i.uid, i.action)
                             == (str(antenna), uid, action) for i in items)


async def rounds(reader: ChipReader, count: int) -> None:
    target = reader.rounds + count
    async with asyncio.timeout(30):
        while reader.rounds < target:
            await asyncio.sleep(0.01)


def test_urls() -> None:
    assert {"mfrc522", "pn532"} <= set(reader_schemes())
    reader = open_reader("seats", "mfrc522://0.0,0.1,1.0?rate_ms=20&misses=2")
    assert isinstance(reader, Mfrc522Reader)
    assert reader.devices == [(0, 0), (0, 1), (1, 0)] and reader.rate_ms == 20
    pn = open_reader("wallet", "pn532://i2c1?address=0x24", kind="tap")
    assert isinstance(pn, Pn532Reader) and pn.kind == "tap" and pn.address == 0x24
    for bad in ("mfrc522://", "mfrc522://0", "mfrc522://0.0?speed=1", "pn532://i2cX",
                "mfrc522://0.0?rate_ms=fast", "mfrc522://0.0?rate_ms=5"):
        with pytest.raises(ReaderError):
            open_reader("x", bad)


@pytest.mark.parametrize("collpos", COLLPOS_READINGS)
async def test_mfrc522_per_seat_on_spidev(collpos: str) -> None:
    field = Field()
    chips: dict[tuple[int, int], EmuMFRC522 | EmuPN532] = {
        (0, 0): EmuMFRC522(field, "N", collpos=collpos),
        (0, 1): EmuMFRC522(field, "E", collpos=collpos)}
    spidev = FakeSpidev(chips)
    field.place("N", "04A1B2C3D4E5F6")     # lying there when the reader starts
    reader = Mfrc522Reader("seats", [(0, 0), (0, 1)], spidev=spidev, rate_ms=10)
    async with reader:
        watcher = Watcher(reader)
        await watcher.until(read(0, "04A1B2C3D4E5F6", "present"))
        for uid in ("04A1B2C3D4E5F7", "04112233445566"):   # stacked on it
            field.place("N", uid)
        field.place("E", "DEADBEEF")
        for antenna, uid in ((0, "04A1B2C3D4E5F7"), (0, "04112233445566"), (1, "DEADBEEF")):
            await watcher.until(read(antenna, uid, "present"))
        field.lift("N", "04A1B2C3D4E5F6")
        await watcher.until(read(0, "04A1B2C3D4E5F6", "removed"))
        chips[(0, 1)].connected = False     # E's module off its cable
        await watcher.until(has_health("disconnected"))
        field.lift("E", "DEADBEEF")
        await rounds(reader, 3)
        chips[(0, 1)].connected = True
        await watcher.until(read(1, "DEADBEEF", "removed"))
        assert watcher.health("reconnected") and watcher.health("resync")
    assert len(watcher.reads()) == len(set(watcher.reads()))
    # transaction level: register writes are (address << 1) & 0x7E then the value, reads
    # set bit 7; every transfer went to a chip select the reader opened
    assert spidev.opened == [(0, 0), (0, 1)] and spidev.closed == 2
    assert (((0, 0), bytes((0x37 << 1 | 0x80, 0))) in spidev.log)   # VersionReg read
    assert (((0, 1), bytes((0x01 << 1, 0x0F))) in spidev.log)       # SoftReset command


async def test_pn532_on_i2c_lists_a_stack_and_survives_a_pulled_cable() -> None:
    field = Field()
    chip = EmuPN532(field, "wallet")
    smbus2 = FakeSmbus2(1, 0x24, chip)
    reader = Pn532Reader("board", "i2c1", smbus2=smbus2, rate_ms=10)
    async with reader:
        watcher = Watcher(reader)
        await rounds(reader, 2)
        field.place("wallet", "04D10001000000")
        field.place("wallet", "04D10001000001")
        await watcher.until(read(0, "04D10001000000", "present"))
        await watcher.until(read(0, "04D10001000001", "present"))
        chip.connected = False
        await watcher.until(has_health("disconnected"))
        chip.connected = True
        await watcher.until(has_health("reconnected"))
        field.lift("wallet", "04D10001000001")
        await watcher.until(read(0, "04D10001000001", "removed"))
    # the frames on the bus are the user manual's: SAMConfiguration normal mode, one passive
    # activation retry (not the default 0xFF: the chip would wait for a tag for ever)
    assert bytes((0xD4, 0x14, 0x01, 0x14, 0x01)) in chip.frames
    assert bytes((0xD4, 0x32, 0x05, 0xFF, 0x01, 0x01)) in chip.frames
    assert bytes((0xD4, 0x4A, 0x01, 0x00)) in chip.frames
    writes = [d for k, a, d in smbus2.log if k == "w"]
    assert writes[0][:3] == b"\x00\x00\xff" and all(a == 0x24 for _, a, _ in smbus2.log)


async def test_pn532_on_spi_and_a_missing_bus() -> None:
    field = Field()
    chips: dict[tuple[int, int], EmuMFRC522 | EmuPN532] = {(0, 0): EmuPN532(field, "box")}
    spidev = FakeSpidev(chips)
    field.place("box", "CAFE0001")
    reader = Pn532Reader("box", "0.0", spidev=spidev, rate_ms=10)
    async with reader:
        watcher = Watcher(reader)
        await watcher.until(read(0, "CAFE0001", "present"))
    # the first byte of a data write is 0x01, sent LSB first: 0x80 on an MSB-first bus
    assert any(data[0] == 0x80 for _, data in spidev.log)
    absent = Mfrc522Reader("x", [(0, 5)], spidev=spidev)
    async with absent:
        watcher = Watcher(absent)
        await watcher.until(has_health("disconnected"))
    assert "spidev0.5" in watcher.health("disconnected")[0].detail


async def test_without_spidev_the_reader_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "spidev", None)  # as on a machine without [readers]
    reader = open_reader("x", "mfrc522://0.0")
    async with reader:
        watcher = Watcher(reader)
        await watcher.until(has_health("disconnected"))
    assert "pip install 'bridge-table[readers]'" in watcher.health("disconnected")[0].detail


async def test_mfrc522_behind_a_multiplexer_on_gpio_select_lines() -> None:
    """The bidding box on the Pi: one MFRC522 (spidev1.2) and a 4-way antenna switch whose
    select lines are BCM 22 and 23 (gpiozero's MockFactory stands for the header)."""
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    factory = MockFactory()
    field = Field()

    def channel() -> int:
        return int(factory.pin(22).state) + 2 * int(factory.pin(23).state)

    chips: dict[tuple[int, int], EmuMFRC522 | EmuPN532] = {
        (0, 0): EmuMFRC522(field, "tray"), (1, 2): EmuMFRC522(field, channel)}
    reader = open_reader("box", "mfrc522://0.0,1.2?mux=22,23&rate_ms=10",
                         spidev=FakeSpidev(chips), pin_factory=factory)
    assert isinstance(reader, Mfrc522Reader) and reader.channels == 4
    async with reader:
        watcher = Watcher(reader)
        await rounds(reader, 1)
        field.place("tray", "04000000000001")
        for zone in range(4):
            field.place(zone, f"0411111111110{zone}")
        await watcher.until(read(0, "04000000000001", "present"))
        for zone in range(4):   # zone z of the switch is the reader's antenna 1 + z
            await watcher.until(read(1 + zone, f"0411111111110{zone}", "present"))
        field.lift(2, "04111111111102")
        await watcher.until(read(3, "04111111111102", "removed"))
    assert sum(1 for r in watcher.reads() if r[2] == "removed") == 1
    with pytest.raises(ReaderError):
        open_reader("x", "mfrc522://0.0?mux=22&channels=3")
    with pytest.raises(ReaderError):
        open_reader("x", "mfrc522://0.0?mux=GPIO22")


def test_the_pi_readers_table_file_loads_and_its_readers_open() -> None:
    """The shipped table-pi-readers.toml (docs/hardware/wiring.md, layout B): valid, its
    readers are the Pi-attached backends, and no GPIO pin of it is an SPI or I2C pin."""

    from firmware_bridge.config import load_config

    config = load_config(EXAMPLES / "table-pi-readers.toml")
    kinds = {r.name: type(open_reader(r.name, r.url, kind=r.kind)) for r in config.readers}
    # the call spots are a reader board on USB: the Pi has no chip select left for them
    assert kinds == {"north": Mfrc522Reader, "east": Mfrc522Reader, "south": Mfrc522Reader,
                     "west": Mfrc522Reader, "bidbox": SerialReader, "board": Mfrc522Reader}
    # a PN532 on I2C is for a Pi 5 only (wiring.md): not in the file
    assert not any(r.url.startswith("pn532://i2c") for r in config.readers)
    box = open_reader("bidbox", "mfrc522://1.2?mux=22,23")
    assert isinstance(box, Mfrc522Reader) and box.channels == 4
    bus_pins = {2, 3, 7, 8, 9, 10, 11, 16, 17, 18, 19, 20, 21}
    used = {p for s in config.gpio.seats.values() for p in (s.turn_led, s.alert_led) if p}
    used |= set(config.gpio.buttons.values())
    assert not used & bus_pins and len(used) == 12
    assert set(config.gpio.buttons) == {"director", "claim", "undo", "next"}


async def test_a_round_that_cannot_finish_is_reported_and_removes_nothing() -> None:
    """18 tags on one antenna, then 17: more than the scanner lists in a round (16). The
    firmware's ERR line becomes ``firmware_error`` here too; the tags it did list stay, none is
    removed while the problem lasts - not even the one lifted meanwhile."""
    field = Field()
    spidev = FakeSpidev({(0, 0): EmuMFRC522(field, "N")})
    reader = Mfrc522Reader("seats", [(0, 0)], spidev=spidev, rate_ms=10)
    uids = [f"04C0{i:02X}0000000{i % 10}" for i in range(18)]
    async with reader:
        watcher = Watcher(reader)
        await rounds(reader, 1)
        for uid in uids:
            field.place("N", uid)
        await watcher.until(has_health("firmware_error"))
        await rounds(reader, 5)
        field.lift("N", uids[0])
        await rounds(reader, 5)
    assert watcher.health("firmware_error")[0].detail == "ANT0 too_many_tags"
    reads = watcher.reads()
    assert len([r for r in reads if r[2] == "present"]) == 16
    assert not [r for r in reads if r[2] == "removed"]


async def test_exactly_sixteen_tags_is_a_full_round() -> None:
    field = Field()
    spidev = FakeSpidev({(0, 0): EmuMFRC522(field, "N")})
    reader = Mfrc522Reader("seats", [(0, 0)], spidev=spidev, rate_ms=10)
    async with reader:
        watcher = Watcher(reader)
        await rounds(reader, 1)
        for i in range(16):
            field.place("N", f"04C1{i:02X}00000000")
        await watcher.until(lambda items: len(watcher.reads()) == 16)
        field.lift("N", "04C10500000000")
        await watcher.until(read(0, "04C10500000000", "removed"))
    assert not watcher.health("firmware_error")
