"""The Laws core imports nothing outside the standard library and does no I/O."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from stdlib_only import run_stdlib_only

CORE = Path(__file__).resolve().parents[1] / "controller" / "laws"
FORBIDDEN_STDLIB = {"asyncio", "socket", "sqlite3", "subprocess", "threading", "os", "io",
                    "pathlib", "time", "random", "shutil", "tempfile"}


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


def test_core_files_exist() -> None:
    names = {p.stem for p in CORE.glob("*.py")}
    assert {"cards", "auction", "play", "table", "scoring", "messages"} <= names


def test_core_imports_only_the_standard_library() -> None:
    offenders = []
    for path in sorted(CORE.glob("*.py")):
        for lineno, module in _imports(path):
            top = module.split(".")[0]
            if top == "__future__":
                continue
            if top not in sys.stdlib_module_names or top in FORBIDDEN_STDLIB:
                offenders.append(f"{path.name}:{lineno}: {module}")
    assert offenders == []


def test_core_does_not_open_files_or_read_clocks() -> None:
    offenders = []
    for path in sorted(CORE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                    and node.func.id in ("open", "input", "print"):
                offenders.append(f"{path.name}:{node.lineno}: {node.func.id}()")
    assert offenders == []


def test_core_imports_in_a_clean_interpreter_without_third_party_modules() -> None:
    # Block every non-stdlib import, then import the whole core.
    code = (
        "import pkgutil, importlib, controller.laws as core\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('controller.laws.' + m.name)\n"
        "print('ok')\n"
    )
    proc = run_stdlib_only(code, CORE.parents[1])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"
