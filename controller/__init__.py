"""bridge-table controller: the Laws rules daemon and its tools."""

__version__ = "0.1.0"

#: Version of the MQTT wire contract this package speaks (the ``v`` field).
WIRE_VERSION = 1
