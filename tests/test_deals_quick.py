"""The deal-tags-only reader of a PBN deals file (``bridge-table replay``'s) gives exactly
the deals the whole reader gives, or hands the file to the whole reader."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from shared_data import real_dir

from controller.boards.deals import load_deals, pbn_deal_tags, read_deals
from controller.boards.generate import random_board
from controller.formats.pbn import pbn_text

DATA = Path(__file__).resolve().parent / "data"


def whole(path: Path) -> object:
    return read_deals(path).deals


@pytest.mark.parametrize("name", sorted(p.name for p in DATA.glob("*.pbn")))
def test_the_quick_reader_agrees_with_the_whole_one_on_the_test_files(name: str) -> None:
    path = DATA / name
    quick = pbn_deal_tags(path.read_text(encoding="utf-8", errors="replace"))
    assert quick is None or quick == whole(path)
    assert read_deals(path, deal_tags_only=True).deals == whole(path)


def test_the_quick_reader_agrees_on_the_real_files() -> None:
    files = sorted(real_dir().rglob("*.pbn"))
    assert files
    read = 0
    for path in files:
        quick = pbn_deal_tags(path.read_text(encoding="utf-8", errors="replace"))
        if quick is not None:
            read += 1
            assert quick == whole(path), path
    assert read  # some files are plain enough for it


def test_generated_boards_are_read_quickly_and_alike(tmp_path: Path) -> None:
    rng = random.Random(5)
    path = tmp_path / "deals.pbn"
    path.write_text(pbn_text([random_board(rng, n).record for n in range(1, 41)]))
    quick = pbn_deal_tags(path.read_text())
    assert quick is not None and len(quick) == 40
    assert quick == whole(path)


@pytest.mark.parametrize("damage", [
    ('[Board "2"]', '[Board "two"]'),        # a board number the quick reader cannot read
    ('[Dealer "E"]', '[Dealer "Q"]'),        # a bad dealer
    ('[Vulnerable "NS"]', '[Vulnerable "#"]'),  # inherited from the game before
    ('[Deal "E:', '[Deal "E:A'),             # a card in two hands or a bad hand
    ('[Event ""]', '{a comment} [Event ""]'),
])
def test_a_file_the_quick_reader_is_unsure_of_is_read_whole(
        tmp_path: Path, damage: tuple[str, str]) -> None:
    rng = random.Random(6)
    text = pbn_text([random_board(rng, n).record for n in range(1, 5)])
    old, new = damage
    assert old in text
    text = text.replace(old, new, 1)
    assert pbn_deal_tags(text) is None
    path = tmp_path / "deals.pbn"
    path.write_text(text)
    quick_deals, quick_problems = load_deals(path, deal_tags_only=True)
    whole_deals, whole_problems = load_deals(path)
    assert (quick_deals, quick_problems) == (whole_deals, whole_problems)
