"""The release gate: what of a session may go public, and when. Pure: no I/O, no clock.

It fails closed. A feed item, alert or result of board ``b`` at table ``t`` is released
only when

- the movement names ``t`` as a table that plays ``b`` in this session, and
- every table that plays ``b`` in the session (``movement.tables_playing(b)``) has
  finished it, as the controller told (see *trust* below), and
- ``delay`` seconds have passed since the last of them finished,

or when the operator releases it by hand. Anything else is held: a table or board the
movement does not name is held and *reported*, never released, until released by hand; a
hold by hand wins over everything. ``release="board"`` (the table's own board only) and
``release="live"`` (every item after ``delay``) are explicit, leaky choices for events
where every table plays its own boards; ``round`` (the default) needs a movement.

Trust. Only messages of this session count (``ours``: their ``session``, wire 1.8). A
board counts as finished at a table only when, in this session,

1. the board was seen at the table: a ``state`` showing it (in play, or already over: a
   board read and finished inside one controller batch shows only that) or a ``feed``
   item of it (``seen``);
2. a well-formed ``result`` for it came (its ``table`` is the topic's, contract, tricks
   and score of the right types and ranges) and the controller's status says ``online``;
3. the table's latest state shows the board ``complete``/``done`` with the result's
   contract and declarer, or shows a board the table went on to after it (``left``: the
   board's last state, QoS 0, may never reach a relay that was away).

A result not yet trusted waits (``pending``) and is checked again on every status, state
and result of its table: never dropped. A forged ``result`` alone, one of the last
session, or one for a board never seen in play finishes nothing. What the gate cannot
tell: a forger who can publish ``state`` *and* ``result`` as the controller would, with the
controller online, is indistinguishable from it. Only the broker's ACL (the controller
alone may publish ``bridge/+/state|result``) stops that.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["MovementLike", "SessionLike", "GatePolicy", "Item", "Gate", "Report",
           "RELEASES", "PLAYING", "FINISHED"]

RELEASES = ("round", "board", "live")
PLAYING = frozenset({"scanning", "auction", "lead", "play"})
FINISHED = frozenset({"complete", "done"})
KINDS = ("feed", "alert", "result")


@runtime_checkable
class MovementLike(Protocol):
    """What the gate needs of a movement (the session file's ``Movement`` has it)."""

    @property
    def rounds(self) -> Sequence[Any]: ...  # each with ``number`` and ``tables``

    def tables_playing(self, board: int) -> frozenset[str]: ...

    def boards_at(self, table: str, round: int) -> tuple[int, ...]: ...


class SessionLike(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def movement(self) -> MovementLike: ...


@dataclass(frozen=True)
class GatePolicy:
    session_id: str
    movement: MovementLike | None = None
    release: str = "round"
    delay: float = 0.0

    def __post_init__(self) -> None:
        if self.release not in RELEASES:
            raise ValueError(f"release must be one of {', '.join(RELEASES)}, "
                             f"not {self.release!r}")
        if self.delay < 0 or self.delay != self.delay:
            raise ValueError("delay must not be negative")
        if not self.session_id:
            raise ValueError("a session id is needed to tell sessions apart")
        if self.release == "round" and self.movement is None:
            raise ValueError("--release round needs the session's movement (--session or "
                             "--schedule); refusing to start rather than release early")

    @classmethod
    def for_session(cls, session: SessionLike, **kw: Any) -> GatePolicy:
        return cls(session.id, session.movement, **kw)


@dataclass(frozen=True)
class Item:
    """One message waiting: ``kind`` is ``feed``, ``alert`` or ``result``."""

    n: int
    table: str
    kind: str
    board: int | None
    payload: dict[str, Any]
    at: float


@dataclass(frozen=True)
class Report:
    table: str
    board: int | None
    reason: str


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def result_consistent(table: str, payload: Mapping[str, Any]) -> str | None:
    """None when a ``result`` payload is well formed for ``table``, else why not."""
    if payload.get("table") != table:
        return "result names another table"
    board = _int(payload.get("board"))
    if board is None or board < 1:
        return "result has no board"
    contract = payload.get("contract")
    if not isinstance(contract, str) or not contract:
        return "result has no contract"
    score = _int(payload.get("score_ns"))
    tricks = _int(payload.get("tricks"))
    if contract != "Pass":
        if tricks is None or not 0 <= tricks <= 13:
            return "result tricks out of range"
        if payload.get("declarer") not in ("N", "E", "S", "W"):
            return "result has no declarer"
        if score is None:
            return "result has no score"
    elif score not in (0, None):
        return "a passed-out board scores 0"
    return None


def _against_state(result: Mapping[str, Any], state: Mapping[str, Any]) -> str | None:
    """The result against the table's state: the same contract and declarer where the
    state names them."""
    contract = result.get("contract")
    if contract != "Pass" and state.get("contract") not in (None, contract):
        return "its contract is not the one the table's state shows"
    if contract != "Pass" and state.get("declarer") not in (None, result.get("declarer")):
        return "its declarer is not the one the table's state shows"
    return None


@dataclass
class Gate:
    policy: GatePolicy
    held: list[Item] = field(default_factory=list)
    #: boards seen in play at a table in this session (a ``state`` or ``feed`` item of
    #: it), numbered in the order they were first seen
    started: dict[tuple[str, int], int] = field(default_factory=dict)
    #: boards a table moved on from (a ``state`` of a board seen later, or of none)
    left: set[tuple[str, int]] = field(default_factory=set)
    #: per table, the boards seen and not yet left
    open: dict[str, set[int]] = field(default_factory=dict)
    done: dict[tuple[str, int], float] = field(default_factory=dict)
    # operator's decisions: (table or "*", board) -> "release" | "hold"
    manual: dict[tuple[str, int], str] = field(default_factory=dict)
    #: per status topic: "*" the daemon of every table; else a table's own controller or a
    #: controller of some tables (its share's name)
    online: dict[str, bool] = field(default_factory=dict)
    #: what a controller of some tables serves, per status topic (1.15: ``serves``)
    serving: dict[str, frozenset[str]] = field(default_factory=dict)
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: the latest trusted-session result of each board not yet finished: held and checked
    #: again on every status, state or result of its table, never dropped
    pending: dict[tuple[str, int], Mapping[str, Any]] = field(default_factory=dict)
    reports: dict[tuple[str, int | None, str], Report] = field(default_factory=dict)
    #: what changed since the store last saved (``drain``): (what, key)
    changes: list[tuple[str, Any]] = field(default_factory=list)
    n: int = 0

    # -- sessions -------------------------------------------------------------------------
    def ours(self, table: str, payload: Mapping[str, Any]) -> bool:
        """Whether a controller message belongs to this gate's session (wire 1.8): its
        ``session`` names it. One naming none counts only for an ad hoc relay (no
        movement, ``--release board|live``); one naming another session is reported and
        held out: a relay left running into the next session publishes none of it."""
        sid = payload.get("session")
        if sid == self.policy.session_id:
            return True
        if sid is None:
            if self.policy.movement is None:
                return True
            self._report(table, None, "untrusted: the controller's message names no session "
                                      "(run it with --session or --schedule): held")
            return False
        self._report(table, None, f"the controller runs session {str(sid)[:80]!r}, not "
                                  f"{self.policy.session_id!r}: everything of it held")
        return False

    # -- the controller's word ------------------------------------------------------------
    def controller_status(self, table: str | None, payload: Any, now: float = 0.0
                          ) -> list[tuple[str, int]]:
        """``{root}/controller/status`` (``table`` None) or ``{root}/controller/{t}/status``;
        returns the boards it newly finished (results waiting for the controller)."""
        ok = isinstance(payload, Mapping) and payload.get("status") == "online" and \
            self.ours(table or "*", payload)
        key = "*" if table is None else table
        self.online[key] = ok
        # 1.15: a controller of some tables (``--tables``/``--partition``: its status topic
        # is named after its share, not a table) says which it serves
        serves = payload.get("serves") if ok and isinstance(payload, Mapping) else None
        if isinstance(serves, list) and all(isinstance(t, str) for t in serves):
            self.serving[key] = frozenset(serves)
        else:
            self.serving.pop(key, None)
        if not ok:
            return []
        return [k for t in sorted({t for t, _ in self.pending}) for k in
                self._check_pending(t, now)]

    def controller_online(self, table: str) -> bool:
        """Whether a controller whose word covers ``table`` is online for this session:
        the daemon of every table, the table's own (``bridge-table run``), or one whose
        status says it serves the table (1.15)."""
        if self.online.get("*", False) or self.online.get(table, False):
            return True
        return any(table in tables for key, tables in self.serving.items()
                   if self.online.get(key, False))

    def seen(self, table: str, board: int, order: int | None = None) -> int:
        """Board ``board`` was seen in play at ``table`` in this session; its order."""
        key = (table, board)
        if key not in self.started:
            if order is None:
                order = max(self.started.values(), default=0) + 1
                self.changes.append(("started", (table, board, order)))
            self.started[key] = order
            if key not in self.left:
                self.open.setdefault(table, set()).add(board)
        return self.started[key]

    def leave(self, table: str, board: int) -> None:
        if (table, board) not in self.left:
            self.left.add((table, board))
            self.changes.append(("left", (table, board)))
        self.open.get(table, set()).discard(board)

    def state(self, table: str, payload: Mapping[str, Any], *, retained: bool = False,
              now: float) -> list[tuple[str, int]]:
        """A ``state`` of ``table`` (of this session: ``ours``); returns the boards it
        newly finished. A retained state counts as a live one: its ``session`` tells that
        it is this session's (a v1 state naming no session is trusted only by an ad hoc
        relay, live)."""
        if payload.get("table") != table or not self.ours(table, payload):
            return []
        if payload.get("session") is None and retained:
            return []   # an ad hoc relay: a v1 retained state may be the last session's
        board = _int(payload.get("board"))
        self.states[table] = dict(payload)
        order = None
        if board is not None and (payload.get("phase") in PLAYING or
                                  payload.get("phase") in FINISHED):
            # a board read and finished inside one controller batch shows only finished
            order = self.seen(table, board)
        # the boards seen before this one are over at the table (a state overtaken by a
        # later board's feed leaves that board open)
        for b in list(self.open.get(table, ())):
            if b != board and (order is None or self.started[(table, b)] < order):
                self.leave(table, b)
        return self._check_pending(table, now)

    def result(self, table: str, payload: Mapping[str, Any], *, now: float
               ) -> list[tuple[str, int]]:
        """A ``result`` of ``table``: a candidate for finishing its board (see the module).
        It waits (``pending``) until the controller is online, the board was seen in play
        and the table's state shows it over (or the table moved on): never dropped."""
        if not self.ours(table, payload):
            return []
        why = result_consistent(table, payload)
        board = _int(payload.get("board"))
        if why is not None or board is None:
            self._report(table, board, f"untrusted result: {why}")
            return []
        if (table, board) in self.done:
            return []
        self.pending[(table, board)] = payload
        return self._check_pending(table, now)

    def _check_pending(self, table: str, now: float) -> list[tuple[str, int]]:
        if not self.controller_online(table):
            return []
        state = self.states.get(table, {})
        out = []
        for key in [k for k in self.pending if k[0] == table]:
            if key not in self.started:
                continue
            here = _int(state.get("board")) == key[1]
            if here and state.get("phase") in FINISHED:
                why = _against_state(self.pending[key], state)
                if why is not None:
                    self.pending.pop(key)
                    self._report(table, key[1], f"untrusted result: {why}")
                    continue
            elif here or key not in self.left:
                continue
            self.pending.pop(key)
            if key not in self.done:
                self.done[key] = now
                self.changes.append(("done", (key, now)))
            out.append(key)
        return out

    def waiting(self) -> list[dict[str, Any]]:
        """Each held board and what it waits for: the tables of the movement that have not
        finished it, and why a result of it is not trusted yet (``broadcast status``)."""
        out = []
        for t, b in sorted({(h.table, h.board) for h in self.held},
                           key=lambda k: (k[0], k[1] or 0)):
            entry: dict[str, Any] = {"table": t, "board": b}
            mv = self.policy.movement
            if b is not None and mv is not None:
                tables = mv.tables_playing(b)
                entry["waits_for"] = sorted(x for x in tables if (x, b) not in self.done)
                if t not in tables:
                    entry["why"] = "not in the movement"
            if b is not None and (t, b) in self.pending:
                entry["why"] = ("its result waits for the controller's status"
                                if not self.controller_online(t) else
                                "its result waits for the board to be seen in play"
                                if (t, b) not in self.started else
                                "its result waits for the table's state to show it over")
            decisions = (self.manual.get((t, b or 0)), self.manual.get(("*", b or 0)))
            if "hold" in decisions:
                entry["why"] = "held by the operator"
            out.append(entry)
        return out

    # -- the operator ---------------------------------------------------------------------
    def operator(self, action: str, board: int, table: str | None = None) -> None:
        """``release`` or ``hold`` a board (at one table, or ``table=None``: everywhere);
        ``clear`` forgets the operator's decision."""
        key = (table or "*", board)
        if action == "clear":
            self.manual.pop(key, None)
        elif action in ("release", "hold"):
            self.manual[key] = action
        else:
            raise ValueError(f"unknown operator action {action!r}")

    # -- items ----------------------------------------------------------------------------
    def offer(self, table: str, kind: str, payload: dict[str, Any], now: float) -> Item:
        board = _int(payload.get("board"))
        self.n += 1
        item = Item(self.n, table, kind, board, payload, now)
        self.held.append(item)
        self._explain(item)
        return item

    def restore(self, items: Iterable[Item]) -> None:
        self.held = sorted(items, key=lambda h: h.n)
        self.n = max([self.n, *(h.n for h in self.held)])
        for h in self.held:   # a result not yet trusted waits again
            if h.kind == "result" and h.board is not None and \
                    (h.table, h.board) not in self.done:
                self.pending[(h.table, h.board)] = h.payload
            elif h.kind == "feed" and h.board is not None and \
                    h.payload.get("session") == self.policy.session_id:
                # kept by a relay of another session while this one ran (relay.py)
                self.seen(h.table, h.board)

    def _explain(self, item: Item) -> None:
        p = self.policy
        if item.board is None:
            self._report(item.table, None, "an item with no board: held")
        elif p.movement is not None and \
                item.table not in p.movement.tables_playing(item.board):
            self._report(item.table, item.board,
                         "the movement does not name this table for this board: held "
                         "until released by hand")

    def _report(self, table: str, board: int | None, reason: str) -> None:
        key = (table, board, reason)
        if key not in self.reports:
            self.reports[key] = Report(table, board, reason)
            self.changes.append(("report", self.reports[key]))

    def release_time(self, item: Item) -> float | None:
        """When ``item`` may go out; None while it must stay held."""
        if item.board is None:
            return None
        b, t = item.board, item.table
        decisions = (self.manual.get((t, b)), self.manual.get(("*", b)))
        if "hold" in decisions:
            return None
        if "release" in decisions:
            return item.at
        p = self.policy
        if p.movement is not None:
            tables = p.movement.tables_playing(b)
            if t not in tables:
                return None
        else:
            tables = frozenset({t})
        if p.release == "live":
            return item.at + p.delay
        if p.release == "board":
            tables = frozenset({t})
        times = [self.done.get((x, b)) for x in tables]
        if not times or any(x is None for x in times):
            return None
        return max(x for x in times if x is not None) + p.delay

    def ready(self, now: float) -> list[Item]:
        """The items that may go out now, in arrival order, still held: each leaves the
        gate when ``released`` (once the broker has acknowledged it). A table's board keeps
        its order (an item waits for the earlier items of the same table and board)."""
        out: list[Item] = []
        blocked: set[tuple[str, int | None]] = set()
        for item in self.held:
            key = (item.table, item.board)
            when = self.release_time(item)
            if key in blocked or when is None or when > now:
                blocked.add(key)
            else:
                out.append(item)
        return out

    def released(self, item: Item) -> None:
        for i, h in enumerate(self.held):
            if h.n == item.n:
                del self.held[i]
                break

    def due(self, now: float) -> list[Item]:
        """``ready`` and ``released`` at once (no broker to wait for)."""
        out = self.ready(now)
        gone = {i.n for i in out}
        self.held = [h for h in self.held if h.n not in gone]
        return out

    def next_time(self) -> float | None:
        times = [t for t in (self.release_time(h) for h in self.held) if t is not None]
        return min(times) if times else None
