"""The compiled wheel's build (tools/compiled_build.py): what it compiles, what it is
built from and when it is built again, the compiled step of ``make test`` where no C
compiler is, and (slow tier: about two minutes) the wheel itself, built apart from the
source tree. tests/test_compiled.py checks which build runs."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path

import pytest

from tools import compiled_build
from tools.compiled_build import ROOT


def test_the_modules_compiled_are_the_laws_core_and_the_engines_per_event_modules() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in compiled_build.compiled_sources()}
    assert {"controller/laws/table.py", "controller/laws/play.py", "controller/engine/core.py",
            "controller/indicators/display_text.py", "controller/evidence/payload.py",
            "controller/evidence/tempo.py", "controller/replay/stream.py"} <= names
    assert not names & {"controller/laws/__init__.py", "controller/laws/messages.py",
                        "controller/engine/__init__.py",
                        "controller/wire.py", "controller/replay/line.py"}
    assert compiled_build.module_name(ROOT / "controller/laws/table.py") == \
        "controller.laws.table"


def _laid_out() -> list[str]:
    """One module for each of the other globs of ``COMPILED`` (``engine/*.py``: ``core.py``)."""
    return [pattern.replace("*", "core") for pattern in compiled_build.COMPILED[1:]]


def _tree(root: Path) -> Path:
    """A clone of two core modules and the other modules ``COMPILED`` names."""
    for name in ("__init__.py", "messages.py", "cards.py", "table.py"):
        (root / "controller/laws").mkdir(parents=True, exist_ok=True)
        (root / "controller/laws" / name).write_text(f"# {name}\n")
    for path in _laid_out():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {path}\n")
    (root / "firmware_bridge").mkdir()
    (root / "firmware_bridge/bridge.py").write_text("")
    for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE", "tools/__init__.py",
                 "tools/compiled_build.py"):
        (root / name).parent.mkdir(exist_ok=True)
        (root / name).write_text(f"# {name}\n")
    return root


def test_the_globs_are_taken_in_order_less_the_modules_never_compiled(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    assert [p.relative_to(root).as_posix() for p in compiled_build.compiled_sources(root)] \
        == ["controller/laws/cards.py", "controller/laws/table.py",
            *_laid_out()]


def test_a_glob_that_matches_nothing_is_an_error(tmp_path: Path) -> None:
    # a module that moved (engine.py split up) is not quietly left uncompiled
    root = _tree(tmp_path)
    last = compiled_build.COMPILED[-1]
    for path in root.glob(last):
        path.unlink()
    with pytest.raises(FileNotFoundError, match=re.escape(f"{last} matches nothing")):
        compiled_build.compiled_sources(root)


def test_the_digest_covers_the_whole_tree_the_wheel_packs_and_no_cache(
        tmp_path: Path) -> None:
    root = _tree(tmp_path)
    before = compiled_build.sources_digest(root)
    (root / "controller/laws/__pycache__").mkdir()
    (root / "controller/laws/__pycache__/table.cpython-311.pyc").write_bytes(b"x")
    (root / "controller/laws/table.cpython-311-x86_64-linux-gnu.so").write_bytes(b"x")
    (root / "tests").mkdir()
    (root / "tests/test_table.py").write_text("")  # not in the wheel
    (root / "README.md").write_text("# edited\n")  # no change of what runs
    assert compiled_build.sources_digest(root) == before
    assert "controller/laws/__pycache__" not in {
        p.parent.relative_to(root).as_posix() for p in compiled_build.tree_files(root)}
    # a module not compiled is in the wheel too: a wheel without it would be stale
    (root / "firmware_bridge/bridge.py").write_text("# edited\n")
    assert compiled_build.sources_digest(root) != before


def test_the_wheel_in_dist_is_used_only_while_it_matches_the_tree(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    dist = root / "dist"
    assert compiled_build.built_wheel(root) is None
    dist.mkdir()
    wheel = dist / "bridge_table-0.1.0-cp311-cp311-linux_x86_64.whl"
    wheel.write_bytes(b"")
    stamp = dist / compiled_build.STAMP.name
    stamp.write_text(json.dumps({"wheel": wheel.name,
                                 "sources": compiled_build.sources_digest(root)}))
    assert compiled_build.built_wheel(root) == wheel
    compiled_build.compiled_sources(root)[-1].write_text("# edited\n")
    assert compiled_build.built_wheel(root) is None
    stamp.write_text(json.dumps({"wheel": wheel.name,
                                 "sources": compiled_build.sources_digest(root)}))
    wheel.unlink()
    assert compiled_build.built_wheel(root) is None
    stamp.write_text("{not json")
    assert compiled_build.built_wheel(root) is None


def test_the_compiled_step_without_a_compiler_is_skipped_except_under_ci(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(compiled_build, "cannot_build", lambda: "no C compiler (cc)")
    monkeypatch.setattr(compiled_build, "_ensure_wheel", lambda: pytest.fail("built"))
    monkeypatch.delenv("CI", raising=False)
    assert compiled_build.test() == 0
    assert "no C compiler (cc): the compiled build is not tested here (skipped)" in \
        capsys.readouterr().out
    monkeypatch.setenv("CI", "true")
    assert compiled_build.test() == 1
    assert "CI=true: a failure" in capsys.readouterr().err
    assert compiled_build.main(["wheel"]) == 1


def test_cannot_build_names_what_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    import sysconfig

    monkeypatch.setattr(sysconfig, "get_config_var",
                        lambda name: "no-such-compiler -pthread" if name == "CC" else None)
    assert compiled_build.cannot_build() == \
        "no C compiler (no-such-compiler -pthread; Debian: apt-get install gcc)"


def test_the_command_refuses_an_unknown_word() -> None:
    assert compiled_build.main(["compile"]) == 2


@pytest.mark.processes
def test_the_compiled_wheel_holds_every_compiled_module_and_leaves_the_tree_alone() -> None:
    # the wheel make compiled-wheel keeps in dist/ (built now when the tree changed since:
    # about two minutes)
    why = compiled_build.cannot_build()
    if why is not None and not compiled_build._in_ci():
        pytest.skip(f"{why}: the compiled wheel cannot be built here")
    wheel = compiled_build._ensure_wheel()
    assert compiled_build.built_wheel() == wheel
    assert not wheel.name.endswith("-any.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    for source in compiled_build.compiled_sources():
        stem = source.relative_to(ROOT).with_suffix("").as_posix()
        # the extension module, and its source beside it (controller/wire.py reads the
        # compiled enums' docstrings from it)
        assert [n for n in names if n.startswith(f"{stem}.") and n.endswith(".so")], stem
        assert f"{stem}.py" in names
    assert [n for n in names if n.startswith("controller/laws_core__mypyc.")
            and n.endswith(".so")]
    assert not [n for n in names if n.startswith(("tools/", "tests/"))]
    assert not [p for top in ("controller", "firmware_bridge")
                for p in (ROOT / top).rglob("*.so")]


def test_a_machine_too_small_for_the_build_is_told_before_it_starts(tmp_path: Path) -> None:
    """A 512 MB Pi: the build is not attempted (a gcc process once peaked near 800 MB);
    the reason says how much is free, how much is needed, and what to do instead."""
    small = tmp_path / "meminfo"
    small.write_text("MemTotal:  437000 kB\nMemAvailable:  300000 kB\nSwapFree:  102400 kB\n")
    why = compiled_build.cannot_build(small)
    assert why is not None and why.startswith("392 MiB of memory free")
    assert f"needs about {compiled_build.BUILD_MEMORY_MB}" in why and "docs/install.md" in why
    big = tmp_path / "big"
    big.write_text("MemAvailable:  4000000 kB\nSwapFree:  0 kB\n")
    assert compiled_build.available_memory_mb(big) == 3906
    assert compiled_build.available_memory_mb(tmp_path / "absent") is None
