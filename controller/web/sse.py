"""Server-Sent Events: a snapshot first, then one event per change, keep-alive comments."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import StreamingResponse

from controller.web.listener import Hub

KEEPALIVE = 15.0


def event(data: Any, name: str | None = None) -> str:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, separators=(',', ':'), ensure_ascii=False)}\n\n"


def stream(request: Request, hub: Hub, snapshot: Callable[[], Any]) -> StreamingResponse:
    """An SSE response: ``snapshot()`` at once and again whenever the stream fell behind."""

    async def body() -> AsyncIterator[str]:
        queue = hub.subscribe()
        if hub.closed:
            return
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
                if hub.closed:
                    return
                yield event(snapshot(), "snapshot") if item is None else event(item)
        finally:
            hub.unsubscribe(queue)

    return StreamingResponse(body(), media_type="text/event-stream",
                             headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})
