"""The broadcast relay: nothing reaches the public before the policy lets it out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiomqtt
import pytest

from controller.broadcast import BroadcastGate, BroadcastPolicy, HeldStore, run_relay
from controller.daemon import BrokerSettings


def card(board: int, n: int) -> dict[str, object]:
    return {"v": 1, "table": "x", "board": board, "n": n, "kind": "card", "seat": "N",
            "card": "SA", "trick": 1}


def result(board: int) -> dict[str, object]:
    return {"v": 1, "table": "x", "board": board, "contract": "4S", "score_ns": 420}


def test_live_with_a_delay() -> None:
    gate = BroadcastGate(BroadcastPolicy(delay=30))
    gate.offer("1", "feed", card(1, 1), now=100)
    gate.offer("1", "feed", card(1, 2), now=110)
    assert gate.due(129) == []
    assert [h.payload["n"] for h in gate.due(130)] == [1]
    assert gate.next_time() == 140
    assert [h.payload["n"] for h in gate.due(200)] == [2]


def test_board_release_waits_for_the_tables_result() -> None:
    gate = BroadcastGate(BroadcastPolicy(delay=5, release="board"))
    gate.offer("1", "feed", card(3, 1), now=0)
    gate.offer("2", "feed", card(4, 1), now=1)
    assert gate.due(1000) == [] and gate.next_time() is None
    gate.offer("1", "result", result(3), now=50)
    assert gate.due(54) == []
    out = gate.due(55)
    assert [(h.table, h.kind) for h in out] == [("1", "feed"), ("1", "result")]
    assert [h.table for h in gate.held] == ["2"]


def test_round_release_waits_for_every_table_that_plays_the_board() -> None:
    schedule = {"1": frozenset({1, 2}), "2": frozenset({1, 2}), "3": frozenset({5})}
    gate = BroadcastGate(BroadcastPolicy(release="round", schedule=schedule))
    gate.offer("1", "feed", card(1, 1), now=0)
    gate.offer("1", "result", result(1), now=10)
    assert gate.due(100) == []           # table 2 has yet to play board 1
    gate.offer("2", "feed", card(1, 1), now=20)
    gate.offer("2", "result", result(1), now=30)
    out = gate.due(31)
    assert [(h.table, h.kind) for h in out] == [("1", "feed"), ("1", "result"),
                                                 ("2", "feed"), ("2", "result")]


def test_a_table_keeps_its_order() -> None:
    gate = BroadcastGate(BroadcastPolicy(release="board"))
    gate.offer("1", "feed", card(1, 1), now=0)
    gate.offer("1", "feed", {"v": 1, "kind": "note"}, now=1)  # no board: live, but waits
    assert gate.due(5) == []
    gate.offer("1", "result", result(1), now=6)
    assert [h.payload.get("n") for h in gate.due(6)] == [1, None, None]


def test_bad_policies_are_refused() -> None:
    with pytest.raises(ValueError):
        BroadcastPolicy(release="tomorrow")
    with pytest.raises(ValueError):
        BroadcastPolicy(delay=-1)


def test_held_items_survive_a_restart(tmp_path: Path) -> None:
    store = HeldStore(tmp_path / "held.sqlite")
    gate = BroadcastGate(BroadcastPolicy(release="board"))
    for item in (gate.offer("1", "feed", card(2, 1), now=0),
                 gate.offer("1", "result", result(2), now=9)):
        store.add(item, gate.finished)
    store.close()
    again = BroadcastGate(BroadcastPolicy(release="board"))
    store = HeldStore(tmp_path / "held.sqlite")
    again.restore(*store.load())
    out = again.due(10)
    assert [h.kind for h in out] == ["feed", "result"]
    store.remove(out)
    assert store.load()[0] == []
    store.close()


async def test_relay_over_a_real_broker(mosquitto: object, tmp_path: Path) -> None:
    broker = mosquitto
    gate = BroadcastGate(BroadcastPolicy(release="board"))
    stop, ready = asyncio.Event(), asyncio.Event()
    store = HeldStore(tmp_path / "held.sqlite")
    settings = BrokerSettings.from_url(broker.url)  # type: ignore[attr-defined]
    relay = asyncio.create_task(run_relay(settings, gate, store=store, stop=stop, ready=ready))
    await asyncio.wait_for(ready.wait(), 10)
    seen: list[tuple[str, dict[str, object]]] = []
    async with aiomqtt.Client(broker.host, broker.port) as watcher:  # type: ignore[attr-defined]
        await watcher.subscribe("public/#", qos=1)
        async with aiomqtt.Client(broker.host, broker.port) as controller:  # type: ignore[attr-defined]
            for n in (1, 2):
                await controller.publish("bridge/7/feed", json.dumps(card(4, n)), qos=1)

            async def collect(count: int) -> None:
                async for message in watcher.messages:
                    seen.append((str(message.topic), json.loads(bytes(message.payload))))
                    if len(seen) >= count:
                        return

            with pytest.raises(TimeoutError):
                await asyncio.wait_for(collect(1), 1.0)   # held: board 4 is being played
            assert seen == []
            await controller.publish("bridge/7/result", json.dumps(result(4)), qos=1)
            await asyncio.wait_for(collect(3), 10)
    assert [t for t, _ in seen] == ["public/7/feed", "public/7/feed", "public/7/result"]
    assert [p.get("n") for _, p in seen[:2]] == [1, 2]
    stop.set()
    await asyncio.wait_for(relay, 10)
    assert store.load()[0] == []
    store.close()


def test_command_refuses_a_bad_broker_url_or_policy(capsys: pytest.CaptureFixture[str]) -> None:
    from controller.broadcast import main

    assert main(["--broker", "ftp://x"]) == 2
    assert "mqtt://HOST:PORT" in capsys.readouterr().err
    assert main(["--delay", "-3"]) == 2
