"""Write round trips of the real files in ../shared/data/real lose nothing: every record read
from a real PBN or LIN file is written by the project's writer and read back the same, and
the supplemental tables (OptimumResultTable...) and backslashes come back as they were."""

from __future__ import annotations

import dataclasses
import io
from pathlib import Path

import pytest
from shared_data import real_file, real_files

from controller.formats.lin import read_lin, write_lin
from controller.formats.pbn import pbn_text, read_pbn, record_to_pbn
from controller.laws.cards import Call, Contract, Seat, Vulnerability
from controller.laws.record import AuctionEntry, BoardRecord


def _one_line_tags(records: list[BoardRecord]) -> list[BoardRecord]:
    # a tag value spread over several lines is written on one (tables keep their rows)
    return [dataclasses.replace(r, tags={k: v if k.endswith("Table") else v.replace("\n", " ")
                                         for k, v in r.tags.items()}) for r in records]


@pytest.mark.parametrize("path", real_files(".pbn"), ids=lambda p: p.name if p else "absent")
def test_real_pbn_files_round_trip(path: Path | None) -> None:
    pbn = read_pbn(real_file(path))
    records = pbn.records()
    text = pbn_text(records)
    again = read_pbn(text)
    assert again.errors == []
    assert _one_line_tags(again.records()) == _one_line_tags(records)
    original = real_file(path).read_text(encoding="utf-8", errors="replace")
    for line in original.splitlines():
        if line.startswith("[OptimumResultTable"):
            assert line.strip() in text          # the header, its "\2R" not doubled


@pytest.mark.parametrize("path", real_files(".lin"), ids=lambda p: p.name if p else "absent")
def test_real_lin_files_round_trip(path: Path | None) -> None:
    lin = read_lin(real_file(path))
    buffer = io.StringIO()
    skipped = write_lin(lin.records, buffer)
    again = read_lin(buffer.getvalue())
    assert again.errors == []
    kept = [r for r in lin.records if r.board not in {s.board for s in skipped}]
    assert [(r.board, r.deal, r.contract, r.declarer, r.tricks_result,
             [e.call for e in r.standing_calls], [t.cards for t in r.tricks])
            for r in again.records] == [
        (r.board, r.deal, r.contract, r.declarer, r.tricks_result,
         [e.call for e in r.standing_calls], [t.cards for t in r.tricks]) for r in kept]


def test_optimum_result_table_rows_are_kept() -> None:
    text = ('[Board "1"]\n[Deal "N:AKQJ.AKQ.AKQ.AKQ T987.JT9.JT9.JT9 6543.876.876.876 '
            '2.5432.5432.5432"]\n[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]\n'
            'N NT 13\nS  S 13\n[Event "back\\\\slash"]\n')
    (record,) = read_pbn(text).records()
    # rows are kept cell by cell (the reader splits on white space)
    assert record.tags["OptimumResultTable"] == ("Declarer;Denomination\\2R;Result\\2R\n"
                                                 "N NT 13\nS S 13")
    assert record.tags["Event"] == "back\\slash"
    out = record_to_pbn(record)
    assert '[OptimumResultTable "Declarer;Denomination\\2R;Result\\2R"]\nN NT 13\nS S 13' in out
    assert '[Event "back\\slash"]' in out     # written as read: no doubled backslash
    assert read_pbn(out).records() == [record]


def test_a_passed_out_board_without_its_auction_keeps_its_pass_in_lin() -> None:
    record = BoardRecord(board=3, dealer=Seat.S, vulnerability=Vulnerability.EW,
                         contract=Contract.parse("Pass"), score_ns=0)
    buffer = io.StringIO()
    assert write_lin([record], buffer) == []
    (again,) = read_lin(buffer.getvalue()).records
    assert again.contract is not None and again.contract.passed_out
    assert [e.call for e in again.standing_calls] == [Call.parse("Pass")] * 4
    # a passed-out board with its auction keeps the four passes, no more
    full = dataclasses.replace(record, auction=tuple(
        AuctionEntry(Seat.S.rotated(i), Call.parse("Pass")) for i in range(4)))
    buffer = io.StringIO()
    write_lin([full], buffer)
    assert buffer.getvalue().count("mb|p|") == 4


def test_a_table_tag_on_the_last_row_of_another_table_is_read() -> None:
    # a damaged file (the property test found it): the reader kept one "current line" for
    # every table and failed on the second table's first cell
    pbn = read_pbn('[Board "1"]\n[ATable "A;B"]\n1 2 [BTable "X"] 3\n')
    assert pbn.errors == []
    assert pbn.games[0].tables == {"ATable": ("1 2",), "BTable": ("3",)}


def test_lin_keeps_an_explained_call_apart_from_an_alerted_one() -> None:
    text = ("pn|S,W,N,E|st||md|3SAKQJHAKQDAKQCAKQ,S2345H2345D2345C2,S6789H6789D6789C3,|rh||"
            "ah|Board 1|sv|o|mb|1C|an|16+ any shape|mb|p|mb|1D!|an|negative|mb|p|mb|1H!|"
            "mb|p|mb|p|mb|p|pg||\n")
    (record,) = read_lin(text).records
    assert [e.note for e in record.standing_calls][:5] == ["16+ any shape", "", "negative", "",
                                                           "!"]
    buffer = io.StringIO()
    write_lin([record], buffer)
    out = buffer.getvalue()
    assert "mb|1C|an|16+ any shape|" in out        # explained, not alerted: no "!"
    assert "mb|1D!|an|negative|" in out and "mb|1H!|" in out
    (again,) = read_lin(out).records
    assert again.standing_calls == record.standing_calls and again.tags == record.tags
    # a PBN note is an explanation: written without the alert
    (from_pbn,) = read_pbn(record_to_pbn(record)).records()
    buffer = io.StringIO()
    write_lin([dataclasses.replace(from_pbn, tags={})], buffer)
    assert "mb|1C|an|16+ any shape|" in buffer.getvalue()


@pytest.mark.parametrize("path", real_files(".lin"), ids=lambda p: p.name if p else "absent")
def test_real_lin_files_keep_their_alerts_and_explanations(path: Path | None) -> None:
    lin = read_lin(real_file(path))
    buffer = io.StringIO()
    skipped = {s.board for s in write_lin(lin.records, buffer)}
    again = read_lin(buffer.getvalue())
    kept = [r for r in lin.records if r.board not in skipped]
    assert [(r.tags.get("Alerted"), [e.note for e in r.standing_calls]) for r in again.records] \
        == [(r.tags.get("Alerted"), [e.note for e in r.standing_calls]) for r in kept]
