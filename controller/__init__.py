"""bridge-table controller: the Laws rules daemon and its tools."""

from typing import Final, Literal

__version__ = "0.1.0"

#: Version of the MQTT wire contract this package speaks (the ``v`` field).
#: ``controller.wire.VERSION`` names it for the wire module's users.
WIRE_VERSION: Final[Literal[1]] = 1
