"""The relay publishes only payloads that decode as their wire Structs (broadcast/outgoing.py)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from test_broadcast import ONLINE, board_messages, make_relay, session_engine

from controller import wire
from controller.broadcast.cli import main
from controller.broadcast.outgoing import problem, public_kind

IMG = "<img src=x onerror=alert('seat')>"


def _deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.slow   # a whole board through the relay, and 100,000 levels of nesting
def test_the_issues_feed_and_state_are_refused_with_a_report(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    relay, store = make_relay(tmp_path, release="live")
    relay.take(*ONLINE, False, 0)
    msgs = board_messages(session_engine(), "1", 1)
    card = next(p for t, p in msgs if t.endswith("/feed") and p.get("kind") == "card")
    state = next(p for t, p in msgs if t.endswith("/state") and p.get("board") == 1)
    hostile = [
        ("bridge/1/feed", {**card, "seat": IMG, "n": 999}),
        ("bridge/1/feed", {**card, "card": "<script>x</script>", "n": 998}),
        ("bridge/1/feed", {**card, "board": float("inf"), "n": 997}),   # "board": 1e400
        ("bridge/1/feed", {**card, "trick": _deep(100_000), "n": 996}),
        ("bridge/1/state", {**state, "contract": {"x": 1}}),
        ("bridge/1/state", {**state, "declarer": IMG}),
        ("bridge/1/alert", {"v": 1, "id": 1, "table": "1", "board": 1, "code": IMG,
                            "law": "<b>", "seat": "N", "trick": None, "status": "open",
                            "text": {"en": "x"}, "session": "club-1"}),
    ]
    caplog.set_level(logging.WARNING, "bridge_table.broadcast")
    out = []
    for topic, payload in msgs[:len(msgs) // 2] + hostile + msgs[len(msgs) // 2:]:
        relay.take(topic, payload, False, 1)
        out += relay.release(1)
    refused = {topic for topic, _ in relay.refusals.recent}
    assert refused == {"public/1/feed", "public/1/now", "public/1/alert"}
    assert len(relay.refusals.recent) == len(hostile)
    assert "refused: public/1/feed" in caplog.text and "refused: public/1/now" in caplog.text
    text = json.dumps([p for _, p, _ in out])
    assert "<img" not in text and "<script" not in text and '"x": 1' not in text
    # the board itself went on: every card once, released, its files written
    view = [p for t, p, _ in out if t == "public/1/board/1"][-1]
    assert len(view["cards"]) == 52 and view["status"] == "complete"
    for topic, payload, _ in out:
        kind = public_kind(topic)
        assert kind is not None and problem(kind, payload) is None, topic
    store.close()


def test_every_public_topic_has_its_struct() -> None:
    assert public_kind("public/3/board/7") == public_kind("public/3/snapshot") == "board"
    assert [public_kind(f"public/3/{k}") for k in ("feed", "alert", "result", "now")] == \
        ["feed", "alert", "result", "now"]
    assert public_kind("public/session") == "session"
    assert public_kind("public/commentary") == "commentary"
    assert public_kind("public/3/other") is None
    assert all(k in wire.OUTPUTS for k in ("now", "commentary", "board", "session"))


@pytest.mark.parametrize(("kind", "payload"), [
    ("now", {"v": 1, "session": "s", "table": "1", "board": 1, "contract": {"x": 1}}),
    ("now", {"v": 1, "session": "s", "table": "1", "board": 10**20}),
    ("commentary", {"v": 1, "session": "s", "text": ["<b>"], "at": 1.0}),
    ("board", {"v": 1, "session": "s", "table": "1", "board": 1, "calls": [],
               "cards": [["N", "<img>"]], "irregularities": [], "status": "playing"}),
    ("board", {"v": 1, "session": "s", "table": "1", "board": 1, "calls": [],
               "cards": [], "irregularities": [], "status": "playing",
               "deal": "N:<img src=x>"}),
    ("board", {"v": 1, "session": "s", "table": "1", "board": 1, "calls": [],
               "cards": [], "irregularities": [], "status": "playing",
               "result": {"contract": "4S", "score_ns": "<b>"}}),
])
def test_a_malformed_public_payload_is_named(kind: str, payload: dict[str, Any]) -> None:
    assert problem(kind, payload)


def test_a_refused_commentary_is_not_published(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path)
    store.comment("club-1", "x" * 3000, 5.0)
    assert relay.comment_message() is None
    assert [t for t, _ in relay.refusals.recent] == ["public/commentary"]
    store.comment("club-1", "Board 3: <b>a slam</b>", 6.0)
    message = relay.comment_message()
    assert message is not None and message.payload["text"] == "Board 3: <b>a slam</b>"
    store.close()


def test_a_refused_item_held_by_an_older_relay_is_dropped_unpublished(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path, release="live")
    relay.take(*ONLINE, False, 0)
    msgs = board_messages(session_engine(), "1", 1)
    card = next(p for t, p in msgs if t.endswith("/feed") and p.get("kind") == "card")
    item = relay.gate.offer("1", "feed", {**card, "seat": IMG, "n": 999}, 1)
    store.save(relay.gate, [item], [])
    assert not [p for p in relay.release(2) if IMG in json.dumps(p)]
    assert relay.refusals.recent and item not in relay.gate.ready(3)
    store.close()


def test_broadcast_status_shows_the_refusals(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The operator sees what the relay would not publish (how many, topic and reason),
    through the store as ``broadcast status`` reads it."""
    relay, store = make_relay(tmp_path, release="live")
    store.set_session(relay.session)
    relay.take(*ONLINE, False, 0)
    card = next(p for t, p in board_messages(session_engine(), "1", 1)
                if t.endswith("/feed") and p.get("kind") == "card")
    relay.release(1)
    assert main(["status", "--store", str(store.path)]) == 0
    assert "Refused: nothing" in capsys.readouterr().out   # before any refusal
    for n in (997, 998):                      # the same refusal twice: counted twice
        relay.take("bridge/1/feed", {**card, "seat": IMG, "n": n}, False, 2)
        relay.release(2)
    store.comment("club-1", "x" * 3000, 5.0)
    assert relay.comment_message() is None
    relay.save_status()
    assert main(["status", "--store", str(store.path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("Refused (not published, not of the wire contract): 3 payloads since "
                     "the relay started; the latest:")
    assert lines[at + 1].startswith("  public/1/feed: ") and "seat" in lines[at + 1]
    assert lines[at + 2].startswith("  public/commentary: ")
    assert main(["status", "--store", str(store.path), "--json"]) == 0
    refused = json.loads(capsys.readouterr().out)["refused"]
    assert refused["count"] == 3
    assert [r["topic"] for r in refused["recent"]] == ["public/1/feed", "public/commentary"]
    store.close()
