"""The round's schedule: boards per table, and WRONG_BOARD for a board not in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.commandline import ControllerError
from controller.service.engines import build_engine
from controller.session.schedule import ScheduleError, load_schedule, parse_movement, parse_schedule


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
    with pytest.raises(ControllerError):
        build_engine(schedule=tmp_path / "missing.toml")


def test_a_binary_schedule_file_is_a_schedule_error(tmp_path: Path) -> None:
    path = tmp_path / "round.toml"
    path.write_bytes(b"\xff\xfe\x00\x80 binary")
    with pytest.raises(ScheduleError, match="not UTF-8 text"):
        load_schedule(path)


def test_every_round_is_the_sessions_movement() -> None:
    """A schedule file's rounds make the session file's ``Movement`` (one class for both):
    pair numbers as integers, the movement's questions answered alike."""
    from controller.session.movement import Movement as SessionMovement

    got = parse_movement({"round": [
        {"tables": {"1": {"ns": 1, "ew": "3", "boards": "1-2"}, "2": [3, 4]}},
        {"number": 2, "tables": {"1": {"ns": 1, "ew": 4, "boards": [3, 4]}}}]}, "s", "id")
    mv = got.movement
    assert isinstance(mv, SessionMovement)
    assert mv.pairs_at("1", 2) == (1, 3) and mv.pairs_at("1", 4) == (1, 4)
    assert mv.pairs_at("2", 3) is None  # boards only: the movement names no pairs there
    assert mv.tables_playing(3) == {"1", "2"} and mv.round_of("1", 3) == 2
    assert mv.schedule() == {"1": frozenset({1, 2, 3, 4}), "2": frozenset({3, 4})}


@pytest.mark.parametrize("rounds, fragment", [
    ([{"tables": {"1": {"ns": 1, "ew": 2, "boards": [1]},
                  "2": {"ns": 1, "ew": 3, "boards": [2]}}}], "pair 1 at tables 1 and 2"),
    ([{"tables": {"1": [1]}}, {"tables": {"1": [1, 2]}}], "plays board 1 twice"),
    ([{"number": 1, "tables": {"1": [1]}}, {"number": 1, "tables": {"2": [2]}}],
     "same number"),
    ([{"tables": {"1": {"ns": "A", "boards": [1]}}}], "not a pair or team number"),
])
def test_a_movement_that_cannot_be_is_a_schedule_error(rounds: list[object],
                                                       fragment: str) -> None:
    with pytest.raises(ScheduleError, match="^s: ") as err:
        parse_movement({"round": rounds}, "s", "id")
    assert fragment in str(err.value)


def test_a_table_outside_the_movement_is_alerted_at_once_and_logged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 43: a bridge with table id 7 in a 5-table session played board 1 with no alert
    and no log line; only score said later that the result was not scored."""
    session = tmp_path / "session.toml"
    session.write_text('[session]\nid = "s"\n[movement]\ntype = "mitchell"\ntables = 5\n'
                       'boards_per_round = 2\n')
    engine = build_engine(session=session)
    base = {"v": 1, "src": "pi", "ts": 1.0, "type": "tag", "zone": "board",
            "action": "present", "uid": "B"}
    outs = engine.handle("bridge/1/event", {**base, "seq": 1, "board": 1})
    assert not [o for o in outs if o.topic.endswith("/alert")]      # a seated table
    assert "not in the session's movement" not in caplog.text
    outs = engine.handle("bridge/7/event", {**base, "seq": 1, "board": 1})
    alerts = [(o.topic, o.payload["code"], o.payload["detail"]) for o in outs
              if o.topic.endswith("/alert")]
    assert alerts == [("bridge/7/alert", "WRONG_BOARD", "not_scheduled")]
    assert "table 7 is not in the session's movement" in caplog.text
    assert "table 7: board 1 is not one the session's movement gives" in caplog.text


def test_the_controller_warns_of_tables_it_serves_that_the_session_does_not_seat(
        caplog: pytest.LogCaptureFixture) -> None:
    from controller.service.cli_controller import warn_unseated

    schedule = {str(t): frozenset({1}) for t in range(1, 6)}
    assert warn_unseated(("4", "5"), schedule) == []
    assert "does not seat" not in caplog.text
    assert warn_unseated(("5", "6", "7"), schedule) == ["6", "7"]
    assert "does not seat table(s) 6, 7" in caplog.text
    assert warn_unseated(("6",), {}) == []      # no session: nothing to hold them to


def _board_tag(engine: object, table: str, seq: int, board: int) -> list[tuple[str, str]]:
    base = {"v": 1, "src": "pi", "ts": 1.0, "type": "tag", "zone": "board",
            "action": "present", "uid": f"B{board}"}
    outs = engine.handle(f"bridge/{table}/event", {**base, "seq": seq, "board": board})  # type: ignore[attr-defined]
    return [(o.payload["code"], o.payload["detail"]) for o in outs
            if o.topic.endswith("/alert") and o.payload["status"] == "open"]


def test_a_board_outside_the_tables_round_is_alerted(tmp_path: Path) -> None:
    """Issue 43: the movement held live round by round. A 3-table Mitchell, 2 boards a
    round: table 1 plays 1-2, then 3-4, then 5-6. A board of the round after next is not
    scheduled at the table for the round; the next round's is."""
    from controller.engine.rounds import RoundSchedule, rounds_of
    from controller.session import load_session

    session = tmp_path / "session.toml"
    session.write_text('[session]\nid = "s"\n[movement]\ntype = "mitchell"\ntables = 3\n'
                       'boards_per_round = 2\n')
    movement = load_session(session).movement
    by_round = rounds_of(movement.rounds)["1"]
    assert [sorted(r) for r in by_round] == [[1, 2], [3, 4], [5, 6]]
    played: list[int] = []
    schedule = RoundSchedule(by_round, lambda: played)
    assert all(b in schedule for b in (1, 3, 5))     # nothing played yet: any of its own
    assert 7 not in schedule and "1" not in schedule
    played += [1, 2]
    assert 3 in schedule and 4 in schedule            # the next round
    assert 5 not in schedule                          # the round after next
    played += [3]
    assert 5 in schedule                              # the next round again
    assert 1 not in schedule                          # a round behind the table
    assert sorted(schedule) == [1, 2, 3, 4, 5, 6] and len(schedule) == 6

    engine = build_engine(session=session)
    assert _board_tag(engine, "1", 1, 1) == []
    # a board of the round after next, while round 1 is on: alerted at once
    assert _board_tag(engine, "1", 2, 5) == [("WRONG_BOARD", "not_scheduled")]
