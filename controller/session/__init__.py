"""The session: the session file and its movement, scoring across tables, records out.

``controller.session`` is the one import for the rest of the controller: the daemon's
``--session``, the broadcast's release gate and the console read ``load_session(path)``.

The results read from the tables are ``table_results``; their scoring across tables is
``scoring`` (as data and text: ``report``); the records out are ``export``; the ``score`` and
``export`` commands are ``cli_score`` and ``cli_export``.
"""

from __future__ import annotations

from controller.session.adjustments import (
    parse_adjustment,
    remove_adjustment,
    set_adjustment,
    with_adjustments,
)
from controller.session.movement import (
    Movement,
    MovementError,
    Round,
    TableRound,
    howell,
    mitchell,
    teams,
)
from controller.session.sessionfile import (
    Adjustment,
    Competitor,
    Session,
    SessionError,
    WeightedPart,
    load_session,
    parse_session,
)
from controller.session.table_results import (
    BoardResult,
    PairScore,
    ResultsError,
    SessionScores,
    TeamScore,
    load_results,
    read_results,
)

__all__ = [
    "BoardResult", "PairScore", "TeamScore", "SessionScores", "read_results",
    "ResultsError", "load_results",
    "Movement", "MovementError", "Round", "TableRound", "mitchell", "howell", "teams",
    "Competitor", "Session", "SessionError", "load_session", "parse_session",
    "Adjustment", "parse_adjustment", "set_adjustment", "remove_adjustment",
    "with_adjustments", "WeightedPart",
]
