"""``bridge-table results``: the session's ranking as it goes, and every record at the end.

It reads what the controller published from one of (``ranking.py``):

- the broker (the default): ``ROOT/+/result``, ``feed``, ``alert`` and ``evidence``, with
  the same broker options as every command (``--broker``, ``--credentials`` ...:
  controller/broker/settings.py); it prints the ranking again after each new result, and
  ends on Ctrl-C, when every table has a result for every board the movement gives it
  (``--until-complete``), or once the retained results are in (``--once``: a broker keeps
  only each table's last result, so that is the ranking of the boards now on the tables,
  not the session's);
- the controller's journal (``--journal FILE``, once the controller is stopped: the
  journal is one process's at a time): the messages are computed again from it, exactly
  as the controller published them (``bridge-table replay``);
- a file of published messages (``--results FILE``: what ``bridge-table replay`` or this
  command's ``--out`` writes).

With ``--out DIR`` it writes, at the end, every record ``bridge-table export`` writes
(``--format``, all by default) and ``ID-messages.jsonl``: the messages it received (or
computed again from the journal), which ``--results`` reads again, as ``score --results``
and ``export --results`` do. Empty or truncated input is an error (exit 2,
one line on standard error), as a bad session file is.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import (
    ControllerError,
    add_file_option,
    add_log_level,
    file_option,
    setup_logging,
)
from controller.service.ranking import (
    PROG,
    final_ranking,
    follow_broker,
    journal_messages,
    require_a_result,
    write_records,
)
from controller.session.export import FORMATS, parse_formats, read_published
from controller.session.sessionfile import SessionError, load_session
from controller.session.table_results import ResultsError, load_jsonl

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description="The session's ranking as it goes, "
                                 "and every record at the end.",
                                 epilog="docs/session.md: 'Results live and at the end'")
    add_file_option(ap, "--session", "the session file (docs/session.md)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--journal", help="the controller's journal (the controller stopped)")
    src.add_argument("--results", help="a file of published messages (JSONL)")
    add_broker_arguments(ap)
    ap.add_argument("--root", default="bridge", help="topic root (default: bridge)")
    ap.add_argument("--once", action="store_true",
                    help="broker: the ranking from the retained results, then stop")
    ap.add_argument("--settle", type=float, default=1.0, metavar="S",
                    help="--once: stop after S seconds without a message (default 1)")
    ap.add_argument("--until-complete", action="store_true",
                    help="broker: stop when every table has every board's result")
    ap.add_argument("--out", help="write every record into this directory at the end")
    ap.add_argument("--format", default=",".join(FORMATS),
                    help=f"records to write (default: {','.join(FORMATS)})")
    ap.add_argument("--json", action="store_true", help="the final scores as JSON")
    add_log_level(ap, default="WARNING")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = _parser()
    args = ap.parse_args(argv)
    args.session = file_option(ap, args, "--session")
    setup_logging(args)
    from_broker = not args.journal and not args.results
    try:
        formats = parse_formats(args.format)
        session = load_session(args.session)
        lines: list[str] | None = None
        if args.journal:
            # the messages kept, so that --out writes ID-messages.jsonl from the journal as
            # from the broker: the file score and export read
            lines = journal_messages(args.session, args.journal, sys.stderr)
            published = read_published(lines, sys.stderr, args.journal)
        elif args.results:
            published = load_jsonl(args.results, read_published, sys.stderr)
        else:
            collected = follow_broker(settings_from_args(args), args, session)
            lines, published = collected.lines, collected.published(sys.stderr)
        source = args.journal or args.results or "the broker"
        require_a_result(published, source, root=args.root,
                         broker=(args.broker or "the broker") if from_broker else None)
        final_ranking(session, published, source=source, as_json=args.json,
                      strays_said=from_broker)
        if args.out:
            write_records(session, published, Path(args.out), formats, lines)
    except (ValueError, SessionError, ResultsError, ControllerError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {getattr(exc, 'filename', None) or ''} {exc.strerror or exc}".strip(),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
