"""``bridge-table broker-config``: a locked-down mosquitto for a venue.

::

    bridge-table broker-config 1-12,A1 --out broker/ --host scoring.venue.lan --ip 192.168.1.2

writes into ``broker/``:

- ``mosquitto.conf``: a TLS listener (port 8883) logging clients in by password; with
  ``--client-certs`` a second TLS listener (8884) logging them in by certificate
  (``use_identity_as_username``); a plain listener on loopback only with ``--local-port``;
  ``allow_anonymous false``; persistence saved every second; queues sized for the session;
- ``acl``: what each user may publish and read (``docs/security.md`` has the table);
- ``passwd``: the users' hashed passwords (``mosquitto_passwd -U``);
- ``certs/``: a CA for the venue and the broker's certificate (``openssl``), unless given with
  ``--cafile/--certfile/--keyfile``;
- ``clients/USER.toml`` (mode 0600): each client's credentials file (URL, user, password, CA),
  read by every command with ``--credentials FILE`` or ``$BRIDGE_TABLE_MQTT_CREDENTIALS``;
  with ``--client-certs`` also ``clients/USER-cert.toml`` with its certificate and key.

Users: ``table-T`` for each table's Pi (publishes only its own ``event``, ``bridge``,
``health``; reads only its own ``indicator`` and acknowledgements), ``verify-S`` for a
verification station, ``controller``, ``director`` (the console: reads everything, publishes
rulings), ``broadcast`` (reads what it relays, publishes ``public/#``), ``scorer``
(``bridge-table results``: reads the results, feed, alerts and evidence), ``vugraph`` and
``public`` (read ``public/#`` only; ``public`` for spectators' own programs). Running it
again keeps every password, except those named by ``--rotate``.
"""

from __future__ import annotations

import base64
import contextlib
import datetime
import hashlib
import ipaddress
import os
import re
import secrets
import shutil
import socket
import subprocess
import tempfile
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller import wire
from controller.broker.identity import (
    DEFAULT_EVENT_SRC,
    IDENTITIES_FILE,
    SRC,
    Identities,
    identities_text,
)
from controller.broker.settings import BrokerSettingsError, read_credentials
from controller.session import SessionError, load_session
from controller.session.schedule import ScheduleError, load_schedule

__all__ = ["Account", "BrokerConfigError", "BrokerPlan", "Limits", "accounts", "acl_text",
           "identities", "limits", "make_ca", "make_cert", "mosquitto_conf",
           "parse_tables", "revoke_cert", "write_broker_config", "write_crl"]

#: a topic root or one topic level: no wildcard, no empty level, no leading ``$``
TOPIC_LEVELS = re.compile(r"[A-Za-z0-9_.-]+(/[A-Za-z0-9_.-]+)*\Z")
#: outputs of the controller on ``{root}/{t}/...`` (docs/wire-contract.md)
CONTROLLER_OUTPUTS = ("state", "alert", "indicator", "result", "feed", "error", "evidence")
#: what a table's Pi publishes on ``{root}/{t}/...``
BRIDGE_OUTPUTS = ("event", "bridge", "health")
#: the acknowledgements the controller gives a table's bridge: ``{root}/{t}/ack/{src}``
#: (``wire.ack_topic``); ``ack/#`` is the old spelling of the same
DEFAULT_ACK = "ack"
SERVICE_USERS = ("controller", "director", "broadcast", "scorer", "vugraph", "public")
#: what ``bridge-table results`` reads of every table (``controller.service.ranking.KINDS``)
SCORER_READS = ("result", "feed", "alert", "evidence")
#: what the director's console reads of every table (``controller.web.listener.TOPICS``),
#: and the verification stations' verdicts (``bridge-table verify``)
DIRECTOR_READS = ("state", "alert", "result", "indicator", "bridge", "health", "error",
                  "event", "feed", "evidence", "verify")
#: what the broadcast relay reads of every table (``controller.broadcast.relay``)
RELAY_READS = ("state", "feed", "alert", "result")


class BrokerConfigError(Exception):
    """A table list, file or tool that stops the configuration being written."""


@dataclass(frozen=True)
class Account:
    """One MQTT user and what the ACL lets it do (topic filters)."""

    username: str
    what: str
    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()


@dataclass
class BrokerPlan:
    """Everything ``write_broker_config`` needs; the defaults are the shipped ones."""

    tables: Sequence[str]
    stations: Sequence[str] = ()
    hosts: Sequence[str] = ()
    ips: Sequence[str] = ()
    port: int = 8883
    bind: str = ""
    client_certs: bool = False
    cert_port: int = 8884
    local_port: int | None = None
    root: str = "bridge"
    public: str = "public"
    ack: str = DEFAULT_ACK
    #: a table's Pi also runs its table's controller (``bridge-table run``)
    table_controllers: bool = False
    #: where the files will be on the broker (default: the output directory itself)
    install_dir: Path | None = None
    persistence_dir: Path = Path("/var/lib/mosquitto")
    #: seconds between saves of the broker's database (each save writes all of it)
    autosave: int = 1
    #: messages queued for one client while it is away (0: computed from the tables)
    max_queued: int = 0
    max_inflight: int = 100
    rotate: Sequence[str] = ()
    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None
    #: extra lines appended to mosquitto.conf (e.g. "user root" for a test broker)
    extra: Sequence[str] = field(default_factory=tuple)
    #: partitioned controllers (``--partition K/N``): a user ``controller-partKofN`` each
    partitions: int = 0
    #: the ``src`` of a table's bridges, ``{t}`` the table (``controller.broker.identity``)
    event_src: Sequence[str] = (DEFAULT_EVENT_SRC,)
    #: the ``src`` of the director's consoles (default ``console-`` this machine's name,
    #: the console's own default)
    director_src: Sequence[str] = ()
    #: bytes queued for one client that is away, and the broker's heap (0: from the tables)
    max_queued_bytes: int = 0
    memory_limit: int = 0


def parse_tables(spec: str) -> list[str]:
    """``"1-12,A1"`` -> ``["1", ..., "12", "A1"]``: ``wire.parse_tables``, the one reading of
    a list of tables (ids checked, order kept, no repeats)."""
    try:
        return list(wire.parse_tables(spec))
    except ValueError as e:
        raise BrokerConfigError(str(e)) from None


def check_id(name: str) -> str:
    """``name`` if it can be a table or station id (``wire.table_id_problem``)."""
    problem = wire.table_id_problem(name)
    if problem is not None:
        raise BrokerConfigError(f"{problem}: it cannot be a table or station id")
    return name


def _looks_like_a_session(path: Path) -> bool:
    """A TOML file with a ``[session]`` or ``[movement]`` table is meant as a session file:
    its errors are a session file's, said as every command says them."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "session" in data or "movement" in data


def tables_from_file(path: Path) -> list[str]:
    """The tables a session file (``controller.session``) or a schedule file names; a file
    meant as either one has its own errors said (a session file's key and line, as every
    command says them), not "neither" of the two."""
    session_error: Exception | None = None
    try:
        session = load_session(path)
    except SessionError as e:
        if _looks_like_a_session(path):
            raise BrokerConfigError(str(e)) from None
        session, session_error = None, e
    if session is not None:
        names: list[str] = []
        for rnd in session.movement.rounds:
            names += [str(t) for t in rnd.tables if str(t) not in names]
        return [check_id(n) for n in names]
    try:
        schedule = load_schedule(path)
    except (ScheduleError, OSError, ValueError) as e:
        raise BrokerConfigError(f"{path}: neither a session file ({session_error}) nor a "
                                f"schedule file ({e})") from None
    return [check_id(t) for t in schedule]


def identities(plan: BrokerPlan) -> Identities:
    """Who is who (``controller.broker.identity``): each table's and station's bridge ``src`` and
    the director's consoles' ``src``; the ACL's users and the controller's checks follow."""
    return Identities(
        events={t: frozenset(tpl.format(t=t) for tpl in plan.event_src)
                for t in (*plan.tables, *plan.stations)},
        rulings=frozenset(plan.director_src or (f"console-{socket.gethostname()}",)),
        root=plan.root)


def accounts(plan: BrokerPlan) -> list[Account]:
    """Every user of the venue's broker and its ACL, every topic from ``controller.wire``'s
    builders. With ``use_username_as_clientid`` a user is one connection: a program that
    holds two at once has a user for each (a Pi's bridge and its controller, a verification
    station's bridge and its checker, each partitioned controller)."""
    r, p = plan.root, plan.public
    ids = identities(plan)

    def of(table: str, *kinds: str) -> list[str]:
        return [wire.topic(table, k, root=r) for k in kinds]

    def acks(table: str) -> list[str]:
        return [wire.ack_topic(table, src, root=r) for src in sorted(ids.events[table])]

    out: list[Account] = []
    for t in plan.tables:
        # the controller's status (read only): the bridge sends again what is not
        # acknowledged when a controller comes online (firmware_bridge.publisher), which
        # it cannot see without it; with a controller on the Pi, that one's status too
        status_of = [wire.status_topic(root=r)] + \
            ([wire.status_topic(t, root=r)] if plan.table_controllers else [])
        out.append(Account(f"table-{t}", f"table {t}'s Pi (firmware bridge)",
                           tuple(of(t, "indicator") + acks(t) + status_of),
                           tuple(of(t, *BRIDGE_OUTPUTS))))
        if plan.table_controllers:
            out.append(Account(
                f"table-{t}-controller", f"table {t}'s Pi: its table's controller "
                                         f"(bridge-table run)",
                tuple(of(t, "event", "ruling")),
                tuple(of(t, *CONTROLLER_OUTPUTS) + [wire.ack_topic(t, "+", root=r),
                                                    wire.status_topic(t, root=r)])))
    for s in plan.stations:
        out.append(Account(f"verify-{s}", f"verification station {s}",
                           tuple(of(s, "event", "indicator") + acks(s)),
                           tuple(of(s, *BRIDGE_OUTPUTS, "verify"))))
        # ``bridge-table verify --events`` beside the station's bridge: a user of its own
        out.append(Account(f"verify-{s}-check", f"verification station {s}: the checker "
                                                f"following its bridge's events",
                           tuple(of(s, "event", "indicator")), tuple(of(s, "verify"))))
    controllers: list[tuple[str, str, bool]] = [
        ("controller", "the rules daemon (every table)", False)]
    if plan.partitions:
        controllers = [(f"controller-part{k}of{plan.partitions}",
                        f"the rules daemon, share {k} of {plan.partitions} (--partition "
                        f"{k}/{plan.partitions})", True)
                       for k in range(1, plan.partitions + 1)]
    for user, what, name in controllers:
        # a partition's status topic is named by its --partition and --tables together
        # (controller.service.partition.scope_name): any controller's, the controllers being trusted
        # with every table anyway
        out.append(Account(
            user, what, tuple(of("+", "event", "ruling")),
            tuple(of("+", *CONTROLLER_OUTPUTS)) + (
                wire.ack_topic("+", "+", root=r),
                wire.status_topic("+" if name else None, root=r))))
    status = [wire.status_topic(root=r), wire.status_topic("+", root=r)]
    out.append(Account("director", "the director's console: reads every table, gives rulings",
                       tuple(of("+", *DIRECTOR_READS) + status + [f"{p}/#"]),
                       tuple(of("+", "ruling"))))
    out.append(Account("broadcast", "the broadcast relay: what it relays, to the public",
                       tuple(of("+", *RELAY_READS) + status + [f"{p}/#"]), (f"{p}/#",)))
    # every long-running reader its own login: with use_username_as_clientid two programs
    # on one login take the connection from each other for ever (controller.broker.login)
    out.append(Account("scorer", "bridge-table results: the ranking as the session goes",
                       tuple(of("+", *SCORER_READS))))
    out.append(Account("vugraph", "the vugraph web app: the released feed only", (f"{p}/#",)))
    out.append(Account("public", "spectators' own programs: the released feed only",
                       (f"{p}/#",)))
    return out


def acl_text(users: Iterable[Account], header: str = "") -> str:
    """mosquitto's acl_file: a ``user`` block per account; nothing for anyone else."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += ["# Every user's rights; a user, topic or direction not listed here is refused.",
              "# Anonymous clients cannot connect at all (allow_anonymous false).", ""]
    for a in users:
        lines.append(f"# {a.what}")
        lines.append(f"user {a.username}")
        both = [t for t in a.read if t in a.write]
        lines += [f"topic readwrite {t}" for t in both]
        lines += [f"topic read {t}" for t in a.read if t not in both]
        lines += [f"topic write {t}" for t in a.write if t not in both]
        lines.append("")
    return "\n".join(lines)


#: bytes a queued event costs mosquitto's queue count (its payload: ~250 B, rounded up)
EVENT_BYTES = 400
#: the largest MQTT packet a client may send: a wire-contract payload (``wire.MAX_PAYLOAD``)
#: and its topic and header
PACKET_LIMIT = wire.MAX_PAYLOAD + 1024
#: the broker's own heap with no queue (connections, retained messages, subscriptions)
BASE_MEMORY = 64 * 1024 * 1024
#: retained messages of one table at most (state, indicator, result, acks: a few KB each;
#: counted at the packet limit, the worst case)
RETAINED_PER_TABLE = 4 * PACKET_LIMIT


def queue_size(tables: int) -> int:
    """Messages the broker keeps for one client that is away (the controller's queue holds
    every table's events). A table sends at most a few hundred events a board, about 60 a
    minute; 30 minutes of every table, and never less than 100,000 (a few tens of MB)."""
    return max(100_000, tables * 60 * 30)


@dataclass(frozen=True)
class Limits:
    """The broker's bounds for a session (docs/security.md has the arithmetic)."""

    max_queued_messages: int
    max_queued_bytes: int
    max_packet_size: int
    memory_limit: int


def limits(plan: BrokerPlan) -> Limits:
    """Queues: 30 minutes of every table's events (``queue_size``) at ``EVENT_BYTES`` each,
    for a client that is away; a flood of large messages stops there instead of at the
    broker's memory. Memory: the clients that read what a table can send (the controllers,
    the console, the relay, the scorer, the public) each with its queue and its in-flight
    window full of the largest packets, every table's retained messages at their largest,
    and the broker's base: a backstop that bounded traffic never reaches."""
    units = len(plan.tables) + len(plan.stations)
    messages = plan.max_queued or queue_size(units)
    queued = plan.max_queued_bytes or messages * EVENT_BYTES
    readers = max(1, plan.partitions) + 4
    memory = plan.memory_limit or (BASE_MEMORY + units * RETAINED_PER_TABLE + readers * (
        queued + plan.max_inflight * PACKET_LIMIT))
    return Limits(messages, queued, PACKET_LIMIT, memory)


#: a listener's clients are their users: nobody takes over another's client id (and so
#: its connection, its session and its will); mosquitto 1.4 or later
_ONE_CONNECTION_PER_USER = (
    "# the client id is the user name: nobody disconnects or takes over another client",
    "use_username_as_clientid true")


def mosquitto_conf(plan: BrokerPlan, files: Path, header: str = "") -> str:
    """The broker's configuration; ``files`` is where acl, passwd and certs/ will be."""
    certs = files / "certs"
    ca = certs / "ca.crt"
    cert, key = certs / "server.crt", certs / "server.key"
    bind = f" {plan.bind}" if plan.bind else ""
    bounds = limits(plan)
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [
        "# Security: nobody gets in without a user and a password (or a client certificate",
        "# of the venue's CA); the acl file says what each user may publish and read.",
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {files / 'passwd'}",
        f"acl_file {files / 'acl'}",
        "",
        "# Persistence: retained states, results and indicators and the queued events of a",
        "# controller that is away survive a restart of the broker; saved every",
        f"# {plan.autosave} s, so a crash loses at most that much (what the controller had not",
        "# acknowledged, the bridges send again).",
        "persistence true",
        f"persistence_location {plan.persistence_dir}/",
        f"autosave_interval {plan.autosave}",
        "autosave_on_changes false",
        "# a client away for two days (a table closed) has its session freed",
        "persistent_client_expiration 2d",
        "",
        "# Queues sized for the session: a controller down for half an hour finds every",
        "# table's events queued (mosquitto's default of 1,000 loses them); bounded in bytes",
        "# too, so that a flood of large messages stops there (docs/security.md); the",
        "# bridges send again what was dropped (end-to-end acknowledgements).",
        f"max_queued_messages {bounds.max_queued_messages}",
        f"max_queued_bytes {bounds.max_queued_bytes}",
        f"max_inflight_messages {plan.max_inflight}",
        "# a wire-contract message is at most 64 KiB; a larger packet disconnects its sender",
        f"max_packet_size {bounds.max_packet_size}",
        f"message_size_limit {wire.MAX_PAYLOAD}",
        "# every queue full and every retained message at its largest, and no more",
        f"memory_limit {bounds.memory_limit}",
        "set_tcp_nodelay true",
        "connection_messages true",
        "",
        "# Clients log in with a user and a password, over TLS.",
        f"listener {plan.port}{bind}",
        "protocol mqtt",
        f"cafile {ca}",
        f"certfile {cert}",
        f"keyfile {key}",
        "tls_version tlsv1.2",
        "require_certificate false",
        *_ONE_CONNECTION_PER_USER,
    ]
    if plan.client_certs:
        lines += [
            "",
            "# Clients log in with a certificate of the venue's CA: its CN is the user name.",
            f"listener {plan.cert_port}{bind}",
            "protocol mqtt",
            f"cafile {ca}",
            f"certfile {cert}",
            f"keyfile {key}",
            "tls_version tlsv1.2",
            "require_certificate true",
            "use_identity_as_username true",
            *_ONE_CONNECTION_PER_USER,
            "# certificates withdrawn by --rotate (a lost Pi's) are refused",
            f"crlfile {certs / 'crl.pem'}",
        ]
    if plan.local_port:
        lines += [
            "",
            "# Plain MQTT for programs on this machine only (still with users and passwords).",
            f"listener {plan.local_port} 127.0.0.1",
            "protocol mqtt",
            *_ONE_CONNECTION_PER_USER,
        ]
    lines += list(plan.extra)
    return "\n".join(lines) + "\n"


# -- certificates (Debian's openssl) --------------------------------------------------------

def _openssl(*args: str) -> None:
    exe = shutil.which("openssl")
    if exe is None:
        raise BrokerConfigError("openssl is needed to make certificates: apt-get install "
                                "openssl (or give --cafile, --certfile and --keyfile)")
    done = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise BrokerConfigError(f"openssl {args[0]} failed: {done.stderr.strip()[-500:]}")


def _private(path: Path) -> None:
    path.chmod(0o600)


def make_ca(certs: Path, name: str = "bridge-table venue CA", days: int = 3650) -> None:
    """A CA for the venue: ``certs/ca.crt`` and its key ``certs/ca.key`` (keep it safe)."""
    certs.mkdir(parents=True, exist_ok=True)
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
             "-nodes", "-keyout", str(certs / "ca.key"), "-out", str(certs / "ca.crt"),
             "-days", str(days), "-subj", f"/CN={name}",
             "-addext", "basicConstraints=critical,CA:TRUE,pathlen:0",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    _private(certs / "ca.key")


def _ca_database(certs: Path) -> Path:
    """``openssl ca``'s files beside the CA (its record of the client certificates it
    issued, for revoking them); made when missing. Returns its configuration file."""
    cnf = certs / "openssl-ca.cnf"
    (certs / "issued").mkdir(exist_ok=True)
    for name, text in (("index.txt", ""), ("serial", f"{secrets.randbits(63):016X}\n"),
                       ("crlnumber", "01\n"), ("index.txt.attr", "unique_subject = no\n")):
        if not (certs / name).exists():
            (certs / name).write_text(text)
    cnf.write_text(f"""[ ca ]
default_ca = venue
[ venue ]
dir = {certs}
database = $dir/index.txt
new_certs_dir = $dir/issued
certificate = $dir/ca.crt
private_key = $dir/ca.key
serial = $dir/serial
crlnumber = $dir/crlnumber
default_md = sha256
default_crl_days = 3650
unique_subject = no
policy = any
[ any ]
commonName = supplied
""")
    return cnf


def make_cert(certs: Path, name: str, out_cert: Path, out_key: Path, *, server: bool,
              hosts: Sequence[str] = (), ips: Sequence[str] = (), days: int = 825) -> None:
    """A certificate signed by the venue's CA: the broker's (with its names and addresses)
    or a client's (its CN is the MQTT user name; recorded so that it can be revoked)."""
    if not (certs / "ca.key").is_file():
        raise BrokerConfigError(f"{certs / 'ca.key'} is needed to sign certificates (the "
                                f"CA's key; given CAs: make the certificates with it)")
    with tempfile.TemporaryDirectory() as tmp:
        csr, ext = Path(tmp) / "req.csr", Path(tmp) / "ext.cnf"
        _openssl("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                 "-nodes", "-keyout", str(out_key), "-out", str(csr), "-subj", f"/CN={name}")
        _private(out_key)
        lines = ["basicConstraints=critical,CA:FALSE",
                 "keyUsage=critical,digitalSignature,keyEncipherment",
                 f"extendedKeyUsage={'serverAuth' if server else 'clientAuth'}",
                 "subjectKeyIdentifier=hash", "authorityKeyIdentifier=keyid"]
        if server:
            alt = [f"DNS:{h}" for h in hosts] + [f"IP:{i}" for i in ips]
            lines.append(f"subjectAltName={','.join(alt)}")
            ext.write_text("\n".join(lines) + "\n")
            _openssl("x509", "-req", "-in", str(csr), "-CA", str(certs / "ca.crt"),
                     "-CAkey", str(certs / "ca.key"), "-set_serial",
                     str(secrets.randbits(63)), "-days", str(days), "-extfile", str(ext),
                     "-out", str(out_cert))
            return
        ext.write_text("\n".join(lines) + "\n")
        _openssl("ca", "-batch", "-notext", "-config", str(_ca_database(certs)),
                 "-in", str(csr), "-out", str(out_cert), "-days", str(days),
                 "-extfile", str(ext))


def revoke_cert(certs: Path, cert: Path) -> None:
    """Withdraw a client certificate: recorded in the CA's database, listed in the CRL."""
    _openssl("ca", "-config", str(_ca_database(certs)), "-revoke", str(cert))


def write_crl(certs: Path) -> None:
    """``certs/crl.pem``: the certificates withdrawn so far (mosquitto's ``crlfile``)."""
    _openssl("ca", "-config", str(_ca_database(certs)), "-gencrl", "-out",
             str(certs / "crl.pem"))


# -- writing ----------------------------------------------------------------------------------

def _write_private(path: Path, text: str) -> None:
    """Write a secret: created 0600, never readable by others even for a moment."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def _toml_str(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _old_password(clients: Path, user: str) -> str | None:
    path = clients / f"{user}.toml"
    if not path.is_file():
        return None
    try:
        return read_credentials(path).get("password") or None
    except BrokerSettingsError:
        return None


#: mosquitto_passwd's PBKDF2-SHA512 (``$7$``): its iterations and salt length
PBKDF2_ITERATIONS = 101
SALT_BYTES = 12


def password_hash(password: str, salt: bytes | None = None,
                  iterations: int = PBKDF2_ITERATIONS) -> str:
    """One ``passwd`` entry's hash as ``mosquitto_passwd`` (2.0) writes it: ``$7$`` (PBKDF2
    with SHA-512), iterations, salt and digest in base64."""
    salt = secrets.token_bytes(SALT_BYTES) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, iterations)
    return (f"$7${iterations}${base64.b64encode(salt).decode()}$"
            f"{base64.b64encode(digest).decode()}")


def hash_passwords(path: Path, passwords: dict[str, str]) -> None:
    """``passwd`` as mosquitto reads it, hashed here (``password_hash``): the plain text is
    never written anywhere (``mosquitto_passwd -U`` writes it first, and its ``passwd.tmp``
    is created with the umask's mode while it runs)."""
    _write_private(path, "".join(f"{u}:{password_hash(p)}\n" for u, p in passwords.items()))


@contextlib.contextmanager
def _private_umask() -> Iterator[None]:
    """Everything created meanwhile (by this process or openssl) is 0600/0700 from its first
    moment; what the broker or the clients must read is opened up afterwards, one by one."""
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def _readable(*paths: Path) -> None:
    """Not secret: the configuration, the ACL, certificates (the broker's group reads them)."""
    for path in paths:
        if path.is_file():
            path.chmod(0o644)


def write_broker_config(plan: BrokerPlan, out: Path) -> list[Path]:
    """Write every file into ``out``; returns the files written. Every secret is created
    0600 (keys, ``passwd``, ``clients/``) under a 0077 umask."""
    check_plan(plan)
    with _private_umask():
        written = _write_broker_config(plan, out.resolve())
    out, certs = out.resolve(), out.resolve() / "certs"
    _readable(out / "mosquitto.conf", out / "acl", out / IDENTITIES_FILE, certs / "ca.crt",
              certs / "server.crt", certs / "crl.pem", out / "clients" / "ca.crt")
    return written


def check_plan(plan: BrokerPlan) -> None:
    """Option values that would open the ACL: wildcards or empty levels in a root, the
    public root equal to or under the tables' root, a bad ``src``."""
    for name, value in (("--root", plan.root), ("--public", plan.public)):
        if not TOPIC_LEVELS.match(value):
            raise BrokerConfigError(f"{name} {value[:40]!r} must be topic levels without "
                                    f"wildcards ('+', '#'), '$' or empty levels")
    r, p = plan.root, plan.public
    if p == r or p.startswith(r + "/") or r.startswith(p + "/"):
        raise BrokerConfigError(f"--public {p!r} and --root {r!r} must not overlap: the "
                                f"public would read the tables' hands")
    if plan.ack not in (DEFAULT_ACK, "ack/#"):
        raise BrokerConfigError(f"--ack-topic {plan.ack[:40]!r}: the wire contract's "
                                f"acknowledgements are ROOT/T/ack/SRC (--ack-topic ack)")
    for tpl in plan.event_src:
        for t in (*plan.tables, *plan.stations):
            try:
                src = tpl.format(t=t)
            except (KeyError, IndexError, ValueError):
                raise BrokerConfigError(f"--event-src {tpl[:40]!r}: only {{t}} may be "
                                        f"replaced") from None
            if not SRC.match(src):
                raise BrokerConfigError(f"--event-src {tpl[:40]!r} gives {src[:40]!r}, not "
                                        f"a src (letters, digits, '_', '.', '-')")
    for src in plan.director_src:
        if not SRC.match(src):
            raise BrokerConfigError(f"--director-src {src[:40]!r} is not a src")
    if plan.partitions < 0 or plan.partitions > 64:
        raise BrokerConfigError("--partitions must be 0 to 64")


def _write_broker_config(plan: BrokerPlan, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    files = plan.install_dir if plan.install_dir else out
    certs, clients = out / "certs", out / "clients"
    clients.mkdir(exist_ok=True)
    os.chmod(clients, 0o700)
    hosts = list(plan.hosts) or [socket.gethostname()]
    ips = list(plan.ips)
    for ip in ips:
        try:
            ipaddress.ip_address(ip)
        except ValueError:
            raise BrokerConfigError(f"--ip {ip!r} is not an IP address") from None
    written: list[Path] = []
    # the broker's certificate: given, kept from an earlier run, or made now
    if plan.certfile or plan.keyfile or plan.cafile:
        if not (plan.certfile and plan.keyfile and plan.cafile):
            raise BrokerConfigError("--cafile, --certfile and --keyfile go together")
        certs.mkdir(exist_ok=True)
        for src, name in ((plan.cafile, "ca.crt"), (plan.certfile, "server.crt"),
                          (plan.keyfile, "server.key")):
            try:
                shutil.copyfile(src, certs / name)
            except OSError as e:
                raise BrokerConfigError(f"{src}: {e.strerror or e}") from None
        _private(certs / "server.key")
    else:
        if not (certs / "ca.crt").is_file():
            make_ca(certs)
            written += [certs / "ca.crt", certs / "ca.key"]
        if not (certs / "server.crt").is_file():
            make_cert(certs, hosts[0], certs / "server.crt", certs / "server.key",
                      server=True, hosts=hosts, ips=ips)
            written += [certs / "server.crt", certs / "server.key"]
    users = accounts(plan)
    rotate = set(plan.rotate)
    if "all" in rotate:
        rotate = {a.username for a in users}
    unknown = rotate - {a.username for a in users}
    if unknown:
        raise BrokerConfigError(f"--rotate: no user {', '.join(sorted(unknown))}")
    passwords: dict[str, str] = {}
    for a in users:
        old = None if a.username in rotate else _old_password(clients, a.username)
        passwords[a.username] = old or secrets.token_urlsafe(24)
    header = (f"bridge-table broker-config, {datetime.date.today().isoformat()}: "
              f"{len(plan.tables)} table(s) {', '.join(plan.tables[:20])}"
              f"{' ...' if len(plan.tables) > 20 else ''}")
    (out / "acl").write_text(acl_text(users, header) + "\n")
    (out / "mosquitto.conf").write_text(mosquitto_conf(plan, files, header))
    (out / IDENTITIES_FILE).write_text(identities_text(identities(plan), header))
    hash_passwords(out / "passwd", passwords)
    written += [out / "mosquitto.conf", out / "acl", out / "passwd", out / IDENTITIES_FILE]
    shutil.copyfile(certs / "ca.crt", clients / "ca.crt")
    host = hosts[0]
    for a in users:
        text = (f"# {a.username}: {a.what}. Secret: keep it mode 0600.\n"
                f"url = {_toml_str(f'mqtts://{host}:{plan.port}')}\n"
                f"username = {_toml_str(a.username)}\n"
                f"password = {_toml_str(passwords[a.username])}\n"
                f'ca_file = "ca.crt"\n')
        _write_private(clients / f"{a.username}.toml", text)
        written.append(clients / f"{a.username}.toml")
        if plan.client_certs:
            crt, key = clients / f"{a.username}.crt", clients / f"{a.username}.key"
            if a.username in rotate and crt.is_file():
                revoke_cert(certs, crt)  # the old certificate no longer logs in
            if a.username in rotate or not crt.is_file():
                make_cert(certs, a.username, crt, key, server=False)
            text = (f"# {a.username}: {a.what}, logging in by certificate. Secret: keep the "
                    f"key mode 0600.\n"
                    f"url = {_toml_str(f'mqtts://{host}:{plan.cert_port}')}\n"
                    f'ca_file = "ca.crt"\n'
                    f"cert_file = {_toml_str(crt.name)}\n"
                    f"key_file = {_toml_str(key.name)}\n")
            _write_private(clients / f"{a.username}-cert.toml", text)
            written += [crt, key, clients / f"{a.username}-cert.toml"]
    if plan.client_certs:
        write_crl(certs)
        written.append(certs / "crl.pem")
    return written
