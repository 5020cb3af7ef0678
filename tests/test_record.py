"""A board played through the Table comes out as a BoardRecord that PBN and LIN carry."""

from __future__ import annotations

import io

from scenarios import Harness

from controller.formats.lin import read_lin, record_to_lin
from controller.formats.pbn import read_pbn, record_to_pbn
from controller.laws.cards import Deal

T08 = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"


def played_t08() -> Harness:
    h = Harness(10, Deal.from_pbn(T08))
    h.board_tag(10)
    h.scan()
    h.run("C:E:1C C:S:1H C:W:P C:N:4H C:E:P C:S:P C:W:P")
    h.run("W:CT N:C3 E:CA S:C7 E:CK S:CQ W:C4 N:C6 E:S3 S:S5 W:ST N:SQ")
    h.run("N:H5 E:H2 S:HA W:H3 S:HK W:D2 N:HT E:H6 S:D5 W:D3 N:DK E:H9 AUTO")
    return h


def test_table_record_of_a_board_with_a_revoke() -> None:
    record = played_t08().t.record
    assert record is not None
    assert record.deal == Deal.from_pbn(T08)
    assert str(record.contract) == "4H" and record.declarer is not None
    assert (record.tricks_played, record.tricks_result, record.score_ns) == (9, 11, 650)
    assert len(record.tricks) == 13 and all(len(t.cards) == 4 for t in record.tricks)
    assert [i.code.value for i in record.irregularities] == ["REVOKE"]


def test_pbn_round_trip_of_the_played_board() -> None:
    record = played_t08().t.record
    assert record is not None
    text = record_to_pbn(record)
    for tag in ("Event", "Site", "Date", "Board", "West", "North", "East", "South", "Dealer",
                "Vulnerable", "Deal", "Scoring", "Declarer", "Contract", "Result"):
        assert f"[{tag} " in text
    assert "[Auction " in text and "[Play " in text and "code=REVOKE" in text
    assert "^R" not in text                # a mark endplay and other readers choke on
    back = read_pbn(io.StringIO(text))
    assert back.errors == []
    again = back.records()[0]
    assert again.deal == record.deal and again.contract == record.contract
    assert again.declarer == record.declarer
    assert [t.cards for t in again.tricks] == [t.cards for t in record.tricks]
    assert again.tricks_result == 11


def test_lin_round_trip_of_the_played_board() -> None:
    record = played_t08().t.record
    assert record is not None
    back = read_lin(io.StringIO(record_to_lin(record)))
    again = back.records[0]
    assert again.deal == record.deal and again.contract == record.contract
    assert [t.cards for t in again.tricks] == [t.cards for t in record.tricks]
