"""The movement's schedule for a round: which boards each table plays.

A board read at a table that is not in its schedule is ``WRONG_BOARD`` (Law 15). The file
is TOML, one entry a table, a list of boards or ranges::

    [tables]
    "1" = [1, 2, 3]
    "2" = "4-6"
    "3" = ["7-8", 12]
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.session.movement import Movement, MovementError, Round, TableRound
from controller.session.names import clean_name
from controller.tomlfile import TomlFileError, loads_toml, read_toml

__all__ = ["ScheduleError", "boards_of", "load_schedule", "parse_schedule", "read_toml",
           "load_movement", "parse_movement", "Movement", "Round", "TableRound",
           "ScheduledSession"]


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


def load_schedule(path: str | Path) -> dict[str, frozenset[int]]:
    p = Path(path)
    return parse_schedule(read_toml(p, ScheduleError, "TOML"), str(p))


# -- the whole session's movement (every round), for the broadcast relay ------------------
#
# The one-round form above stays as it is (the controller's --schedule reads it). The same
# file may instead, or as well, name every round of the session, and the session itself::
#
#     [session]
#     id = "club-2026-11-30-eve"      # optional: else derived from the file's bytes
#     event = "Monday pairs"          # optional, shown by the vugraph
#
#     [pairs]                         # optional: names shown by the vugraph
#     "1" = "Ann Lee - Bo Tran"
#
#     [[round]]
#     number = 1
#     [round.tables]
#     "1" = { ns = 1, ew = 5, boards = "1-2" }
#     "2" = [3, 4]                    # boards only
#
# A file with only ``[tables]`` is a one-round movement. ``load_movement`` gives an object
# with the same names as the session file's ``Session`` (``id``, ``event``, ``movement``),
# its movement the session's own ``controller.session.movement.Movement``, so the relay
# takes either.


@dataclass(frozen=True)
class ScheduledSession:
    id: str
    movement: Movement
    event: str | None = None
    pairs: Mapping[str, str] = field(default_factory=dict)


def _pair(value: Any, where: str) -> int | None:
    """A pair or team number: an integer from 1, or its digits as a string."""
    if value is None:
        return None
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ScheduleError(f"{where}: {value!r} is not a pair or team number")
    return value


def _table_round(value: Any, where: str) -> TableRound:
    if isinstance(value, dict):
        if "boards" not in value:
            raise ScheduleError(f"{where}: needs boards")
        boards = boards_of(value["boards"], f"{where}.boards")
        ns, ew = _pair(value.get("ns"), f"{where}.ns"), _pair(value.get("ew"), f"{where}.ew")
    else:
        boards, ns, ew = boards_of(value, where), None, None
    if not boards:
        raise ScheduleError(f"{where} names no board")
    return TableRound(ns, ew, tuple(sorted(boards)))


def parse_movement(data: dict[str, Any], source: str = "schedule",
                   default_id: str = "") -> ScheduledSession:
    rounds_data = data.get("round")
    rounds: list[Round] = []
    if rounds_data is not None:
        if not isinstance(rounds_data, list) or not rounds_data:
            raise ScheduleError(f"{source}: [[round]] must be a list of rounds")
        for i, rd in enumerate(rounds_data, 1):
            if not isinstance(rd, dict):
                raise ScheduleError(f"{source}: round {i} is not a table")
            number = rd.get("number", i)
            if not isinstance(number, int) or isinstance(number, bool) or number < 1:
                raise ScheduleError(f"{source}: round {i}: number must be a positive integer")
            tables = rd.get("tables")
            if not isinstance(tables, dict) or not tables:
                raise ScheduleError(f"{source}: round {number} needs [round.tables]")
            rounds.append(Round(number, {
                str(t): _table_round(v, f"{source}: round {number} tables.{t}")
                for t, v in tables.items()}))
    elif "tables" in data:
        one = parse_schedule(data, source)
        rounds.append(Round(1, {t: TableRound(None, None, tuple(sorted(b)))
                                for t, b in one.items()}))
    else:
        raise ScheduleError(f"{source}: needs [[round]] entries or a [tables] section")
    session = data.get("session", {})
    if not isinstance(session, dict):
        raise ScheduleError(f"{source}: [session] must be a table")
    sid = session.get("id", default_id)
    if not isinstance(sid, str) or not sid.strip():
        raise ScheduleError(f"{source}: session.id must be a non-empty string")
    event = session.get("event")
    if event is not None and not isinstance(event, str):
        raise ScheduleError(f"{source}: session.event must be a string")
    pairs = data.get("pairs", {})
    if not isinstance(pairs, dict) or not all(isinstance(v, str) for v in pairs.values()):
        raise ScheduleError(f"{source}: [pairs] maps a pair number to the players' names")
    try:
        movement = Movement(tuple(rounds))
    except MovementError as exc:  # a pair at two tables, a board twice at a table...
        raise ScheduleError(f"{source}: {exc}") from None
    return ScheduledSession(sid.strip(), movement, None if event is None else clean_name(event),
                            {str(k): clean_name(v) for k, v in pairs.items()})


def load_movement(path: str | Path) -> ScheduledSession:
    """The whole session's movement from a schedule file (every round, or the one-round
    form); the session id is the file's ``session.id`` or derived from its bytes."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise ScheduleError(f"{p}: cannot read: {exc.strerror or exc}") from None
    try:
        data = loads_toml(raw, str(p))
    except TomlFileError as exc:
        raise ScheduleError(f"{p}: {exc.problem.describe('TOML')}") from None
    default_id = f"{p.stem}-{hashlib.sha256(raw).hexdigest()[:12]}"
    return parse_movement(data, str(p), default_id)
