"""The movement's schedule for a round: which boards each table plays.

A board read at a table that is not in its schedule is ``WRONG_BOARD`` (Law 15). The file
is TOML, one entry a table, a list of boards or ranges::

    [tables]
    "1" = [1, 2, 3]
    "2" = "4-6"
    "3" = ["7-8", 12]
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

__all__ = ["ScheduleError", "boards_of", "load_schedule", "parse_schedule", "read_toml"]


class ScheduleError(ValueError):
    """A schedule file that cannot be used; the message names the file and the entry."""


def boards_of(value: Any, where: str) -> set[int]:
    """A board, a range like '4-6', or a list of both, as a set of board numbers."""
    items = value if isinstance(value, list) else [value]
    boards: set[int] = set()
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool) and item >= 1:
            boards.add(item)
            continue
        if isinstance(item, str):
            text = item.strip()
            low, dash, high = text.partition("-")
            try:
                a, b = int(low), int(high) if dash else int(low)
            except ValueError:
                raise ScheduleError(f"{where}: {item!r} is not a board or a range like "
                                    f"'4-6'") from None
            if a < 1 or b < a:
                raise ScheduleError(f"{where}: {item!r} is not a range of board numbers")
            boards.update(range(a, b + 1))
            continue
        raise ScheduleError(f"{where}: {item!r} is not a board number")
    return boards


def parse_schedule(data: dict[str, Any], source: str = "schedule") -> dict[str, frozenset[int]]:
    tables = data.get("tables")
    if not isinstance(tables, dict) or not tables:
        raise ScheduleError(f"{source}: needs a [tables] section naming each table's boards")
    out: dict[str, frozenset[int]] = {}
    for table, value in tables.items():
        boards = boards_of(value, f"{source}: tables.{table}")
        if not boards:
            raise ScheduleError(f"{source}: tables.{table} names no board")
        out[str(table)] = frozenset(boards)
    return out


def read_toml(path: Path, error: type[ValueError], what: str = "TOML") -> dict[str, Any]:
    """A TOML file's contents; a file that cannot be read, is not text or not TOML raises
    ``error`` with a message naming the file (never a traceback for a binary file)."""
    try:
        with open(path, "rb") as fp:
            return tomllib.load(fp)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{path}: not {what}: {exc}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: not {what}: not UTF-8 text") from None


def load_schedule(path: str | Path) -> dict[str, frozenset[int]]:
    p = Path(path)
    return parse_schedule(read_toml(p, ScheduleError), str(p))
