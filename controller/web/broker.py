"""Broker settings for the web apps, through one function so the source is easy to swap.

Today the settings come from the rules daemon (``controller.daemon.BrokerSettings`` and its
``--broker/--username/--password/--ca-file`` arguments); the web apps add
``--mqtt-password-file`` so a password need not be on the command line.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from controller.daemon import BrokerSettings, add_broker_arguments

__all__ = ["BrokerSettings", "add_arguments", "settings_from_args"]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    add_broker_arguments(ap)
    ap.add_argument("--mqtt-password-file",
                    default=os.environ.get("BRIDGE_TABLE_MQTT_PASSWORD_FILE"),
                    help="file holding the broker password (first line)")


def settings_from_args(args: argparse.Namespace) -> BrokerSettings:
    """The one place the web apps turn their arguments into broker settings."""
    password = args.password
    if args.mqtt_password_file:
        try:
            text = Path(args.mqtt_password_file).read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"cannot read {args.mqtt_password_file}: {exc}") from None
        password = text.splitlines()[0].strip() if text.strip() else None
    return BrokerSettings.from_url(args.broker, username=args.username, password=password,
                                   ca_file=args.ca_file)
