"""``bridge-table broadcast``: the controllers' feed to the public, through the release gate.

The relay (``relay.py``, on the broker: ``mqtt.py``) reads ``{root}/+/feed``, ``alert``,
``result`` and ``state`` and the controller's status, and republishes what the gate
(``gate.py``) releases on ``{public}/{t}/feed``, ``alert`` and ``result`` (retained), with
the session id added, plus a retained view of each released board (``{public}/{t}/board/{b}``,
``{public}/{t}/snapshot``: ``view.py``) and the session (``{public}/session``) for late
joiners, what each table plays now (``{public}/{t}/now``: board and contract, no card) and
the operator's commentary (``{public}/commentary``). ``--out DIR`` writes a live LIN and PBN
file per table as boards are released. Exactly once: see ``Relay``.

Everything is kept in a SQLite store (``store.py``), per session id: held items, boards
seen in play, finished boards, the operator's decisions, reports. A relay killed mid-round
loses nothing. ``bridge-table broadcast release|hold|clear|status|comment --store FILE``
(``operator.py``) talk to the running relay through that store (it reads the operator's
decisions every second).
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.broadcast.gate import RELEASES, Gate, GatePolicy
from controller.broadcast.mqtt import run_until_signalled
from controller.broadcast.operator import ACTIONS, MAX_COMMENT, OperatorError, operate
from controller.broadcast.relay import Relay
from controller.broadcast.store import open_relay_store
from controller.broadcast.view import session_views
from controller.broker.login import LoginRefused
from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import ControllerError, add_log_level, plain_help, setup_logging

__all__ = ["main"]

log = logging.getLogger("bridge_table.broadcast")


def _operator_parser(action: str) -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=f"bridge-table broadcast {action}")
    ap.add_argument("--store", default="var/broadcast.sqlite",
                    help="the running relay's store (default %(default)s)")
    ap.add_argument("--session-id", help="default: the session the relay runs")
    if action == "comment":
        ap.add_argument("text", help=f"one line for the audience (at most {MAX_COMMENT} "
                                     "characters)")
    elif action == "status":
        ap.add_argument("--json", action="store_true",
                        help="the status as JSON (held, waiting, finished, manual, reports, "
                             "refused)")
    else:
        ap.add_argument("--board", type=int, required=True, help="the board number")
        ap.add_argument("--table", help="one table (default: every table)")
    if action == "release":
        ap.add_argument("--force", action="store_true",
                        help="release a board some table of the movement has not finished")
    return ap


def _operator_main(action: str, argv: Sequence[str]) -> int:
    args = _operator_parser(action).parse_args(argv)
    try:
        print(operate(args.store, action, session_id=args.session_id,
                      board=getattr(args, "board", None), table=getattr(args, "table", None),
                      force=getattr(args, "force", False), text=getattr(args, "text", ""),
                      as_json=getattr(args, "json", False)))
    except OperatorError as exc:
        print(f"bridge-table broadcast: {exc}", file=sys.stderr)
        return 2
    return 0


def _relay_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bridge-table broadcast", description=plain_help(__doc__, first_line=True),
        epilog="Operator: bridge-table broadcast release|hold|clear --board B [--table T] "
               "[--store FILE] (release: --force for a board not finished everywhere); "
               "bridge-table broadcast status; bridge-table broadcast comment TEXT.")
    add_broker_arguments(ap)
    ap.add_argument("--session", help="the session file (its movement and id)")
    ap.add_argument("--schedule", help="schedule TOML: every round (or one round)")
    ap.add_argument("--session-id", help="override the session id")
    ap.add_argument("--release", choices=RELEASES, default="round",
                    help="round (default): once every table of the session that plays the "
                         "board has finished it; board/live: explicit, may leak")
    ap.add_argument("--delay", type=float, default=0.0, help="seconds on top (default 0)")
    ap.add_argument("--deals", help="deals file: the hands shown once a board is released")
    ap.add_argument("--out", help="directory for the live LIN and PBN files")
    ap.add_argument("--site", help="where the session is played (PBN Site; default: the "
                                   "session file's, else ?)")
    ap.add_argument("--date", help="the session's date, YYYY.MM.DD (PBN Date; default: the "
                                   "session file's, else the day the relay starts)")
    ap.add_argument("--root", default="bridge", help="topic root of the tables (default "
                                                     "%(default)s)")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    ap.add_argument("--store", default="var/broadcast.sqlite", help="the relay's SQLite store")
    ap.add_argument("--client-id", help="MQTT client id (default: unique, kept in the store)")
    ap.add_argument("--now-contract", action="store_true",
                    help="show each table's contract and declarer on public/T/now while "
                         "its board is still held. Only for a secured venue (no players' "
                         "phones in the audience): a held board's contract seen by a player "
                         "who has it still to play is unauthorised information (Law 16), so "
                         "by default it waits for the board's release")
    add_log_level(ap)
    return ap


def _load_session(args: argparse.Namespace) -> Any:
    """The session: ``--session`` (the session file, controller.session) or ``--schedule``
    (the schedule TOML, one round or every round)."""
    if args.session:
        from controller.session import load_session
        return load_session(args.session)
    if args.schedule:
        from controller.session.schedule import load_movement
        return load_movement(args.schedule)
    return None


def _policy(args: argparse.Namespace, session: Any) -> GatePolicy:
    """The gate's policy: the session's id and movement, ``--release`` and ``--delay``."""
    movement = session.movement if session is not None else None
    sid = args.session_id or (session.id if session is not None else None)
    if sid is None:
        if args.release == "round":
            raise ValueError("--release round needs the session's movement (--session or "
                             "--schedule); refusing to start rather than release early")
        sid = time.strftime("adhoc-%Y%m%d")
    return GatePolicy(sid, movement, release=args.release, delay=args.delay)


def _deals(args: argparse.Namespace) -> dict[int, str]:
    """``--deals``: each board's hands (PBN deal text)."""
    if not args.deals:
        return {}
    from controller.boards.deals import DealsError, load_deals
    try:
        infos, _ = load_deals(args.deals)
    except DealsError as exc:
        raise ValueError(str(exc)) from None
    return {n: i.deal.to_pbn() for n, i in infos.items() if i.deal is not None}


def _session_info(args: argparse.Namespace, session: Any
                  ) -> tuple[dict[tuple[str, int], dict[str, Any]], dict[str, Any]]:
    """The views' fields from the session, ``--site`` and ``--date`` (default: today)."""
    info, session_info = session_views(session)
    if args.site:
        session_info["site"] = args.site
    if args.date:
        session_info["date"] = args.date
    session_info.setdefault("date", time.strftime("%Y.%m.%d"))
    return info, session_info


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ACTIONS:
        return _operator_main(argv[0], argv[1:])
    from controller.session.schedule import ScheduleError

    args = _relay_parser().parse_args(argv)
    setup_logging(args)
    try:
        broker = settings_from_args(args)
        session = _load_session(args)
        policy = _policy(args, session)
        deals = _deals(args)
    except (ControllerError, ScheduleError, ValueError, OSError) as exc:
        print(f"bridge-table broadcast: {exc}", file=sys.stderr)
        return 2
    if args.release != "round":
        log.warning("--release %s: boards go public before every table has played them",
                    args.release)
    if args.now_contract:
        log.warning("--now-contract: held boards' contracts and declarers go public on "
                    "public/T/now (Law 16: only where no player in the room can see them)")
    try:
        store = open_relay_store(args.store, policy.session_id, policy.movement)
    except (OSError, sqlite3.DatabaseError) as exc:
        print(f"bridge-table broadcast: {args.store}: cannot use it as the relay's store: "
              f"{exc}", file=sys.stderr)
        return 2
    info, session_info = _session_info(args, session)
    relay = Relay(Gate(policy), root=args.root, public=args.public, store=store, info=info,
                  deals=deals, out=Path(args.out) if args.out else None,
                  session_info=session_info, now_contract=args.now_contract)
    log.info("session %s, release %s, delay %ss, client id %s", policy.session_id,
             args.release, args.delay, args.client_id or store.client_id())
    try:
        run_until_signalled(broker, relay, client_id=args.client_id)
    except LoginRefused as exc:
        log.error("%s", exc)
        return 2
    finally:
        store.close()
    log.info("stopped")     # as the console and the vugraph: systemd's log shows the end
    return 0


if __name__ == "__main__":
    sys.exit(main())
