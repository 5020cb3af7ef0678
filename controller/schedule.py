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

__all__ = ["ScheduleError", "load_schedule", "parse_schedule"]


class ScheduleError(ValueError):
    """A schedule file that cannot be used; the message names the file and the entry."""


def _boards(value: Any, where: str) -> set[int]:
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
        boards = _boards(value, f"{source}: tables.{table}")
        if not boards:
            raise ScheduleError(f"{source}: tables.{table} names no board")
        out[str(table)] = frozenset(boards)
    return out


def load_schedule(path: str | Path) -> dict[str, frozenset[int]]:
    p = Path(path)
    try:
        with open(p, "rb") as fp:
            data = tomllib.load(fp)
    except OSError as exc:
        raise ScheduleError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ScheduleError(f"{p}: not TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # tomllib decodes the bytes itself: a binary file
        raise ScheduleError(f"{p}: not TOML (not UTF-8 text at byte {exc.start})") from None
    return parse_schedule(data, str(p))
