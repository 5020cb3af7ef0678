"""controller/web/console/calls.py: every call and claim press kept until closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.web.console.calls import CallBook


def test_calls_stay_open_across_a_restart_oldest_first(tmp_path: Path) -> None:
    db = tmp_path / "console.sqlite"
    book = CallBook(db)
    late = book.press(table="3", button="director", seat="N", board=4, received=200.0,
                      key="pi3/1/9")
    early = book.press(table="12", button="claim", seat="S", board=None, received=100.0,
                       key="pi12/1/5")
    assert late is not None and early is not None
    # the same press delivered twice (QoS 1) is kept once; other buttons are not calls
    assert book.press(table="3", button="director", seat="N", board=4, received=201.0,
                      key="pi3/1/9") is None
    assert book.press(table="3", button="undo", seat=None, board=4, received=202.0,
                      key="pi3/1/10") is None
    assert book.answer(late["id"], "Ada", 210.0)
    assert not book.answer(late["id"], "Bo", 211.0)     # the first answer counts
    book.close()
    book = CallBook(db)
    calls = book.open_calls()
    assert [(c["table_id"], c["button"]) for c in calls] == [("12", "claim"), ("3", "director")]
    assert calls[1]["answered_by"] == "Ada"        # answered but still open
    assert book.close_call(early["id"], "dismissed", "Ada", 220.0)
    assert not book.close_call(early["id"], "ruled", "Ada", 221.0)
    assert book.close_call(late["id"], "ruled", "Bo", 230.0, ruling_seq=7)
    assert book.open_calls() == []
    closed = book.get(late["id"])
    assert closed is not None and closed["closed_how"] == "ruled" and closed["ruling_seq"] == 7
    with pytest.raises(ValueError):
        book.close_call(late["id"], "forgotten", "Ada", 240.0)
    book.close()


def test_a_ruling_on_the_table_answers_its_calls_only(tmp_path: Path) -> None:
    book = CallBook(tmp_path / "c.sqlite")
    book.press(table="1", button="director", seat="E", board=1, received=1.0, key=None)
    book.press(table="2", button="director", seat="E", board=1, received=2.0, key=None)
    assert book.answer_table("1", "Ada", 5.0) == 1
    assert [c["answered"] for c in book.open_calls()] == [5.0, None]
    assert [c["table_id"] for c in book.open_calls("2")] == ["2"]
    book.close()
