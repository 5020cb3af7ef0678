"""The session's records, from what the controller published (``bridge-table export``:
``cli_export``).

The source is the controller's own output for every table: the JSONL of
``{"topic": ..., "payload": ...}`` lines that ``bridge-table replay`` writes (or a journal
export of the same messages). For each table and board it takes:

- the last retained ``result`` (contract, declarer, tricks after Law 64 and rulings, the
  tricks as played, the score);
- the ``feed`` items, in order: ``call`` and ``card`` as they happened, ``auction`` and
  ``play`` (the whole standing auction or play after a correction) replacing what came
  before, ``board`` starting the board afresh; the feed holds the calls and cards that
  stand, so a cancelled call or a withdrawn card is not in the record (its irregularity is);
- the ``alert`` items (each irregularity's last status), else the result's list;
- the hands from the session's deals file (the feed never carries a hand);
- the director's ``evidence`` (docs/tempo.md, docs/claims.md): the time of every call and
  card with the tempo flags, and a claim's position, checked here double dummy
  (controller/evidence/claims.py). PBN carries them in supplemental tags (PBN 2.1 section 4.9):
  ``TempoTable`` (every call and card: seat, call or trick and card, seconds, flag),
  ``TempoFlag`` (one per flag, a line a director reads) and ``ClaimCheck``; LIN in one
  ``nt|...|`` note at the end of the board's line.

Formats: ``pbn`` (PBN 2.1 export format: one game per table and board, with Event, Site,
Date, Round, the players; each board's first game carries its ``ScoreTable`` and the first
game the ``TotalScoreTable``), ``lin`` (one line a board; a play LIN cannot express, a lead
out of turn, is left out and reported), ``csv`` (the travellers and the ranking).
"""

from __future__ import annotations

import csv
import errno
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from controller.evidence.claims import check_claim
from controller.formats.csvcell import csv_cell
from controller.formats.pbn import record_to_pbn
from controller.laws.cards import (
    Call,
    Card,
    Contract,
    ParseError,
    Seat,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from controller.laws.irregularities import Code, Irregularity, Status
from controller.laws.play import trick_winner
from controller.laws.record import AuctionEntry, BoardRecord, DealInfo, PlayedTrick
from controller.session.movement import table_key
from controller.session.scoring import (
    BoardScore,
    MatchScore,
    Standing,
    TeamTotal,
    score_pairs,
    score_teams,
    standings,
    team_board_scores,
    team_totals,
)
from controller.session.sessionfile import Session, SessionError
from controller.session.table_results import (
    BoardResult,
    SessionScores,
    json_lines,
    load_jsonl,
)

__all__ = ["Published", "read_published", "load_published", "build_records", "write_pbn_session",
           "write_csv_session", "parse_formats", "export", "scores_of"]

FORMATS = ("pbn", "lin", "csv", "usebio")


@dataclass
class Published:
    """What the controller published for one table and board."""

    table: str
    board: int
    result: dict[str, Any] | None = None
    calls: list[tuple[Seat, Call]] = field(default_factory=list)
    cards: list[tuple[Seat, Card]] = field(default_factory=list)
    alerts: dict[int, dict[str, Any]] = field(default_factory=dict)
    evidence: dict[str, Any] | None = None


def _feed(item: Published, payload: Mapping[str, Any]) -> None:
    kind = payload.get("kind")
    if kind == "board":
        item.calls, item.cards = [], []
    elif kind == "call":
        item.calls.append((Seat.parse(payload["seat"]), Call.parse(payload["call"])))
    elif kind == "card":
        item.cards.append((Seat.parse(payload["seat"]), Card.parse(payload["card"])))
    elif kind == "auction":
        item.calls = [(Seat.parse(s), Call.parse(c)) for s, c in payload["calls"]]
    elif kind == "play":
        item.cards = [(Seat.parse(s), Card.parse(c)) for s, c in payload["cards"]]


def read_published(lines: Iterable[str], errors: IO[str] | None = None,
                   source: str = "-") -> dict[tuple[str, int], Published]:
    """Every table and board's published messages; lines that are not usable are reported
    on ``errors`` with their line number and skipped."""
    out: dict[tuple[str, int], Published] = {}
    for lineno, obj in json_lines(lines, errors, source):
        try:
            topic, payload = str(obj["topic"]), obj["payload"]
            kind = topic.rsplit("/", 1)[-1]
            if kind not in ("result", "feed", "alert", "evidence") \
                    or not isinstance(payload, dict):
                continue
            table, board = payload["table"], payload["board"]
            if not isinstance(table, str) or not isinstance(board, int):
                raise ValueError("no table or board")
            item = out.setdefault((table, board), Published(table, board))
            if kind == "result":
                BoardResult.from_payload(payload)           # checks the shape
                item.result = payload
            elif kind == "alert":
                item.alerts[int(payload["id"])] = payload
            elif kind == "evidence":
                item.evidence = payload
            else:
                _feed(item, payload)
        except (ValueError, KeyError, TypeError, ParseError) as exc:
            if errors is not None:
                why = f"no {exc} field" if isinstance(exc, KeyError) else str(exc)
                print(f"{source}:{lineno}: skipped: {why}", file=errors)
    return out


def load_published(path: str, errors: IO[str] | None = None
                   ) -> dict[tuple[str, int], Published]:
    return load_jsonl(path, read_published, errors)


def _irregularity(payload: Mapping[str, Any]) -> Irregularity | None:
    try:
        seat = payload.get("seat")
        card = payload.get("card")
        call = payload.get("call")
        params = payload.get("params") or {}
        return Irregularity(
            int(payload["id"]), Code(payload["code"]), str(payload.get("law", "")),
            Status(payload.get("status", "open")),
            Seat.parse(seat) if isinstance(seat, str) else None,
            payload.get("trick") if isinstance(payload.get("trick"), int) else None,
            Card.parse(card) if isinstance(card, str) else None,
            Call.parse(call) if isinstance(call, str) else None,
            str(payload.get("detail", "")),
            tuple((str(k), v) for k, v in params.items()) if isinstance(params, dict) else ())
    except (KeyError, ValueError, ParseError):
        return None


def _tricks(cards: Sequence[tuple[Seat, Card]], contract: Contract | None
            ) -> tuple[PlayedTrick, ...]:
    """Cards in the order played, four a trick, each trick led by its first card's player
    (so a lead out of turn the Laws let stand is kept as it happened)."""
    trump = contract.bid.denomination.trump if contract is not None and contract.bid else None
    out: list[PlayedTrick] = []
    for start in range(0, len(cards), 4):
        trick = tuple(cards[start:start + 4])
        winner = trick_winner(trick, trump) if len(trick) == 4 else None
        out.append(PlayedTrick(len(out) + 1, trick[0][0], trick, winner))
    return tuple(out)


def _pbn_date(date: str) -> str:
    return date.replace("-", ".") if date else ""


def _session_tags(session: Session) -> dict[str, str]:
    return {"Event": session.event, "Site": session.venue, "Date": _pbn_date(session.date),
            "Scoring": "IMP" if session.is_teams else
            "MatchPoints" if session.scoring == "matchpoints" else "IMP;Cross"}


def _player_tags(session: Session, table: str, board: int) -> dict[str, str]:
    pairs = session.movement.pairs_at(table, board)
    if pairs is None:
        return {}
    tags: dict[str, str] = {}
    for number, seats in zip(pairs, (("North", "South"), ("East", "West")), strict=True):
        who = session.competitor(number)
        names = list(who.players)
        if session.is_teams:        # a team's players: the first two NS, the next two EW
            names = names[:2] if seats[0] == "North" else names[2:4] or names[:2]
        for seat, name in zip(seats, names, strict=False):
            tags[seat] = name
    return tags


def build_records(session: Session, published: Mapping[tuple[str, int], Published],
                  deals: Mapping[int, DealInfo]) -> list[BoardRecord]:
    """A ``BoardRecord`` for every table and board with a result, board by board."""
    records = []
    for (table, board) in sorted(published, key=lambda k: (k[1], table_key(k[0]))):
        item = published[(table, board)]
        res = item.result
        if res is None:
            continue
        try:
            contract = Contract.parse(res["contract"]) if res.get("contract") else None
            declarer = Seat.parse(res["declarer"]) if res.get("declarer") else None
            dealer = Seat.parse(res["dealer"])
            vul = Vulnerability.parse(res["vul"])
        except (KeyError, ParseError):
            continue
        irregularities = [i for i in (map(_irregularity, item.alerts.values())
                                      if item.alerts else
                                      map(_irregularity, res.get("irregularities", [])))
                          if i is not None]
        info = deals.get(board)
        tags = _session_tags(session)
        rnd = session.movement.round_of(table, board)
        if rnd is not None:
            tags["Round"] = str(rnd)
        tags.update(_player_tags(session, table, board))
        pairs = session.movement.pairs_at(table, board)
        if session.is_teams and pairs is not None:
            # the open room: the table where the lower-numbered team of the match sits NS
            # (a teams movement's home table)
            tags["Room"] = "Open" if pairs[0] < pairs[1] else "Closed"
        tags.update(evidence_tags(item.evidence))
        tricks_played = res.get("tricks_played")
        tricks_result = res.get("tricks")
        records.append(BoardRecord(
            board=board, dealer=dealer, vulnerability=vul,
            deal=info.deal if info is not None else None,
            auction=tuple(AuctionEntry(s, c) for s, c in item.calls),
            contract=contract, declarer=declarer, tricks=_tricks(item.cards, contract),
            tricks_played=tricks_played if isinstance(tricks_played, int) else None,
            tricks_result=tricks_result if isinstance(tricks_result, int) else None,
            score_ns=res.get("score_ns"), irregularities=tuple(irregularities),
            table=table, tags=tags))
    return records


def evidence_lines(evidence: Mapping[str, Any] | None) -> tuple[list[str], str | None]:
    """The tempo flags, one line each, and the claim check's line (None without a claim)."""
    if not isinstance(evidence, Mapping):
        return [], None
    tempo = evidence.get("tempo")
    flags = []
    for f in (tempo.get("flags") if isinstance(tempo, Mapping) else None) or []:
        if isinstance(f, Mapping):
            what = f.get("call") or f.get("card")
            where = f" trick {f['trick']}" if f.get("trick") else ""
            usual = f", usual {f['usual']} s" if f.get("usual") is not None else ""
            flags.append(f"{f.get('seat')} {what}{where} {f.get('seconds')} s{usual}: "
                         f"{str(f.get('kind', '')).replace('_', ' ')}, Law {f.get('law')}")
    claim = evidence.get("claim")
    check = check_claim(claim).describe() if isinstance(claim, Mapping) else None
    return flags, check


def evidence_tags(evidence: Mapping[str, Any] | None) -> dict[str, str]:
    """PBN supplemental tags: ``TempoTable`` (every call and card with its seconds and
    flag), ``TempoFlag`` lines, ``ClaimCheck``. Nothing without evidence."""
    if not isinstance(evidence, Mapping) or not isinstance(evidence.get("tempo"), Mapping):
        return {}
    tempo = evidence["tempo"]
    flagged = {(("call" if "call" in f else "card"), f.get("index")): f.get("kind")
               for f in tempo.get("flags") or [] if isinstance(f, Mapping)}
    rows = []
    for i, row in enumerate(tempo.get("calls") or []):
        if isinstance(row, list) and len(row) == 3:
            seat, call, sec = row
            rows.append(" ".join(_cell(x) for x in (
                seat, call, "-", "-", "-" if sec is None else sec,
                flagged.get(("call", i), "-"))))
    for i, row in enumerate(tempo.get("cards") or []):
        if isinstance(row, list) and len(row) == 4:
            seat, card, trick, sec = row
            rows.append(" ".join(_cell(x) for x in (
                seat, "-", trick, card, "-" if sec is None else sec,
                flagged.get(("card", i), "-"))))
    tags: dict[str, str] = {}
    if rows:
        tags["TempoTable"] = "\n".join(["Seat;Call;Trick;Card;Seconds;Flag", *rows])
    flags, check = evidence_lines(evidence)
    # one tag per flag would repeat a name; the flags go in one tag, "; " between them
    if flags:
        tags["TempoFlag"] = "; ".join(flags)
    if check is not None:
        tags["ClaimCheck"] = check
    return tags


def _lin_note(record: BoardRecord) -> str | None:
    """The LIN ``nt`` note of a board: its tempo flags and claim check."""
    parts = []
    if record.tags.get("TempoFlag"):
        parts.append("Tempo: " + record.tags["TempoFlag"])
    if record.tags.get("ClaimCheck"):
        parts.append(record.tags["ClaimCheck"][0].upper() + record.tags["ClaimCheck"][1:])
    return " | ".join(parts) or None


def scores_of(published: Mapping[tuple[str, int], Published]) -> SessionScores:
    scores = SessionScores()
    for item in published.values():
        if item.result is not None:
            scores.add(BoardResult.from_payload(item.result))
    return scores


# -- PBN ---------------------------------------------------------------------------------------
def _cell(value: object) -> str:
    text = str(value)
    return f'"{text}"' if (" " in text or not text) else text


def _fmt(points: float) -> str:
    return f"{points:.2f}".rstrip("0").rstrip(".")


def _score_cells(s: BoardScore) -> tuple[object, object, object, str, str]:
    """Contract, Declarer, Result, Score_NS, Score_EW of a ScoreTable row. The table's
    result: a positive score in its side's column. A director's adjustment replaces it
    (the contract, declarer and tricks are then "-": they are not what was scored): an
    artificial score as "A+"/"A-" or "55%"/"45%"; a split score both halves, Score_NS NS's
    score from NS's side, Score_EW EW's from EW's side; a weighted score each weight and
    score (Score_NS ``50%+620/50%-100``, Score_EW the same from EW's side); an assigned
    score as a result."""
    r, adj = s.result, s.adjustment
    if adj is not None and adj.ns is not None:
        return "-", "-", "-", adj.ns, adj.ew or adj.ns
    if adj is not None and adj.weighted is not None:
        # Law 12C1(c): each weight and its score, Score_EW from EW's side (50%+620/50%-100)
        return "-", "-", "-", "/".join(p.shown for p in adj.weighted), "/".join(
            f"{p.weight:g}%{-p.score_ns:+d}" for p in adj.weighted)
    if adj is not None and adj.split is not None:
        return "-", "-", "-", str(adj.split[0]), str(-adj.split[1])
    contract: object = "-"
    declarer: object = "-"
    tricks: object = "-"
    if adj is not None and adj.score_ns is not None:
        value: int | None = adj.score_ns
    elif r is not None:
        value = r.score_ns
        contract, declarer = r.contract or "-", r.declarer or "-"
        tricks = r.tricks if r.tricks is not None else "-"
    else:
        return "-", "-", "-", "-", "-"
    assert value is not None
    ns, ew = (str(value), "-") if value > 0 else ("-", str(-value)) if value < 0 else ("0", "0")
    return contract, declarer, tricks, ns, ew


def _score_table(rows: Sequence[BoardScore], session: Session) -> list[str]:
    """PBN 2.1 ScoreTable (section 5): one row for each table that scored the board, in
    matchpoints (MP_, Percentage_) or, for teams and cross-IMPs, IMPs (IMP_)."""
    mp = not session.is_teams and session.scoring == "matchpoints"
    points = ("MP_NS\\5R;MP_EW\\5R;Percentage_NS\\3R;Percentage_EW\\3R" if mp
              else "IMP_NS\\5R;IMP_EW\\5R")
    out = ['[ScoreTable "Table\\2R;Round\\2R;PairId_NS\\2R;PairId_EW\\2R;Contract\\5L;'
           'Declarer\\1R;Result\\2R;Score_NS\\6R;Score_EW\\6R;' + points + '"]']
    for s in rows:
        contract, declarer, tricks, score_ns, score_ew = _score_cells(s)
        rnd = session.movement.round_of(s.table, s.board)
        cells: list[object] = [s.table, rnd if rnd is not None else "-", s.ns or "-",
                               s.ew or "-", contract, declarer, tricks, score_ns, score_ew,
                               _fmt(s.ns_points), _fmt(s.ew_points)]
        if mp:
            cells += [str(round(100 * s.ns_points / s.top)) if s.top else "-",
                      str(round(100 * s.ew_points / s.top)) if s.top else "-"]
        out.append(" ".join(_cell(v) for v in cells))
    return out


def _total_table(ranked: Sequence[Standing], session: Session) -> list[str]:
    out = ['[TotalScoreTable "Rank\\3R;PairId\\3R;Direction\\2L;TotalScoreMP\\7R;'
           'TotalPercentage\\6R;NrBoards\\2R;Names\\40L"]']
    if session.scoring != "matchpoints":
        out = ['[TotalScoreTable "Rank\\3R;PairId\\3R;Direction\\2L;TotalScoreIMP\\7R;'
               'NrBoards\\2R;Names\\40L"]']
    for st in ranked:
        cells: list[object] = [st.rank, st.pair, st.field or "-", _fmt(st.points)]
        if session.scoring == "matchpoints":
            cells.append(f"{st.percent:.2f}")
        out.append(" ".join(_cell(v) for v in (
            *cells, st.boards, session.competitor(st.pair).label)))
    return out


def _team_total_table(totals: Sequence[TeamTotal], session: Session) -> list[str]:
    out = ['[TotalScoreTable "Rank\\3R;TeamId\\3R;TotalScoreIMP\\5R;TotalScoreVP\\6R;'
           'Names\\40L"]']
    for t in totals:
        out.append(" ".join(_cell(v) for v in (t.rank, t.team, _fmt(t.imps), f"{t.vp:.2f}",
                                               session.competitor(t.team).label)))
    return out


def _scored_only(records: Sequence[BoardRecord], board_tables: Mapping[int, list[str]],
                 session: Session | None, deals: Mapping[int, DealInfo]) -> list[BoardRecord]:
    """The records, with a game for each board that has a ScoreTable but no played record
    (every table's score an adjustment, or no result published), in board order: its
    ScoreTable needs a game to follow."""
    have = {r.board for r in records}
    extra = []
    for board in sorted(set(board_tables) - have):
        info = deals.get(board)
        tags = dict(records[0].tags) if records else {}
        tags = {k: v for k, v in tags.items() if k in ("Event", "Site", "Date", "Scoring")}
        if session is not None and not tags:
            tags = _session_tags(session)
        extra.append(BoardRecord(
            board=board, dealer=info.dealer if info is not None else board_dealer(board),
            vulnerability=info.vulnerability if info is not None
            else board_vulnerability(board),
            deal=info.deal if info is not None else None, tags=tags))
    return sorted([*records, *extra], key=lambda r: r.board)


def write_pbn_session(records: Sequence[BoardRecord], board_tables: Mapping[int, list[str]],
                      total_table: Sequence[str], fp: IO[str]) -> None:
    """The records, each board's first game followed by its ScoreTable, the first game by
    the TotalScoreTable."""
    fp.write("% PBN 2.1\n% EXPORT\n")
    seen: set[int] = set()
    for i, record in enumerate(records):
        fp.write("\n")
        fp.write(record_to_pbn(record))
        if record.board not in seen:
            seen.add(record.board)
            if board_tables.get(record.board):
                fp.write("\n".join(board_tables[record.board]) + "\n")
        if i == 0 and total_table:
            fp.write("\n".join(total_table) + "\n")


# -- CSV ---------------------------------------------------------------------------------------
def write_csv_session(session: Session, records: Sequence[BoardRecord],
                      board_scores: Sequence[BoardScore], ranked: Sequence[Standing],
                      totals: Sequence[TeamTotal], travellers: IO[str], ranking: IO[str]
                      ) -> None:
    """The travellers (points: matchpoints, or IMPs for teams and cross-IMPs) and the
    ranking (pairs, or teams with net IMPs and VPs)."""
    by_key = {(r.table, r.board): r for r in records}
    w = csv.writer(travellers, lineterminator="\n")
    w.writerow(["session", "board", "table", "round", "ns", "ew", "ns_names", "ew_names",
                "contract", "declarer", "tricks", "tricks_played", "score_ns", "scored",
                "points_ns", "points_ew", "top", "irregularities"])
    for s in board_scores:
        rec = by_key.get((s.table, s.board))
        rnd = session.movement.round_of(s.table, s.board)
        w.writerow([
            csv_cell(session.id), s.board, s.table, rnd or "", s.ns or "", s.ew or "",
            csv_cell(session.competitor(s.ns).label) if s.ns else "",
            csv_cell(session.competitor(s.ew).label) if s.ew else "",
            rec.contract if rec is not None and rec.contract is not None else "",
            rec.declarer.name if rec is not None and rec.declarer is not None else "",
            rec.tricks_result if rec is not None and rec.tricks_result is not None else "",
            rec.tricks_played if rec is not None and rec.tricks_played is not None else "",
            rec.score_ns if rec is not None and rec.score_ns is not None else "",
            s.shown, _fmt(s.ns_points), _fmt(s.ew_points), _fmt(s.top),
            " ".join(f"{i.code.value}:{i.status.value}" for i in rec.irregularities)
            if rec is not None else ""])
    w = csv.writer(ranking, lineterminator="\n")
    if session.is_teams:
        w.writerow(["session", "rank", "team", "names", "imps", "vp", "matches"])
        for t in totals:
            w.writerow([csv_cell(session.id), t.rank, t.team,
                        csv_cell(session.competitor(t.team).label),
                        _fmt(t.imps), f"{t.vp:.2f}", t.matches])
        return
    w.writerow(["session", "rank", "pair", "field", "names", "points", "top", "percent",
                "boards"])
    for st in ranked:
        w.writerow([csv_cell(session.id), st.rank, st.pair, st.field,
                    csv_cell(session.competitor(st.pair).label),
                    _fmt(st.points), _fmt(st.top),
                    f"{st.percent:.2f}" if session.scoring == "matchpoints" else "", st.boards])


# -- the command -------------------------------------------------------------------------------
def parse_formats(text: str) -> list[str]:
    """``--format pbn,csv``: the formats asked for, each known (else ValueError)."""
    wanted = [f.strip().lower() for f in text.split(",") if f.strip()]
    bad = [f for f in wanted if f not in FORMATS]
    if bad or not wanted:
        raise ValueError(f"--format: {', '.join(bad) or 'nothing'}: choose from "
                         f"{', '.join(FORMATS)}")
    return wanted


def export(session: Session, published: Mapping[tuple[str, int], Published], out: Path,
           formats: Sequence[str], errors: IO[str]) -> list[Path]:
    from controller.boards.deals import DealsError, read_deals
    from controller.formats.lin import write_lin

    deals: dict[int, DealInfo] = {}
    if session.deals is not None:
        try:
            read = read_deals(session.deals, session.deals_first_board)
        except DealsError as exc:
            raise SessionError(str(exc)) from None
        deals = read.deals
        for problem in read.problems:
            print(f"{session.deals}: {problem}", file=errors)
    records = build_records(session, published, deals)
    scores = scores_of(published)
    totals: list[TeamTotal] = []
    ranked: list[Standing] = []
    matches: list[MatchScore] = []
    if session.is_teams:
        per_board, matches = score_teams(session, scores)
        board_scores = team_board_scores(per_board, scores, session)
        totals = team_totals(matches, session.vp_scale == "wbf")
        total_table = _team_total_table(totals, session)
    else:
        board_scores = score_pairs(session, scores)
        ranked = standings(board_scores, session.scoring)
        total_table = _total_table(ranked, session)
    by_board: dict[int, list[BoardScore]] = {}
    for row in board_scores:
        by_board.setdefault(row.board, []).append(row)
    board_tables = {b: _score_table(rows, session) for b, rows in by_board.items()}
    if out.exists() and not out.is_dir():
        # mkdir's own word for it is "File exists", which reads as a refusal to overwrite
        raise NotADirectoryError(errno.ENOTDIR, "a file, not a directory: --out names the "
                                 "directory the records are written into", str(out))
    out.mkdir(parents=True, exist_ok=True)
    written = []
    stem = session.id
    if "pbn" in formats:
        path = out / f"{stem}.pbn"
        with open(path, "w", encoding="utf-8", newline="\r\n") as fp:
            write_pbn_session(_scored_only(records, board_tables, session, deals),
                              board_tables, total_table, fp)
        written.append(path)
    if "lin" in formats:
        path = out / f"{stem}.lin"
        with open(path, "w", encoding="utf-8") as fp:
            for skipped in write_lin(records, fp, notes=_lin_note):
                print(f"{path}: board {skipped.board}: left out: {skipped.message}",
                      file=errors)
        written.append(path)
    if "csv" in formats:
        path, rank_path = out / f"{stem}.csv", out / f"{stem}-ranking.csv"
        with open(path, "w", encoding="utf-8", newline="") as a, \
                open(rank_path, "w", encoding="utf-8", newline="") as b:
            write_csv_session(session, records, board_scores, ranked, totals, a, b)
        written += [path, rank_path]
    if "usebio" in formats:
        from controller.session.usebio import usebio_tree, write_usebio
        path = out / f"{stem}.xml"
        with open(path, "wb") as fx:
            write_usebio(usebio_tree(session, board_scores, ranked, totals, matches), fx)
        written.append(path)
    return written
