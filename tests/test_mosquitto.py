"""The private mosquitto launcher (controller.broker.mosquitto, re-exported by tests/broker.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiomqtt
import pytest
from broker import Mosquitto, free_port

pytestmark = pytest.mark.timeout(60)


async def test_a_persistent_session_survives_a_broker_restart(tmp_path: Path) -> None:
    with Mosquitto(tmp_path / "broker") as broker:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="keeper",
                                  clean_session=False) as c:
            await c.subscribe("t/#", qos=1)
        broker.restart()
        async with aiomqtt.Client("127.0.0.1", broker.port) as p:
            for i in range(3):
                await p.publish("t/x", str(i), qos=1)
        broker.restart()  # the queued messages too are kept
        got: list[bytes] = []
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="keeper",
                                  clean_session=False) as c:
            async with asyncio.timeout(5):
                async for m in c.messages:
                    got.append(bytes(m.payload))  # type: ignore[arg-type]
                    if len(got) == 3:
                        break
        assert got == [b"0", b"1", b"2"]
        assert "Error saving" not in broker.log.read_text()


def test_restart_keeps_the_port_and_stop_is_idempotent(tmp_path: Path) -> None:
    port = free_port()
    broker = Mosquitto(tmp_path / "b", port=port, persistence=False)
    with broker:
        assert broker.url == f"mqtt://127.0.0.1:{port}" and broker.running
        broker.restart()
        assert broker.port == port and broker.running
    assert not broker.running
    broker.stop()


_OWNER = """
import sys, time
from pathlib import Path
from controller.broker.mosquitto import Mosquitto
broker = Mosquitto(Path(sys.argv[1]), persistence=False, end_with_parent=True)
broker.start()
assert broker.proc is not None
print(broker.proc.pid, flush=True)
time.sleep(600)
"""


def _running(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, ended but not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_a_broker_that_ends_with_its_parent_ends_when_it_is_sigkilled(tmp_path: Path) -> None:
    """``end_with_parent``: a program SIGKILLed (no clean-up of its own) leaves no broker
    running behind it (``bridge-table club-night``'s)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    owner = subprocess.Popen([sys.executable, "-c", _OWNER, str(tmp_path / "b")],
                             stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    pid = int(owner.stdout.readline())
    try:
        assert _running(pid)
        owner.send_signal(signal.SIGKILL)
        owner.wait(30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.1)
        assert not _running(pid)
    finally:
        if _running(pid):
            os.kill(pid, signal.SIGKILL)
