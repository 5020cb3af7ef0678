"""``bridge-table score``: the session's scores from the tables' results.

``bridge-table score RESULTS.jsonl [--session FILE] [--teams 1:2,3:4] [--json]``: results
as ``controller.session.results`` reads them. Without a session file, each board's results
are matchpointed against each other (and ``--teams`` compares table pairs in IMPs); with
one, the movement names the pairs, missing results are factored (Neuberg), the session
file's adjustments are applied, and the pairs' totals and ranking (or, for teams, the
matches in IMPs and VPs) follow.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any

from controller.commandline import add_log_level, setup_logging
from controller.session.results import ResultsError, SessionScores, load_results
from controller.session.scoring import (
    BoardScore,
    score_pairs,
    score_teams,
    standings,
    stray_results,
    team_totals,
)
from controller.session.sessionfile import Session, SessionError, load_session

__all__ = ["main", "pairs_report", "teams_report", "report", "print_report",
           "report_strays"]


def _parse_teams(text: str) -> list[tuple[str, str]]:
    matches = []
    for part in text.split(","):
        home, sep, away = part.strip().partition(":")
        home, away = home.strip(), away.strip()
        if not sep or not home or not away:
            raise ValueError(f"--teams wants HOME:AWAY pairs of tables, not {part!r}")
        if home == away:
            raise ValueError(f"--teams {part.strip()}: a table plays a match against another")
        matches.append((home, away))
    return matches


def _board_json(s: BoardScore) -> dict[str, Any]:
    r = s.result
    row: dict[str, Any] = {"table": s.table}
    if s.ns is not None:
        row.update(ns=s.ns, ew=s.ew)
    if r is not None:
        row.update(contract=r.contract, declarer=r.declarer, tricks=r.tricks,
                   score_ns=r.score_ns)
    row.update(score=s.shown, mp_ns=s.ns_points, mp_ew=s.ew_points, top=s.top)
    return row


def pairs_report(session: Session | None, scores: SessionScores) -> dict[str, Any]:
    """The pairs' scores as JSON-ready data: boards, then totals and ranking."""
    board_scores = score_pairs(session, scores)
    method = session.scoring if session is not None else "matchpoints"
    out: dict[str, Any] = {}
    if session is not None:
        out.update(session=session.id, event=session.event, date=session.date, method=method)
    boards: dict[int, list[dict[str, Any]]] = {}
    for s in board_scores:
        boards.setdefault(s.board, []).append(_board_json(s))
    out["boards"] = [{"board": b, "results": rows} for b, rows in boards.items()]
    if session is not None:
        out["standings"] = [
            {"rank": st.rank, "pair": st.pair, "field": st.field,
             "names": session.competitor(st.pair).label, "points": round(st.points, 4),
             "top": st.top,
             # cross-IMPs is scored in IMPs: a percentage of a top it has not is no score
             "percent": round(st.percent, 2) if method == "matchpoints" else None,
             "boards": st.boards}
            for st in standings(board_scores, method)]
    return out


def teams_report(session: Session, scores: SessionScores) -> dict[str, Any]:
    per_board, matches = score_teams(session, scores)
    totals = team_totals(matches, session.vp_scale == "wbf")
    return {
        "session": session.id, "event": session.event, "date": session.date,
        "method": "imps",
        "boards": [{"board": b.board, "home": b.home, "away": b.away,
                    "home_table": b.home_table, "away_table": b.away_table,
                    "imps_home": b.imps_home, "imps_away": b.imps_away} for b in per_board],
        "matches": [{"home": m.home, "away": m.away,
                     "home_name": session.competitor(m.home).label,
                     "away_name": session.competitor(m.away).label, "boards": m.boards,
                     "imps_home": m.imps_home, "imps_away": m.imps_away,
                     "vp_home": m.vp_home, "vp_away": m.vp_away} for m in matches],
        "standings": [{"rank": t.rank, "team": t.team,
                       "names": session.competitor(t.team).label, "imps": t.imps,
                       "vp": t.vp if session.vp_scale == "wbf" else None,
                       "matches": t.matches} for t in totals],
    }


def _print_pairs(report: dict[str, Any]) -> None:
    for board in report["boards"]:
        print(f"Board {board['board']}")
        for r in board["results"]:
            who = f"{r.get('contract', '')} {r.get('declarer') or ''}".strip()
            tricks = r.get("tricks")
            pairs = f"  {r['ns']:>3} v {r['ew']:<3}" if "ns" in r else ""
            top = r["top"]
            print(f"  table {r['table']:>4}{pairs}  {who:<8} "
                  f"{tricks if tricks is not None else '-':>2}  NS {r['score']:>9}  "
                  f"MP NS {r['mp_ns']:g}/{top:g} EW {r['mp_ew']:g}/{top:g}"
                  + (f"  ({100 * r['mp_ns'] / top:.0f}%)" if top else ""))
    field = None
    for st in report.get("standings", []):
        if st["field"] != field:
            field = st["field"]
            print(f"\nRanking{' ' + field if field else ''}")
        if st["percent"] is None:           # cross-IMPs: IMPs, and IMPs a board
            per = st["points"] / st["boards"] if st["boards"] else 0.0
            print(f"  {st['rank']:>4}  pair {st['pair']:>3}  {st['points']:+8.2f} IMPs  "
                  f"{per:+6.2f} a board  {st['names']}")
            continue
        print(f"  {st['rank']:>4}  pair {st['pair']:>3}  {st['points']:8.2f} / "
              f"{st['top']:g}  {st['percent']:6.2f}%  {st['names']}")


def _print_teams(report: dict[str, Any]) -> None:
    for b in report["boards"]:
        print(f"Board {b['board']}: team {b['home']} (NS at table {b['home_table']}) "
              f"{b['imps_home']:+g}, team {b['away']} {b['imps_away']:+g} IMPs")
    for m in report["matches"]:
        print(f"Match {m['home_name']} v {m['away_name']} ({m['boards']} boards): "
              f"{m['imps_home']:g}-{m['imps_away']:g} IMPs, "
              f"{m['vp_home']:.2f}-{m['vp_away']:.2f} VP")
    if report.get("standings"):
        print("\nRanking")
    for t in report.get("standings", []):
        vp = f"{t['vp']:6.2f} VP  " if t["vp"] is not None else ""
        print(f"  {t['rank']:>4}  team {t['team']:>3}  {vp}{t['imps']:+g} IMPs  {t['names']}")


def report(session: Session | None, scores: SessionScores) -> dict[str, Any]:
    """The scores as ``score --json`` writes them: teams or pairs, as the session is."""
    if session is not None and session.is_teams:
        return teams_report(session, scores)
    return pairs_report(session, scores)


def print_report(out: dict[str, Any]) -> None:
    """``report``'s data as ``score`` prints it."""
    if out.get("method") == "imps":
        _print_teams(out)
    else:
        _print_pairs(out)


def report_strays(session: Session | None, scores: SessionScores, prog: str) -> None:
    """Name on standard error each result the movement does not give its table (not
    scored: it would change the board's field)."""
    for r in stray_results(session, scores) if session is not None else []:
        print(f"{prog}: table {r.table} board {r.board}: the movement does not give this "
              f"table this board; its result ({r.score_ns:+d}) is not scored", file=sys.stderr)


def main(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="bridge-table score",
                                 description="Scores across tables (Law 78) from the tables' "
                                             "results.")
    ap.add_argument("results", help="JSONL of result messages ('-' for standard input)")
    ap.add_argument("--session", help="the session file (TOML, docs/session.md): movement, "
                                      "pairs, adjustments, scoring method")
    ap.add_argument("--teams", help="without a session file: teams matches as HOME:AWAY "
                                    "pairs of tables, e.g. 1:2,3:4")
    ap.add_argument("--json", action="store_true", help="write JSON instead of a table")
    add_log_level(ap, default="WARNING")
    args = ap.parse_args(list(argv))
    setup_logging(args)
    try:
        matches = _parse_teams(args.teams) if args.teams else []
        session = load_session(args.session) if args.session else None
        scores = load_results(args.results, sys.stderr, sys.stdin)
    except (ValueError, SessionError, ResultsError) as exc:
        print(f"bridge-table score: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:       # Ctrl-C while reading (standard input waits for it)
        print("bridge-table score: interrupted", file=sys.stderr)
        return 130
    if not scores.boards:
        print(f"bridge-table score: {args.results}: no result in it (an empty or truncated "
              f"file, or not the controller's results)", file=sys.stderr)
        return 2
    report_strays(session, scores, "bridge-table score")
    if session is not None and session.is_teams:
        out = teams_report(session, scores)
        if args.json:
            print(json.dumps(out, indent=1))
        else:
            _print_teams(out)
        return 0
    out = pairs_report(session, scores)
    if matches:
        out["teams"] = [{"board": t.board, "home": t.home.table, "away": t.away.table,
                            "imps_home": t.imps_home} for t in scores.teams(matches)]
        compared = {(t["home"], t["away"]) for t in out["teams"]}
        for home, away in matches:
            if (home, away) not in compared:  # said, not silently left out of the report
                print(f"bridge-table score: --teams {home}:{away}: no board played at both "
                      "tables in these results", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    _print_pairs(out)
    for t in out.get("teams", []):
        print(f"Board {t['board']}: table {t['home']} v table {t['away']}: "
              f"{t['imps_home']:+d} IMPs to table {t['home']}'s NS team")
    return 0
