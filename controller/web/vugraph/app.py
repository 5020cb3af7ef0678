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

import argparse
import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

__all__ = ["Store", "board_summary", "double_dummy", "build_app", "main"]

log = logging.getLogger("bridge_table.vugraph")
STATIC = Path(__file__).parent / "static"


class Store:
    """The latest of every retained ``public/...`` message, and the SSE listeners."""

    def __init__(self, public: str = "public") -> None:
        self.public = public
        self.session: dict[str, Any] = {}
        self.snapshots: dict[str, dict[str, Any]] = {}
        self.boards: dict[tuple[str, int], dict[str, Any]] = {}
        self.listeners: set[asyncio.Queue[str]] = set()
        self.connected = False

    def take(self, topic: str, payload: Any) -> bool:
        parts = topic.split("/")
        if not parts or parts[0] != self.public or not isinstance(payload, dict):
            return False
        if parts[1:] == ["session"]:
            self.session = payload
        elif len(parts) == 3 and parts[2] == "snapshot":
            self.snapshots[parts[1]] = payload
        elif len(parts) == 4 and parts[2] == "board" and parts[3].isdigit():
            self.boards[(parts[1], int(parts[3]))] = payload
        else:
            return False
        self.notify({"topic": topic})
        return True

    def notify(self, message: dict[str, Any]) -> None:
        text = json.dumps(message)
        for q in list(self.listeners):
            with contextlib.suppress(asyncio.QueueFull):
                q.put_nowait(text)

    def state(self) -> dict[str, Any]:
        tables = sorted(set(self.session.get("tables", [])) | set(self.snapshots),
                        key=_natural)
        return {"session": self.session, "connected": self.connected,
                "tables": [{"table": t, "snapshot": self.snapshots.get(t),
                            "boards": sorted(b for (x, b) in self.boards if x == t)}
                           for t in tables],
                "boards": sorted({b for _, b in self.boards})}


def _natural(text: str) -> tuple[Any, ...]:
    return (0, int(text), "") if text.isdigit() else (1, 0, text)


def board_summary(store: Store, board: int) -> dict[str, Any]:
    """The board's released results across tables: frequency, matchpoints, IMPs."""
    from ...laws.scoring import imps, matchpoints

    rows = []
    deal = None
    for (t, b), view in sorted(store.boards.items(), key=lambda kv: _natural(kv[0][0])):
        if b != board:
            continue
        deal = deal or view.get("deal")
        res = view.get("result")
        if not res or view.get("status") != "complete" or res.get("score_ns") is None:
            continue
        rows.append({"table": t, "ns": view.get("ns"), "ew": view.get("ew"),
                     "contract": res.get("contract"), "declarer": res.get("declarer"),
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
    out: dict[str, Any] = {"board": board, "deal": deal, "results": rows,
                           "frequency": sorted(freq.values(), key=lambda f: -f["score_ns"])}
    if len(rows) == 2:   # a teams match: the two tables of the board
        out["imps_ns"] = imps(rows[0]["score_ns"] - rows[1]["score_ns"])
    out["dd"] = double_dummy(deal, board) if deal else None
    return out


_DD_CACHE: dict[str, Any] = {}


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
    from ...laws.cards import Seat, Vulnerability, board_dealer, board_vulnerability
    table = calc_dd_table(Deal(deal)).to_list()   # rows S H D C NT, columns N E S W
    denoms = ["S", "H", "D", "C", "NT"]
    tricks = {d: dict(zip("NESW", row, strict=True)) for d, row in zip(denoms, table, strict=True)}
    vul = {Vulnerability.NONE: Vul.none, Vulnerability.NS: Vul.ns, Vulnerability.EW: Vul.ew,
           Vulnerability.ALL: Vul.both}[board_vulnerability(board)]
    dealer = {Seat.N: Player.north, Seat.E: Player.east, Seat.S: Player.south,
              Seat.W: Player.west}[board_dealer(board)]
    p = par(calc_dd_table(Deal(deal)), vul, dealer)
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


def build_app(store: Store, *, lifespan: Any = None) -> Any:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    async def state(request: Request) -> Response:
        return JSONResponse(store.state())

    async def table_view(request: Request) -> Response:
        t = request.path_params["table"]
        boards = {b: v for (x, b), v in store.boards.items() if x == t}
        return JSONResponse({"table": t, "snapshot": store.snapshots.get(t),
                             "boards": [boards[b] for b in sorted(boards)]})

    async def board(request: Request) -> Response:
        try:
            number = int(request.path_params["board"])
        except ValueError:
            return JSONResponse({"error": "not a board"}, status_code=404)
        summary = await asyncio.to_thread(board_summary, store, number)
        return JSONResponse(summary)

    async def events(request: Request) -> Response:
        queue: asyncio.Queue[str] = asyncio.Queue(maxsize=1000)
        store.listeners.add(queue)

        async def stream() -> AsyncIterator[str]:
            try:
                yield "retry: 2000\n\n"
                yield f"data: {json.dumps({'topic': 'hello'})}\n\n"
                while True:
                    try:
                        text = await asyncio.wait_for(queue.get(), 15)
                        yield f"data: {text}\n\n"
                    except TimeoutError:
                        yield ": keep-alive\n\n"
                    if await request.is_disconnected():
                        break
            finally:
                store.listeners.discard(queue)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    return Starlette(routes=[
        Route("/", index), Route("/api/state", state), Route("/api/table/{table}", table_view),
        Route("/api/board/{board}", board), Route("/events", events),
        Mount("/static", StaticFiles(directory=str(STATIC)), name="static"),
    ], lifespan=lifespan)


async def listen(store: Store, broker: Any, stop: asyncio.Event) -> None:
    """Subscribe to ``{public}/#`` (only) and keep ``store`` up to date."""
    import uuid

    import aiomqtt

    cid = f"bridge-table-vugraph-{uuid.uuid4().hex[:12]}"
    while not stop.is_set():
        try:
            async with aiomqtt.Client(
                    broker.host, broker.port, identifier=cid, username=broker.username,
                    password=broker.password, tls_context=broker.tls_context(),
                    keepalive=broker.keepalive) as client:
                await client.subscribe(f"{store.public}/#", qos=1)
                store.connected = True
                store.notify({"topic": "connected"})
                async for message in client.messages:
                    try:
                        payload = json.loads(bytes(message.payload))
                    except (ValueError, TypeError):
                        continue
                    store.take(str(message.topic), payload)
        except aiomqtt.MqttError as exc:
            store.connected = False
            store.notify({"topic": "disconnected"})
            log.warning("broker %s: %s; retrying", broker.url, exc)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)


def main(argv: list[str]) -> int:
    from ...brokersettings import add_broker_arguments, settings_from_args
    from ...daemon import ControllerError

    ap = argparse.ArgumentParser(prog="bridge-table vugraph",
                                 description="the audience's web view of a session "
                                             "(reads public/# only)")
    add_broker_arguments(ap)
    ap.add_argument("--listen", default="127.0.0.1:8080", help="HOST:PORT (default "
                                                                "127.0.0.1:8080)")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    try:
        broker = settings_from_args(args)
        host, _, port_text = args.listen.rpartition(":")
        port = int(port_text)
        if not host or not 0 < port < 65536:
            raise ValueError(f"--listen needs HOST:PORT, not {args.listen!r}")
    except (ControllerError, ValueError) as exc:
        print(f"bridge-table vugraph: {exc}", file=sys.stderr)
        return 2
    import uvicorn

    store = Store(args.public)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        stop = asyncio.Event()
        task = asyncio.create_task(listen(store, broker, stop))
        try:
            yield
        finally:
            stop.set()
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    app = build_app(store, lifespan=lifespan)
    try:
        uvicorn.run(app, host=host.strip("[]"), port=port, log_level="warning")
    except KeyboardInterrupt:
        pass
    return 0
