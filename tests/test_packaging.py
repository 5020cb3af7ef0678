"""A scorer's laptop: ``bridge-table`` without its ``[pi]`` and ``[nfc]`` extras.

Rather than build a second venv, each check runs in a subprocess whose ``sitecustomize``
puts a ``sys.meta_path`` finder first that refuses every hardware library
(``firmware_bridge.extras.HARDWARE_MODULES``), as if it were not installed. In that process
every module of the package imports, the scorer's and director's commands run, and the
simulated table's bridge still reads and publishes, saying once which extra would light
its LEDs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest
from broker import Mosquitto
from test_sim import small_board
from test_sim_bridge import play_and_watch, sim_config, stop

from firmware_bridge.extras import EXTRAS, HARDWARE_MODULES, MissingExtra, needs_extra

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).parent / "data"

BLOCKER = '''
import importlib.abc
import os
import sys

_BLOCKED = frozenset(os.environ["BT_BLOCKED_MODULES"].split(","))


class _NotInstalled(importlib.abc.MetaPathFinder):
    """Every hardware library is missing, as on a laptop without the extras."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, _NotInstalled())
'''

#: the distributions each extra installs (pyproject.toml), by their import names
DISTRIBUTION_MODULES = {"gpiozero": "gpiozero", "lgpio": "lgpio", "RPi.GPIO": "RPi",
                        "RPLCD": "RPLCD", "smbus2": "smbus2", "luma.oled": "luma",
                        "nfcpy": "nfc"}


@pytest.fixture(scope="module")
def laptop_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("laptop")
    (site / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)]),
            "BT_BLOCKED_MODULES": ",".join(sorted(HARDWARE_MODULES)),
            "PYTHONUNBUFFERED": "1"}


def run(env: dict[str, str], *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)


def requirement_name(text: str) -> str:
    for stop_char in "<>=;[ !~":
        text = text.split(stop_char)[0]
    return text.strip()


def test_pyproject_extras_hold_the_hardware_libraries() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    base = {requirement_name(r) for r in project["dependencies"]}
    extras = {name: {requirement_name(r) for r in reqs}
              for name, reqs in project["optional-dependencies"].items()}
    assert not base & set(DISTRIBUTION_MODULES), "a hardware library is a base dependency"
    for extra, modules in EXTRAS.items():
        listed = {DISTRIBUTION_MODULES[d] for d in extras[extra] if d in DISTRIBUTION_MODULES}
        # PIL comes with luma.oled (Pillow); every other module is a listed distribution
        assert listed == set(modules) - {"PIL"}, extra
    assert "bridge-table" in extras["all"] and "bridge-table" in extras["test"]
    assert set(project["optional-dependencies"]["all"]) == {"bridge-table[pi,nfc,readers,mcu]"}


def test_the_blocker_blocks_and_the_hint_names_the_extra(laptop_env: dict[str, str]) -> None:
    done = run(laptop_env, "-c", "import gpiozero")
    assert done.returncode != 0 and "No module named 'gpiozero'" in done.stderr
    code = textwrap.dedent("""
        from firmware_bridge.extras import needs_extra
        with needs_extra("nfc", "the nfc:// reader"):
            import nfc
    """)
    done = run(laptop_env, "-c", code)
    assert "MissingExtra: the nfc:// reader needs nfc, which is not installed: " \
           "pip install 'bridge-table[nfc]'" in done.stderr


def test_needs_extra_lets_other_import_errors_through() -> None:
    with pytest.raises(ModuleNotFoundError, match="no_such_thing"), needs_extra("pi", "x"):
        import no_such_thing  # type: ignore[import-not-found]  # noqa: F401
    with pytest.raises(MissingExtra, match=r"pip install 'bridge-table\[pi\]'"), \
            needs_extra("pi", "the LEDs"):
        raise ModuleNotFoundError("No module named 'gpiozero.pins'", name="gpiozero.pins")
    with pytest.raises(ValueError, match="no extra 'gpu'"), needs_extra("gpu", "x"):
        pass


# the reader firmware (MicroPython, for the boards' own `machine` module) is shipped in the
# package but never imported on the host: tests/test_mcu_firmware.py runs it with a shim
FIRMWARE_LINE = ('FIRMWARE = ("firmware_bridge.mcu.btreader", "firmware_bridge.mcu.board_main")'
                 "\n")


def test_every_module_imports_without_the_hardware_libraries(
        laptop_env: dict[str, str]) -> None:
    code = FIRMWARE_LINE + textwrap.dedent("""
        import importlib, json, pkgutil, sys
        import controller, firmware_bridge
        failed = {}
        names = []
        for package in (controller, firmware_bridge):
            for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
                if info.name.endswith(".__main__") or info.name.startswith(FIRMWARE):
                    continue  # an entry point (runs its command), or reader firmware
                names.append(info.name)
                try:
                    importlib.import_module(info.name)
                except BaseException as e:
                    failed[info.name] = f"{type(e).__name__}: {e}"
        hardware = sorted(m for m in sys.modules if m.split(".")[0] in
                          {"gpiozero", "nfc", "RPLCD", "luma", "smbus2", "lgpio", "RPi"})
        print(json.dumps({"names": names, "failed": failed, "hardware": hardware}))
    """)
    done = run(laptop_env, "-c", code, timeout=300)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.splitlines()[-1])
    assert "controller.service.daemon" in result["names"]
    assert "firmware_bridge.gpio" in result["names"]
    assert result["failed"] == {}
    assert result["hardware"] == []


@pytest.mark.parametrize("command", ["score", "replay", "console", "controller", "export",
                                     "vugraph", "broker-config", "bridge"])
def test_commands_start_without_the_hardware_libraries(laptop_env: dict[str, str],
                                                       command: str) -> None:
    done = run(laptop_env, "-m", "controller.cli", command, "--help")
    assert done.returncode == 0, done.stderr
    assert "usage:" in done.stdout and "Traceback" not in done.stderr


def test_replay_and_score_run_on_a_laptop(laptop_env: dict[str, str], tmp_path: Path) -> None:
    replayed = run(laptop_env, "-m", "controller.cli", "replay",
                   str(DATA / "replay_t08_revoke.jsonl"), "--deals",
                   str(DATA / "replay_t08_revoke.pbn"), "--topics", "result")
    assert replayed.returncode == 0, replayed.stderr
    results = tmp_path / "results.jsonl"
    results.write_text(replayed.stdout, encoding="utf-8")
    result = json.loads(replayed.stdout.splitlines()[0])
    assert result["payload"]["contract"] == "4H" and result["payload"]["score_ns"] == 650
    scored = run(laptop_env, "-m", "controller.cli", "score", str(results))
    assert scored.returncode == 0, scored.stderr
    assert "Board 10" in scored.stdout and "+650" in scored.stdout


def test_an_nfc_reader_without_nfcpy_says_which_extra(laptop_env: dict[str, str]) -> None:
    code = textwrap.dedent("""
        import asyncio
        from firmware_bridge.readers import ReaderError, open_reader
        async def main():
            reader = open_reader("bidbox", "nfc://usb")
            try:
                async with reader:
                    pass
            except ReaderError as e:
                print(e)
        asyncio.run(main())
    """)
    done = run(laptop_env, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("the nfc:// reader needs nfc, which is not installed: "
                                   "pip install 'bridge-table[nfc]'")


def test_hardware_displays_without_the_pi_extra_are_display_errors(
        laptop_env: dict[str, str]) -> None:
    code = textwrap.dedent("""
        from firmware_bridge.config import DisplayConfig
        from firmware_bridge.display import make_display
        from firmware_bridge.errors import DisplayError
        for kind in ("hd44780", "ssd1306"):
            try:
                make_display(DisplayConfig(type=kind))
            except DisplayError as e:
                print(e)
    """)
    done = run(laptop_env, "-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "the HD44780 display needs RPLCD, which is not installed: pip install 'bridge-table[pi]'",
        "the SSD1306 display needs PIL, which is not installed: pip install 'bridge-table[pi]'",
    ]


@pytest.mark.timeout(180)
def test_the_simulated_table_runs_on_a_laptop(laptop_env: dict[str, str], tmp_path: Path,
                                              mosquitto: Mosquitto) -> None:
    """``sim run`` and ``bridge --config sim.toml`` without gpiozero: the events reach the
    broker; the LEDs are left out with one line naming the extra, and no traceback."""
    config = sim_config(tmp_path)
    env = {**laptop_env, "BRIDGE_TABLE_SIM_DIR": str(tmp_path / "sim")}
    sim = subprocess.Popen([sys.executable, "-m", "controller.cli", "sim", "run", "--config",
                            str(config), "--stdin"], cwd=ROOT, env=env, stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    bridge: subprocess.Popen[bytes] | None = None
    try:
        assert sim.stdout is not None and sim.stdin is not None
        readers = [sim.stdout.readline().decode().split() for _ in range(6)]
        assert [r[0] for r in readers] == ["reader"] * 6
        bridge = subprocess.Popen([sys.executable, "-m", "controller.cli", "bridge", "--config",
                                   str(config), "--broker", mosquitto.url], cwd=ROOT, env=env,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE)
        assert sim.stdout.readline().decode().strip() == "hosts ready"
        events = small_board()[:6]

        seen = play_and_watch(sim, mosquitto.url, events)
        assert len(seen) == len(events)
        assert all(isinstance(p, dict) and p["src"] == "table-1-pi" for p in seen)
    finally:
        code = stop(bridge) if bridge is not None else None
        stop(sim)
    assert bridge is not None and bridge.stderr is not None
    log = bridge.stderr.read().decode()
    assert code == 0, log
    assert "pip install 'bridge-table[pi]'" in log and "Traceback" not in log
    # the simulated pins (factory "mock") without gpiozero are the expected case on a
    # laptop: said, not an ERROR
    assert " ERROR " not in log and " INFO " in log, log


def test_the_demo_plays_to_its_result_without_the_extras(laptop_env: dict[str, str]) -> None:
    # `make demo` installs the package alone: gpiozero's mock pins are not there, and the
    # demo once waited for ever on the import that failed in its player
    proc = run(laptop_env, "-m", "controller.cli", "demo", "--speed", "4", timeout=240)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "+650" in proc.stdout and "bridge-table[pi]" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert " ERROR " not in proc.stderr  # no LED wired in the demo's table: nothing missing


def test_the_bridge_needs_no_web_stack(laptop_env: dict[str, str]) -> None:
    """firmware_bridge imports controller.broker.settings and controller.tomlfile (standard
    library only): with the web stack missing too, every bridge module still imports."""
    env = {**laptop_env,
           "BT_BLOCKED_MODULES": laptop_env["BT_BLOCKED_MODULES"] + ",starlette,uvicorn"}
    code = FIRMWARE_LINE + textwrap.dedent("""
        import importlib, pkgutil, sys
        import firmware_bridge
        for info in pkgutil.walk_packages(firmware_bridge.__path__, "firmware_bridge."):
            if not info.name.startswith(FIRMWARE):
                importlib.import_module(info.name)
        loaded = sorted({m.split(".")[0] for m in sys.modules} & {"starlette", "uvicorn"})
        web = sorted(m for m in sys.modules if m.startswith("controller.web"))
        print(loaded, web)
    """)
    done = run(env, "-c", code, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] []"


def test_the_licence_is_an_spdx_expression_with_its_text_shipped() -> None:
    # setuptools warns at every install on the old `license = {text = ...}` table; the
    # SPDX form needs the text beside it, and the wheel carries it (License-File)
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
