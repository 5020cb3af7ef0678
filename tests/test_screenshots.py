"""tests/screenshots.py: the browser tests write into docs/img only when asked (``make
screenshots``); an ordinary run leaves the work tree as it was."""

from __future__ import annotations

import pytest
from screenshots import DOCS_IMG, ENV, screenshot_dir


def test_an_ordinary_run_keeps_screenshots_out_of_the_work_tree(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    folder = screenshot_dir()
    assert folder.is_dir()
    assert DOCS_IMG.parents[1] not in folder.resolve().parents


def test_make_screenshots_writes_the_docs_pictures(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, "1")
    assert screenshot_dir() == DOCS_IMG
    assert (DOCS_IMG.parent / "console.md").exists()
