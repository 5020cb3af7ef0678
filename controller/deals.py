"""Load a deals file (PBN, or a dealing machine's DUP / BRI / DGE) into ``DealInfo`` by board.

Problems in the file (a broken board, a bad record) come back as messages with their line
or byte position; the sound boards are still loaded.
"""

from __future__ import annotations

from pathlib import Path

from .laws.cards import board_dealer, board_vulnerability
from .laws.record import DealInfo

__all__ = ["DealsError", "load_deals"]


class DealsError(Exception):
    """The deals file cannot be read at all (missing, unreadable, unknown format)."""


def load_deals(path: str | Path) -> tuple[dict[int, DealInfo], list[str]]:
    p = Path(path)
    ext = p.suffix.lower()
    try:
        if ext in (".dup", ".bri", ".dge"):
            from .formats.dup import DupFormatError, read_deal_file
            try:
                dealfile = read_deal_file(p)
            except DupFormatError as exc:
                raise DealsError(str(exc)) from None
            deals = {
                n: DealInfo(n, board_dealer(n), board_vulnerability(n), deal)
                for n, deal in dealfile.deals.items()
            }
            return deals, [str(problem) for problem in dealfile.problems]
        from .formats.pbn import deals_by_board, read_pbn
        with open(p, encoding="utf-8", errors="replace") as fp:
            pbn = read_pbn(fp)
        deals = dict(deals_by_board(pbn))
        return deals, [str(error) for error in pbn.errors]
    except OSError as exc:
        raise DealsError(f"cannot read deals file {p}: {exc.strerror or exc}") from None
