"""The package as a table's Pi has it: the pure wheel built from a copy of the clone,
installed in a virtualenv of its own, and its commands run from a folder outside the source
tree, so that nothing the clone has and the wheel lacks can help them (the installed demo
once found no ``hw_configs/sim.toml``, fell back to publishing the events directly, and on
a slow arm64 CPU stopped waiting before the result: issue 44). tools/pi_check.py runs the
same commands on an emulated arm64 Raspberry Pi OS."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tools.compiled_build import ROOT, copy_tree


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ``bin`` folder of a virtualenv with the pure wheel and its ``[pi]`` extra (the
    LEDs, buttons and displays a table's Pi drives: docs/install.md) installed, built from
    a copy of the clone (no build product lands in it)."""
    tmp = tmp_path_factory.mktemp("wheel")
    copy_tree(ROOT, tmp / "src")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp / "dist"), str(tmp / "src")], check=True, timeout=600)
    wheels = list((tmp / "dist").glob("bridge_table-*-py3-none-any.whl"))
    assert len(wheels) == 1, wheels
    subprocess.run([sys.executable, "-m", "venv", str(tmp / "venv")], check=True)
    subprocess.run([str(tmp / "venv" / "bin" / "python"), "-m", "pip", "install", "-q",
                    f"{wheels[0]}[pi]"], check=True, timeout=600)
    return tmp / "venv" / "bin"


def run(bin_dir: Path, cwd: Path, *args: str, timeout: float = 300
        ) -> subprocess.CompletedProcess[str]:
    """``bridge-table ARGS`` from the virtualenv, in ``cwd``, with no path to the clone."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONSTARTUP") and not k.startswith("BRIDGE_TABLE_")}
    env["PYTHONUNBUFFERED"] = "1"
    return subprocess.run([str(bin_dir / "bridge-table"), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def test_the_wheel_ships_the_examples(installed: Path, tmp_path: Path) -> None:
    proc = run(installed, tmp_path, "examples", "sim.toml")
    assert proc.returncode == 0, proc.stderr
    path = Path(proc.stdout.strip())
    assert path.is_file() and "site-packages" in path.parts, path
    assert ROOT not in path.parents
    for name in ("tags-sim.toml", "table-club.toml", "geometry-club.toml", "station.toml",
                 "policy.toml"):
        assert (path.parent / name).is_file(), name
    missing = run(installed, tmp_path, "examples", "no-such.toml")
    assert missing.returncode == 2 and "tags-sim.toml" in missing.stderr, missing.stderr


@pytest.mark.timeout(400)
def test_the_installed_demo_plays_on_the_simulated_table_to_its_result(
        installed: Path, tmp_path: Path) -> None:
    proc = run(installed, tmp_path, "demo", "--plain", "--speed", "50")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    # through the firmware bridge and the simulated readers, not published directly
    assert "directly" not in proc.stdout and "not found" not in proc.stdout, proc.stdout
    assert "did not report" not in proc.stdout
    assert "[result] Board 10: 4H by S, 11 tricks (as played 9), Score NS +650" in proc.stdout


@pytest.mark.timeout(400)
def test_the_installed_selftest_scripted_needs_no_file(installed: Path, tmp_path: Path
                                                       ) -> None:
    proc = run(installed, tmp_path, "selftest", "--scripted", "--repeats", "1")
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-2000:])
    assert (tmp_path / "selftest-table-1.json").is_file()
