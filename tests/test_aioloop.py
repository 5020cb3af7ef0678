"""A write callback on a socket the broker's drop already closed is no traceback
(controller/broker/aioloop.py); every other error in a callback still is."""

from __future__ import annotations

import asyncio
import logging
import os
import socket

import pytest

from controller.broker.aioloop import quiet_closed_sockets


def _run_callback_on_closed_socket(install: bool) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        if install:
            quiet_closed_sockets(loop)
        a, b = socket.socketpair()
        fd = a.fileno()
        a.detach()
        os.close(fd)              # closed under the loop's feet, as a dropped connection is
        b.close()
        loop.call_soon(loop.add_writer, fd, lambda: None)
        await asyncio.sleep(0.05)
    asyncio.run(main())


def test_the_closed_socket_race_is_no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.DEBUG):
        _run_callback_on_closed_socket(install=True)
    assert "Exception in callback" not in caplog.text
    assert "socket already closed" in caplog.text


def test_without_it_asyncio_logs_the_traceback(caplog: pytest.LogCaptureFixture) -> None:
    """What the handler is for: the default handler's report of the same race."""
    _run_callback_on_closed_socket(install=False)
    assert "Exception in callback" in caplog.text and "Bad file descriptor" in caplog.text


def test_other_errors_reach_the_default_handler(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        quiet_closed_sockets(loop)

        def broken() -> None:
            raise ValueError("a real bug")
        loop.call_soon(broken)
        await asyncio.sleep(0.01)
    asyncio.run(main())
    assert "Exception in callback" in caplog.text and "a real bug" in caplog.text
