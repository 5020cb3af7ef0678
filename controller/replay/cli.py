"""``bridge-table replay EVENTS.jsonl [--deals FILE.pbn] [--topics state,alert,...]``.

Reads sensor events (one JSON object a line: the payload itself, or
``{"topic": ..., "payload": ...}``) and writes one ``{"topic": ..., "payload": ...}`` line
for every message the controller would publish, in order, through the same ``Engine`` the
live daemon uses. A malformed line is reported on standard error with its line number and
skipped; the run goes on.
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Iterable, Sequence
from typing import IO

from controller.boards.deals import DealsError, load_deals
from controller.commandline import plain_help
from controller.engine import Engine
from controller.formats.source import binary_reason
from controller.indicators.display_text import LANGUAGES
from controller.laws.cards import ParseError, Rules
from controller.laws.record import DealInfo
from controller.replay.stream import KINDS, replay_to


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bridge-table replay", description=plain_help(__doc__),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("events", help="JSONL file of sensor events ('-' for standard input)")
    p.add_argument("--deals", help="PBN deals file: hands, dealer and vulnerability by board")
    p.add_argument("--session", help="the session file (docs/session.md): its movement is the "
                   "schedule and names the pairs in state and result; its deals file is the "
                   "default --deals")
    p.add_argument("--first-board", type=int, default=None, metavar="N",
                   help="the board number of a .bri/.dge/.dup deals file's first record")
    p.add_argument("--topics", help=f"comma-separated kinds of output to keep ({','.join(KINDS)})")
    p.add_argument("--root", default="bridge", help="topic root (default: bridge)")
    p.add_argument("--table", default="1",
                   help="table id for lines that are bare payloads (default: 1)")
    p.add_argument("--rules", default="2017", help="Laws edition: 2017 (default) or 2007")
    p.add_argument("--policy", help="indicator policy TOML file")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="split a multi-table file by table across N processes; the output "
                   "is the same bytes as one process's (one process when it cannot be: a "
                   "single table, or a board fouled across tables)")
    p.add_argument("--languages", default=",".join(LANGUAGES),
                   help="languages of the indicator's display text, comma-separated "
                   f"(default: {','.join(LANGUAGES)})")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None, *, out: IO[bytes] | None = None) -> int:
    """The command; ``out`` is where the messages go (standard output by default)."""
    args = parse_args(argv)
    kinds: set[str] | None = None
    if args.topics:
        kinds = {k.strip() for k in args.topics.split(",") if k.strip()}
        unknown = kinds - set(KINDS)
        if unknown:
            print(f"bridge-table replay: unknown --topics {sorted(unknown)}; "
                  f"choose from {','.join(KINDS)}", file=sys.stderr)
            return 2
    try:
        rules = Rules.parse(args.rules)
    except ParseError as exc:
        print(f"bridge-table replay: {exc}", file=sys.stderr)
        return 2
    schedule = pairs_at = None
    deals_path, first_board = args.deals, args.first_board
    if args.session:
        from controller.session import SessionError, load_session
        try:
            session = load_session(args.session)
        except SessionError as exc:
            print(f"bridge-table replay: {exc}", file=sys.stderr)
            return 2
        schedule, pairs_at = session.movement.schedule(), session.movement.pairs_at
        if not deals_path and session.deals is not None:
            deals_path, first_board = session.deals, first_board or session.deals_first_board
    deals: dict[int, DealInfo] = {}
    if deals_path:
        try:
            # the deal tags only: the auctions and play of the file are not replayed
            deals, problems = load_deals(deals_path, first_board, deal_tags_only=True)
        except DealsError as exc:
            print(f"bridge-table replay: {exc}", file=sys.stderr)
            return 2
        for problem in problems:
            print(f"{deals_path}: {problem}", file=sys.stderr)
    policy = None
    if args.policy:
        from controller.indicators.policy import IndicatorPolicy, PolicyError
        try:
            policy = IndicatorPolicy.load(args.policy)
        except (OSError, PolicyError) as exc:
            print(f"bridge-table replay: {exc}", file=sys.stderr)
            return 2
    languages = tuple(lang.strip() for lang in args.languages.split(",") if lang.strip())

    def make_engine() -> Engine:
        return Engine(root=args.root, deals=deals, rules=rules, policy=policy,
                      kinds=frozenset(kinds | {"error"}) if kinds is not None else None,
                      schedule=schedule, pairs_at=pairs_at, languages=languages)

    try:
        engine = make_engine()
    except ValueError as exc:  # --languages
        print(f"bridge-table replay: {exc}", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("bridge-table replay: --jobs must be at least 1", file=sys.stderr)
        return 2
    if out is None:
        out = sys.stdout.buffer
    try:
        fp: IO[bytes] = sys.stdin.buffer if args.events == "-" else open(args.events, "rb")
    except OSError as exc:
        print(f"bridge-table replay: {args.events}: cannot read: {exc.strerror or exc}",
              file=sys.stderr)
        return 2
    head = fp.peek(65536) if isinstance(fp, io.BufferedReader) else b""
    reason = binary_reason(head)
    if reason is not None:  # one line, not one per line of garbage
        print(f"bridge-table replay: {args.events}: not an events file: {reason}",
              file=sys.stderr)
        fp.close()
        return 2
    try:
        with fp:
            lines: Iterable[bytes] = fp
            if args.jobs > 1:
                from controller.replay import jobs  # its process pool only when asked for
                data = fp.read()
                if jobs.run(make_engine, data, jobs=args.jobs, table=args.table,
                                   errors=sys.stderr, source=args.events, out=out,
                                   kinds=kinds):
                    out.flush()
                    return 0
                lines = data.split(b"\n")  # one process after all
            replay_to(engine, lines, out, kinds, table=args.table, errors=sys.stderr,
                      source=args.events)
    except KeyboardInterrupt:
        print("bridge-table replay: interrupted", file=sys.stderr)
        return 130
    out.flush()
    return 0
