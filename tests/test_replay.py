"""``bridge-table replay``: events in, the controller's messages out, as the contract says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent / "data"
EVENTS = DATA / "replay_t08_revoke.jsonl"
DEALS = DATA / "replay_t08_revoke.pbn"


def replay(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", "replay", *args],
                          capture_output=True, text=True, input=stdin, timeout=120)


def lines(out: str) -> list[dict]:  # type: ignore[type-arg]
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def test_replay_gives_the_revoke_and_the_law_64_result() -> None:
    proc = replay(str(EVENTS), "--deals", str(DEALS))
    assert proc.returncode == 0, proc.stderr
    out = lines(proc.stdout)
    assert all(set(o) == {"topic", "payload"} for o in out)
    kinds = {o["topic"].rsplit("/", 1)[1] for o in out}
    assert kinds == {"state", "alert", "indicator", "result", "feed", "evidence"}
    result = [o["payload"] for o in out if o["topic"] == "bridge/7/result"][-1]
    assert (result["contract"], result["declarer"]) == ("4H", "S")
    assert (result["tricks_played"], result["tricks"], result["score_ns"]) == (9, 11, 650)
    states = [o["payload"] for o in out if o["topic"] == "bridge/7/state"]
    assert states[-1]["last"] == {"src": "sim", "seq": 164}


def test_topics_filter_keeps_only_the_named_kinds() -> None:
    proc = replay(str(EVENTS), "--deals", str(DEALS), "--topics", "alert,result")
    out = lines(proc.stdout)
    assert {o["topic"].rsplit("/", 1)[1] for o in out} == {"alert", "result"}
    assert [o["payload"]["status"] for o in out if o["topic"].endswith("alert")][0] == "open"


def test_same_output_as_the_engine_without_a_deals_file_is_still_scored() -> None:
    # The hand scans in the file tell the core the hands; the result is the same.
    proc = replay(str(EVENTS), "--topics", "result")
    result = lines(proc.stdout)[-1]["payload"]
    assert (result["tricks"], result["score_ns"]) == (11, 650)


def test_malformed_lines_are_reported_with_line_numbers_and_skipped(tmp_path: Path) -> None:
    good = EVENTS.read_text().splitlines()
    bad = good[:3] + ["{garbage", "[1,2,3]", good[3], good[3]] + good[4:]
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(bad) + "\n")
    proc = replay(str(path), "--deals", str(DEALS), "--topics", "result")
    assert proc.returncode == 0
    assert f"{path}:4: not JSON" in proc.stderr
    assert f"{path}:5: not a JSON object" in proc.stderr
    result = lines(proc.stdout)[-1]["payload"]
    # the duplicated line (same src and seq) was applied once: same result
    assert (result["tricks"], result["score_ns"]) == (11, 650)


def test_bare_payloads_from_standard_input() -> None:
    payloads = [json.loads(line)["payload"] for line in EVENTS.read_text().splitlines()]
    text = "\n".join(json.dumps(p) for p in payloads) + "\n"
    proc = replay("-", "--deals", str(DEALS), "--table", "12", "--topics", "result", stdin=text)
    assert proc.returncode == 0, proc.stderr
    out = lines(proc.stdout)
    assert out[-1]["topic"] == "bridge/12/result" and out[-1]["payload"]["score_ns"] == 650


def test_payload_errors_go_to_the_error_topic_and_stderr(tmp_path: Path) -> None:
    path = tmp_path / "e.jsonl"
    path.write_text('{"v": 1, "src": "x", "seq": 1, "ts": 1, "type": "tag", "zone": "tray",'
                    ' "action": "present", "uid": "1", "card": "SA"}\n')
    proc = replay(str(path))
    assert proc.returncode == 0
    out = lines(proc.stdout)
    assert out[0]["topic"] == "bridge/1/error" and "seat" in out[0]["payload"]["error"]
    assert f"{path}:1:" in proc.stderr


def test_a_binary_file_is_one_error_and_exit_2(tmp_path: Path) -> None:
    # a deals file or an events file that is not text: one line saying so, not one line of
    # escaped garbage per line of the file, and not exit 0
    binary = tmp_path / "photo.pbn"
    binary.write_bytes(bytes(range(256)) * 40)
    for args in ((str(binary),), (str(EVENTS), "--deals", str(binary))):
        proc = replay(*args)
        assert proc.returncode == 2 and proc.stdout == ""
        assert proc.stderr.count("\n") == 1 and "binary data, not text" in proc.stderr


def test_bad_arguments_exit_2(tmp_path: Path) -> None:
    assert replay(str(EVENTS), "--topics", "nonsense").returncode == 2
    assert replay(str(tmp_path / "missing.jsonl")).returncode == 2
    assert replay(str(EVENTS), "--rules", "1997").returncode == 2
    assert replay(str(EVENTS), "--deals", str(tmp_path / "none.pbn")).returncode == 2
