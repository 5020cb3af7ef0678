"""USEBIO 1.2 export, read back, and compared with a second implementation.

The second reference is the PyPI package ``scorer-to-usebio`` (0.3), which writes USEBIO
1.2 (DTD public id ``-//EBU//DTD USEBIO 1.2//EN``) from a Bridge NZ Scorer results file.
The test writes the same session's results as a Scorer file (its attributes as the
package reads them), converts it with the package, and compares the two documents: the
elements, their nesting and order, and the values (places, percentages, boards played,
players, every traveller line, an adjusted score's ``A6040``). The DTD itself could not be
had (docs/session.md); neither could the specification's text.
"""

from __future__ import annotations

import io
import json
import random
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path

import pytest

from controller.session import load_session
from controller.session.export import export, read_published
from controller.session.usebio import PUBLIC_ID

scorer_to_usebio = pytest.importorskip(
    "scorer_to_usebio", reason="scorer-to-usebio (the test extra) is not installed")

PLAYERS = {p: (f"Player {p}a", f"Player {p}b") for p in range(1, 9)}
SESSION = ('[session]\nevent = "Howell Pairs"\ndate = 2026-12-01\nvenue = "Riverside"\n'
           'club_id = 4242\n[movement]\ntype = "howell"\npairs = 8\nboards_per_round = 1\n'
           '[[adjustment]]\ntable = "1"\nboard = 1\nns = "A+"\new = "A-"\n[pairs]\n'
           + "".join(f'{p} = ["{a}", "{b}"]\n' for p, (a, b) in PLAYERS.items()))


def result_line(table: str, board: int, score: int) -> str:
    return json.dumps({"topic": f"bridge/{table}/result", "payload": {
        "v": 1, "table": table, "board": board, "dealer": "N", "vul": "None",
        "contract": "3NT" if score > 0 else "4S", "declarer": "N" if score > 0 else "E",
        "tricks": 9 if score > 0 else 10, "tricks_played": 9, "score_ns": score,
        "irregularities": []}})


def scorer_file(session_results: dict[tuple[str, int], int],
                seating: dict[tuple[str, int], tuple[int, int]],
                mps: dict[tuple[str, int], tuple[Fraction, Fraction]],
                totals: dict[int, tuple[Fraction, Fraction]]) -> bytes:
    """The session as Bridge NZ Scorer writes it (what ``scorer_to_usebio`` reads)."""
    root = ET.Element("results", {"scoring_type": "MP", "club": "Riverside", "club_no": "4242",
                                  "event_name": "Howell Pairs", "event_date": "01/12/2026"})
    ET.SubElement(ET.SubElement(root, "sections"), "section", {"sectid": "A"})
    scores = ET.SubElement(ET.SubElement(root, "scores"), "scsection", {"id": "A"})
    for pair, (points, top) in sorted(totals.items()):
        pct = f"{float(100 * points / top):.2f}"
        ET.SubElement(scores, "pair", {
            "no": str(pair), "dir": "H", "player_name_1": PLAYERS[pair][0],
            "player_name_2": PLAYERS[pair][1], "nzb_no_1": "", "nzb_no_2": "",
            "res": pct, "raw_score": pct, "handicap": "0",
            "match_points": f"{float(points):g}/{float(top):g}"})
    boards = ET.SubElement(ET.SubElement(root, "board_results"), "brsection", {"id": "A"})
    for (table, board), (ns, ew) in sorted(seating.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        a, b = mps[(table, board)]
        attrs = {"bd": str(board), "ns": str(ns), "ew": str(ew), "lead": "",
                 "mp_ns": str(int(a * 10)), "mp_ew": str(int(b * 10))}
        if (table, board) == ("1", 1):
            attrs.update({"cont": "", "dec": "", "res": "", "score": "Adj"})
        else:
            score = session_results[(table, board)]
            attrs.update({"cont": "3 NT" if score > 0 else "4 S", "dec": "N" if score > 0
                          else "E", "res": "=", "score": str(score)})
        ET.SubElement(boards, "result", attrs)
    return ET.tostring(root)


def test_usebio_is_written_read_back_and_matches_scorer_to_usebio(tmp_path: Path) -> None:
    path = tmp_path / "howell.toml"
    path.write_text(SESSION)
    session = load_session(path)
    rng = random.Random(7)
    seating = {(t, b): session.movement.pairs_at(t, b) or (0, 0)
               for t in session.movement.tables for b in session.movement.boards_of_table(t)}
    results = {key: rng.choice([-620, -420, -100, 50, 110, 400, 430, 460, 630])
               for key in seating if key != ("1", 1)}
    # matchpoints by hand: board 1 has an A+/A- at table 1, so its 3 results are scaled to
    # the movement's 4 tables (Neuberg); the other boards have all 4
    mps: dict[tuple[str, int], tuple[Fraction, Fraction]] = {}
    for board in session.movement.boards:
        tables = [t for (t, b) in seating if b == board]
        real = {t: results[(t, board)] for t in tables if (t, board) in results}
        for t, s in real.items():
            raw = Fraction(sum(2 if s > o else 1 if s == o else 0
                               for u, o in real.items() if u != t))
            raw_ew = 2 * (len(real) - 1) - raw
            if len(real) < len(tables):
                n, full = len(real), len(tables)
                raw, raw_ew = (raw + 1) * full / n - 1, (raw_ew + 1) * full / n - 1
            mps[(t, board)] = (raw, raw_ew)
        if board == 1:
            mps[("1", 1)] = (Fraction(6 * 60, 100), Fraction(6 * 40, 100))
    totals: dict[int, tuple[Fraction, Fraction]] = {}
    for key, (a, b) in mps.items():
        ns, ew = seating[key]
        for pair, pts in ((ns, a), (ew, b)):
            p, top = totals.get(pair, (Fraction(0), Fraction(0)))
            totals[pair] = (p + pts, top + 6)

    published = read_published([result_line(t, b, s) for (t, b), s in results.items()])
    export(session, published, tmp_path / "out", ["usebio"], io.StringIO())
    ours_text = (tmp_path / "out" / f"{session.id}.xml").read_text(encoding="utf-8")
    assert f'<!DOCTYPE USEBIO PUBLIC "{PUBLIC_ID}"' in ours_text
    ours = ET.fromstring(ours_text.split("\n", 2)[2])

    _, tree = scorer_to_usebio.convert(io.BytesIO(scorer_file(results, seating, mps, totals)))
    theirs = tree.getroot()

    # the same elements in the same order, where the reference writes them
    def tags(e: ET.Element) -> list[str]:
        return [c.tag for c in e]

    assert ours.tag == theirs.tag == "USEBIO" and ours.get("Version") == theirs.get("Version")
    assert tags(ours) == tags(theirs) == ["CLUB", "EVENT"]
    assert tags(ours.find("CLUB")) == tags(theirs.find("CLUB"))          # type: ignore[arg-type]
    ev_ours, ev_theirs = ours.find("EVENT"), theirs.find("EVENT")
    assert ev_ours is not None and ev_theirs is not None
    assert ev_ours.get("EVENT_TYPE") == ev_theirs.get("EVENT_TYPE") == "PAIRS"
    shared = set(tags(ev_theirs))
    assert [t for t in tags(ev_ours) if t in shared] == \
        [t for i, t in enumerate(tags(ev_theirs)) if t not in tags(ev_theirs)[:i]
         or t == "BOARD"]
    extra = set(tags(ev_ours)) - shared
    assert extra == {"EVENT_IDENTIFIER", "BOARD_SCORING_METHOD"}
    for name in ("EVENT_DESCRIPTION", "DATE", "WINNER_TYPE", "BOARDS_PLAYED"):
        assert ev_ours.findtext(name) == ev_theirs.findtext(name), name
    # the reference always says master points were awarded (it converts results that
    # carry them); this session awards none
    assert (ev_ours.findtext("MPS_AWARDED_FLAG"), ev_theirs.findtext("MPS_AWARDED_FLAG")) == \
        ("N", "Y")
    assert ours.findtext("CLUB/CLUB_ID_NUMBER") == theirs.findtext("CLUB/CLUB_ID_NUMBER")

    pairs_ours = {p.findtext("PAIR_NUMBER"): p for p in ev_ours.iter("PAIR")}
    pairs_theirs = {p.findtext("PAIR_NUMBER"): p for p in ev_theirs.iter("PAIR")}
    assert set(pairs_ours) == set(pairs_theirs) == {str(p) for p in PLAYERS}
    for number, p in pairs_ours.items():
        q = pairs_theirs[number]
        assert tags(p) == tags(q)
        assert [x.findtext("PLAYER_NAME") for x in p.iter("PLAYER")] == \
            [x.findtext("PLAYER_NAME") for x in q.iter("PLAYER")]
        assert p.findtext("BOARDS_PLAYED") == q.findtext("BOARDS_PLAYED")
        assert (p.findtext("PLACE") or "").rstrip("=") == q.findtext("PLACE")
        assert p.findtext("PERCENTAGE") == q.findtext("PERCENTAGE")
        points, top = totals[int(number)]
        assert abs(float(p.findtext("TOTAL_SCORE") or "nan") - float(points)) < 0.006

    def lines(event: ET.Element) -> list[tuple[int, ET.Element]]:
        return sorted(((int(b.findtext("BOARD_NUMBER") or 0), t) for b in event.iter("BOARD")
                       for t in b.iter("TRAVELLER_LINE")),
                      key=lambda x: (x[0], x[1].findtext("NS_PAIR_NUMBER") or ""))

    ours_lines, their_lines = lines(ev_ours), lines(ev_theirs)
    assert len(ours_lines) == len(their_lines) == len(seating)
    for (board, a), (board2, b) in zip(ours_lines, their_lines, strict=True):
        assert board == board2
        assert tags(a) == tags(b), (board, tags(a), tags(b))
        for name in ("NS_PAIR_NUMBER", "EW_PAIR_NUMBER", "CONTRACT", "PLAYED_BY", "TRICKS",
                     "SCORE"):
            assert a.findtext(name) == b.findtext(name), (board, name)
        # Scorer keeps a tenth of a matchpoint, rounded down
        for name in ("NS_MATCH_POINTS", "EW_MATCH_POINTS"):
            assert 0 <= float(a.findtext(name) or "nan") - float(b.findtext(name) or "nan") \
                < 0.1
    adjusted = [a for board, a in ours_lines if board == 1 and a.findtext("SCORE", "")[:1]
                == "A"]
    assert [a.findtext("SCORE") for a in adjusted] == ["A6040"]
