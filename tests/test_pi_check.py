"""tools/pi_check.py's reading of docs/install.md and the checks it runs (the check itself,
minutes under emulation and as root, is ``make pi-check``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tools import pi_check
from tools.compiled_build import ROOT

INSTALL_MD = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")


def test_the_marked_blocks_are_the_pis_install_steps_as_written() -> None:
    steps = pi_check.install_steps(INSTALL_MD)
    assert len(steps) == 2
    everywhere, pi = steps
    assert "sudo git clone REPOSITORY /opt/bridge-table/src" in everywhere
    assert "sudo python3 -m venv /opt/bridge-table/.venv" in everywhere
    # the table's Pi's own lines, byte for byte as the page shows them
    assert "sudo /opt/bridge-table/.venv/bin/pip install '/opt/bridge-table/src[pi,nfc,readers]'" \
        in pi.splitlines()
    for block in steps:
        assert f"```sh\n{block}\n```" in INSTALL_MD


def test_an_unmarked_block_is_not_run() -> None:
    text = "<!-- pi-check: x -->\n```sh\necho one\n```\n\n```sh\necho two\n```\n"
    assert pi_check.install_steps(text) == ["echo one"]


def test_the_root_holds_what_the_steps_install_and_its_key_follows_the_list() -> None:
    steps = ["sudo apt-get install -y gcc python3-dev \\\n    fonts-dejavu-core  # fonts",
             "sudo apt-get update"]
    assert pi_check.apt_packages(steps) == ["gcc", "python3-dev", "fonts-dejavu-core"]
    packages = pi_check.root_packages(steps)
    assert "mosquitto" in packages and "gcc" in packages
    assert pi_check.cache_key(packages) == pi_check.cache_key(list(reversed(packages)))
    assert pi_check.cache_key(packages) != pi_check.cache_key([*packages, "zstd"])
    # the install page's own packages: the OLED's fonts and what builds spidev and RPi.GPIO
    page = pi_check.root_packages(pi_check.install_steps(INSTALL_MD))
    for package in ("fonts-dejavu-core", "fonts-wqy-microhei", "gcc", "python3-dev", "git",
                    "python3-venv"):
        assert package in page


def test_the_checks_run_the_installed_command_outside_the_tree() -> None:
    script = pi_check.check_script(18830, tests=True)
    bt = "/opt/bridge-table/.venv/bin/bridge-table"
    for check in (f"{bt} --version", f"{bt} demo --plain", f"{bt} selftest --scripted",
                  f"{bt} run --config table/sim.toml --broker mqtt://127.0.0.1:18830",
                  f"{bt} sim play board.jsonl", "pytest --fast"):
        assert check in script, check
    assert "cd /tmp/pi-check" in script
    assert "pytest" not in pi_check.check_script(18830, tests=False)
    assert all(not r.startswith("bridge-table") for r in pi_check.test_requirements())


def test_the_checks_are_a_script_bash_reads(tmp_path: Path) -> None:
    script = tmp_path / "checks.sh"
    script.write_text(pi_check.check_script(18830, tests=True), encoding="utf-8")
    proc = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
