"""The common app factory: the shared static assets, security headers, no external asset."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from controller.web.limits import LIMITS, BodyLimit, ClientAddress, Limits, StreamCounter

STATIC = Path(__file__).parent / "static"

#: every asset comes from the app itself (the room may have no internet)
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")


_HEADERS = [(b"content-security-policy", CSP.encode()),
            (b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
#: served over HTTPS itself (``--tls-cert``): browsers keep to HTTPS for a year
HSTS = (b"strict-transport-security", b"max-age=31536000")


class _Headers:
    """Security headers on every response (a plain ASGI middleware: SSE streams pass)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        extra = [*_HEADERS, HSTS] if scope.get("scheme") == "https" else _HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def create_app(routes: Sequence[BaseRoute], *,
               lifespan: Callable[[Starlette], AbstractAsyncContextManager[Any]] | None = None,
               state: dict[str, Any] | None = None,
               body_limits: Mapping[str, int] | None = None,
               trusted_proxies: frozenset[str] = frozenset(),
               limits: Limits = LIMITS) -> Starlette:
    """A starlette app with ``/static/common`` (common.css) mounted beside ``routes``: the
    security headers on every answer, the client's address as ``trusted_proxies`` allow,
    request bodies bounded per path (``body_limits``, else 64 KiB), event streams counted
    per client (``app.state.streams``; controller/web/limits.py)."""
    app = Starlette(routes=[*routes, Mount("/static/common", StaticFiles(directory=STATIC),
                                           name="common")],
                    middleware=[Middleware(ClientAddress, trusted=trusted_proxies),
                                Middleware(_Headers),
                                Middleware(BodyLimit, limits=body_limits)],
                    lifespan=lifespan)
    app.state.streams = StreamCounter(limits.streams_per_client)
    for key, value in (state or {}).items():
        setattr(app.state, key, value)
    return app
