"""The example files the package ships (the clone's top-level ``hw_configs/``, installed as
``firmware_bridge/hw_configs/``: setup.py maps it): the simulated
table (``sim.toml`` and its tag registry ``tags-sim.toml``), the two real tables' layouts,
the verification station, the indicator policy and the example Mitchell session.

They are package data, found through ``importlib.resources``, so that the installed package
has them outside the source tree: the demo, ``bridge-table sim``, ``selftest --scripted`` and
``verify`` use them by default, and ``bridge-table examples NAME`` prints where one is
(``bridge-table bridge --config "$(bridge-table examples sim.toml)"``).
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

__all__ = ["EXAMPLES", "ExampleError", "example", "example_names"]


def _folder() -> Path:
    ref = importlib.resources.files("firmware_bridge") / "hw_configs"
    # an installed wheel and a clone are both folders on disk: a zipped install (which pip
    # never makes) would give another Traversable, and the bridge opens these by path
    installed = Path(str(ref))
    if (installed / "sim.toml").is_file():
        return installed
    # a clone (an editable install runs the sources): the folder beside the packages
    return Path(__file__).resolve().parent.parent / "hw_configs"


#: the folder of the shipped examples, in the clone or the installed package
EXAMPLES = _folder()


class ExampleError(LookupError):
    """A name that is not one of the shipped examples; the message lists them."""


def example_names() -> list[str]:
    """The shipped examples' file names, sorted."""
    return sorted(p.name for p in EXAMPLES.iterdir() if p.is_file())


def example(name: str) -> Path:
    """The path of the shipped example ``name`` (``sim.toml``): an :class:`ExampleError`
    naming the shipped ones when there is none by that name, or when the package was
    installed without its data (a wheel built by hand without ``package-data``)."""
    path = EXAMPLES / name
    if Path(name).name != name or not path.is_file():
        names = ", ".join(example_names()) if EXAMPLES.is_dir() else "none"
        raise ExampleError(f"no example {name!r} in {EXAMPLES} (the package's examples: "
                           f"{names})")
    return path
