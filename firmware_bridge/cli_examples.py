"""``bridge-table examples [NAME]``: where the package's example files are
(``firmware_bridge.examples``): the folder and its files, or the path of one, so that a
command can be given it (``bridge-table bridge --config "$(bridge-table examples sim.toml)"``)
and a table's file can be started from one."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from firmware_bridge.examples import EXAMPLES, ExampleError, example, example_names

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bridge-table examples",
        description="the example files the package ships: the simulated table (sim.toml, "
                    "tags-sim.toml), the real tables' layouts, the verification station, the "
                    "indicator policy and the example session")
    p.add_argument("name", nargs="?", help="print this example's path (default: the folder "
                                           "and every file in it)")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.name is None:
        print(EXAMPLES)
        for name in example_names():
            print(f"  {name}")
        return 0
    try:
        print(example(args.name))
    except ExampleError as error:
        print(f"bridge-table examples: {error}", file=sys.stderr)
        return 2
    return 0
