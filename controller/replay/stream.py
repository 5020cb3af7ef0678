"""Replay of an events file through the engine: each line routed to its topic, the
engine's messages written as lines (``bridge-table replay``: controller/replay/cli.py).

Reads sensor events (one JSON object a line: the payload itself, or
``{"topic": ..., "payload": ...}``) and writes one ``{"topic": ..., "payload": ...}`` line
for every message the controller would publish, in order, through the same ``Engine`` the
live daemon uses. A malformed line is reported on standard error with its line number and
skipped; the run goes on.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import IO

import msgspec

from controller import wire
from controller.engine import Engine, Outgoing
from controller.replay.line import decode_line

#: the kinds of message the engine publishes (``--topics`` chooses among them)
KINDS = ("state", "alert", "indicator", "result", "feed", "error", "evidence")


_encoder = msgspec.json.Encoder()


def replay_lines(engine: Engine, lines: Iterable[bytes | str], *, table: str = "1",
                 errors: IO[str] | None = None, source: str = "-") -> Iterator[Outgoing]:
    """Feed JSONL lines to ``engine``; yield every message it would publish."""
    root = engine.root
    for lineno, raw in enumerate(lines, 1):
        routed = route_line(raw, lineno, table=table, root=root, errors=errors, source=source)
        if routed is None:
            continue
        outs = engine.handle(*routed)
        if outs:
            for out in outs:
                if out.topic.endswith("/error"):
                    _report(errors, source, lineno, str(out.payload.get("error")))
            yield from outs


def replay_to(engine: Engine, lines: Iterable[bytes | str], out: IO[bytes],
              kinds: set[str] | None = None, *, table: str = "1",
              errors: IO[str] | None = None, source: str = "-") -> int:
    """``write_messages(replay_lines(...))`` in one loop (``bridge-table replay``): the same
    lines written, with no generator between the engine and the output; returns how many
    messages were written."""
    root = engine.root
    handle = engine.handle
    lines_out = MessageLines(kinds)
    # MessageLines.add, inline: its heads looked up here, the pieces appended here
    heads = lines_out.heads
    head_of = lines_out.head
    buffer: list[bytes] = []
    append = buffer.append
    count = 0
    decode = decode_line
    event_topic = _bare_topic(table, "event", root)
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        try:
            head = decode(line)
        except (RecursionError, msgspec.ValidationError, msgspec.DecodeError,
                UnicodeDecodeError):
            # not a JSON object, a blank line or a comment: route_line says which, as ever
            routed = route_line(raw, lineno, table=table, root=root, errors=errors,
                                source=source)
            if routed is None:
                continue
            outs = handle(*routed)
        else:
            # route_line's answer for a line that decodes, without calling it
            if head.topic is not None and len(head.payload):
                outs = handle(head.topic, bytes(head.payload))
            elif head.ruling is None:
                outs = handle(event_topic, line)
            else:
                outs = handle(_bare_topic(table, "ruling", root), line)
        if not outs:
            continue
        for msg in outs:
            topic = msg.topic
            # (an error is never retained: Engine._error; a retained message's topic is
            # not looked at)
            if not msg.retain and topic.endswith("/error"):
                _report(errors, source, lineno, str(msg.payload.get("error")))
            prefix = heads.get(topic)
            if prefix is None:
                prefix = head_of(topic)
            if prefix:
                append(prefix)
                append(msg.data())
                append(b"}\n")
                count += 1
        if len(buffer) >= 3072:
            out.write(b"".join(buffer))
            buffer.clear()
    if buffer:
        out.write(b"".join(buffer))
    return count


@lru_cache(maxsize=256)
def _bare_topic(table: str, kind: str, root: str) -> str:
    """The topic of a bare payload line (the same few for a whole file)."""
    return wire.topic(table, kind, root=root)


def route_line(raw: bytes | str, lineno: int, *, table: str, root: str,
               errors: IO[str] | None, source: str) -> tuple[str, bytes | str] | None:
    """The ``(topic, payload)`` of one input line; None for a blank line, a comment, or a
    line that is not a JSON object (reported on ``errors``)."""
    line = raw.strip()
    try:
        # (a blank line or a comment is not JSON: told apart below, on the way out)
        head = decode_line(line)
    except RecursionError:  # msgspec recurses per level of nesting
        _report(errors, source, lineno, "JSON nested too deeply")
        return None
    except msgspec.ValidationError:
        _report(errors, source, lineno, "not a JSON object")
        return None
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        if not line or line[:1] in ("#", b"#"):
            return None
        _report(errors, source, lineno, f"not JSON: {exc}")
        return None
    if head.topic is not None and len(head.payload):
        return head.topic, bytes(head.payload)
    return _bare_topic(table, "ruling" if head.ruling is not None else "event", root), line


def _report(errors: IO[str] | None, source: str, lineno: int, message: str) -> None:
    if errors is not None:
        print(f"{source}:{lineno}: {message}", file=errors)


def write_messages(messages: Iterable[Outgoing], out: IO[bytes],
                   kinds: set[str] | None = None) -> int:
    """Write ``{"topic": ..., "payload": ...}`` lines, buffered; returns how many.

    The line is the bytes ``msgspec`` gives for that object, put together from the topic's
    JSON (encoded once per topic) and the payload's (``Outgoing.data``: encoded once)."""
    lines = MessageLines(kinds)
    buffer: list[bytes] = []
    count = 0
    for msg in messages:
        if lines.add(msg, buffer):
            count += 1
            if len(buffer) >= 3072:
                out.write(b"".join(buffer))
                buffer.clear()
    if buffer:
        out.write(b"".join(buffer))
    return count


class MessageLines:
    """The output lines of messages, each topic's head encoded once (``--topics``:
    ``kinds`` kept)."""

    def __init__(self, kinds: set[str] | None = None) -> None:
        self.kinds = kinds
        #: each topic's head (``head``), empty for a kind left out
        self.heads: dict[str, bytes] = {}

    def head(self, topic: str) -> bytes:
        """``{"topic":...,"payload":`` of ``topic``, kept in ``heads``; empty for a kind
        ``--topics`` leaves out."""
        head = self.heads.get(topic)
        if head is None:
            keep = self.kinds is None or topic.rsplit("/", 1)[-1] in self.kinds
            head = self.heads[topic] = \
                b'{"topic":' + _encoder.encode(topic) + b',"payload":' if keep else b""
        return head

    def add(self, msg: Outgoing, buffer: list[bytes]) -> bool:
        """Append the line of ``msg`` to ``buffer`` (as pieces); False for a kind
        ``--topics`` leaves out."""
        topic = msg.topic
        head = self.heads.get(topic)
        if head is None:
            head = self.head(topic)
        if not head:
            return False
        buffer.append(head)
        buffer.append(msg.data())
        buffer.append(b"}\n")
        return True
