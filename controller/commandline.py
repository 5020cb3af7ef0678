"""What every ``bridge-table`` command shares: exit codes, ``--log-level``, one log format.

Exit codes, one meaning each (systemd's units act on them: ``RestartPreventExitStatus=2``):

- ``0`` (:data:`EXIT_OK`): done;
- ``1`` (:data:`EXIT_FAILURE`): a failure while running (a device, the broker gone for good),
  which a restart may cure;
- ``2`` (:data:`EXIT_USAGE`): the command line, a configuration or an input file is wrong,
  which only an edit cures;
- ``130`` (:data:`EXIT_INTERRUPTED`): a command stopped by Ctrl-C before it finished its
  work, as shells count it. A long-running service (controller, bridge, console, vugraph,
  relay) asked to stop by Ctrl-C or SIGTERM stops cleanly and exits 0: that is its end.

Every long-running command takes ``--log-level`` with the same choices
(:data:`LOG_LEVELS`, any case, default ``$BRIDGE_TABLE_LOG_LEVEL`` or the command's own) and
logs in one format to standard error (:data:`LOG_FORMAT`); a broker it cannot reach is
said once and then at growing intervals (:class:`OutageLog`), not at every retry.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

__all__ = ["ControllerError", "EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE",
           "LOG_FORMAT", "LOG_LEVELS", "OutageLog", "add_file_option", "add_log_level",
           "bounded", "file_option", "number_ranges", "plain_help", "setup_logging"]

N = TypeVar("N", int, float)

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVEL_VARIABLE = "BRIDGE_TABLE_LOG_LEVEL"


def bounded(convert: Callable[[str], N], ok: Callable[[N], bool],
            want: str) -> Callable[[str], N]:
    """An argparse type: ``convert`` the text, and refuse a value that is not ``ok``, saying
    what it ``want``s (``bounded(int, lambda v: v >= 1, "a whole number of at least 1")``)."""
    def parse(text: str) -> N:
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {want}: {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {want}, not {text}")
        return value
    return parse


def _level(text: str) -> str:
    level = text.strip().upper()
    if level not in LOG_LEVELS:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a log level: choose from {', '.join(LOG_LEVELS)}")
    return level


def add_log_level(ap: argparse.ArgumentParser, default: str = "INFO") -> None:
    """``--log-level``, the same in every command."""
    ap.add_argument("--log-level", type=_level, default=None, metavar="LEVEL",
                    help=f"what to log: {', '.join(LOG_LEVELS)} (any case; default "
                         f"${LEVEL_VARIABLE} or {default})")
    ap.set_defaults(_log_level_default=default)


def chosen_level(args: argparse.Namespace) -> str:
    """The level asked for: the option, else the environment, else the command's default;
    a level in the environment that is not one is said once and the default taken."""
    if args.log_level is not None:
        return str(args.log_level)
    default = str(getattr(args, "_log_level_default", "INFO"))
    from_env = os.environ.get(LEVEL_VARIABLE, "").strip()
    if not from_env:
        return default
    try:
        return _level(from_env)
    except argparse.ArgumentTypeError as e:
        print(f"bridge-table: ${LEVEL_VARIABLE}: {e}; logging at {default}", file=sys.stderr)
        return default


def setup_logging(args: argparse.Namespace) -> str:
    """Logging to standard error in the one format, at the level chosen; returns it."""
    level = chosen_level(args)
    # a handler already there (a test's log capture, a program embedding the command) is
    # kept: only the level is set then
    logging.basicConfig(format=LOG_FORMAT, stream=sys.stderr)
    logging.getLogger().setLevel(getattr(logging, level))
    return level


class ControllerError(Exception):
    """A setting a command cannot run with (a bad broker URL, unreadable credentials or
    deals file...): the command says why in one line and exits with ``EXIT_USAGE``."""


class OutageLog:
    """A broker that cannot be reached, said once, then again at growing intervals (a
    minute, doubling to ten), and its return said with how long it was away: a command
    retrying every second does not write a warning every second for as long as the broker
    is down. Each retry in between is logged at DEBUG."""

    def __init__(self, log: logging.Logger, what: str, *, first_repeat: float = 60.0,
                 longest: float = 600.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.log = log
        self.what = what
        self.first_repeat = first_repeat
        self.longest = longest
        self.clock = clock
        self.since: float | None = None
        self._next = 0.0
        self._interval = first_repeat
        self.failures = 0

    def failed(self, reason: object, retry_in: float) -> None:
        now = self.clock()
        self.failures += 1
        if self.since is None:
            self.since, self._interval = now, self.first_repeat
            self._next = now + self._interval
            self.log.warning("%s: %s; retrying in %.1f s, and again until it answers (said "
                             "again in %.0f s if it lasts)", self.what, reason, retry_in,
                             self._interval)
        elif now >= self._next:
            self._interval = min(self._interval * 2, self.longest)
            self._next = now + self._interval
            self.log.warning("%s: still unreachable after %.0f s (%d tries): %s", self.what,
                             now - self.since, self.failures, reason)
        else:
            self.log.debug("%s: %s; retrying in %.1f s", self.what, reason, retry_in)

    def recovered(self) -> None:
        if self.since is not None:
            self.log.warning("%s: reachable again after %.0f s", self.what,
                             self.clock() - self.since)
        self.since = None
        self.failures = 0


def add_file_option(ap: argparse.ArgumentParser, option: str, help: str, *,
                    bare: bool = False) -> None:
    """``--session FILE``, ``--results FILE``: the one way ``score``, ``export`` and
    ``results`` name their files. ``bare``: the file may also be given as the command's
    argument, as it was before (older scripts); :func:`file_option` reads either."""
    dest = option.lstrip("-").replace("-", "_")
    ap.add_argument(option, dest=dest, metavar="FILE", help=help)
    if bare:
        ap.add_argument(f"{dest}_bare", nargs="?", metavar=dest.upper(),
                        help=f"the same as {option} (the older way; {option} is the one "
                             f"every command takes)")


def file_option(ap: argparse.ArgumentParser, args: argparse.Namespace, option: str, *,
                required: bool = True) -> str | None:
    """The file of :func:`add_file_option`'s ``option``, given either way; named twice
    differently, or (``required``) not at all, is a usage error (exit 2)."""
    dest = option.lstrip("-").replace("-", "_")
    given, bare = getattr(args, dest, None), getattr(args, f"{dest}_bare", None)
    if given and bare and given != bare:
        ap.error(f"{option} {given} and {bare}: name the file once")
    value = given or bare
    if value is None and required:
        ap.error(f"{option} FILE is required")
    return str(value) if value is not None else None


def plain_help(docstring: str | None, *, first_line: bool = False) -> str:
    """A module docstring as a command's ``--help`` text: reStructuredText's double
    backquotes taken out (``--help`` is read in a terminal, not rendered)."""
    text = (docstring or "").strip()
    if first_line:
        text = text.split("\n", 1)[0]
    return text.replace("``", "")


def number_ranges(numbers: Iterable[int]) -> str:
    """``1-6, 9`` for 1, 2, 3, 4, 5, 6, 9 (in any order): boards, pairs or tables named in
    a message."""
    out: list[str] = []
    start = prev = None
    for n in sorted(numbers):
        if prev is not None and n == prev + 1:
            prev = n
            continue
        if start is not None:
            out.append(f"{start}" if start == prev else f"{start}-{prev}")
        start = prev = n
    if start is not None:
        out.append(f"{start}" if start == prev else f"{start}-{prev}")
    return ", ".join(out)
