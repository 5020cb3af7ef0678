"""Results across tables (Law 78): matchpoints for pairs, IMPs for teams.

Each table's controller publishes a retained ``result`` per board (Law 77 score from
North-South's side). ``SessionScores`` gathers those results, the last one of each table and
board winning (a director's ruling republishes it), and compares them board by board.

``bridge-table score RESULTS.jsonl [--teams 1:2,3:4]`` reads result messages (the lines
``bridge-table replay`` writes, a daemon journal export, or bare ``result`` payloads) and
prints the comparison; ``--json`` writes it as JSON.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

from ..laws.scoring import imps, matchpoints, matchpoints_ew

__all__ = ["BoardResult", "PairScore", "TeamScore", "SessionScores", "main"]


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

    def results(self, board: int) -> list[BoardResult]:
        return sorted((r for (_, b), r in self._results.items() if b == board),
                      key=lambda r: _table_key(r.table))

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


def _table_key(table: str) -> tuple[int, str]:
    return (int(table), "") if table.isdigit() else (1 << 30, table)


def read_results(lines: Iterable[str], errors: IO[str] | None = None,
                 source: str = "-") -> SessionScores:
    session = SessionScores()
    for lineno, line in enumerate(lines, 1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            if errors is not None:
                print(f"{source}:{lineno}: not JSON: {exc.msg}", file=errors)
            continue
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


def _parse_teams(text: str) -> list[tuple[str, str]]:
    matches = []
    for part in text.split(","):
        home, sep, away = part.strip().partition(":")
        if not sep or not home or not away:
            raise ValueError(f"--teams wants HOME:AWAY pairs of tables, not {part!r}")
        matches.append((home, away))
    return matches


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="bridge-table score", description=__doc__.split("\n")[0])
    ap.add_argument("results", help="JSONL of result messages ('-' for standard input)")
    ap.add_argument("--teams", help="teams matches as HOME:AWAY table pairs, e.g. 1:2,3:4")
    ap.add_argument("--json", action="store_true", help="write JSON instead of a table")
    args = ap.parse_args(argv)
    try:
        matches = _parse_teams(args.teams) if args.teams else []
    except ValueError as exc:
        print(f"bridge-table score: {exc}", file=sys.stderr)
        return 2
    try:
        fp = sys.stdin if args.results == "-" else open(args.results, encoding="utf-8")
    except OSError as exc:
        print(f"bridge-table score: {exc}", file=sys.stderr)
        return 2
    with fp:
        session = read_results(fp, sys.stderr, args.results)
    if args.json:
        out: dict[str, Any] = {"boards": [
            {"board": b, "results": [
                {"table": p.result.table, "contract": p.result.contract,
                 "declarer": p.result.declarer, "tricks": p.result.tricks,
                 "score_ns": p.result.score_ns, "mp_ns": p.mp_ns, "mp_ew": p.mp_ew,
                 "top": p.top} for p in session.matchpoints(b)]}
            for b in session.boards]}
        if matches:
            out["teams"] = [{"board": t.board, "home": t.home.table, "away": t.away.table,
                             "imps_home": t.imps_home} for t in session.teams(matches)]
        print(json.dumps(out, indent=1))
        return 0
    for board in session.boards:
        print(f"Board {board}")
        for p in session.matchpoints(board):
            r = p.result
            who = f"{r.contract} {r.declarer or ''}".strip()
            print(f"  table {r.table:>4}  {who:<8} {r.tricks if r.tricks is not None else '-':>2}"
                  f"  NS {r.score_ns:+6d}  MP NS {p.mp_ns:g}/{p.top} EW {p.mp_ew:g}/{p.top}"
                  f"  ({p.percent_ns:.0f}%)")
    if matches:
        totals: dict[tuple[str, str], int] = {}
        for t in session.teams(matches):
            key = (t.home.table, t.away.table)
            totals[key] = totals.get(key, 0) + t.imps_home
            print(f"Board {t.board}: table {t.home.table} NS {t.home.score_ns:+d}, "
                  f"table {t.away.table} NS {t.away.score_ns:+d}: {t.imps_home:+d} IMPs "
                  f"to table {t.home.table}'s NS team")
        for (home, away), total in totals.items():
            print(f"Match {home}:{away}: {total:+d} IMPs to table {home}'s NS team")
    return 0
