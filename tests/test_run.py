"""``bridge-table run``: bridge and controller of one table in one process, over a real
mosquitto, reading a virtual reader firmware on a pty through the real serial path."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest
from broker import Mosquitto
from mqttwatch import REPO, Recorder, Watch, stop_process, wait_until

from firmware_bridge.sim.firmware import VirtualFirmware

pytestmark = pytest.mark.timeout(120)


def table_config(tmp_path: Path, link: Path, table: str = "7") -> Path:
    cfg = tmp_path / f"table-{table}.toml"
    cfg.write_text(f"""
[table]
id = "{table}"
src = "pi-{table}"
language = "en"

[broker]
url = "mqtt://127.0.0.1:1"

[registry]
files = []

[spool]
path = "var/spool-{table}.sqlite"

[[readers]]
name = "board"
url = "serial://{link}"
kind = "tap"
antennas = {{ "0" = {{ zone = "board" }} }}

[gpio]
factory = "mock"

[display]
type = "none"
""")
    return cfg


async def test_run_serves_its_table_and_stops_cleanly(mosquitto: Mosquitto,
                                                      tmp_path: Path) -> None:
    link = tmp_path / "board-reader"
    async with VirtualFirmware("board", 1, link=link) as firmware:
        cfg = table_config(tmp_path, link)
        async with Watch(mosquitto.url) as w:
            proc = await asyncio.create_subprocess_exec(
                str(REPO / ".venv/bin/python"), "-m", "controller.cli", "run", "--config",
                str(cfg), "--broker", mosquitto.url, cwd=REPO,
                stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
            try:
                await w.wait(lambda m: m.topic == "bridge/controller/7/status"
                             and m.payload.get("status") == "online")
                await w.wait(lambda m: m.topic == "bridge/7/bridge"
                             and isinstance(m.payload, dict)
                             and m.payload.get("status") == "online")
                await asyncio.wait_for(firmware.host_seen.wait(), 30)
                firmware.place(0, "04A1B2C3D4")  # a tag in no registry
                event = await w.wait(lambda m: m.topic == "bridge/7/event")
                assert event.payload["src"] == "pi-7" and event.payload["unknown"] is True
                state = await w.wait(lambda m: m.topic == "bridge/7/state")
                assert state.payload["last"] == {"src": "pi-7", "seq": event.payload["seq"]}
                # the indicator the controller wrote goes back to the bridge (retained)
                await w.wait(lambda m: m.topic == "bridge/7/indicator")
            finally:
                if proc.returncode is None:
                    proc.send_signal(signal.SIGTERM)
                stderr = await asyncio.wait_for(proc.stderr.read(), 30)  # type: ignore[union-attr]
                rc = await asyncio.wait_for(proc.wait(), 30)
            assert rc == 0, stderr.decode()[-3000:]
            await w.wait(lambda m: m.topic == "bridge/controller/7/status"
                         and m.payload.get("status") == "offline")
    # a table's controller never answers another table's events
    assert not [m for m in w.seen if m.topic.startswith("bridge/") and m.table not in
                ("7", "controller")]
    assert (tmp_path / "var" / "controller-journal-7.sqlite").exists()


def test_bad_config_is_exit_code_2(tmp_path: Path) -> None:
    from controller.service.cli_run import main
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\n")
    assert main(["--config", str(bad)]) == 2


def test_stop_signal_ends_both_parts(tmp_path: Path) -> None:
    import subprocess
    import sys
    link = tmp_path / "nothing-here"
    cfg = table_config(tmp_path, link)
    with Mosquitto(tmp_path / "broker") as broker:
        proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                                 str(cfg), "--broker", broker.url], cwd=REPO,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        status = Recorder(broker.url, "bridge/controller/7/status")
        try:
            # up (its controller online) and waiting for a reader that is not plugged in
            wait_until(lambda: any(isinstance(p, dict) and p.get("status") == "online"
                                   for _, p in status.of("status")) or proc.poll() is not None,
                       60, "the table's controller online")
            assert proc.poll() is None
        finally:
            status.close()
            assert stop_process(proc, signal.SIGINT) == 0
