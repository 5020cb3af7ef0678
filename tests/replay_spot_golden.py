"""A golden replay of real tables' streams (``sensing="spot"``: each call card put on its
spot and the one before it picked up, each card put on its play spot, each quitted trick's
cards leaving), with seeded irregular inputs (cards on and off the spots, call cards picked
up, the golden session's junk: cards and calls out of turn, unknown tags, buttons, rulings)
and redeliveries, two tables interleaved. The digests in ``tests/data/
replay_golden_spot.json`` were recorded with the code of be5f41f (main before issue 32
item 2's second pass: no short-cut for an input that changes nothing shown), every kind of
message (``evidence`` too), results only, and one display language;
``tests/test_replay_spot_golden.py`` checks today's output against them byte for byte.

    .venv/bin/python -m tests.replay_spot_golden --write   # the inputs (then digest them
    # with the code the digests are to be of: --digests)
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from controller.formats.events import record_events
from controller.formats.pbn import pbn_text
from tests.replay_golden import DATA, _junk, digest, mixed_session, replay_output

SPOT_EVENTS = DATA / "replay_golden_spot.jsonl"
SPOT_DEALS = DATA / "replay_golden_spot.pbn"
SPOT_DIGESTS = DATA / "replay_golden_spot.json"

#: (name, extra arguments of ``bridge-table replay``)
RUNS: list[tuple[str, tuple[str, ...]]] = [
    ("spot_all", ("--topics", "state,alert,indicator,result,feed,error,evidence")),
    ("spot_results", ("--topics", "result,alert")),
    ("spot_en", ("--languages", "en", "--topics", "state,indicator,feed,evidence")),
]


def spot_junk(rng: random.Random, src: str) -> dict[str, Any]:
    """A card on or off a random play spot, or a call card picked up from a random seat."""
    seat = rng.choice("NESW")
    event: dict[str, Any] = {"v": 1, "src": src, "seq": 0, "ts": 1_700_000_000.0,
                             "type": "tag", "seat": seat, "uid": f"Q{rng.randrange(9999)}"}
    if rng.random() < 0.6:
        event.update(zone="spot", action=rng.choice(["present", "removed", "removed"]),
                     card=rng.choice("SHDC") + rng.choice("AKQJT98765432"))
    else:
        event.update(zone="bid", action="removed",
                     call=rng.choice(["Pass", "X", "XX", "1C", "1NT", "2H", "3S"]))
    return event


def taken_back(rng: random.Random, event: dict[str, Any]) -> list[dict[str, Any]]:
    """After a call card put on its spot, sometimes: the same card picked up again at once
    and, half the time, another call put in its place (a change of call, Law 25)."""
    if event.get("zone") != "bid" or event.get("action") != "present" or rng.random() > 0.15:
        return []
    back = [dict(event, action="removed")]
    if rng.random() < 0.5:
        back.append(dict(event, uid=f"R{rng.randrange(9999)}",
                         call=rng.choice(["Pass", "X", "1NT", "2S", "4H", "7C"])))
    return back


def spot_junk_or_none(rng: random.Random, src: str) -> dict[str, Any] | None:
    """Before an event, now and then: the golden session's junk or a spot's."""
    roll = rng.random()
    return _junk(rng, src, 0) if roll < 0.04 else spot_junk(rng, src) if roll < 0.08 else None


def spot_session(boards: int = 10, tables: int = 2, seed: int = 32) -> tuple[list[Any], bytes]:
    return mixed_session(
        boards, tables, seed, junk=spot_junk_or_none, after=taken_back,
        events=lambda record, src: record_events(record, src=src, scans=False,
                                                 sensing="spot", return_hands=False))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.replay_spot_golden")
    ap.add_argument("--write", action="store_true", help="regenerate the inputs")
    ap.add_argument("--digests", action="store_true", help="record the digests")
    args = ap.parse_args(argv)
    if args.write:
        records, data = spot_session()
        SPOT_EVENTS.write_bytes(data)
        SPOT_DEALS.write_text(pbn_text(records))
    digests = {}
    for name, extra in RUNS:
        out = replay_output(SPOT_EVENTS, SPOT_DEALS, extra)
        digests[name] = {"sha256": digest(out), "lines": out.count(b"\n")}
        print(name, digests[name])
    if args.digests:
        SPOT_DIGESTS.write_text(json.dumps(digests, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
