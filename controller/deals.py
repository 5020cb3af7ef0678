"""Load a deals file (PBN, or a dealing machine's DUP / BRI / DGE) into ``DealInfo`` by board.

Problems in the file (a broken board, a bad record) come back as messages with their line
or byte position; the sound boards are still loaded.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .laws.cards import board_dealer, board_vulnerability
from .laws.record import DealInfo

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


def read_deals(path: str | Path, first_board: int | None = None) -> DealsRead:
    """A deals file by extension: ``.dup``, ``.bri``, ``.dge`` (a dealing machine's), else PBN.
    ``first_board``: the number of a BRI/DGE/DUP file's first record (a BRI or DGE file
    does not say it: boards 33-64 would load as 1-32); a PBN file numbers its boards."""
    p = Path(path)
    ext = p.suffix.lower()
    try:
        if ext in (".dup", ".bri", ".dge"):
            from .formats.dup import DupFormatError, read_deal_file
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
        from .formats.pbn import deals_by_board, read_pbn
        with open(p, encoding="utf-8", errors="replace") as fp:
            pbn = read_pbn(fp)
        return DealsRead(dict(deals_by_board(pbn)), [str(error) for error in pbn.errors])
    except OSError as exc:
        raise DealsError(f"cannot read deals file {p}: {exc.strerror or exc}") from None


def load_deals(path: str | Path, first_board: int | None = None
               ) -> tuple[dict[int, DealInfo], list[str]]:
    """The boards of a session's deals file and the problems met reading it.

    A file with no usable board is refused (``DealsError``): the controller and ``replay``
    would otherwise check every hand scan against nothing, silently."""
    read = read_deals(path, first_board)
    if not read.deals:
        detail = f" ({'; '.join(read.problems[:3])})" if read.problems else ""
        raise DealsError(f"{path}: no usable board in the deals file{detail}")
    return read.deals, read.problems
