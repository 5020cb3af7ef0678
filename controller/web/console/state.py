"""What the console's routes share (``Console``): the tables, the broker, the ruling log, the
calls and the room; what it makes of the controller's answers to its rulings, and how it
checks and publishes a ruling or writes an adjusted score (controller/web/console/routes.py
serves them).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from controller import wire
from controller.broker.settings import BrokerSettings
from controller.laws.rulings import RulingKind
from controller.session import Session as SessionFile
from controller.web.auth import Session, Sessions
from controller.web.console import adjust, options
from controller.web.console.calls import CallBook
from controller.web.console.room import RoomBook
from controller.web.console.store import RulingLog, readable_time
from controller.web.listener import Connection, TableStore

log = logging.getLogger("bridge_table.console")
WIRE_VERSION = 1
_SEATS = ("N", "E", "S", "W")
_SUITS = ("S", "H", "D", "C")
#: the alert statuses a ruling can still act on (corrected and resolved ones are closed)
LIVE_STATUSES = ("open", "established")
#: how long after its state a ruling's changed result may come (the engine's order)
RESULT_WAIT = 1.5
MAX_TEXT = 2000
#: a press's own time older than this (seconds) is not believed: the table's clock is off
MAX_PRESS_AGE = 12 * 3600
#: the ruling log's name for an adjusted score the console wrote (never on the wire)
SCORE_RULING = "score"


@dataclass
class ConsoleConfig:
    broker: BrokerSettings
    #: one password shared by every director (a password file line without a name); ""
    #: when every director has an account
    password_hash: str
    db: Path
    src: str = "console"
    root: str = "bridge"
    client_id: str = ""
    secure_cookie: bool = False
    deals: dict[int, dict[str, list[str]]] = field(default_factory=dict)  # board -> seat -> cards
    #: the session's movement: table -> board -> round (the room view shows the round)
    rounds: dict[str, dict[int, int]] = field(default_factory=dict)
    #: the session file (``--session``): pairs, players, and where adjusted scores go
    session: SessionFile | None = None
    #: each director's own password: name -> scrypt line (``console passwd --name``)
    accounts: dict[str, str] = field(default_factory=dict)
    #: the reverse proxies whose ``X-Forwarded-For`` names the client (``--trusted-proxy``)
    trusted_proxies: frozenset[str] = frozenset()


@dataclass
class Console:
    """What the routes share: the tables, the broker, the log, the sessions."""

    config: ConsoleConfig
    store: TableStore
    conn: Connection = field(default_factory=Connection)
    sessions: Sessions = field(default_factory=Sessions)
    rulings: RulingLog | None = None
    calls: CallBook | None = None
    room: RoomBook | None = None
    pending: dict[int, str] = field(default_factory=dict)   # seq -> table, unanswered
    #: seq -> the table's state and result when the ruling was sent (did it change them?)
    before: dict[int, tuple[Any, Any]] = field(default_factory=dict)
    touched: set[int] = field(default_factory=set)     # an alert or feed item came since
    undecided: set[int] = field(default_factory=set)   # applied, nothing changed yet

    # -- the calls for the director ---------------------------------------------------------
    def calls_changed(self) -> None:
        self.store.hub.publish({"type": "calls", "calls": self.open_calls()})

    def room_changed(self) -> None:
        self.store.hub.publish({"type": "room", "room": self.room_snapshot()})

    def room_snapshot(self) -> dict[str, Any]:
        return {**(self.room.snapshot() if self.room is not None else {}),
                "now": time.time()}

    def open_calls(self) -> list[dict[str, Any]]:
        return self.calls.open_calls() if self.calls is not None else []

    def _presses(self, table: str, data: dict[str, Any]) -> None:
        """The "director called" and claim presses the controller publishes (1.14:
        ``evidence.presses``, every press of the board so far): each kept until the
        director closes it; one already kept is not kept twice."""
        if self.calls is None or not data.get("presses"):
            return
        try:
            evidence = wire.decode(wire.encode(data), wire.Evidence)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            log.warning("table %s: presses not kept: %s", table, exc)
            return
        fresh = False
        now = time.time()
        board = evidence.board
        if board is None:   # the controller has no board yet: the table's, if it said one
            view = self.store.tables.get(table)
            board = view.board if view is not None else None
        for press in evidence.presses or ():
            # waiting since the press, as the table's clock has it, when that clock is
            # plausible (a press the console reads after its restart has waited since then)
            since = press.ts if press.ts is not None and now - MAX_PRESS_AGE <= press.ts <= now \
                else now
            kept = self.calls.press(table=table, button=press.button, seat=press.seat,
                                    board=board, received=since,
                                    key=f"{table}/{press.src}/{press.seq}/{press.ts}")
            if kept is not None:
                fresh = True
                log.info("table %s: %s pressed (%s)", table, kept["button"],
                         kept["seat"] or "-")
        if fresh:
            self.calls_changed()

    # -- the controller's answers ----------------------------------------------------------
    def watch(self, table: str, kind: str, data: dict[str, Any]) -> None:
        if kind == "evidence":
            self._presses(table, data)
            return
        board = data.get("board")
        if kind == "result" and self.room is not None and isinstance(board, int) \
                and self.room.played(table, board, time.time()):
            self.room_changed()
        if not self.pending:
            return
        answer = self._answer(table, kind, data)
        if answer is None:
            return
        seq, text = answer
        if text == "":
            return    # applied, nothing changed yet: a result may follow (the engine's order)
        self._answered(seq, table, text)

    def _answer(self, table: str, kind: str, data: dict[str, Any]) -> tuple[int, str] | None:
        """The ruling of the table's still unanswered ones that a message of the controller
        answers, and what it says ("" while a result may follow); None: none."""
        mine = [seq for seq, t in self.pending.items() if t == table]
        if kind in ("alert", "feed"):
            self.touched.update(mine)
        elif kind == "result":
            changed = [seq for seq in mine if seq in self.undecided
                       and _changed(self.before.get(seq, (None, None))[1], data)]
            return (changed[-1], "applied") if changed else None
        elif kind == "state":
            last = data.get("last")
            seq = last.get("seq") if isinstance(last, dict) \
                and last.get("src") == self.config.src else None
            if isinstance(seq, int) and self.pending.get(seq) == table:
                return self._verdict(seq, data)
        elif kind == "error" and data.get("input") == "ruling":
            excerpt = str(data.get("excerpt", ""))
            sent = f'"src":{json.dumps(self.config.src)},"seq":'
            return next(((seq, f"refused: {data.get('error')}") for seq in mine
                         if f"{sent}{seq}," in excerpt), None)
        return None

    def _verdict(self, seq: int, state: dict[str, Any]) -> tuple[int, str]:
        """What the state that answers ``seq`` says it did: ``no change`` when the Laws
        core says so (its notes) or nothing moved; "" when a result may still follow."""
        notes = state.get("notes")
        said = "; ".join(map(str, notes)) if isinstance(notes, list) and notes else ""
        if "no effect" in said or "names no alert" in said:
            return seq, f"no change: {said}"
        if seq in self.touched or _changed(self.before.get(seq, (None, None))[0], state):
            return seq, "applied" + (f": {said}" if said else "")
        # the engine publishes a changed result after the state: wait for it a moment
        self.undecided.add(seq)
        try:
            asyncio.get_running_loop().call_later(RESULT_WAIT, self._no_change, seq, said)
        except RuntimeError:
            return seq, "no change" + (f": {said}" if said else "")
        return seq, ""

    def _no_change(self, seq: int, said: str) -> None:
        if seq in self.undecided and seq in self.pending:
            self._answered(seq, self.pending[seq], "no change" + (f": {said}" if said else ""))

    def _answered(self, seq: int, table: str, text: str) -> None:
        self.forget(seq)
        if self.rulings is not None:
            self.rulings.answer(seq, text, time.time())
        self.store.hub.publish({"type": "answer", "seq": seq, "table": table, "answer": text})

    def forget(self, seq: int) -> None:
        self.pending.pop(seq, None)
        self.before.pop(seq, None)
        self.touched.discard(seq)
        self.undecided.discard(seq)

    # -- publishing a ruling ---------------------------------------------------------------
    def check_ruling(self, body: dict[str, Any]
                     ) -> tuple[dict[str, Any], str | None, int | None, options.Option]:
        """The payload to publish, the alert's code and board, the option; ValueError when
        not valid (not offered, on an alert already closed, destructive and unconfirmed)."""
        table = body.get("table")
        if not isinstance(table, str) or not table or any(c in table for c in "/+#"):
            raise ValueError("no table")
        view = self.store.tables.get(table)
        if view is None:
            raise ValueError(f"unknown table {table!r}")
        kind = body.get("ruling")
        alert = body.get("alert")
        fixed = body.get("fixed") if isinstance(body.get("fixed"), dict) else {}
        code: str | None = None
        board = view.board
        if alert is None:
            phase = (view.state or {}).get("phase")
            offered = tuple(o for o in options.TABLE_OPTIONS
                            if not o.phases or phase in o.phases)
        else:
            if not isinstance(alert, int) or isinstance(alert, bool) or alert not in view.alerts:
                raise ValueError(f"table {table} has no alert {alert!r}")
            latest = view.alerts[alert].latest
            code = str(latest.get("code"))
            if latest.get("status") not in LIVE_STATUSES:
                raise ValueError(f"alert {alert} ({code}) is {latest.get('status')}: "
                                 "no ruling is offered on it")
            board = latest.get("board") if isinstance(latest.get("board"), int) else board
            offered = options.offered_for(code, latest.get("params"))
        match = [o for o in offered if str(o.kind) == kind and o.fixed == fixed]
        if not match:
            where = f"alert {alert} ({code})" if alert is not None else "the table"
            raise ValueError(f"ruling {kind!r} {fixed or ''} is not offered for {where}")
        opt = match[0]
        if opt.kind in options.DESTRUCTIVE and body.get("confirmed") is not True:
            raise ValueError(f"ruling {kind!r} changes what the table did: confirm it first")
        payload: dict[str, Any] = {"v": WIRE_VERSION, "src": self.config.src, "seq": 0,
                                   "ts": 0.0, "ruling": str(opt.kind)}
        if alert is not None:
            payload["alert"] = alert
        payload.update(opt.fixed)
        for name in opt.inputs:
            payload[name] = _input(name, body.get(name))
        return payload, code, board, opt

    def reversal_of(self, table: str, payload: dict[str, Any]) -> dict[str, Any] | None:
        """The ruling that puts back what a destructive ruling changes, as far as the
        contract allows: the tricks before an adjust, the board before a set board. None
        for an undo (the struck reading comes back only from the table) and a claim (the
        play cannot resume: an adjust corrects the tricks)."""
        view = self.store.tables.get(table)
        kind = payload.get("ruling")
        if view is None:
            return None
        if kind == str(RulingKind.ADJUST):
            res = view.result
            if res is not None and res.get("board") == view.board \
                    and isinstance(res.get("tricks"), int):
                return {"ruling": str(RulingKind.ADJUST), "tricks": res["tricks"]}
        if kind == str(RulingKind.BOARD) and isinstance(view.board, int):
            return {"ruling": str(RulingKind.BOARD), "board": view.board}
        return None

    def where(self, table: str, board: int | None) -> tuple[int | None, str | None]:
        """The round and the pairs ("NS v EW") of a table's board, from the session."""
        round_no = self.config.rounds.get(table, {}).get(board) if board is not None else None
        pairs = None
        if self.config.session is not None and board is not None:
            both = self.config.session.pairs_at(table, board)
            pairs = f"{both[0]} v {both[1]}" if both is not None else None
        return round_no, pairs

    # -- adjusted scores (Law 12C), written into the session file ---------------------------
    def send_score(self, session: Session, body: dict[str, Any]) -> dict[str, Any]:
        """Write an adjusted score into the session's adjustments; logged as a ruling
        (``score``) that can be reversed. Any board of the session, not only the current."""
        sess = self.config.session
        if sess is None or sess.path is None:
            raise ValueError("no session file: start the console with --session FILE")
        if body.get("confirmed") is not True:
            raise ValueError("an adjusted score replaces the table's result: confirm it first")
        adj = adjust.check_adjustment(sess, body)
        assert self.rulings is not None
        seq = self.rulings.next_seq()
        now = round(time.time(), 3)
        who = " ".join(session.name.split())
        block, self.config.session = adjust.append_adjustment(
            sess.path, adj, seq, f"{who}, {readable_time(now)}, Law {adj.law}")
        round_no, pairs = self.where(adj.table, adj.board)
        payload = {"kind": adj.kind, "table": adj.table, "board": adj.board,
                   "score": adj.describe()}
        self.rulings.add(seq=seq, ts=now, director=session.name, table=adj.table,
                         board=adj.board, alert=None, code=None, ruling=SCORE_RULING,
                         payload=payload, law=adj.law, facts=free_text(body.get("facts")),
                         note=free_text(body.get("note")), round_no=round_no, pairs=pairs,
                         reversal={"ruling": SCORE_RULING, "block": block},
                         answer=f"written: {adj.describe()}")
        log.info("adjusted score %s on table %s board %d by %s (ruling %d)", adj.describe(),
                 adj.table, adj.board, session.name, seq)
        return {"seq": seq, "payload": payload, "answer": f"written: {adj.describe()}"}

    def reverse_score(self, session: Session, row: dict[str, Any]) -> dict[str, Any]:
        sess = self.config.session
        if sess is None or sess.path is None:
            raise ValueError("no session file")
        block = json.loads(str(row["reversal"]))["block"]
        self.config.session = adjust.remove_adjustment(sess.path, block)
        assert self.rulings is not None
        seq = self.rulings.next_seq()
        now = round(time.time(), 3)
        payload = {"removed": row["seq"], "table": row["table_id"], "board": row["board"]}
        self.rulings.add(seq=seq, ts=now, director=session.name, table=str(row["table_id"]),
                         board=row["board"], alert=None, code=None, ruling=SCORE_RULING,
                         payload=payload, law=row["law"], note=f"reverses {row['seq']}",
                         round_no=row["round"], pairs=row["pairs"], reverses=int(row["seq"]),
                         answer="removed from the session file")
        return {"seq": seq, "payload": payload, "answer": "removed from the session file"}

    async def send_ruling(self, session: Session, body: dict[str, Any],
                          reverses: dict[str, Any] | None = None) -> dict[str, Any]:
        if reverses is None:
            payload, code, board, opt = self.check_ruling(body)
            law: str | None = opt.law
            reversal = self.reversal_of(str(body["table"]), payload) \
                if opt.kind in options.DESTRUCTIVE else None
        else:     # the reversal of a logged ruling: its fields were checked when logged
            payload = {"v": WIRE_VERSION, "src": self.config.src, "seq": 0, "ts": 0.0,
                       **json.loads(str(reverses["reversal"]))}
            code, board, law, reversal = None, reverses["board"], reverses["law"], None
            # it acts on the table's board now: only while that is the board it changed
            done = json.loads(str(reverses["payload"]))
            changed = done.get("board") if done.get("ruling") == str(RulingKind.BOARD) \
                else board
            view = self.store.tables.get(str(body["table"]))
            now_on = view.board if view is not None else None
            if now_on != changed:
                raise ValueError(f"table {body['table']} is on board {now_on}, not "
                                 f"{changed}: give an adjusted score for board {changed} "
                                 "instead")
        if self.conn.client is None:
            raise ConnectionError("not connected to the broker")
        assert self.rulings is not None
        seq = self.rulings.next_seq()
        payload["seq"] = seq
        payload["ts"] = round(time.time(), 3)
        table = str(body["table"])
        round_no, pairs = self.where(table, board)
        self.rulings.add(seq=seq, ts=payload["ts"], director=session.name, table=table,
                         board=board, alert=payload.get("alert"), code=code,
                         ruling=str(payload["ruling"]), payload=payload, law=law,
                         facts=free_text(body.get("facts")), note=free_text(body.get("note")),
                         round_no=round_no, pairs=pairs, reversal=reversal,
                         reverses=reverses["seq"] if reverses is not None else None)
        view = self.store.tables.get(table)
        self.before[seq] = (view.state, view.result) if view is not None else (None, None)
        self.pending[seq] = table
        self.store.answer_calls(table)
        if self.calls is not None:
            call = body.get("call")
            now = time.time()
            if isinstance(call, int) and not isinstance(call, bool):
                self.calls.close_call(call, "ruled", session.name, now, seq)
            self.calls.answer_table(table, session.name, now)
            self.calls_changed()
        data = json.dumps(payload, separators=(",", ":")).encode()
        await self.conn.publish(wire.topic(table, "ruling", root=self.config.root), data, qos=1)
        log.info("ruling %s seq %d on table %s by %s", payload["ruling"], seq, table,
                 session.name)
        return {"seq": seq, "payload": payload}


def _changed(before: Any, after: dict[str, Any]) -> bool:
    """Whether a state or result differs from the one before, its header and notes aside
    (no ``before`` known, e.g. after a restart: taken as changed)."""
    if not isinstance(before, dict):
        return True
    skip = ("last", "notes", "ts", "seq", "src")
    return {k: v for k, v in before.items() if k not in skip} != \
        {k: v for k, v in after.items() if k not in skip}


def free_text(value: Any) -> str | None:
    """A free-text field of the record (facts, note), trimmed; None when empty."""
    text = str(value).strip()[:MAX_TEXT] if isinstance(value, str) else ""
    return text or None


def _input(name: str, value: Any) -> Any:
    if name in ("tricks", "board"):
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a number") from None
        if name == "tricks" and not 0 <= number <= 13:
            raise ValueError("tricks must be 0 to 13")
        if name == "board" and number < 1:
            raise ValueError("board must be 1 or more")
        return number
    text = str(value or "").strip().upper()
    if name == "seat" and text in _SEATS:
        return text
    if name == "suit" and text in _SUITS:
        return text
    if name == "card" and len(text) == 2 and text[0] in _SUITS and text[1] in "AKQJT98765432":
        return text
    raise ValueError(f"bad {name} {value!r}")
