"""The night's programs, each its own process as docs/install.md runs them
(``python -m controller.cli COMMAND ...``): started, stopped, killed and started again.

Each runs in a session of its own, so that a terminal's Ctrl-C reaches ``club-night`` only,
which then stops them in order; each one's output goes to its log file.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from controller.broker.mosquitto import end_with_parent

__all__ = ["Child", "child_env"]


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a child: this one's, without the broker settings a user's shell may
    hold (each child is given its own login on its command line), unbuffered output."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRIDGE_TABLE_MQTT_")
           and k not in ("BRIDGE_TABLE_BROKER", "BRIDGE_TABLE_IDENTITIES")}
    env["PYTHONUNBUFFERED"] = "1"
    env.update(extra or {})
    return env


class Child:
    """One ``bridge-table`` command run as a process."""

    def __init__(self, name: str, args: Sequence[str], log: Path,
                 env: Mapping[str, str] | None = None, cwd: Path | None = None) -> None:
        self.name = name
        self.argv = [sys.executable, "-m", "controller.cli", *args]
        self.log = log
        self.env = child_env(env)
        self.cwd = cwd
        self.proc: subprocess.Popen[bytes] | None = None
        #: times it was killed and started again
        self.restarts = 0

    def start(self) -> None:
        self.log.parent.mkdir(parents=True, exist_ok=True)
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT,
                                         stdin=subprocess.DEVNULL, env=self.env, cwd=self.cwd,
                                         start_new_session=True,
                                         preexec_fn=end_with_parent)  # noqa: PLW1509

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def kill(self) -> None:
        """SIGKILL, as a crash or a pulled plug: nothing of it runs on."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int | None:
        """``sig`` (as ``systemctl stop`` sends), then SIGKILL if it has not ended in
        ``timeout`` seconds; its exit status."""
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        return self.proc.returncode

    def tail(self, lines: int = 8) -> str:
        """The last lines of its log (why it stopped)."""
        try:
            text = self.log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.rstrip().splitlines()[-lines:])
