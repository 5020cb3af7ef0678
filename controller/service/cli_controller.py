"""``bridge-table controller``: the rules daemon (``daemon.py``) for every table on a broker.

The command line makes the daemon: its broker, the Engine (``engines.py``), the tables it
serves (``--tables``, ``--partition``: ``partition.py``), who may speak where
(``--identities``), its journal and intake bound; then it runs until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from controller.broker.identity import IdentityError, identities_beside, load_identities
from controller.broker.login import LoginRefused
from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import ControllerError, add_log_level, bounded, setup_logging
from controller.service.daemon import (
    DEFAULT_GATHER,
    DEFAULT_MAX_PAYLOAD,
    ControllerDaemon,
    EngineLike,
    run_until_signalled,
)
from controller.service.engines import build_engine, session_info
from controller.service.intake import INTAKE_BURST, INTAKE_RATE, Intake
from controller.service.journal import Journal, JournalError

__all__ = ["main", "parser", "daemon_from_args", "partition_from_args"]

log = logging.getLogger("bridge_table.controller")


def default_journal_path() -> Path:
    state = os.environ.get("STATE_DIRECTORY")  # systemd's StateDirectory=
    return Path(state.split(":")[0]) / "journal.sqlite" if state else \
        Path("var") / "controller-journal.sqlite"


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table controller",
                                 description="The rules daemon for every table on a broker.")
    add_broker_arguments(ap)
    ap.add_argument("--deals", help="PBN deals file of the session (hands and markings)")
    ap.add_argument("--journal", help="journal file (default $STATE_DIRECTORY/journal.sqlite "
                                      "or var/controller-journal.sqlite)")
    ap.add_argument("--no-journal", action="store_true",
                    help="keep nothing on disk (a restart forgets every table)")
    ap.add_argument("--journal-sync", choices=("full", "normal"), default="full",
                    help="full: every commit synced (survives a power cut); "
                         "normal: survives a crash of the daemon only")
    ap.add_argument("--commit-gather", type=float, default=DEFAULT_GATHER * 1000, metavar="MS",
                    help="a batch of fewer than 32 events waits this many milliseconds for "
                         "more to share its journal commit (default %(default)g; 0: commit "
                         "at once)")
    ap.add_argument("--root", default="bridge", help="topic root (default %(default)s)")
    ap.add_argument("--rules", default="2017", help="Laws edition: 2017 or 2007")
    ap.add_argument("--policy", help="indicator policy file (TOML); default: the contract's")
    ap.add_argument("--schedule", help="the round's schedule (TOML): the boards each table "
                    "plays; another board read at a table is WRONG_BOARD")
    ap.add_argument("--first-board", type=int, default=None, metavar="N",
                    help="the board number of a .bri/.dge/.dup deals file's first record")
    ap.add_argument("--session", help="the session file (TOML, docs/session.md): its movement "
                    "is the schedule, state and result name the pairs at the table, its "
                    "deals file is the default --deals")
    ap.add_argument("--client-id", default="", help="MQTT client id (fixed: the broker keeps "
                                                    "the session under it)")
    ap.add_argument("--tables", metavar="SPEC",
                    help="serve only these tables: ids and ranges, e.g. 1-500,A1-A20 "
                         "(partitioned controllers, docs/scale.md)")
    ap.add_argument("--partition", metavar="K/N",
                    help="serve share K of N of the tables (stable hash of the table id) of "
                         "--tables, or of the session's movement or --schedule")
    ap.add_argument("--max-payload", type=int, default=DEFAULT_MAX_PAYLOAD, metavar="BYTES",
                    help="an input larger than this is refused before the journal "
                         "(default %(default)s)")
    ap.add_argument("--max-tables", type=_positive, default=None,
                    help="tables followed at most; an event for one more is refused with an "
                         "error (default 1000)")
    ap.add_argument("--max-sources", type=_positive, default=None,
                    help="sources (src) per table at most (default 64)")
    ap.add_argument("--identities", metavar="FILE",
                    default=os.environ.get("BRIDGE_TABLE_IDENTITIES"),
                    help="who is who (identities.toml of bridge-table broker-config): an "
                         "input whose src may not speak on its topic is refused with an "
                         "error (default $BRIDGE_TABLE_IDENTITIES)")
    ap.add_argument("--intake-burst", type=_positive, default=INTAKE_BURST,
                    help="events a table may send at once (default %(default)s)")
    ap.add_argument("--intake-rate", type=float, default=INTAKE_RATE,
                    help="events a second a table may send past the burst; more are dropped "
                         "(the bridge sends them again) with an error (default %(default)g)")
    ap.add_argument("--status-interval", type=float, default=30.0, metavar="SECONDS",
                    help="how often the retained status is published again (default "
                         "%(default)g)")
    add_log_level(ap)
    return ap


_positive = bounded(int, lambda v: v >= 1, "a whole number of at least 1")


def daemon_from_args(args: argparse.Namespace) -> ControllerDaemon:
    broker = settings_from_args(args)
    engine = build_engine(root=args.root, deals=args.deals, rules=args.rules,
                          policy=args.policy, schedule=args.schedule, session=args.session,
                          first_board=args.first_board,
                          max_tables=args.max_tables, max_sources=args.max_sources)
    tables, name = partition_from_args(args, engine)
    warn_unseated(tables, getattr(engine, "schedule", None) or {})
    identities = None
    # secure by default: the identities broker-config wrote beside this login, when the
    # option does not name them
    found = args.identities or identities_beside(
        args.credentials or os.environ.get("BRIDGE_TABLE_MQTT_CREDENTIALS"))
    if found:
        try:
            identities = load_identities(Path(found))
        except IdentityError as e:
            raise ControllerError(str(e)) from e
        if not args.identities:
            log.info("who is who: %s (found beside the credentials)", found)
    elif broker.username:
        log.warning("no --identities: any login that may publish on a table's topics may "
                    "use any src there (docs/security.md, 'Who is who')")
    if args.intake_rate <= 0:
        raise ControllerError("--intake-rate must be above 0")
    journal = None
    if not args.no_journal:
        path = Path(args.journal) if args.journal else default_journal_path()
        if name and not args.journal:  # each controller its own journal
            path = path.with_name(f"{path.stem}-{name}{path.suffix}")
        try:
            journal = Journal(path, sync=args.journal_sync)
        except JournalError as e:
            raise ControllerError(str(e)) from e
        log.info("journal %s", path)
    return ControllerDaemon(broker=broker, engine=engine, journal=journal, root=args.root,
                            client_id=args.client_id, max_payload=args.max_payload,
                            status_interval=args.status_interval,
                            only_tables=tables, name=name,
                            gather=max(0.0, args.commit_gather) / 1000,
                            identities=identities,
                            intake=Intake(args.intake_burst, args.intake_rate),
                            info={"rules": str(args.rules),
                                  **session_info(engine)})


def warn_unseated(tables: Sequence[str], schedule: Mapping[str, object]) -> list[str]:
    """Say at start which tables this controller serves (``--tables``) that the session's
    movement (or ``--schedule``) does not seat: each board played there will be alerted
    as not scheduled. Returns them."""
    if not schedule:
        return []
    unseated = [t for t in tables if t not in schedule]
    if unseated:
        log.warning("--tables: the session's movement does not seat table(s) %s (its tables: "
                    "%s): every board played there will be alerted as not scheduled "
                    "(WRONG_BOARD, Law 15)", ", ".join(unseated),
                    ", ".join(sorted(schedule)))
    return unseated


def partition_from_args(args: argparse.Namespace, engine: EngineLike
                        ) -> tuple[tuple[str, ...], str]:
    """The tables this controller serves (empty: all) and its name, from ``--tables`` and
    ``--partition`` (``controller.service.partition``)."""
    from controller.service.partition import (
        PartitionError,
        hash_share,
        parse_partition,
        parse_tables,
        scope_name,
    )

    if not args.tables and not args.partition:
        return (), ""
    tables = parse_tables(args.tables) if args.tables else ()
    part = parse_partition(args.partition) if args.partition else None
    if part is not None:
        known = tables or tuple(sorted(getattr(engine, "schedule", {}) or {}))
        if not known:
            raise PartitionError("--partition needs the tables to share: --tables, or a "
                                 "--session or --schedule naming them")
        tables = hash_share(known, *part)
        if not tables:
            raise PartitionError(f"--partition {args.partition}: no table falls in this share "
                                 f"of {len(known)}")
    return tables, scope_name(args.tables, part)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    setup_logging(args)
    try:
        daemon = daemon_from_args(args)
    except ControllerError as e:
        log.error("%s", e)
        return 2
    try:
        asyncio.run(run_until_signalled(daemon))
    except LoginRefused as e:
        log.error("%s", e)
        return 2
    finally:
        if daemon.journal is not None:
            daemon.journal.close()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
