"""``bridge-table controller`` that SIGKILLs itself in the middle of a group commit.

Used by ``tests/test_daemon_hotpath.py``: the first journal transaction holding at least
``KILL_AT_BATCH`` (default 2) incoming messages is killed after its rows are inserted and
before its COMMIT, the way a power cut or the OOM killer would end it. Everything else is the
real daemon (``controller.service.cli_controller.main``) on a real broker.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from types import TracebackType

from controller.service import journal
from controller.service.cli_controller import main

SMALLEST = int(os.environ.get("KILL_AT_BATCH", "2"))
armed = False

_append = journal.Journal.append_incoming
_exit = journal.Journal._Txn.__exit__  # noqa: SLF001


def append_incoming(self: journal.Journal, messages: Sequence[tuple[str, bytes]],
                    received: float | None = None, *, durable: bool = True) -> list[int]:
    global armed
    armed = len(messages) >= SMALLEST
    return _append(self, messages, received, durable=durable)


def txn_exit(self: journal.Journal._Txn, et: type[BaseException] | None,
             e: BaseException | None, tb: TracebackType | None) -> None:
    if armed and et is None:
        os.kill(os.getpid(), signal.SIGKILL)  # rows inserted, COMMIT not reached
    _exit(self, et, e, tb)


journal.Journal.append_incoming = append_incoming  # type: ignore[method-assign]
journal.Journal._Txn.__exit__ = txn_exit  # type: ignore[method-assign] # noqa: SLF001

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
