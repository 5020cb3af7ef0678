"""controller.broker.settings: one broker-settings parser for every command."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from controller.broker.settings import (
    BrokerSettings,
    BrokerSettingsError,
    add_broker_arguments,
    read_credentials,
    resolve,
    settings_from_args,
)
from controller.commandline import ControllerError
from firmware_bridge.examples import EXAMPLES


def _credentials(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "table-1.toml"
    p.write_text(text)
    p.chmod(0o600)
    return p


def test_the_old_names_still_import() -> None:
    from controller.service import daemon, engines

    assert daemon.BrokerSettings is BrokerSettings
    assert engines.ControllerError is ControllerError
    assert issubclass(BrokerSettingsError, ControllerError)


def test_credentials_file_gives_everything(tmp_path: Path) -> None:
    (tmp_path / "ca.crt").write_text("x")
    cred = _credentials(tmp_path, 'url = "mqtts://broker.venue:8883"\nusername = "table-1"\n'
                                  'password = "s3cret"\nca_file = "ca.crt"\n')
    assert read_credentials(cred)["ca_file"] == str((tmp_path / "ca.crt").resolve())
    # the CA file is not a certificate: the TLS context says so at once, naming the URL
    with pytest.raises(BrokerSettingsError, match="TLS files of mqtts://broker.venue:8883"):
        resolve(credentials=cred, env={})
    (tmp_path / "ca.crt").unlink()
    cred.write_text('url = "mqtts://broker.venue:8883"\nusername = "table-1"\n'
                    'password = "s3cret"\n')
    s = resolve(credentials=cred, env={})
    assert (s.host, s.port, s.tls, s.username, s.password) == ("broker.venue", 8883, True,
                                                               "table-1", "s3cret")


def test_precedence_explicit_then_environment_then_file_then_url(tmp_path: Path) -> None:
    cred = _credentials(tmp_path, 'url = "mqtt://file-host:1"\nusername = "file-user"\n'
                                  'password = "file-pw"\n')
    pw = tmp_path / "pw"
    pw.write_text("env-file-pw\n")
    env = {"BRIDGE_TABLE_MQTT_CREDENTIALS": str(cred), "BRIDGE_TABLE_MQTT_USERNAME": "env-user",
           "BRIDGE_TABLE_MQTT_PASSWORD_FILE": str(pw)}
    s = resolve(env=env)
    assert (s.host, s.username, s.password) == ("file-host", "env-user", "env-file-pw")
    s = resolve("mqtt://cli-host:2", username="cli-user", password_file=None, env=env)
    assert (s.host, s.port, s.username, s.password) == ("cli-host", 2, "cli-user",
                                                        "env-file-pw")
    # the URL's user:password@ only when nothing else gives them
    s = resolve("mqtt://u:p@h:3", env={})
    assert (s.username, s.password) == ("u", "p")
    assert resolve(env={}).url == "mqtt://127.0.0.1:1883"


def test_password_file_first_line_and_errors(tmp_path: Path) -> None:
    pw = tmp_path / "pw"
    pw.write_text("a b:c\nignored\n")
    assert resolve("mqtt://h", password_file=pw, env={}).password == "a b:c"
    pw.write_text("")
    with pytest.raises(BrokerSettingsError, match="is empty"):
        resolve("mqtt://h", password_file=pw, env={})
    with pytest.raises(BrokerSettingsError, match="cannot read the password file"):
        resolve("mqtt://h", password_file=tmp_path / "absent", env={})


@pytest.mark.parametrize("text, problem", [
    ("username = 1\n", "must be a string"),
    ("user = 'x'\n", "unknown key"),
    ("url = \n", "not valid TOML"),
])
def test_bad_credentials_files_are_clear_errors(tmp_path: Path, text: str, problem: str) -> None:
    with pytest.raises(BrokerSettingsError, match=problem):
        resolve(credentials=_credentials(tmp_path, text), env={})


def test_binary_credentials_file_is_a_clear_error(tmp_path: Path) -> None:
    p = tmp_path / "c"
    p.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(BrokerSettingsError, match="not UTF-8"):
        read_credentials(p)


def test_client_certificate_needs_both_files_and_tls() -> None:
    with pytest.raises(BrokerSettingsError, match="both"):
        BrokerSettings.from_url("mqtts://h", cert_file="c.pem")
    with pytest.raises(BrokerSettingsError, match="mqtts://"):
        BrokerSettings.from_url("mqtt://h", cert_file="c.pem", key_file="k.pem")


def test_readable_password_file_is_warned_about(tmp_path: Path,
                                                caplog: pytest.LogCaptureFixture) -> None:
    cred = _credentials(tmp_path, 'password = "x"\n')
    cred.chmod(0o644)
    resolve(credentials=cred, env={})
    assert "readable by others" in caplog.text


def test_command_line_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("BRIDGE_TABLE_"):
            monkeypatch.delenv(name)
    ap = argparse.ArgumentParser()
    add_broker_arguments(ap)
    pw = tmp_path / "pw"
    pw.write_text("p\n")
    args = ap.parse_args(["--broker", "mqtt://h:5", "--username", "u", "--password-file",
                          str(pw)])
    s = settings_from_args(args)
    assert (s.host, s.port, s.username, s.password) == ("h", 5, "u", "p")
    monkeypatch.setenv("BRIDGE_TABLE_BROKER", "mqtt://envhost:6")
    assert settings_from_args(ap.parse_args([])).url == "mqtt://envhost:6"


def test_bridge_table_file_reads_a_credentials_file(tmp_path: Path) -> None:
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.errors import ConfigError

    _credentials(tmp_path, 'url = "mqtt://venue:1884"\nusername = "table-1"\n'
                           'password = "s3cret"\n')
    config = config_from_dict({"table": {"id": "1"},
                               "broker": {"credentials": "table-1.toml"}},
                              tmp_path / "t.toml")
    b = config.broker
    assert (b.host, b.port, b.username, b.password, b.url) == ("venue", 1884, "table-1",
                                                               "s3cret", "mqtt://venue:1884")
    assert b.settings().password == "s3cret"
    with pytest.raises(ConfigError, match="does not exist"):
        config_from_dict({"table": {"id": "1"}, "broker": {"credentials": "absent.toml"}},
                         tmp_path / "t.toml")


@pytest.mark.parametrize("command", ["bridge", "run", "controller", "broadcast"])
def test_every_command_takes_a_credentials_file(tmp_path: Path, command: str,
                                                capsys: pytest.CaptureFixture[str],
                                                caplog: pytest.LogCaptureFixture) -> None:
    """A credentials file that is not there stops the command at start with a clear line."""
    from controller.cli import main as cli

    sim = EXAMPLES / "sim.toml"
    args = {"bridge": ["--config", str(sim)], "run": ["--config", str(sim), "--no-journal"],
            "controller": ["--no-journal"], "broadcast": ["--store", str(tmp_path / "s.db")]}
    absent = tmp_path / "absent.toml"
    code = cli([command, *args[command], "--credentials", str(absent)])
    assert code == 2
    said = capsys.readouterr().err + caplog.text
    assert str(absent) in said and "Traceback" not in said


@pytest.mark.parametrize("url", [
    "mqtt://broker.venue:1884", "mqtts://broker.venue", "tcp://10.0.0.2:1883", "ssl://h:8883",
    "broker.venue:1883", "mqtt://", "mqtt://:1883", "http://broker.venue", "mqtt://h:port",
    "ws://h:9001",
])
def test_the_daemon_and_the_table_file_accept_the_same_urls(url: str, tmp_path: Path) -> None:
    """One parser: what ``--broker`` of every command takes (``resolve``) is what a table
    file's ``[broker] url`` takes (``firmware_bridge.config``), to the same settings."""
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.errors import ConfigError

    try:
        daemon: BrokerSettings | str = resolve(url, env={})
    except BrokerSettingsError as e:
        daemon = str(e)
    try:
        config = config_from_dict({"table": {"id": "1"}, "broker": {"url": url}},
                                  tmp_path / "t.toml")
        bridge: BrokerSettings | str = config.broker.settings()
    except ConfigError as e:
        assert "broker.url" in str(e)
        bridge = e.problem
    if isinstance(daemon, BrokerSettings):
        assert isinstance(bridge, BrokerSettings) and bridge.url == daemon.url
        assert bridge.tls == daemon.tls
    else:
        assert bridge == daemon
