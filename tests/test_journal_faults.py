"""The journal under faults an operator meets: a payload nested too deeply, a journal the
controller may not write (permissions, a read-only file system), and the systemd units'
answer to a configuration error (stop, do not restart in a loop)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from controller.service.journal import Journal, JournalError

REPO = Path(__file__).resolve().parent.parent
DEEP = b'{"v":1,"src":"a","seq":2,"ts":1,"type":"tag","x":' + b"[" * 1000 + b"]" * 1000 + b"}"


def good(seq: int) -> bytes:
    return json.dumps({"v": 1, "src": "a", "seq": seq, "ts": 1.0, "type": "tag", "zone": "board",
                       "action": "present", "uid": "B", "board": seq}).encode()


def run(*args: str, unprivileged: bool = False) -> subprocess.CompletedProcess[str]:
    """``python ARGS``; ``unprivileged``, as root, without root's capabilities (util-linux's
    setpriv empties the bounding and inheritable sets, so the exec leaves none): the same user,
    so it still reads a checkout only root may enter, but file permissions apply to it."""
    runner = (["setpriv", "--bounding-set=-all", "--inh-caps=-all"]
              if unprivileged and os.geteuid() == 0 else [])
    return subprocess.run([*runner, sys.executable, *args], capture_output=True, text=True,
                          cwd=REPO, timeout=60, stdin=subprocess.DEVNULL)


def test_export_goes_past_a_row_nested_too_deeply_and_names_it(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, sync="normal") as j:
        j.append_incoming([("bridge/1/event", good(1)), ("bridge/1/event", DEEP),
                           ("bridge/1/event", b"{bad"), ("bridge/1/event", good(3))])
    proc = run("-m", "controller.service.journal", "export", str(path))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    assert len(lines) == 4
    assert "row 2: JSON nested too deeply" in proc.stderr and "row 3: not JSON" in proc.stderr
    # and replay reads the export: the good rows are applied, the bad ones reported
    export = tmp_path / "export.jsonl"
    export.write_text(proc.stdout, encoding="utf-8")
    replay = run("-m", "controller.cli", "replay", str(export), "--topics", "state")
    assert replay.returncode == 0, replay.stderr
    assert "Traceback" not in replay.stderr
    states = [json.loads(line)["payload"] for line in replay.stdout.splitlines()]
    assert [s["board"] for s in states] == [1, 3]


def test_replay_reports_a_line_nested_too_deeply_and_goes_on(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    wrapped = b'{"topic":"bridge/1/event","payload":' + b"[" * 3000 + b"]" * 3000 + b"}"
    events.write_bytes(good(1) + b"\n" + DEEP + b"\n" + wrapped + b"\n" + good(3) + b"\n")
    proc = run("-m", "controller.cli", "replay", str(events), "--topics", "state")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"{events}:2: JSON nested too deeply" in proc.stderr
    assert f"{events}:3: JSON nested too deeply" in proc.stderr
    assert len(proc.stdout.splitlines()) == 2


@contextlib.contextmanager
def unwritable_journal() -> Iterator[Path]:
    """A sound journal, read-only in a read-only directory: the controller, run
    ``unprivileged`` (as root without the capabilities that ignore permissions), may not
    write it."""
    base = Path(tempfile.mkdtemp(prefix="bt-ro-"))
    try:
        path = base / "j.sqlite"
        with Journal(path, sync="normal") as j:
            j.append_incoming([("bridge/1/event", good(1))])
        (base / "j.sqlite.lock").unlink()
        path.chmod(0o444)
        base.chmod(0o555)
        yield path
    finally:
        base.chmod(0o755)
        shutil.rmtree(base, ignore_errors=True)


def test_an_unwritable_journal_is_a_clear_error_naming_the_cause() -> None:
    with unwritable_journal() as path:
        before = path.read_bytes()
        proc = run("-m", "controller.cli", "controller", "--broker", "mqtt://127.0.0.1:9",
                   "--journal", str(path), unprivileged=True)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "permission denied" in proc.stderr and str(path) in proc.stderr
        assert "move it away" not in proc.stderr  # the journal is sound: keep it
        assert path.read_bytes() == before


def test_an_unwritable_journal_file_with_a_writable_lock_is_the_same_error() -> None:
    with unwritable_journal() as path:
        base = path.parent
        base.chmod(0o755)
        lock = base / "j.sqlite.lock"
        lock.touch()
        lock.chmod(0o666)
        base.chmod(0o555)
        proc = run("-m", "controller.cli", "controller", "--broker", "mqtt://127.0.0.1:9",
                   "--journal", str(path), unprivileged=True)
        assert proc.returncode == 2, proc.stderr
        assert "permission denied" in proc.stderr and "move it away" not in proc.stderr


def _mount_tmpfs(where: Path) -> bool:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "bt-ro", str(where)],
                          capture_output=True).returncode == 0


def test_a_journal_on_a_read_only_file_system_names_it(tmp_path: Path) -> None:
    """The SD card remounted read-only after an error: a sound journal that cannot be
    written. Needs root to mount a file system (skipped otherwise, with the reason)."""
    where = tmp_path / "mnt"
    where.mkdir()
    if not _mount_tmpfs(where):
        pytest.skip("mounting a tmpfs needs root (a read-only file system cannot be made)")
    try:
        path = where / "j.sqlite"
        with Journal(path, sync="normal") as j:
            j.append_incoming([("bridge/1/event", good(1))])
        subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)
        with pytest.raises(JournalError) as info:
            Journal(path)
        assert "read-only file system" in str(info.value)
        assert "move it away" not in str(info.value)
        proc = run("-m", "controller.cli", "controller", "--broker", "mqtt://127.0.0.1:9",
                   "--journal", str(path))
        assert proc.returncode == 2 and "read-only file system" in proc.stderr, proc.stderr
    finally:
        subprocess.run(["umount", str(where)], capture_output=True)


@pytest.mark.parametrize("unit", ["bridge-table-controller.service", "bridge-table-run@.service",
                                  "bridge-table-bridge@.service"])
def test_systemd_does_not_restart_on_a_configuration_error(unit: str) -> None:
    """The commands exit 2 on a configuration error (the journal above, a bad config file);
    the units must not restart them in a loop for it."""
    lines = (REPO / "systemd" / unit).read_text(encoding="utf-8").splitlines()
    assert "Restart=always" in lines
    assert "RestartPreventExitStatus=2" in lines


def test_the_export_function_reports_to_the_stream_given(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite", sync="normal") as j:
        j.append_incoming([("bridge/1/event", DEEP)])
        out, errors = io.StringIO(), io.StringIO()
        assert j.export_jsonl(out, errors=errors) == 1
    assert json.loads(out.getvalue())["payload"].startswith('{"v":1')
    assert "nested too deeply" in errors.getvalue()

