"""The drawings in docs/hardware/img/ are what ``bridge-table layout draw`` makes of the
shipped geometries today (SVG byte for byte; the PNG rendered from it, at its size)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from firmware_bridge.layout.cli import main
from firmware_bridge.layout.draw import size, svg
from firmware_bridge.layout.geometry import load_geometry

ROOT = Path(__file__).resolve().parents[1]
IMG = ROOT / "docs" / "hardware" / "img"
REGENERATE = ("bridge-table layout draw hw_configs/geometry-{0}.toml "
              "--svg docs/hardware/img/geometry-{0}.svg --png docs/hardware/img/geometry-{0}.png")


@pytest.mark.parametrize("build", ["club", "boards"])
def test_the_committed_drawing_is_generated_from_the_geometry(build: str,
                                                              tmp_path: Path) -> None:
    out = tmp_path / "drawing.svg"
    assert main(["draw", str(ROOT / "hw_configs" / f"geometry-{build}.toml"),
                 "--svg", str(out)]) == 0
    committed = IMG / f"geometry-{build}.svg"
    assert out.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8"), \
        f"regenerate: {REGENERATE.format(build)}"
    png = (IMG / f"geometry-{build}.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    geometry, _ = load_geometry(ROOT / "hw_configs" / f"geometry-{build}.toml")
    assert geometry is not None
    assert struct.unpack(">II", png[16:24]) == size(geometry), REGENERATE.format(build)


def test_the_drawing_shows_every_item_and_the_clearances() -> None:
    geometry, _ = load_geometry(ROOT / "hw_configs" / "geometry-club.toml")
    assert geometry is not None
    drawing = svg(geometry)
    for name in [a.name for a in geometry.antennas] + [a.name for a in geometry.areas]:
        assert f">{name}<" in drawing
    assert ">850 mm<" in drawing
    assert "88.5 mm to dummy N (reach 44)" in drawing   # the check's own numbers


def test_the_committed_field_figure_is_generated_from_the_model(tmp_path: Path) -> None:
    out, field = tmp_path / "drawing.svg", tmp_path / "field.svg"
    assert main(["draw", str(ROOT / "hw_configs" / "geometry-club.toml"), "--svg", str(out),
                 "--field", str(field)]) == 0
    assert field.read_text(encoding="utf-8") == \
        (IMG / "field-model.svg").read_text(encoding="utf-8"), \
        "regenerate: bridge-table layout draw hw_configs/geometry-club.toml --svg /dev/null " \
        "--field docs/hardware/img/field-model.svg"
    assert "Hmin 1.5 A/m" in field.read_text(encoding="utf-8")
