"""The memory:// reader (firmware_bridge.readers.memory): python-can's virtual bus for tags."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator

import pytest

from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, memory, open_reader
from firmware_bridge.readers.memory import MemoryReader, parse_memory_url

pytestmark = pytest.mark.timeout(30)


@pytest.fixture(autouse=True)
def fresh_channels() -> Iterator[None]:
    memory.reset()
    yield
    memory.reset()


async def take(reader: MemoryReader, n: int) -> list[TagRead | ReaderHealth]:
    items: list[TagRead | ReaderHealth] = []
    async for item in reader:
        items.append(item)
        if len(items) == n:
            break
    return items


def test_url_names_the_channel_and_takes_kind_and_debounce() -> None:
    assert parse_memory_url("memory://5/north?kind=tap") == ("5/north", {"kind": "tap"})
    reader = open_reader("north", "memory://5/north?kind=tap&debounce=0.5")
    assert isinstance(reader, MemoryReader)
    assert (reader.kind, reader.debounce, reader.channel.name) == ("tap", 0.5, "5/north")
    assert open_reader("n", "memory://x", kind="tap", debounce=0.1).kind == "tap"


@pytest.mark.parametrize("url, words", [
    ("memory://", "memory://CHANNEL"),
    ("memory://5/north?speed=3", "unknown memory reader option 'speed'"),
    ("memory://5/north?debounce=soon", "not a number"),
    ("memory://5/north?kind=sideways", "kind must be 'inventory' or 'tap'"),
])
def test_bad_urls_are_reader_errors(url: str, words: str) -> None:
    with pytest.raises(ReaderError, match=words):
        open_reader("north", url)


async def test_reads_written_to_the_channel_reach_the_open_reader() -> None:
    channel = memory.channel("5/north")
    async with open_reader("north", "memory://5/north") as reader:
        assert isinstance(reader, MemoryReader)
        channel.see("0", "04A1B2C3", ts=10.0)
        channel.remove("0", "04A1B2C3", ts=11.0)
        channel.report("crc_error", "frame 7")
        items = await take(reader, 3)
    assert items == [TagRead("north", "0", "04A1B2C3", "present", 10.0),
                     TagRead("north", "0", "04A1B2C3", "removed", 11.0),
                     ReaderHealth("north", "crc_error", "frame 7", 1)]


async def test_what_lies_on_the_channel_before_opening_is_seen_on_opening() -> None:
    channel = memory.channel("t/board")
    channel.see("0", "04D7", ts=1.0)
    assert len(channel.backlog) == 1
    async with open_reader("board", "memory://t/board") as reader:
        assert isinstance(reader, MemoryReader)
        assert await take(reader, 1) == [TagRead("board", "0", "04D7", "present", 1.0)]
    assert channel.backlog == [] and channel.readers == []


async def test_tap_kind_and_debounce_apply_as_for_hardware() -> None:
    channel = memory.channel("box")
    async with open_reader("box", "memory://box?kind=tap&debounce=5") as reader:
        assert isinstance(reader, MemoryReader)
        channel.see("2", "04B1", ts=1.0)
        channel.see("2", "04B1", ts=2.0)      # the same tap again within the debounce
        channel.remove("2", "04B1", ts=2.5)   # a tap reader sees no removals
        channel.see("2", "04B1", ts=9.0)
        items = await take(reader, 2)
    assert [(i.uid, i.ts) for i in items if isinstance(i, TagRead)] == \
        [("04B1", 1.0), ("04B1", 9.0)]


async def test_a_write_from_another_thread_is_delivered_on_the_readers_loop() -> None:
    channel = memory.channel("threads")
    async with open_reader("r", "memory://threads") as reader:
        assert isinstance(reader, MemoryReader)
        worker = threading.Thread(target=channel.see, args=("1", "04FF"), kwargs={"ts": 3.0})
        worker.start()
        items = await take(reader, 1)
        worker.join()
    assert items == [TagRead("r", "1", "04FF", "present", 3.0)]


async def test_a_refusing_channel_fails_the_open_and_wait_open_counts_opens() -> None:
    channel = memory.channel("flaky")
    channel.refuse = "unplugged"
    with pytest.raises(OSError, match="unplugged"):
        async with open_reader("r", "memory://flaky"):
            pass
    channel.refuse = None
    waiting = asyncio.ensure_future(channel.wait_open())
    await asyncio.sleep(0)
    assert not waiting.done()
    async with open_reader("r", "memory://flaky"):
        await waiting
        assert channel.opened == 1


def test_bad_action_is_refused() -> None:
    with pytest.raises(ReaderError, match="action must be"):
        memory.channel("x").see("0", "04A1", "lifted")  # type: ignore[arg-type]
