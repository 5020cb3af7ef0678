"""controller/evidence/tempo.py: times of calls and cards, and the documented flag rule
(docs/tempo.md)."""

from __future__ import annotations

import random
import tomllib
from collections.abc import Sequence
from pathlib import Path

import pytest

from controller.evidence.tempo import DEFAULT_TEMPO, TempoLog, TempoPolicy, is_skip_bid
from controller.indicators.policy import IndicatorPolicy, PolicyError
from controller.laws.cards import FULL_DECK, Call, Card, Seat
from firmware_bridge.examples import EXAMPLES


def auction(log: TempoLog, dealer: Seat, calls: Sequence[tuple[str, float]],
            start: float = 1000.0) -> float:
    """Calls from ``dealer`` round the table, each ``seconds`` after the one before."""
    ts, seat = start, dealer
    for text, seconds in calls:
        ts += seconds
        log.add_call(seat, Call.parse(text), ts)
        seat = seat.lho
    return ts


def kinds(log: TempoLog, policy: TempoPolicy = DEFAULT_TEMPO,
          declarer: Seat | None = None, over: bool = True) -> list[tuple[str, str, str]]:
    return [(f.kind, f.seat.name, f.text) for f in log.flags(policy, declarer, over)]


@pytest.mark.parametrize("call, previous, skip", [
    ("4H", "1H", True), ("2H", "1H", False), ("2H", "1S", False), ("3H", "1S", True),
    ("1NT", "1S", False), ("2NT", "1S", True), ("2C", "1S", False), ("2S", None, True),
    ("1S", None, False), ("Pass", "1S", False), ("X", "1S", False),
])
def test_skip_bids(call: str, previous: str | None, skip: bool) -> None:
    assert is_skip_bid(Call.parse(call), Call.parse(previous) if previous else None) is skip


def test_times_are_since_the_previous_call_or_card() -> None:
    log = TempoLog(10)
    auction(log, Seat.E, [("1C", 5.0), ("1H", 2.5), ("Pass", 1.0)])
    log.add_card(Seat.W, Card.parse("CT"), 1, 1000.0 + 8.5 + 4.0)
    assert [e.seconds for e in log.calls] == [None, 2.5, 1.0]   # the first call has no time
    assert log.cards[0].seconds == 4.0
    wire = log.to_wire(DEFAULT_TEMPO, Seat.S, True)
    assert wire["calls"] == [["E", "1C", None], ["S", "1H", 2.5], ["W", "Pass", 1.0]]
    assert wire["cards"] == [["W", "CT", 1, 4.0]]


def test_clock_skew_never_gives_a_negative_time() -> None:
    log = TempoLog(1)
    log.add_call(Seat.N, Call.parse("1C"), 100.0)
    log.add_call(Seat.E, Call.parse("Pass"), 99.5)
    assert log.calls[1].seconds == 0.0


def test_slow_pass_partner_could_act_on_is_flagged_beyond_six_seconds() -> None:
    slow, quick = TempoLog(10), TempoLog(10)
    # E 1C, S 1H, W Pass (partner N still to call), N 2H, then three passes
    auction(slow, Seat.E, [("1C", 0), ("1H", 2), ("Pass", 7), ("2H", 2), ("Pass", 2),
                           ("Pass", 2), ("Pass", 2)])
    auction(quick, Seat.E, [("1C", 0), ("1H", 2), ("Pass", 5.5), ("2H", 2), ("Pass", 2),
                            ("Pass", 2), ("Pass", 2)])
    assert kinds(slow) == [("slow_pass", "W", "Pass")]
    flag = slow.flags(DEFAULT_TEMPO, Seat.S, True)[0]
    assert flag.law == "16B" and flag.index == 2 and flag.seconds == 7
    assert kinds(quick) == []


def test_the_pass_ending_the_auction_is_judged_as_any_call() -> None:
    log = TempoLog(10)
    auction(log, Seat.E, [("1C", 0), ("1H", 2), ("Pass", 2), ("2H", 2), ("Pass", 2),
                          ("Pass", 2), ("Pass", 9)])
    assert kinds(log, over=True) == []                      # 9 s: under the call's 10 s
    assert kinds(log, over=False) == [("slow_pass", "W", "Pass")]   # partner could still act


def test_pass_after_a_skip_bid_is_judged_beyond_the_stop_pause() -> None:
    def board(pause: float) -> TempoLog:
        log = TempoLog(10)
        # N's 4H after 1H is a skip bid: E must pause about 10 s (the Stop regulation)
        auction(log, Seat.E, [("1C", 0), ("1H", 2), ("Pass", 2), ("4H", 3), ("Pass", pause),
                              ("Pass", 2), ("Pass", 2)])
        return log

    assert kinds(board(15.0)) == []           # the Stop pause and 5 s more: normal
    assert kinds(board(17.0)) == [("slow_pass_after_skip", "E", "Pass")]
    flag = board(17.0).flags(DEFAULT_TEMPO, Seat.N, True)[0]
    assert flag.limit == 16.0 and flag.law == "16B"


def test_slow_call_needs_both_the_absolute_and_the_relative_threshold() -> None:
    log = TempoLog(1)
    # N: 1C, 1S, 3NT. N's usual pace is 5 s; a 12 s bid is over 10 s but under 3 x 5 s
    auction(log, Seat.N, [("1C", 0), ("Pass", 1), ("1H", 1), ("Pass", 1), ("1S", 5),
                          ("Pass", 1), ("2H", 1), ("Pass", 1), ("2NT", 5), ("Pass", 1),
                          ("3NT", 1), ("Pass", 1), ("Pass", 12)])
    assert kinds(log) == []
    fast = TempoLog(1)
    auction(fast, Seat.N, [("1C", 0), ("Pass", 1), ("1H", 1), ("Pass", 1), ("1S", 2),
                           ("Pass", 1), ("2H", 1), ("Pass", 1), ("2NT", 2), ("Pass", 1),
                           ("3NT", 1), ("Pass", 1), ("Pass", 12)])
    # N's usual is 2 s: 12 s is over both 10 s and 3 x 2 s
    assert kinds(fast) == [("slow_call", "N", "Pass")]


def play(log: TempoLog, cards: Sequence[tuple[str, str, float]], start: float) -> None:
    ts = start
    for i, (seat, card, seconds) in enumerate(cards):
        ts += seconds
        log.add_card(Seat.parse(seat), Card.parse(card), i // 4 + 1, ts)


TRICKS = [("W", "CT"), ("N", "C3"), ("E", "CA"), ("S", "C7"), ("E", "CK"), ("S", "CQ"),
          ("W", "C4"), ("N", "C6"), ("E", "S3"), ("S", "S5"), ("W", "ST"), ("N", "SQ"),
          ("N", "H5"), ("E", "H2"), ("S", "HA"), ("W", "H3"), ("S", "HK"), ("W", "D2"),
          ("N", "HT"), ("E", "H6")]


def timed(slow: dict[int, float]) -> list[tuple[str, str, float]]:
    return [(s, c, slow.get(i, 2.0)) for i, (s, c) in enumerate(TRICKS)]


def test_slow_card_in_the_play() -> None:
    log = TempoLog(10)
    play(log, timed({17: 20.0}), 0.0)          # W's D2 at trick 5: 20 s, usual 2 s
    assert kinds(log, declarer=Seat.S) == [("slow_card", "W", "D2")]
    flag = log.flags(DEFAULT_TEMPO, Seat.S, True)[0]
    assert flag.law == "73D1" and flag.trick == 5 and flag.usual == 2.0
    quick = TempoLog(10)
    play(quick, timed({17: 14.0}), 0.0)       # under 15 s
    assert kinds(quick, declarer=Seat.S) == []


def test_trick_one_has_its_own_threshold_and_dummy_is_declarers_pace() -> None:
    log = TempoLog(10)
    # opening lead 30 s (under 45 s), declarer's plan at trick 1 (S) 40 s: not flagged;
    # dummy's (N) H5 at trick 4 after 20 s: declarer's decision, flagged against his pace
    play(log, timed({0: 30.0, 3: 40.0, 12: 20.0}), 0.0)
    flags = log.flags(DEFAULT_TEMPO, Seat.S, True)
    assert [(f.seat.name, f.text, f.trick) for f in flags] == [("N", "H5", 4)]
    assert flags[0].usual == 2.0


def test_withdrawn_call_leaves_the_log() -> None:
    log = TempoLog(1)
    auction(log, Seat.N, [("1C", 0), ("Pass", 9), ("1H", 1)])
    log.restate_calls([(Seat.N, Call.parse("1C")), (Seat.E, Call.parse("1D"))])
    assert [(e.seat.name, e.text, e.seconds) for e in log.calls] == [
        ("N", "1C", None), ("E", "1D", None)]
    assert kinds(log, over=False) == []


def test_after_a_struck_call_the_time_runs_from_the_last_standing_one() -> None:
    log = TempoLog(1)
    auction(log, Seat.N, [("1C", 0), ("1D", 3), ("1H", 2)])     # E's 1D is struck (undo)
    log.restate_calls([(Seat.N, Call.parse("1C")), (Seat.E, Call.parse("1D"))])
    log.add_call(Seat.S, Call.parse("1S"), 1000.0 + 9.0)
    assert log.calls[-1].seconds == 6.0           # since E's 1D at 1003, not the struck 1H


def test_disabled_policy_flags_nothing() -> None:
    log = TempoLog(10)
    play(log, timed({17: 60.0}), 0.0)
    assert kinds(log, TempoPolicy(enabled=False), Seat.S) == []


def test_thresholds_from_the_policy_file() -> None:
    policy = IndicatorPolicy.from_mapping({"tempo": {"pass_seconds": 4, "card_factor": 2.5}})
    assert policy.tempo.pass_seconds == 4.0 and policy.tempo.card_factor == 2.5
    assert policy.tempo.call_seconds == DEFAULT_TEMPO.call_seconds
    both = IndicatorPolicy.from_mapping({"indicator": {"default": "director"},
                                         "tempo": {"enabled": False}})
    assert not both.tempo.enabled and str(both.default) == "director"
    assert IndicatorPolicy.from_mapping(both.to_mapping()) == both


@pytest.mark.parametrize("section, fragment", [
    ({"pass_second": 4}, "unknown keys"),
    ({"pass_seconds": "slow"}, "pass_seconds"),
    ({"pass_seconds": -1}, "pass_seconds"),
    ({"card_factor": 0.5}, "at least 1"),
    ({"enabled": "yes"}, "enabled"),
    ({"min_samples": 1.5}, "min_samples"),
    ("fast", "must be a table"),
])
def test_bad_tempo_section_is_a_clear_error(section: object, fragment: str) -> None:
    with pytest.raises(PolicyError, match=fragment):
        IndicatorPolicy.from_mapping({"tempo": section})


def test_the_documented_defaults_are_the_codes() -> None:
    """docs/tempo.md's policy block and the shipped policy.toml say what the code does."""
    root = Path(__file__).resolve().parents[1]
    shipped = IndicatorPolicy.load(EXAMPLES / "policy.toml")
    assert shipped == IndicatorPolicy()
    doc = (root / "docs" / "tempo.md").read_text(encoding="utf-8")
    block = doc.split("```toml\n", 1)[1].split("```", 1)[0]
    assert IndicatorPolicy.from_mapping(tomllib.loads(block)).tempo == DEFAULT_TEMPO
    assert set(tomllib.loads(block)["tempo"]) == set(DEFAULT_TEMPO.to_mapping())


def test_rows_follow_a_correction_and_the_calls_after_it() -> None:
    """The payload's rows are made when it is built: one built before a correction is not
    kept for the calls that no longer stand, and the calls after it get theirs."""
    log = TempoLog(1)
    auction(log, Seat.N, [("1C", 0), ("1D", 3), ("1H", 2)])
    assert log.to_wire(DEFAULT_TEMPO, None, False)["calls"] == [
        ["N", "1C", None], ["E", "1D", 3.0], ["S", "1H", 2.0]]
    log.restate_calls([(Seat.N, Call.parse("1C")), (Seat.E, Call.parse("2D"))])
    log.add_call(Seat.S, Call.parse("2H"), 1000.0 + 7.125)
    assert log.to_wire(DEFAULT_TEMPO, None, False)["calls"] == [
        ["N", "1C", None], ["E", "2D", None], ["S", "2H", 7.12]]    # since N's 1C


def _plain_median(times: list[float], min_samples: int) -> float | None:
    if not times or len(times) < min_samples:
        return None
    ordered, half = sorted(times), len(times) // 2
    return ordered[half] if len(times) % 2 else (ordered[half - 1] + ordered[half]) / 2


def _plain_rule(log: TempoLog, policy: TempoPolicy, declarer: Seat | None,
                over: bool) -> list[tuple[str, str, int, float | None, float]]:
    """docs/tempo.md's rule written out for every call and card, no shortcut taken."""
    out: list[tuple[str, str, int, float | None, float]] = []
    calls, cards = log.calls, log.cards
    for i, e in enumerate(calls):
        assert e.call is not None
        if e.seconds is None:
            continue
        usual = _plain_median([o.seconds for j, o in enumerate(calls) if j != i
                               and o.seat is e.seat and o.seconds is not None],
                              policy.min_samples)
        bids = [o.call for o in calls[:i - 1] if o.call is not None and o.call.is_bid]
        prev = calls[i - 1] if i else None
        skip = prev is not None and prev.call is not None and prev.call.is_bid and \
            prev.seat.is_opponent_of(e.seat) and is_skip_bid(prev.call, bids[-1] if bids else None)
        partner_pass = e.call.is_pass and not (over and i == len(calls) - 1)
        if partner_pass and skip:
            kind, limit = "slow_pass_after_skip", policy.stop_seconds + policy.pass_seconds
        elif partner_pass:
            kind, limit = "slow_pass", max(policy.pass_seconds, policy.pass_factor * usual) \
                if usual is not None else policy.pass_seconds
        else:
            kind, limit = "slow_call", max(policy.call_seconds, policy.call_factor * usual) \
                if usual is not None else policy.call_seconds
        if e.seconds > limit:
            out.append((kind, e.text, i, usual, limit))
    dummy = declarer.partner if declarer is not None else None
    player = [declarer if e.seat is dummy else e.seat for e in cards]
    for i, e in enumerate(cards):
        if e.seconds is None:
            continue
        usual = _plain_median([o.seconds for j, o in enumerate(cards) if j != i
                               and player[j] is player[i] and o.seconds is not None],
                              policy.min_samples)
        absolute = policy.first_trick_seconds if e.trick == 1 else policy.card_seconds
        limit = absolute if usual is None else max(absolute, policy.card_factor * usual)
        if e.seconds > limit:
            out.append(("slow_card", e.text, i, usual, limit))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_flags_are_the_rule_written_out(seed: int) -> None:
    """The flags (worked out only for times past an absolute threshold) are those of the
    rule applied to every call and card, on random boards, times and thresholds."""
    rng = random.Random(seed)
    seen = 0
    for _ in range(300):
        policy = TempoPolicy.from_mapping({key: rng.choice(values) for key, values in {
            "pass_seconds": (0.0, 2.0, 6.0), "call_seconds": (0.0, 3.0, 10.0),
            "stop_seconds": (0.0, 10.0), "card_seconds": (0.0, 3.0, 15.0),
            "first_trick_seconds": (0.0, 4.0, 45.0), "min_samples": (0, 1, 2, 3),
            "pass_factor": (1.0, 2.0), "call_factor": (1.0, 3.0), "card_factor": (1.0, 3.0),
        }.items()})
        log, ts = TempoLog(1), 1000.0
        for _ in range(rng.randint(0, 40)):
            ts += rng.choice((0.0, 0.5, 1.0, 2.0, 3.0, 4.5, 7.0, 12.0, 20.0, 50.0))
            seat = rng.choice(list(Seat))
            if rng.random() < 0.05:
                log.director_at_table()
            if rng.random() < 0.4:
                call = Call.parse(rng.choice(("Pass", "Pass", "X", "1C", "1S", "2H", "4S")))
                log.add_call(seat, call, ts)
            else:
                log.add_card(seat, rng.choice(FULL_DECK), rng.choice((1, 1, 2, 5)), ts)
        declarer, over = rng.choice([*Seat, None]), rng.random() < 0.5
        flags = [(f.kind, f.text, f.index, f.usual, f.limit)
                 for f in log.flags(policy, declarer, over)]
        assert flags == _plain_rule(log, policy, declarer, over)
        seen += len(flags)
    assert seen > 100    # the boards do cross the thresholds
