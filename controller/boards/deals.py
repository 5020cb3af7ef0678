"""Load a deals file (PBN, or a dealing machine's DUP / BRI / DGE) into ``DealInfo`` by board.

Problems in the file (a broken board, a bad record) come back as messages with their line
or byte position; the sound boards are still loaded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from controller.formats.source import binary_reason
from controller.laws.cards import (
    Deal,
    ParseError,
    Seat,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from controller.laws.record import DealInfo

__all__ = ["DealsError", "DealsRead", "read_deals", "load_deals"]


class DealsError(Exception):
    """The deals file cannot be read at all (missing, unreadable, unknown format)."""


@dataclass(frozen=True)
class DealsRead:
    """What a deals file gave: the sound boards, the problems met (with their line or byte
    position), and the boards whose records were broken."""

    deals: dict[int, DealInfo]
    problems: list[str]
    broken: frozenset[int] = frozenset()


def read_deals(path: str | Path, first_board: int | None = None, *,
               deal_tags_only: bool = False) -> DealsRead:
    """A deals file by extension: ``.dup``, ``.bri``, ``.dge`` (a dealing machine's), else PBN.
    ``first_board``: the number of a BRI/DGE/DUP file's first record (a BRI or DGE file
    does not say it: boards 33-64 would load as 1-32); a PBN file numbers its boards.
    ``deal_tags_only``: of a PBN file read only the tags a deal needs (Board, Dealer,
    Vulnerable, Deal), not the auctions and play (``bridge-table replay``); a file the
    quick reader is not sure of (comments, inherited ``#`` tags, a tag it cannot read) is
    read whole as without it."""
    p = Path(path)
    ext = p.suffix.lower()
    try:
        if ext in (".dup", ".bri", ".dge"):
            from controller.formats.dup import DupFormatError, read_deal_file
            try:
                dealfile = read_deal_file(p, first_board=first_board)
            except DupFormatError as exc:
                raise DealsError(str(exc)) from None
            deals = {
                n: DealInfo(n, board_dealer(n), board_vulnerability(n), deal)
                for n, deal in dealfile.deals.items()
            }
            return DealsRead(deals, [str(problem) for problem in dealfile.problems],
                             frozenset(dealfile.broken_boards))
        data = p.read_bytes()
        reason = binary_reason(data)
        if reason is not None:
            raise DealsError(f"{p}: not a PBN deals file: {reason}")
        text = data.decode("utf-8", errors="replace")
        if deal_tags_only:
            quick = pbn_deal_tags(text)
            if quick is not None:
                return DealsRead(quick, [])
        from controller.formats.pbn import deals_by_board, read_pbn
        pbn = read_pbn(text)
        return DealsRead(dict(deals_by_board(pbn)), [str(error) for error in pbn.errors])
    except OSError as exc:
        raise DealsError(f"cannot read deals file {p}: {exc.strerror or exc}") from None


def load_deals(path: str | Path, first_board: int | None = None, *,
               deal_tags_only: bool = False) -> tuple[dict[int, DealInfo], list[str]]:
    """The boards of a session's deals file and the problems met reading it.

    A file with no usable board is refused (``DealsError``): the controller and ``replay``
    would otherwise check every hand scan against nothing, silently."""
    read = read_deals(path, first_board, deal_tags_only=deal_tags_only)
    if not read.deals:
        detail = f" ({'; '.join(read.problems[:3])})" if read.problems else ""
        raise DealsError(f"{path}: no usable board in the deals file{detail}")
    return read.deals, read.problems


_TAG = re.compile(r'\[([A-Za-z0-9_]+)\s+"([^"\\]*)"\]\s*')
_DEAL_TAGS = frozenset({"Board", "Dealer", "Vulnerable", "Deal"})
_SEATS = {s.name: s for s in Seat}


def pbn_deal_tags(text: str) -> dict[int, DealInfo] | None:
    """The deals of a PBN text from its Board, Dealer, Vulnerable and Deal tags alone,
    as ``deals_by_board`` gives them (markings override Law 2, the first deal of a board
    number kept, games without a deal left out). None when the text has anything this
    quick reader does not handle exactly as ``read_pbn`` does (a comment, an escape, an
    inherited ``#`` value, a tag it cannot read, a bad value): read it whole then."""
    if "{" in text or ";" in text or "\\" in text:
        return None
    out: dict[int, DealInfo] = {}
    tags: dict[str, str] = {}
    seen = False

    def finish() -> bool:
        if not seen:
            return True
        sure, info = _deal_info(tags)
        if not sure:
            return False
        if info is not None and info.board not in out:
            out[info.board] = info
        return True

    for line in text.splitlines():
        stripped = line.strip()
        if not stripped:
            if not finish():
                return None
            tags, seen = {}, False
            continue
        if stripped[0] == "%":
            continue
        if stripped[0] != "[":
            continue  # auction and play tokens: not needed for the deals
        m = _TAG.fullmatch(stripped)
        if m is None:
            return None
        seen = True
        name, value = m.group(1), m.group(2)
        if name in _DEAL_TAGS:
            if name in tags:
                return None
            tags[name] = value
    return out if finish() else None


def _deal_info(tags: dict[str, str]) -> tuple[bool, DealInfo | None]:
    """(sure, the game's deal or None for a game without one); not sure: the whole
    reader decides."""
    board_text = tags.get("Board", "").strip()
    if not (board_text.isascii() and board_text.isdigit()) or int(board_text) < 1:
        return False, None
    board = int(board_text)
    deal_text = tags.get("Deal", "").strip()
    if not deal_text or deal_text == "?":
        return True, None
    dealer_text = tags.get("Dealer", "").strip()
    vul_text = tags.get("Vulnerable", "").strip()
    if "#" in (deal_text, dealer_text, vul_text):
        return False, None
    try:
        dealer = _SEATS[dealer_text] if dealer_text and dealer_text != "?" \
            else board_dealer(board)
        vul = Vulnerability.parse(vul_text) if vul_text and vul_text != "?" \
            else board_vulnerability(board)
        deal = Deal.from_pbn(deal_text)
    except (KeyError, ParseError):
        return False, None
    if sum(len(h) for h in deal.hands) != len(frozenset().union(*deal.hands)):
        return False, None
    if not any(deal.hands):
        return True, None
    return True, DealInfo(board, dealer, vul, deal)
