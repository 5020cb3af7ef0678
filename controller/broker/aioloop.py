"""An asyncio loop that does not print a traceback for a broker that went away.

When the broker's connection drops while paho (under aiomqtt) still has bytes to send, its
write callback asks the loop to watch a socket that is already closed, and asyncio's
default handler logs "Exception in callback ... add_writer ... [Errno 9] Bad file
descriptor" with a traceback. The client has already seen the drop and reconnects (said at
WARNING by its own code): the traceback reports nothing a director or an operator must act
on, and the commands promise no traceback. Every other exception reaches asyncio's default
handler as before.
"""

from __future__ import annotations

import asyncio
import errno
import logging
from typing import Any

__all__ = ["quiet_closed_sockets"]

log = logging.getLogger("bridge_table.broker")


def _is_closed_socket_race(context: dict[str, Any]) -> bool:
    error = context.get("exception")
    handle = repr(context.get("handle", ""))
    return isinstance(error, OSError) and error.errno == errno.EBADF and (
        "add_writer" in handle or "add_reader" in handle)


def quiet_closed_sockets(loop: asyncio.AbstractEventLoop) -> None:
    """Install on ``loop`` a handler that logs the closed-socket race at DEBUG and hands
    everything else to the loop's default handler (the running one's, when there is one)."""
    previous = loop.get_exception_handler()

    def handler(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if _is_closed_socket_race(context):
            log.debug("a write callback on a socket already closed (the broker went away)")
            return
        if previous is not None:
            previous(loop, context)
        else:
            loop.default_exception_handler(context)

    loop.set_exception_handler(handler)
