"""What no request can take down: the client's address, body limits, timeouts, connection caps.

Both web apps (console, vugraph) are served by uvicorn through ``uvicorn_config``:

- **The client is the socket's address.** uvicorn's own trust of ``X-Forwarded-For``
  (``proxy_headers``, from 127.0.0.1 by default) is off: a header anyone can write would
  choose the address the login throttle counts. Behind a reverse proxy the operator names
  it (``--trusted-proxy ADDRESS``); only from such an address is the header read, its
  right-most address that is not itself a trusted proxy taken (``ClientAddress``).
- **Bodies are bounded per route** (``BodyLimit``): a login is a few hundred bytes, a
  ruling a few KiB. A declared ``Content-Length`` over the route's limit is answered 413
  before a byte of the body is read; a chunked body is read only up to the limit.
- **Timeouts**: a connection must send its request line and headers within
  ``header_seconds`` of opening (or of its last answer), and an idle keep-alive
  connection is closed after ``idle_seconds`` (``BoundedH11Protocol``).
- **Connections are capped** (``connections`` at once; a connection over the cap is
  closed as it is accepted), the cap fitted under the process's open-file limit
  (``fit_file_limit``; the systemd units set ``LimitNOFILE=16384``), so that idle sockets
  can never leave the server without a file to accept with.
- **Event streams per client** are capped (``StreamCounter``): over the cap, 429.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import resource
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from starlette.responses import StreamingResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["LIMITS", "BodyLimit", "ClientAddress", "CountedStream", "Limits", "StreamCounter",
           "fit_file_limit",
           "parse_trusted", "uvicorn_config"]

log = logging.getLogger("bridge_table.web")

#: the body limit of a route not named (a ruling, a score, a record: JSON of a few KiB)
DEFAULT_BODY: Final = 64 * 1024
#: files the process keeps for itself besides its connections (the database, the broker,
#: the log, the listening socket, Python's own)
RESERVED_FILES: Final = 128


@dataclass(frozen=True)
class Limits:
    """The bounds of one web app's server."""

    #: seconds for a connection's request line and headers
    header_seconds: float = 10.0
    #: seconds an idle keep-alive connection stays open
    idle_seconds: float = 5.0
    #: connections at once (fitted under the file limit: the units' LimitNOFILE=16384)
    connections: int = 8192
    #: event streams at once from one client address
    streams_per_client: int = 8


#: the bounds both apps are served with
LIMITS: Final = Limits()


def parse_trusted(values: Iterable[str]) -> frozenset[str]:
    """``--trusted-proxy`` values (addresses, comma-separated or repeated), normalised;
    ValueError names one that is not an IP address."""
    out = set()
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part:
                continue
            try:
                out.add(str(ipaddress.ip_address(part)))
            except ValueError:
                raise ValueError(f"--trusted-proxy {part!r} is not an IP address") from None
    return frozenset(out)


def _forwarded_client(header: str, trusted: frozenset[str]) -> str | None:
    """The right-most address of ``X-Forwarded-For`` that is not a trusted proxy: what the
    nearest trusted proxy saw (the addresses left of it are anyone's to write)."""
    for part in reversed(header.split(",")):
        part = part.strip()
        try:
            address = str(ipaddress.ip_address(part))
        except ValueError:
            return None
        if address not in trusted:
            return address
    return None


class ClientAddress:
    """``scope["client"]`` is the socket's peer, unless that peer is a trusted proxy: then
    the address it forwarded (``X-Forwarded-For``)."""

    def __init__(self, app: ASGIApp, trusted: frozenset[str] = frozenset()) -> None:
        self.app, self.trusted = app, trusted

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        client = scope.get("client")
        if self.trusted and scope["type"] in ("http", "websocket") and client and \
                client[0] in self.trusted:
            header = b",".join(v for k, v in scope.get("headers", [])
                               if k == b"x-forwarded-for").decode("latin-1")
            forwarded = _forwarded_client(header, self.trusted) if header else None
            if forwarded is not None:
                scope = {**scope, "client": (forwarded, 0)}
        await self.app(scope, receive, send)


class BodyLimit:
    """Request bodies bounded per path: 413 for a larger one, before reading it."""

    def __init__(self, app: ASGIApp, limits: Mapping[str, int] | None = None,
                 default: int = DEFAULT_BODY) -> None:
        self.app, self.limits, self.default = app, dict(limits or {}), default

    def limit(self, path: str) -> int:
        return self.limits.get(path, self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        limit = self.limit(scope["path"])
        headers = dict(scope.get("headers", []))
        length = headers.get(b"content-length")
        if length is not None:
            if not length.isdigit() or int(length) > limit:
                await _too_large(send, limit)
                return
            await self.app(scope, receive, send)
            return
        # no length given (chunked): read up to the limit, then hand the body on
        body, more = bytearray(), True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > limit:
                await _too_large(send, limit)
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _too_large(send: Send, limit: int) -> None:
    text = f"request body over {limit} bytes\n".encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(text)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": text})


class StreamCounter:
    """Event streams open per client address, at most ``per_client`` each."""

    def __init__(self, per_client: int) -> None:
        self.per_client = per_client
        self.open: dict[str, int] = {}
        self._warned: set[str] = set()   # told once until its streams are all closed

    def take(self, address: str) -> bool:
        """One more stream for ``address``, if under the cap (then ``give_back`` it)."""
        if self.open.get(address, 0) >= self.per_client:
            if address not in self._warned:
                self._warned.add(address)
                log.warning("event streams refused to %s: %d open from it (behind a reverse "
                            "proxy? name it with --trusted-proxy, or every viewer is the "
                            "proxy)", address, self.per_client)
            return False
        self.open[address] = self.open.get(address, 0) + 1
        return True

    def give_back(self, address: str) -> None:
        left = self.open.get(address, 0) - 1
        if left > 0:
            self.open[address] = left
        else:
            self.open.pop(address, None)
            self._warned.discard(address)


class CountedStream(StreamingResponse):
    """An event stream that gives its place back to the ``StreamCounter`` when it ends,
    however it ends (its body generator may never start when the client left first)."""

    def __init__(self, counter: StreamCounter, address: str, *args: Any, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.counter, self.address = counter, address

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.counter.give_back(self.address)


def fit_file_limit(connections: int) -> int:
    """The connections that fit under the process's open-file limit (``connections`` at
    most, the process's own files kept aside). The limit is not raised here: the units'
    ``SystemCallFilter`` forbids ``setrlimit`` (``@resources``), their ``LimitNOFILE``
    sets it; a shell's 1,024 gives some 900 connections."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return connections
    fitted = max(16, min(connections, soft - RESERVED_FILES))
    if fitted < connections:
        log.info("%d connections at most (the open-file limit is %d; the systemd units' "
                 "LimitNOFILE raises it)", fitted, soft)
    return fitted


def bounded_protocol(limits: Limits, connections: int) -> type[Any]:
    """uvicorn's h11 protocol with a header timeout and a cap on connections."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class BoundedH11Protocol(H11Protocol):
        """A connection that sends no complete request in time is closed; one over the
        cap is closed as it is accepted."""

        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > connections:
                log.warning("connection refused: %d open", connections)
                transport.abort()
                return
            self._arm()

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(limits.header_seconds, self._late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _late(self) -> None:
            self._header_timer = None
            if (self.cycle is None or self.cycle.response_complete) and \
                    not self.transport.is_closing():
                self.transport.abort()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

    return BoundedH11Protocol


def uvicorn_config(app: Any, host: str, port: int, *, limits: Limits | None = None,
                   **kw: Any) -> Any:
    """The ``uvicorn.Config`` both web apps are served with: no ``X-Forwarded-For`` trust
    (``ClientAddress`` does it for the proxies named), the timeouts and the caps."""
    import uvicorn

    limits = limits or LIMITS
    connections = fit_file_limit(limits.connections)
    return uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on",
                          timeout_graceful_shutdown=2, proxy_headers=False,
                          forwarded_allow_ips="", server_header=False,
                          timeout_keep_alive=int(limits.idle_seconds),
                          h11_max_incomplete_event_size=16 * 1024,
                          http=bounded_protocol(limits, connections), **kw)


def client_of(scope_client: Sequence[Any] | None) -> str:
    """The client's address of a request (``request.client``), ``?`` when unknown."""
    return str(scope_client[0]) if scope_client else "?"
