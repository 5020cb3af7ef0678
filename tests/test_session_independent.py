"""An independent scorer, from first principles, against ``score`` and every export.

Fresh random sessions (hypothesis draws the seed): an explicit movement (pairs that keep
their direction, two fields, or move, one field; or teams matches), random results, some
missing, a result from a table the movement does not give that board, and the director's
adjustments: artificial scores by name and by percentage (at both tables of a teams board
too), split scores and assigned scores. The expected matchpoints (Law 78A, Neuberg),
cross-IMPs, teams IMPs (Law 78B, 86A), totals, percentages and ranks are computed here in
exact fractions from the rules as docs/session.md states them, without the project's
scoring code, and compared with ``score --json``'s data, the CSV travellers and ranking,
the PBN ScoreTable and TotalScoreTable, and the USEBIO file read back by a reader written
here from the element names.
"""

from __future__ import annotations

import csv
import io
import json
import math
import random
import re
import tempfile
import xml.etree.ElementTree as ET
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.session import load_session
from controller.session.export import export, read_published
from controller.session.report import pairs_report, teams_report
from controller.session.table_results import read_results

IMP_BOUNDS = [20, 50, 90, 130, 170, 220, 270, 320, 370, 430, 500, 600, 750, 900, 1100, 1300,
              1500, 1750, 2000, 2250, 2500, 3000, 3500, 4000]
SCORES = [-1100, -800, -500, -200, -100, -50, 0, 50, 90, 110, 140, 400, 420, 430, 450, 620,
          630, 650, 660, 980, 1430]
ARTIFICIAL = {"A+": 60, "A=": 50, "A-": 40}


def imp(diff: int) -> int:
    n = sum(1 for b in IMP_BOUNDS if abs(diff) >= b)
    return n if diff >= 0 else -n


def percent_of(kind: str) -> Fraction:
    return Fraction(kind[:-1]) if kind.endswith("%") else Fraction(ARTIFICIAL[kind])


# -- a random session ----------------------------------------------------------------------
def pairs_session(rng: random.Random, method: str) -> dict[str, Any]:
    tables = rng.randint(2, 5)
    rounds = rng.randint(2, 4)
    bpr = rng.randint(1, 2)
    fixed = rng.random() < 0.5           # NS stay NS: two fields
    pairs = list(range(1, 2 * tables + 1))
    seating: dict[tuple[str, int], tuple[int, int]] = {}
    rows = []
    for r in range(rounds):
        if fixed:
            ew = pairs[tables:]
            ew = ew[r % tables:] + ew[:r % tables]
            seats = [(t + 1, ew[t]) for t in range(tables)]
        else:
            shuffled = pairs[:]
            rng.shuffle(shuffled)
            seats = [(shuffled[2 * t], shuffled[2 * t + 1]) for t in range(tables)]
        row = {}
        for t in range(tables):
            s = (t + r) % max(tables, rounds)
            boards = list(range(1 + s * bpr, 1 + (s + 1) * bpr))
            row[str(t + 1)] = (seats[t][0], seats[t][1], boards)
            for b in boards:
                seating[(str(t + 1), b)] = (seats[t][0], seats[t][1])
        rows.append(row)
    return {"kind": "explicit", "rows": rows, "seating": seating, "method": method,
            "fixed": fixed}


def teams_session(rng: random.Random) -> dict[str, Any]:
    matches = rng.randint(1, 3)
    rounds = rng.randint(1, 3)
    bpr = rng.randint(2, 4)
    teams_ = list(range(1, 2 * matches + 1))
    seating: dict[tuple[str, int], tuple[int, int]] = {}
    rows = []
    for r in range(rounds):
        order = teams_[:]
        rng.shuffle(order)
        row = {}
        boards = list(range(1 + r * bpr, 1 + (r + 1) * bpr))
        for m in range(matches):
            home, away = order[2 * m], order[2 * m + 1]
            row[str(2 * m + 1)] = (home, away, boards)
            row[str(2 * m + 2)] = (away, home, boards)
            for b in boards:
                seating[(str(2 * m + 1), b)] = (home, away)
                seating[(str(2 * m + 2), b)] = (away, home)
        rows.append(row)
    return {"kind": "teams-explicit", "rows": rows, "seating": seating, "method": "imps",
            "fixed": False}


def random_inputs(rng: random.Random, plan: dict[str, Any]
                  ) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], dict[str, Any]]]:
    scores: dict[tuple[str, int], int] = {}
    adjust: dict[tuple[str, int], dict[str, Any]] = {}
    for key in plan["seating"]:
        x = rng.random()
        if x < 0.1:
            continue                                    # not played (yet)
        if x < 0.85:
            scores[key] = rng.choice(SCORES)
        y = rng.random()
        if y < 0.08:
            ns = rng.choice(["A+", "A=", "A-", f"{rng.randint(0, 100)}%",
                             f"{rng.randint(0, 1000) / 10:g}%"])
            ew = rng.choice(["A+", "A=", "A-", f"{rng.randint(30, 70)}%"])
            adjust[key] = {"ns": ns, "ew": ew}
        elif y < 0.12:
            adjust[key] = {"split": [rng.choice(SCORES), rng.choice(SCORES)]}
        elif y < 0.15:
            adjust[key] = {"score_ns": rng.choice(SCORES)}
    if plan["kind"] == "teams-explicit" and plan["seating"]:
        # artificial scores at both tables of one board: each team's two add up
        (t, b) = rng.choice(sorted(plan["seating"]))
        other = str(int(t) + 1 if int(t) % 2 else int(t) - 1)
        adjust[(t, b)] = {"ns": "A=", "ew": "A="}
        adjust[(other, b)] = {"ns": "A+", "ew": "A-"}
    return scores, adjust


def session_toml(plan: dict[str, Any], adjust: dict[tuple[str, int], dict[str, Any]]) -> str:
    lines = ['[session]', 'event = "Random"', 'date = "2026-12-01"', 'venue = "Club"',
             f'[movement]\ntype = "{plan["kind"]}"']
    for row in plan["rows"]:
        lines.append("[[movement.round]]")
        for table, (ns, ew, boards) in row.items():
            lines.append(f'"{table}" = {{ ns = {ns}, ew = {ew}, boards = {json.dumps(boards)} }}')
    lines.append(f'[scoring]\nmethod = "{plan["method"]}"')
    if plan["method"] == "imps":
        lines.append('vp_scale = "wbf"')
    for (table, board), adj in sorted(adjust.items()):
        lines.append(f'[[adjustment]]\ntable = "{table}"\nboard = {board}')
        for k, v in adj.items():
            lines.append(f"{k} = {json.dumps(v)}")
    return "\n".join(lines) + "\n"


def published_lines(scores: dict[tuple[str, int], int], stray: tuple[str, int, int]
                    ) -> list[str]:
    out = []
    for (table, board), score in [*sorted(scores.items()), ((stray[0], stray[1]), stray[2])]:
        out.append(json.dumps({"topic": f"bridge/{table}/result", "payload": {
            "v": 1, "table": table, "board": board, "dealer": "N", "vul": "None",
            "contract": "3NT", "declarer": "N" if score >= 0 else "E", "tricks": 9,
            "tricks_played": 9, "score_ns": score, "irregularities": []}}))
    return out


# -- the independent scorer ---------------------------------------------------------------
def expected_pairs(plan: dict[str, Any], scores: dict[tuple[str, int], int],
                   adjust: dict[tuple[str, int], dict[str, Any]]
                   ) -> tuple[dict[tuple[str, int], tuple[Fraction, Fraction, Fraction]],
                              dict[int, tuple[Fraction, Fraction, int]]]:
    """(table, board) -> (NS points, EW points, top); pair -> (points, tops, boards)."""
    seating = plan["seating"]
    cross = plan["method"] == "cross-imps"
    per_table: dict[tuple[str, int], tuple[Fraction, Fraction, Fraction]] = {}
    for board in sorted({b for _, b in seating}):
        tables = [t for (t, b) in seating if b == board]
        n_full = len(tables)
        real: dict[str, tuple[int, int]] = {}
        for t in tables:
            adj = adjust.get((t, board))
            if adj is None:
                if (t, board) in scores:
                    real[t] = (scores[(t, board)], scores[(t, board)])
            elif "split" in adj:
                real[t] = (adj["split"][0], adj["split"][1])
            elif "score_ns" in adj:
                real[t] = (adj["score_ns"], adj["score_ns"])
        n = len(real)
        top = Fraction(2 * (n_full - 1))
        for t, (ns_s, ew_s) in real.items():
            others = [v for u, v in real.items() if u != t]
            if cross:
                a = Fraction(sum(imp(ns_s - o[0]) for o in others), n - 1) if n > 1 else 0
                b = Fraction(-sum(imp(ew_s - o[1]) for o in others), n - 1) if n > 1 else 0
                per_table[(t, board)] = (Fraction(a), Fraction(b), Fraction(0))
                continue
            a = Fraction(sum(2 if ns_s > o[0] else 1 if ns_s == o[0] else 0 for o in others))
            b = Fraction(sum(2 if ew_s < o[1] else 1 if ew_s == o[1] else 0 for o in others))
            if n < n_full:
                a, b = (a + 1) * n_full / n - 1, (b + 1) * n_full / n - 1
            per_table[(t, board)] = (a, b, top)
        for t in tables:
            adj = adjust.get((t, board))
            if adj is None or "ns" not in adj:
                continue
            pn, pe = percent_of(adj["ns"]), percent_of(adj["ew"])
            if cross:
                per_table[(t, board)] = ((pn - 50) * 3 / 10, (pe - 50) * 3 / 10, Fraction(0))
            else:
                per_table[(t, board)] = (top * pn / 100, top * pe / 100, top)
    totals: dict[int, tuple[Fraction, Fraction, int]] = {}
    for (t, board), (a, b, top) in per_table.items():
        ns, ew = seating[(t, board)]
        for pair, pts in ((ns, a), (ew, b)):
            p, tp, c = totals.get(pair, (Fraction(0), Fraction(0), 0))
            totals[pair] = (p + pts, tp + top, c + 1)
    return per_table, totals


def expected_ranks(values: dict[int, Fraction]) -> dict[int, str]:
    out = {}
    for pair, v in values.items():
        better = sum(1 for w in values.values() if w > v)
        tied = sum(1 for w in values.values() if w == v) > 1
        out[pair] = f"{better + 1}{'=' if tied else ''}"
    return out


def expected_teams(plan: dict[str, Any], scores: dict[tuple[str, int], int],
                   adjust: dict[tuple[str, int], dict[str, Any]]
                   ) -> tuple[dict[tuple[int, str], tuple[Fraction, Fraction]],
                              dict[int, Fraction]]:
    """(board, home table) -> (home IMPs, away IMPs); team -> net IMPs over its matches."""
    seating = plan["seating"]
    per_board: dict[tuple[int, str], tuple[Fraction, Fraction]] = {}
    won: dict[tuple[int, int, int], dict[int, Fraction]] = {}

    def art(kind: str) -> Fraction:
        return Fraction(round((percent_of(kind) - 50) * 3 / 10, 2)).limit_denominator(100)

    def sides(key: tuple[str, int]) -> tuple[int, int] | None:
        adj = adjust.get(key)
        if adj is not None and "split" in adj:
            return adj["split"][0], adj["split"][1]
        if adj is not None and "score_ns" in adj:
            return adj["score_ns"], adj["score_ns"]
        if adj is None and key in scores:
            return scores[key], scores[key]
        return None

    for (x, board), (home, away) in sorted(seating.items()):
        if int(x) % 2 == 0:
            continue
        y = str(int(x) + 1)
        ax, ay = adjust.get((x, board)), adjust.get((y, board))
        if (ax and "ns" in ax) or (ay and "ns" in ay):
            h = a = Fraction(0)
            if ax and "ns" in ax:
                h, a = h + art(ax["ns"]), a + art(ax["ew"])
            if ay and "ns" in ay:
                h, a = h + art(ay["ew"]), a + art(ay["ns"])
        else:
            sx, sy = sides((x, board)), sides((y, board))
            if sx is None or sy is None:
                continue
            h, a = Fraction(imp(sx[0] - sy[1])), Fraction(imp(sy[0] - sx[1]))
        per_board[(board, x)] = (h, a)
        rnd = next(i for i, row in enumerate(plan["rows"]) if board in row[x][2])
        key = (rnd, min(home, away), max(home, away))
        w = won.setdefault(key, {home: Fraction(0), away: Fraction(0)})
        w[home] += max(h, Fraction(0))
        w[away] += max(a, Fraction(0))
    net: dict[int, Fraction] = {}
    for (_, first, second), w in won.items():
        net[first] = net.get(first, Fraction(0)) + w[first] - w[second]
        net[second] = net.get(second, Fraction(0)) + w[second] - w[first]
    return per_board, net


def close(a: float | str, b: Fraction, tol: float = 0.00501) -> bool:
    """``a`` (two decimals, or exact) is ``b`` rounded."""
    return abs(float(a) - float(b)) <= tol


# -- the check ----------------------------------------------------------------------------
def read_usebio(path: Path) -> tuple[dict[str, dict[str, str]],
                                      dict[tuple[int, str, str], list[dict[str, str]]]]:
    """A reader written from the element names: PAIR or TEAM -> its fields; (board, NS,
    EW) -> the traveller lines' fields (a pair may meet another twice on a board)."""
    text = path.read_text(encoding="utf-8")
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE USEBIO PUBLIC '
                           '"-//EBU//DTD USEBIO 1.2//EN"')
    root = ET.fromstring(text.split("\n", 2)[2])
    assert root.tag == "USEBIO" and root.get("Version") == "1.2"
    event = root.find("EVENT")
    assert event is not None
    participants: dict[str, dict[str, str]] = {}
    for p in event.findall("PARTICIPANTS/PAIR"):
        participants[p.findtext("PAIR_NUMBER") or ""] = {c.tag: c.text or "" for c in p}
    for t in event.findall("PARTICIPANTS/TEAM"):
        participants[t.get("TEAM_ID") or ""] = {c.tag: c.text or "" for c in t}
    lines: dict[tuple[int, str, str], list[dict[str, str]]] = {}
    for board in event.iter("BOARD"):
        number = int(board.findtext("BOARD_NUMBER") or 0)
        for line in board.findall("TRAVELLER_LINE"):
            fields = {c.tag: c.text or "" for c in line}
            lines.setdefault((number, fields["NS_PAIR_NUMBER"], fields["EW_PAIR_NUMBER"]),
                             []).append(fields)
    return participants, lines


def check_pairs(plan: dict[str, Any], scores: dict[tuple[str, int], int],
                adjust: dict[tuple[str, int], dict[str, Any]], path: Path,
                lines: list[str], out: Path) -> None:
    session = load_session(path)
    per_table, totals = expected_pairs(plan, scores, adjust)
    cross = plan["method"] == "cross-imps"
    report = pairs_report(session, read_results(lines))
    got_tables = {(r["table"], b["board"]): r for b in report["boards"] for r in b["results"]}
    assert set(got_tables) == set(per_table)            # the stray result is not scored
    for key, (a, b, top) in per_table.items():
        r = got_tables[key]
        assert close(r["mp_ns"], a, 1e-9) and close(r["mp_ew"], b, 1e-9), (key, r, a, b)
        assert close(r["top"], top, 1e-9)
    # two fields (NS, EW) when no pair that scored ever sat both ways; else one
    sides: dict[int, set[str]] = {}
    for key in per_table:
        ns, ew = plan["seating"][key]
        sides.setdefault(ns, set()).add("NS")
        sides.setdefault(ew, set()).add("EW")
    two = all(len(v) == 1 for v in sides.values())
    fields: dict[str, list[int]] = {}
    for pair in totals:
        fields.setdefault(next(iter(sides[pair])) if two else "", []).append(pair)
    ranks: dict[int, str] = {}
    for members in fields.values():
        key = {p: totals[p][0] if cross else totals[p][0] / totals[p][1] for p in members}
        ranks.update(expected_ranks(key))
    standings = {s["pair"]: s for s in report["standings"]}
    assert set(standings) == set(totals)
    for pair, (pts, tops, count) in totals.items():
        s = standings[pair]
        assert close(s["points"], pts, 1e-4) and s["boards"] == count and s["rank"] == ranks[pair]
        if cross:
            assert s["percent"] is None
        else:
            assert close(s["percent"], 100 * pts / tops, 0.00501)

    published = read_published(lines)
    export(session, published, out, ["pbn", "csv", "usebio"], io.StringIO())
    stem = session.id
    with open(out / f"{stem}-ranking.csv", newline="") as fp:
        ranking = {int(r["pair"]): r for r in csv.DictReader(fp)}
    for pair, (pts, tops, _) in totals.items():
        assert close(ranking[pair]["points"], pts) and ranking[pair]["rank"] == ranks[pair]
        if not cross:
            assert close(ranking[pair]["percent"], 100 * pts / tops)
    with open(out / f"{stem}.csv", newline="") as fp:
        travellers = {(r["table"], int(r["board"])): r for r in csv.DictReader(fp)}
    assert set(travellers) == set(per_table)
    for key, (a, b, _) in per_table.items():
        row = travellers[key]
        assert close(row["points_ns"], a) and close(row["points_ew"], b)
        adj = adjust.get(key)
        if adj is not None and "ns" in adj:
            assert row["scored"] == f"{adj['ns']}/{adj['ew']}"
        elif adj is not None and "split" in adj:
            assert row["scored"] == f"{adj['split'][0]:+d}/{adj['split'][1]:+d}"
    check_pbn(out / f"{stem}.pbn", per_table, adjust, scores, plan, cross)
    # the PBN's TotalScoreTable: Rank PairId Direction TotalScoreMP|IMP [TotalPercentage]
    # NrBoards Names
    pbn = (out / f"{stem}.pbn").read_text(encoding="utf-8").replace("\r\n", "\n")
    total = pbn.split("[TotalScoreTable", 1)[1].split("]\n", 1)[1].split("\n\n")[0]
    rows = [re.findall(r'"[^"]*"|\S+', r) for r in total.splitlines() if r and r[0] != "["]
    assert len(rows) == len(totals)
    for row in rows:
        pair = int(row[1])
        pts, tops, count = totals[pair]
        assert row[0] == ranks[pair] and close(row[3], pts)
        if not cross:
            assert close(row[4], 100 * pts / tops) and int(row[5]) == count
    participants, usebio_lines = read_usebio(out / f"{stem}.xml")
    for pair, (pts, tops, count) in totals.items():
        p = participants[str(pair)]
        assert p["PLACE"] == ranks[pair] and close(p["TOTAL_SCORE"], pts)
        assert int(p["BOARDS_PLAYED"]) == count
        if not cross:
            assert close(p["PERCENTAGE"], 100 * pts / tops)
    assert sum(map(len, usebio_lines.values())) == len(per_table)
    for (t, board), (a, b, _) in per_table.items():
        ns, ew = plan["seating"][(t, board)]
        adj = adjust.get((t, board))
        want: dict[str, str | None]
        if adj is not None and "ns" in adj:      # an adjustment's line has no contract
            want = {"SCORE": "A" + "".join(f"{float(percent_of(k)):g}"
                                           for k in (adj["ns"], adj["ew"])), "CONTRACT": None}
        elif adj is not None:
            want = {"SCORE": str(adj["split"][0] if "split" in adj else adj["score_ns"]),
                    "CONTRACT": None}
        else:
            want = {"SCORE": str(scores[(t, board)]), "CONTRACT": "3NT"}
        # a pair may meet another twice on a board: the line with these points and score
        candidates = [x for x in usebio_lines[(board, str(ns), str(ew))]
                      if close(x["NS_MATCH_POINTS"], a) and close(x["EW_MATCH_POINTS"], b)
                      and all(x.get(k) == v for k, v in want.items())]
        assert candidates, (t, board, want, usebio_lines[(board, str(ns), str(ew))])
        line = candidates[0]
        usebio_lines[(board, str(ns), str(ew))].remove(line)


def check_pbn(path: Path, per_table: dict[tuple[str, int], tuple[Fraction, Fraction, Fraction]],
              adjust: dict[tuple[str, int], dict[str, Any]], scores: dict[tuple[str, int], int],
              plan: dict[str, Any], cross: bool) -> None:
    """Every board with a score has one ScoreTable, with a row per scored table."""
    text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
    games = text.split("\n\n")
    rows: dict[tuple[str, int], list[str]] = {}
    for game in games:
        m = re.search(r'\[Board "(\d+)"\]', game)
        if not m or "[ScoreTable" not in game:
            continue
        board = int(m.group(1))
        head, _, body = game.partition("[ScoreTable")
        header, _, table = body.partition("]\n")
        names = [c.split("\\")[0] for c in header.strip(' "').split(";")]
        for line in table.splitlines():
            if line.startswith("["):
                break
            cells = dict(zip(names, re.findall(r'"[^"]*"|\S+', line), strict=True))
            key = (cells["Table"], board)
            assert key not in rows
            rows[key] = list(cells.values())
            a, b, _ = per_table[key]
            if not cross:
                assert close(cells["MP_NS"], a) and close(cells["MP_EW"], b)
            else:
                assert close(cells["IMP_NS"], a) and close(cells["IMP_EW"], b)
            adj = adjust.get(key)
            if adj is not None and "ns" in adj:
                assert (cells["Score_NS"], cells["Score_EW"], cells["Contract"]) == (
                    adj["ns"], adj["ew"], "-")
            elif adj is not None and "split" in adj:
                assert (int(cells["Score_NS"]), int(cells["Score_EW"])) == (
                    adj["split"][0], -adj["split"][1]) and cells["Contract"] == "-"
            elif adj is None:
                assert cells["Contract"] == "3NT"
                s = scores[key]
                assert (cells["Score_NS"], cells["Score_EW"]) == (
                    (str(s), "-") if s > 0 else ("-", str(-s)) if s < 0 else ("0", "0"))
    assert set(rows) == set(per_table)


def check_teams(plan: dict[str, Any], scores: dict[tuple[str, int], int],
                adjust: dict[tuple[str, int], dict[str, Any]], path: Path,
                lines: list[str], out: Path) -> None:
    session = load_session(path)
    per_board, net = expected_teams(plan, scores, adjust)
    report = teams_report(session, read_results(lines))
    got = {(b["board"], b["home_table"]): (b["imps_home"], b["imps_away"])
           for b in report["boards"]}
    assert set(got) == set(per_board)
    for key, (h, a) in per_board.items():
        assert close(got[key][0], h, 1e-9) and close(got[key][1], a, 1e-9), key
    standings = {s["team"]: s for s in report["standings"]}
    assert set(standings) == set(net)
    for team, imps_ in net.items():
        assert close(standings[team]["imps"], imps_, 1e-6)
    for m in report["matches"]:
        assert math.isclose(m["vp_home"] + m["vp_away"], 20, abs_tol=1e-9)
        margin = m["imps_home"] - m["imps_away"]
        tau = (5 ** 0.5 - 1) / 2
        blitz = 15 * m["boards"] ** 0.5
        formula = 20.0 if abs(margin) >= blitz else \
            10 + 10 * (1 - tau ** (3 * abs(margin) / blitz)) / (1 - tau ** 3)
        winner = max(m["vp_home"], m["vp_away"])
        assert abs(winner - formula) <= 0.025 and (margin == 0) == (m["vp_home"] == 10)
    vps: dict[int, float] = {}
    for m in report["matches"]:
        vps[m["home"]] = vps.get(m["home"], 0) + m["vp_home"]
        vps[m["away"]] = vps.get(m["away"], 0) + m["vp_away"]
    ranks = expected_ranks({t: Fraction(round(v, 2)).limit_denominator(100)
                            for t, v in vps.items()})
    assert {t: s["rank"] for t, s in standings.items()} == ranks

    export(session, read_published(lines), out, ["pbn", "csv", "usebio"], io.StringIO())
    stem = session.id
    with open(out / f"{stem}.csv", newline="") as fp:
        travellers = {(r["table"], int(r["board"])): r for r in csv.DictReader(fp)}
    for (board, x), (h, a) in per_board.items():
        y = str(int(x) + 1)
        assert close(travellers[(x, board)]["points_ns"], h)
        assert close(travellers[(y, board)]["points_ns"], a)
        for t in (x, y):
            adj = adjust.get((t, board))
            if adj is not None and "ns" in adj:      # the adjustment, not the table's score
                assert travellers[(t, board)]["scored"] == f"{adj['ns']}/{adj['ew']}"
    # the PBN ScoreTable: each table's IMPs, and the adjustment where there is one
    pbn = (out / f"{stem}.pbn").read_text(encoding="utf-8").replace("\r\n", "\n")
    cells: dict[tuple[str, int], dict[str, str]] = {}
    for game in pbn.split("\n\n"):
        m = re.search(r'\[Board "(\d+)"\]', game)
        if not m or "[ScoreTable" not in game:
            continue
        header, _, body = game.split("[ScoreTable", 1)[1].partition("]\n")
        names = [c.split("\\")[0] for c in header.strip(' "').split(";")]
        for line in body.splitlines():
            if line.startswith("["):
                break
            row = dict(zip(names, re.findall(r'"[^"]*"|\S+', line), strict=True))
            cells[(row["Table"], int(m.group(1)))] = row
    for (board, x), (h, a) in per_board.items():
        y = str(int(x) + 1)
        assert close(cells[(x, board)]["IMP_NS"], h) and close(cells[(y, board)]["IMP_NS"], a)
        for t in (x, y):
            adj = adjust.get((t, board))
            if adj is not None and "ns" in adj:
                assert (cells[(t, board)]["Score_NS"], cells[(t, board)]["Score_EW"],
                        cells[(t, board)]["Contract"]) == (adj["ns"], adj["ew"], "-")
    with open(out / f"{stem}-ranking.csv", newline="") as fp:
        ranking = {int(r["team"]): r for r in csv.DictReader(fp)}
    for team, imps_ in net.items():
        assert close(ranking[team]["imps"], imps_) and ranking[team]["rank"] == ranks[team]
    participants, _ = read_usebio(out / f"{stem}.xml")
    for team in net:
        assert participants[str(team)]["PLACE"] == ranks[team]
        assert close(participants[str(team)]["TOTAL_SCORE"],
                     Fraction(round(vps[team], 2)).limit_denominator(100))


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from(["matchpoints", "cross-imps", "imps"]))
def test_an_independent_scorer_agrees_on_random_sessions(seed: int, method: str) -> None:
    rng = random.Random(seed)
    plan = teams_session(rng) if method == "imps" else pairs_session(rng, method)
    scores, adjust = random_inputs(rng, plan)
    stray = (str(len(plan["rows"][0]) + 1), 1, 420)     # a table the movement has not
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.toml"
        path.write_text(session_toml(plan, adjust))
        lines = published_lines(scores, stray)
        if method == "imps":
            check_teams(plan, scores, adjust, path, lines, Path(tmp) / "out")
        else:
            check_pairs(plan, scores, adjust, path, lines, Path(tmp) / "out")
