"""The session file (TOML): the event, the movement, the pairs or teams, the deals file.

See docs/session.md for the format with a full example. ``load_session`` never lets a
broken or binary file through as a traceback: every problem is a ``SessionError`` naming
the file and the key (or TOML's line and column).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from controller.commandline import number_ranges
from controller.session.movement import (
    Movement,
    MovementError,
    Round,
    TableRound,
    howell,
    mitchell,
    teams,
)
from controller.session.names import clean_name

__all__ = ["Competitor", "Session", "SessionError", "Adjustment", "WeightedPart", "FieldReader",
           "load_session", "parse_session", "possible_scores"]

#: Law 12C1(d): average-plus, average, average-minus as a percentage of the top
DEFAULT_ARTIFICIAL: Mapping[str, float] = MappingProxyType({"A+": 60.0, "A=": 50.0,
                                                            "A-": 40.0})


class SessionError(ValueError):
    """A session file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class Competitor:
    """A pair or a team: its number in the movement, its players, and a name if it has one."""

    number: int
    players: tuple[str, ...] = ()
    name: str = ""

    @property
    def label(self) -> str:
        return self.name or " - ".join(self.players) or str(self.number)


@dataclass(frozen=True, slots=True)
class Adjustment:
    """The director's score for a table's board when it is not the table's result.

    ``ns``/``ew`` are artificial scores ("A+", "A=", "A-" or a percentage like "55%"),
    or ``split``: (the NS score NS are compared with, the NS score EW are compared with),
    Law 12C's split assigned score; ``score_ns`` an assigned score for both sides;
    ``weighted`` a weighted assigned score (Law 12C1(c)): its results and their weights
    (percentages summing to 100)."""

    table: str
    board: int
    ns: str | None = None
    ew: str | None = None
    split: tuple[int, int] | None = None
    score_ns: int | None = None
    weighted: tuple[WeightedPart, ...] | None = None


@dataclass(frozen=True, slots=True)
class WeightedPart:
    """One result of a weighted score (Law 12C1(c)): its weight (a percentage), the score
    from NS's side, and the contract, declarer and tricks it came from (None when the
    session file gives the score itself)."""

    weight: float
    score_ns: int
    contract: str | None = None
    declarer: str | None = None
    tricks: int | None = None

    @property
    def shown(self) -> str:
        """``50%+620``: the weight and the score from NS's side."""
        return f"{self.weight:g}%{self.score_ns:+d}"


@dataclass(frozen=True)
class Session:
    id: str
    event: str
    date: str
    venue: str
    number: int
    movement: Movement
    pairs: Mapping[int, Competitor] = field(default_factory=dict)
    teams: Mapping[int, Competitor] = field(default_factory=dict)
    deals: Path | None = None
    #: a BRI/DGE/DUP deals file's first board (a BRI or DGE file does not say it)
    deals_first_board: int | None = None
    path: Path | None = None
    #: "matchpoints", "cross-imps" (pairs) or "imps" (teams)
    scoring: str = "matchpoints"
    artificial: Mapping[str, float] = field(default_factory=lambda: DEFAULT_ARTIFICIAL)
    vp_scale: str = "wbf"
    adjustments: tuple[Adjustment, ...] = ()
    #: the club's number with its national body (USEBIO's CLUB_ID_NUMBER)
    club_id: str = ""

    @property
    def is_teams(self) -> bool:
        return self.movement.kind == "teams" or self.scoring == "imps"

    def competitor(self, number: int) -> Competitor:
        known = (self.teams if self.is_teams else self.pairs).get(number)
        return known if known is not None else Competitor(number)

    def pairs_at(self, table: str, board: int) -> tuple[int, int] | None:
        return self.movement.pairs_at(table, board)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


#: the keys each table of a session file may have (a typo like ``methd`` is refused)
KNOWN_KEYS: Mapping[str, frozenset[str]] = MappingProxyType({
    "": frozenset({"session", "movement", "scoring", "pairs", "teams", "adjustment"}),
    "session": frozenset({"id", "event", "date", "venue", "number", "deals",
                          "deals_first_board", "club_id"}),
    "movement": frozenset({"type", "tables", "rounds", "boards_per_round", "first_board",
                           "even_tables", "arrow_switch", "pairs", "matches", "round"}),
    "scoring": frozenset({"method", "artificial", "vp_scale"}),
    "adjustment": frozenset({"table", "board", "ns", "ew", "split", "score_ns", "weighted"}),
    "weighted": frozenset({"weight", "contract", "declarer", "tricks", "score_ns"}),
    "competitor": frozenset({"name", "players"}),
    "table_round": frozenset({"ns", "ew", "boards"}),
})


class FieldReader:
    """Typed look-ups into the parsed TOML, each error naming the file and the key."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, what: str) -> SessionError:
        return SessionError(f"{self.source}: {key}: {what}")

    def known(self, data: Mapping[str, Any], kind: str, where: str) -> None:
        """Refuse a key the format does not have (a typo would otherwise be ignored)."""
        allowed = KNOWN_KEYS[kind]
        for key in data:
            if key not in allowed:
                raise self.fail(where + str(key), f"unknown key (known here: "
                                                  f"{', '.join(sorted(allowed))})")

    def table(self, data: Mapping[str, Any], key: str, where: str = "") -> dict[str, Any]:
        value = data.get(key, {})
        if not isinstance(value, dict):
            raise self.fail(where + key, "must be a table ([section])")
        return value

    def int_(self, data: Mapping[str, Any], key: str, where: str, default: int | None = None,
             low: int = 1) -> int:
        value = data.get(key, default)
        if value is None:
            raise self.fail(where + key, "is missing")
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise self.fail(where + key, f"must be a whole number >= {low}, not {value!r}")
        return value

    def str_(self, data: Mapping[str, Any], key: str, where: str, default: str = "") -> str:
        value = data.get(key, default)
        if isinstance(value, (dt.date, dt.datetime)):
            return value.isoformat()
        if not isinstance(value, str):
            raise self.fail(where + key, f"must be a string, not {value!r}")
        return value

    def name(self, data: Mapping[str, Any], key: str, where: str) -> str:
        """A name shown to the room (``clean_name``)."""
        return clean_name(self.str_(data, key, where))

    def rows(self, data: Mapping[str, Any], key: str, required: bool = False
             ) -> Iterator[tuple[int, str, dict[str, Any]]]:
        """(number from 1, the key prefix for messages, the entry) of ``[[key]]`` entries."""
        rows = data.get(key.rpartition(".")[2], [])
        if not isinstance(rows, list) or (required and not rows):
            raise self.fail(key, f"needs [[{key}]] entries")
        for i, row in enumerate(rows, 1):
            if not isinstance(row, dict):
                raise self.fail(f"{key}[{i}]", "must be a table")
            yield i, f"{key}[{i}].", row

    def boards(self, value: Any, key: str) -> tuple[int, ...]:
        from controller.session.schedule import ScheduleError, boards_of
        try:
            return tuple(sorted(boards_of(value, f"{self.source}: {key}")))
        except ScheduleError as exc:
            raise SessionError(str(exc)) from None


def _movement(r: FieldReader, data: Mapping[str, Any]) -> Movement:
    mv = r.table(data, "movement")
    r.known(mv, "movement", "movement.")
    kind = r.str_(mv, "type", "movement.", "")
    w = "movement."
    try:
        if kind == "mitchell":
            arrow = mv.get("arrow_switch", [])
            if not isinstance(arrow, list) or not all(isinstance(a, int) for a in arrow):
                raise r.fail(w + "arrow_switch", "must be a list of round numbers")
            even = r.str_(mv, "even_tables", w, "relay")
            tables = r.int_(mv, "tables", w)
            rounds = mv.get("rounds")
            return mitchell(tables, r.int_(mv, "rounds", w) if rounds is not None else None,
                            r.int_(mv, "boards_per_round", w),
                            first_board=r.int_(mv, "first_board", w, 1),
                            arrow_switch=arrow, even=even)
        if kind == "howell":
            rounds = mv.get("rounds")
            return howell(r.int_(mv, "pairs", w),
                          r.int_(mv, "rounds", w) if rounds is not None else None,
                          r.int_(mv, "boards_per_round", w),
                          first_board=r.int_(mv, "first_board", w, 1))
        if kind == "teams":
            return teams(r.int_(mv, "matches", w, 1), r.int_(mv, "rounds", w),
                         r.int_(mv, "boards_per_round", w),
                         first_board=r.int_(mv, "first_board", w, 1))
        if kind in ("explicit", "teams-explicit"):
            return _explicit(r, mv, "teams" if kind == "teams-explicit" else "explicit")
    except MovementError as exc:
        raise SessionError(f"{r.source}: movement: {exc}") from None
    raise r.fail("movement.type", f"must be mitchell, howell, teams, explicit or "
                                  f"teams-explicit, not {kind!r}")


def _explicit(r: FieldReader, mv: Mapping[str, Any], kind: str) -> Movement:
    rounds = []
    for i, where, row in r.rows(mv, "movement.round", required=True):
        number = r.int_(row, "number", where, i)
        tables = {}
        for table, entry in row.items():
            if table == "number":
                continue
            if not isinstance(entry, dict):
                raise r.fail(where + table, "must be { ns = .., ew = .., boards = .. }")
            r.known(entry, "table_round", f"{where}{table}.")
            tables[str(table)] = TableRound(
                r.int_(entry, "ns", f"{where}{table}."), r.int_(entry, "ew", f"{where}{table}."),
                r.boards(entry.get("boards"), f"{where}{table}.boards"))
        rounds.append(Round(number, MappingProxyType(tables)))
    return Movement(tuple(rounds), kind)


def _competitors(r: FieldReader, data: Mapping[str, Any], key: str) -> dict[int, Competitor]:
    out: dict[int, Competitor] = {}
    for number, value in r.table(data, key).items():
        where = f"{key}.{number}"
        if not str(number).isdigit():
            raise r.fail(where, "must be a number")
        if isinstance(value, list):
            value = {"players": value}
        if not isinstance(value, dict):
            raise r.fail(where, "must be a list of players or { name = .., players = [..] }")
        r.known(value, "competitor", where + ".")
        players = value.get("players", [])
        if not isinstance(players, list) or not all(isinstance(p, str) for p in players):
            raise r.fail(where + ".players", "must be a list of names")
        out[int(number)] = Competitor(int(number), tuple(clean_name(p) for p in players),
                                      r.name(value, "name", where + "."))
    return out


def _seated(r: FieldReader, pairs: Mapping[int, Competitor], seated: list[int]) -> None:
    """A ``[pairs]`` entry the movement seats nowhere is a typo (EW named 11-13 in a
    Mitchell whose EW pairs are 4-6): the pairs that play would go nameless in every
    record, so it is refused, naming the pairs the movement has."""
    stray = sorted(set(pairs) - set(seated))
    if stray:
        raise r.fail(f"pairs.{stray[0]}", f"the movement seats no pair {stray[0]} (its "
                                          f"pairs: {number_ranges(seated)})")


#: how far the weights of a weighted score may be from 100 (a float sum such as 3 x 33.3333)
_WEIGHT_SLACK = 1e-6


def _weighted(r: FieldReader, key: str, value: Any, board: int) -> tuple[WeightedPart, ...]:
    """Law 12C1(c): two or more results, each with its weight (a percentage > 0), the
    weights summing to 100%; each result ``contract``/``declarer``/``tricks`` (scored with
    the board's vulnerability) or a ``score_ns`` some contract can score on this board."""
    from controller.laws.cards import (
        Contract,
        ParseError,
        Seat,
        board_vulnerability,
    )
    from controller.laws.scoring import score_ns as scored

    if not isinstance(value, list) or len(value) < 2:
        raise r.fail(key, "must be a list of two or more results, e.g. [{ weight = 50, "
                          "contract = \"4H\", declarer = \"S\", tricks = 10 }, ...]")
    vul = board_vulnerability(board)
    parts = []
    for i, part in enumerate(value, 1):
        where = f"{key}[{i}]"
        if not isinstance(part, dict):
            raise r.fail(where, "must be a table { weight = .., contract = .., ... }")
        r.known(part, "weighted", where + ".")
        weight = part.get("weight")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                or not 0 < weight <= 100:
            raise r.fail(where + ".weight", "must be a percentage above 0, at most 100")
        if "score_ns" in part:
            if any(k in part for k in ("contract", "declarer", "tricks")):
                raise r.fail(where, "give contract, declarer and tricks, or score_ns")
            score = part["score_ns"]
            if isinstance(score, bool) or not isinstance(score, int) \
                    or score not in possible_scores(vul.value):
                raise r.fail(where + ".score_ns", f"{score!r}: no contract scores that on "
                                                  f"board {board} ({vul.value} vulnerable)")
            parts.append(WeightedPart(float(weight), score))
            continue
        text = part.get("contract")
        try:
            contract = Contract.parse(text) if isinstance(text, str) and text.strip() \
                else None
        except ParseError:
            contract = None
        if contract is None:
            raise r.fail(where + ".contract", f"{text!r}: not a contract (4H, 3NTX, Pass)")
        if contract.passed_out:
            if "declarer" in part or "tricks" in part:
                raise r.fail(where, "a passed-out board has no declarer or tricks")
            parts.append(WeightedPart(float(weight), 0, "Pass"))
            continue
        seat = part.get("declarer")
        if seat not in ("N", "E", "S", "W"):
            raise r.fail(where + ".declarer", "must be N, E, S or W")
        tricks = part.get("tricks")
        if isinstance(tricks, bool) or not isinstance(tricks, int) or not 0 <= tricks <= 13:
            raise r.fail(where + ".tricks", "must be declarer's tricks, 0-13")
        parts.append(WeightedPart(float(weight), scored(contract, Seat[seat], vul, tricks),
                                  str(contract), seat, tricks))
    total = sum(p.weight for p in parts)
    if abs(total - 100) > _WEIGHT_SLACK:
        raise r.fail(key, f"the weights sum to {total:g}%, not 100%")
    return tuple(parts)


@functools.cache
def possible_scores(vul: str) -> frozenset[int]:
    """Every score from NS's side some contract, declarer and number of tricks gives on a
    board of vulnerability ``vul`` ("None", "NS", "EW", "All")."""
    from controller.laws.cards import Contract, Seat, Vulnerability
    from controller.laws.scoring import score_ns as scored

    vulnerability = Vulnerability(vul)
    out = {0}
    for level in range(1, 8):
        for strain in ("C", "D", "H", "S", "NT"):
            for doubling in ("", "X", "XX"):
                contract = Contract.parse(f"{level}{strain}{doubling}")
                for seat in Seat:
                    out |= {scored(contract, seat, vulnerability, t) for t in range(14)}
    return frozenset(out)


def _score_kind(r: FieldReader, text: str, key: str, artificial: Mapping[str, float]) -> str:
    if text in artificial:
        return text
    if re.fullmatch(r"\d+(\.\d+)?%", text):
        if float(text[:-1]) > 100:
            raise r.fail(key, f"{text}: a percentage of the top is 0-100%")
        return text
    raise r.fail(key, f"must be one of {', '.join(artificial)} or a percentage like '55%'")


def _adjustments(r: FieldReader, data: Mapping[str, Any], artificial: Mapping[str, float],
                 movement: Movement) -> tuple[Adjustment, ...]:
    # a later entry for the same table and board replaces an earlier one (a program that
    # appends the director's new ruling, as the console does, supersedes the old)
    out: dict[tuple[str, int], Adjustment] = {}
    for _, where, row in r.rows(data, "adjustment"):
        adj = adjustment_of(r, where, row, artificial, movement)
        out.pop((adj.table, adj.board), None)
        out[(adj.table, adj.board)] = adj
    return tuple(out.values())


def adjustment_of(r: FieldReader, where: str, row: Mapping[str, Any],
                  artificial: Mapping[str, float], movement: Movement) -> Adjustment:
    """One ``[[adjustment]]`` entry, checked: its keys, a table and board the movement
    gives, one kind of score, artificial scores named or 0-100%."""
    r.known(row, "adjustment", where)
    table = row.get("table")
    if isinstance(table, int) and not isinstance(table, bool):
        table = str(table)
    if not isinstance(table, str):
        raise r.fail(where + "table", "must name a table")
    board = r.int_(row, "board", where)
    if movement.rounds and movement.round_of(table, board) is None:
        # an adjustment outside the movement would add a table to the board's field
        raise r.fail(where + "table", f"the movement does not give table {table} "
                                      f"board {board}")
    if sum(k in row for k in ("split", "score_ns", "ns", "weighted")) > 1:
        raise r.fail(where.rstrip("."), "give one of ns/ew, split, score_ns or weighted")
    ns = ew = None
    split = None
    score_ns = None
    if "weighted" in row:
        return Adjustment(table, board, weighted=_weighted(r, where + "weighted",
                                                           row["weighted"], board))
    if "split" in row:
        s = row["split"]
        if not (isinstance(s, list) and len(s) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) for x in s)):
            raise r.fail(where + "split", "must be [NS's score, EW's score], both "
                                          "from NS's side")
        split = (s[0], s[1])
    elif "score_ns" in row:
        score_ns = r.int_(row, "score_ns", where, low=-10000)
    else:
        ns = _score_kind(r, r.str_(row, "ns", where, "A="), where + "ns", artificial)
        ew = _score_kind(r, r.str_(row, "ew", where, ns if ns != "A+" and ns != "A-"
                                   else "A="), where + "ew", artificial)
    return Adjustment(table, board, ns, ew, split, score_ns)


def parse_session(data: Mapping[str, Any], source: str = "session",
                  base: Path | None = None) -> Session:
    r = FieldReader(source)
    r.known(data, "", "")
    sess = r.table(data, "session")
    r.known(sess, "session", "session.")
    w = "session."
    event = r.name(sess, "event", w)
    date = r.str_(sess, "date", w)
    number = r.int_(sess, "number", w, 1)
    movement = _movement(r, data)
    sid = r.str_(sess, "id", w, "") or _slug(f"{event} {date} {number}") or "session"
    deals_text = r.str_(sess, "deals", w, "")
    deals = None
    if deals_text:
        deals = Path(deals_text)
        if not deals.is_absolute() and base is not None:
            deals = base / deals
    first = sess.get("deals_first_board")
    deals_first_board = r.int_(sess, "deals_first_board", w) if first is not None else None
    scoring = r.table(data, "scoring")
    r.known(scoring, "scoring", "scoring.")
    method = r.str_(scoring, "method", "scoring.",
                    "imps" if movement.kind == "teams" else "matchpoints")
    if method not in ("matchpoints", "cross-imps", "imps"):
        raise r.fail("scoring.method", f"must be matchpoints, cross-imps or imps, not "
                                       f"{method!r}")
    artificial = dict(DEFAULT_ARTIFICIAL)
    for key, value in r.table(scoring, "artificial", "scoring.").items():
        if not isinstance(value, (int, float)) or isinstance(value, bool) or \
                not 0 <= value <= 100:
            raise r.fail(f"scoring.artificial.{key}", "must be a percentage 0-100")
        artificial[key] = float(value)
    vp = r.str_(scoring, "vp_scale", "scoring.", "wbf")
    if vp not in ("wbf", "none"):
        raise r.fail("scoring.vp_scale", f"must be wbf or none, not {vp!r}")
    pairs = _competitors(r, data, "pairs")
    if movement.kind != "teams":
        _seated(r, pairs, movement.pairs)
    return Session(
        id=sid, event=event, date=date, venue=r.name(sess, "venue", w), number=number,
        movement=movement, pairs=MappingProxyType(pairs),
        teams=MappingProxyType(_competitors(r, data, "teams")), deals=deals,
        deals_first_board=deals_first_board,
        scoring=method, artificial=MappingProxyType(artificial), vp_scale=vp,
        adjustments=_adjustments(r, data, artificial, movement),
        club_id=str(sess["club_id"]) if isinstance(sess.get("club_id"), int)
        else r.str_(sess, "club_id", w))


def load_session(path: str | Path) -> Session:
    from controller.tomlfile import read_toml

    p = Path(path)
    session = parse_session(read_toml(p, SessionError, "a TOML session file"), str(p), p.parent)
    object.__setattr__(session, "path", p)
    return session
