"""Property tests of the whole controller path: random boards as sensor events.

Random deals with random legal auctions and play raise no alert and give the contract,
declarer, tricks and score the plain rules of ``controller.boards.generate`` and endplay give; a
revoke injected into such a board is always flagged, established and adjusted per Law 64
(computed here independently); injected auction and lead irregularities are flagged with
their codes.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from endplay.types import Contract as EPContract
from endplay.types import Vul as EPVul
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.boards.generate import (
    contract_of,
    random_auction,
    random_board,
    random_deal,
    random_play_with_revoke,
)
from controller.engine import Engine, Outgoing
from controller.formats.events import record_events
from controller.laws.cards import (
    FULL_DECK,
    PASS,
    Call,
    Contract,
    Deal,
    Seat,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from controller.laws.record import AuctionEntry, BoardRecord, DealInfo, PlayedTrick

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def run(record: BoardRecord, *, known: bool, events: list[dict[str, Any]] | None = None
        ) -> tuple[Engine, list[Outgoing]]:
    info = DealInfo(record.board, record.dealer, record.vulnerability,
                    record.deal if known else None)
    engine = Engine(deals={record.board: info})
    outs: list[Outgoing] = []
    for event in events if events is not None else record_events(record, scans=known):
        outs += engine.handle("bridge/1/event", event)
    return engine, outs


def payloads(outs: list[Outgoing], kind: str) -> list[dict[str, Any]]:
    return [o.payload for o in outs if o.topic.endswith("/" + kind)]


def endplay_score(contract: Contract, declarer: Seat, vul: Vulnerability, tricks: int) -> int:
    """The same score by endplay (``Contract("4SSX-3").score(...)``), from NS's side."""
    assert contract.bid is not None
    over = tricks - contract.bid.level - 6
    text = (f"{contract.bid.level}{'N' if contract.bid.denomination == 4 else contract.bid}"
            f"{declarer.name}{contract.doubling.suffix}{'=' if over == 0 else f'{over:+d}'}")
    if contract.bid.denomination != 4:
        text = text.replace(f"{contract.bid.level}{contract.bid}", str(contract.bid), 1)
    ep_vul = {Vulnerability.NONE: EPVul.none, Vulnerability.NS: EPVul.ns,
              Vulnerability.EW: EPVul.ew, Vulnerability.ALL: EPVul.both}[vul]
    score = int(EPContract(text).score(ep_vul))
    return score if declarer.side.value == "NS" else -score


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), board=st.integers(1, 36), known=st.booleans())
def test_random_legal_boards_raise_no_alert_and_score_right(seed: int, board: int,
                                                             known: bool) -> None:
    rb = random_board(random.Random(seed), board)
    record = rb.record
    _, outs = run(record, known=known)
    assert payloads(outs, "alert") == [] and payloads(outs, "error") == []
    result = payloads(outs, "result")[-1]
    assert result["contract"] == str(record.contract)
    if record.declarer is None:
        assert result["score_ns"] == 0 and "declarer" not in result
        return
    assert result["declarer"] == str(record.declarer)
    assert result["tricks"] == result["tricks_played"] == rb.declarer_tricks
    assert record.contract is not None and rb.declarer_tricks is not None
    assert result["score_ns"] == endplay_score(record.contract, record.declarer,
                                               record.vulnerability, rb.declarer_tricks)


def expected_transfer(tricks: list[PlayedTrick], offender: Seat, t: int) -> int:
    """Law 64A as laws.md 4.4 reads it, for one established revoke."""
    side = offender.side
    won_later = [tr.number for tr in tricks
                 if tr.number > t and tr.winner is not None and tr.winner.side is side]
    if tricks[t - 1].winner is offender:
        return 1 + (1 if won_later else 0)               # 64A1
    if tricks[t - 1].winner is not None and tricks[t - 1].winner.side is side:
        return 1                                          # 64A2: the revoke trick itself
    return 1 if won_later else 0                          # 64A2 / 64B1


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), revoke_trick=st.integers(1, 11), known=st.booleans())
def test_injected_revoke_is_flagged_established_and_adjusted(seed: int, revoke_trick: int,
                                                             known: bool) -> None:
    rng = random.Random(seed)
    for _ in range(50):
        number = rng.randint(1, 16)
        deal = random_deal(rng)
        dealer = board_dealer(number)
        calls = random_auction(rng, dealer, pass_weight=0.3)
        contract, declarer = contract_of(calls)
        if declarer is None:
            continue
        played = random_play_with_revoke(rng, deal, contract, declarer, revoke_trick)
        if played is not None:
            break
    else:
        return
    tricks, offender, _suit = played
    record = BoardRecord(number, dealer, board_vulnerability(number), deal,
                         tuple(AuctionEntry(s, c) for s, c in calls), contract, declarer,
                         tuple(tricks))
    _, outs = run(record, known=known)
    final: dict[int, dict[str, Any]] = {}
    for alert in payloads(outs, "alert"):
        final[alert["id"]] = alert
    revokes = [a for a in final.values() if a["code"] == "REVOKE"]
    assert len(revokes) == 1, list(final.values())
    revoke = revokes[0]
    assert revoke["seat"] == str(offender) and revoke["trick"] == revoke_trick
    assert revoke["status"] == "established"
    raw = sum(1 for t in tricks if t.winner is not None and t.winner.side is declarer.side)
    # 64B3: dummy's cards are faced on the table, so dummy's revoke transfers nothing
    transfer = 0 if offender is declarer.partner else expected_transfer(tricks, offender,
                                                                        revoke_trick)
    expected = raw + transfer if offender.side is not declarer.side else raw - transfer
    result = payloads(outs, "result")[-1]
    assert result["tricks_played"] == raw
    assert result["tricks"] == expected


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(
    ["insufficient", "out_of_rotation", "inadmissible_double", "above_seven",
     "opening_lead_out_of_turn"]))
def test_injected_auction_and_lead_irregularities_are_flagged(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    rb = random_board(rng, rng.randint(1, 16))
    record = rb.record
    calls = [(e.seat, e.call) for e in record.auction]
    bids = [i for i, (_, c) in enumerate(calls) if c.is_bid]
    expected = {"insufficient": "INSUFFICIENT_BID", "out_of_rotation": "CALL_OUT_OF_ROTATION",
                "inadmissible_double": "INADMISSIBLE_DOUBLE", "above_seven": "BID_ABOVE_SEVEN",
                "opening_lead_out_of_turn": "OPENING_LEAD_OUT_OF_TURN"}[kind]
    if kind == "insufficient":
        if not bids or calls[bids[0]][1].bid is None:
            return
        first = bids[0]
        seat = calls[first][0].lho
        # the next player bids 1C, or the same bid: never sufficient over the first bid
        low = calls[first][1]
        calls = calls[: first + 1] + [(seat, low)]
    elif kind == "out_of_rotation":
        calls = calls[:1] + [(calls[0][0].partner, PASS)]
    elif kind == "inadmissible_double":
        # a double of partner's bid
        if not bids or bids[0] + 1 >= len(calls):
            return
        first = bids[0]
        calls = calls[: first + 1] + [(calls[first][0].lho, PASS),
                                      (calls[first][0].partner, Call.parse("X"))]
    elif kind == "above_seven":
        calls = [(record.dealer, Call.parse("8C"))]
    elif kind == "opening_lead_out_of_turn":
        if record.declarer is None:
            return
        wrong = record.declarer.rho  # the opening leader's partner leads
        trick = record.tricks[0]
        card = next(iter(sorted(record.deal[wrong])))  # type: ignore[index]
        truncated = replace(record, tricks=(PlayedTrick(1, wrong, ((wrong, card),)),))
        _, outs = run(truncated, known=True)
        assert expected in {a["code"] for a in payloads(outs, "alert")}
        assert trick.leader is record.declarer.lho
        return
    events = record_events(replace(record, auction=tuple(AuctionEntry(s, c) for s, c in calls),
                                   tricks=()), scans=True, return_hands=False)
    _, outs = run(record, known=True, events=events)
    assert expected in {a["code"] for a in payloads(outs, "alert")}


# -- any sequence of well-formed events and rulings: never an internal error ----------------

_CARDS = [str(c) for c in FULL_DECK]
_CALLS = ["Pass", "X", "XX", "8C", "STOP"] + [f"{lv}{d}" for lv in range(1, 8)
                                             for d in ("C", "D", "H", "S", "NT")]
_SEATS = ["N", "E", "S", "W"]


def _random_input(rng: random.Random, deal: Deal) -> tuple[str, dict[str, Any]]:
    r = rng.random()
    seat = rng.choice(_SEATS)
    if r < 0.45:  # mostly cards from the seat's own hand, sometimes any card
        own = [str(c) for c in deal[Seat[seat]]]
        card = rng.choice(own if rng.random() < 0.85 else _CARDS)
        action = "present" if rng.random() < 0.85 else "removed"
        return "event", {"type": "tag", "zone": "tray", "seat": seat, "action": action,
                         "uid": "C" + card, "card": card}
    if r < 0.75:
        call = rng.choice(_CALLS[:4] * 6 + _CALLS) if rng.random() < 0.5 else "Pass"
        action = "present" if rng.random() < 0.9 else "removed"
        return "event", {"type": "tag", "zone": "bid", "seat": seat, "action": action,
                         "uid": "B" + call, "call": call}
    if r < 0.80:
        return "event", {"type": "tag", "zone": rng.choice(["tray", "bid"]), "seat": seat,
                         "action": rng.choice(["present", "removed"]), "uid": "DEAD",
                         "unknown": True}
    if r < 0.83:
        return "event", {"type": "tag", "zone": "board", "action": "present", "uid": "W",
                         "board": rng.choice([1, 1, 1, 2])}
    if r < 0.86:
        return "event", {"type": "button", "button": rng.choice(["director", "claim", "undo",
                                                                 "next"]), "seat": seat}
    kind = rng.choice(["accept", "reject", "undo", "adjust", "comparable", "not_comparable",
                       "lead", "option", "claim", "clear"])
    ruling: dict[str, Any] = {"ruling": kind, "alert": rng.randint(1, 12)}
    if kind in ("adjust", "claim"):
        ruling["tricks"] = rng.randint(0, 13)
    if kind == "option":
        ruling["option"] = rng.choice(["highest", "lowest", "must_lead", "must_not_lead", "54A"])
        ruling["suit"] = rng.choice("SHDC")
    if rng.random() < 0.3:
        ruling["seat"], ruling["card"] = seat, rng.choice(_CARDS)
    return "ruling", ruling


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), known=st.booleans(),
       rules=st.sampled_from(["2007", "2017"]))
def test_random_event_streams_never_break_the_controller(seed: int, known: bool,
                                                         rules: str) -> None:
    from controller.laws.cards import Rules

    rng = random.Random(seed)
    deal = random_deal(rng)
    deals = {1: DealInfo(1, board_dealer(1), board_vulnerability(1), deal if known else None)}
    engine = Engine(deals=deals, rules=Rules.parse(rules))
    engine.handle("bridge/1/event", {"v": 1, "src": "b", "seq": 0, "ts": 0.0, "type": "tag",
                                     "zone": "board", "action": "present", "uid": "W",
                                     "board": 1})
    for seq in range(1, 400):
        kind, body = _random_input(rng, deal)
        outs = engine.handle(f"bridge/1/{kind}", {"v": 1, "src": kind, "seq": seq,
                                                  "ts": float(seq), **body})
        errors = [o.payload["error"] for o in outs if o.topic.endswith("/error")]
        assert not any("internal error" in e for e in errors), (seq, kind, body, errors)
        assert outs, (kind, body)  # every applied input answers with at least its state
    assert engine.stats["internal_errors"] == 0
    state = engine.snapshot("1")
    assert state["phase"] in {"scanning", "auction", "lead", "play", "complete", "done"}
