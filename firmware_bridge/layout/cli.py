"""``bridge-table layout``: a table's geometry checked against the design rules, or drawn.

    bridge-table layout check hw_configs/geometry-club.toml [--config TABLE.toml]
    bridge-table layout draw hw_configs/geometry-club.toml --svg OUT.svg [--png OUT.png]
        [--field FIELD.svg]

``check`` prints every finding (``RULE: what, with the numbers``) and exits 1 when there is
one, 0 when the geometry passes, 2 when a file cannot be read. With ``--config`` (or the
geometry's ``[table] config``) it also checks that the reader config maps the same readers,
antennas, seats and zones, and checks each SPI run at the line and clock the config's reader
URL gives it (``mfrc522://0.0?...&speed_hz=1000000``: line spi0 at 1 MHz; ``serial://``: a
Pico's firmware clock). ``draw`` writes the dimensioned drawing as SVG, and as PNG through
Debian's chromium (headless) when ``--png`` is given, and the field model's figure for the
geometry's loop and tag with ``--field``. docs/hardware/layout.md.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from controller.commandline import EXIT_FAILURE, EXIT_OK, EXIT_USAGE
from firmware_bridge.layout.draw import DrawError, field_svg, svg, write_png
from firmware_bridge.layout.geometry import Geometry, load_geometry
from firmware_bridge.layout.readermap import ReaderMap, read_reader_map
from firmware_bridge.layout.rules import check, named_config

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="bridge-table layout",
        description="a table's geometry checked against the design rules, or drawn "
                    "(docs/hardware/layout.md)")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check", help="the design rules (exit 1 naming each rule broken)")
    c.add_argument("geometry", type=Path, help="a geometry file (hw_configs/geometry-*.toml)")
    c.add_argument("--config", type=Path, default=None,
                   help="the table's reader config, checked against the geometry (default: "
                        "the geometry's [table] config, if it names one)")
    d = sub.add_parser("draw", help="the dimensioned drawing: whole table and one seat's edge")
    d.add_argument("geometry", type=Path)
    d.add_argument("--svg", type=Path, required=True, help="where to write the SVG")
    d.add_argument("--png", type=Path, default=None,
                   help="also a PNG, rendered by chromium --headless")
    d.add_argument("--field", type=Path, default=None,
                   help="also the field model's figure for the geometry's loop and tag (SVG)")
    return p


def _load(path: Path) -> Geometry | None:
    geometry, problems = load_geometry(path)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    return geometry


def _check(geometry: Geometry, path: Path | None) -> int:
    config: ReaderMap | None = None
    path = path if path is not None else named_config(geometry)
    if path is not None:
        config, problem = read_reader_map(path)
        if config is None:
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_USAGE
    findings = check(geometry, config)
    for finding in findings:
        print(finding)
    name = geometry.path.name
    if findings:
        print(f"{name}: {len(findings)} finding(s)", file=sys.stderr)
        return EXIT_FAILURE
    print(f"{name}: passes every design rule ({len(geometry.antennas)} antennas, "
          f"{len(geometry.areas)} areas, {len(geometry.devices)} devices, "
          f"{len(geometry.cables)} cable runs)" + (f"; agrees with {config.name}"
                                                    if config is not None else ""))
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    geometry = _load(args.geometry)
    if geometry is None:
        return EXIT_USAGE
    if args.cmd == "check":
        return _check(geometry, args.config)
    try:
        args.svg.write_text(svg(geometry), encoding="utf-8")
        if args.png is not None:
            write_png(args.svg, args.png)
        if args.field is not None:
            args.field.write_text(field_svg(geometry), encoding="utf-8")
    except (OSError, DrawError) as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_USAGE
    return EXIT_OK
