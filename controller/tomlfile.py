"""Reading the project's TOML files (table configs, tag registries, sessions, schedules,
policies, credentials, the dealing station): one loader, one way of saying what is wrong.

A file that cannot be read, is not UTF-8 text or is not TOML gives a :class:`TomlProblem`
value naming the file, the line and column, and the reason; :func:`load_toml` raises it
inside :class:`TomlFileError`, :func:`read_toml` as the caller's own exception type. Never a
traceback for a binary or truncated file. Standard library only, so the firmware bridge
uses it without loading the controller.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = ["TomlFileError", "TomlProblem", "load_toml", "loads_toml", "read_toml"]

Reason = Literal["missing", "unreadable", "not-utf8", "syntax"]

# tomllib ends its messages with the place: "Invalid value (at line 3, column 7)"
_PLACE = re.compile(r"\s*\(at line (\d+), column (\d+)\)$|\s*\(at end of document\)$")


@dataclass(frozen=True)
class TomlProblem:
    """Why a TOML file cannot be used, and where (``line``/``column`` count from 1)."""

    file: str
    reason: Reason
    detail: str
    line: int | None = None
    column: int | None = None

    def describe(self, what: str = "valid TOML") -> str:
        """The problem without the file name: ``not valid TOML: Invalid value (at line 3,
        column 7)``; ``what`` names the kind of file (``a TOML session file``)."""
        if self.reason in ("missing", "unreadable"):
            return f"cannot read the file: {self.detail}"
        place = f" (at line {self.line}, column {self.column})" if self.column else \
            f" (at line {self.line})" if self.line else ""
        return f"not {what}: {self.detail}{place}"

    def __str__(self) -> str:
        return f"{self.file}: {self.describe()}"


class TomlFileError(ValueError):
    """A TOML file that cannot be used; ``problem`` says why and where."""

    def __init__(self, problem: TomlProblem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def loads_toml(data: str | bytes, file: str) -> dict[str, Any]:
    """Parse a TOML document already read (``file`` names it in problems)."""
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise TomlFileError(TomlProblem(file, "not-utf8", "not UTF-8 text",
                                            data.count(b"\n", 0, error.start) + 1)) from None
    else:
        text = data
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = _PLACE.search(message)
        line: int | None = None
        column: int | None = None
        if found is not None:
            message = message[:found.start()]
            if found.group(1):
                line, column = int(found.group(1)), int(found.group(2))
            else:
                line = text.count("\n") + 1
        raise TomlFileError(TomlProblem(file, "syntax", message, line, column)) from None


def load_toml(path: str | Path) -> dict[str, Any]:
    """A TOML file's contents; raises :class:`TomlFileError`."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        raise TomlFileError(TomlProblem(str(path), "missing", "no such file")) from None
    except OSError as error:
        raise TomlFileError(TomlProblem(str(path), "unreadable",
                                        str(error.strerror or error))) from None
    return loads_toml(raw, str(path))


def read_toml(path: str | Path, error: Callable[[str], Exception],
              what: str = "valid TOML") -> dict[str, Any]:
    """:func:`load_toml`, its problem raised as ``error("FILE: problem")`` (a module's own
    exception type: ``ConfigError``-like ones catch :class:`TomlFileError` instead)."""
    try:
        return load_toml(path)
    except TomlFileError as failure:
        raise error(f"{path}: {failure.problem.describe(what)}") from None
