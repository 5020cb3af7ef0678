"""bridge-table firmware bridge: readers, buttons, LEDs and displays to and from MQTT."""

__version__ = "0.1.0"
