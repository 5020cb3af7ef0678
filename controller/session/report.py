"""The session's scores as a report: JSON-ready data (``score --json``) and its printed form.

``report`` gives the pairs' (``pairs_report``) or the teams' (``teams_report``) scores as
``controller.session.scoring`` computes them from the results read from the tables
(``controller.session.table_results``); ``print_report`` prints them as ``bridge-table score``
does (``cli_score``), ``bridge-table results`` prints their ranking as the session goes.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from controller.session.scoring import (
    BoardScore,
    score_pairs,
    score_teams,
    standings,
    stray_results,
    team_totals,
)
from controller.session.sessionfile import Session
from controller.session.table_results import SessionScores

__all__ = ["pairs_report", "teams_report", "report", "print_report", "print_pairs",
           "print_teams", "report_strays", "table_matches", "print_table_matches"]


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
    """The teams' scores as JSON-ready data: boards, matches in IMPs and VPs, ranking."""
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


def print_pairs(report: dict[str, Any]) -> None:
    """``pairs_report``'s data as ``score`` prints it: each board's results, the ranking."""
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


def print_teams(report: dict[str, Any]) -> None:
    """``teams_report``'s data as ``score`` prints it: boards, matches, the ranking."""
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
        print_teams(out)
    else:
        print_pairs(out)


def report_strays(session: Session | None, scores: SessionScores, prog: str) -> None:
    """Name on standard error each result the movement does not give its table (not
    scored: it would change the board's field)."""
    for r in stray_results(session, scores) if session is not None else []:
        print(f"{prog}: table {r.table} board {r.board}: the movement does not give this "
              f"table this board; its result ({r.score_ns:+d}) is not scored", file=sys.stderr)



def table_matches(scores: SessionScores, matches: Sequence[tuple[str, str]]
                  ) -> tuple[list[dict[str, Any]], list[tuple[str, str]]]:
    """Without a session file (``score --teams``): each board both tables of a match played,
    IMPs to the home table's NS team; and the matches with no such board."""
    rows = [{"board": t.board, "home": t.home.table, "away": t.away.table,
             "imps_home": t.imps_home} for t in scores.teams(matches)]
    compared = {(t["home"], t["away"]) for t in rows}
    return rows, [(home, away) for home, away in matches if (home, away) not in compared]


def print_table_matches(rows: Sequence[dict[str, Any]]) -> None:
    """``table_matches``' rows as ``score`` prints them."""
    for t in rows:
        print(f"Board {t['board']}: table {t['home']} v table {t['away']}: "
              f"{t['imps_home']:+d} IMPs to table {t['home']}'s NS team")
