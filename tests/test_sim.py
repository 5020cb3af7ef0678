"""The simulated table end to end at the TagRead level: events -> protocol lines on ptys ->
the real serial path (sim:// backend) -> TagReads, in order, with faults."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.examples import EXAMPLES
from firmware_bridge.readers import ReaderError, ReaderHealth, TagRead, open_reader
from firmware_bridge.readers.base import Reader
from firmware_bridge.sim.firmware import VirtualFirmware
from firmware_bridge.sim.reader import SimReader, parse_sim_url
from firmware_bridge.sim.table import (
    DEFAULT_LAYOUT,
    Fault,
    Physics,
    SimError,
    SimTable,
    get_sim_table,
    read_events,
    sim_tables,
)
from firmware_bridge.tags import TagRegistry

ROOT = Path(__file__).parent.parent
SIM_CONFIG = EXAMPLES / "sim.toml"
REGISTRY = TagRegistry.load([EXAMPLES / "tags-sim.toml"])

Item = TagRead | ReaderHealth


def ev(zone: str, action: str, seat: str | None = None, **what: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"v": 1, "src": "t", "type": "tag", "zone": zone, "action": action}
    if seat is not None:
        event["seat"] = seat
    event.update(what)
    return event


def small_board() -> list[dict[str, Any]]:
    """Board 3, one tag on an antenna at a time (docs/sensing.md): the wallet, North's
    shoe-style hand read (each card across the play spot), an auction on the call spots (a
    STOP marker, two Passes by the same seat: two physical Pass cards, a call taken back;
    each seat's previous call slid off its spot first), a few cards, an unknown tag."""
    north = ["SA", "SK", "HQ", "D7", "C2"]
    events = [ev("board", "present", board=3)]
    for c in north:
        events += [ev("spot", "present", "N", card=c, deck="3"),
                   ev("spot", "removed", "N", card=c, deck="3")]
    events += [
        ev("bid", "present", "N", call="STOP"),
        ev("bid", "removed", "N", call="STOP"),
        ev("bid", "present", "N", call="2NT"),
        ev("bid", "present", "E", call="Pass"),
        ev("bid", "present", "S", call="3NT"),
        ev("bid", "present", "W", call="X"),
        ev("bid", "removed", "N", call="2NT"),
        ev("bid", "present", "N", call="Pass"),
        ev("bid", "removed", "E", call="Pass"),
        ev("bid", "present", "E", call="Pass"),   # E's Pass card again
        ev("bid", "removed", "E", call="Pass"),   # ... taken back
        ev("bid", "present", "E", call="Pass"),   # ... and put down again
        ev("bid", "removed", "S", call="3NT"),
        ev("bid", "present", "S", call="Pass"),
        ev("spot", "present", "E", card="HK", deck="3"),
        ev("spot", "present", "S", card="H2", deck="3"),
        ev("spot", "present", "W", uid="0123456789ABCD", unknown=True),
        ev("spot", "removed", "W", uid="0123456789ABCD", unknown=True),
    ]
    for i, e in enumerate(events):
        e["seq"], e["ts"] = i + 1, 1_700_000_000.0 + i * 0.5
    return events


def expected_reads(table: SimTable, events: Sequence[dict[str, Any]]) -> list[tuple[str, ...]]:
    """What the readers must report for ``events``: (reader, antenna, uid, action) each, with
    the UIDs the registry gives (independently of the table's own choice of copies)."""
    out: list[tuple[str, ...]] = []
    lying: dict[tuple[str, str], list[str]] = {}   # the copies of a call on its call spot
    used: list[str] = []                           # call cards in the order put down
    for e in events:
        reader, antenna = table.where[(e["zone"], e.get("seat") if e["zone"] != "board" else None)]
        if "card" in e:
            uid = REGISTRY.uid_for_card(e["deck"], e["card"])
        elif "call" in e:
            down = lying.setdefault((e["seat"], e["call"]), [])
            if e["action"] == "removed":
                uid = down.pop()
            else:
                # a call slid off the spot lies in the row: the next one is another copy,
                # the one never put down, else the one put down longest ago
                copies: list[str] = []
                while (c := REGISTRY.uid_for_call(e["call"], e["seat"], len(copies))):
                    copies.append(c)
                free = [c for c in copies if c not in down]
                uid = min(free, key=lambda c: used.index(c) if c in used else -1)
                if uid in used:
                    used.remove(uid)
                used.append(uid)
                down.append(uid)
        elif "board" in e:
            uid = REGISTRY.uid_for_board(e["board"])
        else:
            uid = e["uid"]
        assert uid is not None
        out.append((reader, str(antenna), uid, e["action"]))
    return out


class Merged:
    """Every reader of a table, opened through sim:// and merged into one ordered list."""

    def __init__(self, table_id: str, names: Sequence[str], **options: Any) -> None:
        self.readers: list[Reader] = [open_reader(n, f"sim://{table_id}/{n}", **options)
                                      for n in names]
        self.items: list[Item] = []
        self._new = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Merged:
        for reader in self.readers:
            await reader.__aenter__()
            self._tasks.append(asyncio.create_task(self._pump(reader)))
        return self

    async def __aexit__(self, *exc: object) -> None:
        for reader in self.readers:
            await reader.__aexit__(None, None, None)
        await asyncio.gather(*self._tasks)

    async def _pump(self, reader: Reader) -> None:
        async for item in reader:
            self.items.append(item)
            self._new.set()

    def reads(self) -> list[tuple[str, ...]]:
        return [(i.reader, i.antenna, i.uid, i.action) for i in self.items
                if isinstance(i, TagRead)]

    def health(self) -> list[ReaderHealth]:
        return [i for i in self.items if isinstance(i, ReaderHealth)]

    async def until_reads(self, n: int, timeout: float = 20.0) -> None:
        async with asyncio.timeout(timeout):
            while len(self.reads()) < n:
                self._new.clear()
                await self._new.wait()


@pytest.fixture
async def sim_table(tmp_path: Path) -> AsyncIterator[SimTable]:
    table = SimTable.from_config(SIM_CONFIG, link_dir=tmp_path / "links")
    async with table:
        yield table
    assert "1" not in sim_tables()


def test_sim_urls() -> None:
    assert parse_sim_url("sim://1/north") == ("1", "north", {})
    assert parse_sim_url("sim://A12/bidbox?debounce=0.2") == ("A12", "bidbox", {"debounce": "0.2"})
    for bad in ("sim://1", "sim:///north", "sim://1/a/b"):
        with pytest.raises(ReaderError):
            open_reader("x", bad)
    reader = open_reader("x", "sim://1/north", kind="tap")
    assert isinstance(reader, SimReader) and reader.kind == "tap" and reader.debounce == 0.0


def test_layout_from_the_sim_config() -> None:
    table = SimTable.from_config(SIM_CONFIG)
    assert table.table_id == "1"
    assert [s.name for s in table.layout.values()] == [s.name for s in DEFAULT_LAYOUT]
    assert table.where[("bid", "W")] == ("bidbox", 3)
    assert table.where[("board", None)] == ("board", 0)
    assert table.where[("spot", "S")] == ("south", 0)


def test_bad_configs(tmp_path: Path) -> None:
    with pytest.raises(SimError, match="cannot read"):
        SimTable.from_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text('[table]\nid = "2"\n[[readers]]\nname = "n"\nurl = "sim://3/n"\n')
    with pytest.raises(SimError, match="not sim://2/NAME"):
        SimTable.from_config(bad)


async def test_a_board_reaches_the_readers_in_order(sim_table: SimTable) -> None:
    events = small_board()
    async with Merged("1", list(sim_table.layout)) as merged:
        assert await sim_table.wait_hosts()
        report = await sim_table.play(events, rate=0)
        assert report.played == len(events) and not report.skipped
        await merged.until_reads(len(events))
        assert merged.reads() == expected_reads(sim_table, events)
        assert not merged.health()
    # East's three Pass cards put down are three different tags: one lies in the call row,
    # one was taken back (in the hand), one is on the spot
    e_passes = {r[2] for r in merged.reads() if r[1] == "1" and r[0] == "bidbox"}
    assert len(e_passes) == 3
    assert sim_table.peak_tags() == 1 and sim_table.reads()["collisions"] == 0


async def test_board_reader_is_a_tap_reader(sim_table: SimTable) -> None:
    """A wallet is held to the board reader, then put away: nothing stays in its field."""
    async with Merged("1", ["board"]) as merged:
        assert merged.readers[0].kind == "tap"  # from the table's layout (sim.toml)
        await sim_table.wait_hosts(readers=["board"])
        await sim_table.play([ev("board", "present", board=n) for n in (1, 2, 1)])
        await merged.until_reads(3)
    assert [r[2:] for r in merged.reads()] == [
        (REGISTRY.uid_for_board(n), "present") for n in (1, 2, 1)]
    assert sim_table.firmwares["board"].present == {0: []}


async def test_hardware_time_carries_the_events_ts(sim_table: SimTable) -> None:
    events = small_board()[:4]
    async with Merged("1", ["north", "board"]) as merged:
        await sim_table.wait_hosts(readers=["north", "board"])
        await sim_table.play(events, hardware_time=True)
        await merged.until_reads(4)
    assert [i.ts for i in merged.items if isinstance(i, TagRead)] == [e["ts"] for e in events]


async def test_a_core_team_board_plays_through(sim_table: SimTable) -> None:
    """Events made by controller.formats.events from a PBN board (the sim's registry reverse-
    looks-up each card, call and board)."""
    from controller.formats.events import record_events
    from controller.formats.pbn import game_to_record, read_pbn

    record = game_to_record(read_pbn(ROOT / "tests" / "data" / "laws_scenarios.pbn").games[1])
    events = record_events(record, sensing="spot")
    async with Merged("1", list(sim_table.layout)) as merged:
        await sim_table.wait_hosts()
        report = await sim_table.play(events)
        assert report.played == len(events), report.skipped
        await merged.until_reads(len(events))
    reads = merged.reads()
    assert reads == expected_reads(sim_table, events)
    cards = [REGISTRY.lookup(uid) for _, _, uid, _ in reads]
    assert [c.card if c else None for c in cards] == [e.get("card") for e in events]


async def test_faults_are_reported_and_nothing_is_lost(sim_table: SimTable) -> None:
    events = small_board()
    faults: dict[int, tuple[str, Fault]] = {
        1: ("north", "garbage"), 3: ("north", "drop"), 6: ("north", "bad_crc"),
        12: ("bidbox", "reset_mid_line"), 15: ("bidbox", "drop"), 18: ("east", "reset")}
    async with Merged("1", list(sim_table.layout)) as merged:
        await sim_table.wait_hosts()
        report = await sim_table.play(events, faults=faults)
        assert report.played == len(events) and not report.skipped, report.skipped
        await merged.until_reads(len(events))
        # Each event's read is there; order is kept within each reader.
        got, want = merged.reads(), expected_reads(sim_table, events)
        assert sorted(got) == sorted(want)
        for reader in sim_table.layout:
            assert [r for r in got if r[0] == reader] == [r for r in want if r[0] == reader]
    kinds = {(h.reader, h.kind) for h in merged.health()}
    assert {("north", "noise"), ("north", "gap"), ("north", "resync"), ("north", "crc_error"),
            ("bidbox", "truncated"), ("bidbox", "reset"), ("bidbox", "gap"),
            ("east", "reset")} <= kinds


async def test_unplugged_sim_reader_comes_back(sim_table: SimTable) -> None:
    async with Merged("1", ["west"], reconnect_interval=0.05) as merged:
        await sim_table.wait_hosts(readers=["west"])
        await sim_table.play([ev("spot", "present", "W", card="SA", deck="1")])
        await merged.until_reads(1)
        await sim_table.inject("west", "unplug")
        await sim_table.play([ev("spot", "removed", "W", card="SA", deck="1"),
                              ev("spot", "present", "W", card="SK", deck="1")])
        await sim_table.inject("west", "replug")
        await merged.until_reads(3)
    sa, sk = REGISTRY.uid_for_card("1", "SA"), REGISTRY.uid_for_card("1", "SK")
    assert merged.reads()[1:] == [("west", "0", sa, "removed"), ("west", "0", sk, "present")]
    kinds = [h.kind for h in merged.health()]
    assert "disconnected" in kinds and "reconnected" in kinds


async def test_events_it_cannot_play_are_reported(sim_table: SimTable) -> None:
    bad = [
        ev("spot", "present", "N", card="SA", deck="nope"),          # no such deck, no uid
        ev("spot", "present", "Q", card="SA", deck="1"),             # no such seat
        ev("bid", "wobble", "N", call="1C"),                         # bad action
        {"v": 1, "type": "button", "button": "claim", "seat": "N"},  # no button handler
        ev("board", "present", board="x"),
    ]
    report = await sim_table.play(bad)
    assert report.played == 0 and len(report.skipped) == len(bad)
    assert "no tag for card SA of deck nope" in report.skipped[0]
    with pytest.raises(SimError):
        await sim_table.play(bad[:1], strict=True)
    pressed: list[str] = []
    report = await sim_table.play(bad[3:4], on_button=lambda e: pressed.append(e["button"]))
    assert report.played == 1 and pressed == ["claim"]


async def test_one_bidding_box_runs_out_of_cards(sim_table: SimTable) -> None:
    events = [ev("bid", "present", "N", call="1C") for _ in range(2)]
    report = await sim_table.play(events)
    assert report.played == 1 and "no 1C card left" in report.skipped[0]


async def test_the_sim_backend_makes_a_default_table_on_demand() -> None:
    assert "77" not in sim_tables()
    reader = open_reader("north", "sim://77/north")
    try:
        async with reader:
            table = get_sim_table("77", create=False)
            await table.wait_hosts(readers=["north"])
            await table.play([ev("spot", "present", "N", card="DA", deck="2")])
            async with asyncio.timeout(10):
                item = await anext(aiter(reader))
        assert isinstance(item, TagRead) and item.uid == REGISTRY.uid_for_card("2", "DA")
    finally:
        table.close()
    assert "77" not in sim_tables()


def test_read_events_file(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        json.dumps(ev("board", "present", board=1)) + "\n"
        + json.dumps({"topic": "bridge/1/event", "payload": ev("board", "present", board=2)})
        + "\n" + json.dumps({"topic": "bridge/1/state", "payload": {"x": 1}}) + "\n\n"
        + "{not json\n[1, 2]\n")
    events, problems = read_events(path)
    assert [e["board"] for e in events] == [1, 2]
    assert len(problems) == 2 and ":5: not JSON" in problems[0]


def test_sim_cli_plays_a_file_to_a_reader_in_another_process(tmp_path: Path) -> None:
    """``bridge-table sim play`` in a subprocess; this process reads its ptys by symlink."""
    events = small_board()
    path = tmp_path / "board.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    links = tmp_path / "links"
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "sim", "play", str(path), "--config",
         str(SIM_CONFIG), "--link-dir", str(links), "--rate", "50", "--exit", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        paths = [json.loads(proc.stdout.readline()) for _ in range(6)]
        assert {p["reader"] for p in paths} == {"north", "east", "south", "west", "bidbox",
                                                "board"}

        async def read_all() -> list[tuple[str, ...]]:
            readers = [open_reader(p["reader"], p["url"], kind=p["kind"], debounce=0)
                       for p in paths]
            out: list[tuple[str, ...]] = []
            for reader in readers:
                await reader.__aenter__()

            async def pump(reader: Reader) -> None:
                async for item in reader:
                    if isinstance(item, TagRead):
                        out.append((item.reader, item.antenna, item.uid, item.action))
            tasks = [asyncio.create_task(pump(r)) for r in readers]
            async with asyncio.timeout(30):
                while len(out) < len(events):
                    await asyncio.sleep(0.05)
            for reader in readers:
                await reader.__aexit__(None, None, None)
            await asyncio.gather(*tasks)
            return out

        reads = asyncio.run(read_all())
        assert proc.stdout.readline().decode().strip() == f"played {len(events)} of " \
                                                          f"{len(events)} events"
        assert proc.stdout.readline().decode().strip() == (
            "antennas: at most 1 tag(s) on one, 0 collision(s), 0 late read(s), 0 lost")
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    table = SimTable.from_config(SIM_CONFIG)
    assert sorted(reads) == sorted(expected_reads(table, events))


def test_sim_cli_run_prints_paths_and_stops_on_sigint(tmp_path: Path) -> None:
    import signal

    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "sim", "run", "--config", str(SIM_CONFIG),
         "--link-dir", str(tmp_path / "links")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().decode().split() for _ in range(6)]
        assert [line[0] for line in lines] == ["reader"] * 6
        assert {line[1]: line[4] for line in lines}["board"] == "tap"
        for line in lines:
            assert Path(line[3]).resolve() == Path(line[2])  # the symlink leads to the pty
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not any((tmp_path / "links").iterdir())  # the readers are unplugged on the way out


def test_sim_cli_bad_config(tmp_path: Path) -> None:
    from firmware_bridge.sim.cli import main

    assert main(["run", "--config", str(tmp_path / "missing.toml")]) == 2


@pytest.mark.parametrize("content", [None, b"\x00\x01binary", "dir"])
def test_sim_cli_play_of_a_file_it_cannot_read_starts_no_reader(
        tmp_path: Path, content: bytes | str | None, capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_bridge.sim.cli import main

    events = tmp_path / "events.jsonl"
    if isinstance(content, bytes):
        events.write_bytes(content)
    elif content == "dir":
        events.mkdir()
    assert main(["play", str(events), "--link-dir", str(tmp_path / "links")]) == 2
    out = capsys.readouterr()
    assert "reader " not in out.out  # no reader was started, no path printed
    assert str(events) in out.err and len(out.err.strip().splitlines()) == 1


@pytest.mark.parametrize("option", [["--tag-limit", "0"], ["--tag-limit", "two"],
                                    ["--miss-rate", "1"], ["--miss-rate", "-0.1"],
                                    ["--miss-rate", "x"], ["--collision", "boom"]])
def test_sim_cli_bad_physics(option: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    from firmware_bridge.sim.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["run", *option])
    assert stopped.value.code == 2
    assert option[0] in capsys.readouterr().err


# --- the antennas' physics (docs/sensing.md) --------------------------------------------------

async def test_a_second_card_on_a_spot_is_not_read_until_the_first_leaves(
        sim_table: SimTable) -> None:
    """One tag at a time: the card laid on a card is a collision the reader reports (ERR),
    nothing is removed on its account, and it is read once it lies alone."""
    sa, sk = REGISTRY.uid_for_card("1", "SA"), REGISTRY.uid_for_card("1", "SK")
    async with Merged("1", ["north"]) as merged:
        await sim_table.wait_hosts(readers=["north"])
        await sim_table.play([ev("spot", "present", "N", card="SA", deck="1"),
                              ev("spot", "present", "N", card="SK", deck="1")])
        await sim_table.play([ev("spot", "removed", "N", card="SA", deck="1")])
        await merged.until_reads(3)
    assert merged.reads() == [("north", "0", sa, "present"), ("north", "0", sa, "removed"),
                              ("north", "0", sk, "present")]
    errors = [h.detail for h in merged.health() if h.kind == "firmware_error"]
    assert errors == ["ANT0 collision_not_resolved"]
    assert sim_table.reads() == {"peak_tags": 2, "collisions": 1, "late_reads": 0,
                                 "lost_reads": 0}


async def test_a_reader_that_hangs_on_a_collision_says_nothing(tmp_path: Path) -> None:
    table = SimTable.from_config(SIM_CONFIG, link_dir=tmp_path / "links",
                                 physics=Physics(collision="silence"))
    sa = REGISTRY.uid_for_card("1", "SA")
    async with table, Merged("1", ["north"]) as merged:
        await table.wait_hosts(readers=["north"])
        await table.play([ev("spot", "present", "N", card="SA", deck="1"),
                          ev("spot", "present", "N", card="SK", deck="1"),
                          ev("spot", "removed", "N", card="SK", deck="1"),
                          ev("spot", "removed", "N", card="SA", deck="1")])
        await merged.until_reads(2)
    assert merged.reads() == [("north", "0", sa, "present"), ("north", "0", sa, "removed")]
    assert not [h for h in merged.health() if h.kind == "firmware_error"]


async def test_a_pile_reader_reads_a_pile(tmp_path: Path) -> None:
    """The pile inventory is an option: a reader built for it (tag_limit 16) reads a hand
    lying on its antenna, the default one does not."""
    hand = ["SA", "SK", "SQ", "SJ", "ST", "S9", "S8", "S7", "S6", "S5", "S4", "S3", "S2"]
    pile = [ev("spot", "present", "N", card=c, deck="1") for c in hand]
    for limit, read in ((16, 13), (1, 1)):
        table = SimTable.from_config(SIM_CONFIG, link_dir=tmp_path / f"l{limit}",
                                     physics=Physics(tag_limit=limit))
        async with table, Merged("1", ["north"]) as merged:
            await table.wait_hosts(readers=["north"])
            await table.play(pile)
            await merged.until_reads(read)
            await asyncio.sleep(0.2)
        assert len(merged.reads()) == read
        assert table.reads()["collisions"] == 13 - read


def test_misses_make_reads_late_and_lose_a_card_passed_too_fast() -> None:
    """miss_rate: the first read waits for a round the tag answers; a tag over the antenna
    for fewer rounds than it misses is never read. Seeded: the same draws every run."""
    def passes(fw: VirtualFirmware) -> list[int | None]:
        seqs = []
        for n in range(200):
            uid = f"04{n:012X}"
            seqs.append(fw.place(0, uid, dwell=1, hw_time=100.0))
            fw.lift(0, uid)
        return seqs

    fw = VirtualFirmware("N", tag_limit=1, miss_rate=0.5, seed=7)
    seqs = passes(fw)
    lost = seqs.count(None)
    assert lost == fw.lost_reads and 60 < lost < 140   # about half of 200, at 0.5
    assert fw.peak_tags == 1 and fw.collisions == 0
    assert passes(VirtualFirmware("N", miss_rate=0.5, seed=7)) == seqs
    lying = VirtualFirmware("N", miss_rate=0.5, seed=7)
    for n in range(50):
        assert lying.place(0, f"05{n:012X}") is not None
        assert lying.lift(0, f"05{n:012X}") is not None
    assert lying.lost_reads == 0 and lying.late_reads > 10
    with pytest.raises(ValueError):
        VirtualFirmware("N", miss_rate=1.0)
    with pytest.raises(ValueError):
        VirtualFirmware("N", tag_limit=0)
