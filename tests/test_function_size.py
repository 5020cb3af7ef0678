"""No function in the apps' and the service's code grows past 120 lines (docs/architecture.md,
"Rooms that hold one thing"): a handler that long is doing several jobs, as the console's
``build_app`` once did with about 25 nested handlers in 346 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: the folders held to it, and the longest a function may be there
FOLDERS = ("controller/web", "controller/broadcast", "controller/service")
LONGEST = 120


def long_functions(folder: Path, longest: int = LONGEST) -> list[str]:
    """``path:line name (N lines)`` for each function (nested ones too) over ``longest``."""
    found: list[str] = []
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > longest:
                    found.append(f"{path.relative_to(folder.parent)}:{node.lineno} "
                                 f"{node.name} ({lines} lines)")
    return found


def test_no_function_of_the_apps_and_the_service_is_over_120_lines() -> None:
    found = [f for folder in FOLDERS for f in long_functions(ROOT / folder)]
    assert found == [], f"split these (docs/architecture.md): {found}"


def test_a_long_function_is_seen(tmp_path: Path) -> None:
    body = "\n".join(f"        x{i} = {i}" for i in range(LONGEST))
    (tmp_path / "long.py").write_text(f"def outer() -> None:\n    def inner() -> None:\n{body}\n"
                                      "def short() -> None:\n    pass\n")
    assert long_functions(tmp_path) == [f"{tmp_path.name}/long.py:1 outer (122 lines)",
                                        f"{tmp_path.name}/long.py:2 inner (121 lines)"]
