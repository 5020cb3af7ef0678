"""The tiers of the test suite: which tests start a broker, processes or a browser.

tests/conftest.py marks each collected test with what it uses, read from the source of its
module (no test runs for it): ``broker`` (a mosquitto of its own: the ``mosquitto`` fixture,
tests/broker.py's ``Mosquitto`` or ``venue_broker``), ``processes`` (a child process:
subprocess, multiprocessing, ``sys.executable``, ``os.fork``, or a helper module of tests/
that starts them, as tests/faultsession.py does), ``browser`` (the ``chromium_browser``
fixture). ``make check`` runs the rest, the fast tier (``--fast``); ``make test`` runs all.

A test is read where it can be: its function's body, the fixtures it requests (with theirs),
and the module's names that those use, followed into the module's own functions, classes and
constants and into tests/'s helper modules. Where its function cannot be found in its
module's source, the whole module is read.

What cannot be read from a test's source (a package function that starts a process inside
it) is named in ``PACKAGE_TIERS``; the fast tier's guard (tests/conftest.py) fails a test of
the fast tier that starts a process anyway, so a rule that misses a test is seen, not
silently turned into a slow fast tier.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

TESTS = Path(__file__).resolve().parent

#: what the fast tier (make check, ``pytest --fast``) leaves out
SLOW_TIERS = ("broker", "processes", "browser", "fault", "slow")

#: a dotted origin (a module, or a module's name) -> the tier that using it puts a test in;
#: a name matches its own entry and any entry of a module or class that holds it
ORIGIN_TIERS: dict[str, str] = {
    "controller.broker.mosquitto.Mosquitto": "broker",
    "subprocess": "processes",
    "multiprocessing": "processes",
    "concurrent.futures.ProcessPoolExecutor": "processes",
    "asyncio.create_subprocess_exec": "processes",
    "asyncio.create_subprocess_shell": "processes",
    "asyncio.subprocess": "processes",
    "sys.executable": "processes",
    "os.fork": "processes",
    "os.forkpty": "processes",
    "os.posix_spawn": "processes",
    "os.posix_spawnp": "processes",
    "os.system": "processes",
    "os.popen": "processes",
    "os.execv": "processes",
    "os.execvp": "processes",
    "os.execvpe": "processes",
    "os.execl": "processes",
    "os.execlp": "processes",
    "pty.spawn": "processes",
    "playwright": "browser",
}

#: the package's functions that start a process inside them, which a test's source does not
#: show (found by the fast tier's guard)
PACKAGE_TIERS: dict[str, str] = {
    # the venue's certificates: Debian's openssl
    "controller.venue.config.write_broker_config": "processes",
    "controller.venue.cli.main": "processes",
    "controller.venue.config.make_ca": "processes",
    "controller.venue.config.make_cert": "processes",
    "controller.venue.config.revoke_cert": "processes",
    "controller.venue.config.write_crl": "processes",
    # the reader firmware precompiled: mpy-cross is a program of its own
    "firmware_bridge.flash.compile_firmware": "processes",
    "firmware_bridge.flash.flash": "processes",
    # the demo starts its own mosquitto
    "controller.demo.runner.run_demo": "broker",
    "controller.demo.cli.main": "broker",
}

#: a fixture's methods that start a process (pytester's runs in a child process)
FIXTURE_METHOD_TIERS: dict[str, str] = {
    "pytester.runpytest_subprocess": "processes",
    "pytester.run": "processes",
    "pytester.popen": "processes",
    "pytester.spawn": "processes",
    "pytester.spawn_pytest": "processes",
}

#: the conftest fixtures and the tier that requesting one puts a test in
FIXTURE_TIERS: dict[str, str] = {
    "mosquitto": "broker",
    "chromium_browser": "browser",
}


def tier_of_origin(origin: str) -> str | None:
    """The tier of a dotted origin (``subprocess.run``, ``sys.executable``), if it has one."""
    parts = origin.split(".")
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        tier = ORIGIN_TIERS.get(prefix) or PACKAGE_TIERS.get(prefix)
        if tier is not None:
            return tier
    return None


@dataclass
class ModuleSource:
    """One module's source: what its names are bound to and where its names are defined."""

    name: str
    tree: ast.Module
    #: a name bound by an import -> its dotted origin ("subprocess", "broker.Mosquitto")
    imports: dict[str, str] = field(default_factory=dict)
    #: a module-level name -> the nodes that define it (def, class, assignment's value)
    definitions: dict[str, list[ast.AST]] = field(default_factory=dict)
    #: a fixture's name (``@pytest.fixture(name=...)`` or its function's) -> its function
    fixtures: dict[str, ast.AST] = field(default_factory=dict)

    @classmethod
    def parse(cls, name: str, source: str) -> ModuleSource:
        tree = ast.parse(source)
        module = cls(name, tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.imports[alias.asname] = alias.name
                    else:
                        top = alias.name.split(".")[0]
                        module.imports[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in tree.body:
            module._define(node)
        return module

    def _define(self, node: ast.stmt) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            self.definitions.setdefault(node.name, []).append(node)
            if not isinstance(node, ast.ClassDef):
                fixture_name = _fixture_name(node)
                if fixture_name is not None:
                    self.fixtures[fixture_name] = node
            else:
                for member in node.body:
                    if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                        fixture_name = _fixture_name(member)
                        if fixture_name is not None:
                            self.fixtures.setdefault(fixture_name, member)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and node.value is not None:
                        self.definitions.setdefault(name.id, []).append(node.value)
        elif isinstance(node, ast.If | ast.Try | ast.With):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    self._define(child)

    def test_function(self, function: str, cls: str | None) -> ast.AST | None:
        """The def of a test (a method of ``cls`` where it is in a class)."""
        if cls is None:
            found = [node for node in self.definitions.get(function, ())
                     if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]
            return found[-1] if found else None
        members = _methods(self, cls).get(function)
        return members[0] if members else None


def _fixture_name(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    for decorator in node.decorator_list:
        call = decorator if isinstance(decorator, ast.Call) else None
        target = call.func if call is not None else decorator
        if _dotted(target) not in ("pytest.fixture", "fixture", "pytest_asyncio.fixture"):
            continue
        if call is not None:
            for keyword in call.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
        return node.name
    return None


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a chain of attributes on a name, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


class Reader:
    """Reads the tiers out of modules' sources, each module parsed once."""

    def __init__(self, tests: Path = TESTS) -> None:
        self.tests = tests
        self._modules: dict[str, ModuleSource | None] = {}
        self._definition_tiers: dict[tuple[str, str], frozenset[str]] = {}

    def module(self, name: str) -> ModuleSource | None:
        if name not in self._modules:
            path = self.tests / f"{name}.py"
            self._modules[name] = (ModuleSource.parse(name, path.read_text(encoding="utf-8"))
                                   if path.is_file() else None)
        return self._modules[name]

    def tiers_of_test(self, module_name: str, function: str, cls: str | None,
                      fixturenames: Iterable[str]) -> frozenset[str]:
        """The tiers of one test: its function, its fixtures, what they use."""
        tiers: set[str] = set()
        fixturenames = list(fixturenames)
        for fixture in fixturenames:
            if fixture in FIXTURE_TIERS:
                tiers.add(FIXTURE_TIERS[fixture])
        module = self.module(module_name)
        if module is None:
            return frozenset(tiers)
        node = module.test_function(function, cls)
        if node is None:
            # a test the module makes some other way: the whole module is what it may use
            return frozenset(tiers | self.tiers_of_module(module_name))
        seen: set[int] = set()
        tiers |= self._tiers_of_nodes(module, [node], seen, cls)
        fixture_nodes = [module.fixtures[name] for name in fixturenames
                         if name in module.fixtures]
        tiers |= self._tiers_of_nodes(module, fixture_nodes, seen, cls)
        return frozenset(tiers)

    def tiers_of_module(self, module_name: str) -> frozenset[str]:
        module = self.module(module_name)
        if module is None:
            return frozenset()
        return frozenset(self._tiers_of_nodes(module, list(module.tree.body), set(), None))

    def _tiers_of_definition(self, module_name: str, name: str) -> frozenset[str]:
        """The tiers of a module-level name of a helper module in tests/."""
        key = (module_name, name)
        if key in self._definition_tiers:
            return self._definition_tiers[key]
        self._definition_tiers[key] = frozenset()  # a cycle of helpers adds nothing
        module = self.module(module_name)
        tiers: frozenset[str] = frozenset()
        if module is not None:
            if name in module.imports:
                tiers = self._tiers_of_origin(module.imports[name])
            else:
                tiers = frozenset(self._tiers_of_nodes(
                    module, list(module.definitions.get(name, ())), set(), None))
        self._definition_tiers[key] = tiers
        return tiers

    def _tiers_of_origin(self, origin: str) -> frozenset[str]:
        tier = tier_of_origin(origin)
        if tier is not None:
            return frozenset({tier})
        helper = self.helper_module(origin)
        if helper is not None:
            return self._tiers_of_definition(*helper)
        return frozenset()

    def helper_module(self, origin: str) -> tuple[str, str] | None:
        """(module, name) where ``origin`` names a name of a module of tests/ (``broker.X``,
        ``tests.faultsession.Y``), else None."""
        parts = origin.split(".")
        if parts[0] == "tests":
            parts = parts[1:]
        if len(parts) < 2 or not (self.tests / f"{parts[0]}.py").is_file():
            return None
        return parts[0], parts[1]

    def _tiers_of_nodes(self, module: ModuleSource, nodes: list[ast.AST], seen: set[int],
                        cls: str | None) -> set[str]:
        tiers: set[str] = set()
        pending = list(nodes)
        methods = _methods(module, cls)
        while pending:
            node = pending.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            for reference in _references(node):
                base = reference.split(".")[0]
                if reference in FIXTURE_METHOD_TIERS:
                    tiers.add(FIXTURE_METHOD_TIERS[reference])
                elif base in ("self", "cls") and cls is not None:
                    attr = reference.split(".")[1] if "." in reference else ""
                    pending.extend(methods.get(attr, ()))
                elif base in module.imports:
                    origin = module.imports[base] + reference[len(base):]
                    tiers |= self._tiers_of_origin(origin)
                elif base in module.definitions:
                    pending.extend(module.definitions[base])
        return tiers


def _methods(module: ModuleSource, cls: str | None) -> dict[str, list[ast.AST]]:
    methods: dict[str, list[ast.AST]] = {}
    if cls is None:
        return methods
    for node in module.definitions.get(cls, ()):
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    methods.setdefault(member.name, []).append(member)
    return methods


def _references(node: ast.AST) -> Iterator[str]:
    """Each name and each longest chain of attributes on a name that ``node`` uses."""
    inner: set[int] = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Attribute) and id(child) not in inner:
            dotted = _dotted(child)
            value: ast.AST = child.value
            while isinstance(value, ast.Attribute):
                inner.add(id(value))
                value = value.value
            if dotted is not None:
                yield dotted
        elif isinstance(child, ast.Name):
            yield child.id
