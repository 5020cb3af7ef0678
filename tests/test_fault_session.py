"""The fault suite: a three-table session with real processes (mosquitto with persistence,
the controller daemon, a bridge process per table), while the controller (SIGKILL, SIGTERM),
the broker (SIGTERM, SIGKILL) and the bridges (SIGKILL) are stopped and started again at
random points, twice each. Every event must be applied exactly once, and the outcome must be
that of a clean replay (tests/faultsession.py; figures in docs/reliability.md).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from faultsession import FAULTS, Session, print_figures

pytestmark = [pytest.mark.fault, pytest.mark.timeout(300)]


@pytest.mark.parametrize("seed", [1, 2])
def test_every_event_applied_once_whatever_is_killed(tmp_path: Path, seed: int,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    session = Session(tmp_path, tables=3, rounds=2, seed=seed)
    figures = asyncio.run(session.run())
    with capsys.disabled():
        print_figures(figures)
    assert sorted(f["fault"] for f in figures.faults) == sorted(FAULTS * 2)
    assert figures.events_sent == 3 * 433
    assert (figures.applied, figures.lost, figures.doubled) == (figures.events_sent, 0, 0)
    assert figures.refused == 0
    assert figures.states_equal and figures.results_equal
