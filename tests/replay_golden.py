"""Golden replay sessions: inputs kept in ``tests/data/``, with the digest of every message
``bridge-table replay`` wrote for them before its output side was made cheap (the engine's
output building, controller/engine/render.py; controller/indicators/display_text.py).
``tests/test_replay_golden.py`` checks today's output against them byte for byte.

    .venv/bin/python -m tests.replay_golden --write   # regenerate inputs and digests

Regenerate only on a deliberate, versioned change of the payloads (docs/wire-contract.md).
One deliberate change since the recording: the ``notes`` of an undone input name North
(``undone: tray present N H7``; before, seat 0 was taken for no seat and left out), the
only difference in the mixed session's output, checked line by line. A second one, found
when the engine was compiled with mypyc (which tests ``is not None`` there): the
feed's ``result`` item names North as declarer (``"declarer":"N"``; before, ``null``, a
truth test of seat 0), one line of the mixed session, checked line by line. A third (issue
29, the display's words): the indicators' display rows only (Chinese seats 北东南西, the
Vietnamese names of five alerts and of vulnerability, the score on the fourth row of a
played board), 60 indicator lines of t08 and 608 of the mixed session, nothing else;
``--digests`` rewrote the digests of the kept inputs. A fourth, issue 30 (the Laws' third
pass, contract 1.6): the mixed session's three inadmissible doubles out of rotation now
wait open for the director's choice of Law 36 or Law 32 (no obligation until he rules)
and its defender's fifth card waits for his choice of a penalty card or a lead (played in
turn later, it is resolved ``returned``); the alert, state, indicator and result lines
that show those statuses changed, checked line by line; the scores did not. A fifth, issue
41 (the table says what it needs): while the hands are read before the first call, the
display counts each seat's cards and names the seats still to pass theirs, and those seats'
turn lights are lit; indicator lines only (26 of t08, 123 of the mixed session), checked by
a diff of the outputs; ``--digests`` rewrote the digests.
The mixed session is three tables of random boards with hand scans, interleaved, and
seeded junk (cards and calls out of turn, wrong trays, unknown tags, duplicates) so that
irregularities, alerts, rulings and errors are all in it.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from controller.boards.generate import random_board
from controller.formats.events import interleave, record_events
from controller.formats.pbn import pbn_text
from controller.laws.record import BoardRecord

DATA = Path(__file__).resolve().parent / "data"
MIXED_EVENTS = DATA / "replay_golden_mixed.jsonl"
MIXED_DEALS = DATA / "replay_golden_mixed.pbn"
DIGESTS = DATA / "replay_golden.json"
T08_EVENTS = DATA / "replay_t08_revoke.jsonl"
T08_DEALS = DATA / "replay_t08_revoke.pbn"

#: (name, events, deals, extra arguments of ``bridge-table replay``)
SESSIONS: list[tuple[str, Path, Path, tuple[str, ...]]] = [
    ("t08_revoke", T08_EVENTS, T08_DEALS, ()),
    ("mixed", MIXED_EVENTS, MIXED_DEALS, ()),
    ("mixed_results", MIXED_EVENTS, MIXED_DEALS, ("--topics", "result,alert")),
]


def _junk(rng: random.Random, src: str, seq: int) -> dict[str, Any]:
    """A seeded irregular input: a card or a call on a random seat, an unknown tag, a
    marker, a button or a ruling."""
    seat = rng.choice("NESW")
    event: dict[str, Any] = {"v": 1, "src": src, "seq": seq, "ts": 1_700_000_000.0 + seq,
                             "type": "tag"}
    roll = rng.random()
    if roll < 0.4:
        card = rng.choice("SHDC") + rng.choice("AKQJT98765432")
        event.update(zone="tray", action=rng.choice(["present", "present", "removed"]),
                     seat=seat, uid=f"J{seq:04X}", card=card)
    elif roll < 0.75:
        call = rng.choice(["Pass", "X", "XX", "1C", "1NT", "2H", "3S", "7NT", "STOP", "ALERT"])
        event.update(zone="bid", action="present", seat=seat, uid=f"K{seq:04X}", call=call)
    elif roll < 0.85:
        event.update(zone="tray", action="present", seat=seat, uid=f"U{seq:04X}", unknown=True)
    elif roll < 0.93:
        event = {"v": 1, "src": src, "seq": seq, "ts": event["ts"], "type": "button",
                 "button": rng.choice(["claim", "undo", "director", "next"]), "seat": seat}
    else:
        event = {"v": 1, "src": "director", "seq": seq, "ts": event["ts"],
                 "ruling": rng.choice(["reject", "accept", "claim", "clear", "undo"]),
                 "alert": rng.randint(1, 4), "tricks": rng.randint(0, 13)}
    return event


def mixed_session(boards: int = 9, tables: int = 3, seed: int = 13, *,
                  events: Callable[[BoardRecord, str], Iterable[dict[str, Any]]] =
                  lambda record, src: record_events(record, src=src),
                  junk: Callable[[random.Random, str], dict[str, Any] | None] =
                  lambda rng, src: _junk(rng, src, 0) if rng.random() < 0.06 else None,
                  after: Callable[[random.Random, dict[str, Any]], list[dict[str, Any]]] =
                  lambda rng, event: []) -> tuple[list[BoardRecord], bytes]:
    """``boards`` random boards shared out over ``tables`` tables, lines interleaved: each
    table's ``events`` of its boards, ``junk`` before an event when it gives one, what
    ``after`` adds behind an event (tests/replay_spot_golden.py), now and then a line
    delivered twice."""
    rng = random.Random(seed)
    records = [random_board(rng, n).record for n in range(1, boards + 1)]
    streams: list[list[bytes]] = []
    for t in range(1, tables + 1):
        src = f"table-{t}-pi"
        lines: list[bytes] = []
        seqs = {src: 0, "director": 0}

        def line(kind: str, payload: dict[str, Any], t: int = t) -> bytes:
            return json.dumps({"topic": f"bridge/{t}/{kind}", "payload": payload},
                              separators=(",", ":")).encode()

        for record in records[t - 1::tables]:
            for event in events(record, src):
                extra = junk(rng, src)
                if extra is not None:
                    who = extra["src"]
                    seqs[who] += 1
                    extra["seq"] = seqs[who]
                    lines.append(line("ruling" if "ruling" in extra else "event", extra))
                for item in (event, *after(rng, dict(event))):
                    seqs[src] += 1
                    lines.append(line("event", dict(item, seq=seqs[src])))
                if rng.random() < 0.02:  # a redelivery
                    lines.append(lines[-1])
        streams.append(lines)
    return records, b"\n".join(interleave(streams, rng, 6)) + b"\n"


def replay_output(events: Path, deals: Path, extra: tuple[str, ...]) -> bytes:
    """What ``bridge-table replay`` writes for the session (run in this process, with the
    modules this process imports: the sources, or the installed compiled wheel in the
    compiled run of tools/compiled_build.py)."""
    from controller.replay import cli as replay

    buf = io.BytesIO()
    code = replay.main([str(events), "--deals", str(deals), *_topics(extra)], out=buf)
    assert code == 0
    return buf.getvalue()


def replay_output_from_sources(events: Path, deals: Path, extra: tuple[str, ...]) -> bytes:
    """What the ``bridge-table replay`` command writes for the session with the clone's
    Python sources running (a process started in the clone imports them first, whatever
    is installed)."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-c", "import sys, controller.engine.core as e; "
         "assert e.__file__.endswith('.py'), e.__file__; "
         "from controller.replay.cli import main; sys.exit(main(sys.argv[1:]))",
         str(events), "--deals", str(deals), *_topics(extra)],
        capture_output=True, timeout=300, cwd=Path(__file__).resolve().parents[1])
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-2000:]
    return proc.stdout


def _topics(extra: tuple[str, ...]) -> tuple[str, ...]:
    if "--topics" in extra:
        return extra
    # the topics the digests were recorded with: the director's ``evidence`` (1.3) came
    # later and has tests of its own (tests/test_evidence.py)
    from controller.replay.stream import KINDS

    return (*extra, "--topics", ",".join(k for k in KINDS if k != "evidence"))


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tests.replay_golden")
    ap.add_argument("--write", action="store_true", help="regenerate inputs and digests")
    ap.add_argument("--digests", action="store_true",
                    help="rewrite the digests of the kept inputs (a deliberate output change)")
    args = ap.parse_args(argv)
    if args.write:
        records, data = mixed_session()
        MIXED_EVENTS.write_bytes(data)
        MIXED_DEALS.write_text(pbn_text(records))
    digests = {}
    for name, events, deals, extra in SESSIONS:
        out = replay_output(events, deals, extra)
        digests[name] = {"sha256": digest(out), "lines": out.count(b"\n")}
        print(name, digests[name])
    if args.write or args.digests:
        DIGESTS.write_text(json.dumps(digests, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
