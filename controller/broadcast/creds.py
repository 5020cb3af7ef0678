"""Broker options for the relay and the vugraph: the shared broker-settings parser
(``controller.brokersettings``: URL, credentials file, environment, CA and client
certificate), never a password on the command line only."""

from __future__ import annotations

import argparse

from ..brokersettings import BrokerSettings, add_broker_arguments, settings_from_args

__all__ = ["add_broker_options", "broker_settings"]


def add_broker_options(ap: argparse.ArgumentParser) -> None:
    add_broker_arguments(ap)


def broker_settings(args: argparse.Namespace) -> BrokerSettings:
    return settings_from_args(args)
