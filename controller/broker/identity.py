"""Who is who on the venue's broker: one description shared by ``bridge-table
broker-config`` (its users and ACL) and the controller (the ``src`` it accepts).

mosquitto does not tell a subscriber who published a message, so the identity of an input
is proven by its topic and checked on its ``src``:

1. the ACL lets only ``table-T`` (table T's Pi) publish ``{root}/T/event``, and only the
   director's console publish ``{root}/+/ruling``; with ``use_username_as_clientid`` every
   connection is its user, so nobody logs in as somebody else nor takes over their session;
2. the controller (``bridge-table controller --identities``) accepts on ``{root}/T/event``
   only the ``src`` values table T's bridge uses, and on a ruling only a director's ``src``.
   A table's Pi therefore cannot speak with the console's ``src`` (whose ``seq`` it could
   push past the director's next ruling), nor fill its table's source limit with made-up
   ones: a ``src`` outside this description is answered with an ``error`` and never takes
   a seat among the table's sources.

The description is a TOML file written by broker-config beside the ACL
(``identities.toml``)::

    root = "bridge"
    rulings = ["console-scoring"]      # the src of the director's consoles
    [events]                           # per table (or station): its bridges' src
    "1" = ["table-1-pi"]

Pure: no I/O except :func:`load_identities` reading that file.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DEFAULT_EVENT_SRC", "IDENTITIES_FILE", "Identities", "IdentityError", "SRC",
           "identities_text", "load_identities"]

#: the firmware bridge's default ``src`` (``firmware_bridge.config``), per table
DEFAULT_EVENT_SRC = "table-{t}-pi"
IDENTITIES_FILE = "identities.toml"
#: a ``src`` that may go into a topic (``{root}/{t}/ack/{src}``); ``\Z``, not ``$`` (which
#: also matches before a final newline)
SRC = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")


class IdentityError(Exception):
    """An identities file that cannot be used (the controller stops at start)."""


@dataclass(frozen=True)
class Identities:
    """Which ``src`` may speak where: ``events[t]`` on ``{root}/t/event``, ``rulings`` on
    any table's ``{root}/t/ruling``."""

    events: Mapping[str, frozenset[str]] = field(default_factory=dict)
    rulings: frozenset[str] = frozenset()
    root: str = "bridge"

    def src_problem(self, table: str, kind: str, src: str) -> str | None:
        """Why ``src`` may not send a ``kind`` input for ``table``; None when it may."""
        if table not in self.events:
            return f"refused: table {table[:64]!r} is not in this session's identities"
        allowed = self.rulings if kind == "ruling" else self.events[table]
        if src in allowed:
            return None
        who = "a director's console" if kind == "ruling" else f"table {table}'s bridge"
        return (f"refused: src {src[:64]!r} is not {who} ({', '.join(sorted(allowed))}); "
                f"see docs/security.md")


def _src_list(value: object, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise IdentityError(f"{where} must be a list of src names")
    bad = [v for v in value if not SRC.match(v)]
    if bad:
        raise IdentityError(f"{where}: {bad[0][:40]!r} is not a src (1-64 letters, digits, "
                            f"'_', '.', '-')")
    return frozenset(value)


IDENTITIES_FILE = "identities.toml"


def identities_beside(credentials: str | Path | None) -> Path | None:
    """The ``identities.toml`` that goes with a credentials file: broker-config writes it in
    the folder above ``clients/USER.toml``; docs/install.md puts it in /etc/bridge-table,
    above ``credentials/USER.toml``. Beside the file itself counts too."""
    if not credentials:
        return None
    folder = Path(credentials).parent
    for where in (folder, folder.parent):
        candidate = where / IDENTITIES_FILE
        if candidate.is_file():
            return candidate
    return None


def load_identities(path: Path) -> Identities:
    """Read an identities file; :class:`IdentityError` names the file and the problem."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as e:
        raise IdentityError(f"{path}: {getattr(e, 'strerror', None) or e}") from None
    unknown = set(data) - {"root", "rulings", "events"}
    if unknown:
        raise IdentityError(f"{path}: unknown key {sorted(unknown)[0]!r}")
    root = data.get("root", "bridge")
    events = data.get("events", {})
    if not isinstance(root, str) or not isinstance(events, dict):
        raise IdentityError(f"{path}: root must be a string and [events] a table")
    try:
        return Identities(
            events={str(t): _src_list(v, f"events.{t}") for t, v in events.items()},
            rulings=_src_list(data.get("rulings", []), "rulings"), root=root)
    except IdentityError as e:
        raise IdentityError(f"{path}: {e}") from None


def _toml_list(values: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{v}"' for v in values) + "]"


def identities_text(ids: Identities, header: str = "") -> str:
    """The file :func:`load_identities` reads (every name already checked: no quoting)."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += ["# Who is who: the src each table's bridge and the director's consoles may use.",
              "# Read by bridge-table controller --identities (docs/security.md).",
              f'root = "{ids.root}"', f"rulings = {_toml_list(sorted(ids.rulings))}", "",
              "[events]"]
    lines += [f'"{t}" = {_toml_list(sorted(srcs))}' for t, srcs in ids.events.items()]
    return "\n".join(lines) + "\n"
