"""Problems found in deal and record files: values for what was skipped, and one exception tree.

Readers never raise for a broken file: they report a ``FormatError`` (line and message) and
go on with the next board. ``BadRecord`` is raised only by the functions that turn one
game into a ``BoardRecord`` when the caller asks for something the game cannot give.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FormatError", "FormatsError", "BadRecord"]


@dataclass(frozen=True, slots=True)
class FormatError:
    """One problem in a file: 1-based ``line`` (0 when unknown), and what is wrong."""

    line: int
    message: str
    board: int | None = None

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        board = f" (board {self.board})" if self.board is not None else ""
        return f"{where}{board}: {self.message}"


class FormatsError(Exception):
    """Base of the formats package's exceptions."""


class BadRecord(FormatsError, ValueError):
    """A game or board that cannot be turned into what was asked for."""

    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.error = FormatError(line, message)
