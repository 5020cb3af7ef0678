"""A whole session end to end: a session file, every table's sensor events through the
Engine (as the daemon or ``replay`` runs them), the messages the controller publishes, then
``bridge-table export``: PBN read back by endplay and by the project's reader with the same
deals, auctions, play and results; totals and ranking as computed here independently."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from boardevents import BoardScript, EventWriter, clean_board, t08_revoke
from endplay.parsers import lin as ep_lin
from endplay.parsers import pbn as ep_pbn

from controller.formats.lin import read_lin
from controller.formats.pbn import read_pbn
from controller.laws.cards import Seat, Suit, board_dealer
from controller.service.engines import build_engine

DEAL = t08_revoke().deal
TABLES = ("1", "2", "3")

SESSION = """
[session]
event = "Club Pairs"
date = 2026-11-30
venue = "Riverside"
deals = "deals.pbn"
[movement]
type = "mitchell"
tables = 3
boards_per_round = 1
first_board = 9
[pairs]
1 = ["Ann Archer", "Bob Baker"]
4 = ["Cy Cole", "Di Dunn"]
"""


def contract_script(board: int, opener: Seat, bid: str, trump: Suit | None,
                    play: tuple[str, ...] = (), auto: bool = True) -> BoardScript:
    calls = []
    seat = board_dealer(board)
    while seat is not opener:
        calls.append("Pass")
        seat = seat.lho
    return BoardScript(board=board, deal=DEAL, calls=[*calls, bid, "Pass", "Pass", "Pass"],
                       trump=trump, declarer=opener, play=play, auto=auto)


def board_plan() -> dict[tuple[str, int], tuple[BoardScript, dict[str, Any] | None, bool]]:
    """(table, board) -> the board's script, a director's ruling after it, whether play
    stops before the end (a claim)."""
    claim_play = ("CT", "C3", "CA", "C7", "CK", "CQ", "C4", "C6")   # two tricks, then a claim
    return {
        ("1", 9): (contract_script(9, Seat.N, "3NT", None), None, False),
        ("2", 9): (clean_board(9), None, False),
        ("3", 9): (clean_board(9), {"ruling": "adjust", "tricks": 8}, False),
        ("1", 10): (t08_revoke(), None, False),            # revoke, Law 64: 9 -> 11 tricks
        ("2", 10): (clean_board(10), None, False),
        ("3", 10): (contract_script(10, Seat.S, "2H", Suit.H), None, False),
        ("1", 11): (clean_board(11), None, False),
        ("2", 11): (contract_script(11, Seat.S, "4H", Suit.H, claim_play, auto=False),
                    {"ruling": "claim", "tricks": 8}, True),
        ("3", 11): (contract_script(11, Seat.N, "3NT", None), None, False),
    }


def write_session(tmp_path: Path) -> Path:
    """The session file and its deals file (boards 9-11) in ``tmp_path``."""
    (tmp_path / "deals.pbn").write_text("".join(
        f'[Board "{b}"]\n[Deal "{_deal_from_dealer(b)}"]\n\n' for b in (9, 10, 11)))
    session = tmp_path / "session.toml"
    session.write_text(SESSION)
    return session


def published(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """Every table's events through the Engine with the session: the JSONL replay writes."""
    session = write_session(tmp_path)
    engine = build_engine(session=session)
    lines = []
    plan = board_plan()
    for table in TABLES:
        writer = EventWriter(f"table-{table}-pi")
        director = 0
        for rnd in range(3):
            board = 9 + (int(table) - 1 + rnd) % 3
            script, ruling, claim = plan[(table, board)]
            events = list(writer.board(script))
            if claim:
                events = events[:-52]       # play stops: no hands back before the claim
            for ev in events:
                lines += _outs(engine.handle(f"bridge/{table}/event", ev))
            if ruling is not None:
                director += 1
                lines += _outs(engine.handle(f"bridge/{table}/ruling", {
                    "v": 1, "src": "td", "seq": director, "ts": 1.0, **ruling}))
    path = tmp_path / "published.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return session, lines


def _deal_from_dealer(board: int) -> str:
    from controller.laws.cards import Deal
    return Deal.from_pbn(DEAL).to_pbn(board_dealer(board))


def _outs(outs: Any) -> Iterator[dict[str, Any]]:
    for out in outs:
        yield {"topic": out.topic, "payload": out.payload}


def last_results(lines: list[dict[str, Any]]) -> dict[tuple[str, int], dict[str, Any]]:
    out = {}
    for line in lines:
        if line["topic"].endswith("/result"):
            p = line["payload"]
            out[(p["table"], p["board"])] = p
    return out


def test_the_session_end_to_end(tmp_path: Path) -> None:
    session, lines = published(tmp_path)
    results = last_results(lines)
    assert len(results) == 9
    # the pairs at the table are in the result (contract 1.2)
    assert (results[("2", 10)]["ns"], results[("2", 10)]["ew"]) == (2, 5)   # round 1
    assert results[("1", 10)]["tricks"] == 11 and results[("1", 10)]["tricks_played"] == 9
    assert results[("3", 9)]["tricks"] == 8
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(tmp_path / "published.jsonl"), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    stem = "club-pairs-2026-11-30-1"
    pbn = out / f"{stem}.pbn"
    assert {p.name for p in out.iterdir()} == {f"{stem}.pbn", f"{stem}.lin", f"{stem}.csv",
                                                 f"{stem}-ranking.csv", f"{stem}.xml"}

    # the project's reader: every table's board, the same deal, auction, play and result
    ours = read_pbn(pbn.read_text(encoding="utf-8"))
    assert ours.errors == []
    records = {(r.table, r.board): r for r in ours.records()}
    assert set(records) == set(results)
    for key, rec in records.items():
        res = results[key]
        assert rec.tricks_result == res["tricks"] and rec.score_ns == res["score_ns"]
        assert str(rec.contract) == res["contract"]
        assert rec.deal is not None and rec.deal.to_pbn(rec.dealer).split(":")[1] == \
            _deal_from_dealer(key[1]).split(":")[1]
        calls = [line["payload"]["call"] for line in lines
                 if line["topic"] == f"bridge/{key[0]}/feed"
                 and line["payload"]["board"] == key[1] and line["payload"]["kind"] == "call"]
        assert [str(e.call) for e in rec.auction] == calls
    assert records[("1", 10)].tricks_played == 9           # the revoke: played 9, result 11
    assert any(i.code.value == "REVOKE" for i in records[("1", 10)].irregularities)
    assert len(records[("2", 11)].tricks) == 2             # the claim after two tricks
    assert records[("1", 9)].tags["North"] == "Ann Archer"

    # endplay reads the same file: deals, auctions, play and results
    with open(pbn, encoding="utf-8") as fp:
        boards = ep_pbn.load(fp)
    assert len(boards) == 9
    for ep in boards:
        key = (ep.info["Table"], int(ep.board_num))
        rec = records[key]
        assert ep.deal.to_pbn().split(":")[1].split() == rec.deal.to_pbn(
            Seat.N).split(":")[1].split() if rec.deal is not None else False
        assert len(ep.auction) == len(rec.auction)
        assert len(ep.play) == sum(len(t.cards) for t in rec.tricks)
        assert ep.contract is not None and ep.contract.result + ep.contract.level + 6 == \
            results[key]["tricks"]

    # totals and ranking as computed here: matchpoints per board, then percentages
    score = {k: r["score_ns"] for k, r in results.items()}
    # the Mitchell rule: table t plays board 9 + (t - 1 + r - 1) % 3 in round r, against
    # EW pair 3 + ((t - r) % 3) + 1
    seat = {}
    for t in (1, 2, 3):
        for r in (1, 2, 3):
            b = 9 + (t - 1 + r - 1) % 3
            seat[(str(t), b)] = (t, 3 + (t - r) % 3 + 1)
    mp: dict[int, float] = {}
    for (t, b), s in score.items():
        others = [score[(u, b)] for u in TABLES if u != t]
        ns_mp = sum(2 if s > o else 1 if s == o else 0 for o in others)
        ns, ew = seat[(t, b)]
        mp[ns] = mp.get(ns, 0) + ns_mp
        mp[ew] = mp.get(ew, 0) + 4 - ns_mp
    with open(out / f"{stem}-ranking.csv", encoding="utf-8") as fp:
        ranking = list(csv.DictReader(fp))
    assert {int(r["pair"]): float(r["points"]) for r in ranking} == mp
    for r in ranking:
        pair = int(r["pair"])
        field = [p for p in mp if (p <= 3) == (pair <= 3)]
        better = sum(1 for p in field if mp[p] > mp[pair])
        tied = sum(1 for p in field if mp[p] == mp[pair]) > 1
        assert r["rank"] == f"{better + 1}{'=' if tied else ''}"
        assert float(r["percent"]) == pytest.approx(100 * mp[pair] / 12, abs=0.01)
    text = pbn.read_text(encoding="utf-8")
    assert text.count("[ScoreTable ") == 3 and text.count("[TotalScoreTable ") == 1

    # LIN: every board LIN can express (no lead out of turn here), read back the same
    lin = read_lin((out / f"{stem}.lin").read_text(encoding="utf-8"))
    assert lin.errors == []
    assert sorted((r.board, r.tricks_result) for r in lin.records) == sorted(
        (b, res["tricks"]) for (_, b), res in results.items())


def test_export_reports_bad_input_without_a_traceback(tmp_path: Path) -> None:
    session = tmp_path / "s.toml"
    session.write_text(SESSION.replace('deals = "deals.pbn"\n', ""))
    binary = tmp_path / "b.jsonl"
    binary.write_bytes(b"\xff\xfe\x00garbage\x80")
    good = tmp_path / "r.jsonl"
    good.write_text('{"topic": "bridge/1/result", "payload": {"table": "1"}}\nnot json\n'
                    '{"topic": "bridge/2/result", "payload": {"table": "2", "board": 1, '
                    '"contract": "", "declarer": null, "tricks": null, "score_ns": 0, '
                    '"dealer": "N", "vul": "None"}}\n')
    for args in ([str(session), "--results", str(binary)],
                 [str(binary), "--results", str(good)],
                 [str(session), "--results", str(good), "--format", "pdf"]):
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", *args,
                               "--out", str(tmp_path / "o")], capture_output=True, text=True,
                              timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
        assert "bridge-table export:" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(good), "--out", str(tmp_path / "o")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    assert f"{good}:1: skipped: no 'board' field" in proc.stderr
    assert f"{good}:2: not JSON" in proc.stderr
    # --out naming a file (the session file, say) is named as such, not "File exists"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(good), "--out", str(session)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f"bridge-table export: {session}: a file, not a directory: "
        "--out names the directory the records are written into")
    # a file with no result, or one cut off in its last line, is an error of one line
    empty, cut = tmp_path / "empty.jsonl", tmp_path / "cut.jsonl"
    empty.write_text("")
    cut.write_text(good.read_text()[:-20])
    for bad in (empty, cut):
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                               "--results", str(bad), "--out", str(tmp_path / "o")],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        line = proc.stderr.strip().splitlines()[-1]
        assert line.startswith("bridge-table export:") and str(bad) in line
        assert ("truncated" if bad is cut else "no result") in line


def test_a_teams_match_exports_imps_and_vps(tmp_path: Path) -> None:
    from test_session_scoring import imp, vp_by_hand

    (tmp_path / "deals.pbn").write_text("".join(
        f'[Board "{b}"]\n[Deal "{_deal_from_dealer(b)}"]\n\n' for b in (1, 2, 3)))
    session = tmp_path / "teams.toml"
    session.write_text('[session]\nevent = "Teams"\ndate = 2026-12-01\ndeals = "deals.pbn"\n'
                       '[movement]\ntype = "teams"\nrounds = 1\nboards_per_round = 3\n'
                       '[teams]\n1 = { name = "Sharks", players = ["A", "B", "C", "D"] }\n'
                       '2 = { name = "Minnows" }\n')
    # (table, board): (contract, declarer, tricks, score_ns)
    played = {("1", 1): ("4H", "S", 10, 420), ("2", 1): ("2H", "S", 10, 170),
              ("1", 2): ("3NT", "N", 8, -100), ("2", 2): ("3NT", "N", 9, 400),
              ("1", 3): ("4S", "E", 10, -420), ("2", 3): ("4S", "E", 10, -420)}
    lines = []
    for (table, board), (contract, declarer, tricks, score) in played.items():
        dealer = board_dealer(board)
        calls = []
        seat = dealer
        while seat is not Seat.parse(declarer):
            calls.append((seat, "Pass"))
            seat = seat.lho
        calls += [(seat, contract), (seat.lho, "Pass"), (seat.lho.lho, "Pass"),
                  (seat.lho.lho.lho, "Pass")]
        for n, (s, c) in enumerate(calls, 1):
            lines.append({"topic": f"bridge/{table}/feed", "payload": {
                "v": 1, "table": table, "board": board, "n": n, "kind": "call", "seat": str(s),
                "call": c}})
        lines.append({"topic": f"bridge/{table}/result", "payload": {
            "v": 1, "table": table, "board": board, "dealer": str(dealer), "vul": "None",
            "contract": contract, "declarer": declarer, "tricks": tricks,
            "tricks_played": tricks, "score_ns": score, "irregularities": []}})
    published = tmp_path / "published.jsonl"
    published.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(published), "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    stem = "teams-2026-12-01-1"
    # team 1 sits NS at table 1 and EW at table 2
    imps_1 = [imp(played[("1", b)][3] - played[("2", b)][3]) for b in (1, 2, 3)]
    won, lost = sum(i for i in imps_1 if i > 0), -sum(i for i in imps_1 if i < 0)
    with open(out / f"{stem}-ranking.csv", encoding="utf-8") as fp:
        ranking = {int(r["team"]): r for r in csv.DictReader(fp)}
    assert int(ranking[1]["imps"]) == won - lost and int(ranking[2]["imps"]) == lost - won
    assert float(ranking[1]["vp"]) == vp_by_hand(won - lost, 3)
    assert float(ranking[2]["vp"]) == pytest.approx(20 - vp_by_hand(won - lost, 3))
    assert won - lost == -5                     # +6, -11, 0: team 2 wins
    assert ranking[1]["names"] == "Sharks" and (ranking[1]["rank"], ranking[2]["rank"]) == (
        "2", "1")
    text = (out / f"{stem}.pbn").read_text(encoding="utf-8")
    assert text.count("[ScoreTable ") == 3 and "IMP_NS" in text and "TotalScoreVP" in text
    records = {(r.table, r.board): r for r in read_pbn(text).records()}
    assert records[("1", 1)].tags["North"] == "A" and records[("2", 1)].tags["East"] == "C"
    with open(out / f"{stem}.pbn", encoding="utf-8") as fp:
        assert len(ep_pbn.load(fp)) == 6
    # the LIN says the table and the room: the home table is the open room
    lin_text = (out / f"{stem}.lin").read_text(encoding="utf-8")
    assert "qx|o1|" in lin_text and "qx|c1|" in lin_text and "st|Table 2|" in lin_text
    lin = {(r.table, r.board): r for r in read_lin(lin_text).records}
    assert set(lin) == set(played)
    assert {t: lin[(t, 1)].tags["Room"] for t in ("1", "2")} == {"1": "Open", "2": "Closed"}
    ep_boards = ep_lin.loads(lin_text)
    assert [b.board_num for b in ep_boards] == [1, 1, 2, 2, 3, 3]


def test_the_score_table_shows_adjustments_as_adjustments(tmp_path: Path) -> None:
    """A split score keeps both halves, an assigned or artificial score is not shown with
    the table's contract, and a board every table of which was adjusted (no record
    played) still has its game and ScoreTable."""
    session = tmp_path / "s.toml"
    session.write_text('[session]\nevent = "Adj"\ndate = 2026-12-01\n[movement]\n'
                       'type = "mitchell"\ntables = 3\nboards_per_round = 1\n'
                       '[[adjustment]]\ntable = "1"\nboard = 1\nsplit = [620, 650]\n'
                       '[[adjustment]]\ntable = "2"\nboard = 1\nscore_ns = -100\n'
                       '[[adjustment]]\ntable = "3"\nboard = 1\nns = "55%"\new = "45%"\n'
                       '[[adjustment]]\ntable = "1"\nboard = 2\nns = "A+"\new = "A-"\n'
                       '[[adjustment]]\ntable = "2"\nboard = 2\nns = "A="\n')
    lines = [{"topic": f"bridge/{t}/result", "payload": {
        "v": 1, "table": t, "board": 1, "dealer": "N", "vul": "None", "contract": "4S",
        "declarer": "N", "tricks": 10, "tricks_played": 10, "score_ns": 420,
        "irregularities": []}} for t in ("1", "2", "3")]
    lines.append({"topic": "bridge/3/result", "payload": {
        "v": 1, "table": "3", "board": 2, "dealer": "E", "vul": "NS", "contract": "3NT",
        "declarer": "S", "tricks": 9, "tricks_played": 9, "score_ns": 600,
        "irregularities": []}})
    published = tmp_path / "published.jsonl"
    published.write_text("".join(json.dumps(line) + "\n" for line in lines))
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(published), "--out", str(out), "--format",
                           "pbn,csv"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = (out / "adj-2026-12-01-1.pbn").read_text(encoding="utf-8").replace("\r\n", "\n")
    tables: dict[int, dict[str, list[str]]] = {}
    for game in text.split("\n\n"):
        m = re.search(r'\[Board "(\d+)"\]', game)
        if m and "[ScoreTable" in game:
            rows = game.split("[ScoreTable", 1)[1].split("]\n", 1)[1].splitlines()
            end = next((i for i, r in enumerate(rows) if r.startswith("[")), len(rows))
            tables[int(m.group(1))] = {r.split()[0]: r.split() for r in rows[:end]}
    # Table Round PairId_NS PairId_EW Contract Declarer Result Score_NS Score_EW MP_NS ...
    b1 = tables[1]
    assert b1["1"][4:9] == ["-", "-", "-", "620", "-650"]      # both halves of the split
    assert b1["2"][4:9] == ["-", "-", "-", "-", "100"]         # the assigned score
    assert b1["3"][4:9] == ["-", "-", "-", "55%", "45%"]       # the artificial one
    # NS at table 1 compared with +620 against -100 (top 4: Neuberg 2 results of 3):
    # (2 + 1) * 3 / 2 - 1 = 3.5; EW at table 1 with +650 against -100: 0.5
    assert (b1["1"][9], b1["1"][10]) == ("3.5", "0.5")
    # board 2: tables 1 and 2 adjusted; table 3's result is the only real one
    assert set(tables[2]) == {"1", "2", "3"} and tables[2]["3"][4] == "3NT"
    assert tables[2]["1"][7:9] == ["A+", "A-"] and tables[2]["2"][7:9] == ["A=", "A="]


def test_a_board_without_a_played_record_gets_its_score_table(tmp_path: Path) -> None:
    session = tmp_path / "s.toml"
    session.write_text('[session]\nevent = "Adj"\ndate = 2026-12-01\n[movement]\n'
                       'type = "mitchell"\ntables = 3\nboards_per_round = 1\n'
                       '[[adjustment]]\ntable = "2"\nboard = 3\nns = "A+"\n')
    published = tmp_path / "published.jsonl"
    published.write_text(json.dumps({"topic": "bridge/1/result", "payload": {
        "v": 1, "table": "1", "board": 1, "dealer": "N", "vul": "None", "contract": "4S",
        "declarer": "N", "tricks": 10, "tricks_played": 10, "score_ns": 420,
        "irregularities": []}}) + "\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(published), "--out", str(out), "--format", "pbn"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = (out / "adj-2026-12-01-1.pbn").read_text(encoding="utf-8")
    game3 = text[text.index('[Board "3"]'):]
    assert "[ScoreTable" in game3 and '[Dealer "S"]' in game3     # board 3: dealer S
    with open(out / "adj-2026-12-01-1.pbn", encoding="utf-8") as fp:
        assert [b.board_num for b in ep_pbn.load(fp)] == [1, 3]


def test_replay_with_the_session_names_the_pairs_then_export(tmp_path: Path) -> None:
    """The command-line path: sensor events -> ``bridge-table replay --session`` -> export."""
    (tmp_path / "deals.pbn").write_text("".join(
        f'[Board "{b}"]\n[Deal "{_deal_from_dealer(b)}"]\n\n' for b in (9, 10, 11)))
    session = tmp_path / "session.toml"
    session.write_text(SESSION)
    events = tmp_path / "events.jsonl"
    with open(events, "w", encoding="utf-8") as fp:
        for table in TABLES:
            writer = EventWriter(f"table-{table}-pi")
            board = 9 + (int(table) - 1) % 3          # round 1
            for ev in writer.board(clean_board(board)):
                fp.write(json.dumps({"topic": f"bridge/{table}/event", "payload": ev}) + "\n")
    replay = subprocess.run([sys.executable, "-m", "controller.cli", "replay", str(events),
                             "--session", str(session)], capture_output=True, text=True,
                            timeout=120)
    assert replay.returncode == 0, replay.stderr
    published = tmp_path / "published.jsonl"
    published.write_text(replay.stdout)
    results = last_results([json.loads(line) for line in replay.stdout.splitlines()])
    # round 1: NS pair t and EW pair 3 + t at table t
    assert {k: (r["ns"], r["ew"]) for k, r in results.items()} == {
        ("1", 9): (1, 4), ("2", 10): (2, 5), ("3", 11): (3, 6)}
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "export", str(session),
                           "--results", str(published), "--out", str(out), "--format", "pbn"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    records = read_pbn((out / "club-pairs-2026-11-30-1.pbn").read_text()).records()
    assert sorted((r.table, r.board, r.tricks_result) for r in records) == sorted(
        (t, b, r["tricks"]) for (t, b), r in results.items())
    bad = subprocess.run([sys.executable, "-m", "controller.cli", "replay", str(events),
                          "--session", str(events)], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_ctrl_c_during_an_export_ends_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    from controller.session import cli_export, export

    def interrupted(*_: object) -> None:
        raise KeyboardInterrupt

    session = tmp_path / "s.toml"
    session.write_text(SESSION.replace('deals = "deals.pbn"\n', ""))
    (tmp_path / "r.jsonl").write_text(
        '{"topic": "bridge/2/result", "payload": {"table": "2", "board": 1, "contract": "", '
        '"declarer": null, "tricks": null, "score_ns": 0, "dealer": "N", "vul": "None"}}\n')
    monkeypatch.setattr(export, "build_records", interrupted)
    assert cli_export.main([str(session), "--results", str(tmp_path / "r.jsonl"), "--out",
                        str(tmp_path / "o")]) == 130
    assert "interrupted" in capsys.readouterr().err
