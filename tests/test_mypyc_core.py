"""The optional mypyc build of the Laws core (controller/mypyc_core.py, ``make mypyc``).

When it is installed, every other test runs against it (the golden replay sessions are
then the byte-for-byte check of compiled against source); these tests catch a compiled
core left behind by an edit of its sources, and check the stamp logic itself."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from controller import mypyc_core


def test_an_installed_compiled_core_matches_its_sources() -> None:
    assert mypyc_core.stale() == []


def test_the_output_modules_compiled_with_the_core_are_where_it_looks() -> None:
    # a module moved (controller/display_text.py went into controller/indicators/) would
    # otherwise be left out of the build without a word
    assert all(p.is_file() for p in mypyc_core.sources())
    assert any(p.name == "display_text.py" for p in mypyc_core.sources())


def test_the_core_in_use_is_the_compiled_one_exactly_when_it_is_built() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import controller.laws.table as t; print(t.__file__)"],
        capture_output=True, text=True, cwd=mypyc_core.CORE.parents[1], timeout=120)
    assert proc.returncode == 0, proc.stderr
    compiled = proc.stdout.strip().endswith(".so")
    assert compiled == bool(mypyc_core.compiled_modules())


def test_an_edited_source_makes_the_compiled_core_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    core = tmp_path / "controller" / "laws"
    core.mkdir(parents=True)
    for name in ("__init__.py", "messages.py", "cards.py", "table.py"):
        (core / name).write_text(f"# {name}\n")
    for name in mypyc_core.OUTPUTS:
        (core.parent / name).parent.mkdir(parents=True, exist_ok=True)
        (core.parent / name).write_text(f"# {name}\n")
    monkeypatch.setattr(mypyc_core, "CORE", core)
    monkeypatch.setattr(mypyc_core, "STAMP", core / "mypyc-stamp.json")
    assert mypyc_core.stale() == []  # nothing compiled: nothing stale
    (core / "table.cpython-311-x86_64-linux-gnu.so").write_bytes(b"")
    assert "mypyc-stamp.json" in mypyc_core.stale()[0]
    mypyc_core.STAMP.write_text(json.dumps(mypyc_core._digests()))
    assert [p.name for p in mypyc_core.sources()] == \
        ["cards.py", "table.py", *(Path(name).name for name in mypyc_core.OUTPUTS)]
    assert mypyc_core.stale() == []
    (core / "cards.py").write_text("# edited\n")
    assert mypyc_core.stale() == ["cards.py changed since make mypyc"]
    assert mypyc_core.main(["status"]) == 1
    mypyc_core.clean()
    assert mypyc_core.compiled_modules() == [] and not mypyc_core.STAMP.exists()
    assert mypyc_core.main(["status"]) == 0
