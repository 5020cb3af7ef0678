"""The Engine a command runs, built from its settings: deals file, Laws edition, indicator
policy, session file or schedule, limits (``bridge-table controller``, ``run``, ``results``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from controller.commandline import ControllerError
from controller.engine.rounds import rounds_of
from controller.indicators.policy import IndicatorPolicy, PolicyError

if TYPE_CHECKING:
    from controller.laws.record import DealInfo
    from controller.service.daemon import EngineLike

__all__ = ["build_engine", "load_deals", "session_info"]

log = logging.getLogger("bridge_table.controller")


def load_deals(path: str | Path, first_board: int | None = None) -> dict[int, DealInfo]:
    """The boards of a deals file (PBN, DUP, BRI, DGE) by number; broken boards are logged
    and left out (the sound ones still load)."""
    from controller.boards.deals import DealsError
    from controller.boards.deals import load_deals as read_deals

    try:
        deals, problems = read_deals(path, first_board)
    except DealsError as e:
        raise ControllerError(str(e)) from e
    for problem in problems:
        log.warning("%s: %s", path, problem)
    log.info("%s: %d board(s)", path, len(deals))
    return deals


def build_engine(*, root: str = "bridge",
                 deals: str | Path | Mapping[int, DealInfo] | None = None,
                 rules: str = "2017", policy: str | Path | None = None,
                 schedule: str | Path | None = None,
                 session: str | Path | None = None,
                 first_board: int | None = None, max_tables: int | None = None,
                 max_sources: int | None = None) -> EngineLike:
    """The Engine for the command line's settings; ``deals`` a deals file or the boards.
    ``session``: the session file; its movement is the schedule (unless ``schedule`` is
    given too) and names the pairs at each table, its deals file is used without ``deals``."""
    from controller.engine import MAX_SOURCES, MAX_TABLES, Engine
    from controller.laws.cards import ParseError, Rules

    try:
        rules_value = Rules.parse(rules)
    except ParseError as e:
        raise ControllerError(str(e)) from e
    try:
        policy_value = IndicatorPolicy.load(policy) if policy else None
    except PolicyError as e:
        raise ControllerError(str(e)) from e
    pairs_at = None
    tables = None
    rounds = None
    session_id = None
    if session:
        from controller.session import SessionError, load_session
        try:
            sess = load_session(session)
        except SessionError as e:
            raise ControllerError(str(e)) from e
        tables = sess.movement.schedule()
        rounds = rounds_of(sess.movement.rounds)
        pairs_at = sess.movement.pairs_at
        session_id = sess.id
        # said before the boards line, so a director can see the right file was taken
        log.info("session %s (%s): %s movement, %d table(s), %d round(s), %d %s",
                 session, sess.id, sess.movement.kind, len(sess.movement.tables),
                 len(sess.movement.rounds), len(sess.movement.pairs),
                 "team(s)" if sess.is_teams else "pair(s)")
        if not deals:
            deals = sess.deals
            first_board = first_board or sess.deals_first_board
    boards = deals if isinstance(deals, Mapping) else (
        load_deals(deals, first_board) if deals else None)
    if schedule:
        from controller.session.schedule import ScheduleError, load_movement, load_schedule
        try:
            try:
                tables = load_schedule(schedule)
                rounds = None     # the one round it names: its boards are the schedule
                whole = load_movement(schedule)
            except ScheduleError as one_round:
                try:   # the every-round form (docs/broadcast.md) names the session too
                    whole = load_movement(schedule)
                except ScheduleError:
                    raise one_round from None
                tables = whole.movement.schedule()
                rounds = rounds_of(whole.movement.rounds)
                pairs_at = pairs_at or whole.movement.pairs_at
            # the id ``bridge-table broadcast --schedule`` derives from the same file
            session_id = session_id or whole.id
        except ScheduleError as e:
            raise ControllerError(str(e)) from e
    engine: EngineLike = Engine(root=root, deals=boards, rules=rules_value,
                                policy=policy_value, schedule=tables, rounds=rounds,
                                pairs_at=pairs_at,
                                max_tables=max_tables or MAX_TABLES,
                                max_sources=max_sources or MAX_SOURCES)
    if session_id:
        engine.session_id = session_id  # type: ignore[attr-defined]  # an Engine
    return engine


def session_info(engine: EngineLike) -> dict[str, str]:
    """The session the engine runs, for the status (wire 1.8): a broadcast relay trusts
    only the status of its own session."""
    sid = getattr(engine, "session_id", None)
    return {"session": sid} if isinstance(sid, str) and sid else {}
