"""One line of an events file as replay reads it (controller/replay/stream.py): its
``topic`` and raw ``payload``, or a bare payload.

A module of its own, interpreted: replay's loop is compiled with the engine
(tools/compiled_build.py), and mypyc drops a msgspec Struct's field defaults."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["InputLine", "decode_line"]


class InputLine(msgspec.Struct):
    """One input line: ``{"topic": ..., "payload": {...}}``, or a bare payload (whose
    ``ruling`` field, if any, says it is a director's ruling). The payload is kept raw for
    the engine, which parses and checks it."""

    topic: str | None = None
    payload: msgspec.Raw = msgspec.Raw(b"")
    ruling: Any = None


#: ``InputLine`` of a line's bytes; raises msgspec's errors for a line that is not one
decode_line = msgspec.json.Decoder(InputLine).decode
