"""The dimensioned drawing of a table's geometry, as SVG written directly: the whole table
(every spot and its loop, row, area, device and cable run) and North's edge at a larger
scale, with the sizes, the spots' distances from the edge, each antenna's read reach (the
field model's upper band plus the margin) and the clearance from it to the nearest tag of
every place it must not read. The same geometry gives the same bytes (tests compare the
drawings in docs/hardware/img/ with it). PNG: chromium --headless renders the SVG.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import tempfile
from html import escape
from pathlib import Path

from firmware_bridge.layout.geometry import Geometry, Rect
from firmware_bridge.layout.rules import reach, tag_zones

__all__ = ["svg", "field_svg", "write_png", "DrawError", "size"]

FILL = {"spot": "#cfe8cf", "bid": "#cfe0f5", "board": "#eeeeee", "trick_row": "#fff2b3",
        "call_row": "#dde9f8", "dummy": "#fde0c4", "tray": "#eeeeee", "wallet": "#e8e8e8",
        "display": "#bbbbbb", "led": "#f4b6b6", "button": "#c9c9c9"}
BUS_COLOUR = {"spi": "#1f6fb4", "usb": "#7a3db8", "i2c": "#2a8f3a", "gpio": "#c0602a",
              "power": "#b01c1c"}
MARGIN = 60.0
SCALE_TABLE = 0.8
SCALE_SEAT = 1.25
SEAT_DEPTH = 320.0   # how far in from North's edge the second view reaches (mm)


class DrawError(Exception):
    """The drawing cannot be made (no chromium for a PNG, chromium failed)."""


def _n(value: float) -> str:
    text = f"{value:.1f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


class _View:
    """Table millimetres -> SVG pixels for one panel (y up on the table, down in SVG)."""

    def __init__(self, scale: float, x0: float, y1: float, left: float, top: float) -> None:
        self.scale, self.x0, self.y1, self.left, self.top = scale, x0, y1, left, top
        self.out: list[str] = []

    def px(self, x: float, y: float) -> tuple[float, float]:
        return (self.left + (x - self.x0) * self.scale, self.top + (self.y1 - y) * self.scale)

    def rect(self, r: Rect, fill: str, stroke: str = "#333", dash: str = "",
             width: float = 1.0) -> None:
        x, y = self.px(r.x0, r.y1)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.out.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(r.width * self.scale)}" '
                        f'height="{_n(r.height * self.scale)}" fill="{fill}" stroke="{stroke}" '
                        f'stroke-width="{_n(width)}"{dashed}/>')

    def text(self, x: float, y: float, words: str, size: float = 10.0,
             anchor: str = "middle", rotate: bool = False) -> None:
        px, py = self.px(x, y)
        turn = f' transform="rotate(-90 {_n(px)} {_n(py)})"' if rotate else ""
        self.out.append(f'<text x="{_n(px)}" y="{_n(py)}" font-size="{_n(size)}" '
                        f'text-anchor="{anchor}"{turn}>{escape(words)}</text>')

    def line(self, a: tuple[float, float], b: tuple[float, float], colour: str = "#333",
             width: float = 1.0, dash: str = "") -> None:
        (x1, y1), (x2, y2) = self.px(*a), self.px(*b)
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.out.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" '
                        f'stroke="{colour}" stroke-width="{_n(width)}"{dashed}/>')

    def circle(self, x: float, y: float, r: float, colour: str, dash: str = "3 3") -> None:
        px, py = self.px(x, y)
        self.out.append(f'<circle cx="{_n(px)}" cy="{_n(py)}" r="{_n(r * self.scale)}" '
                        f'fill="none" stroke="{colour}" stroke-width="1" '
                        f'stroke-dasharray="{dash}"/>')

    def dimension(self, a: tuple[float, float], b: tuple[float, float], label: str,
                  colour: str = "#000") -> None:
        """A dimension line with end ticks and its label at the middle."""
        self.line(a, b, colour, 0.8)
        angle = math.atan2(b[1] - a[1], b[0] - a[0]) + math.pi / 2
        tick = 4 / self.scale
        for x, y in (a, b):
            self.line((x - tick * math.cos(angle), y - tick * math.sin(angle)),
                      (x + tick * math.cos(angle), y + tick * math.sin(angle)), colour, 0.8)
        mx, my = (a[0] + b[0]) / 2, (a[1] + b[1]) / 2
        vertical = abs(b[0] - a[0]) < abs(b[1] - a[1])
        if vertical:
            self.text(mx - 3 / self.scale, my, label, 9, rotate=True)
        else:
            self.text(mx, my + 3 / self.scale, label, 9)


def _items(view: _View, geometry: Geometry, labels: bool, small: bool) -> None:
    for area in geometry.areas:
        view.rect(area.rect, FILL.get(area.kind, "#eee"))
        if labels:
            cx, cy = area.rect.centre
            view.text(cx, cy + (4 if small else 0) / view.scale, area.name, 9 if small else 10)
            view.text(cx, cy - 10 / view.scale, f"{_n(area.rect.width)} x "
                                                f"{_n(area.rect.height)}", 8)
    for device in geometry.devices:
        if device.on_top:
            view.rect(device.rect, FILL.get(device.kind, "#ccc"))
            if labels:
                view.text(*device.rect.centre, device.name, 8)
    for antenna in geometry.antennas:
        view.rect(antenna.spot, FILL[antenna.zone])
        view.rect(antenna.loop, "none", "#0a5a0a", "4 2", 1.2)
        if labels:
            view.text(antenna.x, antenna.spot.y1 - 9 / view.scale, antenna.name, 8)
            view.text(antenna.x, antenna.spot.y0 + 4 / view.scale,
                      f"{_n(antenna.spot.width)} x {_n(antenna.spot.height)}", 8)


def _whole_table(geometry: Geometry, top: float) -> tuple[list[str], float]:
    table = geometry.table
    view = _View(SCALE_TABLE, -table.width / 2, table.depth / 2, MARGIN, top + 60)
    view.text(-table.width / 2, table.depth / 2 + 55 / SCALE_TABLE,
              f"{table.name}: the whole table, {_n(table.width)} x {_n(table.depth)} mm "
              f"(frame: {table.frame}), seen from above; dashed: under the top", 13, "start")
    view.rect(table.rect, "#fbfaf6", "#000", width=1.5)
    if table.frame == "steel" and table.frame_width > 0:
        view.rect(table.rect.inset(table.frame_width, table.frame_width), "none", "#777",
                  "2 4")
    _items(view, geometry, labels=True, small=True)
    for device in geometry.devices:
        if not device.on_top:
            view.rect(device.rect, "none", "#555", "5 3")
            view.text(*device.rect.centre, device.name, 8)
    for cable in geometry.cables:
        a, b = geometry.place(cable.source), geometry.place(cable.target)
        if a is not None and b is not None:
            view.line(a, b, BUS_COLOUR.get(cable.bus, "#000"), 0.8, "6 2")
    edge = table.depth / 2 + 14 / SCALE_TABLE
    view.dimension((-table.width / 2, edge), (table.width / 2, edge), f"{_n(table.width)} mm")
    side = table.width / 2 + 14 / SCALE_TABLE
    view.dimension((side, -table.depth / 2), (side, table.depth / 2), f"{_n(table.depth)} mm")
    for seat, (x, y) in (("N", (0, table.depth / 2)), ("S", (0, -table.depth / 2)),
                         ("E", (table.width / 2, 0)), ("W", (-table.width / 2, 0))):
        dx = {"E": 32, "W": -32}.get(seat, 0) / SCALE_TABLE
        dy = {"N": 26, "S": -36}.get(seat, 0) / SCALE_TABLE
        view.text(x + dx, y + dy, seat, 14)
    y = -table.depth / 2 - 50 / SCALE_TABLE
    view.text(-table.width / 2, y - 3 / SCALE_TABLE, "cable runs (centre to centre):", 9,
              "start")
    x = -table.width / 2 + 170 / SCALE_TABLE
    for bus, colour in BUS_COLOUR.items():
        view.line((x, y), (x + 30 / SCALE_TABLE, y), colour, 2)
        view.text(x + 35 / SCALE_TABLE, y - 3 / SCALE_TABLE, bus, 9, "start")
        x += 90 / SCALE_TABLE
    return view.out, top + 60 + table.depth * SCALE_TABLE + 70


def _seat_edge(geometry: Geometry, top: float) -> tuple[list[str], float]:
    table = geometry.table
    half_w, half_d = table.width / 2, table.depth / 2
    view = _View(SCALE_SEAT, -half_w, half_d, MARGIN, top + 40)
    view.text(-half_w, half_d + 40 / SCALE_SEAT,
              "North's edge (the other seats' the same, turned): sizes, the spots' distances "
              "from the edge, each antenna's read reach (dotted) and its clearance to the "
              "nearest tag it must not read (red)", 11, "start")
    band = Rect(-half_w, half_d - SEAT_DEPTH, half_w, half_d)
    view.rect(band, "#fbfaf6", "#000", width=1.5)
    if table.frame == "steel" and table.frame_width > 0:
        view.line((-half_w, half_d - table.frame_width), (half_w, half_d - table.frame_width),
                  "#777", 1, "2 4")
    clip = f'<clipPath id="seat"><rect x="{_n(MARGIN - 20)}" y="{_n(top + 15)}" ' \
           f'width="{_n(table.width * SCALE_SEAT + 40)}" ' \
           f'height="{_n(SEAT_DEPTH * SCALE_SEAT + 25)}"/></clipPath>'
    inner = _View(SCALE_SEAT, -half_w, half_d, MARGIN, top + 40)
    _items(inner, geometry, labels=True, small=False)
    # the table's edge and the band's far side drawn again over the neighbours' items
    inner.line((-half_w, half_d - SEAT_DEPTH), (half_w, half_d - SEAT_DEPTH), "#000", 1.5)
    zones = list(tag_zones(geometry))
    for antenna in geometry.antennas:
        if antenna.seat != "N":
            continue
        lateral, limit = reach(geometry, antenna)
        inner.circle(antenna.x, antenna.y, limit, "#c0392b")
        inner.dimension((antenna.x, antenna.y), (antenna.x, half_d), f"{_n(half_d - antenna.y)}")
        nearest = min(((zone.distance_to(antenna.x, antenna.y), name, zone)
                       for name, zone, owner in zones if owner != antenna.name),
                      key=lambda t: t[0])
        distance, name, zone = nearest
        px = min(max(antenna.x, zone.x0), zone.x1)
        py = min(max(antenna.y, zone.y0), zone.y1)
        inner.line((antenna.x, antenna.y), (px, py), "#c0392b", 1)
        inner.text((antenna.x + px) / 2, (antenna.y + py) / 2 - 12 / SCALE_SEAT,
                   f"{_n(distance)} mm to {name} (reach {_n(limit)})", 8)
    # the chain of widths along the edge, above it
    edge = half_d + 12 / SCALE_SEAT
    for item_x0, item_x1 in sorted({(r.x0, r.x1) for r in _north_rects(geometry)}):
        inner.dimension((item_x0, edge), (item_x1, edge), _n(item_x1 - item_x0))
    out = view.out + [clip, '<g clip-path="url(#seat)">'] + inner.out + ["</g>"]
    return out, top + 40 + SEAT_DEPTH * SCALE_SEAT + 40


def _north_rects(geometry: Geometry) -> list[Rect]:
    rects = [a.spot for a in geometry.antennas if a.seat == "N"]
    rects += [a.rect for a in geometry.areas if a.seat == "N" and a.kind != "dummy"]
    return rects


def size(geometry: Geometry) -> tuple[int, int]:
    """The drawing's width and height in pixels."""
    table = geometry.table
    width = int(math.ceil(2 * MARGIN + max(table.width * SCALE_TABLE,
                                           table.width * SCALE_SEAT) + 40))
    height = int(math.ceil(60 + table.depth * SCALE_TABLE + 70 + 40
                           + SEAT_DEPTH * SCALE_SEAT + 40 + 40))
    return width, height


def svg(geometry: Geometry) -> str:
    """The drawing, as an SVG document."""
    width, height = size(geometry)
    whole, below = _whole_table(geometry, 20)
    seat, _ = _seat_edge(geometry, below)
    head = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif">',
            f"<title>{escape(geometry.table.name)}: table geometry, generated by "
            f"bridge-table layout draw from {escape(geometry.path.name)}</title>",
            f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    # the seat's edge clip path must come before its use: collect defs first
    defs = [line for line in seat if line.startswith("<clipPath")]
    body = [line for line in seat if not line.startswith("<clipPath")]
    return "\n".join([*head, "<defs>", *defs, "</defs>", *whole, *body, "</svg>"]) + "\n"


def write_png(svg_path: Path, png_path: Path) -> None:
    """Render ``svg_path`` to ``png_path`` with Debian's chromium, headless."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise DrawError("no chromium to render the PNG (apt-get install chromium)")
    text = svg_path.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    width = int(first.split('width="', 1)[1].split('"', 1)[0])
    height = int(first.split('height="', 1)[1].split('"', 1)[0])
    with tempfile.TemporaryDirectory() as home:
        try:
            subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                            "--hide-scrollbars", f"--user-data-dir={home}",
                            f"--window-size={width},{height}",
                            f"--screenshot={png_path.resolve()}",
                            svg_path.resolve().as_uri()],
                           check=True, capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError) as error:
            raise DrawError(f"chromium could not render {svg_path}: {error}") from None
    if not png_path.exists():
        raise DrawError(f"chromium wrote no {png_path}")


def field_svg(geometry: Geometry) -> str:
    """The field model's figure for a geometry's loop and tag: the field a tag gets across
    the loop (along each of its axes, at the height of a card on a spot) and above its
    centre, for the three calibrated bands, against Hmin."""
    model = geometry.model
    bands = model.drives
    depth = min((a.depth for a in geometry.antennas), default=4.5)
    width, height, plot_w, plot_h = 900, 380, 360, 260
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif">',
           "<title>the field model: the field a tag gets across and above the loop, "
           "generated by bridge-table layout draw</title>",
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    colours = ("#2a8f3a", "#1f6fb4", "#c0392b")
    h_top = 12.0

    def chart(left: float, title: str, xlabel: str, x_max: float,
              curves: list[tuple[str, str, list[tuple[float, float]]]]) -> None:
        top = 50.0
        sx, sy = plot_w / x_max, plot_h / h_top
        out.append(f'<text x="{_n(left)}" y="30" font-size="13">{escape(title)}</text>')
        out.append(f'<rect x="{_n(left)}" y="{_n(top)}" width="{plot_w}" height="{plot_h}" '
                   'fill="none" stroke="#000"/>')
        for tick in range(0, int(x_max) + 1, 10):
            x = left + tick * sx
            out.append(f'<text x="{_n(x)}" y="{_n(top + plot_h + 14)}" font-size="9" '
                       f'text-anchor="middle">{tick}</text>')
        for tick in range(0, int(h_top) + 1, 2):
            y = top + plot_h - tick * sy
            out.append(f'<text x="{_n(left - 4)}" y="{_n(y + 3)}" font-size="9" '
                       f'text-anchor="end">{tick}</text>')
        y_min = top + plot_h - model.h_min * sy
        out.append(f'<line x1="{_n(left)}" y1="{_n(y_min)}" x2="{_n(left + plot_w)}" '
                   f'y2="{_n(y_min)}" stroke="#000" stroke-dasharray="4 3"/>')
        out.append(f'<text x="{_n(left + plot_w - 4)}" y="{_n(y_min - 4)}" font-size="9" '
                   f'text-anchor="end">Hmin {_n(model.h_min)} A/m</text>')
        out.append(f'<text x="{_n(left + plot_w / 2)}" y="{_n(top + plot_h + 30)}" '
                   f'font-size="10" text-anchor="middle">{escape(xlabel)}</text>')
        for colour, dash, points in curves:
            path = " ".join(f"{_n(left + x * sx)},{_n(top + plot_h - min(h, h_top) * sy)}"
                            for x, h in points)
            dashed = f' stroke-dasharray="{dash}"' if dash else ""
            out.append(f'<polyline points="{path}" fill="none" stroke="{colour}" '
                       f'stroke-width="1.5"{dashed}/>')

    from firmware_bridge.layout.field import mean_normal_field

    across: list[tuple[str, str, list[tuple[float, float]]]] = []
    above: list[tuple[str, str, list[tuple[float, float]]]] = []
    for colour, drive in zip(colours, bands, strict=True):
        for dash, axis in (("", 0), ("5 3", 1)):
            points = []
            for step in range(0, 121):
                d = step * 0.5
                x, y = (d, 0.0) if axis == 0 else (0.0, d)
                points.append((d, abs(mean_normal_field(model.loop, drive.current, model.tag,
                                                        x, y, depth))))
            across.append((colour, dash, points))
        above.append((colour, "", [(z * 0.5, abs(mean_normal_field(
            model.loop, drive.current, model.tag, 0.0, 0.0, max(z * 0.5, 0.5))))
            for z in range(0, 121)]))
    chart(60, f"|mean Hz| over the tag, {_n(depth)} mm above the loop, vs its offset",
          f"offset, mm (solid: along the {_n(model.loop.width)} mm side, dashed: along the "
          f"{_n(model.loop.length)} mm side)",
          60, across)
    chart(510, "|mean Hz| over the tag on the loop's axis, vs height", "height above the "
          "loop, mm", 60, above)
    legend = ", ".join(f"{name} band {_n(drive.current * 1000)} mA ({colour})"
                       for name, drive, colour in zip(("low", "middle", "high"), bands,
                                                      ("green", "blue", "red"), strict=True))
    out.append(f'<text x="60" y="{height - 10}" font-size="10">{escape(legend)}; '
               f'loop {_n(model.loop.width)} x {_n(model.loop.length)} mm, '
               f'{model.loop.turns} turns; tag coil {_n(model.tag.diameter)} mm</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
