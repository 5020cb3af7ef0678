"""The import graph drawn from the code (every ``import``, at module level or inside a
function): no circle between modules or between the folders of ``controller/`` and
``firmware_bridge/``, no import upward through the layers of ``controller/``, no module
reaching into another's underscore names, the firmware bridge importing only its allow-list
of ``controller/``, and every folder saying its job in its docstring's first line.
docs/architecture.md gives the layers and these rules in words, and where new parts go."""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("controller", "firmware_bridge")
#: the reader firmware runs on a MicroPython board as its own package (``btreader``): its
#: relative imports are the board's, not the host's
FIRMWARE = ROOT / "firmware_bridge" / "mcu" / "btreader"

#: the layers of ``controller/``, lowest first: a unit imports only its own layer's units
#: (without a circle) or lower layers'. ``controller.broker`` (the broker settings, who is
#: who, the private test broker) is a foundation: the bridge, the service and the apps read
#: it; the venue's broker configuration (``controller.venue``) reads the session, so it sits
#: with the apps. ``firmware_bridge`` sits between the replay and the live service (``run``,
#: the demo and the station drive it). docs/architecture.md says the same in words.
LAYERS: tuple[frozenset[str], ...] = (
    frozenset({"controller.laws"}),
    frozenset({"controller", "controller.commandline", "controller.sqlitefile",
               "controller.tomlfile", "controller.wire", "controller.formats",
               "controller.boards", "controller.broker"}),
    frozenset({"controller.evidence", "controller.indicators"}),
    frozenset({"controller.engine"}),
    frozenset({"controller.session"}),
    frozenset({"controller.replay"}),
    frozenset({"firmware_bridge"}),
    frozenset({"controller.service"}),
    frozenset({"controller.web", "controller.broadcast", "controller.verify",
               "controller.demo", "controller.venue", "controller.clubnight",
               "controller.cli"}),
)

#: the only parts of ``controller/`` the firmware bridge (the code on the table's Pi) may
#: import, each with what lies under it: the Pi installs the bridge without the service, the
#: web stack or the session, so a new need is a decision (docs/architecture.md), not a habit
FIRMWARE_BRIDGE_MAY_IMPORT = frozenset({
    "controller.laws", "controller.wire", "controller.indicators", "controller.commandline",
    "controller.tomlfile", "controller.formats.source", "controller.broker.settings",
    "controller.broker.login", "controller.sqlitefile"})


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if FIRMWARE in path.parents:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


MODULES = _modules()
#: every failure points at the rules in words
ARCHITECTURE = "docs/architecture.md: the layers, the rules and where new parts go"


def _target(name: str) -> str | None:
    """The project module ``name`` is, or is in (``pkg.mod.attr`` -> ``pkg.mod``)."""
    while name and name not in MODULES:
        if "." not in name:
            return None
        name = name.rsplit(".", 1)[0]
    return name or None


def _imports(module: str, path: Path) -> Iterable[tuple[int, str, str | None]]:
    """(line, imported module, imported name or None) of every import of a project module."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = _target(alias.name)
                if target is not None:
                    yield node.lineno, target, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[:len(package.split(".")) - node.level + 1]
                base = ".".join([*parts, base] if base else parts)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                if full in MODULES:
                    yield node.lineno, full, None
                else:
                    target = _target(base)
                    if target is not None:
                        yield node.lineno, target, alias.name


def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: first line}."""
    graph: dict[str, dict[str, int]] = {name: {} for name in MODULES}
    for name, path in MODULES.items():
        for line, target, _ in _imports(name, path):
            if target != name:
                graph[name].setdefault(target, line)
    return graph


def _cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def unit(module: str) -> str:
    """The folder (or top-level module) a module belongs to: ``controller.service.daemon``
    -> ``controller.service``; ``firmware_bridge.sim.table`` -> ``firmware_bridge.sim``."""
    parts = module.split(".")
    return ".".join(parts[:2])


def _layer(u: str) -> int:
    name = "firmware_bridge" if u.startswith("firmware_bridge") else u
    for rank, layer in enumerate(LAYERS):
        if name in layer:
            return rank
    raise AssertionError(f"{u} is in no layer of tests/test_import_graph.py: place it in "
                         "LAYERS and in docs/architecture.md's table")


def _unit_graph(graph: Mapping[str, Mapping[str, int]]) -> dict[str, dict[str, str]]:
    """unit -> {imported unit: one import that makes the edge}."""
    units: dict[str, dict[str, str]] = defaultdict(dict)
    for module, targets in graph.items():
        for target, line in targets.items():
            a, b = unit(module), unit(target)
            if a != b:
                units[a].setdefault(b, f"{MODULES[module].relative_to(ROOT)}:{line}")
    return units


def test_the_graph_is_read_from_the_code() -> None:
    graph = _graph()
    assert "controller.engine" in graph["controller.service.engines"]
    assert "controller.service.journal" in graph["controller.service.snapshot"]
    # an import inside a function counts as one at the top
    assert "controller.replay.jobs" in graph["controller.replay.cli"]


def test_cycles_are_found() -> None:
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _cycles({"a": ["b"], "b": []}) == []


def test_no_module_imports_itself_back() -> None:
    assert _cycles(_graph()) == [], ARCHITECTURE


def test_no_folder_imports_itself_back() -> None:
    units = _unit_graph(_graph())
    cycles = _cycles(units)
    detail = [f"{a} -> {b} ({units[a][b]})" for cycle in cycles for a in cycle for b in cycle
              if b in units.get(a, {})]
    assert cycles == [], (ARCHITECTURE, detail)


def test_no_import_goes_up_the_layers() -> None:
    upward = [f"{a} (layer {_layer(a)}) -> {b} (layer {_layer(b)}): {where}"
              for a, targets in _unit_graph(_graph()).items()
              for b, where in targets.items() if _layer(b) > _layer(a)]
    assert upward == [], ARCHITECTURE


def test_every_unit_has_a_layer() -> None:
    for module in MODULES:
        _layer(unit(module))


@pytest.mark.parametrize("bad", [("controller.laws", "controller.engine"),
                                 ("controller.engine", "controller.service")])
def test_an_upward_import_would_be_seen(bad: tuple[str, str]) -> None:
    assert _layer(bad[1]) > _layer(bad[0])


def test_no_module_imports_another_modules_private_names() -> None:
    reached = [f"{path.relative_to(ROOT)}:{line}: {name} of {target}"
               for module, path in MODULES.items()
               for line, target, name in _imports(module, path)
               if name is not None and name.startswith("_") and not name.startswith("__")
               and target != module]
    assert reached == [], ARCHITECTURE


def test_every_folder_says_its_job_first() -> None:
    missing = []
    for package in PACKAGES:
        for init in sorted((ROOT / package).rglob("__init__.py")):
            if FIRMWARE in init.parents or FIRMWARE == init.parent:
                continue
            doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
            first = (doc or "").splitlines()[0].strip() if doc else ""
            if len(first) < 20:
                missing.append(str(init.relative_to(ROOT)))
    assert missing == [], ARCHITECTURE


def _allowed_to_the_bridge(module: str) -> bool:
    return any(module == allowed or module.startswith(f"{allowed}.")
               for allowed in FIRMWARE_BRIDGE_MAY_IMPORT)


def test_the_firmware_bridge_imports_only_its_allow_list() -> None:
    reached = [f"{path.relative_to(ROOT)}:{line}: {target}"
               for module, path in MODULES.items() if module.startswith("firmware_bridge")
               for line, target, _ in _imports(module, path)
               if target.startswith("controller") and not _allowed_to_the_bridge(target)]
    assert reached == [], ("the firmware bridge may import only FIRMWARE_BRIDGE_MAY_IMPORT of "
                           "controller/ (docs/architecture.md, 'The firmware bridge')")


def test_the_allow_list_is_read_as_prefixes() -> None:
    assert _allowed_to_the_bridge("controller.laws.cards")
    assert _allowed_to_the_bridge("controller.broker.settings")
    assert not _allowed_to_the_bridge("controller.broker.mosquitto")
    assert not _allowed_to_the_bridge("controller.lawsuit")
    assert not _allowed_to_the_bridge("controller.engine")


def documented_layers(text: str) -> list[frozenset[str]]:
    """The units of each row of docs/architecture.md's layer table (``| 1 | `wire.py`,
    `formats/` | ... |``), named as LAYERS names them."""
    table = text[text.index("| layer | units | job |"):].splitlines()[2:]
    layers: list[frozenset[str]] = []
    for row in table:
        if not row.startswith("| "):
            break
        cells = row.split(" | ")
        units = set()
        for name in cells[1].split("`")[1::2]:
            name = name.removeprefix("controller/").rstrip("/").removesuffix(".py")
            if name == "firmware_bridge":
                units.add(name)
            else:
                units.add("controller" if name == "__init__" else f"controller.{name}")
        layers.append(frozenset(units))
    return layers


def test_the_layers_in_the_doc_are_the_layers_enforced() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    assert documented_layers(text) == list(LAYERS), \
        "docs/architecture.md's layer table and LAYERS disagree: fix the one that is wrong"


def test_a_unit_missing_from_the_doc_would_be_seen() -> None:
    text = ("| layer | units | job |\n|---|---|---|\n| 0 | `controller/laws/` | core |\n"
            "| 1 | `controller/__init__.py`, `wire.py`, `formats/` | base |\n\nprose")
    assert documented_layers(text) == [
        frozenset({"controller.laws"}),
        frozenset({"controller", "controller.wire", "controller.formats"})]
