"""The mypyc build of the Laws core and the engine (controller/mypyc_core.py): built by
``make test`` and ``make demo`` where a C compiler is (``ensure``), by hand with
``make mypyc``.

When it is in place, every other test runs against it (the golden replay sessions are
then the byte-for-byte check of compiled against source: tests/test_replay_golden.py
replays them through the sources too); these tests check the build's bookkeeping: what
it compiles, its stamp, ``ensure`` and ``clean``. The guard that keeps a stale build
from running is tests/test_compiled.py's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import pytest

from controller import compiled, mypyc_core

SUFFIX = EXTENSION_SUFFIXES[0]


def test_a_build_in_place_matches_its_sources() -> None:
    # make test runs ensure first: a build left behind by an edit was built again
    assert mypyc_core.stale() == []


def test_the_modules_compiled_are_where_the_build_looks() -> None:
    # a module moved (controller/display_text.py went into controller/indicators/) would
    # otherwise be left out of the build without a word
    assert all(p.is_file() for p in mypyc_core.sources())
    names = {p.relative_to(mypyc_core.CORE.parent).as_posix() for p in mypyc_core.sources()}
    assert {"laws/table.py", "laws/play.py", "engine/core.py", "indicators/display_text.py",
            "evidence/payload.py"} <= names
    assert not names & {"laws/__init__.py", "laws/messages.py", "wire.py"}
    # and the guard looks for compiled modules in every folder the build puts them in
    folders = {Path(name).parent.as_posix() for name in names}
    assert {"" if f == "." else f for f in folders} <= set(compiled._FOLDERS)


def test_the_core_in_use_is_the_compiled_one_exactly_when_a_matching_build_is_in_place(
        ) -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import controller.laws.table as t; print(t.__file__)"],
        capture_output=True, text=True, cwd=mypyc_core.CORE.parents[1], timeout=120,
        env={k: v for k, v in os.environ.items() if k != compiled.PURE_VARIABLE})
    assert proc.returncode == 0, proc.stderr
    in_use = proc.stdout.strip().endswith(".so")
    assert in_use == (bool(mypyc_core.compiled_modules()) and mypyc_core.stale() == [])


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A package of two core modules and the output modules, as the build sees it."""
    package = tmp_path / "controller"
    core = package / "laws"
    core.mkdir(parents=True)
    for name in ("__init__.py", "messages.py", "cards.py", "table.py"):
        (core / name).write_text(f"# {name}\n")
    for name in mypyc_core.OUTPUTS:
        (package / name).parent.mkdir(parents=True, exist_ok=True)
        (package / name).write_text(f"# {name}\n")
    monkeypatch.setattr(mypyc_core, "CORE", core)
    monkeypatch.setattr(mypyc_core, "STAMP", core / "mypyc-stamp.json")
    monkeypatch.delenv(compiled.PURE_VARIABLE, raising=False)
    return package


def _lay_build(package: Path) -> None:
    """Extension files for every source, and the stamp, as ``build`` leaves them."""
    for source in mypyc_core.sources():
        source.with_name(source.stem + SUFFIX).write_bytes(b"")
    (package / f"{compiled.SHARED}{SUFFIX}").write_bytes(b"")
    mypyc_core.STAMP.write_text(json.dumps(mypyc_core._digests()))


def test_the_stamp_names_each_source_by_its_path_in_the_package(package: Path) -> None:
    assert [p.relative_to(package).as_posix() for p in mypyc_core.sources()] == \
        ["laws/cards.py", "laws/table.py", *mypyc_core.OUTPUTS]
    assert set(mypyc_core._digests()) == {"laws/cards.py", "laws/table.py",
                                          *mypyc_core.OUTPUTS}


def test_an_edited_source_makes_the_build_stale_and_clean_removes_it(
        package: Path) -> None:
    assert mypyc_core.stale() == []  # nothing compiled: nothing stale
    _lay_build(package)
    assert mypyc_core.stale() == []
    assert len(mypyc_core.compiled_modules()) == len(mypyc_core.sources()) + 1
    assert mypyc_core.main(["status"]) == 0
    (package / "laws" / "cards.py").write_text("# edited\n")
    assert mypyc_core.stale() == ["laws/cards.py changed since make mypyc"]
    assert mypyc_core.main(["status"]) == 1
    # an extension left by a module no longer compiled goes too
    (package / "wire.py").write_text("")
    (package / f"wire{SUFFIX}").write_bytes(b"")
    mypyc_core.clean()
    assert mypyc_core.compiled_modules() == [] and not mypyc_core.STAMP.exists()
    assert not (package / f"wire{SUFFIX}").exists()
    assert mypyc_core.main(["status"]) == 0


def test_ensure_leaves_a_matching_build_alone(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _lay_build(package)
    monkeypatch.setattr(mypyc_core, "build", lambda: pytest.fail("built again"))
    assert mypyc_core.ensure() == 0
    assert len(mypyc_core.compiled_modules()) == len(mypyc_core.sources()) + 1


def test_ensure_builds_a_stale_build_again(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _lay_build(package)
    (package / "engine" / "core.py").write_text("# edited\n")
    built: list[bool] = []
    monkeypatch.setattr(mypyc_core, "cannot_build", lambda: None)
    monkeypatch.setattr(mypyc_core, "build", lambda: built.append(True) or 0)
    assert mypyc_core.ensure() == 0 and built == [True]


def test_ensure_builds_again_when_a_module_to_compile_has_no_build(
        package: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a build from before a module joined OUTPUTS: it matches its own sources, and lacks one
    _lay_build(package)
    (package / "engine" / f"core{SUFFIX}").unlink()
    stamp = json.loads(mypyc_core.STAMP.read_text())
    del stamp["engine/core.py"]
    mypyc_core.STAMP.write_text(json.dumps(stamp))
    assert mypyc_core.stale() == []
    built: list[bool] = []
    monkeypatch.setattr(mypyc_core, "cannot_build", lambda: None)
    monkeypatch.setattr(mypyc_core, "build", lambda: built.append(True) or 0)
    assert mypyc_core.ensure() == 0 and built == [True]


def test_ensure_without_a_compiler_runs_the_sources_and_does_not_fail(
        package: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _lay_build(package)
    (package / "engine" / "core.py").write_text("# edited\n")
    monkeypatch.setattr(mypyc_core, "cannot_build", lambda: "no C compiler (cc)")
    assert mypyc_core.ensure() == 0
    assert "no C compiler (cc): the pure Python core runs" in capsys.readouterr().out
    assert mypyc_core.compiled_modules() == []  # the stale build is gone, not kept


def test_ensure_with_the_pure_variable_builds_nothing(
        package: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv(compiled.PURE_VARIABLE, "1")
    monkeypatch.setattr(mypyc_core, "build", lambda: pytest.fail("built"))
    assert mypyc_core.ensure() == 0
    assert "BRIDGE_TABLE_PURE=1" in capsys.readouterr().out


def test_a_failed_build_leaves_the_sources_running(
        package: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(mypyc_core, "cannot_build", lambda: None)
    monkeypatch.setattr(mypyc_core, "build", lambda: 1)
    assert mypyc_core.ensure() == 0
    assert "the build failed" in capsys.readouterr().out


def test_cannot_build_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    monkeypatch.setattr(sysconfig, "get_config_var",
                        lambda name: "no-such-compiler -pthread" if name == "CC" else None)
    assert mypyc_core.cannot_build() == "no C compiler (no-such-compiler -pthread)"


def test_the_command_refuses_an_unknown_word() -> None:
    assert mypyc_core.main(["compile"]) == 2
