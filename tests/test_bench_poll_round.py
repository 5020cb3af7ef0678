"""bench/bench_poll_round.py measures what it says: the recorded round is the club build's
nine antennas with the cards laid, and the replay follows the recording transfer for
transfer (docs/benchmarks.md, "One polling round of the club build")."""

from __future__ import annotations

from types import ModuleType

from benchmodule import load_bench


def _bench() -> ModuleType:
    return load_bench("bench_poll_round")


def test_a_round_with_more_cards_costs_more_transfers_and_polls() -> None:
    bench = _bench()
    empty = bench.measure("empty", set(), rounds=2)
    play = bench.measure("play", {"north", "east", "south", "west", "board"}, rounds=2)
    # nine antennas, each at least a field off/on and a REQA nobody answers
    assert empty["transfers"] >= 9 * 10
    assert play["transfers"] > empty["transfers"] and play["extra_polls"] > empty["extra_polls"]
    # the field-off and settle sleeps of nine rounds (two each at most)
    assert 9 <= empty["sleeps"] <= 18
    assert empty["cpu_here_s"] > 0


def test_the_nbody_ratio_is_the_published_time_over_the_time_here() -> None:
    bench = _bench()
    here, ratio = bench.nbody_ratio(2000)
    full = here * bench.NBODY_STEPS / 2000
    assert abs(ratio * full - bench.NBODY_PI4_S * bench.PI4_TO_ZERO2W) < 1e-6
