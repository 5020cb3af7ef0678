"""One table's configuration: a TOML file loaded into validated, frozen dataclasses.

``load_config(path)`` is the entry point. Every problem raises :class:`ConfigError`
naming the file, the key path (``readers[2].antennas."1".seat``; list indices count
from 0) and what is wrong, so a mistyped key fails at start-up rather than in the
middle of a session. Paths in the file (tag registries, the spool) are relative to
the config file's directory unless absolute; a relative spool path is relative to
``$STATE_DIRECTORY`` instead when systemd sets it (``StateDirectory=``: the config's
directory, /etc/bridge-table, is read-only under ``ProtectSystem=strict``).
``docs/config.md`` describes every key.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from controller import wire
from controller.broker.login import bridge_login_problem
from controller.broker.settings import (
    ENV,
    BrokerSettings,
    BrokerSettingsError,
    read_credentials,
    resolve,
)
from controller.laws import SEAT_NAMES, Button, Zone
from controller.tomlfile import TomlFileError, load_toml
from firmware_bridge.backends import DISPLAYS
from firmware_bridge.errors import ConfigError
from firmware_bridge.readers import reader_schemes

log = logging.getLogger("bridge_table.bridge")

# seats, zones and buttons as the Laws core names them (the events it is fed)
SEATS: tuple[str, ...] = SEAT_NAMES
ZONES: tuple[str, ...] = tuple(z.value for z in Zone)
LANGUAGES: tuple[str, ...] = ("en", "vi", "zh")
BUTTONS: tuple[str, ...] = tuple(b.value for b in Button)
READER_KINDS: tuple[str, ...] = ("inventory", "tap")
GPIO_FACTORIES: tuple[str, ...] = ("auto", "lgpio", "rpigpio", "mock")
#: BCM numbers of the 40-pin header's GPIOs.
BCM_PINS = range(0, 28)

# Table ids and bridge ids go into MQTT topics and payloads: no wildcards, no separators.
# \Z, not $ (which also matches before a final newline: "7\n" would go into a topic)
_TOPIC_SAFE = re.compile(r"^[A-Za-z0-9_.-]+\Z")
_BARE_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")

T = TypeVar("T")


def _frozen_map(items: Mapping[str, T]) -> Mapping[str, T]:
    return MappingProxyType(dict(items))


@dataclass(frozen=True)
class TableConfig:
    id: str
    src: str
    language: str


@dataclass(frozen=True)
class BrokerConfig:
    url: str
    host: str
    port: int
    tls: bool
    username: str | None
    password: str | None
    ca_file: Path | None
    root: str
    keepalive: int
    #: MQTT client id; defaults to the bridge id so a restarted bridge takes over its session.
    client_id: str
    #: client certificate and key (PEM), for a broker that logs clients in by certificate
    cert_file: Path | None = None
    key_file: Path | None = None

    def settings(self) -> BrokerSettings:
        """The connection settings in the form every client of the project uses."""
        return BrokerSettings(host=self.host, port=self.port, tls=self.tls,
                              username=self.username, password=self.password,
                              ca_file=str(self.ca_file) if self.ca_file else None,
                              keepalive=self.keepalive,
                              cert_file=str(self.cert_file) if self.cert_file else None,
                              key_file=str(self.key_file) if self.key_file else None)


@dataclass(frozen=True)
class RegistryConfig:
    files: tuple[Path, ...]


@dataclass(frozen=True)
class SpoolConfig:
    path: Path
    #: "normal": survives a crash of the bridge; "full": also a power cut (fsync per event)
    sync: str = "normal"
    #: "controller": an event leaves the spool once the controller's ack (contract 1.2) covers
    #: it; "broker": on the broker's PUBACK (version 1 behaviour, for a controller without acks)
    acknowledge: str = "controller"
    #: most events the spool holds; beyond, new events are refused loudly (health, log)
    max_events: int = 200_000
    #: seconds without an ack before what is unacknowledged is sent again (doubling, to 5 min)
    ack_timeout: float = 10.0


@dataclass(frozen=True)
class AntennaConfig:
    zone: str
    seat: str | None  # None only for the board zone


@dataclass(frozen=True)
class ReaderConfig:
    name: str
    url: str
    kind: str | None  # None: the reader type's own default
    antennas: Mapping[str, AntennaConfig] = field(hash=False)
    #: extra keyword options passed through to ``open_reader`` (``[readers.options]``).
    options: Mapping[str, Any] = field(hash=False, default_factory=lambda: _frozen_map({}))


@dataclass(frozen=True)
class SeatGpioConfig:
    seat: str
    turn_led: int | None
    alert_led: int | None
    rgb_led: tuple[int, int, int] | None
    #: buttons that belong to this seat: button name -> BCM pin
    buttons: Mapping[str, int] = field(hash=False)


@dataclass(frozen=True)
class GpioConfig:
    factory: str
    seats: Mapping[str, SeatGpioConfig] = field(hash=False)
    #: table-level buttons: button name -> BCM pin
    buttons: Mapping[str, int] = field(hash=False)
    bounce_time: float = 0.05
    pull_up: bool = True
    active_high: bool = True
    alert_blink: bool = True


@dataclass(frozen=True)
class DisplayConfig:
    type: str
    i2c_port: int = 1
    address: int = 0x27
    cols: int = 20
    rows: int = 4
    #: HD44780: the I2C port expander RPLCD drives (PCF8574, MCP23008, MCP23017)
    expander: str = "PCF8574"
    #: HD44780 character ROM: A00 (Japanese) or A02 (European)
    charmap: str = "A02"
    #: SSD1306 pixel size and an optional TrueType font (a CJK one shows Chinese)
    width: int = 128
    height: int = 64
    font: Path | None = None


@dataclass(frozen=True)
class HealthConfig:
    #: seconds between periodic health messages (they also go out on every change)
    interval: float = 30.0
    #: two readers seeing one tag within this many seconds count as a duplicate sighting
    duplicate_window: float = 0.5


@dataclass(frozen=True)
class BridgeConfig:
    path: Path
    table: TableConfig
    broker: BrokerConfig
    registry: RegistryConfig
    spool: SpoolConfig
    readers: tuple[ReaderConfig, ...]
    gpio: GpioConfig
    display: DisplayConfig
    health: HealthConfig

    def antenna(self, reader: str, antenna: str) -> AntennaConfig | None:
        """The (seat, zone) of one reader's antenna, or None when it is not mapped."""
        for r in self.readers:
            if r.name == reader:
                return r.antennas.get(antenna)
        return None

    def topic(self, kind: str) -> str:
        """``{root}/{table}/{kind}``: e.g. ``bridge/1/event``."""
        return wire.topic(self.table.id, kind, root=self.broker.root)


def _key_text(key: str) -> str:
    return key if _BARE_KEY.match(key) else f'"{key}"'


class _Section:
    """One TOML table being read: knows its key path and which keys were used."""

    def __init__(self, file: str, path: str, data: Any) -> None:
        self.file = file
        self.path = path
        if not isinstance(data, dict):
            raise ConfigError(file, path, f"must be a table, not {_type_name(data)}")
        self.data: dict[str, Any] = data
        self.used: set[str] = set()

    def sub_path(self, key: str) -> str:
        return f"{self.path}.{_key_text(key)}" if self.path else _key_text(key)

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(self.file, self.sub_path(key) if key else self.path, problem)

    def has(self, key: str) -> bool:
        return key in self.data

    def raw(self, key: str) -> Any:
        self.used.add(key)
        return self.data.get(key)

    def section(self, key: str, *, required: bool = False) -> _Section:
        self.used.add(key)
        if key not in self.data:
            if required:
                raise self.error(key, "missing table")
            return _Section(self.file, self.sub_path(key), {})
        return _Section(self.file, self.sub_path(key), self.data[key])

    def string(self, key: str, default: str | None = None, *, choices: tuple[str, ...] = (),
               required: bool = False) -> str:
        self.used.add(key)
        if key not in self.data:
            if required or default is None:
                raise self.error(key, "missing")
            return default
        value = self.data[key]
        if not isinstance(value, str):
            raise self.error(key, f"must be a string, not {_type_name(value)}")
        if choices and value not in choices:
            raise self.error(key, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def optional_string(self, key: str, *, choices: tuple[str, ...] = ()) -> str | None:
        if key not in self.data:
            self.used.add(key)
            return None
        return self.string(key, choices=choices)

    def integer(self, key: str, default: int | None = None, *, minimum: int | None = None,
                maximum: int | None = None) -> int:
        self.used.add(key)
        if key not in self.data:
            if default is None:
                raise self.error(key, "missing")
            return default
        value = self.data[key]
        # bool is an int in Python; `true` for a pin number is a mistake, not 1.
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(key, f"must be an integer, not {_type_name(value)}")
        if minimum is not None and value < minimum:
            raise self.error(key, f"{value} is below the minimum {minimum}")
        if maximum is not None and value > maximum:
            raise self.error(key, f"{value} is above the maximum {maximum}")
        return value

    def number(self, key: str, default: float, *, minimum: float = 0.0) -> float:
        self.used.add(key)
        if key not in self.data:
            return default
        value = self.data[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(key, f"must be a number, not {_type_name(value)}")
        if value < minimum:
            raise self.error(key, f"{value} is below the minimum {minimum}")
        return float(value)

    def boolean(self, key: str, default: bool) -> bool:
        self.used.add(key)
        if key not in self.data:
            return default
        value = self.data[key]
        if not isinstance(value, bool):
            raise self.error(key, f"must be true or false, not {_type_name(value)}")
        return value

    def finish(self) -> None:
        """Unknown keys are typos until proven otherwise: refuse them."""
        for key in self.data:
            if key not in self.used:
                raise self.error(key, "unknown key")


class _ArraySection(_Section):
    """An array read like a table whose keys are ``[0]``, ``[1]``...: paths print as x[1]."""

    def sub_path(self, key: str) -> str:
        return f"{self.path}{key}"


def _type_name(value: Any) -> str:
    return {dict: "a table", list: "an array", str: "a string", bool: "a boolean",
            int: "an integer", float: "a number"}.get(type(value), type(value).__name__)


def _resolve(base: Path, value: str) -> Path:
    p = Path(value).expanduser()
    return p if p.is_absolute() else (base / p)


def _topic_safe(sec: _Section, key: str, value: str) -> str:
    if not _TOPIC_SAFE.match(value):
        raise sec.error(key, f"{value!r} may only hold letters, digits, '_', '-' and '.'"
                             " (it goes into MQTT topics)")
    return value


def _table(root: _Section) -> TableConfig:
    sec = root.section("table", required=True)
    table_id = sec.string("id", required=True)
    problem = wire.table_id_problem(table_id)  # the controller's rule: one topic level
    if problem is not None:
        raise sec.error("id", problem)
    src = _topic_safe(sec, "src", sec.string("src", f"table-{table_id}-pi"))
    language = sec.string("language", "en", choices=LANGUAGES)
    sec.finish()
    return TableConfig(id=table_id, src=src, language=language)


def _credentials_url(sec: _Section, credentials: Path | None) -> str | None:
    """The URL of the credentials file in use (``[broker] credentials``, else
    ``$BRIDGE_TABLE_MQTT_CREDENTIALS``), if it names one."""
    path = credentials or os.environ.get(ENV["credentials"]) or None
    if path is None:
        return None
    try:
        return read_credentials(path).get("url") or None
    except BrokerSettingsError as e:
        raise sec.error("credentials", str(e)) from None


def _broker(root: _Section, base: Path, src: str, table: str,
            broker_url: str | None = None) -> BrokerConfig:
    """``[broker]``: the keys of the table file, then the environment, then a credentials
    file (``credentials = "..."``): see ``controller.broker.settings``. The credentials
    file's URL wins over the table file's ``url`` (one source of truth for where the table's
    login works: the file broker-config wrote with it); ``broker_url`` (``--broker``) wins
    over both."""
    sec = root.section("broker")
    url = sec.string("url", "")
    files: dict[str, Path | None] = {}
    for key in ("credentials", "password_file", "ca_file", "cert_file", "key_file"):
        text = sec.string(key, "")
        file = _resolve(base, text) if text else None
        if file is not None and not file.is_file():
            raise sec.error(key, f"{str(file)!r} does not exist")
        files[key] = file
    from_credentials = _credentials_url(sec, files["credentials"])
    if from_credentials and url and not broker_url:
        if url.rstrip("/") != from_credentials.rstrip("/"):
            log.warning("%s: [broker] url %s is not used: the credentials file names the "
                        "broker its login is for, %s (remove url from the table file)",
                        sec.file, url, from_credentials)
        url = ""
    try:
        settings = resolve(broker_url or url or None, credentials=files["credentials"],
                           username=sec.string("username", "") or None,
                           password=sec.string("password", "") or None,
                           password_file=files["password_file"], ca_file=files["ca_file"],
                           cert_file=files["cert_file"], key_file=files["key_file"])
    except BrokerSettingsError as e:
        raise sec.error("url" if "URL" in str(e) else "", str(e)) from None
    problem = bridge_login_problem(settings.username, table)
    if problem is not None:
        raise sec.error("credentials" if files["credentials"] else "username", problem)
    root_topic = sec.string("root", "bridge")
    if not root_topic or any(c in root_topic for c in "+#") or root_topic.startswith("/") \
            or root_topic.endswith("/"):
        raise sec.error("root", f"{root_topic!r} is not a usable topic root")
    keepalive = sec.integer("keepalive", 30, minimum=5, maximum=65535)
    client_id = sec.string("client_id", src)
    sec.finish()
    return BrokerConfig(url=settings.url, host=settings.host, port=settings.port,
                        tls=settings.tls, username=settings.username,
                        password=settings.password,
                        ca_file=Path(settings.ca_file) if settings.ca_file else None,
                        root=root_topic, keepalive=keepalive, client_id=client_id,
                        cert_file=Path(settings.cert_file) if settings.cert_file else None,
                        key_file=Path(settings.key_file) if settings.key_file else None)


def _registry(root: _Section, base: Path) -> RegistryConfig:
    sec = root.section("registry")
    raw = sec.raw("files")
    files: list[Path] = []
    if raw is not None:
        if not isinstance(raw, list):
            raise sec.error("files", f"must be an array of file names, not {_type_name(raw)}")
        for i, item in enumerate(raw):
            key = f"files[{i}]"
            if not isinstance(item, str):
                raise ConfigError(sec.file, f"{sec.path}.{key}",
                                  f"must be a string, not {_type_name(item)}")
            path = _resolve(base, item)
            if not path.is_file():
                raise ConfigError(sec.file, f"{sec.path}.{key}", f"{str(path)!r} does not exist")
            files.append(path)
    sec.finish()
    return RegistryConfig(files=tuple(files))


def state_directory() -> Path | None:
    """systemd's ``StateDirectory=`` (the first of them), where a service keeps its state."""
    state = os.environ.get("STATE_DIRECTORY", "")
    return Path(state.split(":")[0]) if state else None


def _spool(root: _Section, base: Path, table_id: str) -> SpoolConfig:
    sec = root.section("spool")
    path = _resolve(state_directory() or base,
                    sec.string("path", f"var/spool-table-{table_id}.sqlite"))
    sync = sec.string("sync", "normal", choices=("normal", "full"))
    acknowledge = sec.string("acknowledge", "controller", choices=("controller", "broker"))
    max_events = sec.integer("max_events", 200_000, minimum=100)
    ack_timeout = sec.number("ack_timeout", 10.0, minimum=0.1)
    sec.finish()
    return SpoolConfig(path=path, sync=sync, acknowledge=acknowledge, max_events=max_events,
                       ack_timeout=ack_timeout)


def _antenna(sec: _Section) -> AntennaConfig:
    zone = sec.string("zone", required=True, choices=ZONES)
    seat = sec.optional_string("seat", choices=SEATS)
    if zone == "board" and seat is not None:
        raise sec.error("seat", "the board zone belongs to no seat: remove the seat")
    if zone != "board" and seat is None:
        raise sec.error("seat", f"missing (a {zone} zone belongs to a seat: N, E, S or W)")
    sec.finish()
    return AntennaConfig(zone=zone, seat=seat)


def _readers(root: _Section) -> tuple[ReaderConfig, ...]:
    raw = root.raw("readers")
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise root.error("readers", "must be an array of tables ([[readers]])")
    readers: list[ReaderConfig] = []
    schemes = reader_schemes()  # the reader registry, with installed plug-ins
    names: dict[str, int] = {}
    urls: dict[str, int] = {}
    for i, item in enumerate(raw):
        sec = _Section(root.file, f"readers[{i}]", item)
        name = _topic_safe(sec, "name", sec.string("name", required=True))
        if name in names:
            raise sec.error("name", f"{name!r} is already the name of readers[{names[name]}]")
        names[name] = i
        url = sec.string("url", required=True)
        scheme = urlsplit(url).scheme
        if scheme not in schemes or "://" not in url:
            raise sec.error("url", f"{url!r}: the scheme must be one of "
                                   + ", ".join(f"{s}://" for s in schemes))
        if url in urls:
            raise sec.error("url", f"{url!r} is already used by readers[{urls[url]}]")
        urls[url] = i
        kind = sec.optional_string("kind", choices=READER_KINDS)
        ants = sec.section("antennas", required=True)
        if not ants.data:
            raise sec.error("antennas", "no antenna mapped: at least one is needed")
        antennas = {key: _antenna(ants.section(key)) for key in ants.data}
        options_sec = sec.section("options")
        options = dict(options_sec.data)
        sec.finish()
        readers.append(ReaderConfig(name=name, url=url, kind=kind,
                                    antennas=_frozen_map(antennas),
                                    options=_frozen_map(options)))
    return tuple(readers)


class _PinBook:
    """Every BCM pin is used once: a LED and a button on one pin is a wiring error."""

    def __init__(self) -> None:
        self.owner: dict[int, str] = {}

    def take(self, sec: _Section, key: str, pin: int) -> int:
        where = sec.sub_path(key)
        if pin in self.owner:
            raise sec.error(key, f"BCM pin {pin} is already used by {self.owner[pin]}")
        self.owner[pin] = where
        return pin


def _pin(sec: _Section, key: str, book: _PinBook) -> int:
    return book.take(sec, key, sec.integer(key, minimum=BCM_PINS.start,
                                           maximum=BCM_PINS.stop - 1))


def _gpio(root: _Section) -> GpioConfig:
    sec = root.section("gpio")
    factory = sec.string("factory", "auto", choices=GPIO_FACTORIES)
    book = _PinBook()
    seats: dict[str, SeatGpioConfig] = {}
    seats_sec = sec.section("seats")
    for seat in seats_sec.data:
        if seat not in SEATS:
            raise seats_sec.error(seat, f"{seat!r} is not a seat (N, E, S, W)")
        s = seats_sec.section(seat)
        turn = _pin(s, "turn_led", book) if s.has("turn_led") else None
        alert = _pin(s, "alert_led", book) if s.has("alert_led") else None
        rgb: tuple[int, int, int] | None = None
        if s.has("rgb_led"):
            raw = s.raw("rgb_led")
            if not (isinstance(raw, list) and len(raw) == 3):
                raise s.error("rgb_led", "must be three BCM pins [red, green, blue]")
            rgb_sec = _ArraySection(s.file, s.sub_path("rgb_led"),
                                    {f"[{i}]": v for i, v in enumerate(raw)})
            r, g, b = (_pin(rgb_sec, f"[{i}]", book) for i in range(3))
            rgb = (r, g, b)
            if turn is not None or alert is not None:
                raise s.error("rgb_led", "use either rgb_led or turn_led/alert_led, not both")
        buttons = {b: _pin(s, b, book) for b in BUTTONS if s.has(b)}
        s.finish()
        seats[seat] = SeatGpioConfig(seat=seat, turn_led=turn, alert_led=alert, rgb_led=rgb,
                                     buttons=_frozen_map(buttons))
    seats_sec.finish()
    buttons_sec = sec.section("buttons")
    table_buttons: dict[str, int] = {}
    for name in buttons_sec.data:
        if name not in BUTTONS:
            raise buttons_sec.error(name, f"{name!r} is not a button ({', '.join(BUTTONS)})")
        table_buttons[name] = _pin(buttons_sec, name, book)
    buttons_sec.finish()
    bounce = sec.number("bounce_time", 0.05)
    pull_up = sec.boolean("pull_up", True)
    active_high = sec.boolean("active_high", True)
    blink = sec.boolean("alert_blink", True)
    sec.finish()
    return GpioConfig(factory=factory, seats=_frozen_map(seats),
                      buttons=_frozen_map(table_buttons), bounce_time=bounce,
                      pull_up=pull_up, active_high=active_high, alert_blink=blink)


def _display(root: _Section, base: Path) -> DisplayConfig:
    sec = root.section("display")
    kind = sec.string("type", "terminal", choices=DISPLAYS.names())
    i2c_port = sec.integer("i2c_port", 1, minimum=0)
    address = sec.integer("address", 0x3C if kind == "ssd1306" else 0x27,
                          minimum=0x03, maximum=0x77)
    cols = sec.integer("cols", 20, minimum=8, maximum=80)
    rows = sec.integer("rows", 4, minimum=1, maximum=24)
    if kind == "hd44780" and (cols, rows) not in ((16, 2), (20, 4), (16, 4), (20, 2), (40, 2)):
        raise sec.error("cols", f"an HD44780 is 16x2, 20x2, 16x4, 20x4 or 40x2, not {cols}x{rows}")
    expander = sec.string("expander", "PCF8574", choices=("PCF8574", "MCP23008", "MCP23017"))
    charmap = sec.string("charmap", "A02", choices=("A00", "A02"))
    width = sec.integer("width", 128, minimum=32, maximum=256)
    height = sec.integer("height", 64, minimum=16, maximum=128)
    font_text = sec.string("font", "")
    font = _resolve(base, font_text) if font_text else None
    if font is not None and not font.is_file():
        raise sec.error("font", f"{str(font)!r} does not exist")
    sec.finish()
    return DisplayConfig(type=kind, i2c_port=i2c_port, address=address, cols=cols, rows=rows,
                         expander=expander, charmap=charmap, width=width, height=height,
                         font=font)


def _health(root: _Section) -> HealthConfig:
    sec = root.section("health")
    interval = sec.number("interval", 30.0, minimum=0.1)
    window = sec.number("duplicate_window", 0.5, minimum=0.0)
    sec.finish()
    return HealthConfig(interval=interval, duplicate_window=window)


#: the BCM pins of each I2C bus a display may be on: (SDA, SCL)
I2C_PINS: dict[int, tuple[int, int]] = {0: (0, 1), 1: (2, 3)}


def _pin_uses(gpio: GpioConfig, display: DisplayConfig) -> dict[int, str]:
    """Every BCM pin the table's LEDs, buttons and display take, with the key naming it."""
    uses: dict[int, str] = {}
    for seat, s in gpio.seats.items():
        where = f"gpio.seats.{seat}"
        for key, pin in (("turn_led", s.turn_led), ("alert_led", s.alert_led)):
            if pin is not None:
                uses[pin] = f"{where}.{key}"
        for i, pin in enumerate(s.rgb_led or ()):
            uses[pin] = f"{where}.rgb_led[{i}]"
        uses.update((pin, f"{where}.{name}") for name, pin in s.buttons.items())
    uses.update((pin, f"gpio.buttons.{name}") for name, pin in gpio.buttons.items())
    if display.type in ("hd44780", "ssd1306") and display.i2c_port in I2C_PINS:
        sda, scl = I2C_PINS[display.i2c_port]
        uses[sda] = f"display (I2C{display.i2c_port} SDA)"
        uses[scl] = f"display (I2C{display.i2c_port} SCL)"
    return uses


def _check_chip_selects(root: _Section, readers: tuple[ReaderConfig, ...], gpio: GpioConfig,
                        display: DisplayConfig) -> None:
    """A reader's chip-select pin (``cs=`` in its URL) is that chip's alone: not a LED, a
    button or the display's bus, and not another reader's chip select. The pins of a
    ``cs=`` list are checked as numbers; the reader's own driver rejects a malformed one."""
    uses = _pin_uses(gpio, display)
    for i, reader in enumerate(readers):
        query = parse_qs(urlsplit(reader.url).query)
        where = f"readers[{i}].url"
        for text in ",".join(query.get("cs", [])).split(","):
            if not text.strip().isdigit():
                continue
            pin = int(text)
            if pin in uses:
                raise ConfigError(root.file, where,
                                  f"chip select cs={pin} of reader {reader.name!r} is BCM pin "
                                  f"{pin}, which is also {uses[pin]}: one pin, one use")
            uses[pin] = f"{where} (the chip select of reader {reader.name!r})"


def config_from_dict(data: Mapping[str, Any], path: Path, *,
                     broker_url: str | None = None) -> BridgeConfig:
    """Validate already-parsed TOML; ``path`` names the file in errors and anchors paths;
    ``broker_url`` (the command line's ``--broker``) wins over every other URL."""
    path = Path(path)
    base = path.parent
    root = _Section(str(path), "", dict(data))
    table = _table(root)
    config = BridgeConfig(
        path=path,
        table=table,
        broker=_broker(root, base, table.src, table.id, broker_url),
        registry=_registry(root, base),
        spool=_spool(root, base, table.id),
        readers=_readers(root),
        gpio=_gpio(root),
        display=_display(root, base),
        health=_health(root),
    )
    _check_chip_selects(root, config.readers, config.gpio, config.display)
    root.finish()
    return config


def load_config(path: str | Path, *, broker_url: str | None = None,
                credentials: str | Path | None = None) -> BridgeConfig:
    """Read and validate one table's TOML file; raises ConfigError on any problem.

    ``broker_url`` replaces ``[broker] url`` (the command line's ``--broker``) and
    ``credentials`` its ``credentials`` file (``--credentials``).
    """
    path = Path(path)
    try:
        data = load_toml(path)
    except TomlFileError as e:
        raise ConfigError(str(path), "", e.problem.describe()) from None
    if credentials:
        broker = data.get("broker")
        data["broker"] = {**(broker if isinstance(broker, dict) else {}),
                          "credentials": str(Path(credentials).resolve())}
    return config_from_dict(data, path.resolve(), broker_url=broker_url)
