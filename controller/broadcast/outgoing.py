"""What the relay may publish: each public payload decodes as its wire Struct, or it is refused.

The public topics reach every viewer's page; a payload a table's controller (or anyone who
may write ``bridge/{t}/...``) made up must never become one. Every message the relay would
publish is decoded as its Struct of ``controller.wire`` (seat, card, call, contract, board
typed) before it goes out; one that does not decode is not published and is reported once
(a warning in the relay's log, and ``Refusals.recent``). The payload that goes out is the
one that was checked, unchanged: fields a Struct does not know pass (a newer controller may
add some) and no page shows them.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Mapping
from typing import Any, Final

from controller.wire import public_kind, public_problem

__all__ = ["Refusals", "problem", "public_kind"]

#: why a payload is not its public topic's (controller/wire.py: the vugraph asks it too)
problem = public_problem

log = logging.getLogger("bridge_table.broadcast")

#: the most refusals kept for the operator's status (the log has them all)
KEPT: Final = 100


class Refusals:
    """The payloads refused, each reported once (topic and reason) and the latest kept; the
    relay writes them to its store for ``broadcast status`` (``status``)."""

    def __init__(self) -> None:
        self.recent: deque[tuple[str, str]] = deque(maxlen=KEPT)
        #: every payload refused since the relay started (a repeated one too)
        self.count = 0
        self._seen: set[tuple[str, str]] = set()

    def status(self) -> dict[str, Any]:
        """The count and the recent refusals, oldest first, as ``broadcast status`` shows."""
        return {"count": self.count,
                "recent": [{"topic": t, "reason": r} for t, r in self.recent]}

    def check(self, topic: str, kind: str, payload: Mapping[str, Any]) -> bool:
        """Whether ``payload`` may go out on ``topic``; a refusal is logged and kept."""
        why = problem(kind, payload)
        if why is None:
            return True
        self.count += 1
        key = (topic, why)
        if key not in self._seen:
            if len(self._seen) > 10 * KEPT:
                self._seen.clear()
            self._seen.add(key)
            self.recent.append(key)
            log.warning("refused: %s is not a %s payload of the wire contract: %s",
                        topic, kind, why)
        return False
