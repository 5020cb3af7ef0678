"""The session file: the example loads, every movement type, bad files named, not raised."""

from __future__ import annotations

import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from boardevents import EventWriter, clean_board

from controller.commandline import ControllerError
from controller.service.engines import build_engine
from controller.session import SessionError, load_session
from firmware_bridge.examples import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = EXAMPLES / "session-mitchell.toml"


def test_the_example_session_file_loads() -> None:
    s = load_session(EXAMPLE)
    assert (s.event, s.date, s.venue, s.number) == ("Monday Club Pairs", "2026-11-30",
                                                    "Riverside Bridge Club", 1)
    assert s.id == "monday-club-pairs-2026-11-30-1"
    assert s.deals is not None and s.deals.is_file()      # resolved beside the session file
    assert s.movement.kind == "mitchell" and len(s.movement.rounds) == 7
    assert s.movement.boards == list(range(1, 22))
    assert s.pairs[1].players == ("Ann Archer", "Bob Baker")
    assert s.competitor(8).label == "The Visitors" and s.competitor(9).label == "9"
    (adj,) = s.adjustments
    assert (adj.table, adj.board, adj.ns, adj.ew) == ("3", 5, "A+", "A-")


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_explicit_howell_and_teams_movements(tmp_path: Path) -> None:
    s = load_session(write(tmp_path, """
[session]
id = "final-1"
event = "Final"
date = "2026-12-01"
[movement]
type = "explicit"
[[movement.round]]
"1" = { ns = 1, ew = 2, boards = "1-2" }
"2" = { ns = 3, ew = 4, boards = [3, 4] }
[[movement.round]]
"1" = { ns = 1, ew = 4, boards = "3-4" }
"2" = { ns = 3, ew = 2, boards = "1-2" }
"""))
    assert s.id == "final-1"
    assert s.movement.pairs_at("2", 1) == (3, 2) and s.movement.round_of("2", 1) == 2
    assert s.movement.tables_playing(4) == frozenset({"1", "2"})
    h = load_session(write(tmp_path, '[session]\nevent = "H"\n[movement]\ntype = "howell"\n'
                                     'pairs = 8\nboards_per_round = 3\n'))
    assert len(h.movement.rounds) == 7 and h.scoring == "matchpoints"
    t = load_session(write(tmp_path, '[session]\nevent = "T"\n[movement]\ntype = "teams"\n'
                                     'rounds = 2\nboards_per_round = 12\n'
                                     '[teams]\n1 = { name = "Sharks" }\n'))
    assert t.is_teams and t.scoring == "imps" and t.competitor(1).label == "Sharks"


@pytest.mark.parametrize(("text", "fragment"), [
    ("[session]\n[movement]\ntype = 'spiral'\n", "movement.type"),
    ("[session]\n[movement]\ntype = 'mitchell'\ntables = 0\nboards_per_round = 2\n",
     "movement.tables"),
    ("[session]\n[movement]\ntype = 'mitchell'\ntables = 5\n", "movement.boards_per_round"),
    ("[session]\nnumber = 'x'\n[movement]\ntype = 'howell'\npairs = 4\nboards_per_round = 2\n",
     "session.number"),
    ("[session]\n[movement]\ntype = 'explicit'\n[[movement.round]]\n'1' = { ns = 1, ew = 2, "
     "boards = 'x' }\n", "movement.round[1].1.boards"),
    ("[session]\n[movement]\ntype = 'explicit'\n[[movement.round]]\n'1' = { ns = 1, ew = 2, "
     "boards = 1 }\n'2' = { ns = 2, ew = 3, boards = 2 }\n", "pair 2 at tables"),
    ("[session]\n[movement]\ntype = 'howell'\npairs = 4\nboards_per_round = 2\n"
     "[[adjustment]]\ntable = '1'\nboard = 1\nns = 'A++'\n", "adjustment[1].ns"),
    ("[session]\n[movement]\ntype = 'howell'\npairs = 4\nboards_per_round = 2\n"
     "[pairs]\n1 = 7\n", "pairs.1"),
    ("[session]\n[movement]\ntype = 'explicit'\n", "needs [[movement.round]] entries"),
    ("adjustment = [1]\n[session]\n[movement]\ntype = 'howell'\npairs = 4\n"
     "boards_per_round = 2\n", "adjustment[1]: must be a table"),
    ("[session\n", "not a TOML session file"),
])
def test_bad_session_files_name_the_file_and_key(tmp_path: Path, text: str,
                                                 fragment: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(SessionError) as err:
        load_session(path)
    assert str(path) in str(err.value) and fragment in str(err.value)


def test_binary_and_missing_files_are_session_errors(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_bytes(b"\x00\xff\xfe garbage \x80")
    with pytest.raises(SessionError, match="not a TOML session file"):
        load_session(path)
    with pytest.raises(SessionError, match="cannot read"):
        load_session(tmp_path / "missing.toml")


def test_the_controller_schedules_and_names_the_pairs_from_the_session(tmp_path: Path) -> None:
    import dataclasses

    from controller.boards.deals import read_deals
    from controller.laws.cards import Seat

    engine = build_engine(session=EXAMPLE)
    # the example's own board 5, bid and played as the clean board is
    example_deal = read_deals(load_session(EXAMPLE).deals or "", None).deals[5].deal
    assert example_deal is not None
    script = dataclasses.replace(clean_board(5), deal=example_deal.to_pbn(Seat.N))
    # table 3 plays boards 7-9 in round 1 and board 5 in round 7; board 5 is a board of
    # the session, but 22 is not
    outs = engine.handle("bridge/3/event", {"v": 1, "src": "pi", "seq": 1, "ts": 1.0,
                                            "type": "tag", "zone": "board",
                                            "action": "present", "uid": "B", "board": 22})
    alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
    assert [(a["code"], a["detail"]) for a in alerts] == [("WRONG_BOARD", "not_scheduled")]
    events = list(EventWriter("table-3-pi").board(script))
    results = []
    for ev in events:
        for out in engine.handle("bridge/3/event", ev):
            if out.topic.endswith("/result"):
                results.append(out.payload)
    state = engine.snapshot("3")
    assert (state["board"], state["ns"], state["ew"]) == (5, 3, 11)
    assert results and (results[-1]["ns"], results[-1]["ew"]) == (3, 11)
    with pytest.raises(ControllerError, match="missing.toml"):
        build_engine(session=tmp_path / "missing.toml")



def test_the_controller_logs_which_session_and_movement_it_loaded(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="bridge_table"):
        build_engine(session=EXAMPLE)
    lines = [r.getMessage() for r in caplog.records]
    said = [line for line in lines if line.startswith("session ")]
    assert said == [f"session {EXAMPLE} (monday-club-pairs-2026-11-30-1): mitchell movement, "
                    f"7 table(s), 7 round(s), 14 pair(s)"], lines
    # before the boards line, which names only the deals file
    assert lines.index(said[0]) < next(i for i, line in enumerate(lines)
                                       if line.endswith("board(s)"))

def test_the_controller_command_reports_a_broken_session_file(tmp_path: Path) -> None:
    path = tmp_path / "b.toml"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00")
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "controller", "--session",
                           str(path), "--no-journal"], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 2
    assert "not a TOML session file" in proc.stderr and "Traceback" not in proc.stderr


def test_the_example_sessions_boards_are_in_its_deals_file() -> None:
    from controller.boards.deals import read_deals

    session = load_session(EXAMPLE)
    assert session.deals is not None
    read = read_deals(session.deals, session.deals_first_board)
    assert sorted(read.deals) == session.movement.boards == list(range(1, 22))
    assert not read.problems


MITCHELL3 = ('[session]\nevent = "E"\ndate = "2026-12-01"\n'
             '[movement]\ntype = "mitchell"\ntables = 3\nboards_per_round = 2\n')


@pytest.mark.parametrize(("extra", "named"), [
    ('[scoring]\nmethd = "cross-imps"\n', "scoring.methd: unknown key"),
    ('colour = "red"\n', "movement.colour: unknown key"),
    ('[sesion]\nevent = "x"\n', "sesion: unknown key"),
    ('[pairs]\n1 = { name = "A", player = ["x"] }\n', "pairs.1.player: unknown key"),
    # EW named 11-13 where the movement's EW pairs are 4-6: they would go nameless
    ('[pairs]\n1 = ["A", "B"]\n11 = ["C", "D"]\n',
     "pairs.11: the movement seats no pair 11 (its pairs: 1-6)"),
    ('[[adjustment]]\ntable = "1"\nboard = 1\nns = "A+"\nnote = "x"\n',
     "adjustment[1].note: unknown key"),
    ('[[adjustment]]\ntable = "1"\nboard = 1\nns = "150%"\n', "0-100%"),
    ('[[adjustment]]\ntable = "9"\nboard = 1\nns = "A+"\n',
     "the movement does not give table 9 board 1"),
    ('[[adjustment]]\ntable = "1"\nboard = 7\nns = "A+"\n',
     "the movement does not give table 1 board 7"),
    ('[[adjustment]]\ntable = "1"\nboard = 1\nns = "A+"\nscore_ns = 100\n', "give one of"),
])
def test_the_session_file_refuses_typos_and_adjustments_outside_it(
        tmp_path: Path, extra: str, named: str) -> None:
    path = tmp_path / "s.toml"
    path.write_text(MITCHELL3 + extra)
    with pytest.raises(SessionError, match=re.escape(named)):
        load_session(path)
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "score", "-", "--session",
                           str(path)], input="", capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and named in proc.stderr


def test_a_later_adjustment_of_a_table_and_board_replaces_the_earlier(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(MITCHELL3 + '[[adjustment]]\ntable = "1"\nboard = 1\nns = "A+"\n'
                    '[[adjustment]]\ntable = "2"\nboard = 2\nns = "A="\n'
                    '[[adjustment]]\ntable = "1"\nboard = 1\nsplit = [100, 200]\n')
    adjustments = load_session(path).adjustments
    assert [(a.table, a.board, a.ns, a.split) for a in adjustments] == [
        ("2", 2, "A=", None), ("1", 1, None, (100, 200))]


def test_a_percentage_adjustment_in_range_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(MITCHELL3 + '[[adjustment]]\ntable = "2"\nboard = 3\nns = "55%"\n'
                    'ew = "100%"\n')
    (adj,) = load_session(path).adjustments
    assert (adj.table, adj.board, adj.ns, adj.ew) == ("2", 3, "55%", "100%")
