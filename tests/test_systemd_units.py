"""The systemd units in ``systemd/``: one for every long-running command, each accepted by
``systemd-analyze verify`` with nothing to say, hardened to an exposure of 4.0 or less
(``systemd-analyze security --offline``), and never restarting in a loop on a
configuration error (exit status 2, docs/install.md)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
UNITS = REPO / "systemd"
INSTALLED = "/opt/bridge-table/.venv/bin/bridge-table"

#: every command that runs until it is stopped, and its unit
LONG_RUNNING = {"bridge": "bridge-table-bridge@.service", "run": "bridge-table-run@.service",
                "controller": "bridge-table-controller.service",
                "console": "bridge-table-console.service",
                "vugraph": "bridge-table-vugraph.service",
                "broadcast": "bridge-table-broadcast.service"}
MAX_EXPOSURE = 4.0


def analyze() -> str:
    found = shutil.which("systemd-analyze")
    # make test installs it (Makefile, deps-system): its absence is a failure, not a skip
    assert found, "systemd-analyze is missing: `make deps-system` installs the systemd package"
    return found


def lines(unit: str) -> list[str]:
    return (UNITS / unit).read_text(encoding="utf-8").splitlines()


def test_every_long_running_command_has_a_unit() -> None:
    assert sorted(p.name for p in UNITS.glob("*.service")) == sorted(LONG_RUNNING.values())
    for command, unit in LONG_RUNNING.items():
        exec_start = [x for x in lines(unit) if x.startswith("ExecStart=")]
        assert exec_start == [x for x in exec_start if x.startswith(f"ExecStart={INSTALLED} "
                                                                    f"{command} ")], unit
        assert len(exec_start) == 1, unit


@pytest.mark.parametrize("unit", sorted(LONG_RUNNING.values()))
def test_the_unit_restarts_but_never_loops_on_a_configuration_error(unit: str) -> None:
    text = lines(unit)
    assert "Restart=always" in text and "RestartPreventExitStatus=2" in text
    assert "StartLimitBurst=5" in text and "StartLimitIntervalSec=60" in text
    # a relative spool or journal lands in the state directory (firmware_bridge/config.py,
    # controller/service/cli_controller.py read $STATE_DIRECTORY); /etc/bridge-table is
    # read-only there
    assert "StateDirectory=bridge-table" in text and "ProtectSystem=strict" in text
    # groups a plain Debian lacks (gpio, i2c, spi) would keep the unit from starting: the
    # user's own groups apply (User= runs initgroups)
    assert not [x for x in text if x.startswith("SupplementaryGroups=")]
    docs = [x.split("=", 1)[1] for x in text if x.startswith("Documentation=")]
    assert docs == ["file:///opt/bridge-table/src/docs/install.md"]
    assert (REPO / "docs" / "install.md").is_file()


def test_systemd_analyze_verify_has_nothing_to_say(tmp_path: Path) -> None:
    # verify checks that ExecStart's program exists: point it at this checkout's command
    command = Path(sys.executable).with_name("bridge-table")
    assert command.is_file(), command
    copies = []
    for unit in sorted(LONG_RUNNING.values()):
        copy = tmp_path / unit
        copy.write_text((UNITS / unit).read_text(encoding="utf-8").replace(
            INSTALLED, str(command)), encoding="utf-8")
        copies.append(str(copy))
    proc = subprocess.run([analyze(), "verify", *copies], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and proc.stderr.strip() == "" and proc.stdout.strip() == "", \
        proc.stderr + proc.stdout


def test_a_broken_unit_is_reported_by_verify(tmp_path: Path) -> None:
    """The check above can fail: a misspelt value is reported."""
    copy = tmp_path / "bridge-table-controller.service"
    copy.write_text((UNITS / copy.name).read_text(encoding="utf-8").replace(
        "Restart=always", "Restart=sometimes").replace(INSTALLED, "/bin/true"), encoding="utf-8")
    proc = subprocess.run([analyze(), "verify", str(copy)], capture_output=True, text=True,
                          timeout=120)
    assert "sometimes" in proc.stderr


def exposure(unit_path: Path) -> float:
    proc = subprocess.run([analyze(), "security", "--offline=true", str(unit_path)],
                          capture_output=True, text=True, timeout=120)
    found = re.search(r"Overall exposure level for \S+: ([0-9.]+)", proc.stdout)
    assert found, proc.stdout + proc.stderr
    return float(found.group(1))


@pytest.mark.parametrize("unit", sorted(LONG_RUNNING.values()))
def test_the_unit_is_hardened(unit: str) -> None:
    assert exposure(UNITS / unit) <= MAX_EXPOSURE


def test_an_unhardened_unit_scores_worse(tmp_path: Path) -> None:
    """The exposure check can fail: the controller's unit without its hardening is over 4.0."""
    text = [x for x in lines("bridge-table-controller.service")
            if x.startswith(("[", "Description", "ExecStart", "User", "Type"))]
    copy = tmp_path / "bare.service"
    copy.write_text("\n".join(text) + "\n", encoding="utf-8")
    assert exposure(copy) > MAX_EXPOSURE


@pytest.mark.parametrize("unit", ["bridge-table-console.service",
                                  "bridge-table-vugraph.service"])
def test_a_web_units_file_limit_holds_its_connection_cap(unit: str) -> None:
    """Each connection is an open file: the unit's LimitNOFILE leaves room for the web
    server's cap and its own files (controller/web/limits.py)."""
    from controller.web.limits import LIMITS, RESERVED_FILES

    found = [int(x.split("=", 1)[1]) for x in lines(unit) if x.startswith("LimitNOFILE=")]
    assert found and found[0] >= LIMITS.connections + RESERVED_FILES
