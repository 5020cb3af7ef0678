"""The director's console: room view, table view with the rulings, ruling log.

Routes (every one but ``/login`` needs the director's session; the handlers are in
controller/web/console/routes.py, what they share in controller/web/console/state.py):

- ``/login`` (GET form, POST password), ``/logout`` (POST)
- ``/console``: the page (room, table and log views; ``console.js`` draws them)
- ``/console/events``: Server-Sent Events, a snapshot of every table then each change
- ``/console/api/ruling`` (POST JSON): publish a ruling on ``bridge/{t}/ruling``
- ``/console/api/options``, ``/console/api/log``, ``/console/log.csv``
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from controller.laws.cards import Seat
from controller.web.app import create_app
from controller.web.console import routes as r
from controller.web.console.calls import CallBook
from controller.web.console.room import RoomBook
from controller.web.console.state import Console, ConsoleConfig
from controller.web.console.store import RulingLog
from controller.web.listener import TableStore, listen

STATIC = Path(__file__).parent / "static"

POST = ["POST"]
#: a login or a logout is a few hundred bytes (a name, a password, a token): more is
#: refused unread (controller/web/limits.py); the other routes take 64 KiB
BODY_LIMITS = {"/login": 4096, "/logout": 4096}
ROUTES: tuple[BaseRoute, ...] = (
    Route("/", r.index), Route("/favicon.ico", r.favicon),
    Route("/login", r.login_form, methods=["GET"]),
    Route("/login", r.login, methods=POST), Route("/logout", r.logout, methods=POST),
    Route("/console", r.page), Route("/console/events", r.events),
    Route("/console/api/options", r.api_options),
    Route("/console/api/ruling", r.api_ruling, methods=POST),
    Route("/console/api/calls/{table}/answered", r.api_answer_calls, methods=POST),
    Route("/console/api/call/{call}/callback", r.api_callback, methods=POST),
    Route("/console/api/call/{call}/{action}", r.api_call, methods=POST),
    Route("/console/api/clock", r.api_clock, methods=POST),
    Route("/console/api/reverse/{seq}", r.api_reverse, methods=POST),
    Route("/console/api/score", r.api_score, methods=POST),
    Route("/console/api/session", r.api_session),
    Route("/console/api/record/{seq}", r.api_record, methods=POST),
    Route("/console/api/log", r.api_log), Route("/console/api/deals", r.api_deals),
    Route("/console/api/rounds", r.api_rounds),
    Route("/console/log.csv", r.log_csv),
    Mount("/static/console", StaticFiles(directory=STATIC), name="console-static"),
)


def build_app(config: ConsoleConfig) -> Starlette:
    """The console's app: its routes, and its state (``app.state.console``, the tables
    fed from the broker while the app runs; ``app.state.logins``)."""
    store = TableStore(root=config.root)
    console = Console(config=config, store=store)
    store.watchers.append(console.watch)
    return create_app(ROUTES, lifespan=_lifespan,
                      state={"console": console, "logins": r.Logins()},
                      body_limits=BODY_LIMITS, trusted_proxies=config.trusted_proxies)


@asynccontextmanager
async def _lifespan(app: Starlette) -> AsyncIterator[None]:
    """The books opened, the broker read, while the app runs."""
    console: Console = app.state.console
    config, store = console.config, console.store
    console.rulings = RulingLog(config.db)
    console.calls = CallBook(config.db)
    console.room = RoomBook(config.db)
    console.pending = console.rulings.unanswered()
    stop = asyncio.Event()
    task = asyncio.create_task(listen(config.broker, store.topics(), store.handle, stop,
                                      client_id=config.client_id, conn=console.conn,
                                      who="the console"))
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
