"""The verification report: per board verdicts as JSON, CSV and terminal text, and the
progress bar.

JSON (``report_json``; also the payload published retained on ``bridge/{station}/verify`` at the
end, with ``type: "report"``)::

    {"v": 1, "type": "report", "station": "station-1", "deals": "set.dup",
     "summary": {"boards": 32, "ok": 29, "faulty": 3, "not_verified": [31, 32],
                 "kinds": {"missing_card": 1, ...}},
     "file_problems": ["board 7, byte 1100: ..."],
     "boards": [{"board": 1, "ok": true, "board_tag": 1, "deck": "1",
                 "counts": {"N": 13, "E": 13, "S": 13, "W": 13}, "findings": []}, ...]}

Each board is also published as it is verified (``type: "board"``, not retained).
CSV: one row per finding (a board without findings has one row with ``ok`` true).
"""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller import wire
from controller.commandline import number_ranges
from controller.laws.cards import Seat
from controller.laws.dealcheck import Finding
from controller.verify.station import BoardResult

__all__ = ["VerifyReport", "finding_json", "pocket_counts", "verdict_line", "result_json",
           "report_json", "report_csv", "summary_text", "progress_bar", "write_report",
           "CSV_FIELDS"]

CSV_FIELDS = ("board", "ok", "board_tag", "kind", "seat", "card", "other_seat", "ref_board",
              "count", "detail")


def finding_json(f: Finding) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": f.kind.value, "detail": f.detail}
    if f.seat is not None:
        out["seat"] = f.seat.name
    if f.card is not None:
        out["card"] = str(f.card)
    if f.other_seat is not None:
        out["other_seat"] = f.other_seat.name
    if f.board is not None:
        out["board"] = f.board
    if f.count is not None:
        out["count"] = f.count
    return out


def result_json(r: BoardResult) -> dict[str, Any]:
    return {
        "board": r.board, "ok": r.ok, "board_tag": r.board_tag, "deck": r.deck,
        "counts": pocket_counts(r),
        "findings": [finding_json(f) for f in r.verdict.findings],
    }


@dataclass(frozen=True)
class VerifyReport:
    station: str
    deals_file: str
    results: tuple[BoardResult, ...]
    expected_boards: tuple[int, ...] = ()
    file_problems: tuple[str, ...] = ()
    notes: Mapping[str, int] = field(default_factory=dict)

    @property
    def faulty(self) -> list[BoardResult]:
        return [r for r in self.results if not r.ok]

    def kinds(self) -> Counter[str]:
        return Counter(f.kind.value for r in self.results for f in r.verdict.findings)

    def not_verified(self) -> list[int]:
        done = {r.board for r in self.results}
        return [b for b in self.expected_boards if b not in done]

    def summary(self) -> dict[str, Any]:
        return {"boards": len(self.results), "ok": len(self.results) - len(self.faulty),
                "faulty": len(self.faulty), "not_verified": self.not_verified(),
                "kinds": dict(sorted(self.kinds().items()))}


def report_json(report: VerifyReport) -> dict[str, Any]:
    return {"v": wire.VERSION, "type": "report", "station": report.station,
            "deals": report.deals_file, "summary": report.summary(),
            "file_problems": list(report.file_problems), "notes": dict(report.notes),
            "boards": [result_json(r) for r in report.results]}


def _rows(results: Iterable[BoardResult]) -> Iterable[dict[str, Any]]:
    for r in results:
        base = {"board": r.board, "ok": str(r.ok).lower(),
                "board_tag": "" if r.board_tag is None else r.board_tag}
        if not r.verdict.findings:
            yield base
        for f in r.verdict.findings:
            yield base | {
                "kind": f.kind.value, "seat": "" if f.seat is None else f.seat.name,
                "card": str(f.card) if f.card else "",
                "other_seat": "" if f.other_seat is None else f.other_seat.name,
                "ref_board": "" if f.board is None else f.board,
                "count": "" if f.count is None else f.count, "detail": f.detail}


def report_csv(report: VerifyReport) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in _rows(report.results):
        writer.writerow(row)
    return buf.getvalue()


def write_report(report: VerifyReport, out: str | Path) -> tuple[Path, Path]:
    """``out`` names the report: ``X`` or ``X.json`` or ``X.csv`` -> X.json and X.csv."""
    p = Path(out)
    stem = p.with_suffix("") if p.suffix.lower() in (".json", ".csv") else p
    json_path, csv_path = stem.with_name(stem.name + ".json"), stem.with_name(stem.name + ".csv")
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(report_json(report), indent=1, ensure_ascii=False) + "\n",
                         encoding="utf-8")
    csv_path.write_text(report_csv(report), encoding="utf-8")
    return json_path, csv_path


def pocket_counts(r: BoardResult) -> dict[str, int]:
    """Pieces in each pocket: the board's cards and the foreign tags."""
    return {s.name: len(r.seen.get(s, ())) + sum(1 for t in r.foreign if t.seat is s)
            for s in Seat}


def _hand_line(r: BoardResult) -> str:
    return "[" + " ".join(f"{k}{v}" for k, v in pocket_counts(r).items()) + "]"


def verdict_line(r: BoardResult) -> str:
    head = f"board {r.board:>3}: " + ("OK" if r.ok else "FAULTY")
    if r.ok:
        return head
    return head + " " + _hand_line(r) + "\n" + "\n".join(
        f"           - {f.detail or f.kind.value}" for f in r.verdict.findings)


def summary_text(report: VerifyReport) -> str:
    s = report.summary()
    lines = [f"Verification of {report.deals_file} at {report.station}: "
             f"{s['boards']} boards checked, {s['ok']} ok, {s['faulty']} faulty"]
    for r in report.faulty:
        lines.append(verdict_line(r))
    if s["kinds"]:
        lines.append("faults: " + ", ".join(f"{k} x{n}" for k, n in s["kinds"].items()))
    if s["not_verified"]:
        lines.append("not verified: " + number_ranges(s["not_verified"]))
    for p in report.file_problems:
        lines.append(f"deal file: {p}")
    for note, n in sorted(report.notes.items()):
        lines.append(f"note: {note}" + (f" (x{n})" if n > 1 else ""))
    return "\n".join(lines)


def progress_bar(done: int, total: int, faulty: int, width: int = 30) -> str:
    """``[##########..........] 12/32 boards, 2 faulty``; total 0: unknown size."""
    if total <= 0:
        return f"{done} boards, {faulty} faulty"
    filled = min(width, round(width * done / total))
    return f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} boards, {faulty} faulty"
