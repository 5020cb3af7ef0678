"""What a tag is, and what a program needs of a tag registry: one definition for the bridge
(``firmware_bridge.bridge``), the registry files (``firmware_bridge.tags``), the dealing
station (``controller.verify``) and the simulators. Standard library only, so that any of
them imports it without the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["NULL_REGISTRY", "NullRegistry", "TagInfo", "TagKind", "TagLookup"]

TagKind = Literal["card", "call", "marker", "board"]


@dataclass(frozen=True)
class TagInfo:
    """What a tag is. Exactly one of card (with deck) / call / marker / board is set."""

    uid: str
    kind: TagKind
    card: str | None = None
    deck: str | None = None
    call: str | None = None
    marker: str | None = None
    board: int | None = None
    #: the bidding box a call/marker card belongs to (the seat comes from the antenna)
    box: str | None = None


class TagLookup(Protocol):
    """A tag registry as its users see it: ``firmware_bridge.tags.TagRegistry``, the
    simulated station's ``SimTags``, :data:`NULL_REGISTRY`."""

    def lookup(self, uid: str) -> TagInfo | None:
        """What this tag is, or None when the registry does not know it."""
        ...


class NullRegistry:
    """No registry configured: every tag is unknown (published as ``unknown: true``)."""

    def lookup(self, uid: str) -> TagInfo | None:
        return None

    def __len__(self) -> int:
        return 0


NULL_REGISTRY = NullRegistry()
