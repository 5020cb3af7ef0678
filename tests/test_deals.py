"""``controller.deals``: one check that a session's deals file has a board, shared by the
controller and replay (replay went on silently with an empty file; the controller refused)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.deals import DealsError, load_deals

REPO = Path(__file__).resolve().parent.parent
EVENTS = REPO / "tests" / "data" / "replay_t08_revoke.jsonl"


@pytest.mark.parametrize("content", [b"", b"% only a comment\n", b"\x00\xff" * 100])
def test_a_deals_file_without_a_board_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "empty.pbn"
    path.write_bytes(content)
    with pytest.raises(DealsError, match="no usable board"):
        load_deals(path)


@pytest.mark.parametrize("command", [
    ["replay", str(EVENTS), "--topics", "result"],
    ["controller", "--broker", "mqtt://127.0.0.1:9", "--no-journal"],
])
def test_replay_and_the_controller_refuse_it_the_same_way(tmp_path: Path,
                                                          command: list[str]) -> None:
    path = tmp_path / "empty.pbn"
    path.write_bytes(b"")
    proc = subprocess.run([sys.executable, "-m", "controller.cli", *command, "--deals",
                           str(path)], cwd=REPO, capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert f"{path}: no usable board in the deals file" in proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr


def test_a_sound_deals_file_loads() -> None:
    deals, problems = load_deals(REPO / "tests" / "data" / "replay_t08_revoke.pbn")
    assert 10 in deals and problems == []
