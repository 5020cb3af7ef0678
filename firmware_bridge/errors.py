"""The firmware bridge's exception tree.

Everything the bridge raises on purpose derives from :class:`BridgeError`, so a caller
(the CLI, the simulator, a test) can catch the whole package's failures in one place.
"""

from __future__ import annotations


class BridgeError(Exception):
    """Base of every error the firmware bridge raises on purpose."""


class ConfigError(BridgeError):
    """A table configuration file is missing, unreadable or invalid.

    The message names the file, the key path (``readers[2].antennas."1".seat``) and
    the problem, so it can be shown to whoever edits the file as it is.
    """

    def __init__(self, file: str, key: str, problem: str) -> None:
        self.file = file
        self.key = key
        self.problem = problem
        where = f"{file}: {key}: " if key else f"{file}: "
        super().__init__(where + problem)


class SpoolError(BridgeError):
    """The local SQLite spool cannot be opened or written."""


class PublisherError(BridgeError):
    """The MQTT side of the bridge was set up wrongly (bad URL, unreadable CA file)."""


class GpioError(BridgeError):
    """A GPIO pin factory or device could not be set up."""


class DisplayError(BridgeError):
    """A table display could not be set up."""


class IndicatorError(BridgeError):
    """An ``indicator`` message does not follow the contract; the bridge keeps going."""
