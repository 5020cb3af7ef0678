"""Backend registries, as python-can keeps its interfaces: a name -> ``"module:attr"`` table
of the backends shipped in the package, plus an entry-point group through which another
distribution adds its own, each imported only when a configuration chooses it.

``firmware_bridge.readers.READERS`` (URL scheme -> reader class, group
``bridge_table.readers``) and :data:`DISPLAYS` (``[display] type`` -> display class, group
``bridge_table.displays``) are the two registries; ``firmware_bridge.config`` validates a
table file against them, so a backend is added in one place. ``docs/config.md`` ("Adding a
reader or display backend") shows a third-party package doing it.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from importlib import metadata
from typing import Any

from firmware_bridge.extras import MissingExtra

__all__ = ["BackendUnavailable", "DISPLAYS", "Registry", "UnknownBackend"]


class UnknownBackend(LookupError):
    """No backend of that name, built in or from an entry point."""


class BackendUnavailable(ImportError):
    """The backend is known but cannot be imported (a missing extra, a broken plug-in)."""


class Registry:
    """The backends of one kind: ``names()`` to validate, ``load(name)`` to use."""

    def __init__(self, kind: str, group: str, builtins: Mapping[str, str]) -> None:
        self.kind = kind
        #: the entry-point group third-party distributions register under
        self.group = group
        #: name -> "module:attr", the backends shipped in this package
        self.builtins: dict[str, str] = dict(builtins)
        self._loaded: dict[str, Any] = {}

    def register(self, name: str, target: str) -> None:
        """Add a backend at run time (``"module:attr"``); an entry point is the lasting way."""
        if ":" not in target:
            raise ValueError(f"{self.kind} backend {name!r}: {target!r} is not 'module:attr'")
        self.builtins[name] = target
        self._loaded.pop(name, None)

    def _entry_points(self) -> dict[str, metadata.EntryPoint]:
        # read on every call: a plug-in installed while a process runs is found on next use
        return {ep.name: ep for ep in metadata.entry_points(group=self.group)}

    def names(self) -> tuple[str, ...]:
        """Every backend name, built in or registered by an installed distribution."""
        return tuple(sorted(set(self.builtins) | set(self._entry_points())))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.names()

    def load(self, name: str) -> Any:
        """The backend's object (a class), imported now. A built-in name wins over an
        entry point of the same name."""
        if name in self._loaded:
            return self._loaded[name]
        target = self.builtins.get(name)
        point = None if target is not None else self._entry_points().get(name)
        if target is None and point is None:
            raise UnknownBackend(f"unknown {self.kind} {name!r} (known: "
                                 f"{', '.join(self.names())})")
        try:
            if point is not None:
                value: Any = point.load()
            else:
                assert target is not None
                module_name, _, attr = target.partition(":")
                value = getattr(importlib.import_module(module_name), attr)
        except MissingExtra as error:
            raise BackendUnavailable(f"{self.kind} {name!r}: {error}") from None
        except Exception as error:  # a plug-in's own bug must not stop the bridge's start
            raise BackendUnavailable(f"{self.kind} {name!r} cannot be loaded: "
                                     f"{type(error).__name__}: {error}") from error
        self._loaded[name] = value
        return value


#: ``[display] type`` -> a class with ``from_config(config, *, stream, title)``
DISPLAYS = Registry("display", "bridge_table.displays", {
    "none": "firmware_bridge.display:NullDisplay",
    "terminal": "firmware_bridge.display:TerminalDisplay",
    "hd44780": "firmware_bridge.display:HD44780Display",
    "ssd1306": "firmware_bridge.display:SSD1306Display",
})
