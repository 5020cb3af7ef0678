"""Tag registry: loading, lookups both ways, broken files, conflicts, enrolment, CLI."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from firmware_bridge.cli_tags import main
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.readers import ReaderHealth, TagRead, open_reader
from firmware_bridge.sim.firmware import VirtualFirmware
from firmware_bridge.tags import (
    CALL_ORDER,
    CARD_ORDER,
    EnrollError,
    Enrollment,
    RegistryError,
    RegistryFile,
    TagInfo,
    TagRegistry,
    check_files,
    sim_registry,
)

HW = EXAMPLES
SIM_FILE = HW / "tags-sim.toml"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_committed_sim_registry_is_the_generated_one(tmp_path: Path) -> None:
    assert SIM_FILE.read_text() == sim_registry(tmp_path / "x.toml").to_toml()


def test_sim_registry_lookups() -> None:
    reg = TagRegistry.load([SIM_FILE])
    assert len(reg) == 36 * 52 + 36 + 4 * (35 + 12 + 4 + 4 + 2)
    uid = reg.uid_for_card("7", "HQ")
    assert uid is not None and uid == uid.upper()
    assert reg.lookup(uid) == TagInfo(uid, "card", card="HQ", deck="7")
    assert reg.lookup(uid.lower()) == reg.lookup(uid)
    board = reg.uid_for_board(12)
    assert board is not None and reg.lookup(board) == TagInfo(board, "board", board=12)
    second_pass = reg.uid_for_call("Pass", "E", copy=1)
    assert second_pass is not None and second_pass != reg.uid_for_call("Pass", "E")
    assert reg.lookup(second_pass) == TagInfo(second_pass, "call", call="Pass", box="E")
    stop = reg.uid_for_call("STOP", "W")
    assert stop is not None and reg.lookup(stop) == TagInfo(stop, "marker", marker="STOP", box="W")
    assert reg.uid_for_call("1NT", "S", copy=1) is None  # one 1NT card per box
    assert reg.lookup("0011223344") is None
    assert reg.uid_for_card("99", "SA") is None and reg.uid_for_board(37) is None
    # every UID is unique across the whole set
    assert len({i.uid for i in reg.entries()}) == len(reg)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("version = 1\n[boards\n", "not valid TOML"),
        ("version = 2\n", "version 2"),
        ("[boards]\n\"1\" = \"XYZ\"\n", "is not a UID"),
        ("[boards]\n\"0\" = \"04D10001000000\"\n", "not a board number"),
        ("[decks.one]\nSZ = \"04C10001000000\"\n", "not a card"),
        ("[bidboxes.N]\n\"8C\" = \"04C10001000000\"\n", "not a call"),
        ("[bidboxes.N]\nPass = [\"04C10001000000\", 7]\n", "is not a UID"),
        ("[stuff]\na = 1\n", "unknown sections"),
        ("decks = 3\n", "[decks] must be a table"),
    ],
)
def test_broken_files_give_clear_errors(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "tags-bad.toml", text)
    with pytest.raises(RegistryError) as caught:
        TagRegistry.load([path])
    assert message in str(caught.value) and str(path) in str(caught.value)


def test_missing_and_binary_files(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="no such registry file"):
        TagRegistry.load([tmp_path / "nope.toml"])
    (tmp_path / "bin.toml").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(RegistryError, match="not valid TOML"):
        TagRegistry.load([tmp_path / "bin.toml"])


def test_conflicting_files(tmp_path: Path) -> None:
    a = write(tmp_path / "a.toml", '[decks.red]\nSA = "04AABBCCDD0001"\n')
    b = write(tmp_path / "b.toml", '[boards]\n"3" = "04aabbccdd0001"\n')
    with pytest.raises(RegistryError, match="04AABBCCDD0001 is both card SA of deck red"):
        TagRegistry.load([a, b])
    lenient = TagRegistry.load([a, b], strict=False)
    assert lenient.conflicts and lenient.lookup("04AABBCCDD0001") is not None
    problems = check_files([a, b])
    assert any("is both" in p for p in problems)
    assert any("deck red lacks 51 card(s)" in p for p in problems)
    # The same entry in two files is not a conflict.
    c = write(tmp_path / "c.toml", '[decks.red]\nSA = "04AABBCCDD0001"\n')
    assert len(TagRegistry.load([a, c])) == 1


def test_round_trip_through_toml(tmp_path: Path) -> None:
    reg = RegistryFile(tmp_path / "r.toml")
    reg.decks["club deck 1"] = {c: f"04{i:02X}000000AA00" for i, c in enumerate(CARD_ORDER)}
    reg.bidboxes["box-1"] = {"Pass": ["04FF0000000001", "04FF0000000002"],
                             "1NT": ["04FF0000000003"], "ALERT": ["04FF0000000004"]}
    reg.boards[7] = "04EE0000000007"
    reg.write()
    again = RegistryFile.read(reg.path)
    assert (again.decks, again.bidboxes, again.boards) == (reg.decks, reg.bidboxes, reg.boards)
    assert not list(tmp_path.glob(".r.toml.*"))  # no temporary left behind


# ---------------------------------------------------------------- enrolment


async def reads_of(items: list[TagRead | ReaderHealth]) -> AsyncIterator[TagRead | ReaderHealth]:
    for item in items:
        yield item


def tap(uid: str) -> TagRead:
    return TagRead("enroll", "0", uid, "present", 0.0)


async def test_enrolment_refuses_duplicates_and_foreign_tags(tmp_path: Path) -> None:
    target = RegistryFile(tmp_path / "tags-club.toml")
    known = TagRegistry([TagInfo("04FFFFFFFFFF01", "board", board=1)])
    said: list[str] = []
    enrol = Enrollment.deck(target, "club-1", known, say=said.append)
    uids = [f"04000000{i:02X}0000" for i in range(52)]
    items: list[TagRead | ReaderHealth] = [tap(uids[0]), TagRead("e", "0", uids[0], "removed", 0),
                                           tap(uids[0]),              # the same card again
                                           tap("04FFFFFFFFFF01"),     # a board wallet's tag
                                           *[tap(u) for u in uids[1:]]]
    await enrol.run(reads_of(items))
    assert said[0] == "[1/52] put SA on the reader"
    assert "  1/52 SA = 04000000000000" in said
    assert any("REFUSED 04000000000000: already read in this enrolment as SA" in s
               for s in said)
    assert any("REFUSED 04FFFFFFFFFF01: already registered as board wallet 1" in s for s in said)
    assert "[12/52] put SK on the reader" not in said and "[2/52] put SK on the reader" in said
    assert any(s.startswith("  52/52 C2 = ") for s in said)
    reg = TagRegistry.load([target.path])
    assert reg.uid_for_card("club-1", "SA") == uids[0]
    assert reg.uid_for_card("club-1", "C2") == uids[51]
    assert reg.uid_for_card("club-1", "HA") == uids[13]


async def test_interrupted_enrolment_writes_nothing(tmp_path: Path) -> None:
    path = write(tmp_path / "tags-club.toml", '[boards]\n"1" = "04D10001000000"\n')
    before = path.read_bytes()
    target = RegistryFile.read(path)
    enrol = Enrollment.deck(target, "club-2", TagRegistry(target.entries()), say=lambda s: None)
    with pytest.raises(EnrollError, match="after 3/52 tags"):
        await enrol.run(reads_of([tap(f"04000000{i:02X}0000") for i in range(3)]))
    assert path.read_bytes() == before


def test_enrolling_a_name_twice_is_refused(tmp_path: Path) -> None:
    target = sim_registry(tmp_path / "t.toml", boards=2)
    with pytest.raises(EnrollError, match="deck '1' is already registered"):
        Enrollment.deck(target, "1", TagRegistry())
    with pytest.raises(EnrollError, match="already registered"):
        Enrollment.bidbox(target, "N", TagRegistry())
    with pytest.raises(EnrollError, match=r"board wallets \[2\]"):
        Enrollment.boards(target, [2, 3], TagRegistry())


async def test_bidbox_and_board_enrolment(tmp_path: Path) -> None:
    target = RegistryFile(tmp_path / "t.toml")
    enrol = Enrollment.bidbox(target, "table-3-N", TagRegistry(),
                              {"Pass": 3, "X": 1, "XX": 1}, say=lambda s: None)
    n = len(CALL_ORDER) + 2 + 2  # Pass twice more, STOP, ALERT
    assert len(enrol.steps) == n
    await enrol.run(reads_of([tap(f"04B00000{i:02X}0000") for i in range(n)]))
    boards = Enrollment.boards(target, [1, 2], TagRegistry(target.entries()), say=lambda s: None)
    await boards.run(reads_of([tap("04D00000000001"), tap("04D00000000002")]))
    reg = TagRegistry.load([target.path])
    assert reg.uid_for_call("Pass", "table-3-N", copy=2) is not None
    assert reg.lookup(reg.uid_for_call("ALERT") or "") is not None
    assert reg.uid_for_board(2) == "04D00000000002"


async def test_enroll_cli_through_the_real_serial_path(tmp_path: Path) -> None:
    """``bridge-table tags enroll`` reading a deck from reader firmware on a pty."""
    registry = write(tmp_path / "tags-club.toml", '[boards]\n"1" = "04D10001000000"\n')
    uids = [f"0455{i:02X}00112233" for i in range(52)]
    async with VirtualFirmware("ENR", link=tmp_path / "ttyENROLL") as fw:
        async def player() -> None:
            await fw.host_seen.wait()
            await asyncio.sleep(0.05)
            fw.place(0, uids[0])
            fw.lift(0, uids[0])
            fw.place(0, "04D10001000000")  # a board wallet: refused
            fw.lift(0, "04D10001000000")
            for uid in uids[1:]:
                fw.place(0, uid)
                fw.lift(0, uid)
        play = asyncio.create_task(player())
        code = await asyncio.to_thread(main, [
            "enroll", "--registry", str(registry), "--deck", "club-A",
            "--reader", f"serial://{tmp_path / 'ttyENROLL'}?debounce=0"])
        await play
    assert code == 0
    reg = TagRegistry.load([registry])
    assert [reg.uid_for_card("club-A", c) for c in CARD_ORDER] == uids
    assert reg.uid_for_board(1) == "04D10001000000"


def test_list_and_check_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(SIM_FILE)]) == 0
    assert "ok: 2136 tags" in capsys.readouterr().out
    assert main(["list", str(SIM_FILE)]) == 0
    out = capsys.readouterr().out
    assert "board wallets: 36 (1-36)" in out and "deck 36: 52/52 cards" in out
    bad = write(tmp_path / "bad.toml", '[decks.x]\nSA = "04C10001000000"\n')
    assert main(["check", str(SIM_FILE), str(bad)]) == 2
    out = capsys.readouterr().out
    assert "deck x lacks 51" in out and "is both" in out
    assert main(["list", str(tmp_path / "missing.toml")]) == 2
    assert "no such registry file" in capsys.readouterr().err


def test_enroll_cli_with_a_bad_reader_url(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["enroll", "--registry", str(tmp_path / "r.toml"), "--deck", "d",
                 "--reader", "carrier-pigeon://x"]) == 1
    assert "unknown scheme" in capsys.readouterr().err


def test_open_reader_for_enrolment_is_lazy() -> None:
    reader = open_reader("enroll", "serial:///dev/null")
    assert reader.name == "enroll"


async def test_enroll_boards_cli(tmp_path: Path) -> None:
    registry = tmp_path / "tags-wallets.toml"
    uids = ["04AB0000000001", "04AB0000000002", "04AB0000000003"]
    async with VirtualFirmware("ENR", link=tmp_path / "ttyW") as fw:
        async def player() -> None:
            await fw.host_seen.wait()
            await asyncio.sleep(0.05)
            for uid in uids:
                fw.place(0, uid)
                fw.lift(0, uid)
        play = asyncio.create_task(player())
        code = await asyncio.to_thread(main, [
            "enroll-boards", "--registry", str(registry), "--boards", "4-5,9",
            "--reader", f"serial://{tmp_path / 'ttyW'}", "--kind", "tap"])
        await play
    assert code == 0
    reg = TagRegistry.load([registry])
    assert [reg.uid_for_board(n) for n in (4, 5, 9)] == uids


def test_written_registry_is_readable_by_others(tmp_path: Path) -> None:
    import stat

    from firmware_bridge.tags import RegistryFile

    path = tmp_path / "tags.toml"
    RegistryFile(path).write()
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    path.chmod(0o640)
    RegistryFile(path).write()
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
