"""Results across tables: matchpoints (Law 78A) and IMPs (Law 78B), and ``bridge-table score``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from controller.session import BoardResult, SessionScores, read_results


def result(table: str, board: int, score: int, contract: str = "4S") -> dict[str, object]:
    return {"v": 1, "table": table, "board": board, "dealer": "N", "vul": "None",
            "contract": contract, "declarer": "S", "tricks": 10, "tricks_played": 10,
            "score_ns": score, "irregularities": []}


def test_matchpoints_of_laws_md_section_6() -> None:
    session = SessionScores()
    for table, score in zip("12345", [620, 620, 170, -100, 650], strict=True):
        session.add(BoardResult.from_payload(result(table, 1, score)))
    mps = session.matchpoints(1)
    assert [p.mp_ns for p in mps] == [5, 5, 2, 0, 8]
    assert [p.mp_ew for p in mps] == [3, 3, 6, 8, 0]
    assert all(p.top == 8 for p in mps)


def test_last_result_of_a_table_wins_and_teams_get_imps() -> None:
    lines = [json.dumps({"topic": "bridge/1/result", "payload": result("1", 7, 400)}),
             json.dumps({"topic": "bridge/1/state", "payload": {"table": "1"}}),
             json.dumps({"topic": "bridge/1/result", "payload": result("1", 7, 620)}),
             json.dumps(result("2", 7, -100)), "{bad", json.dumps({"table": "3"})]
    session = read_results(lines)
    assert [r.score_ns for r in session.results(7)] == [620, -100]
    (match,) = session.teams([("1", "2")])
    assert match.imps_home == 12  # +620 - (-100) = 720 -> 12 IMPs (laws.md section 6)


def test_score_command(tmp_path: Path) -> None:
    path = tmp_path / "results.jsonl"
    path.write_text("\n".join(json.dumps({"topic": f"bridge/{t}/result",
                                          "payload": result(t, 2, s)})
                              for t, s in (("1", 650), ("2", 620))) + "\nnot json\n")
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(path),
                           "--teams", "1:2", "--json"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert [r["mp_ns"] for r in out["boards"][0]["results"]] == [2, 0]
    assert out["teams"] == [{"board": 2, "home": "1", "away": "2", "imps_home": 1}]
    assert f"{path}:3: not JSON" in proc.stderr
    text = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(path)],
                          capture_output=True, text=True).stdout
    assert "Board 2" in text and "MP NS 2/2" in text
    bad = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(path),
                          "--teams", "12"], capture_output=True, text=True)
    assert bad.returncode == 2
    itself = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(path),
                             "--teams", "1:1"], capture_output=True, text=True)
    assert itself.returncode == 2 and "against another" in itself.stderr
    unplayed = subprocess.run([sys.executable, "-m", "controller.cli", "score", str(path),
                               "--teams", "1:2,9:10"], capture_output=True, text=True)
    assert unplayed.returncode == 0
    assert "--teams 9:10: no board played at both tables" in unplayed.stderr
    assert "--teams 1:2" not in unplayed.stderr
