"""bridge-table controller: the Laws rules daemon and its tools."""

from typing import Final, Literal

__version__ = "0.1.0"

#: Version of the MQTT wire contract this package speaks (the ``v`` field).
#: ``controller.wire.VERSION`` names it for the wire module's users.
WIRE_VERSION: Final[Literal[1]] = 1

# a compiled build (controller/mypyc_core.py) runs only while it matches its sources: the
# sources are imported instead of one left behind by an edit (controller/compiled.py)
from controller.compiled import guard as _guard  # noqa: E402

#: why the compiled modules in place do not run (empty: they run, or there are none)
COMPILED_NOT_USED: Final[tuple[str, ...]] = tuple(_guard())
