"""A CSV cell that a spreadsheet shows as typed, never runs (CSV formula injection).

A text cell starting with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is read as
a formula by spreadsheets (``=HYPERLINK(...)``, ``+cmd|' /C calc'!A0``): such a text gets a
leading ``'``, as OWASP's CSV injection advice says. Numbers stay numbers (a score of -110
is a number, not a formula). Used by every CSV the project writes from names or text
someone else typed: the console's ruling log, the session's travellers and ranking.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["csv_cell"]

#: what makes a spreadsheet read a cell as a formula
FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell: None is empty, a text that would start a formula gets a
    leading ``'``, anything else is as it is."""
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_START):
        return "'" + value
    return value
