"""NFC reader backend through nfcpy's ``udp`` driver, with an emulated NTAG213 on the far end.

nfcpy's udp driver sends each ISO 14443-A command as a datagram ``"106A <hex>"`` and takes the
answer from the same kind of datagram; :class:`EmulatedNtag213` answers like the tag would: the
ATQA to SENS_REQ, the cascade of anticollision and select for a 7-byte UID, nothing to the
authenticate command (an NTAG goes mute), the version to GET_VERSION, pages to READ. While no
tag is "in the field", it stays silent, like an empty field.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Callable
from functools import reduce
from operator import xor
from typing import Any

import pytest

from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader
from firmware_bridge.readers.nfc import NfcReader, parse_nfc_url

UID_A = "04A1B2C3D4E5F6"
UID_B = "04112233445566"
NTAG213_VERSION = bytes.fromhex("0004040201000F03")


class EmulatedNtag213(asyncio.DatagramProtocol):
    """Whichever NTAG213 is in the field (``uid``, or None for none)."""

    def __init__(self) -> None:
        self.uid: bytes | None = None
        self.commands: list[bytes] = []
        self.transport: Any = None
        self._state = "idle"
        self._memory = bytearray(45 * 4)

    def put(self, uid_hex: str | None) -> None:
        self.uid = None if uid_hex is None else bytes.fromhex(uid_hex)
        self._state = "idle"
        if self.uid is not None:
            u = self.uid
            self._memory[0:4] = bytes([u[0], u[1], u[2], 0x88 ^ u[0] ^ u[1] ^ u[2]])
            self._memory[4:8] = u[3:7]
            self._memory[8] = reduce(xor, u[3:7])
            self._memory[12:16] = bytes.fromhex("E1101200")  # capability container
            self._memory[16:20] = bytes.fromhex("0300FE00")  # empty NDEF message

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # a datagram transport (its class is private to asyncio)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        if data.startswith(b"RFOFF"):
            self._state = "idle"
            return
        try:
            brty, hexdata = data.split()
            command = bytes.fromhex(hexdata.decode())
        except ValueError:
            return
        self.commands.append(command)
        answer = self._answer(command)
        if answer is not None and self.transport is not None:
            self.transport.sendto(brty + b" " + answer.hex().encode(), addr)

    def _answer(self, cmd: bytes) -> bytes | None:
        u = self.uid
        if u is None:
            return None  # an empty field answers nothing
        if cmd in (b"\x26", b"\x52"):  # SENS_REQ / ALL_REQ
            self._state = "ready"
            return bytes.fromhex("4400")
        if self._state == "mute":
            return None
        cl1 = bytes([0x88, u[0], u[1], u[2]])
        cl2 = u[3:7]
        if cmd == b"\x93\x20":  # anticollision, cascade level 1
            return cl1 + bytes([reduce(xor, cl1)])
        if cmd[:2] == b"\x93\x70":  # select CL1
            return b"\x04" if cmd[2:6] == cl1 else None  # SAK: UID not complete
        if cmd == b"\x95\x20":
            return cl2 + bytes([reduce(xor, cl2)])
        if cmd[:2] == b"\x95\x70":
            if cmd[2:6] != cl2:
                return None
            self._state = "active"
            return b"\x00"  # SAK: Type 2 Tag
        if self._state != "active":
            return None
        if cmd == b"\x60":  # GET_VERSION
            return NTAG213_VERSION
        if cmd[:1] == b"\x30" and len(cmd) == 2:  # READ four pages
            page = cmd[1] % 45
            data = (self._memory + self._memory[:16])[page * 4:page * 4 + 16]
            return bytes(data)
        # AUTHENTICATE and anything else: an NTAG213 goes mute until the next SENS_REQ
        self._state = "mute"
        return None


@pytest.fixture
async def tag_field() -> AsyncIterator[tuple[EmulatedNtag213, int]]:
    loop = asyncio.get_running_loop()
    transport, protocol = await loop.create_datagram_endpoint(
        EmulatedNtag213, local_addr=("127.0.0.1", 0), family=socket.AF_INET)
    port = transport.get_extra_info("sockname")[1]
    yield protocol, port
    transport.close()


async def collect(reader: NfcReader, until: Callable[[list[TagRead | ReaderHealth]], bool],
                  items: list[TagRead | ReaderHealth], timeout: float = 20.0) -> None:
    async with asyncio.timeout(timeout):
        async for item in reader:
            items.append(item)
            if until(items):
                return


def reads(items: list[TagRead | ReaderHealth]) -> list[tuple[str, str]]:
    return [(i.uid, i.action) for i in items if isinstance(i, TagRead)]


def test_nfc_urls() -> None:
    assert parse_nfc_url("nfc://tty:AMA0:pn532") == ("tty:AMA0:pn532", {})
    assert parse_nfc_url("nfc://usb:054c:06c1?debounce=2") == ("usb:054c:06c1", {"debounce": "2"})
    reader = open_reader("pocket", "nfc://udp:127.0.0.1:5?debounce=2&antenna=1")
    assert isinstance(reader, NfcReader)
    assert (reader.device, reader.debounce, reader.antenna, reader.kind) == (
        "udp:127.0.0.1:5", 2.0, "1", "tap")
    for bad in ("nfc://", "nfc://usb?colour=red", "nfc://usb?debounce=soon"):
        with pytest.raises(ReaderError):
            open_reader("x", bad)


async def test_taps_are_read_once_each(tag_field: tuple[EmulatedNtag213, int]) -> None:
    field, port = tag_field
    reader = open_reader("pocket", f"nfc://udp:127.0.0.1:{port}", debounce=0.5)
    items: list[TagRead | ReaderHealth] = []
    async with reader:
        field.put(UID_A)
        await collect(reader, lambda it: len(reads(it)) >= 1, items)
        await asyncio.sleep(0.5)  # held to the reader: still one read
        field.put(None)
        field.put(UID_B)
        await collect(reader, lambda it: len(reads(it)) >= 2, items)
    assert reads(items) == [(UID_A, "present"), (UID_B, "present")]
    read = items[0]
    assert isinstance(read, TagRead) and (read.reader, read.antenna) == ("pocket", "0")
    # nfcpy really identified an NTAG: it asked for the version and read pages.
    assert b"\x60" in field.commands and any(c[:1] == b"\x30" for c in field.commands)


async def test_a_quick_second_tap_is_debounced(tag_field: tuple[EmulatedNtag213, int]) -> None:
    field, port = tag_field
    reader = open_reader("pocket", f"nfc://udp:127.0.0.1:{port}", debounce=60.0)
    items: list[TagRead | ReaderHealth] = []
    async with reader:
        field.put(UID_A)
        await collect(reader, lambda it: len(reads(it)) >= 1, items)
        field.put(None)
        await asyncio.sleep(0.3)
        field.put(UID_A)   # the same tag again, well within the window
        await asyncio.sleep(0.5)
        field.put(UID_B)
        await collect(reader, lambda it: len(reads(it)) >= 2, items)
    assert reads(items) == [(UID_A, "present"), (UID_B, "present")]


async def test_as_inventory_reader_removal_is_reported(
        tag_field: tuple[EmulatedNtag213, int]) -> None:
    field, port = tag_field
    reader = open_reader("tray", f"nfc://udp:127.0.0.1:{port}", kind="inventory", debounce=0)
    items: list[TagRead | ReaderHealth] = []
    async with reader:
        field.put(UID_A)
        await collect(reader, lambda it: len(reads(it)) >= 1, items)
        field.put(None)
        await collect(reader, lambda it: len(reads(it)) >= 2, items)
    assert reads(items) == [(UID_A, "present"), (UID_A, "removed")]


async def test_a_missing_device_is_reported_not_raised() -> None:
    reader = open_reader("pocket", "nfc://tty:NOPE:pn532", reconnect_interval=0.1)
    items: list[TagRead | ReaderHealth] = []
    async with reader:
        await collect(reader, lambda it: bool(it), items)
    assert isinstance(items[0], ReaderHealth) and items[0].kind == "disconnected"
    assert "tty:NOPE:pn532" in items[0].detail
