"""What every ``bridge-table`` command shares: exit codes, ``--log-level``, one log format.

Exit codes, one meaning each (systemd's units act on them: ``RestartPreventExitStatus=2``):

- ``0`` (:data:`EXIT_OK`): done;
- ``1`` (:data:`EXIT_FAILURE`): a failure while running (a device, the broker gone for good),
  which a restart may cure;
- ``2`` (:data:`EXIT_USAGE`): the command line, a configuration or an input file is wrong,
  which only an edit cures;
- ``130`` (:data:`EXIT_INTERRUPTED`): stopped by Ctrl-C, as shells count it.

Every long-running command takes ``--log-level`` with the same choices
(:data:`LOG_LEVELS`, any case, default ``$BRIDGE_TABLE_LOG_LEVEL`` or the command's own) and
logs in one format to standard error (:data:`LOG_FORMAT`).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

__all__ = ["EXIT_FAILURE", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_USAGE", "LOG_FORMAT",
           "LOG_LEVELS", "add_log_level", "setup_logging"]

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
LEVEL_VARIABLE = "BRIDGE_TABLE_LOG_LEVEL"


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
    logging.basicConfig(level=getattr(logging, level), format=LOG_FORMAT, stream=sys.stderr,
                        force=True)
    return level
