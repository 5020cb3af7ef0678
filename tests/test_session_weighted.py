"""Weighted adjusted scores (Law 12C1(c)) in the session file, ``score`` and ``export``.

The expected matchpoints and IMPs are computed here in exact fractions from the rule, not
with the project's scoring code: each result of a weighted score is compared with every
other table's score, the comparison weighted by the product of the weights (2 for a score
beaten, 1 for a tie); Neuberg's formula, (MP + 1) * N / n - 1, scales a board with fewer
results than tables; cross-IMPs average each comparison's weighted IMPs; teams IMP each
result against the other table and weight the IMPs.
"""

from __future__ import annotations

import csv
import io
import json
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from controller.laws.cards import Contract, Seat, board_vulnerability
from controller.laws.scoring import imps, score_ns
from controller.session import (
    Adjustment,
    SessionError,
    WeightedPart,
    load_session,
    parse_adjustment,
    read_results,
    set_adjustment,
)
from controller.session.adjustments import toml_value
from controller.session.export import export, read_published
from controller.session.report import pairs_report, teams_report

#: five tables on board 1 (none vulnerable) and board 2 (NS vulnerable)
SESSION = """[session]
id = "wt"
event = "Weighted"
date = "2026-12-01"
[scoring]
method = "{method}"
[movement]
type = "explicit"
[[movement.round]]
"1" = {{ ns = 1, ew = 2, boards = [1, 2] }}
"2" = {{ ns = 3, ew = 4, boards = [1, 2] }}
"3" = {{ ns = 5, ew = 6, boards = [1, 2] }}
"4" = {{ ns = 7, ew = 8, boards = [1, 2] }}
"5" = {{ ns = 9, ew = 10, boards = [1, 2] }}
[pairs]
1 = ["Ann Archer", "Bob Baker"]
"""

WEIGHTED_4H_3NT = """
[[adjustment]]
table = "4"
board = 1
weighted = [{ weight = 50, contract = "4H", declarer = "S", tricks = 10 },
            { weight = 50, contract = "3NT", declarer = "N", tricks = 8 }]
[[adjustment]]
table = "2"
board = 2
weighted = [{ weight = 30, score_ns = 620 },
            { weight = 70, contract = "4HX", declarer = "S", tricks = 9 }]
"""

#: the tables' results: (contract, declarer, tricks); table 5 has none on board 1 (Neuberg)
PLAYED = {
    1: {"1": ("4H", "S", 10), "2": ("3NT", "N", 9), "3": ("4H", "S", 9), "4": ("2S", "E", 8)},
    2: {"1": ("4H", "S", 10), "2": ("4H", "S", 11), "3": ("4H", "S", 9),
        "4": ("3NT", "N", 10), "5": ("4H", "S", 10)},
}


def _score(board: int, contract: str, declarer: str, tricks: int) -> int:
    return score_ns(Contract.parse(contract), Seat[declarer], board_vulnerability(board), tricks)


def _payload(table: str, board: int, contract: str, declarer: str, tricks: int
             ) -> dict[str, Any]:
    return {"v": 1, "table": table, "board": board, "contract": contract,
            "declarer": declarer, "tricks": tricks, "tricks_played": tricks,
            "score_ns": _score(board, contract, declarer, tricks), "irregularities": []}


def _lines() -> list[str]:
    return [json.dumps({"topic": f"bridge/{t}/result", "payload": _payload(t, b, *r)})
            for b, tables in PLAYED.items() for t, r in tables.items()]


def _session(tmp_path: Path, method: str = "matchpoints") -> Path:
    path = tmp_path / "session.toml"
    path.write_text(SESSION.format(method=method) + WEIGHTED_4H_3NT)
    return path


#: each table's score on a board, as weighted results (weight, score from NS's side)
Dist = list[tuple[Fraction, int]]


def _field(board: int) -> dict[str, Dist]:
    """The board's real scores by the rule: a weighted table its results and weights."""
    out: dict[str, Dist] = {t: [(Fraction(1), _score(board, *r))]
                            for t, r in PLAYED[board].items()}
    if board == 1:
        out["4"] = [(Fraction(1, 2), _score(1, "4H", "S", 10)),
                    (Fraction(1, 2), _score(1, "3NT", "N", 8))]
    else:
        out["2"] = [(Fraction(3, 10), 620), (Fraction(7, 10), _score(2, "4HX", "S", 9))]
    return out


def _exact_mp(board: int, tables: int = 5) -> dict[str, tuple[Fraction, Fraction]]:
    field = _field(board)
    n = len(field)
    out = {}
    for t, mine in field.items():
        ns = ew = Fraction(0)
        for u, other in field.items():
            if u == t:
                continue
            for wa, a in mine:
                for wb, b in other:
                    w = wa * wb
                    ns += w * (2 if a > b else 1 if a == b else 0)
                    ew += w * (2 if a < b else 1 if a == b else 0)
        if n < tables:
            ns, ew = (ns + 1) * tables / n - 1, (ew + 1) * tables / n - 1
        out[t] = (ns, ew)
    return out


def _exact_cross_imps(board: int) -> dict[str, Fraction]:
    field = _field(board)
    n = len(field)
    return {t: sum((wa * wb * imps(a - b) for u, other in field.items() if u != t
                    for wa, a in mine for wb, b in other), Fraction(0)) / (n - 1)
            for t, mine in field.items()}


def _close(got: float, want: Fraction) -> bool:
    return abs(Fraction(got) - want) < Fraction(1, 10**9)


# -- the session file ----------------------------------------------------------------------
def test_the_session_file_holds_a_weighted_score(tmp_path: Path) -> None:
    session = load_session(_session(tmp_path))
    adj = {(a.table, a.board): a for a in session.adjustments}
    assert adj[("4", 1)].weighted == (WeightedPart(50.0, 420, "4H", "S", 10),
                                      WeightedPart(50.0, -50, "3NT", "N", 8))
    # board 2 is NS vulnerable: 4HX one down is -200
    assert adj[("2", 2)].weighted == (WeightedPart(30.0, 620),
                                      WeightedPart(70.0, -200, "4HX", "S", 9))


@pytest.mark.parametrize("weighted, why", [
    ([{"weight": 50, "score_ns": 420}, {"weight": 40, "score_ns": -50}], "sum to 90%"),
    ([{"weight": 60, "score_ns": 420}, {"weight": 60, "score_ns": -50}], "sum to 120%"),
    ([{"weight": 100, "score_ns": 420}], "two or more"),
    ([{"weight": 0, "score_ns": 420}, {"weight": 100, "score_ns": -50}], "above 0"),
    ([{"weight": 50, "score_ns": 620}, {"weight": 50, "score_ns": -50}], "no contract scores"),
    ([{"weight": 50, "score_ns": 425}, {"weight": 50, "score_ns": -50}], "no contract scores"),
    ([{"weight": 50, "contract": "8H", "declarer": "S", "tricks": 10},
      {"weight": 50, "score_ns": -50}], "not a contract"),
    ([{"weight": 50, "contract": "4H", "declarer": "S", "tricks": 14},
      {"weight": 50, "score_ns": -50}], "0-13"),
    ([{"weight": 50, "contract": "4H", "declarer": "NS", "tricks": 10},
      {"weight": 50, "score_ns": -50}], "N, E, S or W"),
    ([{"weight": 50, "contract": "Pass", "declarer": "N", "tricks": 7},
      {"weight": 50, "score_ns": -50}], "passed-out"),
    ([{"weight": 50, "contract": "4H", "declarer": "S", "tricks": 10, "score_ns": 420},
      {"weight": 50, "score_ns": -50}], "or score_ns"),
    ([{"weight": 50, "contract": "4H", "declarer": "S", "trick": 10},
      {"weight": 50, "score_ns": -50}], "trick"),
    ("50% 4H", "two or more"),
])
def test_a_weighted_score_that_cannot_be_is_refused(tmp_path: Path, weighted: Any,
                                                     why: str) -> None:
    """Weights not summing to 100%, a score no contract makes on the board (+620 is not
    possible on board 1, none vulnerable; +425 on no board), a result the board cannot
    have: refused with the key named, the file untouched."""
    path = _session(tmp_path)
    before = path.read_text()
    session = load_session(path)
    with pytest.raises(SessionError, match=why):
        parse_adjustment(session, {"table": "1", "board": 1, "weighted": weighted})
    bad = tmp_path / "bad.toml"
    bad.write_text(before + '\n[[adjustment]]\ntable = "1"\nboard = 1\n'
                   f"weighted = {toml_value(weighted)}\n")
    with pytest.raises(SessionError):
        load_session(bad)
    assert path.read_text() == before


def test_set_adjustment_writes_a_weighted_score_that_reads_back(tmp_path: Path) -> None:
    path = _session(tmp_path)
    parts = (WeightedPart(25.0, 420, "4H", "S", 10), WeightedPart(75.0, 0, "Pass"))
    session = set_adjustment(path, Adjustment("5", 1, weighted=parts))
    assert {(a.table, a.board): a.weighted for a in session.adjustments}[("5", 1)] == parts
    assert load_session(path).adjustments == session.adjustments
    assert 'weighted = [{ weight = 25, contract = "4H"' in path.read_text()


# -- score ---------------------------------------------------------------------------------
def test_score_matchpoints_a_weighted_score_exactly(tmp_path: Path) -> None:
    """Board 1: four results and table 4's 50% 4H= / 50% 3NT-1 (Neuberg: five tables, four
    results); board 2: five results, table 2's 30% +620 / 70% 4HX-1."""
    session = load_session(_session(tmp_path))
    report = pairs_report(session, read_results(_lines()))
    boards = {b["board"]: {r["table"]: r for r in b["results"]} for b in report["boards"]}
    assert boards[1]["4"]["score"] == "50%+420/50%-50"
    assert boards[2]["2"]["score"] == "30%+620/70%-200"
    for board in (1, 2):
        want = _exact_mp(board)
        assert set(boards[board]) == set(want)
        for table, (ns, ew) in want.items():
            row = boards[board][table]
            assert _close(row["mp_ns"], ns) and _close(row["mp_ew"], ew), (board, table)
            assert row["top"] == 8
    # by hand, board 2 (NS vulnerable: +620, -100, +630, +620 at the other tables): table
    # 2's +620 ties two, beats one, loses to one; its -200 beats none
    assert _exact_mp(2)["2"][0] == Fraction(3, 10) * (1 + 2 + 0 + 1) + Fraction(7, 10) * 0
    totals = {s["pair"]: s for s in report["standings"]}
    pair7 = _exact_mp(1)["4"][0] + _exact_mp(2)["4"][0]          # table 4's NS pair
    assert _close(totals[7]["points"], pair7)


def test_cross_imps_weigh_the_imps_of_each_result(tmp_path: Path) -> None:
    session = load_session(_session(tmp_path, "cross-imps"))
    report = pairs_report(session, read_results(_lines()))
    for b in report["boards"]:
        want = _exact_cross_imps(b["board"])
        for row in b["results"]:
            assert _close(row["mp_ns"], want[row["table"]]), (b["board"], row["table"])


TEAMS = """[session]
id = "wtt"
event = "Weighted teams"
date = "2026-12-01"
[scoring]
method = "imps"
[movement]
type = "teams-explicit"
[[movement.round]]
"1" = { ns = 1, ew = 2, boards = [1, 2] }
"2" = { ns = 2, ew = 1, boards = [1, 2] }
[teams]
1 = { name = "Home", players = ["A", "B", "C", "D"] }
2 = { name = "Away", players = ["E", "F", "G", "H"] }
[[adjustment]]
table = "2"
board = 1
weighted = [{ weight = 60, contract = "4H", declarer = "S", tricks = 10 },
            { weight = 40, contract = "4H", declarer = "S", tricks = 9 }]
"""


def test_teams_weigh_the_imps_of_each_result(tmp_path: Path) -> None:
    """Table 2's 60% 4H= / 40% 4H-1 against table 1's 3NT+1 (+430): 0.6 * IMPs(430 - 420)
    + 0.4 * IMPs(430 + 50) to team 1."""
    path = tmp_path / "teams.toml"
    path.write_text(TEAMS)
    session = load_session(path)
    lines = [json.dumps(_payload("1", 1, "3NT", "N", 10)),
             json.dumps(_payload("1", 2, "4H", "S", 10)),
             json.dumps(_payload("2", 2, "4H", "S", 10))]
    report = teams_report(session, read_results(lines))
    want = Fraction(6, 10) * imps(430 - 420) + Fraction(4, 10) * imps(430 + 50)
    rows = [r for r in report["boards"] if r["board"] == 1]
    assert rows, report
    row = rows[0]
    assert _close(row["imps_home"], want) and _close(row["imps_away"], -want)


# -- export --------------------------------------------------------------------------------
def test_export_shows_and_scores_a_weighted_score(tmp_path: Path) -> None:
    """PBN ScoreTable (each weight and score, the matchpoints), CSV travellers, USEBIO
    (the weighted mean score, the matchpoints): all agree with the exact computation."""
    session = load_session(_session(tmp_path))
    out = tmp_path / "out"
    export(session, read_published(_lines()), out, ["pbn", "csv", "usebio"], io.StringIO())
    want = _exact_mp(1)
    # the CSV travellers
    with open(out / "wt.csv", newline="") as fp:
        rows = {(r["board"], r["table"]): r for r in csv.DictReader(fp)}
    row = rows[("1", "4")]
    assert row["scored"] == "50%+420/50%-50"
    assert _close(float(row["points_ns"]), want["4"][0])
    # the PBN ScoreTable: Contract, Declarer, Result "-", the scores from each side
    pbn = (out / "wt.pbn").read_text()
    table = pbn.split("[ScoreTable", 1)[1].split("]\n", 1)[1].split("\n[")[0]
    cells = {line.split()[0]: line.split() for line in table.splitlines() if line.strip()}
    t4 = cells["4"]
    assert t4[4:9] == ["-", "-", "-", "50%+420/50%-50", "50%-420/50%+50"]
    assert _close(float(t4[9]), Fraction(round(float(want["4"][0]), 2)))
    # USEBIO: the traveller line of pairs 7 v 8 on board 1
    root = ET.fromstring((out / "wt.xml").read_text().split("\n", 2)[2])
    lines = [ln for b in root.iter("BOARD") if b.findtext("BOARD_NUMBER") == "1"
             for ln in b.iter("TRAVELLER_LINE") if ln.findtext("NS_PAIR_NUMBER") == "7"]
    assert len(lines) == 1
    assert lines[0].findtext("SCORE") == "185"                 # (420 - 50) / 2
    assert _close(float(lines[0].findtext("NS_MATCH_POINTS") or "nan"),
                  Fraction(round(float(want["4"][0]), 2)))
