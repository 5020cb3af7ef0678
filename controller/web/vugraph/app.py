"""The vugraph: a web page for the audience, fed by what the broadcast relay released.

It subscribes to ``{public}/#`` and nothing else (it never reads ``bridge/#``): the
session (``public/session``), every released board view (``public/{t}/board/{b}``) and
each table's snapshot (``public/{t}/snapshot``), all retained, so it starts with the whole
released session. Pages (one HTML file, no build step, assets in the package):

- ``/``: the tables, live;
- ``/#/table/T``: the table's board as a deal diagram, the auction, the play trick by
  trick with a step-through, the result;
- ``/#/board/B``: the board's results across tables (frequency, matchpoints, IMPs when
  two tables played it), double-dummy makeable contracts and par (endplay, the ``dd``
  extra: the page says when it is absent).

``/events`` is a Server-Sent Events stream of every change; ``/api/state`` and
``/api/board/{b}`` give the data as JSON.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import signal
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from controller import wire
from controller.broker.settings import BrokerSettings
from controller.session.scoring import rank_labels
from controller.web.app import create_app
from controller.web.limits import LIMITS, CountedStream, client_of, uvicorn_config

if TYPE_CHECKING:
    from controller.web.listener import Connection

__all__ = ["Store", "board_summary", "ranking", "double_dummy", "dd_trace", "build_app", "serve"]

log = logging.getLogger("bridge_table.vugraph")
STATIC = Path(__file__).parent / "static"
#: put on each live stream's queue when the server stops: the stream ends
_END = "\x00end"


class Store:
    """The latest of every retained ``public/...`` message, per session, and the SSE
    listeners. One session is shown at a time (the relay's current one unless the page
    asks for another): boards of two sessions are never compared."""

    def __init__(self, public: str = "public") -> None:
        self.public = public
        self.session: dict[str, Any] = {}          # public/session: the relay's session
        self.snapshots: dict[tuple[str, str], dict[str, Any]] = {}     # (session, table)
        self.boards: dict[tuple[str, str, int], dict[str, Any]] = {}   # (session, t, b)
        self.now: dict[tuple[str, str], dict[str, Any]] = {}           # (session, table)
        self.commentary: dict[str, dict[str, Any]] = {}                # session ->
        self.listeners: set[asyncio.Queue[str]] = set()
        self.connected = False

    def take(self, topic: str, payload: Any) -> bool:
        parts = topic.split("/")
        if not parts or parts[0] != self.public or not isinstance(payload, dict):
            return False
        kind = wire.public_kind(topic)
        if kind is None or wire.public_problem(kind, payload) is not None:
            # not what the relay publishes (it refuses such a payload): never shown
            log.debug("%s: not a %s payload of the wire contract, dropped", topic, kind)
            return False
        sid = str(payload.get("session") or "")
        if parts[1:] == ["session"]:
            self.session = payload
        elif parts[1:] == ["commentary"]:
            self.commentary[sid] = payload
        elif len(parts) == 3 and parts[2] == "snapshot":
            self.snapshots[(sid, parts[1])] = payload
        elif len(parts) == 3 and parts[2] == "now":
            self.now[(sid, parts[1])] = payload
        elif len(parts) == 4 and parts[2] == "board" and parts[3].isdigit():
            self.boards[(sid, parts[1], int(parts[3]))] = payload
        else:
            return False
        self.notify({"topic": topic, "session": sid})
        return True

    def handle(self, topic: str, payload: bytes) -> bool:
        """One MQTT message: its payload read by the wire module (a JSON object within the
        contract's size; anything else is dropped), then ``take``."""
        data = wire.json_object(payload)
        return data is not None and self.take(topic, data)

    def set_connected(self, up: bool) -> None:
        """The link to the broker came up or went down: the page says so."""
        self.connected = up
        self.notify({"topic": "connected" if up else "disconnected"})

    def notify(self, message: dict[str, Any]) -> None:
        text = json.dumps(message)
        for q in list(self.listeners):
            with contextlib.suppress(asyncio.QueueFull):
                q.put_nowait(text)

    def sessions(self) -> list[str]:
        known = {s for s, _, _ in self.boards} | {s for s, _ in self.snapshots} | \
            {s for s, _ in self.now}
        current = self.session.get("session")
        if isinstance(current, str) and current:
            known.add(current)
        return sorted(k for k in known if k)

    def current(self, session: str | None = None) -> str:
        """The session shown: the one asked for, else the relay's, else the latest seen."""
        if session:
            return session
        sid = self.session.get("session")
        if isinstance(sid, str) and sid:
            return sid
        known = self.sessions()
        return known[-1] if known else ""

    def session_boards(self, sid: str) -> dict[tuple[str, int], dict[str, Any]]:
        return {(t, b): v for (s, t, b), v in self.boards.items() if s == sid}

    def state(self, session: str | None = None) -> dict[str, Any]:
        sid = self.current(session)
        info = self.session if self.session.get("session") == sid else {"session": sid}
        boards = self.session_boards(sid)
        tables = sorted(set(info.get("tables", [])) | {t for s, t in self.snapshots if s == sid}
                        | {t for s, t in self.now if s == sid}, key=_natural)
        return {"session": info, "sessions": self.sessions(), "connected": self.connected,
                "tables": [{"table": t, "snapshot": self.snapshots.get((sid, t)),
                            "now": self.now.get((sid, t)),
                            "boards": sorted(b for (x, b) in boards if x == t)}
                           for t in tables],
                "boards": sorted({b for _, b in boards}),
                "ranking": ranking(self, sid),
                "commentary": self.commentary.get(sid)}


def _natural(text: str) -> tuple[Any, ...]:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def board_summary(store: Store, board: int, session: str | None = None,
                  dd: bool = True) -> dict[str, Any]:
    """The board's released results across the tables of one session: frequency,
    matchpoints, IMPs."""
    from controller.laws.scoring import imps, matchpoints

    sid = store.current(session)
    rows = []
    deal = None
    # the relay gives each view the session's scoring (controller.broadcast.view): IMPs
    # between two tables only for a teams match, never on a pairs board
    scoring = None
    for (t, b), view in sorted(store.session_boards(sid).items(),
                               key=lambda kv: _natural(kv[0][0])):
        if b != board:
            continue
        deal = deal or view.get("deal")
        scoring = scoring or view.get("scoring")
        res = view.get("result")
        # a view the relay would not have published (put on public/# by hand) counts as
        # no result, never as an error for the whole page
        if not isinstance(res, dict) or view.get("status") != "complete" or \
                type(res.get("score_ns")) is not int:
            continue
        cards = [c for c in view.get("cards") or [] if isinstance(c, list) and len(c) == 2]
        rows.append({"table": t, "ns": view.get("ns"), "ew": view.get("ew"),
                     "players": view.get("players") or {},
                     "contract": res.get("contract"), "declarer": res.get("declarer"),
                     "lead": cards[0][1] if cards else None,
                     "tricks": res.get("tricks"), "score_ns": res["score_ns"]})
    scores = [r["score_ns"] for r in rows]
    for r, mp in zip(rows, matchpoints(scores) if scores else [], strict=True):
        r["mp_ns"] = mp
        r["mp_ew"] = 2 * (len(rows) - 1) - mp
        r["pct_ns"] = round(100 * mp / (2 * (len(rows) - 1)), 1) if len(rows) > 1 else None
    freq: dict[str, dict[str, Any]] = {}
    for r in rows:
        key = f"{r['contract']} {r.get('declarer') or ''} {r['score_ns']}"
        f = freq.setdefault(key, {"contract": r["contract"], "declarer": r.get("declarer"),
                                  "score_ns": r["score_ns"], "count": 0})
        f["count"] += 1
    out: dict[str, Any] = {"board": board, "session": sid, "deal": deal, "results": rows,
                           "frequency": sorted(freq.values(), key=lambda f: -f["score_ns"])}
    if len(rows) == 2 and scoring == "IMP":   # a teams match: the two tables of the board
        out["imps_ns"] = imps(rows[0]["score_ns"] - rows[1]["score_ns"])
    if dd:
        out["dd"] = double_dummy(deal, board) if deal else None
    return out


def ranking(store: Store, session: str) -> list[dict[str, Any]]:
    """The running ranking of one session from its released boards: each pair's
    matchpoints (NS pairs get ``mp_ns``, EW pairs ``mp_ew``) over the top they could have
    had, boards with at least two results. Ranked in two fields (``field`` ``NS``, ``EW``)
    when no pair has sat both ways, else in one (``field`` None); ``rank`` is text, a tie
    sharing it (``2=``)."""
    totals: dict[str, dict[str, Any]] = {}
    sides: dict[str, set[str]] = {}
    for board in sorted({b for _, b in store.session_boards(session)}):
        rows = board_summary(store, board, session, dd=False)["results"]
        if len(rows) < 2:
            continue
        top = 2 * (len(rows) - 1)
        for r in rows:
            for side, mp in (("ns", r["mp_ns"]), ("ew", r["mp_ew"])):
                pair = r.get(side)
                if pair is None:
                    continue
                entry = totals.setdefault(str(pair), {
                    "pair": str(pair), "name": (r.get("players") or {}).get(side),
                    "mp": 0, "top": 0, "boards": 0})
                sides.setdefault(str(pair), set()).add(side)
                entry["mp"] += mp
                entry["top"] += top
                entry["boards"] += 1
    # a pair that never changes direction (a Mitchell without arrow-switch) is ranked in
    # its direction's field, as ``bridge-table score`` ranks it: NS 1 and EW 1 both won
    switched = {p for p in sides if len(sides[p]) > 1}
    for e in totals.values():
        e["pct"] = round(100 * e["mp"] / e["top"], 2)
        e["field"] = None if switched else next(iter(sides[e["pair"]])).upper()
    out = sorted(totals.values(), key=lambda e: (e["field"] or "", -e["pct"],
                                                 _natural(e["pair"])))
    fields: dict[str | None, list[dict[str, Any]]] = {}
    for e in out:
        fields.setdefault(e["field"], []).append(e)
    for entries in fields.values():   # ranked as the session's records rank (2=, a tie)
        for e, label in zip(entries, rank_labels([e["pct"] for e in entries]), strict=True):
            e["rank"] = label
    return out


_DD_CACHE: dict[str, Any] = {}
#: endplay's DDS is not safe to call from two threads at once (the board page and the
#: per-card trace run in worker threads): one solver call at a time
_DDS_LOCK = threading.Lock()


def double_dummy(deal: str, board: int) -> dict[str, Any]:
    """Makeable tricks per denomination and declarer, and par, with endplay's DDS."""
    key = f"{board}:{deal}"
    if key in _DD_CACHE:
        cached: dict[str, Any] = _DD_CACHE[key]
        return cached
    try:
        from endplay.dds import calc_dd_table, par
        from endplay.types import Deal, Player, Vul
    except ImportError:
        return {"available": False}
    from controller.laws.cards import Seat, Vulnerability, board_dealer, board_vulnerability
    with _DDS_LOCK:
        solved = calc_dd_table(Deal(deal))
    table = solved.to_list()   # rows S H D C NT, columns N E S W
    denoms = ["S", "H", "D", "C", "NT"]
    tricks = {d: dict(zip("NESW", row, strict=True)) for d, row in zip(denoms, table, strict=True)}
    vul = {Vulnerability.NONE: Vul.none, Vulnerability.NS: Vul.ns, Vulnerability.EW: Vul.ew,
           Vulnerability.ALL: Vul.both}[board_vulnerability(board)]
    dealer = {Seat.N: Player.north, Seat.E: Player.east, Seat.S: Player.south,
              Seat.W: Player.west}[board_dealer(board)]
    with _DDS_LOCK:
        p = par(solved, vul, dealer)
    symbols = {"♠": "S", "♥": "H", "♦": "D", "♣": "C", "NT": "NT"}
    contracts = []
    for c in p:
        text = str(c)
        for sym, letter in symbols.items():
            text = text.replace(sym, letter)
        contracts.append(text)
    out = {"available": True, "tricks": tricks, "par_score_ns": p.score,
           "par": contracts}
    _DD_CACHE[key] = out
    return out


_TRACE_CACHE: dict[str, list[int]] = {}


def dd_trace(view: dict[str, Any]) -> dict[str, Any]:
    """Per card, double dummy (endplay's DDS): after each card of the play (0, the opening
    lead, ... the last), the tricks declarer's side takes in all with best play from
    there on, so each card that changes it stands out. Only for a released board (its
    deal is in the view) with a contract."""
    res = view.get("result") or {}
    deal, contract, declarer = view.get("deal"), res.get("contract"), res.get("declarer")
    cards = [c for _, c in view.get("cards") or []]
    if not deal or not contract or contract == "Pass" or declarer not in ("N", "E", "S", "W"):
        return {"available": False}
    try:
        from endplay.dds import solve_board
        from endplay.types import Deal, Denom, Player
    except ImportError:
        return {"available": False}
    key = f"{deal}|{contract}|{declarer}|{' '.join(cards)}"
    if key not in _TRACE_CACHE:
        strain = contract[1:].rstrip("X")
        seats = "NESW"
        d = Deal(deal)
        d.trump = {"S": Denom.spades, "H": Denom.hearts, "D": Denom.diamonds,
                   "C": Denom.clubs, "NT": Denom.nt}[strain]
        players = [Player.north, Player.east, Player.south, Player.west]
        ours = {players[seats.index(declarer)], players[(seats.index(declarer) + 2) % 4]}
        d.first = players[(seats.index(declarer) + 1) % 4]
        trace: list[int] = []
        won = done = 0
        for k in range(len(cards) + 1):
            if done == 13:
                trace.append(won)
                break
            with _DDS_LOCK:
                best = max((t for _, t in solve_board(d)), default=0)
            trace.append(won + (best if d.curplayer in ours else 13 - done - best))
            if k == len(cards):
                break
            try:
                d.play(cards[k])
            except Exception:   # a card the deal does not hold (an irregular play)
                break
            if not d.curtrick:
                done += 1
                won += d.first in ours
        _TRACE_CACHE[key] = trace
    return {"available": True, "declarer": declarer, "contract": contract,
            "tricks": _TRACE_CACHE[key]}


# -- the routes: each reads the store from ``request.app.state.store`` -------------------------
def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _shown(request: Request) -> str:
    """The session a request is about: the one it asks for (``?session=``), else the
    store's current one."""
    return _store(request).current(request.query_params.get("session") or None)


def _not_found(error: str) -> Response:
    return JSONResponse({"error": error}, status_code=404)


async def index(request: Request) -> Response:
    return FileResponse(STATIC / "index.html", media_type="text/html")


async def state(request: Request) -> Response:
    return JSONResponse(_store(request).state(request.query_params.get("session") or None))


async def table_view(request: Request) -> Response:
    store, t, sid = _store(request), request.path_params["table"], _shown(request)
    boards = {b: v for (x, b), v in store.session_boards(sid).items() if x == t}
    return JSONResponse({"table": t, "session": sid,
                         "snapshot": store.snapshots.get((sid, t)),
                         "now": store.now.get((sid, t)),
                         "boards": [boards[b] for b in sorted(boards)]})


async def board(request: Request) -> Response:
    try:
        number = int(request.path_params["board"])
    except ValueError:
        return _not_found("not a board")
    summary = await asyncio.to_thread(board_summary, _store(request), number,
                                      _shown(request))
    return JSONResponse(summary)


async def trace(request: Request) -> Response:
    try:
        key = (_shown(request), request.path_params["table"],
               int(request.path_params["board"]))
    except ValueError:
        return _not_found("not a board")
    view = _store(request).boards.get(key)
    if view is None:
        return _not_found("no such released board")
    return JSONResponse(await asyncio.to_thread(dd_trace, view))


async def events(request: Request) -> Response:
    """Server-Sent Events: every change the store notifies, keep-alive comments."""
    store = _store(request)
    address, streams = client_of(request.client), request.app.state.streams
    if not streams.take(address):
        return JSONResponse({"error": "too many event streams from this address"},
                            status_code=429)
    queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1000)
    store.listeners.add(queue)
    return CountedStream(streams, address, _stream(request, store, queue),
                         media_type="text/event-stream",
                         headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def _stream(request: Request, store: Store,
                  queue: asyncio.Queue[str]) -> AsyncIterator[str]:
    try:
        yield "retry: 2000\n\n"
        yield f"data: {json.dumps({'topic': 'hello'})}\n\n"
        while True:
            try:
                text = await asyncio.wait_for(queue.get(), 15)
                if text is _END:
                    break
                yield f"data: {text}\n\n"
            except TimeoutError:
                yield ": keep-alive\n\n"
            if await request.is_disconnected():
                break
    finally:
        store.listeners.discard(queue)


ROUTES = (
    Route("/", index), Route("/api/state", state), Route("/api/table/{table}", table_view),
    Route("/api/board/{board}", board), Route("/api/dd/{table}/{board}", trace),
    Route("/events", events),
    Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
)


#: an audience may share an address (a venue's or a phone network's NAT): more live pages
#: per address than a director has
VUGRAPH_LIMITS = dataclasses.replace(LIMITS, streams_per_client=32)


def build_app(store: Store, *, lifespan: Any = None,
              trusted_proxies: frozenset[str] = frozenset()) -> Any:
    """The vugraph's app, its routes reading ``store`` (``app.state.store``): the web apps'
    one factory, with the console's security headers and limits (controller/web/app.py)."""
    return create_app(ROUTES, lifespan=lifespan, state={"store": store},
                      trusted_proxies=trusted_proxies, limits=VUGRAPH_LIMITS)


async def listen(store: Store, broker: BrokerSettings, stop: asyncio.Event,
                 conn: Connection | None = None) -> None:
    """Keep ``store`` up to date from ``{public}/#`` (only), through the web apps' one
    broker listener (controller/web/listener.py)."""
    import uuid

    from controller.web.listener import listen as listen_to_broker

    await listen_to_broker(broker, [f"{store.public}/#"], store.handle, stop,
                           client_id=f"bridge-table-vugraph-{uuid.uuid4().hex[:12]}",
                           connected=store.set_connected, conn=conn, who="the vugraph")


def serve(store: Store, broker: BrokerSettings, host: str, port: int, *,
          trusted_proxies: frozenset[str] = frozenset()) -> bool:
    """Serve the vugraph on ``host:port``, ``store`` fed from the broker, until SIGINT or
    SIGTERM; False when the broker refused the login at start (said at ERROR)."""
    import uvicorn

    from controller.web.listener import Connection as Link
    conn = Link()

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(listen(store, broker, stop, conn))
        try:
            yield
        finally:
            stop.set()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    app = build_app(store, lifespan=lifespan, trusted_proxies=trusted_proxies)
    log.info("vugraph on http://%s:%d/ (public topics %s/# of %s)", host, port, store.public,
             broker.url)
    # uvicorn's own signal handling waited on every viewer's live stream (a SIGTERM hung
    # until systemd killed it) and then re-raised the signal (exit status 143): ours
    # stops the server, ends the streams, and the command exits 0, as the console does
    config = uvicorn_config(app, host, port)
    server = uvicorn.Server(config)
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    try:
        asyncio.run(_serve(server, store, conn))
    except KeyboardInterrupt:
        pass
    if conn.refused is not None:
        return False
    log.info("stopped")
    return True


async def _serve(server: Any, store: Store, conn: Connection) -> None:
    def stop() -> None:
        server.should_exit = True
        for queue in list(store.listeners):   # each live stream ends at its next wake
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(_END)

    conn.stop_serving = stop    # a login the broker refuses at start stops the vugraph
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    await server.serve()
