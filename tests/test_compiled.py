"""The guard that never lets a compiled build older than its sources run
(controller/compiled.py), on a package laid out in a temporary folder, and on the
package itself in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

import controller
from controller import compiled

SUFFIX = EXTENSION_SUFFIXES[0]


def _package(tmp_path: Path) -> Path:
    """A ``controller`` package with two compiled modules, the shared library and a
    matching stamp."""
    package = tmp_path / "controller"
    (package / "laws").mkdir(parents=True)
    (package / "laws" / "table.py").write_text("WHERE = 'source'\n")
    (package / "laws" / "messages.py").write_text("# never compiled\n")
    (package / "engine.py").write_text("WHERE = 'source'\n")
    for so in ("laws/table", "engine", compiled.SHARED):
        (package / f"{so}{SUFFIX}").write_bytes(b"")
    stamp = package / "laws" / "mypyc-stamp.json"
    stamp.write_text(json.dumps(compiled.digests(
        [package / "laws" / "table.py", package / "engine.py"], package)))
    return package


def test_compiled_modules_are_found_beside_their_sources(tmp_path: Path) -> None:
    package = _package(tmp_path)
    (package / "laws" / f"orphan{SUFFIX}").write_bytes(b"")  # no source: not a module here
    # a build for another Python is one too (``make mypyc-clean`` removes it with the rest)
    (package / "laws" / "play.py").write_text("")
    other_python = package / "laws" / "play.cpython-399-x86_64-linux-gnu.so"
    other_python.write_bytes(b"")
    assert compiled.compiled_sources(package) == {
        "controller.laws.table": package / "laws" / "table.py",
        "controller.laws.play": package / "laws" / "play.py",
        "controller.engine": package / "engine.py"}
    assert compiled.compiled_files(package) == sorted([
        package / "laws" / f"table{SUFFIX}", other_python, package / f"engine{SUFFIX}",
        package / f"{compiled.SHARED}{SUFFIX}"])
    assert compiled.compiled_sources(tmp_path / "nowhere") == {}


def test_a_build_that_matches_its_sources_is_not_stale(tmp_path: Path) -> None:
    assert compiled.stale(_package(tmp_path)) == []


def test_no_build_is_never_stale(tmp_path: Path) -> None:
    package = tmp_path / "controller"
    package.mkdir()
    (package / "engine.py").write_text("")
    assert compiled.stale(package) == []


def test_an_edited_source_makes_the_build_stale(tmp_path: Path) -> None:
    package = _package(tmp_path)
    (package / "engine.py").write_text("WHERE = 'edited'\n")
    assert compiled.stale(package) == ["engine.py changed since make mypyc"]


def test_a_missing_or_broken_stamp_makes_the_build_stale(tmp_path: Path) -> None:
    package = _package(tmp_path)
    stamp = package / "laws" / "mypyc-stamp.json"
    stamp.write_text("{not json")
    assert "readable mypyc-stamp.json" in compiled.stale(package)[0]
    stamp.write_text("[]")
    assert "not a mapping" in compiled.stale(package)[0]
    stamp.unlink()
    assert "readable mypyc-stamp.json" in compiled.stale(package)[0]


def test_a_missing_shared_library_or_module_makes_the_build_stale(tmp_path: Path) -> None:
    package = _package(tmp_path)
    (package / f"engine{SUFFIX}").unlink()
    assert compiled.stale(package) == ["engine.py was compiled but has no module in place"]
    (package / f"{compiled.SHARED}{SUFFIX}").unlink()
    assert "shared library" in compiled.stale(package)[0]


def test_a_stamp_of_file_names_only_an_older_layout_is_stale(tmp_path: Path) -> None:
    package = _package(tmp_path)
    stamp = package / "laws" / "mypyc-stamp.json"
    old = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({Path(k).name: v for k, v in old.items()}))
    assert "laws/table.py changed since make mypyc" in compiled.stale(package)


def test_the_finder_imports_the_named_modules_from_their_sources(tmp_path: Path) -> None:
    package = _package(tmp_path)
    finder = compiled.SourcesFirst({"controller.engine": package / "engine.py"})
    spec = finder.find_spec("controller.engine")
    assert spec is not None and spec.origin == str(package / "engine.py")
    assert finder.find_spec("controller.wire") is None


def _where(env: dict[str, str]) -> list[str]:
    """The files of the core and the engine's core as a fresh process imports them, and
    the package's reason for not running a build."""
    proc = subprocess.run(
        [sys.executable, "-c", "import controller, controller.laws.table as t, "
         "controller.engine.core as e; print(t.__file__); print(e.__file__); "
         "print(len(controller.COMPILED_NOT_USED))"],
        capture_output=True, text=True, env=env, timeout=120,
        cwd=Path(controller.__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_sources_run_when_asked_for_and_a_build_runs_only_when_it_matches() -> None:
    env = {k: v for k, v in os.environ.items() if k != compiled.PURE_VARIABLE}
    table, engine, reasons = _where({**env, compiled.PURE_VARIABLE: "1"})
    assert table.endswith("table.py") and engine.endswith("core.py")
    assert reasons == ("1" if compiled.compiled_sources() else "0")
    table, engine, reasons = _where(env)
    in_place = bool(compiled.compiled_sources())
    built = in_place and compiled.stale() == []
    assert table.endswith(".so") == built and engine.endswith(".so") == built
    assert (reasons != "0") == (in_place and not built)


@pytest.mark.skipif(not compiled.compiled_sources(), reason="no compiled build in place: "
                    "nothing to shadow (make test builds one where a C compiler is)")
def test_an_edited_source_runs_in_place_of_its_build(tmp_path: Path) -> None:
    # a copy of the package with its build, one source edited: the copy runs the edit
    import shutil

    root = Path(controller.__file__).resolve().parent
    copy = tmp_path / "controller"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns("__pycache__"))
    engine = copy / "engine" / "core.py"
    engine.write_text(engine.read_text() + "\nEDITED_AFTER_THE_BUILD = True\n")
    proc = subprocess.run(
        [sys.executable, "-c", "import controller, controller.engine.core as e; "
         "print(e.__file__, e.EDITED_AFTER_THE_BUILD, controller.COMPILED_NOT_USED[0])"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**{k: v for k, v in os.environ.items()
                if k not in (compiled.PURE_VARIABLE, "PYTHONPATH")},
             "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(engine), "True", "engine/core.py", "changed",
                                   "since", "make", "mypyc"]
