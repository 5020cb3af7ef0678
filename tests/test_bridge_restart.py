"""The fault suite's bridge restarts (issue 24), through the real serial chain: ``bridge-table
sim play`` (three boards at 8 events a second on the simulated readers' pseudo-terminals), the
real ``bridge-table bridge`` with its spool, a private mosquitto and the real controller
process. The bridge is stopped at 17 s (SIGTERM, in the play of board 1, as the issue tried
it), then killed again at seeded random points of the auctions and the plays (SIGKILL and
SIGTERM), each time started again 2 s later with the same config and spool. The results and
the alerts must be a clean replay's, every event applied once (tests/bridgerestart.py).

Before the readers replayed their lines, the stop at 17 s alone gave 0 of 3 results and
513 false alerts: the cards played while the bridge was down came seat by seat, not in the
order they were played.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from bridgerestart import Kill, RestartSession, board_file_events, print_figures, seeded_kills

pytestmark = [pytest.mark.fault, pytest.mark.timeout(420)]

RATE = 8.0


def test_a_bridge_killed_mid_board_changes_nothing_at_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    events = board_file_events(3)
    kills = [Kill(17.0, signal.SIGTERM)] + seeded_kills(1, 3, events, RATE, after=17.0,
                                                         first=signal.SIGKILL)
    figures = RestartSession(tmp_path, kills=kills, rate=RATE).run()
    with capsys.disabled():
        print()
        print_figures(figures)
    assert len(figures.kills) == 4
    assert any("auction" in k for k in figures.kills)
    assert any("play" in k for k in figures.kills)
    assert (figures.events, figures.lost, figures.doubled) == (len(events), 0, 0)
    assert figures.out_of_order == 0
    assert figures.applied == len(events)
    assert figures.results == figures.clean_results == 3 and figures.results_equal
    assert figures.false_alerts == [] and figures.missing_alerts == []
