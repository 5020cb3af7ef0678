"""Serial reader backend through real pseudo-terminals and real pyserial.

The far end of each pty is :class:`VirtualFirmware`, which speaks the line protocol like reader
firmware; faults are injected on the wire as raw bytes.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import serial_asyncio_fast

from firmware_bridge.protocol import CommandOp
from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader
from firmware_bridge.readers.base import Reader
from firmware_bridge.readers.serial import SerialReader, parse_serial_url
from firmware_bridge.sim.firmware import VirtualFirmware

UID_A = "04A1B2C3D4E5F6"
UID_B = "04A1B2C3D4E5F7"
UID_C = "DEADBEEF"

Item = TagRead | ReaderHealth


class Watcher:
    """Collects a reader's output in the background; tests wait for what they expect."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.items: list[Item] = []
        self._new = asyncio.Event()
        self._task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        async for item in self.reader:
            self.items.append(item)
            self._new.set()

    async def until(self, predicate: Callable[[list[Item]], bool], timeout: float = 10.0) -> None:
        async with asyncio.timeout(timeout):
            while not predicate(self.items):
                self._new.clear()
                await self._new.wait()

    def reads(self) -> list[tuple[str, str, str]]:
        return [(i.antenna, i.uid, i.action) for i in self.items if isinstance(i, TagRead)]

    def health(self, kind: str) -> list[ReaderHealth]:
        return [i for i in self.items if isinstance(i, ReaderHealth) and i.kind == kind]


def has_reads(n: int) -> Callable[[list[Item]], bool]:
    return lambda items: sum(isinstance(i, TagRead) for i in items) >= n


def has_health(kind: str, n: int = 1) -> Callable[[list[Item]], bool]:
    return lambda items: sum(isinstance(i, ReaderHealth) and i.kind == kind for i in items) >= n


@pytest.fixture
async def firmware(tmp_path: Path) -> AsyncIterator[VirtualFirmware]:
    # the line protocol's tests lay several tags on one antenna: a reader that resolves a
    # pile (tag_limit 16, docs/sensing.md); the one-tag physics is tested in test_sim.py
    fw = VirtualFirmware("N1", antennas=2, link=tmp_path / "ttyREADER", tag_limit=16)
    await fw.start()
    yield fw
    fw.close()


async def connected(fw: VirtualFirmware, **options: object) -> tuple[Reader, Watcher]:
    assert fw.link is not None
    reader = open_reader("north", f"serial://{fw.link}?baudrate=115200", **options)
    await reader.__aenter__()
    watcher = Watcher(reader)
    async with asyncio.timeout(10):
        await fw.host_seen.wait()  # the host asked for its link-up inventory
    # Wait until the answer to it is applied, so what the test does next is a change.
    marker = fw.heartbeat()
    assert isinstance(reader, SerialReader)
    reader.on_frame = fw.delivered
    await fw.wait_delivered(marker)
    return reader, watcher


def test_url_parsing() -> None:
    assert parse_serial_url("serial:///dev/ttyUSB0?baudrate=9600") == (
        "/dev/ttyUSB0", {"baudrate": "9600"})
    assert parse_serial_url("serial://var/sim/north")[0] == "var/sim/north"
    with pytest.raises(ReaderError):
        open_reader("x", "serial:///dev/ttyUSB0?speed=fast")
    with pytest.raises(ReaderError):
        open_reader("x", "serial:///dev/ttyUSB0?baudrate=fast")
    with pytest.raises(ReaderError):
        open_reader("x", "bogus:///dev/ttyUSB0")
    with pytest.raises(ReaderError):
        open_reader("x", "/dev/ttyUSB0")
    with pytest.raises(ReaderError):
        open_reader("x", "serial:///dev/ttyUSB0", kind="sometimes")
    reader = open_reader("x", "serial:///dev/ttyUSB0?debounce=0.3", kind="tap", baudrate=9600)
    assert isinstance(reader, SerialReader)
    assert (reader.kind, reader.debounce, reader.baudrate) == ("tap", 0.3, 9600)


async def test_present_and_removed(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    try:
        firmware.place(0, UID_A)
        firmware.place(1, UID_B)
        firmware.lift(0, UID_A)
        await watcher.until(has_reads(3))
        assert watcher.reads() == [("0", UID_A, "present"), ("1", UID_B, "present"),
                                   ("0", UID_A, "removed")]
        assert all(i.reader == "north" for i in watcher.items)
        assert not [i for i in watcher.items if isinstance(i, ReaderHealth)]
    finally:
        await reader.__aexit__(None, None, None)


async def test_tags_already_present_at_start_come_from_inventory(
        firmware: VirtualFirmware) -> None:
    firmware.place_silently(0, UID_A)
    firmware.place_silently(1, UID_C)
    reader, watcher = await connected(firmware)
    try:
        await watcher.until(has_reads(2))
        assert sorted(watcher.reads()) == [("0", UID_A, "present"), ("1", UID_C, "present")]
        # The start-up inventory is the first look, not a repair.
        assert not watcher.health("resync")
    finally:
        await reader.__aexit__(None, None, None)


async def test_hardware_time_is_the_reads_ts(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    try:
        firmware.place(0, UID_A, hw_time=1764400000.25)
        await watcher.until(has_reads(1))
        read = watcher.items[-1]
        assert isinstance(read, TagRead) and read.ts == 1764400000.25
    finally:
        await reader.__aexit__(None, None, None)


async def test_lost_lines_are_recovered_from_inventory(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    try:
        firmware.place(0, UID_A)
        await watcher.until(has_reads(1))
        firmware.drop_next(2)
        firmware.place(0, UID_B)     # lost
        firmware.lift(0, UID_A)      # lost
        firmware.place(1, UID_C)     # arrives: the gap shows
        await watcher.until(lambda items: has_reads(4)(items) and has_health("resync")(items))
        gap = watcher.health("gap")
        assert len(gap) == 1 and "2 line(s) lost" in gap[0].detail
        assert sorted(watcher.reads()[1:]) == [
            ("0", UID_A, "removed"), ("0", UID_B, "present"), ("1", UID_C, "present")]
        assert any(c.op is CommandOp.INVENTORY for c in firmware.commands[1:])
    finally:
        await reader.__aexit__(None, None, None)


async def test_every_kind_of_garbage(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    try:
        firmware.write_raw(b"\x00\xff\xfe binary noise \x1b[31m\r\n")
        firmware.write_raw(b"$N1 0 99 + 04A1B2C3*12\r\n")                 # truncated CRC
        firmware.write_raw(b"$" + b"7" * 3000 + b"\r\n")                   # over-long
        firmware.write_raw(b"$N1 0 1 WHAT*%04X\r\n" % 0)                   # bad CRC
        firmware.send_bad_crc(0, UID_A)                                     # the tag IS there
        firmware.write_raw(b"\xc3\xa9\xe4\xb8\xad\n")                      # UTF-8 junk
        firmware.place(1, UID_B)
        await watcher.until(lambda items: ("0", UID_A, "present") in watcher.reads()
                            and ("1", UID_B, "present") in watcher.reads())
        kinds = {i.kind for i in watcher.items if isinstance(i, ReaderHealth)}
        assert {"noise", "truncated", "overlong", "crc_error", "gap", "resync"} <= kinds
        # Counts go up per kind.
        assert [h.count for h in watcher.health("crc_error")] == [1, 2]
        assert reader.health_counts["crc_error"] == 2
    finally:
        await reader.__aexit__(None, None, None)


async def test_reader_reset_mid_line(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    try:
        firmware.place(0, UID_A)
        await watcher.until(has_reads(1))
        firmware.reset_mid_line(1, UID_B)   # half a "+ B" line, then the boot banner
        await watcher.until(lambda items: ("1", UID_B, "present") in watcher.reads())
        assert watcher.health("truncated") and watcher.health("reset")
        assert ("0", UID_A, "removed") not in watcher.reads()
    finally:
        await reader.__aexit__(None, None, None)


async def test_unplugged_and_back(firmware: VirtualFirmware,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    reopened = 0
    real_open = serial_asyncio_fast.open_serial_connection

    async def counted_open(*args: Any, **kwargs: Any) -> Any:
        nonlocal reopened
        reopened += 1
        return await real_open(*args, **kwargs)

    reader, watcher = await connected(firmware, reconnect_interval=0.05)
    try:
        firmware.place(0, UID_A)
        firmware.place(0, UID_B)
        await watcher.until(has_reads(2))
        await firmware.unplug()
        assert firmware.link is not None and not firmware.link.exists()
        await watcher.until(has_health("disconnected"))
        monkeypatch.setattr(serial_asyncio_fast, "open_serial_connection", counted_open)
        # While unplugged: A is taken away, C arrives.
        firmware.lift_silently(0, UID_A)
        firmware.place_silently(1, UID_C)
        # the reader fails to reopen a few times (then "disconnected" once is not by luck)
        async with asyncio.timeout(20):
            while reopened < 3:
                await asyncio.sleep(0.02)
        await firmware.replug()
        assert os.path.realpath(firmware.link) == firmware.slave_path  # found by the symlink
        await watcher.until(lambda items: has_health("reconnected")(items) and has_reads(4)(items))
        assert sorted(watcher.reads()[2:]) == [("0", UID_A, "removed"), ("1", UID_C, "present")]
        assert len(watcher.health("disconnected")) == 1  # reported once, not per retry
    finally:
        await reader.__aexit__(None, None, None)


async def test_port_missing_at_start(tmp_path: Path) -> None:
    link = tmp_path / "ttyLATE"
    reader = open_reader("late", f"serial://{link}", reconnect_interval=0.05)
    async with reader:
        watcher = Watcher(reader)
        await watcher.until(has_health("disconnected"))
        async with VirtualFirmware("L1", link=link) as fw:
            await watcher.until(has_health("reconnected"))
            fw.place(0, UID_A)
            await watcher.until(has_reads(1))
    assert watcher.reads() == [("0", UID_A, "present")]


async def test_a_second_host_on_the_same_reader_is_refused_and_says_so(
        firmware: VirtualFirmware) -> None:
    # two bridges on one reader would each get some of its lines: the port is held
    # exclusively, the second is told, and it gets nothing until the first lets go
    first, watcher = await connected(firmware)
    assert firmware.link is not None
    second = open_reader("again", f"serial://{firmware.link}", reconnect_interval=0.05)
    async with second:
        other = Watcher(second)
        await other.until(has_health("disconnected"))
        assert "lock" in other.health("disconnected")[0].detail.lower()
        firmware.place(0, UID_A)
        await watcher.until(has_reads(1))
        await first.__aexit__(None, None, None)
        await other.until(lambda items: has_health("reconnected")(items) and has_reads(1)(items))
    assert watcher.reads() == [("0", UID_A, "present")]
    assert other.reads() == [("0", UID_A, "present")]  # its link-up inventory


async def test_debounce_hides_a_flicker(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware, debounce=0.3)
    try:
        firmware.place(0, UID_A)
        await watcher.until(has_reads(1))
        firmware.lift(0, UID_A)
        marker = firmware.place(0, UID_A)  # back within the window
        await firmware.wait_delivered(marker)
        firmware.lift(0, UID_A)            # for real this time
        await watcher.until(has_reads(2))
        assert watcher.reads() == [("0", UID_A, "present"), ("0", UID_A, "removed")]
    finally:
        await reader.__aexit__(None, None, None)


async def test_held_back_removal_keeps_its_place_in_order(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware, debounce=5.0)
    try:
        firmware.place(0, UID_A)
        firmware.lift(0, UID_A)    # held back by the long debounce...
        firmware.place(0, UID_B)   # ...but goes out before the next tag's arrival
        await watcher.until(has_reads(3))
        assert watcher.reads() == [("0", UID_A, "present"), ("0", UID_A, "removed"),
                                   ("0", UID_B, "present")]
    finally:
        await reader.__aexit__(None, None, None)


async def test_tap_reader_reports_present_only(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware, kind="tap", debounce=5.0)
    try:
        firmware.place(0, UID_A, hw_time=1000.0)
        firmware.lift(0, UID_A, hw_time=1000.2)
        firmware.place(0, UID_A, hw_time=1001.0)   # same tag again within 5 s: one tap
        firmware.lift(0, UID_A, hw_time=1001.2)
        firmware.place(0, UID_A, hw_time=1010.0)   # a new tap
        marker = firmware.place(0, UID_B, hw_time=1010.5)
        await firmware.wait_delivered(marker)
        await watcher.until(has_reads(3))
        assert watcher.reads() == [("0", UID_A, "present"), ("0", UID_A, "present"),
                                   ("0", UID_B, "present")]
    finally:
        await reader.__aexit__(None, None, None)


async def test_silent_reader_is_reported_and_pinged(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware, heartbeat_timeout=0.2)
    try:
        await watcher.until(has_health("heartbeat_lost"))
        await watcher.until(lambda items: any(c.op is CommandOp.PING for c in firmware.commands))
        firmware.heartbeat()
        await watcher.until(has_health("heartbeat_back"))
    finally:
        await reader.__aexit__(None, None, None)


async def test_closing_ends_iteration(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware)
    await reader.__aexit__(None, None, None)
    async with asyncio.timeout(5):
        await watcher._task
    assert os.path.exists(firmware.slave_path or "")


async def test_firmware_errors_and_wrong_reader_id(firmware: VirtualFirmware) -> None:
    reader, watcher = await connected(firmware, reader_id="S1")  # the firmware says "N1"
    try:
        firmware.error("ANT0", "open", "circuit")
        await watcher.until(has_health("firmware_error"))
        assert watcher.health("firmware_error")[0].detail == "ANT0 open circuit"
        assert watcher.health("reader_id")
        # a host command damaged on the way is answered with ERR BADCMD
        assert isinstance(reader, SerialReader) and reader._writer is not None
        reader._writer.write(b"#PING x*0000\r\n")
        await watcher.until(has_health("firmware_error", 2))
        assert watcher.health("firmware_error")[1].detail == "BADCMD crc_error"
    finally:
        await reader.__aexit__(None, None, None)
