"""USEBIO 1.2: the session's results as XML for the scoring and master-point programs of
the EBU and other bridge organisations.

The file declares the DTD by its public identifier, ``-//EBU//DTD USEBIO 1.2//EN``
(system identifier ``http://www.usebio.org/files/usebio_v1_2.dtd``). Neither the DTD
nor the specification's text could be read where this was written; the elements, their
nesting and order follow two published implementations (docs/session.md names them and
what was checked): the PyPI package ``scorer-to-usebio`` 0.3, which writes USEBIO 1.2
with that public identifier, and is used by tests/test_session_usebio.py as a second
reference on the same session; and the element names public USEBIO readers look for.

Pairs (``EVENT_TYPE="PAIRS"``)::

    USEBIO Version="1.2"
      CLUB: CLUB_NAME, CLUB_ID_NUMBER
      EVENT EVENT_TYPE="PAIRS": PROGRAM_NAME, PROGRAM_VERSION, EVENT_DESCRIPTION, DATE
        (dd/mm/yyyy), EVENT_IDENTIFIER, WINNER_TYPE (1 or 2 fields), BOARD_SCORING_METHOD
        (MATCH_POINTS or CROSS_IMPS), BOARDS_PLAYED, MPS_AWARDED_FLAG (N),
        PARTICIPANTS: PAIR*: PAIR_NUMBER, DIRECTION (NS/EW, two fields only),
          BOARDS_PLAYED, PLAYER* (PLAYER_NAME), PLACE ("2=" for a tie), TOTAL_SCORE,
          PERCENTAGE (matchpoints)
        BOARD*: BOARD_NUMBER, TRAVELLER_LINE*: NS_PAIR_NUMBER, EW_PAIR_NUMBER, CONTRACT
          ("4HX", "PASS"), PLAYED_BY, TRICKS, SCORE, NS_MATCH_POINTS, EW_MATCH_POINTS

A traveller line of a director's adjustment: no CONTRACT or PLAYED_BY, TRICKS 0; SCORE an
artificial score as ``A`` and the two percentages (``A6040``, scorer-to-usebio's form) or
the assigned score (a split score: NS's; each side's matchpoints are its own); a weighted
score (Law 12C1(c)) the weighted mean of its scores, its matchpoints those of each score
weighted (no USEBIO form for the parts of a weighted score was found to compare with).

Teams (``EVENT_TYPE="TEAMS"``, ``BOARD_SCORING_METHOD`` IMPS): PARTICIPANTS: TEAM* (TEAM_ID
and TEAM_NAME attributes; PLAYER*, PLACE, TOTAL_SCORE the VPs or, without a VP scale, the
net IMPs); then a MATCH per match: ROUND_NUMBER, TEAM, OPPOSING_TEAM, TEAM_SCORE,
OPPOSING_TEAM_SCORE (the IMPs each won), and its BOARDs with a TRAVELLER_LINE per table.
"""

from __future__ import annotations

import datetime as dt
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from typing import IO

from controller.session.scoring import BoardScore, MatchScore, Standing, TeamTotal
from controller.session.sessionfile import Session

__all__ = ["PUBLIC_ID", "SYSTEM_ID", "write_usebio", "usebio_tree"]

PUBLIC_ID = "-//EBU//DTD USEBIO 1.2//EN"
SYSTEM_ID = "http://www.usebio.org/files/usebio_v1_2.dtd"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("bridge-table")
    except PackageNotFoundError:
        return "0"


def _el(parent: ET.Element, name: str, value: object = None) -> ET.Element:
    e = ET.SubElement(parent, name)
    if value is not None:
        e.text = str(value)
    return e


def _num(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


def _date(text: str) -> str:
    try:
        return dt.date.fromisoformat(text[:10]).strftime("%d/%m/%Y")
    except ValueError:
        return text


def _place(rank: str) -> str:
    return rank


def _traveller(board: ET.Element, s: BoardScore, session: Session) -> None:
    line = _el(board, "TRAVELLER_LINE")
    _el(line, "NS_PAIR_NUMBER", s.ns if s.ns is not None else "")
    _el(line, "EW_PAIR_NUMBER", s.ew if s.ew is not None else "")
    adj, r = s.adjustment, s.result
    # TRICKS is always written (0 without a contract played), as the reference does
    if adj is not None and adj.ns is not None:
        from controller.session.scoring import artificial_percent
        pn = artificial_percent(adj.ns, session.artificial)
        pe = artificial_percent(adj.ew or adj.ns, session.artificial)
        _el(line, "TRICKS", 0)
        _el(line, "SCORE", f"A{_num(pn)}{_num(pe)}")
    elif adj is not None and adj.weighted is not None:
        # Law 12C1(c): the weighted mean of its scores (the matchpoints are of each score)
        _el(line, "TRICKS", 0)
        _el(line, "SCORE", _num(round(sum(p.weight * p.score_ns for p in adj.weighted)
                                      / 100, 2)))
    elif adj is not None and (adj.split is not None or adj.score_ns is not None):
        _el(line, "TRICKS", 0)
        _el(line, "SCORE", adj.split[0] if adj.split is not None else adj.score_ns)
    elif r is not None:
        passed = r.contract.lower() == "pass"
        if r.contract:
            _el(line, "CONTRACT", "PASS" if passed else r.contract)
            if not passed and r.declarer:
                _el(line, "PLAYED_BY", r.declarer)
        _el(line, "TRICKS", r.tricks if r.tricks is not None and not passed else 0)
        _el(line, "SCORE", r.score_ns)
    _el(line, "NS_MATCH_POINTS", _num(s.ns_points))
    _el(line, "EW_MATCH_POINTS", _num(s.ew_points))


def _boards(parent: ET.Element, rows: Sequence[BoardScore], session: Session) -> None:
    by_board: dict[int, list[BoardScore]] = {}
    for s in rows:
        by_board.setdefault(s.board, []).append(s)
    for number in sorted(by_board):
        board = _el(parent, "BOARD")
        _el(board, "BOARD_NUMBER", number)
        for s in by_board[number]:
            _traveller(board, s, session)


def _players(parent: ET.Element, names: Sequence[str]) -> None:
    for name in names:
        player = _el(parent, "PLAYER")
        _el(player, "PLAYER_NAME", name)


def usebio_tree(session: Session, board_scores: Sequence[BoardScore],
                ranked: Sequence[Standing], totals: Sequence[TeamTotal] = (),
                matches: Sequence[MatchScore] = (),
                club_id: str | None = None) -> ET.ElementTree[ET.Element]:
    """The session's USEBIO 1.2 document (without its DOCTYPE: ``write_usebio``)."""
    root = ET.Element("USEBIO", {"Version": "1.2"})
    club = _el(root, "CLUB")
    _el(club, "CLUB_NAME", session.venue)
    _el(club, "CLUB_ID_NUMBER", club_id if club_id is not None else session.club_id)
    teams = session.is_teams
    event = _el(root, "EVENT")
    event.set("EVENT_TYPE", "TEAMS" if teams else "PAIRS")
    _el(event, "PROGRAM_NAME", "bridge-table")
    _el(event, "PROGRAM_VERSION", _version())
    _el(event, "EVENT_DESCRIPTION", session.event)
    _el(event, "DATE", _date(session.date))
    _el(event, "EVENT_IDENTIFIER", session.id)
    fields = sorted({st.field for st in ranked})
    _el(event, "WINNER_TYPE", 2 if fields == ["EW", "NS"] else 1)
    _el(event, "BOARD_SCORING_METHOD", "IMPS" if teams else
        "MATCH_POINTS" if session.scoring == "matchpoints" else "CROSS_IMPS")
    played = max((st.boards for st in ranked), default=0) if not teams else \
        len({s.board for s in board_scores})
    _el(event, "BOARDS_PLAYED", played)
    _el(event, "MPS_AWARDED_FLAG", "N")
    participants = _el(event, "PARTICIPANTS")
    if teams:
        for t in sorted(totals, key=lambda t: t.team):
            who = session.competitor(t.team)
            team = _el(participants, "TEAM", None)
            team.set("TEAM_ID", str(t.team))
            team.set("TEAM_NAME", who.label)
            _players(team, who.players)
            _el(team, "PLACE", _place(t.rank))
            _el(team, "TOTAL_SCORE", _num(t.vp if session.vp_scale == "wbf" else t.imps))
        rounds: Mapping[tuple[int, int], int] = {}
        rows_by_match: dict[tuple[int, int], list[BoardScore]] = {}
        for s in board_scores:
            if s.ns is None or s.ew is None:
                continue
            key = (min(s.ns, s.ew), max(s.ns, s.ew))
            rows_by_match.setdefault(key, []).append(s)
            rnd = session.movement.round_of(s.table, s.board)
            if rnd is not None:
                rounds = {**rounds, key: rnd}
        for m in matches:
            match = _el(event, "MATCH")
            key = (m.home, m.away)
            _el(match, "ROUND_NUMBER", rounds.get(key, 1))
            _el(match, "TEAM", m.home)
            _el(match, "OPPOSING_TEAM", m.away)
            _el(match, "TEAM_SCORE", _num(m.imps_home))
            _el(match, "OPPOSING_TEAM_SCORE", _num(m.imps_away))
            _boards(match, rows_by_match.get(key, []), session)
        return ET.ElementTree(root)
    for st in sorted(ranked, key=lambda st: (st.field != "NS", st.pair)):
        pair = _el(participants, "PAIR")
        _el(pair, "PAIR_NUMBER", st.pair)
        if len(fields) == 2:
            _el(pair, "DIRECTION", st.field)
        _el(pair, "BOARDS_PLAYED", st.boards)
        _players(pair, session.competitor(st.pair).players)
        _el(pair, "PLACE", _place(st.rank))
        _el(pair, "TOTAL_SCORE", _num(round(st.points, 2)))
        if session.scoring == "matchpoints":
            _el(pair, "PERCENTAGE", f"{st.percent:.2f}")
    _boards(event, board_scores, session)
    return ET.ElementTree(root)


def write_usebio(tree: ET.ElementTree[ET.Element], fp: IO[bytes]) -> None:
    """The document with its XML declaration and DOCTYPE (the DTD's public id)."""
    ET.indent(tree, space=" ")
    fp.write(b'<?xml version="1.0" encoding="UTF-8"?>\n')
    fp.write(f'<!DOCTYPE USEBIO PUBLIC "{PUBLIC_ID}" "{SYSTEM_ID}">\n'.encode())
    tree.write(fp, encoding="utf-8", xml_declaration=False)
    fp.write(b"\n")
