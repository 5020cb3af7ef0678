"""A message the engine publishes (``Outgoing``) and its canonical JSON (``encode``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller import wire

__all__ = ["Outgoing", "encode"]

#: Canonical JSON for a payload (compact, UTF-8, key order as built): the wire module's, so
#: that the daemon, replay and every listener agree byte for byte.
encode = wire.encode


@dataclass(slots=True)
class Outgoing:
    """One message to publish. Not changed once made (nothing assigns to one; ``data()``
    fills its cache): not a frozen dataclass because a frozen one costs four times as
    much to make, and replay makes one for every message (made with positional arguments
    where many are made: a keyword costs more than the rest of the call)."""

    topic: str
    payload: dict[str, Any]
    retain: bool
    qos: int = 1
    #: the payload's JSON, encoded on first use and kept (``data()``), or given when made
    #: (``render.restated``: the JSON ``encode`` gives for ``payload``, byte for byte)
    _data: bytes | None = field(default=None, compare=False, repr=False)

    def data(self) -> bytes:
        """The payload as canonical JSON (``encode``), encoded once however many consumers
        (the daemon's publish, the journal, replay's output) ask for it. The payload must
        not be changed after the first call."""
        data = self._data
        if data is None:
            data = self._data = encode(self.payload)
        return data

    def encoded(self) -> bytes | None:
        """The payload's JSON if ``data()`` made it already (or it was given), else None."""
        return self._data
