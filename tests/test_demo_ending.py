"""``bridge-table demo`` always ends (a cancellation lost in Python 3.11's ``wait_for`` once
hung it after the result about one run in six, piped and on a terminal), and refuses what it
cannot play."""

from __future__ import annotations

import asyncio
import os
import pty
import select
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from controller.demo.runner import _end_tasks

REPO = Path(__file__).resolve().parent.parent
RUNS = 6       # per mode; the hang showed about once in six to twelve runs
TIMEOUT = 150  # generous: a run at speed 3 takes ~15 s, several run at once


def demo_piped() -> tuple[int | None, str]:
    try:
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "demo", "--speed", "3"],
                              cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out
    return proc.returncode, proc.stdout


def demo_on_a_pty() -> tuple[int | None, str]:
    """The demo with a terminal for stdin, stdout and stderr (the live drawing)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--speed", "3"],
                            cwd=REPO, stdin=slave, stdout=slave, stderr=slave)
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + TIMEOUT
    try:
        while proc.poll() is None and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    out += os.read(master, 65536)
                except OSError:  # the slave side closed
                    pass
        if proc.poll() is None:
            return None, out.decode("utf-8", "replace")
        return proc.returncode, out.decode("utf-8", "replace")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)


@pytest.mark.timeout(600)
@pytest.mark.parametrize("mode", ["piped", "pty"])
def test_the_demo_always_ends(mode: str) -> None:
    run = demo_piped if mode == "piped" else demo_on_a_pty
    with ThreadPoolExecutor(max_workers=3) as pool:  # some at once: timing varies more
        results = list(pool.map(lambda _: run(), range(RUNS)))
    hung = [out[-500:] for code, out in results if code is None]
    assert not hung, f"{len(hung)} of {RUNS} runs hung after:\n{hung[0]}"
    for code, out in results:
        assert code == 0, out[-2000:]
        assert "[score] NS +650" in out or "+650" in out


def test_end_tasks_ends_a_task_that_swallows_a_cancellation() -> None:
    """What Python 3.11's ``wait_for`` does when the cancellation and its inner result meet:
    the task catches the cancel and goes on waiting. ``task.cancel(); await task`` hangs
    on it; the demo's ending must not."""
    swallowed = []

    async def stubborn() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            swallowed.append(True)  # lost, as wait_for loses it
        await asyncio.Event().wait()

    async def main() -> None:
        told = asyncio.Event()

        async def polite() -> None:
            await told.wait()

        task, other = asyncio.create_task(stubborn()), asyncio.create_task(polite())
        await asyncio.sleep(0)
        told.set()
        await asyncio.wait_for(_end_tasks([task], [other], grace=5), 30)
        assert task.cancelled() and other.done() and not other.cancelled()

    asyncio.run(main())
    assert swallowed == [True]


def run_demo(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", "demo", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("speed", ["0", "-1", "nan", "inf", "fast"])
def test_a_speed_that_cannot_play_is_refused(speed: str) -> None:
    proc = run_demo("--speed", speed)
    assert proc.returncode == 2
    assert "--speed" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("content", [bytes(range(256)) * 8, b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
                                     b'[Board "1"]\n[Deal "N:AKQ.x.x.x - - -"]\n'])
def test_a_board_file_that_is_not_pbn_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    board = tmp_path / "board.pbn"
    board.write_bytes(content)
    proc = run_demo("--board", str(board))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("bridge-table demo:") and "Traceback" not in proc.stderr


def test_a_table_that_stops_ends_the_demo_with_its_reason(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The player failing (the demo's bridge could not start, say) is an error with its
    reason, not a wait for a result that cannot come (it once waited its whole timeout on a
    missing import)."""
    from controller.demo import runner
    from controller.demo.plan import DemoError

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("the readers are gone")

    monkeypatch.setattr(runner, "_play_through_table", broken)
    with pytest.raises(DemoError, match="the simulated table stopped: the readers are gone"):
        asyncio.run(runner.run_demo(speed=3, out=open(os.devnull, "w"),  # noqa: SIM115
                                    live=False))


def _demo_brokers(under: int | None = None) -> set[int]:
    """The pids of mosquitto processes a demo started (their config is in its folder); with
    ``under``, only those descended from that process: another demo running at the same time
    (a parallel test run, another checkout's) is not this test's."""
    pids = set()
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if b"mosquitto" in cmdline and b"bridge-table-demo-" in cmdline:
            if under is None or _descends_from(int(proc.name), under):
                pids.add(int(proc.name))
    return pids


def _descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            stat = (Path("/proc") / str(pid) / "stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])  # the field after the state: ppid
    return False


@pytest.mark.parametrize("signum", ["SIGTERM", "SIGINT"])
def test_a_signal_mid_board_stops_the_demos_broker_and_exits_130(signum: str) -> None:
    """Ctrl-C (to the terminal's whole process group) or SIGTERM mid-board: the demo stops
    its own mosquitto (which the terminal's Ctrl-C does not reach first: no "broker lost"
    warnings) and removes its folder."""
    import signal

    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "demo", "--plain",
                             "--speed", "0.5"], cwd=REPO, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _demo_brokers(proc.pid):
            time.sleep(0.1)
        started = _demo_brokers(proc.pid)
        assert started, "the demo's broker did not start"
        time.sleep(3)  # into the board
        os.killpg(proc.pid, getattr(signal, signum))
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = out.decode("utf-8", "replace")
    assert proc.returncode == 130, text[-2000:]
    assert "Traceback" not in text and "WARNING" not in text, text[-2000:]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and started & _demo_brokers():
        time.sleep(0.1)
    assert not started & _demo_brokers()
