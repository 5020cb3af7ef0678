"""Shared by the fuzz tests (tests/test_fuzz_*.py): settings, byte mutations of valid files,
and the one check every file reader gets."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st


def fuzz_settings(examples: int) -> Any:
    """``examples`` per test; ``FUZZ_EXAMPLES=N`` in the environment for a longer hunt."""
    return settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", str(examples))),
                    deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])


@st.composite
def mutated(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` with a few random edits: bytes replaced, slices deleted, duplicated, random
    bytes inserted, truncated."""
    out = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        size = draw(st.integers(1, 64))
        op = draw(st.sampled_from(["replace", "delete", "duplicate", "insert", "truncate",
                                   "byte"]))
        if op == "replace":
            out[at:at + size] = draw(st.binary(min_size=1, max_size=size))
        elif op == "delete":
            del out[at:at + size]
        elif op == "duplicate":
            out[at:at] = out[at:at + size]
        elif op == "insert":
            out[at:at] = draw(st.binary(max_size=size))
        elif op == "truncate":
            del out[at:]
        else:
            out[at] = draw(st.integers(0, 255))
    return bytes(out)


def reads_or_refuses(path: Path, data: bytes, load: Callable[[Path], Any],
                     error: type[Exception]) -> Any:
    """Write ``data`` to ``path`` and load it: the result, or None when ``load`` refused it
    with its documented ``error`` (with a message). Any other exception fails the test."""
    path.write_bytes(data)
    try:
        return load(path)
    except error as e:
        assert str(e)
        return None
