"""An optional build of the Laws core with mypyc: ``make mypyc`` (``make mypyc-clean``).

    .venv/bin/python -m controller.mypyc_core build|clean|status

``build`` compiles ``controller/laws/*.py`` (all but ``messages.py``, whose exception class
mypyc cannot compile, and the package's ``__init__``) and the display rows
(``controller/indicators/display_text.py``, ``OUTPUTS``) into C extension modules next to the
sources, in place; Python imports them before the ``.py`` files. The sources stay the
reference: the compiled core gives byte-identical replay output (tests/test_replay_golden.py
runs against whichever is installed), and the purity tests read the sources. A stamp
(``controller/laws/mypyc-stamp.json``) records the sources' digests; ``status`` and
``tests/test_mypyc_core.py`` say when the compiled modules no longer match the sources
(an edit after ``build``): rebuild or clean then, or the old code runs.

Needs mypy (the ``test`` extra) and a C compiler; nothing at run time.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CORE", "STAMP", "compiled_modules", "sources", "stale", "build", "clean", "main"]

CORE = Path(__file__).resolve().parent / "laws"
STAMP = CORE / "mypyc-stamp.json"
#: not compiled: ``MessageError(KeyError)`` (mypyc cannot inherit builtin exceptions); the
#: package ``__init__`` stays Python so that the shared library's import order is Python's
_SKIPPED = ("__init__.py", "messages.py")
#: the shared library of the compiled modules (in the ``controller`` package)
GROUP = "controller.laws_core"


#: the engine's output modules compiled with the core (paths under ``controller/``):
#: the display rows. Not ``engine.py`` (yet): it compiles, with byte-identical replay
#: output, but a compiled class cannot be patched or subclassed from Python, which tests
#: and ``bench/`` do (docs/benchmarks.md, "Replay writing every message, 10x endplay")
OUTPUTS = ("indicators/display_text.py",)


def sources() -> list[Path]:
    # an output module that moved is an error here, not a module quietly left uncompiled
    return sorted(p for p in CORE.glob("*.py") if p.name not in _SKIPPED) + \
        [CORE.parent / name for name in OUTPUTS]


def compiled_modules() -> list[Path]:
    """The compiled modules in place (``controller/laws/*.so``, the output modules' and
    the shared library)."""
    return sorted([*CORE.glob("*.so"), *CORE.parent.glob("laws_core__mypyc*.so"),
                   *(so for name in OUTPUTS
                     for so in CORE.parent.glob(name.removesuffix(".py") + ".*.so"))])


def _digests() -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sources()}


def stale() -> list[str]:
    """Why the compiled core does not match the sources (empty when it does, or when
    there is no compiled core)."""
    if not compiled_modules():
        return []
    if not STAMP.exists():
        return [f"compiled modules without {STAMP.name}: run make mypyc or make mypyc-clean"]
    built = json.loads(STAMP.read_text())
    now = _digests()
    return [f"{name} changed since make mypyc" for name in sorted(now)
            if built.get(name) != now[name]] + \
        [f"{name} is gone" for name in sorted(set(built) - set(now))]


def build() -> int:
    """Compile the core in place; 0 on success."""
    try:
        from mypyc.build import mypycify
        from setuptools import Distribution  # type: ignore[import-untyped]
    except ImportError as exc:
        print(f"mypyc_core: {exc.name} is needed (pip install -e '.[test]')", file=sys.stderr)
        return 2
    clean()
    root = CORE.parents[1]
    paths = [str(p.relative_to(root)) for p in sources()]
    cwd = os.getcwd()
    os.chdir(root)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            dist = Distribution({"name": "bridge-table-laws-mypyc", "ext_modules":
                                 mypycify(paths, opt_level="3", group_name=GROUP,
                                          target_dir=str(Path(tmp) / "c"))})
            cmd = dist.get_command_obj("build_ext")
            cmd.inplace = True
            cmd.build_temp = str(Path(tmp) / "o")
            cmd.build_lib = str(Path(tmp) / "lib")
            dist.run_command("build_ext")
    except (SystemExit, Exception) as exc:  # a compiler error: say so, leave no half build
        clean()
        print(f"mypyc_core: build failed: {exc}", file=sys.stderr)
        return 1
    finally:
        os.chdir(cwd)
    STAMP.write_text(json.dumps(_digests(), indent=1, sort_keys=True) + "\n")
    print(f"mypyc_core: compiled {len(paths)} modules of controller/laws and its outputs "
          f"({len(compiled_modules())} extension files)")
    return 0


def clean() -> int:
    for path in compiled_modules():
        path.unlink()
    STAMP.unlink(missing_ok=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["build"]:
        return build()
    if args == ["clean"]:
        return clean()
    if args in (["status"], []):
        modules = compiled_modules()
        problems = stale()
        print("compiled (mypyc)" if modules else "pure Python", *problems, sep="\n")
        return 1 if problems else 0
    print("usage: python -m controller.mypyc_core build|clean|status", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
