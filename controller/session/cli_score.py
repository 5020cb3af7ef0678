"""``bridge-table score``: the session's scores from the tables' results.

``bridge-table score RESULTS.jsonl [--session FILE] [--teams 1:2,3:4] [--json]``: results
as ``controller.session.table_results`` reads them. Without a session file, each board's
results are matchpointed against each other (and ``--teams`` compares table pairs in IMPs);
with one, the movement names the pairs, missing results are factored (Neuberg), the session
file's adjustments are applied, and the pairs' totals and ranking (or, for teams, the
matches in IMPs and VPs) follow (``scoring.py``, as data and text: ``report.py``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from controller.commandline import add_file_option, add_log_level, file_option, setup_logging
from controller.session.report import (
    pairs_report,
    print_pairs,
    print_table_matches,
    print_teams,
    report_strays,
    table_matches,
    teams_report,
)
from controller.session.sessionfile import SessionError, load_session
from controller.session.table_results import ResultsError, load_results

__all__ = ["main"]


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


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table score",
                                 description="Scores across tables (Law 78) from the tables' "
                                             "results.")
    add_file_option(ap, "--results", "JSONL of result messages ('-' for standard input): "
                    "what replay, results --out or the controller's journal give", bare=True)
    add_file_option(ap, "--session", "the session file (TOML, docs/session.md): movement, "
                                     "pairs, adjustments, scoring method")
    ap.add_argument("--teams", help="without a session file: teams matches as HOME:AWAY "
                                    "pairs of tables, e.g. 1:2,3:4")
    ap.add_argument("--json", action="store_true", help="write JSON instead of a table")
    add_log_level(ap, default="WARNING")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    args.results = file_option(ap, args, "--results")
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
            print_teams(out)
        return 0
    out = pairs_report(session, scores)
    if matches:
        out["teams"], unplayed = table_matches(scores, matches)
        for home, away in unplayed:   # said, not silently left out of the report
            print(f"bridge-table score: --teams {home}:{away}: no board played at both "
                  "tables in these results", file=sys.stderr)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print_pairs(out)
    print_table_matches(out.get("teams", []))
    return 0


if __name__ == "__main__":
    sys.exit(main())
