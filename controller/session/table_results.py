"""The results read from the tables: each table's result of each board, compared across
tables (Law 78: matchpoints for pairs, IMPs for teams).

Each table's controller publishes a retained ``result`` per board (Law 77 score from
North-South's side). ``SessionScores`` gathers those results, the last one of each table and
board winning (a director's ruling republishes it), and compares them board by board.

``read_results`` reads result messages (the lines ``bridge-table replay`` writes, a daemon
journal export, or bare ``result`` payloads); ``load_results`` a file of them, with a clear
error for a file that is not text. ``controller.session.scoring`` scores a session from
them; ``controller.session.cli_score`` is the ``score`` command.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from controller.laws.scoring import imps, matchpoints, matchpoints_ew
from controller.session.movement import table_key

__all__ = ["BoardResult", "PairScore", "TeamScore", "SessionScores", "ResultsError",
           "read_results", "load_results", "load_jsonl", "json_lines"]


@dataclass(frozen=True, slots=True)
class BoardResult:
    table: str
    board: int
    contract: str
    declarer: str | None
    tricks: int | None
    score_ns: int

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> BoardResult:
        """From a contract ``result`` payload; ValueError if it is not one."""
        try:
            table, board, score = payload["table"], payload["board"], payload["score_ns"]
        except (KeyError, TypeError):
            raise ValueError("not a result payload (table, board, score_ns)") from None
        if not isinstance(table, str) or not isinstance(board, int) or \
                not isinstance(score, int) or isinstance(score, bool):
            raise ValueError("result payload with a bad table, board or score_ns")
        tricks = payload.get("tricks")
        return cls(table, board, str(payload.get("contract", "")), payload.get("declarer"),
                   tricks if isinstance(tricks, int) else None, score)


@dataclass(frozen=True, slots=True)
class PairScore:
    """One table's result on one board, matchpointed against the other tables'."""

    result: BoardResult
    mp_ns: float
    mp_ew: float
    top: int

    @property
    def percent_ns(self) -> float:
        return 100.0 * self.mp_ns / self.top if self.top else 50.0


@dataclass(frozen=True, slots=True)
class TeamScore:
    """A teams match on one board: the NS pair at ``home`` against the NS pair at
    ``away`` (their team-mates sit EW there); IMPs to the home table's NS side."""

    board: int
    home: BoardResult
    away: BoardResult

    @property
    def imps_home(self) -> int:
        return imps(self.home.score_ns - self.away.score_ns)


@dataclass
class SessionScores:
    _results: dict[tuple[str, int], BoardResult] = field(default_factory=dict)

    def add(self, result: BoardResult) -> None:
        self._results[(result.table, result.board)] = result

    @property
    def boards(self) -> list[int]:
        return sorted({b for _, b in self._results})

    def get(self, table: str, board: int) -> BoardResult | None:
        return self._results.get((table, board))

    def results(self, board: int) -> list[BoardResult]:
        return sorted((r for (_, b), r in self._results.items() if b == board),
                      key=lambda r: table_key(r.table))

    def matchpoints(self, board: int) -> list[PairScore]:
        """Law 78A: every table's result on ``board`` against the others."""
        results = self.results(board)
        scores = [r.score_ns for r in results]
        ns, ew = matchpoints(scores), matchpoints_ew(scores)
        top = 2 * (len(results) - 1)
        return [PairScore(r, a, b, top) for r, a, b in zip(results, ns, ew, strict=True)]

    def teams(self, matches: Sequence[tuple[str, str]]) -> list[TeamScore]:
        """Law 78B: for each match (home table, away table), each board both played."""
        out: list[TeamScore] = []
        for home, away in matches:
            for board in self.boards:
                a, b = self._results.get((home, board)), self._results.get((away, board))
                if a is not None and b is not None:
                    out.append(TeamScore(board, a, b))
        return out


class ResultsError(ValueError):
    """A results file that cannot be read at all (missing, binary, empty, cut off in the
    middle of a line); the message names it."""


def json_lines(lines: Iterable[str], errors: IO[str] | None = None,
               source: str = "-") -> Iterator[tuple[int, Any]]:
    """(line number, value) of each JSON line; blank and ``#`` lines skipped, a line that is
    not JSON named on ``errors`` and skipped. A last line that is not JSON and has no end
    of line is a file cut off while it was written (a copy interrupted, a full disc): a
    ResultsError, since a result may be missing from it without a trace."""
    pending: tuple[int, str, str] | None = None
    for lineno, line in enumerate(lines, 1):
        if pending is not None and errors is not None:
            print(pending[2], file=errors)
        pending = None
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            yield lineno, json.loads(text)
        except json.JSONDecodeError as exc:
            pending = (lineno, line, f"{source}:{lineno}: not JSON: {exc.msg}")
    if pending is not None:
        if not pending[1].endswith("\n"):
            raise ResultsError(f"{source}:{pending[0]}: truncated: the last line is cut off "
                               f"({pending[2].rpartition(': ')[2]})")
        if errors is not None:
            print(pending[2], file=errors)


def read_results(lines: Iterable[str], errors: IO[str] | None = None,
                 source: str = "-") -> SessionScores:
    session = SessionScores()
    for lineno, obj in json_lines(lines, errors, source):
        if isinstance(obj, dict) and "payload" in obj:
            if not str(obj.get("topic", "")).endswith("/result"):
                continue  # replay output holds every kind of message: keep the results
            obj = obj["payload"]
        if not isinstance(obj, dict):
            continue
        try:
            session.add(BoardResult.from_payload(obj))
        except ValueError as exc:
            if errors is not None:
                print(f"{source}:{lineno}: {exc}", file=errors)
    return session


T = TypeVar("T")


def load_jsonl(path: str, read: Callable[[Iterable[str], IO[str] | None, str], T],
               errors: IO[str] | None = None, stdin: IO[str] | None = None) -> T:
    """``read`` (``read_results``, ``export.read_published``) of a file ('-': ``stdin``);
    a file that cannot be read or is not UTF-8 text is a ResultsError naming it."""
    try:
        if path == "-" and stdin is not None:
            return read(stdin, errors, path)
        with open(Path(path), encoding="utf-8") as fp:
            return read(fp, errors, path)
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not a text file of JSON lines (byte {exc.start} is not "
                           f"UTF-8)") from None


def load_results(path: str, errors: IO[str] | None = None,
                 stdin: IO[str] | None = None) -> SessionScores:
    """``read_results`` of a file ('-': ``stdin``); lines that are not results are reported
    on ``errors`` and skipped."""
    return load_jsonl(path, read_results, errors, stdin)
