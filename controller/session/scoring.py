"""Scoring a session (Law 78 and the common regulations), from the tables' results.

Pairs, matchpoints (Law 78A): each board's real results are matchpointed against each
other, 2 for each score beaten and 1 for each tie, then scaled by Neuberg's formula to the
number of tables the movement gives the board (a result missing or replaced by an
artificial score does not shrink the others' top). An artificial adjusted score (Law 12C1:
A+/A=/A-, 60/50/40 % by default, any percentage the session file names) is that
percentage of the full top. A split score (Law 12C1(e)) compares each side's own score
with the field: NS's matchpoints come from the NS scores, EW's from the scores given to EW.

Pairs, cross-IMPs (``scoring.method = "cross-imps"``): each result against every other real
result on the board, IMPs (Law 78B) averaged per comparison; an artificial score is +3, 0 or
-3 IMPs for 60, 50 and 40 % (Law 86A), linear in between.

Pair totals add up what each pair got wherever the movement seated it; percentages are of
the tops of the boards it scored. A Mitchell whose pairs never change direction has two
fields (NS and EW), ranked apart; otherwise (Howell, arrow-switch) one field.

Teams (Law 78B): IMPs per board between the two tables of a match, match totals, and the
WBF continuous victory-point scale (2013): for a margin of M IMPs in a match of N boards,
the winner's VP = 10 + 10 * (1 - t^(3M/B)) / (1 - t^3), with t = (sqrt(5) - 1) / 2 and
B = 15 * sqrt(N), at most 20, to two decimals; the loser gets 20 minus the winner's.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from controller.laws.scoring import imps, matchpoints, matchpoints_ew, neuberg
from controller.session.movement import table_key
from controller.session.sessionfile import DEFAULT_ARTIFICIAL, Adjustment, Session
from controller.session.table_results import BoardResult, SessionScores

__all__ = ["BoardScore", "Standing", "BoardImps", "MatchScore", "TeamTotal", "score_pairs",
           "standings", "score_teams", "team_board_scores", "team_totals", "wbf_vp",
           "artificial_percent", "rank_labels", "wbf_vp_table", "stray_results",
           "shown_score"]


@dataclass(frozen=True, slots=True)
class BoardScore:
    """One table's board as scored: matchpoints (or cross-IMPs) to each side."""

    table: str
    board: int
    ns: int | None          # pair numbers from the movement, None without one
    ew: int | None
    shown: str              # the score as a scorer shows it: "+620", "A+/A-", "620/650"
    ns_points: float
    ew_points: float
    top: float              # matchpoints: the board's top; cross-IMPs: 0
    result: BoardResult | None = None
    #: the director's score that replaced the table's result (docs/session.md), if any
    adjustment: Adjustment | None = None


@dataclass(frozen=True, slots=True)
class Standing:
    pair: int
    field: str              # "NS", "EW" or "" (one field)
    points: float
    top: float              # the sum of the tops of the boards the pair scored
    boards: int
    rank: str = ""          # "1", "2=" ...

    @property
    def percent(self) -> float:
        return 100.0 * self.points / self.top if self.top else 50.0


def artificial_percent(kind: str, artificial: Mapping[str, float]) -> float:
    if kind.endswith("%"):
        return float(kind[:-1])
    return artificial[kind]


def artificial_imps(percent: float) -> float:
    """Law 86A: an artificial score in IMPs, +3 for average-plus (60 %), linear through 0."""
    return (percent - 50) * 3 / 10


def _entries(session: Session | None, scores: SessionScores, board: int
             ) -> tuple[list[str], dict[str, BoardResult], dict[str, Adjustment]]:
    results = {r.table: r for r in scores.results(board)}
    adjustments = {a.table: a for a in (session.adjustments if session else ())
                   if a.board == board}
    if session is not None and session.movement.rounds:
        tables = sorted(session.movement.tables_playing(board) | set(adjustments),
                        key=table_key)
    else:
        tables = sorted(set(results) | set(adjustments), key=table_key)
    return tables, results, adjustments


def stray_results(session: Session, scores: SessionScores) -> list[BoardResult]:
    """Results from a table the movement does not give that board: not scored (the
    movement's field would change), reported by ``score``, ``export`` and ``results``."""
    if not session.movement.rounds:
        return []
    return [r for b in scores.boards for r in scores.results(b)
            if session.movement.round_of(r.table, r.board) is None]


def shown_score(result: BoardResult | None, adj: Adjustment | None) -> str:
    """The score as a scorer shows it: "+620", an artificial "A+/A-" or "55%/45%", a
    split "+620/+650" (both from NS's side), "-" for no score."""
    if adj is not None:
        if adj.weighted is not None:
            return "/".join(p.shown for p in adj.weighted)
        if adj.split is not None:
            return f"{adj.split[0]:+d}/{adj.split[1]:+d}"
        if adj.score_ns is not None:
            return f"{adj.score_ns:+d}"
        if adj.ns is not None:
            return f"{adj.ns}/{adj.ew or adj.ns}"
    return f"{result.score_ns:+d}" if result is not None else "-"


#: a side's score as weighted results: (weight, a fraction of 1; the score from NS's side)
Weighted = tuple[tuple[float, int], ...]


def _weighted_sides(result: BoardResult | None, adj: Adjustment | None
                    ) -> tuple[Weighted, Weighted, str] | None:
    """``_sides`` as weighted results: a weighted score (Law 12C1(c)) its results and
    their weights, any other real score itself with weight 1."""
    if adj is not None and adj.weighted is not None:
        parts = tuple((p.weight / 100, p.score_ns) for p in adj.weighted)
        return parts, parts, shown_score(result, adj)
    sides = _sides(result, adj)
    if sides is None:
        return None
    return ((1.0, sides[0]),), ((1.0, sides[1]),), sides[2]


def _weighted_mp(mine: Weighted, others: Iterable[Weighted], ew: bool) -> float:
    """Matchpoints (2 a score beaten, 1 a tie) of ``mine`` against each of ``others``,
    every pair of their results counted with the product of its weights; ``ew``: the
    lower score from NS's side wins."""
    total = 0.0
    for other in others:
        for wa, a in mine:
            for wb, b in other:
                if a == b:
                    total += wa * wb
                elif (a > b) != ew:
                    total += 2 * wa * wb
    return total


def _weighted_imps(mine: Weighted, other: Weighted) -> float:
    """IMPs of ``mine`` against ``other`` (from NS's side), each pair of their results
    weighted by the product of its weights: a weighted score's IMPs are the weighted sum
    of its results' IMPs."""
    return sum(wa * wb * imps(a - b) for wa, a in mine for wb, b in other)


def _weighted_board(real: Sequence[tuple[str, tuple[Weighted, Weighted, str]]], method: str,
                    full: int) -> list[tuple[str, str, float, float]]:
    """A board with a weighted score (Law 12C1(c)): (table, shown, NS points, EW points)
    for each table with a real score. Matchpoints: each result of a weighted score is
    matchpointed against the field and the table gets their weighted sum; the other
    tables get the weighted share of their comparison with it; Neuberg to the full field
    as on any board. Cross-IMPs: the same, with IMPs averaged per comparison."""
    n = len(real)
    out = []
    for i, (table, (ns_w, ew_w, shown)) in enumerate(real):
        ns_others = [r[1][0] for j, r in enumerate(real) if j != i]
        ew_others = [r[1][1] for j, r in enumerate(real) if j != i]
        if method == "cross-imps":
            ns_p = sum(_weighted_imps(ns_w, o) for o in ns_others) / (n - 1) if n > 1 else 0.0
            ew_p = -sum(_weighted_imps(ew_w, o) for o in ew_others) / (n - 1) \
                if n > 1 else 0.0
        else:
            ns_p = _weighted_mp(ns_w, ns_others, ew=False)
            ew_p = _weighted_mp(ew_w, ew_others, ew=True)
            if n < full:
                ns_p, ew_p = neuberg(ns_p, n, full), neuberg(ew_p, n, full)
        out.append((table, shown, ns_p, ew_p))
    return out


def _sides(result: BoardResult | None, adj: Adjustment | None) -> tuple[int, int, str] | None:
    """The real scores NS and EW are compared with (from NS's side), or None if the table
    has no real score (missing, or artificial)."""
    if adj is not None:
        if adj.split is not None:
            return adj.split[0], adj.split[1], f"{adj.split[0]:+d}/{adj.split[1]:+d}"
        if adj.score_ns is not None:
            return adj.score_ns, adj.score_ns, f"{adj.score_ns:+d}"
        return None
    if result is not None:
        return result.score_ns, result.score_ns, f"{result.score_ns:+d}"
    return None


def score_board(session: Session | None, scores: SessionScores, board: int) -> list[BoardScore]:
    """Every table that plays (or got a score on) ``board``, scored; missing tables left
    out."""
    tables, results, adjustments = _entries(session, scores, board)
    method = session.scoring if session is not None else "matchpoints"
    artificial = session.artificial if session is not None else DEFAULT_ARTIFICIAL
    full = len(tables)
    real = [(t, s) for t in tables if (s := _sides(results.get(t), adjustments.get(t)))]
    n = len(real)
    ns_scores = [s[0] for _, s in real]
    ew_scores = [s[1] for _, s in real]
    out: list[BoardScore] = []

    def pairs(table: str) -> tuple[int | None, int | None]:
        got = session.movement.pairs_at(table, board) if session is not None else None
        return got if got is not None else (None, None)

    if any(a.weighted is not None for a in adjustments.values()):
        top = 0.0 if method == "cross-imps" else 2.0 * (full - 1)
        weighted = [(t, w) for t in tables
                    if (w := _weighted_sides(results.get(t), adjustments.get(t)))]
        for table, shown, ns_p, ew_p in _weighted_board(weighted, method, full):
            out.append(BoardScore(table, board, *pairs(table), shown, ns_p, ew_p, top,
                                  results.get(table), adjustments.get(table)))
    elif method == "cross-imps":
        top = 0.0
        for table, (ns_s, ew_s, shown) in real:
            # each result against every other (its own comparison with itself is 0)
            ns_p = sum(imps(ns_s - o) for o in ns_scores) / (n - 1) if n > 1 else 0.0
            ew_p = -sum(imps(ew_s - o) for o in ew_scores) / (n - 1) if n > 1 else 0.0
            out.append(BoardScore(table, board, *pairs(table), shown, ns_p, ew_p, top,
                                  results.get(table), adjustments.get(table)))
    else:
        top = 2.0 * (full - 1)
        mp_ns, mp_ew = matchpoints(ns_scores), matchpoints_ew(ew_scores)
        for i, (table, (_, _, shown)) in enumerate(real):
            a, b = mp_ns[i], mp_ew[i]
            if n < full:            # Law 78A as regulated: Neuberg to the full field
                a, b = neuberg(a, n, full), neuberg(b, n, full)
            out.append(BoardScore(table, board, *pairs(table), shown, a, b, top,
                                  results.get(table), adjustments.get(table)))
    for table in tables:
        adj = adjustments.get(table)
        if adj is None or adj.ns is None:
            continue
        ew_kind = adj.ew or adj.ns
        pn, pe = artificial_percent(adj.ns, artificial), artificial_percent(ew_kind, artificial)
        if method == "cross-imps":
            ns_p, ew_p = artificial_imps(pn), artificial_imps(pe)
        else:
            ns_p, ew_p = top * pn / 100, top * pe / 100
        out.append(BoardScore(table, board, *pairs(table), f"{adj.ns}/{ew_kind}", ns_p, ew_p,
                              top, results.get(table), adj))
    return sorted(out, key=lambda s: table_key(s.table))


def score_pairs(session: Session | None, scores: SessionScores) -> list[BoardScore]:
    boards = set(scores.boards)
    if session is not None:
        boards |= set(session.movement.boards) | {a.board for a in session.adjustments}
    return [s for b in sorted(boards) for s in score_board(session, scores, b)]


def rank_labels(values: Sequence[float]) -> list[str]:
    """Competition ranking, best (highest) first: equal values share a rank, marked "=".
    Values are compared to 1e-9 (matchpoint sums after Neuberg are not exact)."""
    order = sorted(range(len(values)), key=lambda i: -values[i])
    labels = [""] * len(values)
    for pos, i in enumerate(order):
        first = next(p for p in range(pos + 1)
                     if abs(values[order[p]] - values[i]) < 1e-9)
        tied = sum(1 for v in values if abs(v - values[i]) < 1e-9) > 1
        labels[i] = f"{first + 1}{'=' if tied else ''}"
    return labels


def standings(board_scores: Iterable[BoardScore], method: str = "matchpoints"
              ) -> list[Standing]:
    """Pair totals, percentages and ranking in each field (see the module's docstring)."""
    points: dict[int, float] = {}
    tops: dict[int, float] = {}
    count: dict[int, int] = {}
    directions: dict[int, set[str]] = {}
    for s in board_scores:
        for pair, p, side in ((s.ns, s.ns_points, "NS"), (s.ew, s.ew_points, "EW")):
            if pair is None:
                continue
            points[pair] = points.get(pair, 0.0) + p
            tops[pair] = tops.get(pair, 0.0) + s.top
            count[pair] = count.get(pair, 0) + 1
            directions.setdefault(pair, set()).add(side)
    two_fields = all(len(d) == 1 for d in directions.values())
    fields: dict[str, list[int]] = {}
    for pair, d in directions.items():
        fields.setdefault(next(iter(d)) if two_fields else "", []).append(pair)
    out: list[Standing] = []
    for name in sorted(fields, key=lambda f: (f != "NS", f)):      # NS, then EW
        members = sorted(fields[name])
        rows = [Standing(p, name, points[p], tops[p], count[p]) for p in members]
        key = [r.points if method == "cross-imps" else r.percent for r in rows]
        labels = rank_labels(key)
        ranked = sorted(zip(rows, labels, key, strict=True), key=lambda x: (-x[2], x[0].pair))
        out += [Standing(r.pair, r.field, r.points, r.top, r.boards, lab)
                for r, lab, _ in ranked]
    return out


# -- teams ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class BoardImps:
    board: int
    home: int               # the team NS at ``home_table``
    away: int
    home_table: str
    away_table: str
    imps_home: float        # whole IMPs, or a fraction where an artificial score gives one
    imps_away: float


@dataclass(frozen=True, slots=True)
class MatchScore:
    home: int
    away: int
    boards: int
    imps_home: float        # the sum of the boards' IMPs won by each team
    imps_away: float
    vp_home: float
    vp_away: float

    @property
    def margin(self) -> float:
        return self.imps_home - self.imps_away


@functools.lru_cache(maxsize=256)
def wbf_vp_table(boards: int) -> tuple[float, ...]:
    """The winner's VPs for integer margins 0, 1, ... up to the blitz (20.00) on the WBF
    continuous scale (2013): the formula rounded to two decimals, then corrected so that
    each extra IMP is worth no more than the one before (the scale's rule, "each extra IMP
    leads to a non-increasing fractional gain in VPs"; rounding alone breaks it at some
    margins, and the WBF's printed tables are corrected; their correction step was not at
    hand, so this is the project's). The correction is the least one: of the sequences
    whose steps never grow, from 10.00 at 0 to 20.00 at the blitz, the one whose values
    differ least (in hundredths, summed) from the rounded formula (dynamic programming
    over the margins). Over 1-64 boards it moves a value by at most 0.02
    (tests/test_session_scoring.py checks it); the WBF's printed
    tables were not at hand to compare entry by entry."""
    if boards < 1:
        raise ValueError("a match has at least one board")
    tau = (math.sqrt(5) - 1) / 2
    blitz = 15 * math.sqrt(boards)
    # in hundredths of a VP, so the correction is exact
    cents = [2000 if m >= blitz else
             round(100 * (10 + 10 * (1 - tau ** (3 * m / blitz)) / (1 - tau ** 3)))
             for m in range(math.ceil(blitz) + 1)]
    moves = (0, -1, 1, -2, 2)
    # state: (this value's move from the rounded formula, the step that reached it)
    best: dict[tuple[int, int], tuple[int, tuple[int, int] | None]] = {(0, 1 << 20): (0, None)}
    back: list[dict[tuple[int, int], tuple[int, tuple[int, int] | None]]] = [best]
    for m in range(1, len(cents)):
        last = m == len(cents) - 1
        nxt: dict[tuple[int, int], tuple[int, tuple[int, int] | None]] = {}
        for (d_prev, s_prev), (cost, _) in best.items():
            for d in (0,) if last else moves:
                step = cents[m] + d - (cents[m - 1] + d_prev)
                if not 0 <= step <= s_prev:
                    continue
                key = (d, step)
                if key not in nxt or cost + abs(d) < nxt[key][0]:
                    nxt[key] = (cost + abs(d), (d_prev, s_prev))
        best = nxt
        back.append(best)
    state: tuple[int, int] | None = min(best, key=lambda k: best[k][0])
    out = []
    for m in range(len(cents) - 1, -1, -1):
        assert state is not None
        out.append(cents[m] + state[0])
        state = back[m][state][1]
    return tuple(c / 100 for c in reversed(out))


def wbf_vp(margin: float, boards: int) -> float:
    """The WBF continuous VP scale (2013): the VPs of the side winning by ``margin`` IMPs
    (negative: losing) in a match of ``boards`` boards, 0-20 to two decimals
    (``wbf_vp_table``; a fractional margin, from an artificial score worth a fraction of an
    IMP, is placed on the formula between the table's two whole margins)."""
    table = wbf_vp_table(boards)
    m = abs(margin)
    if m >= min(len(table) - 1, 15 * math.sqrt(boards)):      # the blitz
        win = 20.0
    else:
        low = int(m)
        win = round(table[low] + (table[low + 1] - table[low]) * (m - low), 2)
    return win if margin >= 0 else round(20 - win, 2)


def _team_imps(session: Session, scores: SessionScores, board: int) -> list[BoardImps]:
    tables, results, adjustments = _entries(session, scores, board)
    seen: set[str] = set()
    out: list[BoardImps] = []

    def imps_of(kind: str) -> float:
        return round(artificial_imps(artificial_percent(kind, session.artificial)), 2)

    for x in tables:
        px = session.movement.pairs_at(x, board)
        if px is None or x in seen:
            continue
        y = next((t for t in tables if t != x and t not in seen
                  and session.movement.pairs_at(t, board) == (px[1], px[0])), None)
        if y is None:
            continue
        seen |= {x, y}
        home, away = px
        ax, ay = adjustments.get(x), adjustments.get(y)
        sx, sy = _sides(results.get(x), ax), _sides(results.get(y), ay)
        h: float
        a: float
        if (ax is not None and ax.ns is not None) or (ay is not None and ay.ns is not None):
            # Law 86A: an artificial score is IMPs (A+ +3, A= 0, A- -3) for the board; at
            # both tables each team gets the sum of its two (A= at one table, A+/A- at the
            # other: 0 + 3 against 0 - 3)
            h = a = 0.0
            if ax is not None and ax.ns is not None:    # home NS, away EW at x
                h += imps_of(ax.ns)
                a += imps_of(ax.ew or ax.ns)
            if ay is not None and ay.ns is not None:    # away NS, home EW at y
                h += imps_of(ay.ew or ay.ns)
                a += imps_of(ay.ns)
            h, a = round(h, 2), round(a, 2)
        elif (ax is not None and ax.weighted is not None) or \
                (ay is not None and ay.weighted is not None):
            # Law 12C1(c): the IMPs of each result, weighted
            wx, wy = _weighted_sides(results.get(x), ax), _weighted_sides(results.get(y), ay)
            if wx is None or wy is None:
                continue                                # not played at both tables yet
            h, a = round(_weighted_imps(wx[0], wy[1]), 2), round(_weighted_imps(wy[0], wx[1]), 2)
        elif sx is not None and sy is not None:
            # home: NS at x, EW at y; a split score compares each side's own score
            h, a = imps(sx[0] - sy[1]), imps(sy[0] - sx[1])
        else:
            continue                                    # not played at both tables yet
        out.append(BoardImps(board, home, away, x, y, h, a))
    return out


def score_teams(session: Session, scores: SessionScores) -> tuple[list[BoardImps],
                                                                 list[MatchScore]]:
    """IMPs per board and per match (the boards two teams play against each other in a
    round), with WBF VPs."""
    boards = sorted(set(session.movement.boards) | set(scores.boards))
    per_board = [bi for b in boards for bi in _team_imps(session, scores, b)]
    matches: dict[tuple[int, int, int], list[BoardImps]] = {}
    for bi in per_board:
        rnd = session.movement.round_of(bi.home_table, bi.board) or 0
        key = (rnd, min(bi.home, bi.away), max(bi.home, bi.away))
        matches.setdefault(key, []).append(bi)
    out: list[MatchScore] = []
    for (_, first, second), items in sorted(matches.items()):
        won = {first: 0.0, second: 0.0}
        for bi in items:
            won[bi.home] += max(bi.imps_home, 0)
            won[bi.away] += max(bi.imps_away, 0)
        margin = round(won[first] - won[second], 2)
        played = len({bi.board for bi in items})
        vp = wbf_vp(margin, played) if session.vp_scale == "wbf" else 0.0
        out.append(MatchScore(first, second, played, round(won[first], 2),
                              round(won[second], 2), vp,
                              round(20 - vp, 2) if session.vp_scale == "wbf" else 0.0))
    return per_board, out


def team_board_scores(per_board: Iterable[BoardImps], scores: SessionScores,
                      session: Session | None = None) -> list[BoardScore]:
    """Each table of each match's board as a row: the score as scored (the director's
    adjustment where there is one) and the IMPs to its NS and EW teams."""
    adjusted = {(a.table, a.board): a for a in (session.adjustments if session else ())}
    out: list[BoardScore] = []
    for bi in per_board:
        for table, ns, ew, a, b in ((bi.home_table, bi.home, bi.away, bi.imps_home, bi.imps_away),
                                    (bi.away_table, bi.away, bi.home, bi.imps_away, bi.imps_home)):
            r = scores.get(table, bi.board)
            adj = adjusted.get((table, bi.board))
            out.append(BoardScore(table, bi.board, ns, ew, shown_score(r, adj), float(a),
                                  float(b), 0.0, r, adj))
    return out


@dataclass(frozen=True, slots=True)
class TeamTotal:
    team: int
    imps: float             # IMPs won less IMPs lost, over the matches
    vp: float
    matches: int
    rank: str = ""


def team_totals(matches: Iterable[MatchScore], by_vp: bool = True) -> list[TeamTotal]:
    """Each team's net IMPs and VPs over its matches, ranked by VPs (or IMPs)."""
    imps_: dict[int, float] = {}
    vps: dict[int, float] = {}
    played: dict[int, int] = {}
    for m in matches:
        for team, margin, vp in ((m.home, m.margin, m.vp_home), (m.away, -m.margin, m.vp_away)):
            imps_[team] = round(imps_.get(team, 0.0) + margin, 2)
            vps[team] = vps.get(team, 0.0) + vp
            played[team] = played.get(team, 0) + 1
    teams_ = sorted(imps_)
    key = [vps[t] if by_vp else float(imps_[t]) for t in teams_]
    labels = rank_labels(key)
    rows = [TeamTotal(t, imps_[t], round(vps[t], 2), played[t], lab)
            for t, lab in zip(teams_, labels, strict=True)]
    return sorted(rows, key=lambda r: (-(r.vp if by_vp else r.imps), r.team))
