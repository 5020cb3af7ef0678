from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from firmware_bridge.config import BridgeConfig, load_config
from firmware_bridge.errors import ConfigError
from firmware_bridge.examples import EXAMPLES

HW = EXAMPLES

GOOD = """
[table]
id = "7"
src = "table-7-pi"
language = "vi"

[broker]
url = "mqtt://10.0.0.2:1884"
root = "club"
keepalive = 20

[registry]
files = ["tags.toml"]

[spool]
path = "var/spool.sqlite"

[[readers]]
name = "north"
url = "serial:///dev/ttyUSB0?baudrate=115200"
kind = "inventory"
antennas = { "0" = { seat = "N", zone = "tray" } }

[[readers]]
name = "bidbox"
url = "serial:///dev/ttyUSB4"
antennas = { "0" = { seat = "N", zone = "bid" }, "1" = { seat = "E", zone = "bid" }, \
"2" = { seat = "S", zone = "bid" }, "3" = { seat = "W", zone = "bid" } }

[[readers]]
name = "board"
url = "nfc://tty:AMA0:pn532"
kind = "tap"
antennas = { "0" = { zone = "board" } }

[gpio]
factory = "mock"

[gpio.seats.N]
turn_led = 17
alert_led = 27
claim = 26

[gpio.seats.E]
rgb_led = [22, 23, 24]

[gpio.buttons]
director = 5
undo = 13

[display]
type = "hd44780"
address = 0x27
cols = 16
rows = 2
"""


def write(tmp_path: Path, text: str, name: str = "table.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    (tmp_path / "tags.toml").write_text("# empty registry\n")
    return path


def load_text(tmp_path: Path, text: str) -> BridgeConfig:
    return load_config(write(tmp_path, text))


def error_of(tmp_path: Path, text: str) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_text(tmp_path, text)
    return info.value


def test_good_file_loads_into_typed_values(tmp_path: Path) -> None:
    config = load_text(tmp_path, GOOD)
    assert config.table.id == "7" and config.table.src == "table-7-pi"
    assert config.table.language == "vi"
    assert (config.broker.host, config.broker.port, config.broker.tls) == ("10.0.0.2", 1884, False)
    assert config.broker.client_id == "table-7-pi"
    assert config.topic("event") == "club/7/event"
    assert config.registry.files == ((tmp_path / "tags.toml").resolve(),)
    assert config.spool.path == (tmp_path / "var" / "spool.sqlite").resolve()
    assert [r.name for r in config.readers] == ["north", "bidbox", "board"]
    assert config.readers[0].kind == "inventory" and config.readers[1].kind is None
    assert config.antenna("bidbox", "2") is not None
    assert config.antenna("bidbox", "2").seat == "S"  # type: ignore[union-attr]
    board = config.antenna("board", "0")
    assert board is not None and board.zone == "board" and board.seat is None
    assert config.antenna("bidbox", "9") is None and config.antenna("nobody", "0") is None
    assert config.gpio.seats["N"].turn_led == 17 and config.gpio.seats["N"].buttons == {"claim": 26}
    assert config.gpio.seats["E"].rgb_led == (22, 23, 24)
    assert dict(config.gpio.buttons) == {"director": 5, "undo": 13}
    assert (config.display.type, config.display.cols, config.display.rows) == ("hd44780", 16, 2)
    assert config.display.address == 0x27


def test_values_are_frozen(tmp_path: Path) -> None:
    config = load_text(tmp_path, GOOD)
    with pytest.raises(AttributeError):
        config.table.id = "8"  # type: ignore[misc]
    with pytest.raises(TypeError):
        config.gpio.buttons["next"] = 3  # type: ignore[index]


def test_defaults_for_a_minimal_file(tmp_path: Path) -> None:
    config = load_text(tmp_path, '[table]\nid = "A12"\n')
    assert config.table.src == "table-A12-pi" and config.table.language == "en"
    assert config.broker.url == "mqtt://127.0.0.1:1883" and config.broker.root == "bridge"
    assert config.spool.path.name == "spool-table-A12.sqlite"
    assert config.readers == () and config.gpio.factory == "auto"
    assert config.display.type == "terminal"


def test_mqtts_defaults_to_port_8883(tmp_path: Path) -> None:
    config = load_text(tmp_path, '[table]\nid = "1"\n[broker]\nurl = "mqtts://broker.club"\n')
    assert config.broker.tls and config.broker.port == 8883


@pytest.mark.parametrize(("fragment", "key", "problem"), [
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n'
     'antennas = { "0" = { seat = "N", zone = "tray" } }\n'
     '[[readers]]\nname = "b"\nurl = "sim://1/b"\n'
     'antennas = { "0" = { seat = "N", zone = "tray" } }\n'
     '[[readers]]\nname = "c"\nurl = "sim://1/c"\n'
     'antennas = { "0" = { seat = "N", zone = "bid" }, "1" = { seat = "Q", zone = "bid" } }\n',
     'readers[2].antennas."1".seat', "'Q' is not one of N, E, S, W"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n'
     'antennas = { "0" = { zone = "tray" } }\n',
     'readers[0].antennas."0".seat', "missing"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n'
     'antennas = { "0" = { zone = "board", seat = "N" } }\n',
     'readers[0].antennas."0".seat', "board zone belongs to no seat"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n'
     'antennas = { "0" = { seat = "N", zone = "hand" } }\n',
     'readers[0].antennas."0".zone', "'hand' is not one of"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "usb://x"\n'
     'antennas = { "0" = { seat = "N", zone = "tray" } }\n',
     "readers[0].url", "the scheme must be one of"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\nkind = "pulse"\n'
     'antennas = { "0" = { seat = "N", zone = "tray" } }\n',
     "readers[0].kind", "'pulse' is not one of inventory, tap"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n'
     'antennas = { "0" = { seat = "N", zone = "tray" } }\n'
     '[[readers]]\nname = "a"\nurl = "sim://1/b"\n'
     'antennas = { "0" = { seat = "E", zone = "tray" } }\n',
     "readers[1].name", "already the name of readers[0]"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "sim://1/a"\n',
     "readers[0].antennas", "missing table"),
    ('[table]\nid = "1/2"\n', "table.id", "is not 1-32 letters, digits"),
    ('[table]\nid = "controller"\n', "table.id", "is reserved"),
    ('[table]\nid = "-7"\n', "table.id", "starting with a letter or a digit"),
    ('[table]\nlanguage = "fr"\nid = "1"\n', "table.language", "'fr' is not one of en, vi, zh"),
    ('[table]\nid = "1"\nsource = "x"\n', "table.source", "unknown key"),
    ('[tabel]\nid = "1"\n', "table", "missing table"),
    ('[table]\nid = "1"\n[broker]\nurl = "http://x"\n', "broker.url", "mqtt:// or mqtts://"),
    ('[table]\nid = "1"\n[broker]\nurl = "mqtt://x:99999"\n', "broker.url", "bad port"),
    ('[table]\nid = "1"\n[registry]\nfiles = ["nope.toml"]\n', "registry.files[0]",
     "does not exist"),
    ('[table]\nid = "1"\n[gpio.seats.N]\nturn_led = 17\n[gpio.seats.S]\nalert_led = 17\n',
     "gpio.seats.S.alert_led", "BCM pin 17 is already used by gpio.seats.N.turn_led"),
    ('[table]\nid = "1"\n[gpio.seats.N]\nturn_led = 40\n', "gpio.seats.N.turn_led",
     "above the maximum 27"),
    ('[table]\nid = "1"\n[gpio.seats.N]\nturn_led = true\n', "gpio.seats.N.turn_led",
     "must be an integer, not a boolean"),
    ('[table]\nid = "1"\n[gpio.seats.X]\nturn_led = 4\n', "gpio.seats.X", "not a seat"),
    ('[table]\nid = "1"\n[gpio.seats.N]\nrgb_led = [1, 2, 2]\n', "gpio.seats.N.rgb_led[2]",
     "already used by gpio.seats.N.rgb_led[1]"),
    ('[table]\nid = "1"\n[gpio.seats.N]\nrgb_led = [1, 2]\n', "gpio.seats.N.rgb_led",
     "three BCM pins"),
    ('[table]\nid = "1"\n[gpio.buttons]\npanic = 4\n', "gpio.buttons.panic", "not a button"),
    ('[table]\nid = "1"\n[gpio]\nfactory = "pigpio"\n', "gpio.factory", "not one of"),
    ('[table]\nid = "1"\n[display]\ntype = "hd44780"\ncols = 17\nrows = 3\n', "display.cols",
     "an HD44780 is"),
    ('[table]\nid = "1"\n[display]\ntype = "vfd"\n', "display.type", "not one of"),
    # a chip select is its chip's alone (docs/hardware/wiring.md, the club build)
    ('[table]\nid = "1"\n[[readers]]\nname = "north"\nurl = "mfrc522://0.0?cs=17"\n'
     'antennas = { "0" = { seat = "N", zone = "spot" } }\n[gpio.seats.N]\nturn_led = 17\n',
     "readers[0].url", "chip select cs=17 of reader 'north' is BCM pin 17, which is also "
                       "gpio.seats.N.turn_led"),
    ('[table]\nid = "1"\n[[readers]]\nname = "board"\nurl = "mfrc522://0.0?cs=4"\n'
     'antennas = { "0" = { zone = "board" } }\n[gpio.buttons]\ndirector = 4\n',
     "readers[0].url", "which is also gpio.buttons.director"),
    ('[table]\nid = "1"\n[[readers]]\nname = "board"\nurl = "mfrc522://0.0?cs=3"\n'
     'antennas = { "0" = { zone = "board" } }\n[display]\ntype = "hd44780"\n',
     "readers[0].url", "which is also display (I2C1 SCL)"),
    ('[table]\nid = "1"\n[[readers]]\nname = "a"\nurl = "mfrc522://0.0?cs=5"\n'
     'antennas = { "0" = { seat = "N", zone = "spot" } }\n'
     '[[readers]]\nname = "b"\nurl = "mfrc522://0.0?cs=5&speed_hz=1000000"\n'
     'antennas = { "0" = { seat = "E", zone = "spot" } }\n',
     "readers[1].url", "which is also readers[0].url (the chip select of reader 'a')"),
])
def test_errors_name_file_key_and_problem(tmp_path: Path, fragment: str, key: str,
                                          problem: str) -> None:
    error = error_of(tmp_path, fragment)
    assert error.key == key
    assert problem in error.problem
    assert str(tmp_path / "table.toml") in str(error)
    assert f": {key}: " in str(error)


def test_keepalive_wrong_type_is_named(tmp_path: Path) -> None:
    error = error_of(tmp_path, '[table]\nid = "1"\n[broker]\nkeepalive = "soon"\n')
    assert error.key == "broker.keepalive" and "must be an integer, not a string" in error.problem


def test_broken_toml_is_a_config_error(tmp_path: Path) -> None:
    error = error_of(tmp_path, '[table\nid = "1"\n')
    assert "not valid TOML" in str(error) and str(tmp_path / "table.toml") in str(error)


def test_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read the file"):
        load_config(tmp_path / "absent.toml")


def test_binary_garbage_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "garbage.toml"
    path.write_bytes(b"\xff\xfe\x00garbage\x80")
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)
def test_shipped_real_table_config_loads() -> None:
    config = load_config(HW / "table-boards.toml")
    assert {r.name for r in config.readers} == {"north", "east", "south", "west", "board"}
    assert config.display.type == "hd44780"
    # a play spot and a call spot per seat, each read one card at a time (docs/sensing.md)
    for zone in ("spot", "bid"):
        seats = {a.seat for r in config.readers for a in r.antennas.values() if a.zone == zone}
        assert seats == {"N", "E", "S", "W"}


def test_shipped_sim_config_loads() -> None:
    config = load_config(HW / "sim.toml")
    assert config.gpio.factory == "mock" and config.display.type == "terminal"
    assert all(r.url.startswith("sim://") for r in config.readers)
    bids = {a.seat for r in config.readers for a in r.antennas.values() if a.zone == "bid"}
    assert bids == {"N", "E", "S", "W"}


def test_reader_schemes_and_display_types_come_from_the_registries(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No list kept by hand in the config: a backend registered in
    ``firmware_bridge.readers.READERS`` / ``firmware_bridge.backends.DISPLAYS`` is valid in
    a table file, one that is not is refused with the registry's names."""
    from firmware_bridge.backends import DISPLAYS
    from firmware_bridge.readers import READERS

    path = tmp_path / "t.toml"
    text = ('[table]\nid = "1"\n[display]\ntype = "epaper"\n[[readers]]\nname = "n"\n'
            'url = "pn5180://spi0.0"\nantennas = { "0" = { seat = "N", zone = "tray" } }\n')
    path.write_text(text)
    with pytest.raises(ConfigError, match=r"readers\[0\]\.url: 'pn5180://spi0\.0': the scheme "
                                          r"must be one of memory://, mfrc522://, nfc://, "
                                          r"pn532://, serial://, sim://"):
        load_config(path)
    monkeypatch.setitem(READERS.builtins, "pn5180", "firmware_bridge.readers.memory:MemoryReader")
    with pytest.raises(ConfigError, match="display.type: 'epaper' is not one of hd44780, none, "
                                          "ssd1306, terminal"):
        load_config(path)
    monkeypatch.setitem(DISPLAYS.builtins, "epaper", "firmware_bridge.display:NullDisplay")
    config = load_config(path)
    assert (config.readers[0].url, config.display.type) == ("pn5180://spi0.0", "epaper")


def test_memory_readers_in_a_table_file(tmp_path: Path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('[table]\nid = "1"\n[[readers]]\nname = "n"\nurl = "memory://1/n?kind=tap"\n'
                    'antennas = { "0" = { zone = "board" } }\n')
    assert load_config(path).readers[0].url == "memory://1/n?kind=tap"


def test_a_relative_spool_lives_in_systemds_state_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # systemd/bridge-table-*.service: StateDirectory=bridge-table and ProtectSystem=strict,
    # under which the config's own directory (/etc/bridge-table) is read-only
    state = tmp_path / "state"
    monkeypatch.setenv("STATE_DIRECTORY", f"{state}:{tmp_path / 'second'}")
    config = load_text(tmp_path, GOOD)
    assert config.spool.path == (state / "var" / "spool.sqlite").resolve()
    assert config.registry.files == ((tmp_path / "tags.toml").resolve(),)
    monkeypatch.setenv("STATE_DIRECTORY", "")
    assert load_text(tmp_path, GOOD).spool.path == (tmp_path / "var" / "spool.sqlite").resolve()


# -- one source of truth for the table's broker (issue 43) ----------------------------------

def _credentials(tmp_path: Path, user: str, url: str = "mqtt://venue.lan:1883") -> Path:
    path = tmp_path / f"{user}.toml"
    path.write_text(f'url = "{url}"\nusername = "{user}"\npassword = "secret"\n')
    path.chmod(0o600)
    return path


def test_the_credentials_files_url_wins_over_the_table_files(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """The sample's bench URL with the venue's credentials: the bridge dialled the bench URL
    and spooled for ever."""
    creds = _credentials(tmp_path, "table-7")
    config = load_config(write(tmp_path, GOOD), credentials=creds)
    assert (config.broker.host, config.broker.port) == ("venue.lan", 1883)
    assert config.broker.username == "table-7"
    assert "mqtt://10.0.0.2:1884 is not used" in caplog.text


def test_the_credentials_variable_wins_over_the_table_files_url(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BRIDGE_TABLE_MQTT_CREDENTIALS", str(_credentials(tmp_path, "table-7")))
    config = load_config(write(tmp_path, GOOD))
    assert config.broker.host == "venue.lan"


def test_the_command_lines_broker_still_wins(tmp_path: Path) -> None:
    creds = _credentials(tmp_path, "table-7")
    config = load_config(write(tmp_path, GOOD), credentials=creds,
                         broker_url="mqtt://elsewhere:1999")
    assert (config.broker.host, config.broker.port) == ("elsewhere", 1999)


@pytest.mark.parametrize("user, words", [
    ("table-3", "speaks for table 3, not table 7"),
    ("verify-3", "speaks for table 3, not table 7"),
    ("director", "is not a table's"),
    ("table-7-controller", "is not a table's")])
def test_a_login_for_another_table_stops_the_bridge(tmp_path: Path, user: str,
                                                     words: str) -> None:
    with pytest.raises(ConfigError, match=words):
        load_config(write(tmp_path, GOOD), credentials=_credentials(tmp_path, user))


@pytest.mark.parametrize("user", ["table-7", "verify-7", "club-own-name"])
def test_a_login_for_this_table_or_unknown_to_broker_config_loads(tmp_path: Path,
                                                                  user: str) -> None:
    config = load_config(write(tmp_path, GOOD), credentials=_credentials(tmp_path, user))
    assert config.broker.username == user


def test_the_bridge_command_refuses_another_tables_login(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    from firmware_bridge.cli_bridge import main

    table = write(tmp_path, GOOD)
    assert main(["--config", str(table), "--credentials",
                 str(_credentials(tmp_path, "table-1"))]) == 2
    assert "speaks for table 1, not table 7" in capsys.readouterr().err
