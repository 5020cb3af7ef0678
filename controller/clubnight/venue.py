"""The night's broker: the venue's locked-down configuration (``bridge-table broker-config``,
``controller.venue.config``) for the session's tables, on loopback, with TLS and a login for
every client (``results`` its ``scorer``), and one reader of its own that a venue has no
use for: ``clubnight``, this program, which follows each table's events (it plays the next
card once the table's bridge has published the last one) and results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from controller import wire
from controller.broker.identity import IdentityError, load_identities
from controller.broker.mosquitto import free_port
from controller.broker.settings import BrokerSettingsError, read_credentials
from controller.venue.config import (
    Account,
    BrokerPlan,
    acl_text,
    hash_passwords,
    write_broker_config,
)

__all__ = ["Venue", "VenueError", "EXTRA_USERS", "write_venue", "join_venue", "CONSOLE_SRC"]

#: the console's ``src`` in its rulings, known to the broker's identities
CONSOLE_SRC = "console-clubnight"


def _reads(*kinds: str) -> tuple[str, ...]:
    return tuple(wire.topic("+", k) for k in kinds)


#: the reader this program adds to the venue's users (the module docstring says why)
EXTRA_USERS = (
    Account("clubnight", "bridge-table club-night: each table's events and results",
            _reads("event", "result")),
)


class VenueError(Exception):
    """A broker's configuration the night cannot join: one line naming what is missing."""


@dataclass(frozen=True)
class Venue:
    """Where the broker's files are and how clients reach it (``port``: of a broker this
    program starts; None for one it joins)."""

    directory: Path
    url: str
    port: int | None = None
    #: the console's ``src``, one the broker's identities allow to give rulings
    console_src: str = CONSOLE_SRC

    @property
    def conf(self) -> Path:
        return self.directory / "mosquitto.conf"

    def credentials(self, user: str) -> Path:
        return self.directory / "clients" / f"{user}.toml"

    @property
    def identities(self) -> Path:
        return self.directory / "identities.toml"



def write_venue(directory: Path, tables: Sequence[str]) -> Venue:
    """broker-config's files for ``tables`` in ``directory`` (its database in ``db/``, on a
    free loopback port), with :data:`EXTRA_USERS` added to its ACL and password file."""
    port = free_port()
    plan = BrokerPlan(tables=list(tables), hosts=["localhost"], ips=["127.0.0.1"], port=port,
                      bind="127.0.0.1", persistence_dir=directory.resolve() / "db",
                      director_src=(CONSOLE_SRC,))
    (directory / "db").mkdir(parents=True, exist_ok=True)
    write_broker_config(plan, directory)
    url = f"mqtts://localhost:{port}"
    add_users(directory, EXTRA_USERS, url)
    return Venue(directory, url, port)


def join_venue(directory: Path, tables: Sequence[str]) -> Venue:
    """The configuration of a broker that already runs (``bridge-table broker-config``'s
    output directory): a login for every program of the night must be in its
    ``clients/``, its URL is the controller's."""
    clients = directory / "clients"
    needed = [f"table-{t}" for t in tables] + [
        "controller", "director", "broadcast", "public", "scorer",
        *(u.username for u in EXTRA_USERS)]
    missing = [u for u in needed if not (clients / f"{u}.toml").is_file()]
    if missing:
        raise VenueError(
            f"{clients}: no login for {', '.join(missing[:8])}"
            f"{' ...' if len(missing) > 8 else ''} (a clubnight user is club-night's own: "
            f"add it with controller.clubnight.venue.add_users, or leave out --join)")
    try:
        url = read_credentials(clients / "controller.toml").get("url", "")
        rulings = sorted(load_identities(directory / "identities.toml").rulings)
    except (BrokerSettingsError, IdentityError) as e:
        raise VenueError(str(e)) from None
    if not url:
        raise VenueError(f"{clients / 'controller.toml'}: no url")
    return Venue(directory, url, None, rulings[0] if rulings else CONSOLE_SRC)


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
