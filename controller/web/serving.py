"""What both web apps (console, vugraph) do before serving: read ``--listen`` and make sure
the address can be had, so that a wrong value or a port in use is one clear line and exit
status 2 (controller/commandline.py), never uvicorn's traceback after the URL was logged."""

from __future__ import annotations

import argparse
import errno
import socket

__all__ = ["ListenError", "add_trusted_proxy", "check_bindable", "parse_listen"]


class ListenError(ValueError):
    """``--listen`` names no address this machine can serve on."""


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:8080`` for IPv6) as (host, port)."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not host:
        raise ListenError(f"--listen must be HOST:PORT (for example 127.0.0.1:8080), "
                          f"not {text!r}")
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ListenError(f"--listen {text!r}: the port must be a number from 1 to 65535")
    return host.strip("[]"), int(port_text)


def check_bindable(host: str, port: int) -> None:
    """Raise :class:`ListenError` when ``host:port`` cannot be listened on now (in use by
    another program, an address this machine does not have, a name that does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except socket.gaierror as e:
        raise ListenError(f"--listen {host}:{port}: {host!r} is not an address of this "
                          f"machine ({e.strerror})") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        # as uvicorn binds: SO_REUSEADDR, so a port in TIME_WAIT is not taken for in use
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as e:
            why = "in use by another program" if e.errno == errno.EADDRINUSE else \
                (e.strerror or str(e))
            raise ListenError(f"--listen {host}:{port}: {why}; stop that program or give "
                              f"another --listen") from None


def add_trusted_proxy(ap: argparse.ArgumentParser) -> None:
    """``--trusted-proxy ADDRESS``: the reverse proxy whose ``X-Forwarded-For`` names the
    client (controller/web/limits.py); without it the client is the socket's address."""
    ap.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS",
                    help="a reverse proxy's IP address whose X-Forwarded-For names the "
                         "client (repeat, or comma-separate, for several; default none: "
                         "the client is the connection's address)")
