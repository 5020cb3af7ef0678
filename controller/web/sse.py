"""Server-Sent Events: a snapshot first, then one event per change, keep-alive comments."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from controller.web.auth import Session
from controller.web.limits import CountedStream, client_of
from controller.web.listener import Hub

KEEPALIVE = 15.0


def event(data: Any, name: str | None = None) -> str:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n"


def stream(request: Request, hub: Hub, snapshot: Callable[[], Any],
           session: Session | None = None) -> Response:
    """An SSE response: ``snapshot()`` at once and again whenever the stream fell behind.
    At most ``app.state.streams``' cap per client address (else 429); the stream of a
    ``session`` ends when the session does (a logout)."""
    address, streams = client_of(request.client), request.app.state.streams
    if not streams.take(address):
        return JSONResponse({"error": "too many event streams from this address"},
                            status_code=429)

    async def body() -> AsyncIterator[str]:
        queue = hub.subscribe()
        if hub.closed or (session is not None and session.ended):
            hub.unsubscribe(queue)
            return
        if session is not None:
            session.streams.add(queue)
        try:
            yield event(snapshot(), "snapshot")
            while True:
                try:
                    item = await asyncio.wait_for(queue.get(), KEEPALIVE)
                except TimeoutError:
                    if await request.is_disconnected():
                        return
                    yield ": keep-alive\n\n"
                    continue
                if hub.closed or (session is not None and session.ended):
                    return
                yield event(snapshot(), "snapshot") if item is None else event(item)
        finally:
            hub.unsubscribe(queue)
            if session is not None:
                session.streams.discard(queue)

    return CountedStream(streams, address, body(), media_type="text/event-stream",
                         headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
