"""Broker settings for the web apps: the shared parser (``controller.brokersettings``: URL,
credentials file, environment, CA and client certificate), through one module so every web
app takes the same options."""

from __future__ import annotations

import argparse

from controller.brokersettings import BrokerSettings, add_broker_arguments
from controller.brokersettings import settings_from_args as _settings_from_args

__all__ = ["BrokerSettings", "add_arguments", "settings_from_args"]


def add_arguments(ap: argparse.ArgumentParser) -> None:
    add_broker_arguments(ap)


def settings_from_args(args: argparse.Namespace) -> BrokerSettings:
    """The one place the web apps turn their arguments into broker settings."""
    return _settings_from_args(args)
