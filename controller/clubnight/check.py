"""The night's check: what the records must hold. The events the players played, through
one ``Engine`` in this process (``bridge-table replay``'s path), give every table's result;
the records ``results`` wrote from the broker must give the same ones, none lost, none
added, none changed on the way (a crash that loses an event, or applies one twice, changes
a board's result).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

from controller import wire
from controller.clubnight.plan import TablePlay, table_rounds
from controller.engine import Engine
from controller.laws.record import DealInfo
from controller.replay.stream import replay_lines
from controller.session import Session

__all__ = ["RESULT_FIELDS", "compare", "expected_messages"]

#: the result fields that must arrive as the table played them
RESULT_FIELDS = ("contract", "declarer", "tricks", "tricks_played", "score_ns")


def expected_messages(session: Session, deals: Mapping[int, DealInfo],
                      played: Mapping[tuple[str, int], TablePlay]) -> list[str]:
    """The result, feed and alert lines one Engine gives for what the players played
    (each table's events numbered as its bridge would)."""
    engine = Engine(deals=deals, schedule=session.movement.schedule(),
                    pairs_at=session.movement.pairs_at)
    lines: list[str] = []
    seq: Counter[str] = Counter()
    for _, tables in table_rounds(session):
        for t, bs in tables.items():
            for b in bs:
                for event in played[(t, b)].events:
                    seq[t] += 1
                    lines.append(json.dumps({"topic": wire.topic(t, "event"), "payload": {
                        **event, "v": wire.VERSION, "src": f"table-{t}-pi", "seq": seq[t]}}))
    return [json.dumps({"topic": o.topic, "payload": o.payload}) + "\n"
            for o in replay_lines(engine, lines)
            if o.topic.rsplit("/", 1)[-1] in ("result", "feed", "alert")]


def compare(live: Mapping[tuple[str, int], Any], want: Mapping[tuple[str, int], Any]
            ) -> list[str]:
    """Each table and board whose result the records lost, added or changed."""
    problems: list[str] = []
    for key in sorted(set(live) | set(want), key=lambda k: (k[1], k[0])):
        got = live.get(key)
        expected = want.get(key)
        got_r = got.result if got is not None else None
        want_r = expected.result if expected is not None else None
        if want_r is None and got_r is not None:
            problems.append(f"table {key[0]} board {key[1]}: a result nobody played")
        elif want_r is not None and got_r is None:
            problems.append(f"table {key[0]} board {key[1]}: its result is missing")
        elif want_r is not None and got_r is not None:
            diff = [f for f in RESULT_FIELDS if got_r.get(f) != want_r.get(f)]
            if diff:
                problems.append(f"table {key[0]} board {key[1]}: {', '.join(diff)} "
                                f"{[got_r.get(f) for f in diff]} instead of "
                                f"{[want_r.get(f) for f in diff]}")
    return problems
