"""PBN 2.1: reading (forgiving), writing (export format), round trips, the real files."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.formats.errors import BadRecord
from controller.formats.pbn import (
    MANDATORY_TAGS,
    auction_outcome,
    deals_by_board,
    game_to_record,
    pbn_text,
    read_pbn,
    record_to_pbn,
    write_pbn,
)
from controller.laws.cards import Call, Contract, Deal, Seat, Vulnerability
from controller.laws.irregularities import Code, Status
from controller.laws.record import AuctionEntry, BoardRecord

DATA = Path(__file__).parent / "data"
REAL = Path(__file__).resolve().parents[2] / "shared/data/real"
SCENARIOS = DATA / "laws_scenarios.pbn"

# laws.md section 7: board -> (contract, declarer, tricks as played, after Law 64/67, NS score)
EXPECTED = {
    8: (None, None, None, None, None),
    1: ("2C", "N", None, None, None),
    2: ("4S", "S", None, None, None),
    3: ("4H", "S", None, None, None),
    4: ("3NT", "N", 7, 7, -200),
    5: ("3NT", "N", 7, 7, -200),
    12: ("1NT", "W", 7, 7, -90),
    10: ("4H", "S", 9, 11, 650),
    11: ("3NT", "S", 11, 10, 430),
    9: ("2NT", "N", 8, 8, 120),
    13: ("4S", "N", 9, 9, -100),
    14: ("3NT", "W", 9, 10, -430),
}


def _scenarios() -> list[BoardRecord]:
    pbn = read_pbn(SCENARIOS)
    assert pbn.errors == []
    return pbn.records()


def test_scenarios_read_as_laws_md_says() -> None:
    records = _scenarios()
    assert [r.board for r in records] == list(EXPECTED)
    for record in records:
        contract, declarer, played, result, score = EXPECTED[record.board]
        assert (str(record.contract) if record.contract else None) == contract, record.board
        assert (record.declarer.name if record.declarer is not None else None) == declarer
        assert record.tricks_played == played, record.board
        assert record.tricks_result == result, record.board
        assert record.score_ns == score, record.board


def test_scenario_irregularities_survive() -> None:
    by_board = {r.board: r for r in _scenarios()}
    t02 = by_board[1]
    cancelled = [e for e in t02.auction if e.cancelled]
    assert [(e.seat, str(e.call), e.irregularity) for e in cancelled] == [(Seat.W, "1S", 1)]
    assert t02.auction[1] == cancelled[0]            # in the order it was made
    t03 = by_board[2]
    (irr,) = t03.irregularities
    assert (irr.code, irr.status, irr.detail, irr.law) == (
        Code.INSUFFICIENT_BID, Status.RESOLVED, "accepted", "27A1")
    t08 = by_board[10]
    (revoke,) = t08.irregularities
    assert (revoke.code, revoke.seat, revoke.trick, revoke.param("tricks")) == (
        Code.REVOKE, Seat.E, 6, 2)


def test_scenarios_round_trip_text_and_records() -> None:
    text = SCENARIOS.read_text(encoding="utf-8")
    records = _scenarios()
    assert pbn_text(records) == text
    again = read_pbn(pbn_text(records))
    assert again.errors == []
    assert again.records() == records


def test_irregularity_tokens_are_written() -> None:
    text = SCENARIOS.read_text(encoding="utf-8")
    assert "^I 1H" in text                  # T03 accepted insufficient bid
    assert "^L CT" in text and "^L C4" in text   # T06 leads out of turn
    assert "^R H9" in text                  # T08 established revoke
    assert '[Result "^11"]' in text         # T08: Law 64 result differs from the play
    assert "^R HQ" not in text              # T11's revoke was corrected (62D): not ^R


def test_export_tags_in_order() -> None:
    record = _scenarios()[4]
    lines = record_to_pbn(record).splitlines()
    names = [line[1:line.index(" ")] for line in lines if line.startswith("[")]
    assert tuple(names[:15]) == MANDATORY_TAGS


def test_call_out_of_rotation_writes_and_reads_caret_s() -> None:
    # West deals; West 1D, East bids 2D out of rotation (North skipped), accepted
    auction = tuple(AuctionEntry(Seat.parse(s), Call.parse(c)) for s, c in
                    [("W", "1D"), ("E", "2D"), ("S", "Pass"), ("W", "Pass"), ("N", "Pass")])
    record = BoardRecord(board=4, dealer=Seat.W, vulnerability=Vulnerability.ALL,
                         auction=auction, contract=Contract.parse("2D"), declarer=Seat.W)
    text = record_to_pbn(record)
    assert "1D ^S 2D Pass\nPass Pass\n" in text
    (back,) = read_pbn(text).records()
    (irr,) = back.irregularities
    assert (irr.code, irr.seat, irr.detail) == (Code.CALL_OUT_OF_ROTATION, Seat.E, "accepted")
    assert [(e.seat, e.call) for e in back.auction] == [(e.seat, e.call) for e in auction]


@pytest.mark.parametrize(("tokens", "calls"), [
    # PBN 2.1 section 3.9's examples, West dealing
    ("1D ^I 1C", [("W", "1D"), ("N", "1C")]),
    ("^S 1D", [("N", "1D")]),
    ("1D ^S 2D", [("W", "1D"), ("E", "2D")]),
    ("1D ^S ^I 1C", [("W", "1D"), ("E", "1C")]),
    ("1D ^S ^S 2D", [("W", "1D"), ("S", "2D")]),
    ("1D ^S ^S ^I 1C", [("W", "1D"), ("S", "1C")]),
])
def test_spec_irregularity_examples(tokens: str, calls: list[tuple[str, str]]) -> None:
    text = f'[Board "4"]\n[Dealer "W"]\n[Auction "W"]\n{tokens} *\n'
    (record,) = read_pbn(text).records()
    assert [(e.seat.name, str(e.call)) for e in record.auction] == calls
    codes = {i.code for i in record.irregularities}
    assert (Code.INSUFFICIENT_BID in codes) == ("^I" in tokens)
    assert (Code.CALL_OUT_OF_ROTATION in codes) == ("^S" in tokens)


def test_spec_play_examples_revoke_and_lead_out_of_turn() -> None:
    head = ('[Board "1"]\n[Deal "W:A.-.-.A -.-.6.2 -.-.-.K3 -.-.-.4"]\n'
            '[Contract "1NT"]\n[Declarer "S"]\n')
    (revoke,) = read_pbn(head.replace('"W:A.-.-.A -.-.6.2 -.-.-.K3 -.-.-.4"', '""')
                         + '[Play "W"]\nCA ^R S6 C3 C4\n*\n').records()
    assert [(i.code, i.seat, i.card and str(i.card)) for i in revoke.irregularities] == [
        (Code.REVOKE, Seat.N, "S6")]
    (lead,) = read_pbn(head.replace('"W:A.-.-.A -.-.6.2 -.-.-.K3 -.-.-.4"', '""')
                       + '[Play "W"]\nCA C2 ^L C3 C4\n*\n').records()
    trick = lead.tricks[0]
    assert trick.leader is Seat.E
    assert [str(c) for _, c in trick.cards] == ["C3", "C4", "CA", "C2"]
    assert trick.winner is Seat.W
    assert lead.irregularities[0].code is Code.OPENING_LEAD_OUT_OF_TURN


def test_import_format_file() -> None:
    path = DATA / "import_format.pbn"
    lines = path.read_text(encoding="utf-8").splitlines()
    pbn = read_pbn(path)
    # every broken game is reported at a line that shows the problem, and skipped
    messages = {e.line: e.message for e in pbn.errors}
    assert len(pbn.errors) == 4
    for line, needle in [("Board \"x\"", "board number"), ("SA S6 S2 S9", "not in that hand"),
                         ("1H 1Z Pass", "not a call"), ('"Broken: a malformed tag"', "malformed")]:
        number = next(i for i, text in enumerate(lines, 1) if line in text)
        assert needle in messages[number], (number, messages)
    boards = [game_to_record(g) for g in pbn.games]
    assert [r.board for r in boards] == [5, 4, 9, 17]
    first, second, _, last = boards
    # lower case, tabs, "-" before the dealer, AP, a note, suffix and NAG, ^L in the play
    assert first.dealer is Seat.N and first.vulnerability is Vulnerability.NS
    assert [str(e.call) for e in first.auction] == [
        "1D", "Pass", "1H", "Pass", "1NT", "Pass", "3NT", "Pass", "Pass", "Pass"]
    assert first.auction[4].note == "12-14 balanced"
    assert (first.tricks_played, first.tricks_result, first.score_ns) == (7, 7, -200)
    assert first.tags["West"] == "Tây player" and first.tags["North"] == "北 player"
    # "#" inheritance, ^S ^I, "*" after one trick, the claim in Result
    assert second.tags["Event"] == "Import format test" and second.tags["Site"] == "Ha Noi"
    assert str(second.contract) == "2C" and second.declarer is Seat.E   # E named clubs first
    assert len(second.tricks) == 1 and second.tricks_result == 8 and second.score_ns == -90
    # a tag over two lines; Law 2 when Dealer and Vulnerable are empty; a table kept raw
    assert last.tags["Annotator"] == "a value\nover two lines"
    assert last.dealer is Seat.N and last.vulnerability is Vulnerability.NONE
    assert pbn.games[3].tables["OptimumResultTable"] == ("N NT 7", "N S 4")


def test_deals_by_board_tags_override_law_2() -> None:
    text = ('[Board "1"]\n[Dealer "E"]\n[Vulnerable "All"]\n'
            '[Deal "E:73.J53.AJ9.KQT74 A9.K87.KQ87652.J T652.A62.T3.A632 KQJ84.QT94.4.985"]\n'
            '\n[Board "2"]\n[Deal "N:73.J53.AJ9.KQT74 A9.K87.KQ87652.J T652.A62.T3.A632 '
            'KQJ84.QT94.4.985"]\n\n[Board "1"]\n[Deal "N:- - - -"]\n')
    deals = deals_by_board(io.StringIO(text))
    assert sorted(deals) == [1, 2]
    one, two = deals[1], deals[2]
    assert (one.dealer, one.vulnerability) == (Seat.E, Vulnerability.ALL)
    assert (two.dealer, two.vulnerability) == (Seat.E, Vulnerability.NS)     # Law 2
    assert one.deal == Deal.from_pbn(
        "E:73.J53.AJ9.KQT74 A9.K87.KQ87652.J T652.A62.T3.A632 KQJ84.QT94.4.985")


@pytest.mark.parametrize(("result", "declarer", "tricks"), [
    ("9", "N", 9), ("NS 9", "S", 9), ("EW 4", "N", 9), ("NS 9 EW 4", "E", 4), ("^10", "W", 10),
])
def test_result_tag_forms(result: str, declarer: str, tricks: int) -> None:
    text = f'[Board "3"]\n[Contract "3NT"]\n[Declarer "{declarer}"]\n[Result "{result}"]\n'
    (record,) = read_pbn(text).records()
    assert record.tricks_result == tricks


def test_a_card_in_two_hands_is_a_broken_board() -> None:
    text = '[Board "3"]\n[Deal "N:A... A... - -"]\n\n[Board "4"]\n'
    pbn = read_pbn(text)
    assert [g.tags["Board"] for g in pbn.games] == ["4"]
    # reported at the Deal tag's line, with the board number
    assert pbn.errors[0].line == 2 and pbn.errors[0].board == 3
    assert "two hands" in pbn.errors[0].message


def test_game_to_record_raises_bad_record_for_a_broken_game() -> None:
    pbn = read_pbn('[Board "3"]\n[Auction "N"]\n1C\n')
    game = pbn.games[0]
    broken = type(game)(line=1, tags={"Board": "zero"}, tag_lines={})
    with pytest.raises(BadRecord):
        game_to_record(broken)


def test_auction_outcome() -> None:
    calls = [(Seat.parse(s), Call.parse(c)) for s, c in
             [("N", "1H"), ("E", "X"), ("S", "XX"), ("W", "Pass"), ("N", "Pass"), ("E", "Pass")]]
    assert auction_outcome(calls) == (True, Contract.parse("1HXX"), Seat.N)
    assert auction_outcome(calls[:-1])[0] is False
    passes = [(s, Call.parse("Pass")) for s in Seat]
    assert auction_outcome(passes) == (True, Contract.parse("Pass"), None)


def test_write_pbn_to_a_file() -> None:
    buffer = io.StringIO()
    write_pbn(_scenarios()[:2], buffer)
    text = buffer.getvalue()
    assert text.startswith("% PBN 2.1\n% EXPORT\n\n[Event ")
    assert len(read_pbn(text).games) == 2


def _real_files(pattern: str) -> list[Path]:
    files = sorted(REAL.rglob(pattern))
    assert files, f"no real files under {REAL}"
    return files


def test_real_pbn_files_parse_and_results_agree() -> None:
    complete_play = 0
    for path in _real_files("*.pbn"):
        pbn = read_pbn(path)
        assert pbn.errors == [], (path.name, pbn.errors[:3])
        for game in pbn.games:
            record = game_to_record(game)
            if record.contract is None or record.declarer is None:
                continue
            played_out = len(record.tricks) == 13 and all(
                len(t.cards) == 4 for t in record.tricks)
            if not played_out:
                continue
            standing = [(e.seat, e.call) for e in record.auction if not e.cancelled]
            assert auction_outcome(standing)[0], (path.name, record.board)
            complete_play += 1
            result = game.tags.get("Result", "").strip()
            if result:
                assert record.tricks_played == int(result), (path.name, record.board)
            # the 52 cards played are the deal's
            played = {c for t in record.tricks for _, c in t.cards}
            assert record.deal is not None
            assert played == frozenset().union(*record.deal.hands)
    assert complete_play == 171       # the README's count of PBN boards with complete play


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('[]"{};%-*^ISRL\n\t 1234567NTSHDCXAPass=$!?#:.'))
               | st.characters(), max_size=400))
def test_garbage_never_crashes(text: str) -> None:
    pbn = read_pbn(text)
    for game in pbn.games:
        game_to_record(game)          # every game kept converts
        record_to_pbn(game_to_record(game))
