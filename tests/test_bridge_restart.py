"""The fault suite's bridge restarts (issue 24), through the real serial chain: ``bridge-table
sim play`` (three seeded boards on the simulated readers' pseudo-terminals, each antenna
reading one tag at a time: docs/sensing.md), the real ``bridge-table bridge`` with its spool,
a private mosquitto and the real controller process (as it starts by default: its per-table
intake bound on). The bridge is stopped at 17 s, then again at seeded random points of the
auctions and the plays (SIGKILL and SIGTERM), each time started again 2 s later with the same
config and spool. The results and the alerts must be a clean replay's, every event applied
once and in order (tests/bridgerestart.py).

- the issue's run: 8 events a second, each hand passed card by card across its play spot
  (no deals file), SIGTERM at 17 s (board 1's play);
- a deals file (nothing read before the auction) and the controller checking who speaks
  (``--identities``), SIGKILL at 17 s (board 2's play), at 12 events a second;
- a restart's backlog over the controller's intake bound (burst 20): the events dropped are
  sent again after the bridge's ack_timeout (1 s here), none lost, none applied twice.

Before the readers replayed their lines, the stop at 17 s alone gave 0 of 3 results and
513 false alerts: the cards played while the bridge was down came seat by seat, not in the
order they were played.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from bridgerestart import (
    Figures,
    Kill,
    RestartSession,
    board_file_events,
    print_figures,
    seeded_kills,
)

pytestmark = [pytest.mark.fault, pytest.mark.timeout(420)]


def _show(figures: Figures, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print()
        print_figures(figures)


def _changes_nothing(figures: Figures, events: int) -> None:
    assert any("auction" in k for k in figures.kills)
    assert any("play" in k for k in figures.kills)
    assert (figures.events, figures.lost, figures.doubled) == (events, 0, 0)
    assert figures.out_of_order == 0
    assert figures.applied == events
    assert figures.results == figures.clean_results == 3 and figures.results_equal
    assert figures.clean_alerts == 0   # the boards are clean: any alert would be false
    assert figures.false_alerts == [] and figures.missing_alerts == []


def test_a_bridge_killed_mid_board_changes_nothing_at_the_table(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rate = 8.0
    events = board_file_events(3)
    kills = [Kill(17.0, signal.SIGTERM)] + seeded_kills(1, 3, events, rate, after=17.0,
                                                         first=signal.SIGKILL)
    figures = RestartSession(tmp_path, kills=kills, rate=rate).run()
    _show(figures, capsys)
    assert len(figures.kills) == 4
    assert "board 1 play" in figures.kills[0]
    _changes_nothing(figures, len(events))


def test_with_a_deals_file_and_identities_a_killed_bridge_changes_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rate = 12.0
    events = board_file_events(3, deals=True)
    assert not any(e["zone"] == "spot" and e["action"] == "removed"
                   for e in events[:20])   # no hand read before the auction
    kills = [Kill(17.0, signal.SIGKILL)] + seeded_kills(3, 2, events, rate, after=17.0,
                                                         first=signal.SIGTERM)
    figures = RestartSession(tmp_path, kills=kills, rate=rate, deals=True,
                             identities=True).run()
    _show(figures, capsys)
    assert len(figures.kills) == 3
    _changes_nothing(figures, len(events))


def test_a_restart_backlog_over_the_intake_bound_is_sent_again_not_lost(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rate = 12.0
    events = board_file_events(3, deals=True)
    kills = seeded_kills(2, 4, events, rate)
    figures = RestartSession(tmp_path, kills=kills, rate=rate, deals=True, ack_timeout=1.0,
                             controller_args=["--intake-burst", "20"]).run()
    _show(figures, capsys)
    assert len(figures.kills) == 4
    assert figures.intake_dropped > 0   # the backlogs went over the bound
    _changes_nothing(figures, len(events))
