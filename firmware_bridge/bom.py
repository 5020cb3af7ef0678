"""The bill of materials as data (``hw_configs/bom.toml``): parts, quantities per build, prices
with where and when each was seen, and the totals the builder's guide quotes.

Pure: a parsed TOML document in, values out (``load_bom`` only reads the file). Problems in the
data are collected (``Bom.problems``), never raised, so that one bad row names itself and the
rest still totals. Money is :class:`decimal.Decimal`, in euros, rounded to the cent only when
shown.

>>> bom = load_bom(Path("hw_configs/bom.toml"))                 # doctest: +SKIP
>>> table_total(bom, "club")                                     # doctest: +SKIP
Decimal('92.95')

Three scopes of quantity: ``table`` (per table), ``club`` (bought once for the whole club:
a roll of wire, a box of screws), and the tagged material priced apart from the table:
``deck`` (one deck's stickers: each board of a session has its own deck) and ``box`` (one
bidding box's stickers), ``wallet`` (one board wallet's sticker).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

__all__ = ["Part", "Build", "Bom", "Kit", "SCOPES", "load_bom", "bom_from_dict",
           "table_total", "scope_total", "kit_total", "render_markdown", "euros",
           "BEGIN_MARK", "END_MARK", "generated_block", "with_block", "write_doc", "BOM_FILE",
           "BOM_DOC"]

#: what a quantity counts: per table, once per club, per tagged deck, bidding box, wallet
SCOPES = ("table", "club", "deck", "box", "wallet")
#: how a price is known: read from a seller's listing or the maker's list price, or estimated
BASES = ("listed", "estimate")

BEGIN_MARK = "<!-- bom:begin (generated from hw_configs/bom.toml by firmware_bridge/bom.py) -->"
END_MARK = "<!-- bom:end -->"


@dataclass(frozen=True)
class Part:
    key: str
    part: str
    number: str
    scope: str
    price: Decimal
    seen: str
    source: str
    basis: str
    #: build name -> quantity (a build that does not use the part is absent)
    quantity: Mapping[str, Decimal]
    notes: str = ""

    def cost(self, build: str) -> Decimal:
        return self.price * self.quantity.get(build, Decimal(0))


@dataclass(frozen=True)
class Build:
    name: str
    title: str
    #: the most this build's table parts may cost (0: no limit)
    limit: Decimal = Decimal(0)


@dataclass(frozen=True)
class Kit:
    """A club's order: ``tables`` tables of one build, the club's own parts once, and the
    tagged decks, bidding boxes and wallets for a session of ``boards`` boards."""

    build: str
    tables: int = 10
    boards: int = 36

    @property
    def boxes(self) -> int:
        return 4 * self.tables


@dataclass
class Bom:
    currency: str = "EUR"
    builds: list[Build] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    kits: list[Kit] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def build(self, name: str) -> Build | None:
        return next((b for b in self.builds if b.name == name), None)

    def parts_of(self, build: str, scope: str) -> list[Part]:
        return [p for p in self.parts if p.scope == scope and build in p.quantity]


def _money(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    try:
        # through str: 0.15 is the cent figure written in the file, not its binary neighbour
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and amount >= 0 else None


def bom_from_dict(data: Mapping[str, Any]) -> Bom:
    """A Bom from the parsed file; every problem found is in ``problems``."""
    bom = Bom(currency=str(data.get("currency", "EUR")))
    if data.get("version") != 1:
        bom.problems.append(f"version must be 1, not {data.get('version')!r}")
    for i, raw in enumerate(data.get("builds", [])):
        where = f"builds[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
            bom.problems.append(f"{where}: a table with a name")
            continue
        limit = _money(raw.get("limit", 0))
        if limit is None:
            bom.problems.append(f"{where}: limit {raw.get('limit')!r} is not an amount")
            limit = Decimal(0)
        bom.builds.append(Build(raw["name"], str(raw.get("title", "")), limit))
    names = {b.name for b in bom.builds}
    keys: set[str] = set()
    for i, raw in enumerate(data.get("parts", [])):
        part = _part(raw, f"parts[{i}]", names, bom.problems)
        if part is None:
            continue
        if part.key in keys:
            bom.problems.append(f"parts[{i}]: key {part.key!r} twice")
            continue
        keys.add(part.key)
        bom.parts.append(part)
    for i, raw in enumerate(data.get("kits", [])):
        where = f"kits[{i}]"
        if not isinstance(raw, dict) or raw.get("build") not in names:
            bom.problems.append(f"{where}: build must be one of {sorted(names)}")
            continue
        tables, boards = raw.get("tables", 10), raw.get("boards", 36)
        if not (isinstance(tables, int) and isinstance(boards, int) and tables > 0
                and boards > 0):
            bom.problems.append(f"{where}: tables and boards are counts above 0")
            continue
        bom.kits.append(Kit(raw["build"], tables, boards))
    return bom


def _part(raw: Any, where: str, builds: set[str], problems: list[str]) -> Part | None:
    if not isinstance(raw, dict):
        problems.append(f"{where}: not a table")
        return None
    found = len(problems)
    texts: dict[str, str] = {}
    for name in ("key", "part", "number", "seen", "source"):
        value = raw.get(name)
        if not isinstance(value, str) or not value.strip():
            problems.append(f"{where}: {name} is missing")
        texts[name] = value if isinstance(value, str) else ""
    scope = raw.get("scope", "table")
    if scope not in SCOPES:
        problems.append(f"{where}: scope {scope!r} is not one of {', '.join(SCOPES)}")
    basis = raw.get("basis")
    if basis not in BASES:
        problems.append(f"{where}: basis {basis!r} is not one of {', '.join(BASES)}")
    price = _money(raw.get("price"))
    if price is None:
        problems.append(f"{where}: price {raw.get('price')!r} is not an amount in euros")
    quantity: dict[str, Decimal] = {}
    raw_quantity = raw.get("quantity")
    if not isinstance(raw_quantity, dict) or not raw_quantity:
        problems.append(f"{where}: quantity = {{ build = count, ... }} is missing")
    else:
        for build, count in raw_quantity.items():
            amount = _money(count)
            if build not in builds:
                problems.append(f"{where}: quantity for unknown build {build!r}")
            elif amount is None:
                problems.append(f"{where}: quantity {count!r} for {build} is not a count")
            else:
                quantity[build] = amount
    if len(problems) > found or price is None:
        return None
    return Part(texts["key"], texts["part"], texts["number"], str(scope), price,
                texts["seen"], texts["source"], str(basis), quantity,
                str(raw.get("notes", "")))


def load_bom(path: Path) -> Bom:
    """Read and check ``path``; an unreadable file is a problem, not an exception."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        return Bom(problems=[f"{path}: {error}"])
    return bom_from_dict(data)


def scope_total(bom: Bom, build: str, scope: str) -> Decimal:
    return sum((p.cost(build) for p in bom.parts_of(build, scope)), Decimal(0))


def table_total(bom: Bom, build: str) -> Decimal:
    """One table's parts, without the club's shared parts and the tagged material."""
    return scope_total(bom, build, "table")


def kit_total(bom: Bom, kit: Kit) -> dict[str, Decimal]:
    """The kit's cost by line: tables, the club's parts, decks, boxes, wallets, and total."""
    lines = {
        "tables": table_total(bom, kit.build) * kit.tables,
        "club": scope_total(bom, kit.build, "club"),
        "decks": scope_total(bom, kit.build, "deck") * kit.boards,
        "boxes": scope_total(bom, kit.build, "box") * kit.boxes,
        "wallets": scope_total(bom, kit.build, "wallet") * kit.boards,
    }
    lines["total"] = sum(lines.values(), Decimal(0))
    return lines


def euros(amount: Decimal) -> str:
    """``Decimal('92.5')`` -> ``92.50``."""
    return str(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _count(amount: Decimal) -> str:
    return str(amount.normalize()) if amount == amount.to_integral() else str(amount)


_SCOPE_TITLES = {
    "table": "per table",
    "club": "once per club",
    "deck": "per tagged deck (priced apart)",
    "box": "per tagged bidding box (priced apart)",
    "wallet": "per board wallet (priced apart)",
}


def render_markdown(bom: Bom) -> str:
    """The tables docs/hardware/bom.md shows between its marks: each build's parts by scope
    with their totals, then each kit."""
    out: list[str] = []
    for build in bom.builds:
        out.append(f"### Build `{build.name}`: {build.title}")
        out.append("")
        for scope in SCOPES:
            parts = bom.parts_of(build.name, scope)
            if not parts:
                continue
            out.append(f"{_SCOPE_TITLES[scope].capitalize()}:")
            out.append("")
            out.append("| part | maker, part number | qty | each € | total € | price seen | "
                       "notes |")
            out.append("|---|---|---:|---:|---:|---|---|")
            for p in parts:
                seen = f"{p.seen}, {p.source}" + (" (estimate)" if p.basis == "estimate"
                                                  else "")
                out.append(f"| {p.part} | {p.number} | {_count(p.quantity[build.name])} | "
                           f"{euros(p.price)} | {euros(p.cost(build.name))} | {seen} | "
                           f"{p.notes} |")
            total = scope_total(bom, build.name, scope)
            out.append(f"| **{_SCOPE_TITLES[scope]}** | | | | **{euros(total)}** | | |")
            out.append("")
        if build.limit:
            out.append(f"One table's parts: **€{euros(table_total(bom, build.name))}** "
                       f"(the goal: under €{euros(build.limit)}).")
            out.append("")
    for kit in bom.kits:
        lines = kit_total(bom, kit)
        out.append(f"### A club kit: {kit.tables} tables of `{kit.build}`, "
                   f"{kit.boards} boards")
        out.append("")
        out.append("| line | € |")
        out.append("|---|---:|")
        out.append(f"| {kit.tables} tables' parts | {euros(lines['tables'])} |")
        out.append(f"| the club's own parts, once | {euros(lines['club'])} |")
        out.append(f"| {kit.boards} tagged decks (one per board) | {euros(lines['decks'])} |")
        out.append(f"| {kit.boxes} tagged bidding boxes (four per table) | "
                   f"{euros(lines['boxes'])} |")
        out.append(f"| {kit.boards} board wallets' tags | {euros(lines['wallets'])} |")
        out.append(f"| **total** | **{euros(lines['total'])}** |")
        out.append(f"| per table | {euros(lines['total'] / kit.tables)} |")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def generated_block(document: str) -> str | None:
    """The text between the marks of ``document`` (None if the marks are missing)."""
    start, end = document.find(BEGIN_MARK), document.find(END_MARK)
    if start < 0 or end < start:
        return None
    return document[start + len(BEGIN_MARK):end].strip("\n") + "\n"


def with_block(document: str, block: str) -> str | None:
    """``document`` with the text between its marks replaced by ``block``."""
    start, end = document.find(BEGIN_MARK), document.find(END_MARK)
    if start < 0 or end < start:
        return None
    return document[:start + len(BEGIN_MARK)] + "\n" + block + document[end:]



#: the data file and the page generated from it, from the repository's root
BOM_FILE = Path("hw_configs") / "bom.toml"
BOM_DOC = Path("docs") / "hardware" / "bom.md"


def write_doc(root: Path = Path(".")) -> list[str]:
    """Rewrite docs/hardware/bom.md's tables from hw_configs/bom.toml: the problems found
    (nothing is written when there are any)."""
    bom = load_bom(root / BOM_FILE)
    if bom.problems:
        return bom.problems
    page = root / BOM_DOC
    document = with_block(page.read_text(encoding="utf-8"), render_markdown(bom))
    if document is None:
        return [f"{page}: the marks {BEGIN_MARK!r} and {END_MARK!r} are missing"]
    page.write_text(document, encoding="utf-8")
    return []
