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

Trust. A board counts as finished at a table only when, in this session,

1. the relay saw the table's retained ``state`` for that board *live* in a playing phase
   (``scanning``/``auction``/``lead``/``play``), not as a retained message delivered on
   subscribing (that may be the last session's), so a board 1 finished in the last session
   never finishes this session's board 1;
2. a ``result`` for it arrived while the controller's status topic said ``online``;
3. the result is consistent: its ``table`` is the topic's, its ``board`` the state's, the
   table's latest state is that board in phase ``complete``/``done``, the contract, tricks
   and score have the right types and ranges.

A forged ``result`` alone, one of the last session, or one for a board never seen in play
finishes nothing. What the gate cannot tell: a forger who can publish ``state`` *and*
``result`` as the controller would, with the controller online, is indistinguishable from
it. Only the broker's ACL (the controller alone may publish ``bridge/+/state|result``)
stops that.
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
    started: set[tuple[str, int]] = field(default_factory=set)
    done: dict[tuple[str, int], float] = field(default_factory=dict)
    # operator's decisions: (table or "*", board) -> "release" | "hold"
    manual: dict[tuple[str, int], str] = field(default_factory=dict)
    online: dict[str, bool] = field(default_factory=dict)   # "*" = the daemon; else table
    states: dict[str, dict[str, Any]] = field(default_factory=dict)
    pending: dict[tuple[str, int], Mapping[str, Any]] = field(default_factory=dict)
    reports: dict[tuple[str, int | None, str], Report] = field(default_factory=dict)
    n: int = 0

    # -- the controller's word ------------------------------------------------------------
    def controller_status(self, table: str | None, payload: Any) -> None:
        """``{root}/controller/status`` (``table`` None) or ``{root}/controller/{t}/status``."""
        ok = isinstance(payload, Mapping) and payload.get("status") == "online"
        self.online["*" if table is None else table] = ok

    def controller_online(self, table: str) -> bool:
        return self.online.get("*", False) or self.online.get(table, False)

    def state(self, table: str, payload: Mapping[str, Any], *, retained: bool,
              now: float) -> list[tuple[str, int]]:
        """A ``state`` of ``table``; returns the boards it newly finished."""
        if payload.get("table") != table:
            return []
        self.states[table] = dict(payload)
        board = _int(payload.get("board"))
        if board is not None and payload.get("phase") in PLAYING:
            # a result that came before the board was over is not the controller's
            self.pending.pop((table, board), None)
            if not retained:
                self.started.add((table, board))
        return self._check_pending(table, now)

    def result(self, table: str, payload: Mapping[str, Any], *, now: float
               ) -> list[tuple[str, int]]:
        """A ``result`` of ``table``: a candidate for finishing its board (see the module)."""
        why = result_consistent(table, payload)
        board = _int(payload.get("board"))
        if why is not None or board is None:
            self._report(table, board, f"untrusted result: {why}")
            return []
        if not self.controller_online(table):
            self._report(table, board, "untrusted result: the controller is not online")
            return []
        if (table, board) not in self.started:
            self._report(table, board, "untrusted result: the board was not seen in play "
                                       "in this session")
            return []
        self.pending[(table, board)] = payload
        return self._check_pending(table, now)

    def _check_pending(self, table: str, now: float) -> list[tuple[str, int]]:
        state = self.states.get(table, {})
        out = []
        for key in [k for k in self.pending if k[0] == table]:
            if _int(state.get("board")) == key[1] and state.get("phase") in FINISHED \
                    and self.controller_online(table):
                result = self.pending.pop(key)
                why = _against_state(result, state)
                if why is not None:
                    self._report(table, key[1], f"untrusted result: {why}")
                    continue
                self.done.setdefault(key, now)
                out.append(key)
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
        self.reports.setdefault((table, board, reason), Report(table, board, reason))

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

    def due(self, now: float) -> list[Item]:
        """The items that may go out now, in arrival order; a table's board keeps its
        order (an item waits for the earlier items of the same table and board)."""
        out: list[Item] = []
        keep: list[Item] = []
        blocked: set[tuple[str, int | None]] = set()
        for item in self.held:
            key = (item.table, item.board)
            when = self.release_time(item)
            if key in blocked or when is None or when > now:
                blocked.add(key)
                keep.append(item)
            else:
                out.append(item)
        self.held = keep
        return out

    def next_time(self) -> float | None:
        times = [t for t in (self.release_time(h) for h in self.held) if t is not None]
        return min(times) if times else None
