"""controller/web/console/adjust.py: a weighted score (Law 12C1(c)) as the director types
it, checked as the session file is, written and read back by ``load_session``."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.session import WeightedPart, load_session
from controller.web.console.adjust import append_adjustment, check_adjustment

SESSION = """[session]
id = "s"
event = "E"
date = "2026-12-01"
[movement]
type = "mitchell"
tables = 3
boards_per_round = 2
"""


def _session(tmp_path: Path) -> Path:
    path = tmp_path / "session.toml"
    path.write_text(SESSION)
    return path


def test_a_weighted_score_typed_is_written_where_score_reads_it(tmp_path: Path) -> None:
    path = _session(tmp_path)
    adj = check_adjustment(load_session(path), {
        "table": "1", "board": 2, "kind": "weighted",
        "weighted": "50% 4h s 10, 30% 3N N 8 ,20% pass"})
    assert adj.law == "12C1(c)"
    assert adj.describe() == "weighted: 50% 4H S 10, 30% 3NT N 8, 20% Pass"
    _, session = append_adjustment(path, adj, 7, "Ada, now, Law 12C1(c)")
    # board 2: NS vulnerable, 4H= +620, 3NT-1 -100
    assert session.adjustments[0].weighted == (
        WeightedPart(50.0, 620, "4H", "S", 10), WeightedPart(30.0, -100, "3NT", "N", 8),
        WeightedPart(20.0, 0, "Pass"))
    assert load_session(path).adjustments == session.adjustments


@pytest.mark.parametrize("typed, why", [
    ("50% 4H S 10, 40% 3NT N 8", "sum to 90%"),
    ("50% 4H S 10", "two or more"),
    ("50% 4H S 14, 50% -50", "0-13"),
    ("50% +625, 50% -50", "no contract scores"),
    ("50% 4H, 50% -50", "is not 'weight%"),
    ("", "give each result"),
])
def test_a_weighted_score_that_cannot_be_is_refused(tmp_path: Path, typed: str,
                                                    why: str) -> None:
    path = _session(tmp_path)
    with pytest.raises(ValueError, match=why):
        check_adjustment(load_session(path), {"table": "1", "board": 2, "kind": "weighted",
                                              "weighted": typed})
    assert path.read_text() == SESSION
