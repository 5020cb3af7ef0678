"""Broker credentials for the relay and the vugraph: from a file or the environment, never
only on the command line. One small function, so the shared broker-settings module (the
security branch's) can replace it in one place."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

__all__ = ["add_broker_options", "broker_settings"]


def add_broker_options(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--broker", default=os.environ.get("BRIDGE_TABLE_BROKER",
                                                       "mqtt://127.0.0.1:1883"),
                    help="mqtt://HOST:PORT or mqtts://HOST:PORT (TLS); env BRIDGE_TABLE_BROKER")
    ap.add_argument("--username", default=os.environ.get("BRIDGE_TABLE_MQTT_USERNAME"),
                    help="env BRIDGE_TABLE_MQTT_USERNAME")
    ap.add_argument("--password-file", default=os.environ.get("BRIDGE_TABLE_MQTT_PASSWORD_FILE"),
                    help="a file holding the password (env BRIDGE_TABLE_MQTT_PASSWORD_FILE); "
                         "or env BRIDGE_TABLE_MQTT_PASSWORD")
    ap.add_argument("--ca-file", default=os.environ.get("BRIDGE_TABLE_MQTT_CA_FILE"),
                    help="CA certificate for mqtts:// (env BRIDGE_TABLE_MQTT_CA_FILE)")


def broker_settings(args: argparse.Namespace) -> Any:
    from ..daemon import BrokerSettings, ControllerError

    password = os.environ.get("BRIDGE_TABLE_MQTT_PASSWORD")
    if args.password_file:
        try:
            password = Path(args.password_file).read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            raise ControllerError(f"{args.password_file}: cannot read the password: "
                                  f"{getattr(exc, 'strerror', None) or exc}") from None
    return BrokerSettings.from_url(args.broker, username=args.username, password=password,
                                   ca_file=args.ca_file)
