"""``check_record``: a whole played board validated by the Laws core, as a value.

The formats parse (``controller.formats``: PBN, LIN), the core checks: ``check_record``
takes a ``BoardRecord`` (the deal, the calls, the cards, the result as a file gives them)
and replays it through ``Auction`` and ``Play``, the same classes that follow a live
table, the way python-chess replays a game's moves on a board. No I/O.

What comes back (``RecordCheck``):

* ``irregularities``: what the Laws core flags while replaying the calls that stand and the
  cards as played (an insufficient bid, a call or a lead out of turn, a revoke and its
  Law 64 transfer...). An accepted irregularity is an irregularity all the same: the
  record may be a faithful one of a board where it happened.
* ``problems``: where the record does not add up, as ``Problem`` values: a hand that is not
  13 cards or a card in two hands, markings (dealer, vulnerability) that are not Law 2's
  for the board number, a contract or declarer the auction does not give, a card the hand
  does not hold, a trick winner that is not the trick's, a result a claim cannot reach, a
  score that is not Law 77's.

The calls replayed are the standing ones (``BoardRecord.standing_calls``): a call the
record marks cancelled was struck by a rectification whose ruling a record does not hold,
and the record's own ``irregularities`` say what it was.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace

from .auction import Auction, auction_outcome
from .cards import (
    FULL_DECK,
    Card,
    Contract,
    Rules,
    Seat,
    Side,
    board_dealer,
    board_vulnerability,
)
from .irregularities import Irregularity, IrregularityLog
from .play import Play, PlayError, trick_winner
from .record import BoardRecord
from .rulings import Ruling, RulingKind
from .scoring import record_score_ns

__all__ = ["ProblemKind", "Problem", "RecordCheck", "check_record"]

_TRICKS = 13


class ProblemKind(enum.StrEnum):
    DEAL = "deal"                    # a hand not of 13 cards, a card in two hands or none
    DEALER = "dealer"                # the dealer is not Law 2's for the board number
    VULNERABILITY = "vulnerability"  # the vulnerability is not Law 2's for the board number
    AUCTION = "auction"              # play or a contract after an auction that did not end
    CONTRACT = "contract"            # the contract is not the one the auction gives
    DECLARER = "declarer"            # the declarer is not the one the auction gives
    PLAY = "play"                    # a card the hand does not hold, played twice, a winner
    RESULT = "result"                # the result is not what the play and a claim give
    SCORE = "score"                  # the score is not Law 77's for the contract and result


@dataclass(frozen=True, slots=True)
class Problem:
    """One place where a record does not add up; ``trick`` when it is in one."""

    kind: ProblemKind
    message: str
    trick: int | None = None

    def __str__(self) -> str:
        where = f"trick {self.trick}: " if self.trick is not None else ""
        return f"{self.kind.value}: {where}{self.message}"


@dataclass(frozen=True, slots=True)
class RecordCheck:
    """What ``check_record`` found, and what the Laws core concludes of the board."""

    board: int
    irregularities: tuple[Irregularity, ...]
    problems: tuple[Problem, ...]
    contract: Contract | None        # as the auction gives it (the record's without one)
    declarer: Seat | None
    declarer_tricks: int | None      # after Law 64 and a claim; None when play is unfinished

    @property
    def ok(self) -> bool:
        """Nothing irregular and nothing that does not add up."""
        return not self.irregularities and not self.problems


def check_record(record: BoardRecord, rules: Rules = Rules.L2017) -> RecordCheck:
    """Validate one played board (a PBN or LIN record) against the Laws; never raises for
    what the record says, however broken."""
    problems: list[Problem] = []
    problems += _deal_problems(record)
    problems += _marking_problems(record)
    if record.tricks_result is not None and not 0 <= record.tricks_result <= _TRICKS:
        problems.append(Problem(ProblemKind.RESULT,
                                f"{record.tricks_result} tricks to declarer, not 0..13"))
        record = replace(record, tricks_result=None, score_ns=None)
    log = IrregularityLog()
    auction = Auction(record.dealer, log, rules=rules)
    for entry in record.standing_calls:
        auction.call(entry.seat, entry.call)
    contract, declarer = record.contract, record.declarer
    if record.auction:
        contract, declarer = _auction_problems(record, auction, problems)
    tricks: int | None = None
    if record.tricks or record.tricks_result is not None:
        tricks = _check_play(record, contract, declarer, auction, log, rules, problems)
    score = record_score_ns(record.contract, record.declarer, record.vulnerability,
                            record.tricks_result)
    if record.score_ns is not None and score is not None and score != record.score_ns:
        problems.append(Problem(ProblemKind.SCORE,
                                f"NS {record.score_ns}, where Law 77 gives NS {score}"))
    return RecordCheck(record.board, tuple(log), tuple(problems), contract, declarer, tricks)


def _deal_problems(record: BoardRecord) -> list[Problem]:
    deal = record.deal
    if deal is None:
        return []
    out: list[Problem] = []
    for seat in Seat:
        count = len(deal[seat])
        if count != _TRICKS:
            out.append(Problem(ProblemKind.DEAL, f"{seat.name} holds {count} cards, not 13"))
    holders: dict[Card, list[Seat]] = {}
    for seat in Seat:
        for card in deal[seat]:
            holders.setdefault(card, []).append(seat)
    for card in FULL_DECK:
        seats = holders.get(card, [])
        if len(seats) > 1:
            names = " and ".join(s.name for s in seats)
            out.append(Problem(ProblemKind.DEAL, f"{card} is in two hands: {names}"))
        elif not seats and any(deal.hands):
            out.append(Problem(ProblemKind.DEAL, f"{card} is in no hand"))
    return out


def _marking_problems(record: BoardRecord) -> list[Problem]:
    if record.board < 1:
        return [Problem(ProblemKind.DEALER, f"board number {record.board}: Law 2 starts at 1")]
    out: list[Problem] = []
    dealer, vul = board_dealer(record.board), board_vulnerability(record.board)
    if record.dealer is not dealer:
        out.append(Problem(ProblemKind.DEALER, f"dealer {record.dealer.name}, where Law 2 "
                                               f"gives board {record.board} to {dealer.name}"))
    if record.vulnerability is not vul:
        out.append(Problem(ProblemKind.VULNERABILITY,
                           f"vulnerability {record.vulnerability}, where Law 2 gives board "
                           f"{record.board} {vul}"))
    return out


def _auction_problems(record: BoardRecord, auction: Auction, problems: list[Problem],
                      ) -> tuple[Contract | None, Seat | None]:
    """The contract and declarer the replayed auction gives, against the record's."""
    if not auction.complete:
        # the calls as they stand may still end (an irregular call left pending): say so
        # only when the record goes on as if the auction were over
        if record.contract is not None or record.tricks:
            ended = auction_outcome([(e.seat, e.call) for e in record.standing_calls])
            problems.append(Problem(
                ProblemKind.AUCTION,
                "the auction did not end (Law 22)" if not ended.complete
                else "the auction ended only by accepting an irregular call"))
        return record.contract, record.declarer
    contract, declarer = auction.contract, auction.declarer
    if record.contract is not None and record.contract != contract:
        problems.append(Problem(ProblemKind.CONTRACT,
                                f"{record.contract}, where the auction gives {contract}"))
    if record.declarer is not None and declarer is not None and record.declarer is not declarer:
        problems.append(Problem(ProblemKind.DECLARER, f"{record.declarer.name}, where the "
                                                      f"auction gives {declarer.name}"))
    return contract, declarer


def _check_play(record: BoardRecord, contract: Contract | None, declarer: Seat | None,
                auction: Auction, log: IrregularityLog, rules: Rules,
                problems: list[Problem]) -> int | None:
    """Replay the cards (and a claim for the tricks not played); declarer's tricks."""
    if contract is None or contract.passed_out or declarer is None:
        if record.tricks:
            problems.append(Problem(ProblemKind.PLAY, "cards played with no contract"))
        return 0 if contract is not None and contract.passed_out else None
    trump = contract.bid.denomination.trump if contract.bid is not None else None
    for trick in record.tricks:
        if len(trick.cards) == 4 and trick.winner is not None \
                and trick.winner is not trick_winner(trick.cards, trump):
            problems.append(Problem(
                ProblemKind.PLAY, f"won by {trick.winner.name}, where Law 44 gives "
                                  f"{trick_winner(trick.cards, trump).name}", trick.number))
    if len(record.tricks) > _TRICKS:
        problems.append(Problem(ProblemKind.PLAY, f"{len(record.tricks)} tricks"))
        return None
    deal = record.deal
    hands = {s: deal[s] for s in Seat} if deal is not None and deal.is_complete else None
    play = Play(contract, declarer, log, rules=rules, hands=hands,
                penalty_cards=auction.penalty_cards)
    seen: set[Card] = set()
    for trick in record.tricks:
        for seat, card in trick.cards:
            if card in seen:
                problems.append(Problem(ProblemKind.PLAY, f"{card} played twice", trick.number))
                return None
            seen.add(card)
            if hands is not None and card not in hands[seat]:
                problems.append(Problem(ProblemKind.PLAY, f"{seat.name} plays {card}, which "
                                                          "that hand does not hold",
                                        trick.number))
                return None
            try:
                play.put(seat, card)
            except PlayError as exc:      # a record the replay cannot follow further
                problems.append(Problem(ProblemKind.PLAY, str(exc), trick.number))
                return None
    result = record.tricks_result
    if not play.complete:
        if result is None:
            return None
        if not _claim(play, declarer, result, problems):
            return None
    tricks = play.declarer_tricks
    if result is not None and result != tricks:
        problems.append(Problem(ProblemKind.RESULT,
                                f"{result} tricks to declarer, where the play gives {tricks}"
                                + _after_law_64(play)))
    return tricks


def _claim(play: Play, declarer: Seat, result: int, problems: list[Problem]) -> bool:
    """The tricks not played went by a claim or concession (Law 68): declarer's share is
    the result less the tricks his side has won. False when no share can give the result."""
    ns, ew = play.tricks_won
    won = ns if declarer.side is Side.NS else ew
    left = _TRICKS - ns - ew
    claimed = result - won
    if not 0 <= claimed <= left:
        problems.append(Problem(
            ProblemKind.RESULT,
            f"{result} tricks to declarer: his side had won {won} with {left} to play"))
        return False
    play.rule(Ruling(RulingKind.CLAIM, tricks=claimed))
    return True


def _after_law_64(play: Play) -> str:
    moved = play.tricks_transferred
    return f" after Law 64 moved {moved}" if moved else ""
