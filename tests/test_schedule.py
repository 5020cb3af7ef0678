"""The round's schedule: boards per table, and WRONG_BOARD for a board not in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.daemon import ControllerError, build_engine
from controller.schedule import ScheduleError, load_schedule, parse_schedule


def test_lists_and_ranges() -> None:
    got = parse_schedule({"tables": {"1": [1, 2, 3], "2": "4-6", "3": ["7-8", 12]}})
    assert got == {"1": frozenset({1, 2, 3}), "2": frozenset({4, 5, 6}),
                   "3": frozenset({7, 8, 12})}


@pytest.mark.parametrize("tables, fragment", [
    ({}, "[tables]"),
    ({"1": "x"}, "tables.1"),
    ({"1": "6-4"}, "range"),
    ({"1": [0]}, "board number"),
    ({"1": [True]}, "board number"),
    ({"1": []}, "names no board"),
])
def test_bad_entries_are_named(tables: dict[str, object], fragment: str) -> None:
    with pytest.raises(ScheduleError, match="schedule") as err:
        parse_schedule({"tables": tables})
    assert fragment in str(err.value)


def test_bad_files_name_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "round.toml"
    bad.write_text("[tables\n")
    with pytest.raises(ScheduleError, match="round.toml: not TOML"):
        load_schedule(bad)
    with pytest.raises(ScheduleError, match="cannot read"):
        load_schedule(tmp_path / "missing.toml")


def test_the_daemon_flags_a_board_not_in_the_tables_schedule(tmp_path: Path) -> None:
    path = tmp_path / "round.toml"
    path.write_text('[tables]\n"7" = "6-8"\n')
    engine = build_engine(schedule=path)
    base = {"v": 1, "src": "pi", "ts": 1.0, "type": "tag", "zone": "board",
            "action": "present", "uid": "B"}
    outs = engine.handle("bridge/7/event", {**base, "seq": 1, "board": 15})
    alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
    assert [(a["code"], a["detail"]) for a in alerts] == [("WRONG_BOARD", "not_scheduled")]
    outs = engine.handle("bridge/7/event", {**base, "seq": 2, "board": 8})
    alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
    assert [(a["code"], a["status"]) for a in alerts] == [("WRONG_BOARD", "resolved")]
    # a table the schedule does not name is not checked
    outs = engine.handle("bridge/9/event", {**base, "seq": 1, "board": 15})
    assert not [o for o in outs if o.topic.endswith("/alert")]
    with pytest.raises(ControllerError):
        build_engine(schedule=tmp_path / "missing.toml")


def test_a_binary_schedule_file_is_a_schedule_error(tmp_path: Path) -> None:
    path = tmp_path / "round.toml"
    path.write_bytes(b"\xff\xfe\x00\x80 binary")
    with pytest.raises(ScheduleError, match="not UTF-8 text"):
        load_schedule(path)
