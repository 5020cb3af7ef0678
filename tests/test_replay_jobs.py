"""``bridge-table replay --jobs N`` (controller/replay/jobs.py): a multi-table file split by
table across processes writes the same bytes, and the same errors, as one process; a
board fouled across tables (Law 87) or a single table falls back to one process."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from controller.boards.generate import random_board
from controller.engine import Engine
from controller.formats.events import interleave, record_events
from controller.formats.pbn import pbn_text
from controller.laws.record import BoardRecord, DealInfo
from controller.replay import jobs as replay_jobs
from tests.replay_golden import MIXED_DEALS, MIXED_EVENTS, _junk


def command(events: Path, *extra: str) -> tuple[bytes, bytes]:
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "replay", str(events),
                           *extra], capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout, proc.stderr


def session(tables: dict[str, list[BoardRecord]], seed: int, junk: float = 0.05) -> bytes:
    """Each table's boards as events (with seeded junk and a few lines that are not
    JSON), the tables' lines interleaved."""
    rng = random.Random(seed)
    streams: list[list[bytes]] = []
    for table, records in tables.items():
        src = f"{table}-pi"
        seqs = {src: 0, "director": 0}
        lines: list[bytes] = []
        for record in records:
            for event in record_events(record, src=src):
                items: list[dict[str, Any]] = [dict(event)]
                if rng.random() < junk:
                    items.insert(0, _junk(rng, src, 0))
                for item in items:
                    seqs[item["src"]] += 1
                    item["seq"] = seqs[item["src"]]
                    kind = "ruling" if "ruling" in item else "event"
                    lines.append(json.dumps({"topic": f"bridge/{table}/{kind}",
                                             "payload": item}).encode())
                if rng.random() < 0.003:
                    lines.append(b"{not json")
        streams.append(lines)
    return b"\n".join(interleave(streams, rng, 5)) + b"\n"


def split(data: bytes, deals: dict[int, DealInfo], jobs: int) -> bool:
    """Whether ``run`` split the file (True) or left it to one process."""
    out = io.BytesIO()
    return replay_jobs.run(lambda: Engine(deals=deals), data, jobs=jobs, table="1",
                           errors=io.StringIO(), source="-", out=out, kinds=None)


def test_the_golden_mixed_session_split_three_ways_is_the_same_bytes() -> None:
    one = command(MIXED_EVENTS, "--deals", str(MIXED_DEALS))
    three = command(MIXED_EVENTS, "--deals", str(MIXED_DEALS), "--jobs", "3")
    assert three == one
    assert one[0].count(b"\n") > 1000
    assert split(MIXED_EVENTS.read_bytes(), {}, 3)


def test_tables_playing_the_same_boards_split_and_merge_byte_for_byte(tmp_path: Path) -> None:
    rng = random.Random(5)
    records = [random_board(rng, n).record for n in range(1, 5)]
    data = session({"1": records, "2": records, "A7": records[::-1]}, seed=6)
    events = tmp_path / "events.jsonl"
    events.write_bytes(data)
    for deals_args in ((), ("--deals", str(tmp_path / "deals.pbn"))):
        (tmp_path / "deals.pbn").write_text(pbn_text(records))
        one = command(events, *deals_args)
        assert b"not JSON" in one[1]
        for jobs in ("2", "4"):
            assert command(events, *deals_args, "--jobs", jobs) == one, (deals_args, jobs)
    assert split(data, {}, 2)


def test_a_board_fouled_across_tables_is_replayed_in_one_process(tmp_path: Path) -> None:
    rng = random.Random(8)
    records = [random_board(rng, n).record for n in range(1, 4)]
    other = random_board(random.Random(99), 2).record  # board 2 with other hands
    data = session({"1": records, "2": [records[0], other, records[2]]}, seed=9, junk=0.0)
    events = tmp_path / "events.jsonl"
    events.write_bytes(data)
    one = command(events)
    assert b"FOULED_BOARD" in one[0]
    jobs = command(events, "--jobs", "2")
    assert jobs[0] == one[0]
    assert b"fouled across tables" in jobs[1]
    assert not split(data, {}, 2)


def test_one_table_is_one_process_and_jobs_below_one_is_refused(tmp_path: Path) -> None:
    rng = random.Random(3)
    data = session({"1": [random_board(rng, 1).record]}, seed=4)
    assert not split(data, {}, 2)
    events = tmp_path / "events.jsonl"
    events.write_bytes(data)
    assert command(events, "--jobs", "2") == command(events)
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "replay", str(events),
                           "--jobs", "0"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and "--jobs must be at least 1" in proc.stderr
