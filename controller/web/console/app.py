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
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller import wire
from controller.brokersettings import BrokerSettings
from controller.laws.cards import Seat
from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind

from .. import sse
from ..app import create_app
from ..auth import COOKIE, SESSION_SECONDS, Session, Sessions, verify_password
from ..i18n import LABELS, LANGS, label
from ..listener import Connection, TableStore, run_listener
from . import options
from .calls import CallBook
from .store import RulingLog

log = logging.getLogger("bridge_table.console")
STATIC = Path(__file__).parent / "static"
WIRE_VERSION = 1
_SEATS = ("N", "E", "S", "W")
_SUITS = ("S", "H", "D", "C")


@dataclass
class ConsoleConfig:
    broker: BrokerSettings
    password_hash: str
    db: Path
    src: str = "console"
    root: str = "bridge"
    client_id: str = ""
    secure_cookie: bool = False
    deals: dict[int, dict[str, list[str]]] = field(default_factory=dict)  # board -> seat -> cards
    #: the session's movement: table -> board -> round (the room view shows the round)
    rounds: dict[str, dict[int, int]] = field(default_factory=dict)


@dataclass
class Console:
    """What the routes share: the tables, the broker, the log, the sessions."""

    config: ConsoleConfig
    store: TableStore
    conn: Connection = field(default_factory=Connection)
    sessions: Sessions = field(default_factory=Sessions)
    rulings: RulingLog | None = None
    calls: CallBook | None = None
    pending: dict[int, str] = field(default_factory=dict)   # seq -> table, unanswered

    # -- the calls for the director ---------------------------------------------------------
    def calls_changed(self) -> None:
        self.store.hub.publish({"type": "calls", "calls": self.open_calls()})

    def open_calls(self) -> list[dict[str, Any]]:
        return self.calls.open_calls() if self.calls is not None else []

    def _press(self, table: str, data: dict[str, Any]) -> None:
        """A "director called" or claim press: kept until the director closes it."""
        if self.calls is None or data.get("type") != "button":
            return
        seq, boot = data.get("seq"), data.get("boot")
        key = f"{data.get('src')}/{boot}/{seq}" if isinstance(seq, int) else None
        seat = data.get("seat")
        view = self.store.tables.get(table)
        kept = self.calls.press(table=table, button=str(data.get("button")),
                                seat=seat if isinstance(seat, str) else None,
                                board=view.board if view is not None else None,
                                received=time.time(), key=key)
        if kept is not None:
            log.info("table %s: %s pressed (%s)", table, kept["button"], kept["seat"] or "-")
            self.calls_changed()

    # -- the controller's answers ----------------------------------------------------------
    def watch(self, table: str, kind: str, data: dict[str, Any]) -> None:
        if kind == "event":
            self._press(table, data)
            return
        if not self.pending:
            return
        answer: tuple[int, str] | None = None
        if kind == "state":
            last = data.get("last")
            if isinstance(last, dict) and last.get("src") == self.config.src:
                seq = last.get("seq")
                if isinstance(seq, int) and self.pending.get(seq) == table:
                    notes = data.get("notes")
                    text = "applied" + (f": {'; '.join(map(str, notes))}"
                                        if isinstance(notes, list) and notes else "")
                    answer = (seq, text)
        elif kind == "error" and data.get("input") == "ruling":
            excerpt = str(data.get("excerpt", ""))
            for seq, t in self.pending.items():
                if t == table and f'"src":{json.dumps(self.config.src)},"seq":{seq},' in excerpt:
                    answer = (seq, f"refused: {data.get('error')}")
                    break
        if answer is None:
            return
        seq, text = answer
        del self.pending[seq]
        if self.rulings is not None:
            self.rulings.answer(seq, text, time.time())
        self.store.hub.publish({"type": "answer", "seq": seq, "table": table, "answer": text})

    # -- publishing a ruling ---------------------------------------------------------------
    def check_ruling(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None, int | None]:
        """The payload to publish, the alert's code and board; ValueError when not valid."""
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
            offered = options.TABLE_OPTIONS
        else:
            if not isinstance(alert, int) or isinstance(alert, bool) or alert not in view.alerts:
                raise ValueError(f"table {table} has no alert {alert!r}")
            latest = view.alerts[alert].latest
            code = str(latest.get("code"))
            board = latest.get("board") if isinstance(latest.get("board"), int) else board
            offered = options.options_for(code)
        match = [o for o in offered if str(o.kind) == kind and o.fixed == fixed]
        if not match:
            where = f"alert {alert} ({code})" if alert is not None else "the table"
            raise ValueError(f"ruling {kind!r} {fixed or ''} is not offered for {where}")
        opt = match[0]
        payload: dict[str, Any] = {"v": WIRE_VERSION, "src": self.config.src, "seq": 0,
                                   "ts": 0.0, "ruling": str(opt.kind)}
        if alert is not None:
            payload["alert"] = alert
        payload.update(opt.fixed)
        for name in opt.inputs:
            payload[name] = _input(name, body.get(name))
        return payload, code, board

    async def send_ruling(self, session: Session, body: dict[str, Any]) -> dict[str, Any]:
        payload, code, board = self.check_ruling(body)
        if self.conn.client is None:
            raise ConnectionError("not connected to the broker")
        assert self.rulings is not None
        seq = self.rulings.next_seq()
        payload["seq"] = seq
        payload["ts"] = round(time.time(), 3)
        table = str(body["table"])
        self.rulings.add(seq=seq, ts=payload["ts"], director=session.name, table=table,
                         board=board, alert=payload.get("alert"), code=code,
                         ruling=str(payload["ruling"]), payload=payload)
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


def _login_page(lang: str, error: bool = False, status: int = 200) -> HTMLResponse:
    def t(key: str) -> str:
        return html.escape(label(key, lang))
    langs = " ".join(f'<a href="/login?lang={code}">{code}</a>' for code in LANGS)
    err = f'<p class="error" id="login-error" role="alert">{t("wrong_password")}</p>' \
        if error else ""
    body = f"""<!doctype html><html lang="{lang}"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{t("title")}</title>
<link rel="stylesheet" href="/static/common/common.css"></head>
<body class="login"><main><h1>{t("title")}</h1>{err}
<form method="post" action="/login">
<input type="hidden" name="lang" value="{lang}">
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
<span id="live" class="live"></span>
<form method="post" action="/logout"><input type="hidden" name="csrf"
 value="{html.escape(session.csrf)}"><button id="logout" type="submit"></button></form>
</nav></header><main id="app"></main></body></html>"""
    return HTMLResponse(body)


def deals_for_console(path: Path) -> tuple[dict[int, dict[str, list[str]]], list[str]]:
    """The hands of a deals file (PBN, DUP, BRI, DGE) by board and seat, and its problems."""
    from controller.deals import read_deals
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
        console.pending = console.rulings.unanswered()
        stop = asyncio.Event()
        task = asyncio.create_task(run_listener(config.broker, store, console.conn, stop,
                                                config.client_id))
        try:
            yield
        finally:
            stop.set()
            store.hub.close()
            store.close()
            await task
            console.rulings.close()
            console.calls.close()

    login_lock = asyncio.Lock()

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
        async with login_lock:   # one check at a time: at most two guesses a second
            ok = await asyncio.to_thread(verify_password, password, config.password_hash)
            if not ok:
                log.warning("wrong password from %s", request.client.host if request.client
                            else "?")
                await asyncio.sleep(0.5)
        if not ok:
            return _login_page(lang, error=True, status=401)
        token, _ = console.sessions.create(name)
        response = RedirectResponse("/console", status_code=303)
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
                "src": config.src, "calls": console.open_calls()}

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
            body = json.loads(await request.body())
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
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
            changed = console.calls.close_call(call_id, action, session.name, now)
        else:
            return JSONResponse({"error": f"unknown action {action!r}"}, status_code=400)
        if changed:
            console.calls_changed()
        return JSONResponse({"call": console.calls.get(call_id), "changed": changed})

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
        Route("/console/api/call/{call}/{action}", api_call, methods=["POST"]),
        Route("/console/api/log", api_log), Route("/console/api/deals", api_deals),
        Route("/console/api/rounds", api_rounds),
        Route("/console/log.csv", log_csv),
        Mount("/static/console", StaticFiles(directory=STATIC), name="console-static"),
    ]
    return create_app(routes, lifespan=lifespan, state={"console": console})
