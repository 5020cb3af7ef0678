"""Where ``bridge-table sim run`` / ``sim play`` publish their readers for a bridge in another
process: a well-known directory per table.

    <sim dir>/<table id>/<reader>      a symlink to the reader's pseudo-terminal
    <sim dir>/<table id>/sim.json      {"pid": ..., "readers": {name: {"pty", "link", "kind"}}}

``<sim dir>`` is ``$BRIDGE_TABLE_SIM_DIR``, else ``$XDG_RUNTIME_DIR/bridge-table-sim``, else
``<temp dir>/bridge-table-sim-<uid>``. The state file is written once every reader runs and
removed when the simulator stops; a bridge whose config names ``sim://TABLE/READER`` and
that has no simulated table of its own opens the reader's symlink (the ``sim`` reader
backend, ``firmware_bridge/sim/reader.py``) when the file names a live process.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

__all__ = ["sim_dir", "table_dir", "write_state", "remove_state", "running_readers",
           "STATE_FILE"]

STATE_FILE = "sim.json"


def sim_dir() -> Path:
    env = os.environ.get("BRIDGE_TABLE_SIM_DIR")
    if env:
        return Path(env)
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "bridge-table-sim"
    return Path(tempfile.gettempdir()) / f"bridge-table-sim-{os.getuid()}"


def table_dir(table_id: str) -> Path:
    """The directory of one simulated table's readers (the table id is made path-safe)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in table_id).lstrip(".")
    return sim_dir() / (safe or "_")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _read_state(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("pid"), int) \
            or not isinstance(data.get("readers"), dict):
        return None
    return data


def running_pid(table_id: str) -> int | None:
    """The pid of the live simulator serving ``table_id`` (None: none runs)."""
    state = _read_state(table_dir(table_id) / STATE_FILE)
    if state is None or not _alive(state["pid"]):
        return None
    return int(state["pid"])


def running_readers(table_id: str) -> dict[str, Path]:
    """reader -> symlink of the live simulator serving ``table_id`` ({} if none runs)."""
    state = _read_state(table_dir(table_id) / STATE_FILE)
    if state is None or not _alive(state["pid"]):
        return {}
    out: dict[str, Path] = {}
    for name, entry in state["readers"].items():
        if isinstance(entry, dict) and isinstance(entry.get("link"), str):
            out[str(name)] = Path(entry["link"])
    return out


def write_state(table_id: str, readers: dict[str, dict[str, str]]) -> Path:
    """Announce this process's readers of ``table_id`` (atomically: a bridge never reads half
    a file)."""
    path = table_dir(table_id) / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{STATE_FILE}.{os.getpid()}")
    tmp.write_text(json.dumps({"pid": os.getpid(), "table": table_id, "readers": readers},
                              indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def remove_state(table_id: str) -> None:
    """Withdraw the announcement, if it is this process's."""
    path = table_dir(table_id) / STATE_FILE
    state = _read_state(path)
    if state is not None and state["pid"] == os.getpid():
        with contextlib.suppress(OSError):
            path.unlink()
