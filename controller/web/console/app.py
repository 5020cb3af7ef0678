"""The director's console: room view, table view with the rulings, ruling log.

Routes (every one but ``/login`` needs the director's session):

- ``/login`` (GET form, POST password), ``/logout`` (POST)
- ``/console``: the page (room, table and log views; ``console.js`` draws them)
- ``/console/events``: Server-Sent Events, a snapshot of every table then each change
- ``/console/api/ruling`` (POST JSON): publish a ruling on ``bridge/{t}/ruling``
- ``/console/api/options``, ``/console/api/log``, ``/console/log.csv``
"""

from __future__ import annotations

import asyncio
import html
import json
import logging
import os
import re
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller import wire
from controller.broker.settings import BrokerSettings
from controller.laws.cards import Seat
from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind
from controller.session import Session as SessionFile
from controller.web import sse
from controller.web.app import create_app
from controller.web.auth import (
    COOKIE,
    SESSION_SECONDS,
    LoginThrottle,
    Session,
    Sessions,
    hash_password,
    verify_password,
)
from controller.web.console import adjust, options
from controller.web.console.calls import CallBook
from controller.web.console.room import RoomBook
from controller.web.console.store import RulingLog, readable_time
from controller.web.i18n import LABELS, LANGS, label
from controller.web.listener import Connection, TableStore, listen

log = logging.getLogger("bridge_table.console")
STATIC = Path(__file__).parent / "static"
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
        answer: tuple[int, str] | None = None
        mine = [seq for seq, t in self.pending.items() if t == table]
        if kind in ("alert", "feed"):
            self.touched.update(mine)
        elif kind == "result":
            for waiting in mine:
                if waiting in self.undecided and _changed(
                        self.before.get(waiting, (None, None))[1], data):
                    answer = (waiting, "applied")
        elif kind == "state":
            last = data.get("last")
            if isinstance(last, dict) and last.get("src") == self.config.src:
                seq = last.get("seq")
                if isinstance(seq, int) and self.pending.get(seq) == table:
                    answer = self._verdict(seq, data)
        elif kind == "error" and data.get("input") == "ruling":
            excerpt = str(data.get("excerpt", ""))
            for seq, t in self.pending.items():
                if t == table and f'"src":{json.dumps(self.config.src)},"seq":{seq},' in excerpt:
                    answer = (seq, f"refused: {data.get('error')}")
                    break
        if answer is None:
            return
        seq, text = answer
        if text == "":
            return    # applied, nothing changed yet: a result may follow (the engine's order)
        self._answered(seq, table, text)

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
                         payload=payload, law=adj.law, facts=_text(body.get("facts")),
                         note=_text(body.get("note")), round_no=round_no, pairs=pairs,
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
                         facts=_text(body.get("facts")), note=_text(body.get("note")),
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


async def _json_object(request: Request) -> dict[str, Any]:
    """A request's JSON object body; ValueError (bad JSON too) when it is not one."""
    body = json.loads(await request.body())
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")
    return body


def _text(value: Any) -> str | None:
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


# -- pages ---------------------------------------------------------------------------------
def _lang(request: Request) -> str:
    lang = request.query_params.get("lang") or request.cookies.get("bt_lang") or "en"
    return lang if lang in LANGS else "en"


#: the console's views are ``#room``, ``#log`` and ``#table/NAME``: anything else is dropped
_FRAGMENT = re.compile(r"#[A-Za-z0-9/_.%-]{1,80}")


def landing_fragment(fragment: str) -> str:
    """The fragment the login page carried (the view asked for before logging in, which
    the browser keeps from the server): itself when it is a plain view name, else ``""``."""
    return fragment if _FRAGMENT.fullmatch(fragment) else ""


def _login_page(lang: str, error: bool = False, status: int = 200) -> HTMLResponse:
    def t(key: str) -> str:
        return html.escape(label(key, lang))
    langs = " ".join(f'<a href="/login?lang={code}">{code}</a>' for code in LANGS)
    err = f'<p class="error" id="login-error" role="alert">{t("wrong_password")}</p>' \
        if error else ""
    body = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{t("title")}</title>
<link rel="stylesheet" href="/static/common/common.css">
<script src="/static/console/login.js" defer></script></head>
<body class="login"><main><h1>{t("title")}</h1>{err}
<form method="post" action="/login">
<input type="hidden" name="lang" value="{lang}">
<input type="hidden" name="fragment" id="login-fragment" value="">
<label>{t("name")} <input name="name" autocomplete="username"></label>
<label>{t("password")} <input name="password" type="password" autocomplete="current-password"
 required autofocus></label>
<button type="submit">{t("login")}</button></form>
<p class="langs">{langs}</p></main></body></html>"""
    return HTMLResponse(body, status_code=status)


def _console_page(session: Session, lang: str) -> HTMLResponse:
    title = html.escape(label("title", lang))
    body = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf" content="{html.escape(session.csrf)}">
<meta name="director" content="{html.escape(session.name)}">
<title>{title}</title>
<link rel="stylesheet" href="/static/common/common.css">
<link rel="stylesheet" href="/static/console/console.css">
<script src="/static/console/console.js" defer></script></head>
<body><header><h1>{title}</h1><nav>
<a href="#room" id="nav-room"></a> <a href="#log" id="nav-log"></a>
<select id="lang" aria-label="language">{"".join(
        f'<option value="{c}"{" selected" if c == lang else ""}>{c}</option>'
        for c in LANGS)}</select>
<span id="clock" class="clock"></span>
<span id="live" class="live"></span>
<form method="post" action="/logout"><input type="hidden" name="csrf"
 value="{html.escape(session.csrf)}"><button id="logout" type="submit"></button></form>
</nav></header><main id="app"></main></body></html>"""
    return HTMLResponse(body)


def deals_for_console(path: Path) -> tuple[dict[int, dict[str, list[str]]], list[str]]:
    """The hands of a deals file (PBN, DUP, BRI, DGE) by board and seat, and its problems."""
    from controller.boards.deals import read_deals
    read = read_deals(path)
    out: dict[int, dict[str, list[str]]] = {}
    for board, info in read.deals.items():
        if info.deal is None:
            continue
        out[board] = {seat.name: sorted((str(c) for c in info.deal[seat]), key=_card_order)
                      for seat in Seat}
    return out, read.problems


def rounds_of_session(movement: Any) -> dict[str, dict[int, int]]:
    """table -> board -> round, from a session file's movement (controller.session)."""
    out: dict[str, dict[int, int]] = {}
    for rnd in movement.rounds:
        for table, at_table in rnd.tables.items():
            for board in at_table.boards:
                out.setdefault(str(table), {})[board] = rnd.number
    return out


def _card_order(card: str) -> tuple[int, int]:
    return "SHDC".index(card[0]), "AKQJT98765432".index(card[1])


def build_app(config: ConsoleConfig) -> Starlette:
    store = TableStore(root=config.root)
    console = Console(config=config, store=store)
    store.watchers.append(console.watch)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        console.rulings = RulingLog(config.db)
        console.calls = CallBook(config.db)
        console.room = RoomBook(config.db)
        console.pending = console.rulings.unanswered()
        stop = asyncio.Event()
        task = asyncio.create_task(listen(config.broker, store.topics(), store.handle, stop,
                                          client_id=config.client_id, conn=console.conn))
        try:
            yield
        finally:
            stop.set()
            store.hub.close()
            store.close()
            await task
            console.rulings.close()
            console.calls.close()
            console.room.close()

    throttle = LoginThrottle()
    #: checked for a name with no account, so that it costs what a real check costs
    no_account = hash_password(os.urandom(16).hex())
    #: scrypt checks at once (each takes some 50 ms of a core and 16 MiB)
    checking = asyncio.Semaphore(4)

    def session_of(request: Request) -> Session | None:
        return console.sessions.get(request)

    async def index(request: Request) -> Response:
        return RedirectResponse("/console", status_code=303)

    async def login_form(request: Request) -> Response:
        return _login_page(_lang(request))

    async def login(request: Request) -> Response:
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        password = form.get("password", [""])[0]
        name = (form.get("name", [""])[0].strip() or "director")[:60]
        lang = form.get("lang", ["en"])[0]
        lang = lang if lang in LANGS else "en"
        address = request.client.host if request.client else "?"
        if throttle.wait_left(address):
            log.warning("login refused from %s: too many wrong passwords", address)
            return _login_page(lang, error=True, status=429)
        digest = config.accounts.get(name) or config.password_hash or no_account
        async with throttle.lock(address):   # one check at a time from an address
            async with checking:
                ok = await asyncio.to_thread(verify_password, password, digest)
            if not ok:
                throttle.failed(address)
                log.warning("wrong name or password from %s", address)
                await asyncio.sleep(throttle.delay)
        if not ok:
            return _login_page(lang, error=True, status=401)
        throttle.succeeded(address)
        token, _ = console.sessions.create(name)
        response = RedirectResponse("/console" + landing_fragment(form.get("fragment", [""])[0]),
                                    status_code=303)
        response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, httponly=True,
                            samesite="strict", secure=config.secure_cookie)
        response.set_cookie("bt_lang", lang, samesite="strict", secure=config.secure_cookie)
        return response

    async def logout(request: Request) -> Response:
        session = session_of(request)
        form = parse_qs((await request.body()).decode("utf-8", "replace"))
        if session is not None and form.get("csrf", [""])[0] == session.csrf:
            console.sessions.drop(request)
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    async def page(request: Request) -> Response:
        session = session_of(request)
        if session is None:
            return RedirectResponse("/login", status_code=303)
        return _console_page(session, _lang(request))

    def unauthorised() -> Response:
        return JSONResponse({"error": "log in first"}, status_code=401)

    def snapshot() -> dict[str, Any]:
        return {"tables": store.snapshot(), "connected": console.conn.client is not None,
                "src": config.src, "calls": console.open_calls(),
                "room": console.room_snapshot()}

    async def events(request: Request) -> Response:
        if session_of(request) is None:
            return unauthorised()
        return sse.stream(request, store.hub, snapshot)

    async def api_options(request: Request) -> Response:
        if session_of(request) is None:
            return unauthorised()
        return JSONResponse({**options.as_json(), "labels": LABELS,
                             "codes_known": [str(c) for c in Code],
                             "kinds": [str(k) for k in RulingKind]})

    def changing(request: Request) -> Session | Response:
        """The session of a request that changes something, or the refusal (401 / 403)."""
        session = session_of(request)
        if session is None:
            return unauthorised()
        if request.headers.get("x-csrf-token") != session.csrf:
            return JSONResponse({"error": "missing or wrong CSRF token"}, status_code=403)
        return session

    async def api_ruling(request: Request) -> Response:
        session = changing(request)
        if not isinstance(session, Session):
            return session
        try:
            body = await _json_object(request)
            return JSONResponse(await console.send_ruling(session, body))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except ConnectionError as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)

    async def api_deals(request: Request) -> Response:
        if session_of(request) is None:
            return unauthorised()
        return JSONResponse({str(b): hands for b, hands in config.deals.items()})

    async def api_rounds(request: Request) -> Response:
        if session_of(request) is None:
            return unauthorised()
        return JSONResponse({t: {str(b): r for b, r in boards.items()}
                             for t, boards in config.rounds.items()})

    async def api_answer_calls(request: Request) -> Response:
        session = changing(request)
        if not isinstance(session, Session):
            return session
        table = request.path_params["table"]
        if table not in store.tables:
            return JSONResponse({"error": f"unknown table {table!r}"}, status_code=404)
        store.answer_calls(table)
        if console.calls is not None and console.calls.answer_table(table, session.name,
                                                                    time.time()):
            console.calls_changed()
        return JSONResponse({"table": table})

    async def api_call(request: Request) -> Response:
        """``POST /console/api/call/{id}/{answered|ruled|dismissed}``: the director's word
        on one call (answered keeps it open; ruled and dismissed close it)."""
        session = changing(request)
        if not isinstance(session, Session):
            return session
        if console.calls is None:
            return JSONResponse({"error": "not ready"}, status_code=503)
        try:
            call_id = int(request.path_params["call"])
        except ValueError:
            return JSONResponse({"error": "no such call"}, status_code=404)
        action = request.path_params["action"]
        call = console.calls.get(call_id)
        if call is None:
            return JSONResponse({"error": f"no call {call_id}"}, status_code=404)
        now = time.time()
        if action == "answered":
            changed = console.calls.answer(call_id, session.name, now)
        elif action in ("ruled", "dismissed"):
            seq = console.rulings.latest(str(call["table_id"]), float(call["received"])) \
                if action == "ruled" and console.rulings is not None else None
            changed = console.calls.close_call(call_id, action, session.name, now, seq)
        else:
            return JSONResponse({"error": f"unknown action {action!r}"}, status_code=400)
        if changed:
            console.calls_changed()
        return JSONResponse({"call": console.calls.get(call_id), "changed": changed})

    async def api_score(request: Request) -> Response:
        session = changing(request)
        if not isinstance(session, Session):
            return session
        try:
            body = await _json_object(request)
            return JSONResponse(console.send_score(session, body))
        except (ValueError, OSError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)

    async def api_session(request: Request) -> Response:
        """The session's tables, boards, pairs and players, and its artificial scores."""
        if session_of(request) is None:
            return unauthorised()
        sess = config.session
        if sess is None:
            return JSONResponse({"session": None})
        move = sess.movement
        pairs_at: dict[str, dict[str, list[int]]] = {}
        for t in move.tables:
            for b in move.boards_of_table(t):
                both = move.pairs_at(t, b)
                if both is not None:
                    pairs_at.setdefault(t, {})[str(b)] = list(both)
        return JSONResponse({"session": sess.id, "artificial": list(sess.artificial),
                             "tables": {t: sorted(move.boards_of_table(t))
                                        for t in move.tables},
                             "pairs_at": pairs_at,
                             "pairs": {str(n): {"name": c.label, "players": list(c.players)}
                                       for n, c in (sess.teams if sess.is_teams
                                                    else sess.pairs).items()}})

    async def api_clock(request: Request) -> Response:
        """``POST /console/api/clock``: ``{"round": N, "minutes": M}`` starts round N's
        clock now; ``{"move": true}`` records that the director called the move."""
        session = changing(request)
        if not isinstance(session, Session):
            return session
        if console.room is None:
            return JSONResponse({"error": "not ready"}, status_code=503)
        try:
            body = await _json_object(request)
            if body.get("move") is True:
                if console.room.call_move(time.time()) is None:
                    raise ValueError("no round's clock is running")
            else:
                number, minutes = body.get("round"), body.get("minutes")
                if not isinstance(number, int) or isinstance(number, bool) \
                        or not isinstance(minutes, int | float) or isinstance(minutes, bool):
                    raise ValueError("round (a number) and minutes (a number) are needed")
                console.room.start_round(number, float(minutes), time.time())
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        log.info("room clock: %s by %s", body, session.name)
        console.room_changed()
        return JSONResponse(console.room_snapshot())

    async def api_callback(request: Request) -> Response:
        """``POST /console/api/call/{id}/callback`` ``{"minutes": M}``: remind the director
        to go back to the table in M minutes (0: no reminder)."""
        session = changing(request)
        if not isinstance(session, Session):
            return session
        if console.calls is None:
            return JSONResponse({"error": "not ready"}, status_code=503)
        try:
            call_id = int(request.path_params["call"])
            body = json.loads(await request.body())
            minutes = body.get("minutes") if isinstance(body, dict) else None
            if not isinstance(minutes, int | float) or isinstance(minutes, bool) \
                    or not 0 <= minutes <= 240:
                raise ValueError("minutes must be 0 to 240")
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        due = time.time() + 60 * minutes if minutes else None
        if not console.calls.call_back(call_id, due):
            return JSONResponse({"error": f"no open call {call_id}"}, status_code=404)
        console.calls_changed()
        return JSONResponse({"call": console.calls.get(call_id)})

    async def api_reverse(request: Request) -> Response:
        """``POST /console/api/reverse/{seq}`` (JSON ``{"confirmed": true}``): send the
        logged reversal of a ruling; the log links the two."""
        session = changing(request)
        if not isinstance(session, Session):
            return session
        if console.rulings is None:
            return JSONResponse({"error": "not ready"}, status_code=503)
        try:
            seq = int(request.path_params["seq"])
            body = json.loads(await request.body() or b"{}")
        except ValueError:
            return JSONResponse({"error": "bad request"}, status_code=400)
        row = console.rulings.get(seq)
        if row is None:
            return JSONResponse({"error": f"no ruling {seq}"}, status_code=404)
        if row["reversed_by"] is not None:
            return JSONResponse({"error": f"ruling {seq} was reversed by "
                                          f"{row['reversed_by']}"}, status_code=409)
        if not row["reversal"]:
            return JSONResponse({"error": f"ruling {seq} cannot be reversed from the "
                                          "console"}, status_code=409)
        if not isinstance(body, dict) or body.get("confirmed") is not True:
            return JSONResponse({"error": "a reversal changes what the table did: confirm "
                                          "it first"}, status_code=400)
        try:
            if row["ruling"] == SCORE_RULING:
                return JSONResponse(console.reverse_score(session, row))
            return JSONResponse(await console.send_ruling(
                session, {"table": row["table_id"], "note": f"reverses {seq}"}, reverses=row))
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        except ConnectionError as exc:
            return JSONResponse({"error": str(exc)}, status_code=503)

    async def api_record(request: Request) -> Response:
        """``POST /console/api/record/{seq}``: the facts, a note, the appeal status."""
        session = changing(request)
        if not isinstance(session, Session):
            return session
        if console.rulings is None:
            return JSONResponse({"error": "not ready"}, status_code=503)
        try:
            seq = int(request.path_params["seq"])
            body = await _json_object(request)
            appeal = body.get("appeal")
            ok = console.rulings.record(seq, facts=_text(body.get("facts")),
                                        note=_text(body.get("note")),
                                        appeal=appeal if isinstance(appeal, str) else None)
        except ValueError as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        if not ok:
            return JSONResponse({"error": f"no ruling {seq}"}, status_code=404)
        return JSONResponse({"ruling": console.rulings.get(seq)})

    async def api_log(request: Request) -> Response:
        if session_of(request) is None or console.rulings is None:
            return unauthorised()
        return JSONResponse({"rulings": console.rulings.rows()})

    async def log_csv(request: Request) -> Response:
        if session_of(request) is None or console.rulings is None:
            return unauthorised()
        return Response(console.rulings.csv(), media_type="text/csv; charset=utf-8",
                        headers={"Content-Disposition":
                                 'attachment; filename="rulings.csv"'})

    routes = [
        Route("/", index), Route("/favicon.ico", lambda r: Response(status_code=204)),
        Route("/login", login_form, methods=["GET"]),
        Route("/login", login, methods=["POST"]), Route("/logout", logout, methods=["POST"]),
        Route("/console", page), Route("/console/events", events),
        Route("/console/api/options", api_options),
        Route("/console/api/ruling", api_ruling, methods=["POST"]),
        Route("/console/api/calls/{table}/answered", api_answer_calls, methods=["POST"]),
        Route("/console/api/call/{call}/callback", api_callback, methods=["POST"]),
        Route("/console/api/call/{call}/{action}", api_call, methods=["POST"]),
        Route("/console/api/clock", api_clock, methods=["POST"]),
        Route("/console/api/reverse/{seq}", api_reverse, methods=["POST"]),
        Route("/console/api/score", api_score, methods=["POST"]),
        Route("/console/api/session", api_session),
        Route("/console/api/record/{seq}", api_record, methods=["POST"]),
        Route("/console/api/log", api_log), Route("/console/api/deals", api_deals),
        Route("/console/api/rounds", api_rounds),
        Route("/console/log.csv", log_csv),
        Mount("/static/console", StaticFiles(directory=STATIC), name="console-static"),
    ]
    return create_app(routes, lifespan=lifespan, state={"console": console})
