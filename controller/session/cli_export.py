"""``bridge-table export --session FILE --results FILE --out DIR``: the session's records (PBN, LIN,
CSV, USEBIO) from what the controller published (``export.py`` builds and writes them).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.commandline import add_file_option, file_option
from controller.session.export import FORMATS, export, load_published, parse_formats, scores_of
from controller.session.report import report_strays
from controller.session.sessionfile import SessionError, load_session
from controller.session.table_results import ResultsError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table export",
                                 description="The session's records (PBN, LIN, CSV, USEBIO) "
                                             "from what the controller published.")
    add_file_option(ap, "--session", "the session file (TOML, docs/session.md)", bare=True)
    add_file_option(ap, "--results", "JSONL of the controller's messages (what replay or "
                                     "results --out writes)")
    ap.add_argument("--out", required=True, help="the directory to write into")
    ap.add_argument("--format", default=",".join(FORMATS),
                    help=f"{','.join(FORMATS)} (default: all)")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    args.session = file_option(ap, args, "--session")
    args.results = file_option(ap, args, "--results")
    try:
        formats = parse_formats(args.format)
        session = load_session(args.session)
        published = load_published(args.results, sys.stderr)
        if not any(item.result is not None for item in published.values()):
            raise ResultsError(f"{args.results}: no result in it (an empty or truncated file, "
                               f"or not the controller's messages)")
        report_strays(session, scores_of(published), "bridge-table export")
        written = export(session, published, Path(args.out), formats, sys.stderr)
    except (ValueError, SessionError, ResultsError) as exc:
        print(f"bridge-table export: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"bridge-table export: {exc.filename or args.out}: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bridge-table export: interrupted", file=sys.stderr)
        return 130
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
