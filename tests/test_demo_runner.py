"""The demo's wait for its result (controller/demo/runner.py): however slow the controller,
the demo waits for the result after the last event is played, and when it gives up it says
what it waited for and how long (issue 44: on an emulated arm64 CPU the installed demo
stopped waiting when its player finished, before the controller's result came)."""

from __future__ import annotations

import asyncio
import io
import threading
from typing import Any

import pytest

from controller.demo import runner
from controller.demo.plan import DemoError
from controller.service.daemon import ControllerDaemon

RESULT_DELAY = 3.0  # seconds the slowed controller holds its result back


@pytest.mark.timeout(200)
def test_a_slow_controller_is_waited_for_after_the_last_event(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The events published directly (the player ends as soon as the last one is out) and
    the controller's result held back: the demo still prints the result."""
    send = ControllerDaemon._send

    def slow_send(self: ControllerDaemon, conn: Any, n: int, out: Any,
                  data: bytes | None = None) -> None:
        if out.topic.endswith("/result"):
            # paho's publish may be called from any thread (the daemon's may not be the
            # event loop's)
            threading.Timer(RESULT_DELAY, send, (self, conn, n, out, data)).start()
            return
        send(self, conn, n, out, data)

    monkeypatch.setattr(ControllerDaemon, "_send", slow_send)
    out = io.StringIO()
    code = asyncio.run(runner.run_demo(speed=50, out=out, live=False, direct=True,
                                       timeout=60))
    assert code == 0
    text = out.getvalue()
    assert "--direct" in text  # the direct play is said, never silent
    assert "[result] Board 10: 4H by S, 11 tricks (as played 9), Score NS +650" in text
    # the players turn cards on their spots: a turn is the same tag back, never a card
    # taken back (Law 47), on the direct path as through the simulated table
    assert "CARD_WITHDRAWN" not in text


async def test_giving_up_says_what_was_waited_for_and_how_long() -> None:
    """Nothing on the table's topics for ``quiet`` seconds after the player finished: a
    DemoError naming the result topic, the time waited and the events reported."""
    done = asyncio.Event()
    progress = runner.Progress()
    player: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    player.set_result(None)
    with pytest.raises(DemoError) as raised:
        await runner.wait_for_result(done, player, progress, quiet=0.3, planned=60,
                                     reported=lambda: 57, what="bridge/1/result")
    message = str(raised.value)
    assert "bridge/1/result" in message and "waited" in message
    assert "the last 0.3 s with no message" in message  # the quiet time, as given
    assert "57 of the 60 events" in message


async def test_messages_keep_the_wait_going_and_the_result_ends_it() -> None:
    """Each message on the table's topics restarts the quiet time: a result that comes
    after longer than ``quiet`` in all, with messages between, is waited for."""
    done = asyncio.Event()
    progress = runner.Progress()
    player: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    player.set_result(None)

    async def controller() -> None:
        for _ in range(4):
            await asyncio.sleep(0.15)
            progress.saw("state")
        done.set()

    working = asyncio.create_task(controller())
    await runner.wait_for_result(done, player, progress, quiet=0.3, planned=1,
                                 reported=lambda: 1, what="bridge/1/result")
    await working
    assert done.is_set()


async def test_a_failed_player_ends_the_wait_with_its_reason() -> None:
    player: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    player.set_exception(RuntimeError("the readers are gone"))
    with pytest.raises(DemoError, match="the simulated table stopped: the readers are gone"):
        await runner.wait_for_result(asyncio.Event(), player, runner.Progress(), quiet=5,
                                     planned=1, reported=lambda: 0, what="bridge/1/result")
