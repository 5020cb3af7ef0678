"""The package's build; its metadata is pyproject.toml's. A pure wheel (what a table's Pi
installs), or with ``BRIDGE_TABLE_MYPYC=1`` the Laws core and the engine's per-event
modules compiled with mypyc (tools/compiled_build.py's ``COMPILED``). Build the compiled
wheel with ``make compiled-wheel``: it builds from a copy of the tree, so that no build
product lands beside the sources, and keeps the wheel in dist/."""

import os
import sys
from pathlib import Path

from setuptools import find_packages, setup  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent

ext_modules: list[object] = []
if os.environ.get("BRIDGE_TABLE_MYPYC") == "1":
    sys.path.insert(0, str(ROOT))
    from tools.compiled_build import extensions

    ext_modules = extensions(ROOT)

# the example configs live in the clone's top-level hw_configs/ (one file per table's
# hardware, beside the packages) and are installed as firmware_bridge/hw_configs/, where
# firmware_bridge/examples.py finds them outside the source tree
setup(ext_modules=ext_modules,
      packages=[*find_packages(include=["controller*", "firmware_bridge*"]),
                "firmware_bridge.hw_configs"],
      package_dir={"firmware_bridge.hw_configs": "hw_configs"})
