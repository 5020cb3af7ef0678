"""Which build of the package runs. The clone's Python sources run as written: no build
product lies in the source tree and importing ``controller`` installs no import hook. In
the compiled run (tools/compiled_build.py ``test``, the last step of ``make test``, which
sets ``BRIDGE_TABLE_EXPECT_COMPILED=1``) the installed compiled wheel runs: a module of
``COMPILED`` imported from its source, or from the clone, is then a failure, not a skip."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from importlib.machinery import EXTENSION_SUFFIXES
from pathlib import Path

import controller
from controller.cli import compiled, version
from tools.compiled_build import EXPECT_COMPILED, ROOT, compiled_sources, module_name

#: this run is the compiled one (tools/compiled_build.py ``test``)
COMPILED_RUN = os.environ.get(EXPECT_COMPILED) == "1"


def test_the_compiled_modules_run_compiled_exactly_in_the_compiled_run() -> None:
    files = {module_name(source): Path(importlib.import_module(module_name(source)).__file__
                                       or "") for source in compiled_sources()}
    assert "controller.laws.table" in files and "controller.engine.core" in files
    if COMPILED_RUN:
        assert {m: f for m, f in files.items()
                if not f.name.endswith(tuple(EXTENSION_SUFFIXES))} == {}
        # installed, not the clone's (a compiled module's own __file__ may name the
        # package's folder twice: mypyc's, for a module a compiled module imported first)
        assert Path(controller.__file__).resolve().parent != ROOT / "controller"
    else:
        assert files == {module_name(source): source for source in compiled_sources()}


def test_version_says_which_build_runs() -> None:
    assert compiled() == COMPILED_RUN
    assert version().endswith("(compiled)" if COMPILED_RUN else "(sources)")


def test_no_build_product_lies_in_the_source_tree() -> None:
    # an extension module beside its source would run in place of it (make compiled-wheel
    # builds from a copy of the tree)
    found = [p.relative_to(ROOT).as_posix() for top in ("controller", "firmware_bridge")
             for p in (ROOT / top).rglob("*") if p.name.endswith(tuple(EXTENSION_SUFFIXES))]
    assert found == [], "left by a build in place: delete them"


def test_importing_the_package_installs_no_import_hook() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; hooks = list(sys.meta_path); import controller; "
         "print(sys.meta_path == hooks)"],
        capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "True"
