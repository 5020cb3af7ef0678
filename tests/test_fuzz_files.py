"""Fuzzing every file format the commands read, whoever wrote them: random bytes and mutated valid
files. Each reader collects what is wrong (``errors``/``problems``) or raises its documented
error (``DupFormatError``, ``DealsError``, ``ScheduleError``, ``PolicyError``,
``ConfigError``, ``RegistryError``), never another exception."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fuzzing import fuzz_settings, mutated, reads_or_refuses
from hypothesis import given
from hypothesis import strategies as st

from controller.boards.deals import DealsError, read_deals
from controller.engine import Engine
from controller.formats.dup import DupFormatError, read_bri, read_dge, read_dup
from controller.formats.lin import read_lin
from controller.formats.pbn import deals_by_board, game_to_record, read_pbn
from controller.indicators.policy import IndicatorPolicy, PolicyError
from controller.replay.stream import replay_lines
from controller.session.schedule import ScheduleError, load_schedule
from firmware_bridge.config import load_config
from firmware_bridge.errors import ConfigError
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.sim.table import read_events
from firmware_bridge.tags import RegistryError, RegistryFile

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
SETTINGS = fuzz_settings(100)


def sample(name: str) -> bytes:
    return (DATA / name).read_bytes()


def one_of_files(*names: str) -> st.SearchStrategy[bytes]:
    return st.sampled_from([sample(n) for n in names]).flatmap(mutated) | st.binary(
        max_size=2000)


def text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


# -- deals and records ---------------------------------------------------------------------
@SETTINGS
@given(one_of_files("laws_scenarios.pbn", "import_format.pbn", "replay_t08_revoke.pbn"))
def test_pbn(data: bytes) -> None:
    pbn = read_pbn(io.StringIO(text(data)))
    for game in pbn.games:  # every game kept converts (read_pbn's promise)
        game_to_record(game)
    deals_by_board(pbn)
    assert all(isinstance(str(e), str) for e in pbn.errors)


@SETTINGS
@given(one_of_files("laws_scenarios.lin", "vugraph_sample.lin"))
def test_lin(data: bytes) -> None:
    lin = read_lin(io.StringIO(text(data)))
    assert all(isinstance(str(e), str) for e in lin.errors)
    assert all(r.board >= 0 for r in lin.records)


@SETTINGS
@given(one_of_files("four-boards.dup", "broken.dup", "four-boards.bri", "four-boards.dge"),
       st.sampled_from([read_dup, read_bri, read_dge]))
def test_dup_bri_dge(data: bytes, reader: object) -> None:
    assert callable(reader)
    try:
        deal_file = reader(data)
    except DupFormatError as e:
        assert str(e)
        return
    for problem in deal_file.problems:
        assert str(problem)


@SETTINGS
@given(one_of_files("four-boards.dup", "four-boards.bri", "laws_scenarios.pbn"),
       st.sampled_from([".dup", ".bri", ".dge", ".pbn", ".txt"]))
def test_deals_file_by_extension(tmp_path: Path, data: bytes, ext: str) -> None:
    read = reads_or_refuses(tmp_path / f"deals{ext}", data, read_deals, DealsError)
    assert read is None or all(isinstance(p, str) for p in read.problems)


# -- events ---------------------------------------------------------------------------------
@SETTINGS
@given(one_of_files("replay_t08_revoke.jsonl"))
def test_events_jsonl_through_replay(data: bytes) -> None:
    errors = io.StringIO()
    engine = Engine()
    outs = list(replay_lines(engine, data.split(b"\n"), errors=errors, source="fuzz"))
    assert engine.stats["internal_errors"] == 0
    assert all(o.topic.startswith("bridge/") for o in outs)


@SETTINGS
@given(one_of_files("replay_t08_revoke.jsonl"))
def test_events_jsonl_for_the_simulator(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "events.jsonl"
    path.write_bytes(data)
    events, problems = read_events(path)
    assert all(isinstance(e, dict) for e in events)
    assert all(isinstance(p, str) for p in problems)


# -- TOML files ------------------------------------------------------------------------------
SCHEDULE = b'[tables]\n1 = [1, 2, 3]\n2 = "4-6"\n3 = ["7-8", 12]\n'
POLICY = (b'[indicator]\ndefault = "table"\n[indicator.codes]\nREVOKE = "table"\n'
          b'DEFECTIVE_TRICK = "after_play"\nUNKNOWN_TAG = "director"\n')


@SETTINGS
@given(st.sampled_from([SCHEDULE]).flatmap(mutated) | st.binary(max_size=500))
def test_schedule_toml(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "round.toml", data, load_schedule, ScheduleError)


@SETTINGS
@given(st.sampled_from([POLICY]).flatmap(mutated) | st.binary(max_size=500))
def test_policy_toml(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "policy.toml", data, IndicatorPolicy.load, PolicyError)


@SETTINGS
@given(st.sampled_from([(EXAMPLES / n).read_bytes()
                        for n in ("sim.toml", "table-boards.toml", "table-club.toml")])
       .flatmap(mutated)
       | st.binary(max_size=500))
def test_bridge_config_toml(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "table.toml", data, load_config, ConfigError)


@SETTINGS
@given(st.sampled_from([(EXAMPLES / "tags-sim.toml").read_bytes()[:6000]])
       .flatmap(mutated) | st.binary(max_size=500))
def test_tag_registry_toml(tmp_path: Path, data: bytes) -> None:
    reads_or_refuses(tmp_path / "tags.toml", data, RegistryFile.read, RegistryError)


def test_the_samples_are_valid() -> None:
    """The mutations start from files that read cleanly (else the fuzzing proves little)."""
    assert not read_pbn(io.StringIO(text(sample("laws_scenarios.pbn")))).errors
    assert read_dup(sample("four-boards.dup")).deals
    path = EXAMPLES / "sim.toml"
    assert load_config(path).table.id == "1"
    load_schedule_text = DATA.parent / "data"  # a directory: a ScheduleError, not a crash
    with pytest.raises(ScheduleError):
        load_schedule(load_schedule_text)
    policy = DATA / "policy-sample.toml"
    assert not policy.exists()


@SETTINGS
@given(st.sampled_from([(EXAMPLES / "sim.toml").read_bytes()]).flatmap(mutated)
       | st.binary(max_size=500))
def test_simulator_table_config(tmp_path: Path, data: bytes) -> None:
    from firmware_bridge.sim.table import SimError, SimTable

    reads_or_refuses(tmp_path / "sim.toml", data, SimTable.from_config, SimError)
