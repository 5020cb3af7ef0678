"""The controller's engine: wire-contract messages in, wire-contract messages out.

``Engine.handle(topic, payload)`` is the one path every consumer uses: the live daemon
(``controller/service/daemon.py``), ``bridge-table replay`` and the benchmarks. It decodes the
payload once with ``controller.wire`` (whose Structs say what a valid payload is), drops
duplicates (same ``src``, ``boot`` and ``seq``, as QoS 1 redelivers and bridges resend),
applies the event or ruling to the table's ``Table`` and returns what must
be published; ``acks_due`` gives the acknowledgements to publish after. It does no I/O and
reads no clock: the same inputs give the same outputs, which is what lets the daemon rebuild
every table from its journal.

The package, one thing a module (each compiled with mypyc in the shipped build:
controller/mypyc_core.py):

- ``intake``: what comes in: topics and payloads decoded, each source's seqs and boots
  tracked, duplicates and out-of-order events told apart, and what a board start carries
  of a table's sources (``CarriedSource``).
- ``outgoing``: a message to publish (``Outgoing``) and its canonical JSON (``encode``).
- ``tables``: what the engine keeps of each table (``TableState``) and what a board start
  carries of it across boards (``Carried``).
- ``render``: the payloads published (``state``, ``indicator``, ``alert``, ``result``,
  ``feed``) and the parts of them kept between inputs.
- ``core``: the ``Engine``, which ties each table's ``Table`` to the intake and the
  rendering, and keeps the tables, the counts and the acknowledgements due.
"""

from __future__ import annotations

from controller.engine.core import Engine
from controller.engine.intake import (
    MAX_PAYLOAD,
    MAX_SEQ,
    MAX_SOURCES,
    MAX_TABLES,
    CarriedBoot,
    CarriedSource,
)
from controller.engine.outgoing import Outgoing, encode
from controller.engine.tables import Carried

__all__ = ["Outgoing", "Engine", "Carried", "CarriedBoot", "CarriedSource", "encode",
           "MAX_PAYLOAD", "MAX_SEQ", "MAX_TABLES", "MAX_SOURCES"]
