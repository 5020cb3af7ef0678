"""Where a client of the project finds its broker, and how it logs in: one parser for every
command (controller, bridge, run, broadcast, verify, the web apps).

A setting comes from the first of these that gives it:

1. the command line (``--broker``, ``--username``, ``--password-file``, ``--ca-file``,
   ``--cert-file``, ``--key-file``) or, for the bridge, its table file's ``[broker]`` keys;
2. the environment: ``BRIDGE_TABLE_BROKER``, ``BRIDGE_TABLE_MQTT_USERNAME``,
   ``BRIDGE_TABLE_MQTT_PASSWORD`` or ``BRIDGE_TABLE_MQTT_PASSWORD_FILE``,
   ``BRIDGE_TABLE_MQTT_CA_FILE``, ``BRIDGE_TABLE_MQTT_CERT_FILE``,
   ``BRIDGE_TABLE_MQTT_KEY_FILE``;
3. a credentials file (``--credentials FILE`` or ``BRIDGE_TABLE_MQTT_CREDENTIALS``), the TOML
   file ``bridge-table broker-config`` writes for each client::

       url = "mqtts://broker.venue.lan:8883"
       username = "table-1"
       password = "..."
       ca_file = "ca.crt"          # relative to this file
       # cert_file = "table-1.crt"; key_file = "table-1.key"   (client certificates)

4. the URL's ``user:password@`` part (kept for compatibility; a password on a command line
   is visible to every user of the machine in ``ps``).

A password is therefore never needed on a command line. ``docs/security.md`` describes the
whole deployment. This module imports neither the daemon nor aiomqtt, so the firmware bridge
and the web apps use it without loading the controller.
"""

from __future__ import annotations

import argparse
import logging
import os
import ssl
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from controller.commandline import ControllerError
from controller.tomlfile import TomlFileError, loads_toml

__all__ = ["BrokerSettings", "BrokerSettingsError", "DEFAULT_URL", "ENV",
           "add_broker_arguments", "read_credentials", "resolve", "settings_from_args"]

log = logging.getLogger("bridge_table.broker")

#: setting -> environment variable
ENV: Mapping[str, str] = {
    "url": "BRIDGE_TABLE_BROKER",
    "username": "BRIDGE_TABLE_MQTT_USERNAME",
    "password": "BRIDGE_TABLE_MQTT_PASSWORD",
    "password_file": "BRIDGE_TABLE_MQTT_PASSWORD_FILE",
    "ca_file": "BRIDGE_TABLE_MQTT_CA_FILE",
    "cert_file": "BRIDGE_TABLE_MQTT_CERT_FILE",
    "key_file": "BRIDGE_TABLE_MQTT_KEY_FILE",
    "credentials": "BRIDGE_TABLE_MQTT_CREDENTIALS",
}

DEFAULT_URL = "mqtt://127.0.0.1:1883"
_FILE_KEYS = ("url", "username", "password", "password_file", "ca_file", "cert_file",
              "key_file")


class BrokerSettingsError(ControllerError, ValueError):
    """A broker URL, credentials file or certificate that cannot be used; says which."""


@dataclass(frozen=True)
class BrokerSettings:
    """Where and how to connect: ``BrokerSettings.from_url("mqtts://host:8883", ...)``."""

    host: str = "127.0.0.1"
    port: int = 1883
    tls: bool = False
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None
    keepalive: int = 30
    #: client certificate and its key (PEM), for a broker that logs clients in by certificate
    cert_file: str | None = None
    key_file: str | None = None

    @classmethod
    def from_url(cls, url: str, *, username: str | None = None, password: str | None = None,
                 ca_file: str | None = None, keepalive: int = 30, cert_file: str | None = None,
                 key_file: str | None = None) -> BrokerSettings:
        parts = urlsplit(url if "://" in url else f"mqtt://{url}")
        if parts.scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
            raise BrokerSettingsError(f"broker URL {url!r}: the scheme must be mqtt:// or "
                                      f"mqtts:// (mqtt://HOST:PORT, mqtts://HOST:PORT)")
        if "://" in url and not parts.hostname:
            raise BrokerSettingsError(f"broker URL {url!r}: no host name")
        tls = parts.scheme in ("mqtts", "ssl")
        try:
            port = parts.port or (8883 if tls else 1883)
        except ValueError:
            raise BrokerSettingsError(f"bad port in broker URL {url!r}") from None
        if (cert_file is None) != (key_file is None):
            raise BrokerSettingsError("a client certificate needs both cert_file and key_file")
        if cert_file and not tls:
            raise BrokerSettingsError(f"a client certificate needs an mqtts:// broker URL, "
                                      f"not {url!r}")
        return cls(host=parts.hostname or "127.0.0.1", port=port, tls=tls,
                   username=username or (unquote(parts.username) if parts.username else None),
                   password=password or (unquote(parts.password) if parts.password else None),
                   ca_file=ca_file or None, keepalive=keepalive, cert_file=cert_file or None,
                   key_file=key_file or None)

    def tls_context(self) -> ssl.SSLContext | None:
        """The TLS context of an mqtts:// connection (None for mqtt://): the server is checked
        against ``ca_file`` (else the system's CAs) and its host name; the client certificate
        is presented when one is set."""
        if not self.tls:
            return None
        try:
            context = ssl.create_default_context(cafile=self.ca_file) if self.ca_file else \
                ssl.create_default_context()
            if self.cert_file and self.key_file:
                context.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as e:
            raise BrokerSettingsError(f"TLS files of {self.url}: {e}") from None
        return context

    @property
    def url(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}"

    def client_args(self) -> dict[str, Any]:
        """Keyword arguments for ``aiomqtt.Client``: host, port, login, TLS, keepalive."""
        return {"hostname": self.host, "port": self.port, "username": self.username,
                "password": self.password, "tls_context": self.tls_context(),
                "keepalive": self.keepalive}


def _warn_if_readable(path: Path) -> None:
    try:
        mode = path.stat().st_mode
    except OSError:
        return
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("%s holds a password and is readable by others (mode %o): "
                    "chmod 600 it", path, stat.S_IMODE(mode))


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_bytes().decode("utf-8")
    except OSError as e:
        raise BrokerSettingsError(f"cannot read the {what} {str(path)!r}: "
                                  f"{e.strerror or e}") from None
    except UnicodeDecodeError:
        raise BrokerSettingsError(f"the {what} {str(path)!r} is not UTF-8 text") from None


def read_password_file(path: str | Path) -> str:
    """The password in a file: its first line (a trailing newline is not part of it)."""
    p = Path(path)
    text = _read_text(p, "password file")
    _warn_if_readable(p)
    password = text.splitlines()[0] if text else ""
    if not password:
        raise BrokerSettingsError(f"the password file {str(p)!r} is empty")
    return password


def read_credentials(path: str | Path) -> dict[str, str]:
    """A credentials file's settings; file names in it are made absolute (relative to it)."""
    p = Path(path)
    text = _read_text(p, "credentials file")
    try:
        data = loads_toml(text, str(p))
    except TomlFileError as e:
        raise BrokerSettingsError(f"the credentials file {str(p)!r} is "
                                  f"{e.problem.describe()}") from None
    unknown = sorted(set(data) - set(_FILE_KEYS))
    if unknown:
        raise BrokerSettingsError(f"{str(p)!r}: unknown key(s) {', '.join(unknown)} (known: "
                                  f"{', '.join(_FILE_KEYS)})")
    out: dict[str, str] = {}
    for key, value in data.items():
        if not isinstance(value, str):
            raise BrokerSettingsError(f"{str(p)!r}: {key} must be a string")
        if key.endswith("_file") and value:
            value = str((p.parent / value).resolve())
        out[key] = value
    if "password" in out:
        _warn_if_readable(p)
    return out


def resolve(url: str | None = None, *, credentials: str | Path | None = None,
            username: str | None = None, password: str | None = None,
            password_file: str | Path | None = None, ca_file: str | Path | None = None,
            cert_file: str | Path | None = None, key_file: str | Path | None = None,
            keepalive: int = 30, env: Mapping[str, str] | None = None,
            default_url: str = DEFAULT_URL) -> BrokerSettings:
    """The settings from explicit values, then the environment, then a credentials file,
    then the URL (see the module docstring). Raises :class:`BrokerSettingsError`."""
    environ = os.environ if env is None else env
    explicit: dict[str, str | None] = {
        "url": url, "username": username, "password": password,
        "password_file": str(password_file) if password_file else None,
        "ca_file": str(ca_file) if ca_file else None,
        "cert_file": str(cert_file) if cert_file else None,
        "key_file": str(key_file) if key_file else None,
    }
    cred_path = credentials or environ.get(ENV["credentials"]) or None
    from_file = read_credentials(cred_path) if cred_path else {}

    def pick(key: str) -> str | None:
        return explicit.get(key) or environ.get(ENV[key]) or from_file.get(key) or None

    # a password given at one level wins over a password file at a lower one, and the
    # other way round: take the first level that gives either
    secret: str | None = None
    for level in (explicit, {k: environ.get(ENV[k]) for k in ("password", "password_file")},
                  from_file):
        if level.get("password"):
            secret = level["password"]
            break
        if level.get("password_file"):
            secret = read_password_file(str(level["password_file"]))
            break
    settings = BrokerSettings.from_url(pick("url") or default_url, username=pick("username"),
                                       password=secret, ca_file=pick("ca_file"),
                                       cert_file=pick("cert_file"), key_file=pick("key_file"),
                                       keepalive=keepalive)
    settings.tls_context()  # unreadable CA, certificate or key: say so now, not at connect
    return settings


def add_broker_arguments(ap: argparse.ArgumentParser, *, default_url: str | None = DEFAULT_URL,
                         url_help: str | None = None) -> None:
    """The broker options every command shares. ``default_url=None``: no default (the
    command has its own, e.g. the bridge's table file)."""
    shown = f" (default ${ENV['url']} or {default_url})" if default_url else ""
    ap.add_argument("--broker", default=None,
                    help=url_help or f"mqtt://HOST:PORT or mqtts://HOST:PORT{shown}")
    ap.add_argument("--credentials", default=None,
                    help=f"credentials file (TOML: url, username, password, ca_file, "
                         f"cert_file, key_file), or ${ENV['credentials']}")
    ap.add_argument("--username", default=None, help=f"or ${ENV['username']}")
    ap.add_argument("--password-file", default=None,
                    help=f"file holding the password, or ${ENV['password_file']} or "
                         f"${ENV['password']}")
    ap.add_argument("--password", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--ca-file", default=None, help=f"CA certificate for mqtts://, or "
                                                    f"${ENV['ca_file']}")
    ap.add_argument("--cert-file", default=None,
                    help=f"client certificate (PEM) for mqtts://, or ${ENV['cert_file']}")
    ap.add_argument("--key-file", default=None,
                    help=f"the client certificate's key, or ${ENV['key_file']}")


def settings_from_args(args: argparse.Namespace, *, default_url: str = DEFAULT_URL,
                       keepalive: int = 30) -> BrokerSettings:
    """:func:`resolve` with the options of :func:`add_broker_arguments`."""
    if getattr(args, "password", None):
        log.warning("--password is visible to every user of this machine: use "
                    "--password-file, --credentials or $%s", ENV["password_file"])
    return resolve(args.broker, credentials=args.credentials, username=args.username,
                   password=getattr(args, "password", None), password_file=args.password_file,
                   ca_file=args.ca_file, cert_file=args.cert_file, key_file=args.key_file,
                   keepalive=keepalive, default_url=default_url)
