"""Which of the package's modules run compiled (the mypyc build: controller/mypyc_core.py),
and the guard that never lets a build older than its sources run.

Python imports an extension module (``table.cpython-311-x86_64-linux-gnu.so``) before the
``.py`` file of the same name, so a build left behind by an edit would run the old code.
When ``controller`` is imported, ``guard`` compares the sources of the compiled modules
with the digests the build recorded (``STAMP``). When one differs, a source or its digest
is missing, the shared library is gone, or ``BRIDGE_TABLE_PURE=1`` is set, a finder put
first on ``sys.meta_path`` imports every compiled module from its source instead (all of
them: compiled modules call each other through the shared library). The sources are the
reference either way: the compiled build gives the same bytes (tests/test_replay_golden.py
runs both).

Standard library only, and cheap: it runs at every start of every command.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

__all__ = ["PACKAGE", "STAMP", "SHARED", "PURE_VARIABLE", "compiled_sources", "compiled_files",
           "digests", "stale", "guard", "SourcesFirst"]

#: the ``controller`` package's folder
PACKAGE = Path(__file__).resolve().parent
#: the digests of the sources the build compiled, by path under ``PACKAGE``
STAMP = PACKAGE / "laws" / "mypyc-stamp.json"
#: the shared library of the compiled modules (``controller.laws_core__mypyc``)
SHARED = "laws_core__mypyc"
#: set to 1: the sources run even where a build matches them (the pure-Python check)
PURE_VARIABLE = "BRIDGE_TABLE_PURE"
#: the folders under ``PACKAGE`` that hold compiled modules (controller/mypyc_core.py)
_FOLDERS = ("", "laws", "engine", "indicators", "evidence", "replay")


def _in_place(package: Path) -> list[tuple[str, Path, Path | None]]:
    """Each extension file in the folders the build writes to, whatever Python it was
    built for (``table.cpython-311-x86_64-linux-gnu.so``, ``table.so``: ``table``): its
    dotted module name, the file, and its source beside it (None: the shared library, or
    a file of no module here)."""
    found: list[tuple[str, Path, Path | None]] = []
    for folder in _FOLDERS:
        where = package / folder if folder else package
        try:
            names = os.listdir(where)
        except OSError:
            continue
        for name in names:
            if not name.endswith(".so"):
                continue
            module = name.split(".", 1)[0]
            source = where / f"{module}.py"
            dotted = ".".join(["controller", *([folder] if folder else []), module])
            found.append((dotted, where / name,
                          source if not module.startswith(SHARED) and source.is_file()
                          else None))
    return found


def compiled_sources(package: Path = PACKAGE) -> dict[str, Path]:
    """Each compiled module in place (its extension file beside its source), by dotted
    name: its ``.py`` file. The shared library has no source and is not listed."""
    return {dotted: source for dotted, _, source in _in_place(package) if source is not None}


def compiled_files(package: Path = PACKAGE) -> list[Path]:
    """The build's files in place: each compiled module's extension file, and the shared
    library."""
    return sorted(file for _, file, source in _in_place(package)
                  if source is not None or file.parent == package
                  and file.name.startswith(SHARED))


def digests(paths: Sequence[Path], package: Path = PACKAGE) -> dict[str, str]:
    """The sha256 of each source, by its path under ``package`` (what ``STAMP`` holds)."""
    return {p.relative_to(package).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in paths}


def stale(package: Path = PACKAGE, stamp: Path | None = None) -> list[str]:
    """Why the compiled modules in place must not run (empty when they match their
    sources, or when none is in place)."""
    return _stale(_in_place(package), package, stamp)


def _stale(found: list[tuple[str, Path, Path | None]], package: Path,
           stamp: Path | None) -> list[str]:
    sources = [source for _, _, source in found if source is not None]
    if not sources:
        return []
    stamp = package / STAMP.relative_to(PACKAGE) if stamp is None else stamp
    if not any(file.parent == package and file.name.startswith(SHARED)
               for _, file, _ in found):
        return [f"the shared library {SHARED} is missing: run make mypyc or make mypyc-clean"]
    try:
        built = json.loads(stamp.read_text())
    except (OSError, ValueError):
        return [f"compiled modules without a readable {stamp.name}: run make mypyc or "
                f"make mypyc-clean"]
    if not isinstance(built, dict):
        return [f"{stamp.name} is not a mapping: run make mypyc"]
    now = digests(sorted(sources), package)
    return [f"{name} changed since make mypyc" for name in sorted(now)
            if built.get(name) != now[name]] + \
        [f"{name} was compiled but has no module in place" for name in sorted(set(built) -
                                                                             set(now))]


class SourcesFirst:
    """A meta path finder: the named modules are imported from their sources."""

    def __init__(self, sources: dict[str, Path]) -> None:
        self.sources = dict(sources)

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def guard() -> list[str]:
    """At import of ``controller``: when the compiled modules must not run (``stale``, or
    ``BRIDGE_TABLE_PURE=1``), their sources are imported instead. Returns why (empty: the
    compiled modules run, or there are none)."""
    if any(isinstance(f, SourcesFirst) for f in sys.meta_path):
        return []
    found = _in_place(PACKAGE)   # (listed once: this runs at every start of a command)
    sources = {dotted: source for dotted, _, source in found if source is not None}
    if not sources:
        return []
    why = [f"{PURE_VARIABLE}=1"] if os.environ.get(PURE_VARIABLE) == "1" \
        else _stale(found, PACKAGE, None)
    if why:
        sys.meta_path.insert(0, SourcesFirst(sources))
    return why
