"""The Engine's de-duplication by (src, boot, seq) and its acknowledgements (contract 1.2).

Each test here failed before 1.2: a seq of 2^62 silenced its source for good, a reflashed
bridge (seq from 1 again) was silenced the same way, silently, and nothing told a bridge
what the controller had applied.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from controller.engine import MAX_SEQ, Engine


def call(seq: int, bid: str, seat: str, *, src: str = "pi-7", boot: str | None = None,
         acked: int | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"v": 1, "src": src, "seq": seq, "ts": 1.0 + seq, "type": "tag",
                               "zone": "bid", "seat": seat, "action": "present",
                               "uid": f"U{seq}", "call": bid}
    if boot is not None:
        payload["boot"] = boot
    if acked is not None:
        payload["acked"] = acked
    return payload


def board(seq: int, *, src: str = "pi-7", boot: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"v": 1, "src": src, "seq": seq, "ts": 1.0, "type": "tag",
                               "zone": "board", "action": "present", "uid": "B", "board": 1}
    if boot is not None:
        payload["boot"] = boot
    return payload


def send(engine: Engine, payload: dict[str, Any]) -> list[str]:
    """The kinds of the outputs (the last topic level), the payload sent as bytes."""
    return [o.topic.rsplit("/", 1)[1]
            for o in engine.handle("bridge/7/event", json.dumps(payload).encode())]


def auction(engine: Engine) -> list[list[str]]:
    return list(engine.snapshot("7")["auction"])


def test_a_huge_seq_is_refused_visibly_and_does_not_silence_the_source() -> None:
    engine = Engine()
    send(engine, board(1))
    assert send(engine, call(2**62, "1C", "N")) == ["error"]
    # the source still plays: its next event is applied
    assert "state" in send(engine, call(2, "1C", "N"))
    assert auction(engine) == [["N", "1C"]]


def test_seq_at_the_maximum_is_accepted_one_above_is_not() -> None:
    engine = Engine()
    assert "state" in send(engine, board(MAX_SEQ))
    assert send(engine, call(MAX_SEQ + 1, "1C", "N")) == ["error"]


def test_a_reflashed_bridge_with_a_new_boot_starts_again_at_one() -> None:
    engine = Engine()
    send(engine, board(1, boot="a1"))
    send(engine, call(2, "1C", "N", boot="a1"))
    send(engine, call(3, "Pass", "E", boot="a1"))
    # reflashed: a fresh spool, a new boot, seq from 1
    assert "state" in send(engine, call(1, "1H", "S", boot="b2"))
    assert "state" in send(engine, call(2, "Pass", "W", boot="b2"))
    assert auction(engine) == [["N", "1C"], ["E", "Pass"], ["S", "1H"], ["W", "Pass"]]


def test_duplicates_by_src_boot_seq_are_applied_once_and_silently() -> None:
    engine = Engine()
    send(engine, board(1, boot="a1"))
    send(engine, call(2, "1C", "N", boot="a1"))
    assert send(engine, call(2, "1C", "N", boot="a1")) == []
    assert engine.stats["duplicates"] == 1
    assert auction(engine) == [["N", "1C"]]


def test_out_of_order_is_held_back_visibly_until_the_gap_is_resent() -> None:
    engine = Engine()
    send(engine, board(1, boot="a1"))
    # seq 2 was lost on the way: 3 is not applied, and the error says so
    outs = engine.handle("bridge/7/event", json.dumps(call(3, "Pass", "E", boot="a1")).encode())
    assert [o.topic for o in outs] == ["bridge/7/error"]
    assert "out of order" in outs[0].payload["error"]
    assert engine.stats["out_of_order"] == 1
    assert auction(engine) == []
    # the bridge resends from its last acknowledged seq on: both applied, in order
    send(engine, call(2, "1C", "N", boot="a1"))
    send(engine, call(3, "Pass", "E", boot="a1"))
    assert auction(engine) == [["N", "1C"], ["E", "Pass"]]


def test_below_the_first_seq_seen_of_a_boot_is_refused_visibly() -> None:
    engine = Engine()
    # this controller met the boot at seq 5 (a fresh journal, the bridge running on)
    assert "state" in send(engine, board(5, boot="a1"))
    assert send(engine, call(3, "1C", "N", boot="a1")) == ["error"]
    assert "below 5" in engine.refusals["7/pi-7"]


def test_acked_lets_a_new_controller_start_where_the_old_one_stopped() -> None:
    """A new journal while the bridge runs on: its spool starts after what the previous
    controller acknowledged, and says so in ``acked``."""
    engine = Engine()
    send(engine, board(1, boot="x"))  # another table: the controller is running
    assert "state" in send(engine, call(41, "1C", "N", boot="a1", src="pi-8", acked=40))
    assert "state" in send(engine, call(42, "Pass", "E", boot="a1", src="pi-8", acked=40))


def test_acked_keeps_the_order_when_a_controller_meets_a_boot_late() -> None:
    """Events 1-3 sent before the controller subscribed (the broker dropped them), then 4
    arrived first: with ``acked`` = 0 it waits for 1-3, which the bridge sends again."""
    engine = Engine()
    send(engine, board(1))
    assert send(engine, call(4, "Pass", "W", boot="a1", acked=0)) == ["error"]
    for seq, bid, seat in ((1, "1C", "N"), (2, "Pass", "E"), (3, "Pass", "S"), (4, "Pass", "W")):
        assert "state" in send(engine, call(seq, bid, seat, boot="a1", acked=0))
    assert auction(engine) == [["N", "1C"], ["E", "Pass"], ["S", "Pass"], ["W", "Pass"]]


@pytest.mark.parametrize("acked", [5, -1, True, "3"])
def test_a_bad_acked_is_an_error(acked: Any) -> None:
    engine = Engine()
    assert send(engine, call(5, "1C", "N", boot="a1", acked=acked)) == ["error"]


def test_a_legacy_source_going_back_is_refused_visibly() -> None:
    engine = Engine()
    send(engine, board(10_000))
    # a version-1 bridge reflashed: seq 1 again, without a boot
    assert send(engine, call(1, "1C", "N")) == ["error"]
    assert engine.stats["refused"] == 1
    assert "7/pi-7" in engine.refusals


def test_an_older_boot_is_refused_visibly_once_retired() -> None:
    engine = Engine()
    for n, boot in enumerate(["b0", "b1", "b2", "b3", "b4"]):
        send(engine, call(1, "Pass", "NESW"[n % 4], boot=boot) if n else board(1, boot=boot))
    assert send(engine, call(2, "1C", "N", boot="b0")) == ["error"]
    assert "replaced by a newer boot" in engine.refusals["7/pi-7"]


def test_a_bad_boot_is_an_error() -> None:
    engine = Engine()
    assert send(engine, board(1, boot="a/b#")) == ["error"]
    assert engine.stats["malformed"] == 1


def test_acks_follow_what_was_applied() -> None:
    engine = Engine()
    assert engine.acks_due() == []
    send(engine, board(1, boot="a1"))
    send(engine, call(2, "1C", "N", boot="a1"))
    acks = engine.acks_due()
    assert [(a.topic, a.payload, a.retain) for a in acks] == [
        ("bridge/7/ack/pi-7", {"v": 1, "src": "pi-7", "seq": 2, "boot": "a1"}, True)]
    assert engine.acks_due() == []
    # an out-of-order event does not move the ack; a duplicate asks for it again
    send(engine, call(4, "Pass", "S", boot="a1"))
    assert engine.acks_due() == []
    send(engine, call(2, "1C", "N", boot="a1"))
    assert [a.payload["seq"] for a in engine.acks_due()] == [2]
    assert [a.topic for a in engine.acks()] == ["bridge/7/ack/pi-7"]


def test_a_source_not_fit_for_a_topic_gets_no_ack() -> None:
    engine = Engine()
    send(engine, board(1, src="pi/7+"))
    assert engine.acks_due() == [] and engine.acks() == []


def test_handle_outputs_carry_no_ack_so_replay_is_unchanged() -> None:
    engine = Engine()
    kinds = send(engine, board(1, boot="a1"))
    assert "ack" not in " ".join(kinds) and "pi-7" not in kinds
