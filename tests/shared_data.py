"""Files from ``../shared`` (the project's reference material, not in a user's clone).

A test that needs them calls :func:`real_dir` (or parametrizes over :func:`real_files`): where
the folder is absent the test is skipped with the reason, and where the environment sets
``BRIDGE_TABLE_REQUIRE_SHARED=1`` (``.ci/run`` does) their absence is a failure instead, so
CI always runs them. ``BRIDGE_TABLE_SHARED`` points at another copy of the folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REQUIRE_VARIABLE = "BRIDGE_TABLE_REQUIRE_SHARED"


def shared_root() -> Path:
    override = os.environ.get("BRIDGE_TABLE_SHARED")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[2] / "shared"


def required() -> bool:
    return os.environ.get(REQUIRE_VARIABLE, "") not in ("", "0")


def absent(reason: str) -> None:
    if required():
        pytest.fail(f"{reason} ({REQUIRE_VARIABLE} is set, so this is a failure)")
    pytest.skip(reason)


def real_dir() -> Path:
    """``shared/data/real``, or skip (fail under CI) with the reason."""
    path = shared_root() / "data" / "real"
    if not path.is_dir():
        absent(f"the real tournament files are not here: {path} is absent (a user's clone "
                "has no ../shared)")
    return path


def real_files(*suffixes: str) -> list[Path | None]:
    """The real files with these suffixes, for ``parametrize``; ``[None]`` when the folder is
    absent, so that the one test case calls :func:`real_dir` and skips or fails."""
    path = shared_root() / "data" / "real"
    if not path.is_dir():
        return [None]
    return [*sorted(p for p in path.rglob("*") if p.suffix.lower() in suffixes)]


def real_file(path: Path | None) -> Path:
    """The parametrized file, or skip (fail under CI) when the folder is absent."""
    if path is None:
        real_dir()
        raise AssertionError("unreachable")  # pragma: no cover - real_dir skipped or failed
    return path
