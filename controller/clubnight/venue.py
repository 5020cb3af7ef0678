"""The night's broker: the venue's locked-down configuration (``bridge-table broker-config``,
``controller.venue.config``) for the session's tables, on loopback, with TLS and a login for
every client, and two readers of its own that the venue's configuration does not have yet:

- ``scorer``: ``bridge-table results`` (the results, feed, alerts and evidence of every
  table), so that it does not share the console's ``director`` login (one connection per
  user: two clients on one login throw each other off);
- ``clubnight``: this program, which follows each table's events (it plays the next card
  once the table's bridge has published the last one) and results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from controller import wire
from controller.broker.mosquitto import free_port
from controller.broker.settings import read_credentials
from controller.venue.config import (
    Account,
    BrokerPlan,
    acl_text,
    hash_passwords,
    write_broker_config,
)

__all__ = ["Venue", "EXTRA_USERS", "write_venue", "CONSOLE_SRC"]

#: the console's ``src`` in its rulings, known to the broker's identities
CONSOLE_SRC = "console-clubnight"


def _reads(*kinds: str) -> tuple[str, ...]:
    return tuple(wire.topic("+", k) for k in kinds)


#: the readers this program adds to the venue's users (the module docstring says why)
EXTRA_USERS = (
    Account("scorer", "bridge-table results: every table's results and records",
            _reads("result", "feed", "alert", "evidence")),
    Account("clubnight", "bridge-table club-night: each table's events and results",
            _reads("event", "result")),
)


@dataclass(frozen=True)
class Venue:
    """Where the broker's files are and how clients reach it."""

    directory: Path
    port: int

    @property
    def conf(self) -> Path:
        return self.directory / "mosquitto.conf"

    def credentials(self, user: str) -> Path:
        return self.directory / "clients" / f"{user}.toml"

    @property
    def identities(self) -> Path:
        return self.directory / "identities.toml"

    @property
    def url(self) -> str:
        return f"mqtts://localhost:{self.port}"


def write_venue(directory: Path, tables: Sequence[str]) -> Venue:
    """broker-config's files for ``tables`` in ``directory`` (its database in ``db/``, on a
    free loopback port), with :data:`EXTRA_USERS` added to its ACL and password file."""
    port = free_port()
    plan = BrokerPlan(tables=list(tables), hosts=["localhost"], ips=["127.0.0.1"], port=port,
                      bind="127.0.0.1", persistence_dir=directory.resolve() / "db",
                      director_src=(CONSOLE_SRC,))
    (directory / "db").mkdir(parents=True, exist_ok=True)
    write_broker_config(plan, directory)
    add_users(directory, EXTRA_USERS, f"mqtts://localhost:{port}")
    return Venue(directory, port)


def add_users(directory: Path, users: Sequence[Account], url: str) -> None:
    """Append ``users`` to broker-config's ``acl`` and ``passwd`` and write each one's
    credentials file, as broker-config writes its own (mode 0600)."""
    import secrets

    clients = directory / "clients"
    passwords: dict[str, str] = {}
    for path in sorted(clients.glob("*.toml")):
        password = read_credentials(path).get("password")
        if password:
            passwords[path.stem] = password
    with open(directory / "acl", "a", encoding="utf-8") as acl:
        acl.write("\n" + acl_text(users, "added by bridge-table club-night") + "\n")
    for user in users:
        passwords[user.username] = secrets.token_urlsafe(24)
        path = clients / f"{user.username}.toml"
        path.touch(mode=0o600)
        path.chmod(0o600)
        path.write_text(f"# {user.username}: {user.what}. Secret: keep it mode 0600.\n"
                        f'url = "{url}"\nusername = "{user.username}"\n'
                        f'password = "{passwords[user.username]}"\nca_file = "ca.crt"\n',
                        encoding="utf-8")
    hash_passwords(directory / "passwd", passwords)
