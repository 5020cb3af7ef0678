"""``bridge-table run --config TABLE.toml``: one table's bridge and controller together.

The normal way to start a table's Pi (``run.py``): the firmware bridge and a rules daemon
serving only this table, in one asyncio process; SIGINT / SIGTERM stop both cleanly (0),
either part stopping with an error stops the other (1; 2 for a bad config).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from controller.commandline import add_log_level, setup_logging
from controller.service.run import serve_table

__all__ = ["main", "parser"]


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table run",
                                 description="Bridge and controller of one table, one process.")
    ap.add_argument("--config", required=True,
                    help="the table's TOML file (docs/config.md; `bridge-table "
                         "examples` lists the shipped ones)")
    ap.add_argument("--broker", help="MQTT broker URL, instead of the config's [broker] url")
    ap.add_argument("--credentials", help="the broker login (credentials file from "
                    "bridge-table broker-config), instead of the config's [broker] credentials")
    ap.add_argument("--controller-credentials",
                    default=os.environ.get("BRIDGE_TABLE_CONTROLLER_CREDENTIALS"),
                    help="the controller's own login (clients/table-T-controller.toml of "
                         "broker-config --table-controllers: one connection per user); "
                         "default $BRIDGE_TABLE_CONTROLLER_CREDENTIALS, else the bridge's")
    ap.add_argument("--deals", help="PBN (or DUP/BRI/DGE) deals file of the session")
    ap.add_argument("--journal", help="controller journal (default: beside the spool)")
    ap.add_argument("--no-journal", action="store_true",
                    help="keep no journal (a restart then rebuilds nothing)")
    ap.add_argument("--journal-sync", choices=("full", "normal"), default="full",
                    help="full (default): an acknowledged event survives a power cut; "
                         "normal: a crash of the program")
    ap.add_argument("--rules", default="2017", help="Laws edition: 2017 or 2007")
    ap.add_argument("--policy", help="indicator policy file (TOML)")
    add_log_level(ap)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    setup_logging(args)
    return asyncio.run(serve_table(args))


if __name__ == "__main__":
    sys.exit(main())
