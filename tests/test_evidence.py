"""The engine's director-only evidence: tempo flags and the claim position of replayed boards
with timestamps built to cross and not cross the thresholds (controller/evidence/payload.py)."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from boardevents import BoardScript, EventWriter, clean_board, t08_revoke, trick_winner

from controller.engine import Engine, Outgoing
from controller.laws.cards import Card, Deal, Seat, Suit

TABLE = "7"
START = 1_764_400_000.0


def stamped(script: BoardScript, call_secs: Mapping[int, float] | None = None,
            card_secs: Mapping[int, float] | None = None,
            default: float = 2.0, hands_back: bool = True) -> Iterator[dict[str, Any]]:
    """The board's events, each call and played card ``seconds`` after the call or card
    before it (``default`` unless given by index); other events in between. Without
    ``hands_back`` the events end with the last card played (a claim comes next)."""
    call_secs, card_secs = call_secs or {}, card_secs or {}
    ts, calls, cards = START, 0, 0
    for ev in EventWriter(f"table-{TABLE}-pi").board(script):
        if ev.get("zone") == "bid":
            ts += call_secs.get(calls, default)
            calls += 1
        elif ev.get("zone") == "tray" and ev["action"] == "present" \
                and calls == len(script.calls):
            ts += card_secs.get(cards, default)
            cards += 1
        elif not hands_back and calls == len(script.calls) and ev["action"] == "removed":
            return
        else:
            ts += 0.001
        ev["ts"] = round(ts, 3)
        yield ev


def run(engine: Engine, events: Iterator[dict[str, Any]]) -> list[Outgoing]:
    out: list[Outgoing] = []
    for ev in events:
        out += engine.handle(f"bridge/{TABLE}/event", ev)
    return out


def evidence(outs: list[Outgoing]) -> dict[str, Any]:
    found = [o for o in outs if o.topic == f"bridge/{TABLE}/evidence"]
    assert found, "no evidence published"
    assert all(o.retain for o in found)
    return found[-1].payload


def flags(payload: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    return [(f["kind"], f["seat"], f.get("call") or f.get("card"))
            for f in payload["tempo"]["flags"]]


def assert_never_at_the_table(outs: list[Outgoing]) -> None:
    """Tempo and claim evidence go to the evidence topic only: not the table's indicator or
    display, not the state or result every listener (and the public relay) reads."""
    for o in outs:
        if o.topic.endswith("/evidence"):
            continue
        text = json.dumps(o.payload)
        assert "slow_" not in text and "tempo" not in text and "makeable" not in text, o


def t08_board(call_secs: Mapping[int, float], card_secs: Mapping[int, float]
              ) -> list[Outgoing]:
    # T08: E 1C, S 1H, W Pass, N 4H (a skip bid), E Pass, S Pass, W Pass; 4H by S
    return run(Engine(), stamped(t08_revoke(), call_secs, card_secs))


def test_auction_pass_after_a_skip_bid_crosses_the_threshold() -> None:
    outs = t08_board({4: 18.0}, {})
    payload = evidence(outs)
    assert payload["board"] == 10 and payload["table"] == TABLE
    assert flags(payload) == [("slow_pass_after_skip", "E", "Pass")]
    flag = payload["tempo"]["flags"][0]
    assert flag["seconds"] == 18.0 and flag["law"] == "16B" and flag["index"] == 4
    calls = payload["tempo"]["calls"]
    assert calls[0] == ["E", "1C", None] and calls[4] == ["E", "Pass", 18.0]
    assert len(payload["tempo"]["cards"]) == 52
    assert_never_at_the_table(outs)


def test_auction_pass_after_a_skip_bid_within_the_stop_pause_is_not_flagged() -> None:
    outs = t08_board({4: 12.0}, {})
    assert flags(evidence(outs)) == []


def test_slow_pass_partner_could_act_on() -> None:
    # W's pass over 1H (no skip), with N still to call: 8 s against the pass's 6 s
    assert flags(evidence(t08_board({2: 8.0}, {}))) == [("slow_pass", "W", "Pass")]
    assert flags(evidence(t08_board({2: 5.0}, {}))) == []


def test_play_slow_card_crosses_and_does_not_cross() -> None:
    outs = t08_board({}, {17: 25.0})    # W's D2 at trick 5
    assert flags(evidence(outs)) == [("slow_card", "W", "D2")]
    flag = evidence(outs)["tempo"]["flags"][0]
    assert flag["trick"] == 5 and flag["law"] == "73D1" and flag["usual"] == 2.0
    assert_never_at_the_table(outs)
    assert flags(evidence(t08_board({}, {17: 14.0}))) == []


def test_evidence_published_at_once_when_a_card_crosses_the_absolute_threshold() -> None:
    engine = Engine()
    events = list(stamped(t08_revoke(), {}, {17: 25.0}))
    # the second time D2 is put down is its play (the first is W's hand scan)
    d2 = [i for i, ev in enumerate(events) if ev.get("card") == "D2"
          and ev["action"] == "present"][-1]
    out = run(engine, iter(events[:d2]))
    assert flags(evidence(out)) == []
    out = run(engine, iter(events[d2:d2 + 1]))
    assert flags(evidence(out)) == [("slow_card", "W", "D2")]
    retained = {o.topic: o.payload for o in engine.retained()}
    assert flags(retained[f"bridge/{TABLE}/evidence"]) == [("slow_card", "W", "D2")]


def test_no_evidence_topic_without_the_kind() -> None:
    engine = Engine(kinds=frozenset({"state", "result"}))
    outs = run(engine, stamped(t08_revoke(), {4: 18.0}))
    assert not [o for o in outs if o.topic.endswith("/evidence")]
    assert not [o for o in engine.retained() if o.topic.endswith("/evidence")]


def claimed_board(cards_played: int, tricks: int) -> tuple[Engine, list[Outgoing],
                                                           BoardScript]:
    full = clean_board(5)
    played = [str(c) for _, c in full.full_play()[:cards_played]]
    script = BoardScript(board=5, deal=full.deal, calls=full.calls, play=played, auto=False,
                         trump=Suit.H, declarer=Seat.S)
    engine = Engine()
    outs = run(engine, stamped(script, hands_back=False))
    assert not [o for o in outs if o.topic.endswith("/alert")]
    outs += engine.handle(f"bridge/{TABLE}/ruling", {"v": 1, "src": "td", "seq": 1,
                                                     "ts": START + 999, "ruling": "claim",
                                                     "tricks": tricks})
    return engine, outs, script


def test_claim_position_is_recorded_with_the_board() -> None:
    engine, outs, script = claimed_board(24, 5)
    claim = evidence(outs)["claim"]
    assert claim["tricks"] == 5 and claim["remaining"] == 7 and claim["trick"] == 7
    assert claim["declarer"] == "S" and claim["strain"] == "H"
    # the remaining hands are the deal less the 24 cards played, led by trick 6's winner
    deal = Deal.from_pbn(script.deal)
    order = clean_board(5).full_play()
    played = {c for _, c in order[:24]}
    assert Deal.from_pbn(claim["hands"]).hands == tuple(
        frozenset(deal[s] - played) for s in Seat)
    assert claim["leader"] == trick_winner(order[20:24], Suit.H).name
    result = [o for o in outs if o.topic.endswith("/result")][-1].payload
    assert "claim" not in result       # the result stays as the contract has it
    assert_never_at_the_table(outs)


def test_claim_mid_trick_is_of_the_tricks_from_that_trick_on() -> None:
    _, outs, _ = claimed_board(26, 6)      # two cards of trick 7 on the table
    claim = evidence(outs)["claim"]
    assert claim["remaining"] == 7 and claim["trick"] == 7
    assert all(len(hand.replace(".", "")) == 7 for hand in claim["hands"][2:].split())


def test_claim_without_known_hands_says_so() -> None:
    engine = Engine()
    # no hand scans: the board wallet, the auction, a lead, then the claim
    w = EventWriter(f"table-{TABLE}-pi")
    events = [w.event(type="tag", zone="board", action="present", uid="BD", board=1)]
    for i, (seat, call) in enumerate([("N", "1NT"), ("E", "Pass"), ("S", "3NT"),
                                      ("W", "Pass"), ("N", "Pass"), ("E", "Pass")]):
        events.append(w.call(Seat.parse(seat), call, i))
    events.append(w.tray(Seat.E, Card.parse("S2"), "present", "B1"))
    outs = run(engine, iter(events))
    outs += engine.handle(f"bridge/{TABLE}/ruling", {"v": 1, "src": "td", "seq": 1, "ts": 5.0,
                                                     "ruling": "claim", "tricks": 9})
    claim = evidence(outs)["claim"]
    assert claim["hands"] is None and claim["tricks"] == 9 and claim["remaining"] == 13


@pytest.mark.parametrize("ruling", ["adjust", "undo"])
def test_other_rulings_carry_no_claim(ruling: str) -> None:
    engine = Engine()
    run(engine, stamped(clean_board(5)))
    payload = {"v": 1, "src": "td", "seq": 1, "ts": 1.0, "ruling": ruling}
    if ruling == "adjust":
        payload["tricks"] = 9
    outs = engine.handle(f"bridge/{TABLE}/ruling", payload)
    for o in outs:
        if o.topic.endswith("/evidence"):
            assert "claim" not in o.payload


def test_a_claim_the_core_refuses_leaves_no_position() -> None:
    engine, outs, _ = claimed_board(24, 5)
    # a second claim after play ended, and one of more tricks than are left on a new engine
    assert not [o for o in engine.handle(f"bridge/{TABLE}/ruling", {
        "v": 1, "src": "td", "seq": 2, "ts": START + 1000, "ruling": "claim", "tricks": 3})
        if o.topic.endswith("/evidence") and o.payload.get("claim", {}).get("tricks") == 3]
    _, outs, _ = claimed_board(24, 8)          # 7 tricks left: 8 is refused
    assert "claim" not in evidence(outs)


@pytest.mark.parametrize("waiting", ["director", "claim", "ruling"])
def test_the_wait_for_the_director_is_no_ones_thinking_time(waiting: str) -> None:
    """W's D2 comes 25 s after the card before it, but the director was called (or a claim
    pressed, or a ruling given) meanwhile: that card is not timed, nor flagged (Law 73D1);
    the card after it is timed again."""
    events = list(stamped(t08_revoke(), {}, {17: 25.0}))
    slow = next(i for i in range(1, len(events))
                if events[i]["ts"] - events[i - 1]["ts"] > 20)
    engine = Engine()
    outs = run(engine, iter(events[:slow]))
    if waiting == "ruling":
        outs += engine.handle(f"bridge/{TABLE}/ruling", {
            "v": 1, "src": "console", "seq": 1, "ts": START, "ruling": "comparable"})
    else:
        outs += engine.handle(f"bridge/{TABLE}/event", {
            "v": 1, "src": "table-7-buttons", "seq": 1, "ts": events[slow - 1]["ts"] + 1,
            "type": "button", "button": waiting, "seat": "E"})
    outs += run(engine, iter(events[slow:]))
    payload = evidence(outs)
    assert flags(payload) == []
    cards = payload["tempo"]["cards"]
    index = next(i for i, row in enumerate(cards) if row[:2] == ["W", "D2"])
    assert cards[index][3] is None and cards[index + 1][3] == 2.0


def test_director_and_claim_presses_are_published_with_table_board_seat_and_time() -> None:
    """1.14: each "director" or "claim" press comes out on ``evidence.presses`` (every press
    of the board so far, with its seat, time and src/seq), retained; "undo" and "next" do
    not; nothing changes at the table (the state is the same but for ``last``); the next
    board starts with none."""
    from controller import wire

    events = list(stamped(t08_revoke()))
    engine = Engine()
    before = [o.payload for o in run(engine, iter(events[:40]))
              if o.topic == f"bridge/{TABLE}/state"][-1]
    outs = engine.handle(f"bridge/{TABLE}/event", {
        "v": 1, "src": "table-7-buttons", "seq": 1, "ts": START + 50, "type": "button",
        "button": "director", "seat": "S"})
    after = [o.payload for o in outs if o.topic == f"bridge/{TABLE}/state"]
    assert all({**a, "last": None} == {**before, "last": None} for a in after)
    assert not [o for o in outs if o.topic.endswith(("/alert", "/feed", "/result"))]
    first = evidence(outs)
    assert first["table"] == TABLE and first["board"] == 10
    assert first["presses"] == [{"button": "director", "seat": "S", "ts": START + 50,
                                 "src": "table-7-buttons", "seq": 1}]
    outs = engine.handle(f"bridge/{TABLE}/event", {
        "v": 1, "src": "table-7-buttons", "seq": 2, "ts": START + 60, "type": "button",
        "button": "next"})
    assert [o for o in outs if o.topic.endswith("/evidence")] == []
    outs = engine.handle(f"bridge/{TABLE}/event", {
        "v": 1, "src": "table-7-buttons", "seq": 3, "ts": START + 70, "type": "button",
        "button": "claim"})
    payload = evidence(outs)
    assert [(p["button"], p["seat"], p["ts"]) for p in payload["presses"]] == [
        ("director", "S", START + 50), ("claim", None, START + 70)]
    decoded = wire.decode(wire.encode(payload), wire.Evidence)   # the contract's shape
    assert decoded.presses is not None and decoded.presses[1].seq == 3
    # the rest of the board and the next one: the presses are of board 10 only
    outs = run(engine, iter(events[40:]))
    assert evidence(outs)["presses"][0]["button"] == "director"
    nxt = [o.payload for o in run(engine, EventWriter("table-7-pi", seq=10_000).board(
        clean_board(11))) if o.topic.endswith("/evidence")]
    assert nxt and "presses" not in nxt[-1] and nxt[-1]["board"] == 11
