"""The compiled wheel: the Laws core and the engine's per-event modules compiled with mypyc,
built apart from the source tree, and its tests.

    .venv/bin/python tools/compiled_build.py wheel|status|test [PYTEST ARGS...]

The source tree always runs as written; the compiled build is a wheel, as black's is.
``wheel`` copies the tree into a temporary folder and builds it there with
``BRIDGE_TABLE_MYPYC=1`` (setup.py then compiles ``COMPILED`` with ``mypycify``), so that
no build product lands beside the sources, and keeps it in ``dist/`` with a stamp
(``STAMP``) naming the digest of what it was built from: ``wheel`` builds again only when
that changed (about two minutes). ``status`` says whether the wheel in ``dist/`` matches
the tree. ``test`` (the last step of ``make test``) installs the wheel in a virtualenv of
its own (``.venv-compiled``) and runs ``TESTS`` there against the installed package, with
``BRIDGE_TABLE_EXPECT_COMPILED=1``: tests/test_compiled.py then fails unless every
module of ``COMPILED`` was imported compiled from site-packages. Where this machine cannot
build (no C compiler, no Python headers, no mypy), ``test`` says so and passes, except
under CI (``CI=true``), where it fails.

Needs, in the Python that runs it: the package's dependencies (mypy reads their types),
mypy (mypyc) and setuptools >= 77 (``make compiled-wheel`` installs them in ``.venv``).
Standard library only itself; mypyc is imported by setup.py in the build.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ROOT", "VARIABLE", "COMPILED", "NOT_COMPILED", "GROUP", "TESTS", "DIST",
           "STAMP", "VENV", "EXPECT_COMPILED", "compiled_sources", "module_name",
           "extensions", "tree_files", "sources_digest", "cannot_build", "built_wheel",
           "copy_tree", "build_wheel", "test", "main", "BUILD_MEMORY_MB",
           "available_memory_mb"]

#: the clone (this file is ``tools/compiled_build.py`` in it)
ROOT = Path(__file__).resolve().parents[1]
#: set to 1: setup.py compiles ``COMPILED`` (otherwise a pure wheel, as a Pi installs)
VARIABLE = "BRIDGE_TABLE_MYPYC"

#: the modules compiled with mypyc, as globs under the clone (the one list: setup.py and
#: the tests read it): the Laws core, the display rows, the engine, the evidence (payloads
#: and tempo log), replay's loop. Not a module that defines a msgspec Struct
#: (``controller/wire.py``, ``controller/replay/line.py``): mypyc drops a Struct's class
#: keywords (``kw_only``) and its fields' defaults. A glob that matches nothing is an
#: error (a module that moved is not quietly left uncompiled).
COMPILED: tuple[str, ...] = (
    "controller/laws/*.py",
    "controller/indicators/display_text.py",
    "controller/engine/*.py",
    "controller/evidence/payload.py",
    "controller/evidence/tempo.py",
    "controller/replay/stream.py",
)
#: taken by a glob of ``COMPILED`` but not compiled: ``MessageError(KeyError)`` (mypyc
#: cannot inherit builtin exceptions); the packages' ``__init__`` stay Python so that the
#: shared library's import order is Python's
NOT_COMPILED: tuple[str, ...] = ("controller/laws/__init__.py", "controller/laws/messages.py",
                                  "controller/engine/__init__.py")
#: the shared library of the compiled modules (mypyc names it
#: ``controller/laws_core__mypyc.cpython-311-x86_64-linux-gnu.so``)
GROUP = "controller.laws_core"

#: the tests run against the installed compiled wheel (globs under the clone): the
#: check that it is the compiled build, the Laws core's, the engine's and the evidence's
#: tests, the wire contract's (its schema reads the compiled enums' docstrings from their
#: sources), and the golden replays, byte for byte against the sources
TESTS: tuple[str, ...] = (
    "tests/test_compiled.py",
    "tests/test_law*.py",
    "tests/test_ruling_options.py",
    "tests/test_table.py",
    "tests/test_auction.py",
    "tests/test_play.py",
    "tests/test_play_tallies.py",
    "tests/test_scoring.py",
    "tests/test_messages.py",
    "tests/test_engine*.py",
    "tests/test_evidence.py",
    "tests/test_tempo.py",
    "tests/test_display_text_cache.py",
    "tests/test_wire.py",
    "tests/test_replay_golden.py",
    "tests/test_replay_spot_golden.py",
)

#: what the wheel is built from: copied into the build folder, and digested for ``STAMP``
_TREE = ("controller", "firmware_bridge", "hw_configs", "tools/__init__.py",
         "tools/compiled_build.py", "setup.py", "pyproject.toml")
#: copied too (the wheel's description and licence), not digested: an edit of them does
#: not change what runs, and does not build again
_TEXTS = ("README.md", "LICENSE")
#: never copied nor digested: caches, and an extension module of an older in-place build
_IGNORED = ("__pycache__", "*.pyc", "*.so", "*.egg-info", ".mypy_cache")

DIST = ROOT / "dist"
#: which wheel in ``DIST`` is the compiled one, and the digest of what it was built from
STAMP = DIST / "compiled-wheel.json"
#: the virtualenv the compiled wheel's tests run in
VENV = ROOT / ".venv-compiled"
#: set to 1 by ``test``: tests/test_compiled.py fails unless the compiled build runs
EXPECT_COMPILED = "BRIDGE_TABLE_EXPECT_COMPILED"


def compiled_sources(root: Path = ROOT) -> list[Path]:
    """The sources ``COMPILED`` names, in its order (each glob's matches sorted)."""
    found: list[Path] = []
    for pattern in COMPILED:
        matches = sorted(root.glob(pattern))
        if not matches:
            raise FileNotFoundError(f"compiled_build.COMPILED: {pattern} matches nothing")
        found += [p for p in matches if p.relative_to(root).as_posix() not in NOT_COMPILED
                  and p not in found]
    return found


def module_name(path: Path, root: Path = ROOT) -> str:
    """``controller/laws/table.py`` -> ``controller.laws.table``."""
    return ".".join(path.relative_to(root).with_suffix("").parts)


def extensions(root: Path = ROOT) -> list[Any]:
    """setup.py's ``ext_modules`` for the compiled build (run in ``root``: mypy takes the
    folder it runs in for the top of the package)."""
    from mypyc.build import mypycify

    paths = [p.relative_to(root).as_posix() for p in compiled_sources(root)]
    return list(mypycify(paths, opt_level="3", group_name=GROUP))


def tree_files(root: Path = ROOT) -> list[Path]:
    """Every file the wheel is built from."""
    ignored = shutil.ignore_patterns(*_IGNORED)
    files: list[Path] = []
    for name in _TREE:
        top = root / name
        if top.is_file():
            files.append(top)
            continue
        for folder, dirs, names in os.walk(top):
            dirs[:] = sorted(set(dirs) - ignored(folder, dirs))
            files += [Path(folder) / n for n in sorted(set(names) - ignored(folder, names))]
    return files


def sources_digest(root: Path = ROOT) -> str:
    """The sha256 of what a build from ``root`` would compile and pack, and of the Python,
    platform and mypy it would be built by."""
    h = hashlib.sha256()
    try:
        from mypy.version import __version__ as mypy_version
    except ImportError:
        mypy_version = "none"
    h.update(f"{sys.implementation.cache_tag} {sysconfig.get_platform()} "
             f"{mypy_version}\n".encode())
    for path in tree_files(root):
        h.update(f"{path.relative_to(root).as_posix()}\n".encode())
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


#: the memory the mypyc build needs free, in MiB: one gcc process compiling the Laws core
#: peaked at about 800 MB (issue 44, on an emulated arm64 Pi), more than a 512 MB Pi has
BUILD_MEMORY_MB = 1024


def available_memory_mb(meminfo: Path = Path("/proc/meminfo")) -> int | None:
    """MemAvailable plus free swap, in MiB; None where the kernel does not say."""
    try:
        fields = dict(line.split(":", 1) for line in meminfo.read_text().splitlines()
                      if ":" in line)
        kib = int(fields["MemAvailable"].split()[0]) + int(fields.get("SwapFree", "0 kB")
                                                           .split()[0])
    except (OSError, KeyError, ValueError, IndexError):
        return None
    return kib // 1024


def cannot_build(meminfo: Path = Path("/proc/meminfo")) -> str | None:
    """Why this machine cannot build the compiled wheel (too little memory free, no C
    compiler, no Python headers, no mypy or too old a setuptools); None when it can."""
    memory = available_memory_mb(meminfo)
    if memory is not None and memory < BUILD_MEMORY_MB:
        return (f"{memory} MiB of memory free, the mypyc build needs about "
                f"{BUILD_MEMORY_MB} (a gcc process peaks near 800 MB): build the wheel on "
                f"a bigger machine of the same architecture and Python and copy it here "
                f"(docs/install.md); the pure package runs as it is")
    compiler = sysconfig.get_config_var("CC") or "cc"
    if shutil.which(shlex.split(compiler)[0]) is None:
        return f"no C compiler ({compiler}; Debian: apt-get install gcc)"
    include = sysconfig.get_paths().get("include")
    if not include or not (Path(include) / "Python.h").is_file():
        return "no Python headers (Debian: apt-get install python3-dev)"
    try:
        import mypyc  # noqa: F401
        import setuptools  # type: ignore[import-untyped]
    except ImportError as exc:
        return f"no {exc.name} in {sys.executable} (make compiled-wheel installs it)"
    if int(setuptools.__version__.split(".")[0]) < 77:
        return (f"setuptools {setuptools.__version__} in {sys.executable}, 77 or later "
                f"needed (make compiled-wheel installs it)")
    return None


def built_wheel(root: Path = ROOT, dist: Path | None = None) -> Path | None:
    """The compiled wheel in ``dist`` built from ``root`` as it is now; None when there is
    none, or the tree changed since."""
    dist = root / "dist" if dist is None else dist
    try:
        stamp = json.loads((dist / STAMP.name).read_text())
        wheel = dist / stamp["wheel"]
        sources = stamp["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return wheel if wheel.is_file() and sources == sources_digest(root) else None


def copy_tree(root: Path, copy: Path) -> None:
    """What a wheel is built from (``_TREE`` and ``_TEXTS``, without caches or build
    products) copied from ``root`` into ``copy``: a build there leaves the sources as they
    were (tests/test_installed_wheel.py builds the pure wheel the same way)."""
    for name in (*_TREE, *_TEXTS):
        if (root / name).is_dir():
            shutil.copytree(root / name, copy / name, ignore=shutil.ignore_patterns(*_IGNORED))
        else:
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / name, copy / name)


def build_wheel(root: Path = ROOT, dist: Path | None = None) -> Path:
    """Build the compiled wheel from a copy of ``root`` and keep it in ``dist`` (an
    earlier compiled wheel there goes); raises RuntimeError when the build fails."""
    dist = root / "dist" if dist is None else dist
    digest = sources_digest(root)
    with tempfile.TemporaryDirectory(prefix="bridge-table-compiled-") as tmp:
        copy, out = Path(tmp) / "src", Path(tmp) / "out"
        copy_tree(root, copy)
        # the PEP 517 hook itself, in this Python: mypy reads the types of the package's
        # dependencies installed here and compiles with the mypy installed here, and
        # setup.py runs once (pip would run it for the metadata first: mypyc twice)
        out.mkdir()
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from setuptools import build_meta; "
             "build_meta.build_wheel(sys.argv[1])", str(out)],
            cwd=copy, env={**os.environ, VARIABLE: "1"}, capture_output=True, text=True)
        wheels = sorted(out.glob("*.whl"))
        if proc.returncode != 0 or len(wheels) != 1 or wheels[0].name.endswith("-any.whl"):
            raise RuntimeError(f"the build failed:\n{(proc.stdout + proc.stderr)[-4000:]}")
        dist.mkdir(exist_ok=True)
        for old in dist.glob("bridge_table-*-cp*.whl"):
            old.unlink()
        wheel = dist / wheels[0].name
        shutil.move(wheels[0], wheel)
    (dist / STAMP.name).write_text(json.dumps({"wheel": wheel.name, "sources": digest},
                                              indent=1) + "\n")
    return wheel


def _ensure_wheel() -> Path:
    wheel = built_wheel()
    if wheel is not None:
        print(f"compiled_build: {wheel.relative_to(ROOT)} matches the sources")
        return wheel
    print("compiled_build: compiling the Laws core and the engine with mypyc into a "
          "wheel (about two minutes)", flush=True)
    wheel = build_wheel()
    print(f"compiled_build: built {wheel.relative_to(ROOT)}")
    return wheel


def _in_ci() -> bool:
    return os.environ.get("CI", "").lower() in ("true", "1")


def _install(wheel: Path, venv: Path) -> Path:
    """``venv`` with ``wheel`` and the test requirements installed; its Python. The clone
    goes at the end of its ``sys.path`` (a .pth file): ``tests`` imports from it, and
    ``controller`` from site-packages, which comes first."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    installed = venv / ".installed-wheel"
    if not installed.exists() or installed.read_text() != STAMP.read_text():
        # the same version as any earlier wheel: installed again, whatever pip thinks
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--force-reinstall",
                        "--no-deps", str(wheel)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", f"{wheel}[test]"],
                       check=True)
        site = subprocess.run([str(python), "-c", "import sysconfig; "
                               "print(sysconfig.get_paths()['purelib'])"],
                              check=True, capture_output=True, text=True).stdout.strip()
        (Path(site) / "bridge_table_clone_tests.pth").write_text(f"{ROOT}\n")
        installed.write_text(STAMP.read_text())
    return python


def test(pytest_args: Sequence[str] = ()) -> int:
    """``make test``'s compiled step: the wheel (built when the tree changed) installed
    in ``VENV``, and ``TESTS`` run against it; 0 when they pass or, outside CI, when this
    machine cannot build."""
    why = cannot_build()
    if why is not None:
        if _in_ci():
            print(f"compiled_build: {why}: the compiled build cannot be tested (CI=true: "
                  "a failure)", file=sys.stderr)
            return 1
        print(f"compiled_build: {why}: the compiled build is not tested here (skipped)")
        return 0
    try:
        python = _install(_ensure_wheel(), VENV)
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"compiled_build: {exc}", file=sys.stderr)
        return 1
    tests = sorted({f for pattern in TESTS for f in glob.glob(pattern, root_dir=ROOT)})
    print(f"compiled_build: {len(tests)} test files against the installed compiled wheel "
          f"({VENV.name})", flush=True)
    # -P: the clone is not put first on sys.path, so that controller is the installed one
    return subprocess.run([str(python), "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           *tests, *pytest_args], cwd=ROOT,
                          env={**os.environ, EXPECT_COMPILED: "1"}).returncode


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args == ["wheel"]:
        why = cannot_build()
        if why is not None:
            print(f"compiled_build: {why}", file=sys.stderr)
            return 1
        try:
            print(_ensure_wheel())
        except RuntimeError as exc:
            print(f"compiled_build: {exc}", file=sys.stderr)
            return 1
        return 0
    if args == ["status"]:
        wheel = built_wheel()
        print(f"{wheel.relative_to(ROOT)} matches the sources" if wheel is not None
              else "no compiled wheel in dist/ matches the sources (make compiled-wheel)")
        return 0 if wheel is not None else 1
    if args[:1] == ["test"]:
        return test(args[1:])
    print("usage: python tools/compiled_build.py wheel|status|test [PYTEST ARGS...]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
