"""The championship layout of docs/scale.md, run: two room brokers bridged to a central one,
a controller per room (``--tables``), the centre's listeners (where the console and scoring
read) and the broadcast relay on the central broker only, and the link between a room and
the centre cut and restored in the middle of the boards.

What it shows: the tables' events never cross the link (the room's controller answers
them in the room), so a table never waits on the link; every result, feed item and alert a
room's controller published reaches the centre once the link is back (the bridge's queue,
``cleansession false``); the broadcast at the centre releases every board on the word of
the room controllers serving its tables; rulings given at the centre reach the room's
controller.

The link is a TCP relay in this process between each room broker and the central one, so
that cutting it is a network failure (the connections drop, new ones are refused), not a
broker restart.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from broker import Mosquitto
from mqttwatch import Recorder, wait_until

from controller.boards.generate import random_board
from controller.formats.events import record_events
from controller.formats.pbn import pbn_text

REPO = Path(__file__).resolve().parent.parent
ROOMS = {"a": ("A1", "A2"), "b": ("B1", "B2")}

#: docs/scale.md's bridge, with the link's address and the retry made short for the test
BRIDGE_TOPICS = (
    "topic bridge/+/state out 0",
    "topic bridge/+/indicator out 0",
    "topic bridge/+/result out 1",
    "topic bridge/+/alert out 1",
    "topic bridge/+/feed out 1",
    "topic bridge/+/error out 1",
    "topic bridge/+/bridge out 1",
    "topic bridge/+/health out 0",
    "topic bridge/controller/# out 1",
    "topic bridge/+/ruling in 1",
)


def room_bridge(room: str, link_port: int) -> tuple[str, ...]:
    return (f"connection central-{room}", f"address 127.0.0.1:{link_port}",
            "bridge_protocol_version mqttv311", f"remote_clientid room-{room}",
            "cleansession false", "restart_timeout 1", "bridge_attempt_unsubscribe false",
            "try_private true", *BRIDGE_TOPICS)


class Link:
    """A TCP relay standing for the network between a room and the centre: ``cut()`` drops
    every connection and refuses new ones until ``restore()``."""

    def __init__(self, target_port: int) -> None:
        self.target = ("127.0.0.1", target_port)
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.server.getsockname()[1])
        self.up = True
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            if not self.up:
                client.close()
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self) -> None:
        self.up = False
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                s.close()
            self.sockets.clear()

    def restore(self) -> None:
        self.up = True

    def close(self) -> None:
        self.closed = True
        self.cut()
        self.server.close()


def feed_items(listener: Recorder, table: str) -> set[str]:
    return {json.dumps(p, sort_keys=True) for t, p in listener.of("feed")
            if t == f"bridge/{table}/feed"}


def last_state(listener: Recorder, table: str) -> dict[str, Any] | None:
    states = [p for t, p in listener.of("state") if t == f"bridge/{table}/state"]
    return states[-1] if states else None


def results(listener: Recorder) -> dict[str, dict[str, Any]]:
    return {t.split("/")[1]: p for t, p in listener.of("result")}


@pytest.mark.timeout(180)
def test_rooms_bridged_to_the_centre_lose_nothing_when_the_link_is_cut(tmp_path: Path) -> None:
    rng = random.Random(32)
    boards = [random_board(rng, n) for n in (1, 2)]
    deals = tmp_path / "deals.pbn"
    deals.write_text(pbn_text(b.record for b in boards))
    # the session: every table plays both boards (the controllers and the broadcast relay
    # read the same file, so they name the same session)
    schedule = tmp_path / "round.toml"
    schedule.write_text("[tables]\n" + "".join(f'"{t}" = [1, 2]\n' for tables in
                                                ROOMS.values() for t in tables))
    central = Mosquitto(tmp_path / "central")
    central.start()
    links = {room: Link(central.port) for room in ROOMS}
    brokers = {room: Mosquitto(tmp_path / f"room-{room}",
                               extra=room_bridge(room, links[room].port)) for room in ROOMS}
    controllers: list[subprocess.Popen[bytes]] = []
    listeners: list[Recorder] = []
    publishers: list[mqtt.Client] = []
    try:
        for broker in brokers.values():
            broker.start()
        for room, tables in ROOMS.items():
            controllers.append(subprocess.Popen(
                [sys.executable, "-m", "controller.cli", "controller", "--broker",
                 brokers[room].url, "--tables", ",".join(tables), "--deals", str(deals),
                 "--schedule", str(schedule),
                 "--journal", str(tmp_path / f"journal-{room}.sqlite"),
                 "--client-id", f"controller-{room}", "--log-level", "WARNING"],
                cwd=REPO, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE))
        # the centre: where the console, the scorer and the broadcast read
        centre = Recorder(central.url, ("bridge/+/result", "bridge/+/feed", "bridge/+/alert",
                                        "bridge/+/state", "bridge/controller/#"),
                          client_id="centre-console", clean_session=False)
        listeners.append(centre)
        # subscribed before any table plays: an event bridged to the centre would be seen
        events_seen = Recorder(central.url, "bridge/+/event", client_id="centre-events",
                               clean_session=False)
        listeners.append(events_seen)
        rooms = {room: Recorder(brokers[room].url,
                                ("bridge/+/result", "bridge/+/feed", "bridge/+/alert",
                                 "bridge/+/state"),
                                client_id=f"room-{room}-watch", clean_session=False)
                 for room in ROOMS}
        listeners += rooms.values()
        # and the broadcast at the centre: it releases a board once every table has played
        # it, on the word of the room controllers serving them (wire contract 1.15)
        controllers.append(subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "broadcast", "--broker", central.url,
             "--schedule", str(schedule), "--deals", str(deals),
             "--store", str(tmp_path / "broadcast.sqlite"), "--log-level", "WARNING"],
            cwd=REPO, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE))
        public = Recorder(central.url, "public/#", client_id="centre-public")
        listeners.append(public)
        wait_until(lambda: len(centre.of("status")) >= 2, 30,
                 "both rooms' controllers online at the centre")

        # each table plays both boards; its events go to its room's broker only
        streams: list[tuple[str, str, dict[str, Any]]] = []
        for room, tables in ROOMS.items():
            for table in tables:
                src, seq = f"table-{table}-pi", 0
                for board in boards:
                    for event in record_events(board.record, src=src, seq_start=seq + 1):
                        seq = int(event["seq"])
                        streams.append((room, table, dict(event)))
        # interleaved by table, in each table's order
        by_table: dict[str, list[tuple[str, str, dict[str, Any]]]] = {}
        for item in streams:
            by_table.setdefault(item[1], []).append(item)
        order: list[tuple[str, str, dict[str, Any]]] = []
        while any(by_table.values()):
            for items in by_table.values():
                if items:
                    order.append(items.pop(0))
        for room in ROOMS:
            pub = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"tables-{room}")
            pub.connect("127.0.0.1", brokers[room].port)
            pub.loop_start()
            publishers.append(pub)
        publisher = dict(zip(ROOMS, publishers, strict=True))

        cut_at, restore_at = len(order) * 2 // 5, len(order) * 3 // 4
        for i, (room, table, event) in enumerate(order):
            if i == cut_at:
                for link in links.values():
                    link.cut()
            if i == restore_at:
                # the tables played on meanwhile: every result so far is in the room
                played = {t for (r, t, _e) in order[:i]}
                finished_in_room = {t for room_l in rooms.values() for t in results(room_l)}
                assert finished_in_room <= played
            publisher[room].publish(f"bridge/{table}/event", json.dumps(event),
                                    qos=1).wait_for_publish(10)
            time.sleep(0.002)
        all_tables = [t for tables in ROOMS.values() for t in tables]
        # no table waited on the link: each room's controller finished its tables' boards
        # while the link was still cut
        for room, tables in ROOMS.items():
            wait_until(lambda room=room, tables=tables: all(
                results(rooms[room]).get(t, {}).get("board") == 2 for t in tables), 60,
                f"room {room}'s results with the link cut")
        centre_before = len(centre.of("result"))
        for link in links.values():
            link.restore()
        # the centre catches up: every result and feed item the rooms saw
        wait_until(lambda: all(results(centre).get(t, {}).get("board") == 2
                             for t in all_tables), 60, "the centre's results")
        for room, tables in ROOMS.items():
            for table in tables:
                wait_until(lambda room=room, table=table: feed_items(centre, table)
                         >= feed_items(rooms[room], table), 60,
                         f"table {table}'s feed at the centre")
        assert centre_before < len(centre.of("result"))
        # the broadcast at the centre released both boards of every table once the rooms'
        # results came through the link, and nothing before (the link was cut mid-board)
        wait_until(lambda: {(topic.split("/")[1], topic.split("/")[3]) for topic, _ in
                            public.of("1") + public.of("2") if "/board/" in topic}
                   >= {(t, b) for t in all_tables for b in ("1", "2")}, 60,
                   "every board of every table released at the centre")
        # and each table's state as the room last had it (a board finished while the link
        # was cut is not left showing an earlier trick at the centre)
        for room, tables in ROOMS.items():
            for table in tables:
                wait_until(lambda room=room, table=table: last_state(centre, table)
                         == last_state(rooms[room], table), 30, f"table {table}'s state")
        for room, tables in ROOMS.items():
            room_results = results(rooms[room])
            for table in tables:
                assert results(centre)[table] == room_results[table]
                assert feed_items(centre, table) == feed_items(rooms[room], table)
                boards_fed = {p.get("board") for t, p in centre.of("feed")
                              if t == f"bridge/{table}/feed"}
                assert boards_fed >= {1, 2}
        # the hot path stayed in the rooms: no table's events at the centre, though the
        # states those events made have reached it (above) over the same bridges
        assert events_seen.of("event") == []

        # a ruling given at the centre reaches the room's controller, which applies it: the
        # table's state, back up at the centre, names it as the last input
        ruling = {"v": 1, "src": "director-centre", "seq": 1, "ts": time.time(),
                  "ruling": "accept", "alert": 999}
        director = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="director-centre")
        director.connect("127.0.0.1", central.port)
        director.loop_start()
        publishers.append(director)
        states = Recorder(central.url, "bridge/+/state", client_id="centre-states",
                          clean_session=False)
        listeners.append(states)
        # subscribed once the centre's retained states come (every table has one by now)
        wait_until(lambda: bool(states.of("state")), 30, "the centre's retained states")
        director.publish("bridge/A2/ruling", json.dumps(ruling), qos=1).wait_for_publish(10)
        wait_until(lambda: any(t == "bridge/A2/state" and (p.get("last") or {}).get("src")
                             == "director-centre" for t, p in states.of("state")), 30,
                 "the room's state after a ruling given at the centre")
    finally:
        for client in publishers:
            client.loop_stop()
            client.disconnect()
        for listener in listeners:
            listener.close()
        for proc in controllers:
            proc.terminate()
        for proc in controllers:
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for link in links.values():
            link.close()
        for broker in brokers.values():
            broker.stop()
        central.stop()
    for proc in controllers:
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        assert "Traceback" not in stderr, stderr
