"""The club build's readers: MFRC522s on one SPI bus, each on a GPIO chip select
(``mfrc522://0.0?cs=17``), taking turns on the bus (chipreader.BusTurn), through a fake
``spidev`` whose transfers reach the emulated chip whose select line gpiozero's MockFactory
holds low."""

from __future__ import annotations

import threading
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from test_readers_chips import read, rounds
from test_readers_serial import Watcher

from firmware_bridge.config import load_config
from firmware_bridge.mcu import HOST_TICKS
from firmware_bridge.mcu.btreader.clock import Clock
from firmware_bridge.mcu.btreader.mfrc522 import MFRC522
from firmware_bridge.readers import ReaderError, open_reader
from firmware_bridge.readers.chipreader import BusTurn, bus_turn
from firmware_bridge.readers.mfrc522 import HostMFRC522, Mfrc522Reader
from firmware_bridge.sim.chips import ChipSpi, EmuMFRC522, Field

ROOT = Path(__file__).resolve().parent.parent
CLUB = ROOT / "hw_configs" / "table-club.toml"


class SharedBusSpidev:
    """The ``spidev`` module for one bus whose chips are told apart by GPIO chip selects:
    a transfer reaches the one chip whose select pin is low. It fails the test (``faults``)
    on a transfer with no chip or two selected, one not opened ``no_cs``, or two fields on
    at once."""

    def __init__(self, factory: Any, chips: dict[int, EmuMFRC522]) -> None:
        self.factory = factory
        self.chips = chips
        self.faults: list[str] = []
        self.transfers = 0
        self.most_fields_on = 0
        fake = self

        class SpiDev:
            def __init__(self) -> None:
                self.max_speed_hz = 0
                self.mode = -1
                self.no_cs = False

            def open(self, bus: int, device: int) -> None:
                if (bus, device) != (0, 0):
                    raise FileNotFoundError(f"/dev/spidev{bus}.{device}")

            def xfer2(self, data: list[int]) -> list[int]:
                return list(fake.transfer(self, bytes(data)))

            def close(self) -> None:
                pass

        self.SpiDev = SpiDev

    def transfer(self, dev: Any, data: bytes) -> bytes:
        self.transfers += 1
        if not dev.no_cs or dev.max_speed_hz != 1000000:
            self.faults.append(f"opened without no_cs or at {dev.max_speed_hz} Hz")
        low = [pin for pin in self.chips if not self.factory.pin(pin).state]
        if len(low) != 1:
            self.faults.append(f"chip selects low during a transfer: {low}")
            return bytes(len(data))
        back = self.chips[low[0]].spi_transfer(data)
        on = sum(chip._field_key is not None for chip in self.chips.values())
        self.most_fields_on = max(self.most_fields_on, on)
        return back


def club_pins() -> dict[str, int]:
    config = load_config(CLUB)
    pins = {}
    for r in config.readers:
        reader = open_reader(r.name, r.url, kind=r.kind)
        assert isinstance(reader, Mfrc522Reader)
        pins[r.name] = reader.cs[0]
    return pins


def test_the_club_table_file_loads_with_the_agreed_readers_and_pins() -> None:
    """Nine readers on SPI0 at 1 MHz, each on its own chip select; no pin is used twice
    among the chip selects, the LEDs, the buttons and the buses (docs/hardware/wiring.md)."""
    config = load_config(CLUB)
    zones = {r.name: (r.kind, [(a.seat, a.zone) for a in r.antennas.values()])
             for r in config.readers}
    assert zones == {
        **{name: ("inventory", [(seat, "spot")]) for name, seat in
           (("north", "N"), ("east", "E"), ("south", "S"), ("west", "W"))},
        **{f"{name}-call": ("inventory", [(seat, "bid")]) for name, seat in
           (("north", "N"), ("east", "E"), ("south", "S"), ("west", "W"))},
        "board": ("tap", [(None, "board")])}
    readers = [open_reader(r.name, r.url, kind=r.kind) for r in config.readers]
    assert all(isinstance(r, Mfrc522Reader) and r.devices == [(0, 0)] and r.speed_hz == 1000000
               and r.rate_ms == 300 and r.misses == 2 for r in readers)
    cs = list(club_pins().values())
    leds = [p for s in config.gpio.seats.values() for p in (s.turn_led, s.alert_led) if p]
    buttons = list(config.gpio.buttons.values())
    buses = [2, 3, 9, 10, 11]   # I2C1 SDA/SCL, SPI0 MISO/MOSI/SCLK
    used = cs + leds + buttons + buses
    assert len(used) == len(set(used)) == 26 and set(used) == set(range(2, 28))
    # the config.txt line in the file's head drives every chip select high from boot
    text = CLUB.read_text(encoding="utf-8")
    line = next(ln for ln in text.splitlines() if "=op,dh" in ln)
    assert sorted(int(p) for p in line.split("gpio=")[1].split("=")[0].split(",")) == sorted(cs)


def test_cs_urls_and_their_errors() -> None:
    reader = open_reader("x", "mfrc522://0.0,0.0?cs=17,27&speed_hz=1000000")
    assert isinstance(reader, Mfrc522Reader) and reader.cs == [17, 27]
    for bad in ("mfrc522://0.0?cs=GPIO17", "mfrc522://0.0?cs=40", "mfrc522://0.0?cs=17,27",
                "mfrc522://0.0?cs=17&speed_hz=20000000"):
        with pytest.raises(ReaderError):
            open_reader("x", bad)


async def test_nine_readers_on_chip_selects_read_their_own_spot_one_field_at_a_time() -> None:
    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    factory = MockFactory()
    field = Field()
    pins = club_pins()
    chips = {pin: EmuMFRC522(field, name) for name, pin in pins.items()}
    for pin in pins.values():   # config.txt's gpio=...=op,dh: every select high from boot
        factory.pin(pin).drive_high()
    spidev = SharedBusSpidev(factory, chips)
    config = load_config(CLUB)
    readers = [open_reader(r.name, r.url.replace("rate_ms=300", "rate_ms=10"), kind=r.kind,
                           spidev=spidev, pin_factory=factory) for r in config.readers]
    turn = bus_turn("spi0")
    before = turn.rounds
    async with AsyncExitStack() as stack:
        watchers = {}
        for reader in readers:
            await stack.enter_async_context(reader)
            watchers[reader.name] = Watcher(reader)
        for reader in readers:
            assert isinstance(reader, Mfrc522Reader)
            await rounds(reader, 1)
        field.place("north", "04000000000001")
        field.place("east-call", "04000000000002")
        field.place("board", "04000000000003")
        await watchers["north"].until(read(0, "04000000000001", "present"))
        await watchers["east-call"].until(read(0, "04000000000002", "present"))
        await watchers["board"].until(read(0, "04000000000003", "present"))
        field.lift("north", "04000000000001")
        await watchers["north"].until(read(0, "04000000000001", "removed"))
    assert spidev.faults == []
    assert spidev.most_fields_on == 1
    # each tag on its own reader only
    for name, watcher in watchers.items():
        assert all(uid == {"north": "04000000000001", "east-call": "04000000000002",
                           "board": "04000000000003"}.get(name) for _, uid, _ in watcher.reads())
    assert turn.rounds - before >= 9
    # closed: every chip select is released (no pin left claimed for the next opening)
    assert all(factory.pin(pin).state for pin in pins.values())


def test_the_bus_turn_serves_in_order_of_asking() -> None:
    turn = BusTurn()
    order: list[int] = []
    turn.__enter__()   # held: the three below queue up in the order they ask

    def take(i: int) -> None:
        with turn:
            order.append(i)

    threads = []
    for i in range(3):
        thread = threading.Thread(target=take, args=(i,))
        thread.start()
        threads.append(thread)
        deadline = time.monotonic() + 5
        while turn._next < i + 2 and time.monotonic() < deadline:
            time.sleep(0.001)
    turn.__exit__(None, None, None)
    for thread in threads:
        thread.join(5)
    assert order == [0, 1, 2] and turn.rounds == 4
    assert bus_turn("spi9") is bus_turn("spi9") and bus_turn("spi9") is not bus_turn("spi8")


class SlowChip(ChipSpi):
    """An emulated chip that shows its interrupt bits only on the ``slow``-th read of
    ComIrqReg after a command: a real chip's answer takes time."""

    def __init__(self, chip: EmuMFRC522, slow: int) -> None:
        super().__init__(chip)
        self.slow = slow
        self.polls = 0

    def transfer(self, data: bytes) -> bytes:
        if data[:1] == bytes((0x80 | (0x04 << 1),)):   # a read of ComIrqReg
            self.polls += 1
            if self.polls % self.slow:
                return bytes(len(data))
        return super().transfer(data)


@pytest.mark.parametrize("driver, pauses", [(MFRC522, False), (HostMFRC522, True)])
def test_the_host_driver_sleeps_between_polls(driver: type[MFRC522], pauses: bool,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The firmware's driver spins while the chip works (a board has nothing else to do);
    the Pi's sleeps POLL_PAUSE_S between two polls, so nine chips do not burn a core."""
    slept: list[float] = []
    monkeypatch.setattr(time, "sleep", slept.append)
    field = Field()
    field.place("spot", "04000000000009")
    port = SlowChip(EmuMFRC522(field, "spot"), slow=3)
    chip = driver(port, Clock(HOST_TICKS), field_settle_ms=0)
    assert chip.check()
    uids, problem = chip.inventory(4)
    assert (uids, problem) == ([bytes.fromhex("04000000000009")], "")
    assert port.polls > 0
    pause_sleeps = [s for s in slept if s < 0.001]
    assert bool(pause_sleeps) == pauses
    if pauses:   # two of every three polls find the chip still working
        assert len(pause_sleeps) == pytest.approx(port.polls * 2 / 3, abs=2)

