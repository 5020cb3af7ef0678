"""Live broadcast: the release gate (``gate``), the relay's logic (``relay``), its store
(``store``), the relay on the broker (``mqtt``), the operator's commands (``operator``), the
public board view and the LIN/PBN files (``view``); ``bridge-table broadcast`` is ``cli``.

``from controller.broadcast import ...`` keeps the names of the old one-file module.
"""

from controller.broadcast.gate import Gate, GatePolicy, Item, MovementLike, Report, SessionLike
from controller.broadcast.mqtt import run_relay
from controller.broadcast.store import HeldStore

__all__ = ["Gate", "GatePolicy", "Item", "MovementLike", "Report", "SessionLike",
           "HeldStore", "run_relay"]
