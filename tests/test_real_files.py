"""Every real tournament board with complete play, replayed through the whole controller.

The records in ../shared/data/real (PBN and LIN, read where they lie, never copied) are
turned into the wire contract's sensor events, fed to the Engine with the deal as the
deals file, and the ``result`` is checked against the record: contract, declarer, the
tricks the cards give, and the Law 77 score. No alert may be raised on a legal board.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from shared_data import real_dir, real_file, real_files

from controller.boards.generate import trick_winner
from controller.engine import Engine
from controller.formats.events import record_events
from controller.formats.lin import read_lin
from controller.formats.pbn import read_pbn
from controller.laws.cards import Seat
from controller.laws.record import BoardRecord, DealInfo
from controller.laws.scoring import score_ns

FILES = real_files(".pbn", ".lin")


def complete(record: BoardRecord) -> bool:
    if record.deal is None or not record.deal.is_complete or record.contract is None:
        return False
    if len(record.standing_calls) < 4:
        return False  # no auction recorded (a bare [Contract "Pass"]): not a complete board
    if record.contract.passed_out:
        return True
    cards = [c for t in record.tricks for _, c in t.cards]
    if len(cards) != 52 or len(set(cards)) != 52:
        return False
    return all(c in record.deal[s] for t in record.tricks for s, c in t.cards)


def records_of(path: Path) -> list[BoardRecord]:
    if path.suffix.lower() == ".pbn":
        return read_pbn(path).records()
    return list(read_lin(path).records)


def test_the_real_files_are_there() -> None:
    real = real_dir()
    assert len(FILES) == 26, f"expected the 26 real files under {real}"


def test_every_complete_board_is_found() -> None:
    # 322 boards with complete play and 3 complete passed-out boards (data/real/README.md)
    real_dir()
    assert sum(len([r for r in records_of(real_file(p))
                    if complete(r)]) for p in FILES) == 325


@pytest.mark.parametrize("known", [True, False], ids=["deals+scans", "no-deals-no-scans"])
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name if p else "absent")
def test_real_boards_replay_to_the_recorded_result(path: Path | None, known: bool) -> None:
    """With the deal known (deals file and hand scans), and with neither: the core then
    infers the hands from the cards played."""
    boards = [r for r in records_of(real_file(path)) if complete(r)]
    for i, record in enumerate(boards):
        number = i + 1  # renumbered: the records' own numbers repeat across rooms
        assert record.deal is not None and record.contract is not None
        deals = {number: DealInfo(number, record.dealer, record.vulnerability,
                                  record.deal if known else None)}
        engine = Engine(deals=deals)
        renumbered = BoardRecord(
            board=number, dealer=record.dealer, vulnerability=record.vulnerability,
            deal=record.deal, auction=record.auction, contract=record.contract,
            declarer=record.declarer, tricks=record.tricks,
        )
        outs = []
        for event in record_events(renumbered, scans=known):
            outs += engine.handle("bridge/1/event", event)
        alerts = [o.payload for o in outs if o.topic.endswith("/alert")]
        errors = [o.payload for o in outs if o.topic.endswith("/error")]
        assert errors == [], f"{path.name} board {record.board}"
        assert alerts == [], f"{path.name} board {record.board}: {alerts[:2]}"
        results = [o.payload for o in outs if o.topic.endswith("/result")]
        assert results, f"{path.name} board {record.board}: no result"
        result = results[-1]
        assert result["contract"] == str(record.contract)
        if record.contract.passed_out:
            assert result["score_ns"] == 0
            continue
        assert record.declarer is not None and record.contract.bid is not None
        assert result["declarer"] == str(record.declarer)
        trump = record.contract.bid.denomination.trump
        won = sum(1 for t in record.tricks
                  if trick_winner(list(t.cards), trump).side is record.declarer.side)
        assert result["tricks_played"] == won and result["tricks"] == won
        assert result["score_ns"] == score_ns(record.contract, record.declarer,
                                              record.vulnerability, won)
        # the auction that stands is the one recorded
        state = engine.snapshot("1")
        assert [[s, c] for s, c in state["auction"]] == [
            [str(e.seat), str(e.call)] for e in record.standing_calls]
        assert Seat[result["declarer"]] is record.declarer
