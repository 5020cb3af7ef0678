"""Fuzzing the TOML files the commands read with documents that ARE valid TOML but hold
anything in any key (a hand-edited file): the bridge config, the simulator's view of it, the round's
schedule, the indicator policy and the tag registry each answer with their documented error
(``ConfigError``, ``SimError``, ``ScheduleError``, ``PolicyError``, ``RegistryError``),
never another exception. (Random bytes and mutated files: tests/test_fuzz_files.py.)"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from fuzzing import fuzz_settings, reads_or_refuses
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.indicators.policy import IndicatorPolicy, PolicyError
from controller.session.schedule import ScheduleError, load_schedule
from firmware_bridge.config import load_config
from firmware_bridge.errors import ConfigError
from firmware_bridge.sim.table import SimError, SimTable
from firmware_bridge.tags import RegistryError, RegistryFile

SETTINGS = fuzz_settings(60)
REPO = Path(__file__).resolve().parent.parent

WORDS = ["1", "N", "E", "S", "W", "tray", "bid", "board", "pocket", "inventory", "tap",
         "sim://1/north", "sim://1/bidbox", "serial:///dev/null", "mqtt://127.0.0.1:1883",
         "table", "after_play", "director", "REVOKE", "SA", "1NT", "04C10002000000", "1-3",
         "tags-sim.toml", "en", "hd44780", "terminal", ""]
scalars = (st.integers(-3, 70).map(str) | st.sampled_from(WORDS).map(json.dumps)
           | st.text(max_size=8).map(json.dumps) | st.sampled_from(["true", "false", "1.5",
                                                                    "-0.0", "nan", "inf"]))


def key(words: list[str]) -> st.SearchStrategy[str]:
    return (st.sampled_from(words) | st.text(max_size=5)).map(json.dumps)


def values(words: list[str]) -> st.SearchStrategy[str]:
    arrays = st.lists(scalars, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
    tables = st.dictionaries(key(words), scalars | arrays, max_size=3).map(
        lambda d: "{ " + ", ".join(f"{k} = {v}" for k, v in d.items()) + " }")
    nested = st.dictionaries(key(words), tables, max_size=3).map(
        lambda d: "{ " + ", ".join(f"{k} = {v}" for k, v in d.items()) + " }")
    return scalars | arrays | tables | nested


@st.composite
def document(draw: st.DrawFn, sections: list[str], keys: list[str]) -> bytes:
    """A TOML document: some of ``sections`` (``[[x]]`` for arrays of tables), each with keys
    drawn from ``keys`` (and random ones), every value of any type."""
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from(sections))
        lines.append(f"[{name}]" if not name.startswith("[") else f"[{name}]")
        for k, v in draw(st.dictionaries(key(keys), values(keys), max_size=5)).items():
            lines.append(f"{k} = {v}")
    for k, v in draw(st.dictionaries(key(keys + sections), values(keys), max_size=3)).items():
        lines.insert(0, f"{k} = {v}")
    text = "\n".join(lines) + "\n"
    try:
        tomllib.loads(text)
    except tomllib.TOMLDecodeError:  # a duplicate key or table: drop it, keep the rest valid
        text = "\n".join(lines[-1:]) + "\n" if lines else ""
        try:
            tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            text = ""
    return text.encode()


CONFIG_SECTIONS = ["table", "broker", "registry", "spool", "[readers]", "gpio", "gpio.seats.N",
                   "display", "health"]
CONFIG_KEYS = ["id", "src", "language", "url", "root", "keepalive", "files", "path", "sync",
               "name", "kind", "antennas", "zone", "seat", "debounce", "factory", "turn_led",
               "alert_led", "driver", "cols", "rows", "interval", "client_id", "ca_file"]


@pytest.mark.slow
@SETTINGS
@given(document(CONFIG_SECTIONS, CONFIG_KEYS))
def test_bridge_config(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "table.toml", data, load_config, ConfigError)


@pytest.mark.slow
@SETTINGS
@given(document(CONFIG_SECTIONS, CONFIG_KEYS))
def test_simulator_view_of_the_config(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "sim.toml", data, SimTable.from_config, SimError)


@pytest.mark.slow
@SETTINGS
@given(document(["tables"], ["1", "2", "7", "A12"]))
def test_schedule(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "round.toml", data, load_schedule, ScheduleError)


@pytest.mark.slow
@SETTINGS
@given(document(["indicator", "indicator.codes"], ["default", "codes", "REVOKE",
                                                   "UNKNOWN_TAG", "DEFECTIVE_TRICK"]))
def test_policy(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "policy.toml", data, IndicatorPolicy.load, PolicyError)


@pytest.mark.slow
@SETTINGS
@given(document(["boards", "decks.1", "decks.x", "bidboxes.N", "bidboxes", "decks"],
                ["version", "1", "SA", "1NT", "Pass", "STOP", "N"]))
def test_tag_registry(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "tags.toml", data, RegistryFile.read, RegistryError)


@pytest.mark.slow
def test_the_generator_makes_valid_toml_with_content() -> None:
    """The documents are TOML that parses, and not all empty (else the fuzzing proves little)."""
    seen: list[bytes] = []

    @settings(max_examples=50, deadline=None)
    @given(document(CONFIG_SECTIONS, CONFIG_KEYS))
    def collect(data: bytes) -> None:
        tomllib.loads(data.decode())
        seen.append(data)

    collect()
    assert sum(1 for d in seen if d.strip()) >= 10
