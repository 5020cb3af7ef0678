"""``controller.boards.deals``: one check that a session's deals file has a board, shared by the
controller and replay (replay went on silently with an empty file; the controller refused)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.boards.deals import DealsError, load_deals

REPO = Path(__file__).resolve().parent.parent
EVENTS = REPO / "tests" / "data" / "replay_t08_revoke.jsonl"


@pytest.mark.parametrize(("content", "why"), [(b"", "no usable board"),
                                            (b"% only a comment\n", "no usable board"),
                                            (b"\x00\xff" * 100, "binary data, not text")])
def test_a_deals_file_without_a_board_is_refused(tmp_path: Path, content: bytes,
                                                 why: str) -> None:
    path = tmp_path / "empty.pbn"
    path.write_bytes(content)
    with pytest.raises(DealsError, match=why):
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


def test_binary_reason_tells_binary_from_latin_1_text() -> None:
    from controller.formats.source import binary_reason
    assert binary_reason(b"") is None
    # PBN's own character set is ISO 8859-1: not UTF-8, still text
    assert binary_reason('[Event "Café"]\r\n[Site "Hà Nội"]\n\x1a'.encode("latin-1",
                                                                          "replace")) is None
    assert binary_reason(b'[Event "x"]\n\x00\x01') == \
        "binary data, not text (a NUL byte at offset 12)"
    assert binary_reason(bytes([1, 2, 3, 65, 66])) is not None
