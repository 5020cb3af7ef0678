"""Run Python code in a fresh interpreter that refuses every module outside the standard
library and the ``controller`` package: what the Laws core promises its embedders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

BLOCK_THIRD_PARTY = (
    "import sys, importlib.abc\n"
    "class Block(importlib.abc.MetaPathFinder):\n"
    "    def find_spec(self, name, path, target=None):\n"
    "        top = name.split('.')[0]\n"
    "        if top not in sys.stdlib_module_names and top != 'controller':\n"
    "            raise ImportError('blocked third-party import: ' + name)\n"
    "sys.meta_path.insert(0, Block())\n"
)


def run_stdlib_only(code: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``code`` run with third-party imports blocked, ``controller`` importable from the
    checkout whatever ``cwd`` is."""
    return subprocess.run([sys.executable, "-c", BLOCK_THIRD_PARTY + code],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
