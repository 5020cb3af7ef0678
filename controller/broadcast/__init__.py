"""Live broadcast: the release gate (``gate``), the MQTT relay and its commands
(``relay``), the public board view and the LIN/PBN files (``view``).

``from controller.broadcast import ...`` keeps the names of the old one-file module.
"""

from controller.broadcast.gate import Gate, GatePolicy, Item, MovementLike, Report, SessionLike
from controller.broadcast.relay import HeldStore, main, run_relay

__all__ = ["Gate", "GatePolicy", "Item", "MovementLike", "Report", "SessionLike",
           "HeldStore", "main", "run_relay"]
