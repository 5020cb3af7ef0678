"""The daemon's batch on a real broker (wire contract 1.4): one ``state`` and at most one
``indicator`` per table per batch, every other output of the batch in order.

The daemon runs in this process on its own :class:`controller.service.mqtt.Connection`; the test
holds the worker's place so that the batch is exactly what it means it to be: it waits
until the broker has delivered every event (they stay unacknowledged, inside the broker's
in-flight window of 100), then hands them to ``ControllerDaemon._process`` at once, as the
worker does with what has arrived."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from boardevents import EventWriter, clean_board, t08_revoke
from broker import Mosquitto
from mqttwatch import Publisher, Seen, Watch

from controller.broker.settings import BrokerSettings
from controller.engine import Engine
from controller.service.daemon import ControllerDaemon
from controller.service.journal import Journal
from controller.service.mqtt import Connection, Received

pytestmark = pytest.mark.timeout(120)


def interleave(*streams: Sequence[tuple[str, Any]]) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for i in range(max(len(s) for s in streams)):
        out += [s[i] for s in streams if i < len(s)]
    return out


def reference(inputs: Sequence[tuple[str, Any]]) -> Engine:
    engine = Engine()
    for topic, payload in inputs:
        engine.handle(topic, json.dumps(payload).encode())
    return engine


async def arrived(daemon: ControllerDaemon, count: int) -> list[Received]:
    """The first ``count`` messages the daemon's connection received."""
    got: list[Received] = []
    while len(got) < count:
        while not daemon._inbox.empty():
            item = daemon._inbox.get_nowait()
            assert isinstance(item, Received), item  # no lost connection meanwhile
            got.append(item)
        await asyncio.sleep(0.02)
    return got


def is_ack(table: str, src: str, seq: int) -> Any:
    def pred(m: Seen) -> bool:
        return (m.topic == f"bridge/{table}/ack/{src}" and isinstance(m.payload, dict)
                and m.payload.get("seq") == seq)
    return pred


async def test_one_batch_one_state_per_table_and_every_other_output_in_order(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    scans = list(EventWriter("table-1-pi").board(clean_board(1)))[:53]  # a round start
    revoke = list(EventWriter("table-2-pi").board(t08_revoke()))[:141]
    # table 2 first plays into trick 6 (one batch), then table 1's round start and table
    # 2's revoke and its establishment (two alerts) come in the same batch
    before = [("bridge/2/event", e) for e in revoke[:100]]
    inputs = interleave([("bridge/1/event", e) for e in scans],
                        [("bridge/2/event", e) for e in revoke[100:]])
    ref = Engine()
    for topic, payload in before:
        ref.handle(topic, json.dumps(payload))
    want: list[tuple[str, dict[str, Any]]] = []  # the feed and alerts of the batch
    for topic, payload in inputs:
        want += [(o.topic, o.payload) for o in ref.handle(topic, json.dumps(payload))
                 if o.topic.rsplit("/", 1)[1] in ("feed", "alert")]
    assert any(topic.endswith("/alert") for topic, _ in want)
    journal = Journal(tmp_path / "journal.sqlite")
    daemon = ControllerDaemon(broker=BrokerSettings.from_url(mosquitto.url),
                              engine=Engine(), journal=journal)
    conn = Connection(daemon.broker, daemon.client_id, daemon._inbox)

    async def batch_of(items: list[tuple[str, Any]], acks: dict[str, dict[str, Any]]) -> None:
        await Publisher(mosquitto.url).send(items)
        batch = await asyncio.wait_for(arrived(daemon, len(items)), 60)
        assert [m.payload for m in batch] == [json.dumps(p).encode() for _, p in items]

        def process() -> None:
            with conn.corked():
                daemon._process(conn, batch)
            daemon._finish(conn, batch)
        await asyncio.to_thread(process)
        for t, last in acks.items():
            await w.wait(is_ack(t, last["src"], last["seq"]))
        while daemon._open:  # paho reports each output sent (QoS 0) or acknowledged
            await asyncio.to_thread(daemon._confirm, conn)
            await asyncio.sleep(0.02)
        await asyncio.to_thread(daemon._confirm, conn)
        journal.flush_mark()  # as the idle worker does

    try:
        async with Watch(mosquitto.url) as w:
            await asyncio.to_thread(conn.open, 10.0)
            await asyncio.to_thread(daemon._start_session, conn)
            await batch_of(before, {"2": revoke[99]})
            assert len(w.of("state", "2")) == 1  # the first batch: one state too
            mark = len(w.seen)
            await batch_of(inputs, {"1": scans[-1], "2": revoke[-1]})
    finally:
        conn.close()
    seen = w.seen[mark:]
    # exactly one state per table, covering the table's last event, equal to handling
    # the events one by one; at most one indicator, the current one
    for t, last in (("1", scans[-1]), ("2", revoke[-1])):
        states = [m.payload for m in seen if m.kind == "state" and m.table == t]
        assert [s["last"] for s in states] == [{"src": last["src"], "seq": last["seq"]}]
        assert states[0] == ref.snapshot(t)
        indicators = [m.payload for m in seen if m.kind == "indicator" and m.table == t]
        assert len(indicators) <= 1
        assert indicators[-1:] == [o.payload for o in ref.retained()
                                   if o.topic == f"bridge/{t}/indicator"]
    # the feed and the alerts of the batch: all of them, in order
    assert [(m.topic, m.payload) for m in seen if m.kind in ("feed", "alert")] == want
    # every input journaled once and its outputs marked published
    assert journal.last_incoming == len(before) + len(inputs)
    assert journal.published_through == journal.last_incoming
    journal.close()
