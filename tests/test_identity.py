"""Who is who (``controller.broker.identity``): the file broker-config writes, read back by the
controller, and the ``src`` it lets speak where."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.broker.identity import (
    Identities,
    IdentityError,
    identities_text,
    load_identities,
)
from controller.venue.config import BrokerPlan, identities


def test_the_file_broker_config_writes_reads_back(tmp_path: Path) -> None:
    ids = identities(BrokerPlan(tables=["1", "A2"], stations=["V1"],
                                director_src=["console-td"]))
    path = tmp_path / "identities.toml"
    path.write_text(identities_text(ids, "header"))
    back = load_identities(path)
    assert back == ids
    assert back.events["1"] == {"table-1-pi"} and back.events["V1"] == {"table-V1-pi"}
    assert back.rulings == {"console-td"}


def test_src_speaks_only_where_it_may() -> None:
    ids = Identities(events={"1": frozenset({"table-1-pi"}), "2": frozenset({"table-2-pi"})},
                     rulings=frozenset({"console-td"}))
    assert ids.src_problem("1", "event", "table-1-pi") is None
    assert ids.src_problem("1", "ruling", "console-td") is None
    # a table's Pi with the console's src, or another table's; the console on an event
    for table, kind, src in (("1", "event", "console-td"), ("1", "event", "table-2-pi"),
                             ("1", "ruling", "table-1-pi"), ("1", "event", "junk-7"),
                             ("9", "event", "table-9-pi"), ("9", "ruling", "console-td")):
        problem = ids.src_problem(table, kind, src)
        assert problem is not None and problem.startswith("refused"), (table, kind, src)


@pytest.mark.parametrize("text, why", [
    ("rulings = 3", "list of src"),
    ('rulings = ["a\\nb"]', "not a src"),
    ('nobody = 1', "unknown key"),
    ("[events]\n\"1\" = [\"x y\"]", "not a src"),
    ("not toml [", "ids.toml"),
])
def test_a_bad_file_is_refused_with_its_name(tmp_path: Path, text: str, why: str) -> None:
    path = tmp_path / "ids.toml"
    path.write_text(text)
    with pytest.raises(IdentityError, match=why) as e:
        load_identities(path)
    assert str(path) in str(e.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(IdentityError, match="ids.toml"):
        load_identities(tmp_path / "ids.toml")


def test_the_controller_stops_at_start_without_its_identities(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Fails closed: a missing or broken file is exit 2 (systemd does not restart it)."""
    from controller.service.cli_controller import main
    assert main(["--identities", str(tmp_path / "missing.toml"), "--no-journal"]) == 2
    assert "missing.toml" in caplog.text


def test_run_logs_its_controller_in_with_its_own_credentials(tmp_path: Path) -> None:
    """``bridge-table run --controller-credentials``: the Pi's controller is its own user
    (one connection per user), on the broker of the table file."""
    import argparse

    from controller.service.run import controller_for
    from controller.venue.config import write_broker_config
    from firmware_bridge.config import config_from_dict

    out = tmp_path / "broker"
    write_broker_config(BrokerPlan(tables=["1"], hosts=["localhost"], table_controllers=True),
                        out)
    config = config_from_dict({"table": {"id": "1"},
                               "broker": {"credentials": str(out / "clients" / "table-1.toml")},
                               "spool": {"path": str(tmp_path / "spool.sqlite")}},
                              tmp_path / "table.toml")
    args = argparse.Namespace(deals=None, rules="2017", policy=None, no_journal=True,
                              controller_credentials=str(out / "clients" /
                                                         "table-1-controller.toml"))
    daemon = controller_for(config, args)
    assert daemon.broker.username == "table-1-controller"
    assert daemon.broker.url == config.broker.url
    args.controller_credentials = None
    assert controller_for(config, args).broker.username == "table-1"


@pytest.mark.parametrize("layout", ["broker-config", "install"])
def test_the_controller_finds_who_is_who_beside_its_login(
        tmp_path: Path, layout: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Secure by default: broker-config's OUT/identities.toml above OUT/clients/USER.toml,
    or docs/install.md's /etc/bridge-table/identities.toml above credentials/USER.toml, is
    read without --identities; a login with none found is warned about."""
    from controller.service.cli_controller import daemon_from_args, parser
    monkeypatch.delenv("BRIDGE_TABLE_IDENTITIES", raising=False)
    monkeypatch.delenv("BRIDGE_TABLE_MQTT_CREDENTIALS", raising=False)
    folder = tmp_path / ("clients" if layout == "broker-config" else "credentials")
    folder.mkdir()
    credentials = folder / "controller.toml"
    credentials.write_text('url = "mqtt://127.0.0.1:1"\nusername = "controller"\n'
                           'password = "secret"\n')
    credentials.chmod(0o600)
    ids = identities(BrokerPlan(tables=["1"], director_src=["console-td"]))
    args = parser().parse_args(["--credentials", str(credentials), "--no-journal"])
    caplog.set_level("INFO", "bridge_table.controller")
    assert daemon_from_args(args).identities is None
    assert "no --identities: any login" in caplog.text
    (tmp_path / "identities.toml").write_text(identities_text(ids, "header"))
    found = daemon_from_args(args).identities
    assert found == ids
    assert "found beside the credentials" in caplog.text
