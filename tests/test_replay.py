"""``bridge-table replay``: events in, the controller's messages out, as the contract says."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


def test_the_replay_loop_writes_what_the_engine_yields_line_by_line() -> None:
    """``replay_to`` (the command's one loop, which routes a line that decodes itself) writes
    the bytes and the reports of ``write_messages(replay_lines(...))``, on every kind of
    line: bare payloads, wrapped ones, rulings, blank lines, comments, garbage, arrays,
    JSON nested too deeply, a payload that is not an object, an unknown topic."""
    import io

    from controller.engine import Engine
    from controller.replay.stream import replay_lines, replay_to, write_messages

    good = EVENTS.read_bytes().splitlines()
    wrapped = b'{"topic":"bridge/7/event","payload":' + good[0] + b"}"
    ruling = b'{"v":1,"src":"director","seq":1,"ts":1.0,"ruling":"undo"}'
    odd = [b"", b"   ", b"# a comment", b"{garbage", b"[1,2,3]", b"[" * 5000 + b"]" * 5000,
           b'{"topic":"bridge/7/event","payload":5}', b'{"topic":"elsewhere/1/x","payload":{}}',
           b'"just a string"', b"\xff\xfe", wrapped, ruling, b'{"type":"tag"}']
    lines = good[:5] + odd + good[5:40] + odd[::-1] + good[40:]

    def run(fused: bool) -> tuple[bytes, str]:
        out, errors = io.BytesIO(), io.StringIO()
        engine = Engine()
        if fused:
            replay_to(engine, lines, out, None, errors=errors, source="x")
        else:
            write_messages(replay_lines(engine, lines, errors=errors, source="x"), out)
        return out.getvalue(), errors.getvalue()

    fused, by_line = run(True), run(False)
    assert fused == by_line
    assert "x:9: not JSON" in fused[1] and "x:10: not a JSON object" in fused[1]
    assert b"bridge/7/state" in fused[0] and b"bridge/1/error" in fused[0]


@pytest.mark.parametrize("name", ["missing.jsonl", "a-folder"])
def test_an_events_file_it_cannot_read_is_one_plain_line(
        tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.replay.cli import main

    (tmp_path / "a-folder").mkdir()
    assert main([str(tmp_path / name)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"bridge-table replay: {tmp_path / name}: cannot read: ")
    assert "Errno" not in err and len(err.splitlines()) == 1
