"""The console's routes, each a module-level handler; ``director`` gives them their shared
opening.

Every route but the login's needs the director's session; one that changes something
also needs the session's CSRF token in ``X-CSRF-Token``. ``director`` checks both and
hands the handler a ``Call`` (the request, the console from ``app.state.console``, the
session); a handler refuses with ``Refused`` (``{"error": ...}`` and its status) and
names the exceptions it answers as errors, so no handler repeats the opening.
controller/web/console/app.py assembles them (``ROUTES``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs

from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind
from controller.web import sse
from controller.web.auth import (
    COOKIE,
    SESSION_SECONDS,
    LoginThrottle,
    Session,
    hash_password,
    verify_password,
)
from controller.web.console import options
from controller.web.console.calls import CallBook
from controller.web.console.pages import console_page, landing_fragment, lang_of, login_page
from controller.web.console.room import RoomBook
from controller.web.console.state import SCORE_RULING, Console, free_text
from controller.web.console.store import RulingLog
from controller.web.i18n import LABELS, LANGS
from controller.web.limits import client_of

log = logging.getLogger("bridge_table.console")

LOG_IN_FIRST = "log in first"
#: exception type -> the status it is answered with (its text the error)
Answers = tuple[tuple[type[Exception], int], ...]
#: a bad request body or field
BAD_INPUT: Answers = ((ValueError, 400),)
#: a ruling published on the broker: refused, or no broker to publish on
PUBLISHING: Answers = ((ValueError, 400), (ConnectionError, 503))
#: an adjusted score written into the session file
WRITING: Answers = ((ValueError, 400), (OSError, 400))


class Refused(Exception):
    """A request the console answers with ``{"error": ...}`` and an error status."""

    def __init__(self, status: int, error: str) -> None:
        super().__init__(error)
        self.status = status
        self.error = error

    def response(self) -> JSONResponse:
        return JSONResponse({"error": self.error}, status_code=self.status)


_Book = TypeVar("_Book", CallBook, RoomBook, RulingLog)

#: the largest number a request may carry (exact in every JSON reader, fits SQLite)
MAX_NUMBER = 2**53 - 1


def _bounded_int(text: str) -> int:
    number = int(text)
    if abs(number) > MAX_NUMBER:
        raise ValueError(f"the number {text[:24]} is too large")
    return number


def _finite_float(text: str) -> float:
    number = float(text)
    if number != number or number in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:24]} is too large")
    return number


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def read_json(body: bytes) -> Any:
    """A request's JSON: ValueError (answered 400) for bad JSON, a number out of range
    (``1e400``, 20 digits) or nesting too deep to read, never an error of the server."""
    try:
        return json.loads(body, parse_int=_bounded_int, parse_float=_finite_float,
                          parse_constant=_no_constant)
    except RecursionError:
        raise ValueError("the JSON is nested too deeply") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"the body is not UTF-8: {exc}") from None


def number_param(text: str) -> int:
    """A number in a path (a ruling's ``seq``, a call's id): Refused 400 when it is not
    one from 0 to ``MAX_NUMBER``."""
    if not text.isascii() or not text.isdigit() or len(text) > 16 or int(text) > MAX_NUMBER:
        raise Refused(400, f"not a number: {text[:24]!r}")
    return int(text)


@dataclass(frozen=True)
class Call:
    """One request of a logged-in director, as a handler gets it."""

    request: Request
    console: Console
    session: Session

    def param(self, name: str) -> str:
        return str(self.request.path_params[name])

    async def body(self) -> dict[str, Any]:
        """The request's JSON object; ValueError (bad JSON too) when it is not one."""
        body = read_json(await self.request.body())
        if not isinstance(body, dict):
            raise ValueError("the body must be a JSON object")
        return body

    # the console's books exist once the app has started (its lifespan opens them)
    @property
    def calls(self) -> CallBook:
        return _ready(self.console.calls)

    @property
    def room(self) -> RoomBook:
        return _ready(self.console.room)

    @property
    def rulings(self) -> RulingLog:
        return _ready(self.console.rulings)


def _ready(book: _Book | None) -> _Book:
    if book is None:
        raise Refused(503, "not ready")
    return book


Handler = Callable[[Call], Awaitable[Response]]
Endpoint = Callable[[Request], Awaitable[Response]]


def director(*, changes: bool = False, answers: Answers = ()) -> Callable[[Handler], Endpoint]:
    """A route of the logged-in director: without a session it answers 401; with
    ``changes`` (the route changes something) a missing or wrong CSRF token 403. The
    handler's ``Refused`` and the exceptions of ``answers`` become error answers."""
    caught = tuple(kind for kind, _ in answers)

    def wrap(handler: Handler) -> Endpoint:
        @functools.wraps(handler)
        async def endpoint(request: Request) -> Response:
            console: Console = request.app.state.console
            session = console.sessions.get(request)
            try:
                if session is None:
                    raise Refused(401, LOG_IN_FIRST)
                if changes and request.headers.get("x-csrf-token") != session.csrf:
                    raise Refused(403, "missing or wrong CSRF token")
                return await handler(Call(request, console, session))
            except Refused as exc:
                return exc.response()
            except caught as exc:
                status = next(status for kind, status in answers if isinstance(exc, kind))
                return JSONResponse({"error": str(exc)}, status_code=status)
        return endpoint
    return wrap


# -- logging in and out ----------------------------------------------------------------------
@dataclass
class Logins:
    """What the login shares: the throttle of wrong passwords and the scrypt checks."""

    throttle: LoginThrottle = field(default_factory=LoginThrottle)
    #: the same per account (the name given): guesses from many addresses at one
    #: director's password are slowed and locked out as one address's are
    accounts: LoginThrottle = field(default_factory=LoginThrottle)
    #: checked for a name with no account, so that it costs what a real check costs
    no_account: str = field(default_factory=lambda: hash_password(os.urandom(16).hex()))
    #: scrypt checks at once (each takes some 50 ms of a core and 16 MiB)
    checking: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(4))

    def wait_left(self, address: str, name: str) -> float:
        """Seconds before ``address`` may try ``name`` again (0: it may)."""
        return max(self.throttle.wait_left(address), self.accounts.wait_left(name))

    async def check(self, address: str, name: str, password: str, digest: str) -> bool:
        """One password check, one at a time from an address and for an account; a wrong
        one costs the throttle's delay and counts for both."""
        async with self.throttle.lock(address), self.accounts.lock(name):
            async with self.checking:
                ok = await asyncio.to_thread(verify_password, password, digest)
            if not ok:
                self.throttle.failed(address)
                self.accounts.failed(name)
                log.warning("wrong name or password from %s", address)
                await asyncio.sleep(max(self.throttle.delay, self.accounts.delay))
        return ok

    def succeeded(self, address: str, name: str) -> None:
        self.throttle.succeeded(address)
        self.accounts.succeeded(name)


async def index(request: Request) -> Response:
    return RedirectResponse("/console", status_code=303)


async def favicon(request: Request) -> Response:
    return Response(status_code=204)


async def login_form(request: Request) -> Response:
    return login_page(lang_of(request))


async def login(request: Request) -> Response:
    console: Console = request.app.state.console
    logins: Logins = request.app.state.logins
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    name = (form.get("name", [""])[0].strip() or "director")[:60]
    lang = form.get("lang", ["en"])[0]
    lang = lang if lang in LANGS else "en"
    address = client_of(request.client)   # the socket's, or a trusted proxy's word
    config = console.config
    # the account whose password is checked: the name's own, else the one shared by every
    # director (any name reaches it, so guesses under many names count as one account's)
    account = name if name in config.accounts or not config.password_hash else ""
    if logins.wait_left(address, account):
        log.warning("login refused from %s: too many wrong passwords", address)
        return login_page(lang, error=True, status=429)
    digest = config.accounts.get(name) or config.password_hash or logins.no_account
    if not await logins.check(address, account, form.get("password", [""])[0], digest):
        return login_page(lang, error=True, status=401)
    logins.succeeded(address, account)
    token, _ = console.sessions.create(name)
    response = RedirectResponse("/console" + landing_fragment(form.get("fragment", [""])[0]),
                                status_code=303)
    response.set_cookie(COOKIE, token, max_age=SESSION_SECONDS, httponly=True,
                        samesite="strict", secure=config.secure_cookie)
    response.set_cookie("bt_lang", lang, samesite="strict", secure=config.secure_cookie)
    return response


async def logout(request: Request) -> Response:
    """Ends the session and its event streams; without the session's CSRF token it is
    refused (403) and nothing ends: another site cannot log a director out."""
    console: Console = request.app.state.console
    session = console.sessions.get(request)
    form = parse_qs((await request.body()).decode("utf-8", "replace"))
    if session is not None:
        if form.get("csrf", [""])[0] != session.csrf:
            return JSONResponse({"error": "missing or wrong CSRF token"}, status_code=403)
        console.sessions.drop(request)
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE)
    return response


async def page(request: Request) -> Response:
    """The console's page; without a session, the login form."""
    console: Console = request.app.state.console
    session = console.sessions.get(request)
    if session is None:
        return RedirectResponse("/login", status_code=303)
    return console_page(session, lang_of(request))


# -- what the page reads ---------------------------------------------------------------------
@director()
async def events(call: Call) -> Response:
    console = call.console

    def snapshot() -> dict[str, Any]:
        return {"tables": console.store.snapshot(),
                "connected": console.conn.client is not None, "src": console.config.src,
                "calls": console.open_calls(), "room": console.room_snapshot()}

    return sse.stream(call.request, console.store.hub, snapshot, call.session)


@director()
async def api_options(call: Call) -> Response:
    return JSONResponse({**options.as_json(), "labels": LABELS,
                         "codes_known": [str(c) for c in Code],
                         "kinds": [str(k) for k in RulingKind]})


@director()
async def api_deals(call: Call) -> Response:
    return JSONResponse({str(b): hands for b, hands in call.console.config.deals.items()})


@director()
async def api_rounds(call: Call) -> Response:
    return JSONResponse({t: {str(b): r for b, r in boards.items()}
                         for t, boards in call.console.config.rounds.items()})


@director()
async def api_session(call: Call) -> Response:
    """The session's tables, boards, pairs and players, and its artificial scores."""
    sess = call.console.config.session
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
                         "tables": {t: sorted(move.boards_of_table(t)) for t in move.tables},
                         "pairs_at": pairs_at,
                         "pairs": {str(n): {"name": c.label, "players": list(c.players)}
                                   for n, c in (sess.teams if sess.is_teams
                                                else sess.pairs).items()}})


def _ruling_log(call: Call) -> RulingLog:
    """The ruling log, for the routes that read it (before the app started: 401)."""
    if call.console.rulings is None:
        raise Refused(401, LOG_IN_FIRST)
    return call.console.rulings


@director()
async def api_log(call: Call) -> Response:
    return JSONResponse({"rulings": _ruling_log(call).rows()})


@director()
async def log_csv(call: Call) -> Response:
    return Response(_ruling_log(call).csv(), media_type="text/csv; charset=utf-8",
                    headers={"Content-Disposition": 'attachment; filename="rulings.csv"'})


# -- rulings and scores ----------------------------------------------------------------------
@director(changes=True, answers=PUBLISHING)
async def api_ruling(call: Call) -> Response:
    return JSONResponse(await call.console.send_ruling(call.session, await call.body()))


@director(changes=True, answers=WRITING)
async def api_score(call: Call) -> Response:
    return JSONResponse(call.console.send_score(call.session, await call.body()))


@director(changes=True, answers=PUBLISHING)
async def api_reverse(call: Call) -> Response:
    """``POST /console/api/reverse/{seq}`` (JSON ``{"confirmed": true}``): send the
    logged reversal of a ruling; the log links the two."""
    rulings = call.rulings
    seq = number_param(call.param("seq"))
    try:
        body = read_json(await call.request.body() or b"{}")
    except ValueError:
        raise Refused(400, "bad request") from None
    row = rulings.get(seq)
    if row is None:
        raise Refused(404, f"no ruling {seq}")
    if row["reversed_by"] is not None:
        raise Refused(409, f"ruling {seq} was reversed by {row['reversed_by']}")
    if not row["reversal"]:
        raise Refused(409, f"ruling {seq} cannot be reversed from the console")
    if not isinstance(body, dict) or body.get("confirmed") is not True:
        raise Refused(400, "a reversal changes what the table did: confirm it first")
    if row["ruling"] == SCORE_RULING:
        return JSONResponse(call.console.reverse_score(call.session, row))
    return JSONResponse(await call.console.send_ruling(
        call.session, {"table": row["table_id"], "note": f"reverses {seq}"}, reverses=row))


@director(changes=True, answers=BAD_INPUT)
async def api_record(call: Call) -> Response:
    """``POST /console/api/record/{seq}``: the facts, a note, the appeal status."""
    rulings = call.rulings
    seq = number_param(call.param("seq"))
    body = await call.body()
    appeal = body.get("appeal")
    if not rulings.record(seq, facts=free_text(body.get("facts")),
                          note=free_text(body.get("note")),
                          appeal=appeal if isinstance(appeal, str) else None):
        raise Refused(404, f"no ruling {seq}")
    return JSONResponse({"ruling": rulings.get(seq)})


# -- the calls and the room's clock ----------------------------------------------------------
@director(changes=True)
async def api_answer_calls(call: Call) -> Response:
    table = call.param("table")
    console = call.console
    if table not in console.store.tables:
        raise Refused(404, f"unknown table {table!r}")
    console.store.answer_calls(table)
    if console.calls is not None and console.calls.answer_table(table, call.session.name,
                                                                time.time()):
        console.calls_changed()
    return JSONResponse({"table": table})


@director(changes=True)
async def api_call(call: Call) -> Response:
    """``POST /console/api/call/{id}/{answered|ruled|dismissed}``: the director's word
    on one call (answered keeps it open; ruled and dismissed close it)."""
    calls = call.calls
    call_id = number_param(call.param("call"))
    action = call.param("action")
    called = calls.get(call_id)
    if called is None:
        raise Refused(404, f"no call {call_id}")
    now = time.time()
    rulings = call.console.rulings
    if action == "answered":
        changed = calls.answer(call_id, call.session.name, now)
    elif action in ("ruled", "dismissed"):
        seq = rulings.latest(str(called["table_id"]), float(called["received"])) \
            if action == "ruled" and rulings is not None else None
        changed = calls.close_call(call_id, action, call.session.name, now, seq)
    else:
        raise Refused(400, f"unknown action {action!r}")
    if changed:
        call.console.calls_changed()
    return JSONResponse({"call": calls.get(call_id), "changed": changed})


@director(changes=True, answers=BAD_INPUT)
async def api_callback(call: Call) -> Response:
    """``POST /console/api/call/{id}/callback`` ``{"minutes": M}``: remind the director
    to go back to the table in M minutes (0: no reminder)."""
    calls = call.calls
    call_id = number_param(call.param("call"))
    body = read_json(await call.request.body())
    minutes = body.get("minutes") if isinstance(body, dict) else None
    if not isinstance(minutes, int | float) or isinstance(minutes, bool) \
            or not 0 <= minutes <= 240:
        raise ValueError("minutes must be 0 to 240")
    due = time.time() + 60 * minutes if minutes else None
    if not calls.call_back(call_id, due):
        raise Refused(404, f"no open call {call_id}")
    call.console.calls_changed()
    return JSONResponse({"call": calls.get(call_id)})


@director(changes=True, answers=BAD_INPUT)
async def api_clock(call: Call) -> Response:
    """``POST /console/api/clock``: ``{"round": N, "minutes": M}`` starts round N's
    clock now; ``{"move": true}`` records that the director called the move."""
    room = call.room
    body = await call.body()
    if body.get("move") is True:
        if room.call_move(time.time()) is None:
            raise ValueError("no round's clock is running")
    else:
        number, minutes = body.get("round"), body.get("minutes")
        if not isinstance(number, int) or isinstance(number, bool) \
                or not isinstance(minutes, int | float) or isinstance(minutes, bool):
            raise ValueError("round (a number) and minutes (a number) are needed")
        room.start_round(number, float(minutes), time.time())
    log.info("room clock: %s by %s", body, call.session.name)
    call.console.room_changed()
    return JSONResponse(call.console.room_snapshot())
