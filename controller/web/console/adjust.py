"""Adjusted scores from the console, written into the session file's adjustments.

``bridge-table score`` and ``bridge-table export`` read a session's adjusted scores from
its file (``[[adjustment]]``, docs/session.md). The console appends one block per adjusted
score, between two comment lines that name the ruling, and takes exactly that block out
again to reverse it. The would-be file is read as a session (the checks ``score`` makes)
before it is written over the old one, through ``controller.session``'s one writer of
session files (``write_session_text``), so the console never leaves a session file that
``score`` would refuse; the table must play the board in the session's movement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.session import Session, SessionError, parse_adjustment
from controller.session.adjustments import toml_value, write_session_text

__all__ = ["ScoreAdjustment", "check_adjustment", "append_adjustment", "remove_adjustment",
           "KINDS"]

#: the kinds of adjusted score the console gives (Law 12C1): artificial per side (d),
#: an assigned score for both sides (b), a split assigned score (e), a weighted one (c)
KINDS = ("artificial", "assigned", "split", "weighted")
_PERCENT = re.compile(r"\d{1,3}(\.\d+)?%")
#: one result of a weighted score as the director types it: ``50% 4H S 10``, ``30% +620``,
#: ``20% Pass``
_PART = re.compile(r"\s*(?P<w>\d{1,3}(?:\.\d+)?)\s*%\s+(?:(?P<score>[+-]?\d{1,5})|"
                   r"(?P<pass>pass)|(?P<contract>[1-7](?:NT|N|[CDHS])X{0,2})\s+"
                   r"(?P<declarer>[NESW])\s+(?P<tricks>\d{1,2}))\s*", re.IGNORECASE)


@dataclass(frozen=True)
class ScoreAdjustment:
    table: str
    board: int
    kind: str
    ns: str | None = None
    ew: str | None = None
    score_ns: int | None = None
    split: tuple[int, int] | None = None
    #: a weighted score's results as the session file gives them (``weighted_row``)
    weighted: tuple[dict[str, Any], ...] | None = None

    @property
    def law(self) -> str:
        return {"artificial": "12C1(d)", "assigned": "12C1(b)", "split": "12C1(e)",
                "weighted": "12C1(c)"}[self.kind]

    def describe(self) -> str:
        if self.kind == "artificial":
            return f"NS {self.ns}, EW {self.ew}"
        if self.kind == "weighted":
            assert self.weighted is not None
            return "weighted: " + ", ".join(
                f"{p['weight']}% " + (f"{p['score_ns']:+d}" if "score_ns" in p else
                                      " ".join(str(p[k]) for k in ("contract", "declarer",
                                                                   "tricks") if k in p))
                for p in self.weighted)
        if self.kind == "split":
            assert self.split is not None
            return f"NS scored with {self.split[0]}, EW with {self.split[1]}"
        return f"NS {self.score_ns}"

    def toml(self) -> str:
        lines = ["[[adjustment]]", f'table = "{self.table}"', f"board = {self.board}"]
        if self.kind == "artificial":
            lines += [f'ns = "{self.ns}"', f'ew = "{self.ew}"']
        elif self.kind == "split":
            assert self.split is not None
            lines.append(f"split = [{self.split[0]}, {self.split[1]}]")
        elif self.kind == "weighted":
            assert self.weighted is not None
            lines.append(f"weighted = {toml_value(list(self.weighted))}")
        else:
            lines.append(f"score_ns = {self.score_ns}")
        return "\n".join(lines)


def _score(value: Any, what: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a score, e.g. 620 or -100") from None
    if not -10000 <= number <= 10000 or number % 10:
        raise ValueError(f"{what} must be a bridge score (a multiple of 10)")
    return number


def _weighted(text: Any) -> list[dict[str, Any]]:
    """``50% 4H S 10, 50% 3NT N 8`` (or ``30% +620``, ``20% Pass``): the results of a
    weighted score, as the session file writes them."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("weighted: give each result with its weight, e.g. "
                         "'50% 4H S 10, 50% 3NT N 8' or '30% +620, 70% -100'")
    parts: list[dict[str, Any]] = []
    for item in text.split(","):
        m = _PART.fullmatch(item)
        if m is None:
            raise ValueError(f"weighted: {item.strip()!r} is not 'weight% contract declarer "
                             "tricks' (50% 4H S 10), 'weight% score' (30% +620) or "
                             "'weight% Pass'")
        weight = float(m["w"])
        part: dict[str, Any] = {"weight": int(weight) if weight.is_integer() else weight}
        if m["score"] is not None:
            part["score_ns"] = int(m["score"])
        elif m["pass"] is not None:
            part["contract"] = "Pass"
        else:
            contract = m["contract"].upper()
            part.update(contract=contract.replace("NT", "N").replace("N", "NT"),
                        declarer=m["declarer"].upper(), tricks=int(m["tricks"]))
        parts.append(part)
    return parts


def check_adjustment(session: Session, body: dict[str, Any]) -> ScoreAdjustment:
    """The adjusted score the director asked for, or ValueError saying what is wrong
    (an unknown kind or artificial score, a table that does not play the board)."""
    table, board = _table_and_board(session, body)
    kind = body.get("kind")
    if kind == "artificial":
        ns, ew = (str(body.get(side) or "").strip() for side in ("ns", "ew"))
        for side, value in (("NS", ns), ("EW", ew)):
            if value not in session.artificial and not _PERCENT.fullmatch(value):
                raise ValueError(f"{side} must be one of {', '.join(session.artificial)} "
                                 "or a percentage like '55%'")
        return ScoreAdjustment(table, board, kind, ns=ns, ew=ew)
    if kind == "assigned":
        return ScoreAdjustment(table, board, kind, score_ns=_score(body.get("score_ns"), "NS"))
    if kind == "split":
        return ScoreAdjustment(table, board, kind, split=(
            _score(body.get("split_ns"), "NS's score"),
            _score(body.get("split_ew"), "EW's score")))
    if kind == "weighted":
        parts = _weighted(body.get("weighted"))
        try:       # the session file's own checks: weights summing to 100%, each result
            parse_adjustment(session, {"table": table, "board": board, "weighted": parts})
        except SessionError as exc:
            raise ValueError(str(exc).removeprefix("adjustment: ")) from None
        return ScoreAdjustment(table, board, kind, weighted=tuple(parts))
    raise ValueError(f"kind must be one of {', '.join(KINDS)}")


def _table_and_board(session: Session, body: dict[str, Any]) -> tuple[str, int]:
    """The table and board an adjusted score is for: a board the table plays in the
    session's movement, or ValueError."""
    table = body.get("table")
    if not isinstance(table, str) or not re.fullmatch(r"[A-Za-z0-9_-]{1,32}", table):
        raise ValueError("no table")
    try:
        board = int(body.get("board"))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError("board must be a number") from None
    if board not in session.movement.boards_of_table(table):
        raise ValueError(f"table {table} does not play board {board} in the session's "
                         "movement")
    return table, board


def _replace(path: Path, text: str) -> Session:
    """``text`` in place of the session file, read as a session first (every check
    ``score`` makes: controller.session's one writer); ValueError, the file unchanged, when
    it would not read back."""
    try:
        return write_session_text(path, text)
    except SessionError as exc:
        raise ValueError(f"the session file would not read back: {exc}") from None


def append_adjustment(path: Path, adj: ScoreAdjustment, seq: int, header: str
                      ) -> tuple[str, Session]:
    """Append ``adj`` as ruling ``seq``'s block; the block (to reverse it) and the session."""
    text = path.read_text(encoding="utf-8")
    block = (f"\n# console ruling {seq}: {header}\n{adj.toml()}\n"
             f"# end of console ruling {seq}\n")
    return block, _replace(path, text + ("" if text.endswith("\n") else "\n") + block)


def remove_adjustment(path: Path, block: str) -> Session:
    """Take ruling's block out of the session file again (its reversal)."""
    text = path.read_text(encoding="utf-8")
    if block not in text:
        raise ValueError("the adjustment is no longer in the session file (edited by hand?)")
    return _replace(path, text.replace(block, "", 1))
