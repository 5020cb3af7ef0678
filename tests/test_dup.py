"""DUP / BRI / DGE: hand-built records, the files in tests/data, broken records, round trips."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.boards.deals import read_deals
from controller.formats.dup import (
    DUP_RECORD,
    DupControl,
    DupFormatError,
    card_from_number,
    card_number,
    decode_control,
    encode_control,
    encode_dge,
    read_bri,
    read_deal_file,
    read_dge,
    read_dup,
    write_bri,
    write_deal_file,
    write_dge,
    write_dup,
)
from controller.laws.cards import FULL_DECK, Card, Deal, Seat, board_dealer
from controller.service.engines import build_engine

DATA = Path(__file__).parent / "data"

#: The deals of tests/data/four-boards.* (written out by hand from the PBN of each board).
FOUR = {
    1: "N:T6.JT64.943.J743 A873.K5.AJ652.Q5 J5.AQ73.QT87.A98 KQ942.982.K.KT62",
    2: "N:J7532.J8.A764.63 T8.Q973.QJ9.KT84 A964.T642.85.AQ9 KQ.AK5.KT32.J752",
    3: "N:AJ.JT.A3.Q987653 T7652.A8.KQT6.AT K984.96432.97.J2 Q3.KQ75.J8542.K4",
    4: "N:J874.QJ532.3.T87 AT532.K4.AT8.J94 KQ96.A6.J97652.K .T987.KQ4.AQ6532",
}
RANKS = "AKQJT98765432"


def bri_by_hand(pbn: str) -> bytes:
    """The BRI part built independently of the module: 01 = SA .. 52 = C2, N E S."""
    hands = pbn[2:].split()
    out = ""
    for hand in hands[:3]:
        nums = []
        for suit_no, ranks in enumerate(hand.split(".")):
            nums += [suit_no * 13 + RANKS.index(r) + 1 for r in ranks]
        out += "".join(f"{n:02d}" for n in sorted(nums))
    return out.encode()


def dge_by_hand(pbn: str) -> bytes:
    out = b""
    for hand in pbn[2:].split():
        for sym, ranks in zip(b"\x06\x03\x04\x05", hand.split("."), strict=True):
            out += bytes([sym]) + ranks.encode()
    return out


def random_deal(rng: random.Random) -> Deal:
    cards = list(FULL_DECK)
    rng.shuffle(cards)
    return Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})


def test_card_numbers_follow_the_published_order() -> None:
    assert card_number(Card.parse("SA")) == 1
    assert card_number(Card.parse("S2")) == 13
    assert card_number(Card.parse("HA")) == 14
    assert card_number(Card.parse("DK")) == 28
    assert card_number(Card.parse("C2")) == 52
    assert [card_from_number(n) for n in range(1, 53)] == sorted(
        FULL_DECK, key=lambda c: (-c.suit, -c.rank))


def test_the_published_example_record() -> None:
    # the BRI line of the Convert note's example, and the deal it names
    bri = b"180437272408224221062507175150321516492941264031464543351128302039140152133403"
    deal = read_bri(bri).deals[1]
    assert deal.to_pbn() == "N:J987.JT7643.A4.Q .KQ2.QT9.AK98543 AQ42.A8.KJ762.J2 KT653.95.853.T76"
    # its DGE part: 17 bytes a hand ("♠J987♥JT7643♦A4♣Q" for North)
    dge = encode_dge(deal)
    assert dge[:17] == b"\x06J987\x03JT7643\x04A4\x05Q"
    assert len(dge) == 68


def test_control_bytes_of_a_set_of_32() -> None:
    assert encode_control(DupControl(True, False, 1, 1, 32)) == b"YN1  1 32 "
    control, problems = decode_control(b"YN1  1 32 ", board=1, offset=146)
    assert problems == [] and control == DupControl(True, False, 1, 1, 32)


@pytest.mark.parametrize("ext", ["dup", "bri", "dge"])
def test_data_files_read_as_written_by_hand(data_dir: Path, ext: str) -> None:
    f = read_deal_file(data_dir / f"four-boards.{ext}")
    assert f.problems == ()
    assert f.records == 4
    assert {b: d.to_pbn() for b, d in f.deals.items()} == FOUR


def test_dup_file_bytes_are_the_hand_built_records(data_dir: Path) -> None:
    data = (data_dir / "four-boards.dup").read_bytes()
    assert len(data) == 4 * DUP_RECORD
    for k, pbn in enumerate(FOUR.values()):
        rec = data[k * DUP_RECORD:(k + 1) * DUP_RECORD]
        assert rec[:78] == bri_by_hand(pbn)
        assert rec[78:146] == dge_by_hand(pbn)
        assert rec[146:] == b"YN1  1 4  "


def test_bri_and_dge_files_are_padded_to_128(data_dir: Path) -> None:
    for ext, part in (("bri", 78), ("dge", 68)):
        data = (data_dir / f"four-boards.{ext}").read_bytes()
        assert len(data) == 4 * 128
        assert set(data[part:128]) <= {0x20, 0x00}


def test_unpadded_bri_and_dge_records_are_read_too() -> None:
    deals = {b: Deal.from_pbn(p) for b, p in FOUR.items()}
    assert read_bri(write_bri(deals, padded=False)).deals == deals
    assert read_dge(write_dge(deals, padded=False)).deals == deals


def test_broken_dup_reports_each_record_and_keeps_what_it_can(data_dir: Path) -> None:
    f = read_deal_file(data_dir / "broken.dup")
    by_board: dict[int, list[str]] = {}
    for p in f.problems:
        by_board.setdefault(p.board, []).append(f"{p.offset}:{p.detail}")
    # board 2: card 5 of the BRI part is "99" at byte 156 + 8
    assert any(s.startswith("164:") and "99" in s for s in by_board[2])
    # ... and the sound DGE part stands in for it
    assert f.deals[2].to_pbn() == FOUR[2]
    # board 3: the DGE part swaps two spades between N and E; the BRI part is kept
    assert any("disagree" in s and "SA" in s and "ST" in s for s in by_board[3])
    assert f.deals[3].to_pbn() == FOUR[3]
    # board 4: the file stops 100 bytes into the record
    assert any(s.startswith("568:") and "cut short" in s for s in by_board[4])
    assert f.deals[4].to_pbn() == FOUR[4]
    assert 1 not in by_board and f.deals[1].to_pbn() == FOUR[1]


def test_record_with_both_parts_broken_is_left_out_and_named() -> None:
    deals = {b: Deal.from_pbn(p) for b, p in FOUR.items()}
    data = bytearray(write_dup(deals))
    data[DUP_RECORD + 2:DUP_RECORD + 4] = b"xx"            # board 2, BRI card 2
    data[DUP_RECORD + 78] = ord("Z")                       # board 2, DGE byte 0
    data[2 * DUP_RECORD + 147] = ord("?")                  # board 3, backwards flag
    f = read_dup(bytes(data))
    assert 2 not in f.deals and f.broken_boards == {2}
    offsets = {(p.board, p.offset) for p in f.problems}
    assert (2, DUP_RECORD + 2) in offsets
    assert (2, DUP_RECORD + 78) in offsets
    assert (3, 2 * DUP_RECORD + 147) in offsets
    assert set(f.deals) == {1, 3, 4}


@pytest.mark.parametrize("garbage", [b"", b"\x00" * 10, b"hello world" * 30, bytes(range(256)),
                                     b"\r\n" * 100])
def test_garbage_never_crashes(garbage: bytes) -> None:
    for reader in (read_dup, read_bri, read_dge):
        f = reader(garbage)
        for p in f.problems:
            assert p.offset >= 0 and p.board >= 1 and p.detail


def test_bri_with_a_card_twice_names_both_places() -> None:
    deal = Deal.from_pbn(FOUR[1])
    rec = bytearray(write_bri({1: deal}, padded=False))
    rec[30:32] = rec[0:2]
    f = read_bri(bytes(rec))
    assert f.broken_boards == {1}
    (p,) = f.problems
    assert p.offset == 30 and "twice" in p.detail and "byte 0" in p.detail


def test_dup_numbering_starts_at_the_lowest_board() -> None:
    deals = {17 + k: random_deal(random.Random(k)) for k in range(3)}
    data = write_dup(deals, copies=2)
    f = read_dup(data)
    assert f.deals == deals and f.problems == ()
    assert f.control == DupControl(True, False, 17, 2, 19)
    assert read_dup(data, first_board=1).deals.keys() == {1, 2, 3}


def test_control_disagreeing_with_record_count_is_reported() -> None:
    deals = {1: Deal.from_pbn(FOUR[1]), 2: Deal.from_pbn(FOUR[2])}
    f = read_dup(write_dup(deals) + write_dup({3: Deal.from_pbn(FOUR[3])}))
    assert any("holds 3 records" in p.detail for p in f.problems)


def test_writers_refuse_what_the_format_cannot_hold(tmp_path: Path) -> None:
    short = Deal.from_pbn("N:AKQ... - - -")
    with pytest.raises(DupFormatError):
        write_dup({1: short})
    with pytest.raises(DupFormatError):
        write_bri({1: Deal.from_pbn(FOUR[1]), 3: Deal.from_pbn(FOUR[3])})
    with pytest.raises(DupFormatError):
        write_deal_file(tmp_path / "x.txt", {1: Deal.from_pbn(FOUR[1])})


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 40), st.integers(1, 5),
       st.sampled_from(["dup", "bri", "dge"]))
def test_round_trip(seed: int, first: int, n: int, ext: str) -> None:
    rng = random.Random(seed)
    deals = {first + k: random_deal(rng) for k in range(n)}
    writer = {"dup": write_dup, "bri": write_bri, "dge": write_dge}[ext]
    reader = {"dup": read_dup, "bri": read_bri, "dge": read_dge}[ext]
    f = reader(writer(deals)) if ext == "dup" else reader(writer(deals), first_board=first)
    assert f.problems == ()
    assert f.deals == deals


def test_the_first_board_of_a_bri_or_dge_set_is_an_option(tmp_path: Path) -> None:
    # boards 33-36 of a set: a BRI/DGE file does not say where it starts
    for name in ("four-boards.bri", "four-boards.dge"):
        assert sorted(read_deals(DATA / name).deals) == [1, 2, 3, 4]
        read = read_deals(DATA / name, first_board=33)
        assert sorted(read.deals) == [33, 34, 35, 36]
        assert read.deals[33].deal == read_deals(DATA / name).deals[1].deal
        # dealer and vulnerability follow the board number (Law 2), not the record
        assert read.deals[34].dealer is board_dealer(34)
    session = tmp_path / "s.toml"
    session.write_text(f'[session]\nevent = "E"\ndeals = "{DATA / "four-boards.bri"}"\n'
                       'deals_first_board = 33\n[movement]\ntype = "teams"\nrounds = 1\n'
                       'boards_per_round = 4\nfirst_board = 33\n')
    engine = build_engine(session=session)
    assert sorted(engine.deals) == [33, 34, 35, 36]
    report = tmp_path / "r"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "verify", "--deals",
                           str(DATA / "four-boards.bri"), "--first-board", "33", "--simulate",
                           "--boards", "4", "--no-faults", "-q", "--report", str(report)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert [b["board"] for b in json.loads(report.with_suffix(".json").read_text())[
        "boards"]] == [33, 34, 35, 36]
