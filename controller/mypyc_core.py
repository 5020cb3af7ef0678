"""The mypyc build of the Laws core and the engine's hot modules: built by ``make test``
and ``make demo`` where a C compiler is (``ensure``), or by hand (``make mypyc``,
``make mypyc-clean``).

    .venv/bin/python -m controller.mypyc_core build|ensure|clean|status

``build`` compiles ``controller/laws/*.py`` (all but ``messages.py``, whose exception class
mypyc cannot compile, and the package's ``__init__``) and the engine's per-event modules
(``OUTPUTS``) into C extension modules next to the sources, in place; Python imports them
before the ``.py`` files. The sources stay the reference: the compiled build gives
byte-identical output (tests/test_replay_golden.py replays the golden sessions through
both), and the purity tests read the sources. A stamp (``controller/laws/mypyc-stamp.json``)
records the sources' digests: ``controller.compiled.guard`` imports the sources instead of
a build that no longer matches them (an edit after ``build``), so an old build never runs;
``ensure`` builds again then.

``ensure`` never fails a ``make``: without a C compiler, Python's headers or mypy it says
so and the sources run (the same output, slower: docs/benchmarks.md). ``BRIDGE_TABLE_PURE=1``
skips the build and runs the sources where a build is in place.

Needs mypy and a C compiler to build; nothing at run time.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path

from controller import compiled

__all__ = ["CORE", "STAMP", "OUTPUTS", "compiled_modules", "sources", "stale", "build",
           "ensure", "clean", "main"]

CORE = compiled.PACKAGE / "laws"
STAMP = compiled.STAMP
#: not compiled: ``MessageError(KeyError)`` (mypyc cannot inherit builtin exceptions); the
#: package ``__init__`` stays Python so that the shared library's import order is Python's
_SKIPPED = ("__init__.py", "messages.py")
#: the shared library of the compiled modules (in the ``controller`` package)
GROUP = f"controller.{compiled.SHARED}"


#: the engine's per-event modules compiled with the core (paths under ``controller/``):
#: the display rows, the engine's package but its ``__init__``, the evidence (payloads and
#: tempo log), replay's loop. Not
#: a module that defines a msgspec Struct (``wire.py``, ``replay/line.py``): mypyc drops a
#: Struct's class keywords (``kw_only``) and its fields' defaults. A folder here is one
#: ``controller.compiled`` looks in (its ``_FOLDERS``).
OUTPUTS = ("indicators/display_text.py", "engine/intake.py", "engine/outgoing.py",
           "engine/tables.py", "engine/render.py", "engine/core.py", "evidence/payload.py",
           "evidence/tempo.py", "replay/stream.py")


def _package() -> Path:
    return CORE.parent


def sources() -> list[Path]:
    # an output module that moved is an error here, not a module quietly left uncompiled
    return sorted(p for p in CORE.glob("*.py") if p.name not in _SKIPPED) + \
        [_package() / name for name in OUTPUTS]


def compiled_modules() -> list[Path]:
    """The compiled modules in place (each extension file beside its source, and the
    shared library)."""
    return compiled.compiled_files(_package())


def _digests() -> dict[str, str]:
    return compiled.digests(sources(), _package())


def stale() -> list[str]:
    """Why the compiled modules in place do not run (empty when they match the sources,
    or when there are none): ``controller.compiled.stale``."""
    return compiled.stale(_package(), STAMP)


def build() -> int:
    """Compile the core in place; 0 on success."""
    try:
        from mypyc.build import mypycify
        from setuptools import Distribution  # type: ignore[import-untyped]
    except ImportError as exc:
        print(f"mypyc_core: {exc.name} is needed (pip install -e '.[test]')", file=sys.stderr)
        return 2
    clean()
    package = _package()
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            # mypy reads the folder it runs in as code of its own: not the package's parent
            # (a clone's tests and benches, or site-packages, whose typing_extensions.py
            # "shadows library module typing_extensions"), a folder holding only a link
            # to the package, so that the modules are named as installed and built in place
            root = Path(tmp) / "src"
            root.mkdir()
            (root / package.name).symlink_to(package, target_is_directory=True)
            paths = [str(Path(package.name) / p.relative_to(package)) for p in sources()]
            os.chdir(root)
            try:
                dist = Distribution({"name": "bridge-table-laws-mypyc", "ext_modules":
                                     mypycify(paths, opt_level="3", group_name=GROUP,
                                              target_dir=str(Path(tmp) / "c"))})
                cmd = dist.get_command_obj("build_ext")
                cmd.inplace = True
                cmd.build_temp = str(Path(tmp) / "o")
                cmd.build_lib = str(Path(tmp) / "lib")
                dist.run_command("build_ext")
            finally:
                os.chdir(cwd)  # (before the folder goes)
    except (SystemExit, Exception) as exc:  # a compiler error: say so, leave no half build
        clean()
        print(f"mypyc_core: build failed: {exc}", file=sys.stderr)
        return 1
    STAMP.write_text(json.dumps(_digests(), indent=1, sort_keys=True) + "\n")
    print(f"mypyc_core: compiled {len(paths)} modules of the Laws core and the engine "
          f"({len(compiled_modules())} extension files)")
    return 0


def clean() -> int:
    for path in compiled_modules():
        path.unlink()
    STAMP.unlink(missing_ok=True)
    return 0


def cannot_build() -> str | None:
    """Why this machine cannot build (no C compiler, no Python headers, no mypy); None
    when it can."""
    compiler = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(shlex.split(compiler)[0]) is None:
        return f"no C compiler ({compiler})"
    include = sysconfig.get_paths().get("include")
    if not include or not (Path(include) / "Python.h").is_file():
        return "no Python headers (Debian: apt-get install python3-dev)"
    try:
        import mypyc  # noqa: F401
    except ImportError:
        return "no mypy (pip install mypy)"
    return None


def ensure() -> int:
    """Build when no build is in place or it no longer matches the sources, where this
    machine can; always 0: without a build the sources run."""
    if os.environ.get(compiled.PURE_VARIABLE) == "1":
        print(f"mypyc_core: {compiled.PURE_VARIABLE}=1: the pure Python core runs")
        return 0
    built = compiled.compiled_sources(_package())
    if built and set(built.values()) == set(sources()) and not stale():
        return 0  # up to date: these sources, and no others, compiled
    why = cannot_build()
    if why is None:
        print("mypyc_core: compiling the Laws core and the engine with mypyc "
              "(about two minutes; BRIDGE_TABLE_PURE=1 skips it)", flush=True)
        if build() == 0:
            return 0
        why = "the build failed (above)"
    clean()
    print(f"mypyc_core: {why}: the pure Python core runs (the same output, slower)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["build"]:
        return build()
    if args == ["ensure"]:
        return ensure()
    if args == ["clean"]:
        return clean()
    if args in (["status"], []):
        modules = compiled_modules()
        problems = stale()
        print("compiled (mypyc)" if modules else "pure Python", *problems, sep="\n")
        return 1 if problems else 0
    print("usage: python -m controller.mypyc_core build|ensure|clean|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
