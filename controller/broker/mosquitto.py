"""A private mosquitto on a free loopback port: for the demo, the tests and the benchmarks.

Usage::

    with Mosquitto(workdir) as broker:
        broker.url        # "mqtt://127.0.0.1:PORT"
        broker.restart()  # stop and start on the same port, keeping its persistence
        broker.stop(); broker.start()
        broker.kill()     # SIGKILL: a crash (persistence keeps what was last autosaved)

It is a real mosquitto process (``/usr/sbin/mosquitto``), listening on loopback only,
with its configuration, persistence file and log in ``workdir``.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

__all__ = ["Mosquitto", "MosquittoError", "QUEUE_SETTINGS", "free_port", "mosquitto_binary",
           "end_with_parent"]

#: Queue and persistence settings for a session's broker (the shipped configuration uses the
#: same). mosquitto's default ``max_queued_messages`` is 1000: a controller down for 15 s at
#: a busy session lost 1,301 events to it. Bridges keep every event until the controller
#: acknowledges it (contract 1.2), so a queue that overflows costs a resend, not an event;
#: sized here so that it does not overflow in the first place (a day of a large session is
#: ~250,000 events, each ~250 bytes). ``max_inflight_messages`` sizes the controller's
#: batch (one journal commit per batch). Persistence saves every second, so a crash loses at
#: most that little, which the bridges resend.
QUEUE_SETTINGS: tuple[str, ...] = (
    "max_queued_messages 1000000",
    "max_queued_bytes 0",
    "max_inflight_messages 100",
    "autosave_interval 1",
    "autosave_on_changes false",
    "persistent_client_expiration 2d",
)


#: prctl's PR_SET_PDEATHSIG (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def end_with_parent() -> None:
    """For ``preexec_fn``, in the child before it runs: SIGTERM when the thread that started
    it ends, its process even by SIGKILL (Linux's parent-death signal; elsewhere nothing).
    Only for a child started from a thread that lives as long as its program (the main
    one): the signal follows the starting thread, not the process."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass


class MosquittoError(RuntimeError):
    """mosquitto is missing, or did not start."""


def free_port() -> int:
    """A TCP port free on loopback right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def mosquitto_binary() -> str:
    for candidate in (shutil.which("mosquitto"), "/usr/sbin/mosquitto"):
        if candidate and Path(candidate).exists():
            return candidate
    raise MosquittoError("mosquitto is not installed: run `make demo` or `make test` (they "
                         "install it) or `apt-get install mosquitto`")


class Mosquitto:
    def __init__(self, workdir: Path, port: int | None = None, persistence: bool = True,
                 extra: tuple[str, ...] = (), config: Path | None = None,
                 end_with_parent: bool = False) -> None:
        #: configuration lines added at the end (they win over the ones above)
        self.extra = extra
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.port = port or free_port()
        self.host = "127.0.0.1"
        self.persistence = persistence
        self.proc: subprocess.Popen[bytes] | None = None
        self.conf = self.workdir / "mosquitto.conf"
        self.log = self.workdir / "mosquitto.log"
        #: a configuration of its own (``bridge-table broker-config``'s) instead of the open
        #: loopback one; ``port`` must then be one of its listeners
        self.config = config
        #: the broker stops (SIGTERM) when the thread that started it ends, even when its
        #: program is SIGKILLed (:func:`end_with_parent`): a program that owns the broker for
        #: its lifetime, started from its main thread, leaves none running behind it
        self.end_with_parent = end_with_parent

    @property
    def url(self) -> str:
        return f"mqtt://{self.host}:{self.port}"

    def _write_conf(self) -> None:
        if self.config is not None:
            text = Path(self.config).read_text()
            if hasattr(os, "geteuid") and os.geteuid() == 0 and "\nuser " not in f"\n{text}":
                text += "\nuser root\n"  # see below
            self.conf.write_text(text)
            return
        lines = [
            f"listener {self.port} {self.host}",
            "allow_anonymous true",
            f"persistence {'true' if self.persistence else 'false'}",
            f"persistence_location {self.workdir}/",
            # a controller that is down for a while must find every event queued for it
            *QUEUE_SETTINGS,
            "message_size_limit 0",
            # send each small message at once (Nagle + delayed ACK cost ~40 ms a message)
            "set_tcp_nodelay true",
            "log_dest stderr",
        ]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            # started as root, mosquitto drops to user "mosquitto", which cannot write the
            # persistence file in our work directory: the persistence would silently not work
            lines.append("user root")
        lines += self.extra
        self.conf.write_text("\n".join(lines) + "\n")

    def start(self, timeout: float = 10.0) -> None:
        self._write_conf()
        logf = open(self.log, "ab")  # noqa: SIM115 - owned by the process' lifetime
        try:
            # a session of its own: a terminal's Ctrl-C reaches the program that started it,
            # which stops it last, not the broker first (the demo's clients would each say
            # the broker went away)
            self.proc = subprocess.Popen(  # noqa: PLW1509 - a prctl call only
                [mosquitto_binary(), "-c", str(self.conf)], stdout=logf, stderr=logf,
                stdin=subprocess.DEVNULL, start_new_session=True,
                preexec_fn=end_with_parent if self.end_with_parent else None)
        finally:
            logf.close()  # the child has its own copy of the descriptor
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise MosquittoError(f"mosquitto exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise MosquittoError("mosquitto did not start listening in time")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL, as a crash: nothing is saved beyond the last autosave."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self) -> Mosquitto:
        self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()
