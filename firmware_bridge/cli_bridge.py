"""``bridge-table bridge --config TABLE.toml``: the command line of the firmware
bridge (``firmware_bridge.bridge``), run until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from controller.broker.login import LoginRefused
from controller.commandline import add_log_level, setup_logging
from firmware_bridge.bridge import Bridge, run_until_signal
from firmware_bridge.config import load_config
from firmware_bridge.errors import BridgeError, ConfigError, SpoolError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table bridge",
                                description="Run the firmware bridge of one table.")
    p.add_argument("--config", required=True,
                   help="the table's TOML file (docs/config.md; `bridge-table "
                        "examples` lists the shipped ones)")
    p.add_argument("--broker", help="MQTT broker URL, instead of the config's [broker] url")
    p.add_argument("--credentials", help="the broker login (credentials file from "
                   "bridge-table broker-config), instead of the config's [broker] credentials")
    add_log_level(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    setup_logging(args)
    try:
        config = load_config(args.config, broker_url=args.broker,
                             credentials=args.credentials)
    except ConfigError as e:
        print(f"bridge-table bridge: {e}", file=sys.stderr)
        return 2
    try:
        asyncio.run(run_until_signal(Bridge(config)))
    except LoginRefused as e:   # said in full: the login to fix and where
        print(f"bridge-table bridge: {e}", file=sys.stderr)
        return 2
    except SpoolError as e:
        # a spool it cannot open or write is set-up (a path, a permission): exit 2 so that
        # systemd's RestartPreventExitStatus=2 stops instead of looping
        print(f"bridge-table bridge: {e}", file=sys.stderr)
        return 2
    except BridgeError as e:
        print(f"bridge-table bridge: {e}", file=sys.stderr)
        return 1
    return 0

