"""Adjusted scores from the console, written into the session file's adjustments.

``bridge-table score`` and ``bridge-table export`` read a session's adjusted scores from
its file (``[[adjustment]]``, docs/session.md). The console appends one block per adjusted
score, between two comment lines that name the ruling, and takes exactly that block out
again to reverse it. The would-be file is written beside the old one and read back with
``controller.session.load_session`` (the checks ``score`` makes) before it is renamed over
it, so the console never leaves a session file that ``score`` would refuse; the table must
play the board in the session's movement.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.session import Session, SessionError, load_session

__all__ = ["ScoreAdjustment", "check_adjustment", "append_adjustment", "remove_adjustment",
           "KINDS"]

#: the kinds of adjusted score the console gives (Law 12C1): artificial per side (d),
#: an assigned score for both sides (b), a split assigned score (e)
KINDS = ("artificial", "assigned", "split")
_PERCENT = re.compile(r"\d{1,3}(\.\d+)?%")


@dataclass(frozen=True)
class ScoreAdjustment:
    table: str
    board: int
    kind: str
    ns: str | None = None
    ew: str | None = None
    score_ns: int | None = None
    split: tuple[int, int] | None = None

    @property
    def law(self) -> str:
        return {"artificial": "12C1(d)", "assigned": "12C1(b)", "split": "12C1(e)"}[self.kind]

    def describe(self) -> str:
        if self.kind == "artificial":
            return f"NS {self.ns}, EW {self.ew}"
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


def check_adjustment(session: Session, body: dict[str, Any]) -> ScoreAdjustment:
    """The adjusted score the director asked for, or ValueError saying what is wrong
    (an unknown kind or artificial score, a table that does not play the board)."""
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
    raise ValueError(f"kind must be one of {', '.join(KINDS)}")


def _replace(path: Path, text: str) -> Session:
    """Write ``text`` beside the session file, read it back with ``load_session`` (every
    check ``score`` makes), then put it in place; the session it gives."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".toml", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        try:
            session = load_session(tmp)
        except SessionError as exc:
            raise ValueError(f"the session file would not read back: "
                             f"{str(exc).replace(tmp, str(path))}") from None
        os.chmod(tmp, path.stat().st_mode & 0o777)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    object.__setattr__(session, "path", path)
    return session


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
