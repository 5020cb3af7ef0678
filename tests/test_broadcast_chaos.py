"""The relay under faults, against a real private mosquitto: a 3-table movement of three
rounds (two boards a round, one of each pair passed out fast) played while the relay and
the controller are killed (SIGTERM, SIGKILL) and paused (SIGSTOP 3 s) at seeded random
points; then the controller is restarted with the next session under the same relay.

Checked on one MQTT connection that sees ``bridge/+/result`` and ``public/#`` in the
broker's order: no public message of a board before every table of the movement has
published its result; every finished board at every table released, once (one
``public/{t}/result``), with every call and card; nothing of the next session public.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from boardevents import BoardScript, EventWriter, clean_board
from broker import Mosquitto
from mqttwatch import Recorder, wait_until

from controller.laws.cards import Seat, Suit, board_dealer

ROOT = Path(__file__).resolve().parent.parent
DEAL = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"
TABLES = ("1", "2", "3")
ROUNDS = 3
PASSED_OUT = {2, 4, 6}          # the second board of each set: four passes, fast


def boards_at(table: str, rnd: int) -> tuple[int, int]:
    s = (int(table) - 1 + rnd) % len(TABLES)
    return (2 * s + 1, 2 * s + 2)


def schedule(session_id: str) -> str:
    out = [f'[session]\nid = "{session_id}"\nevent = "Chaos pairs"\n']
    for r in range(ROUNDS):
        out.append(f"[[round]]\nnumber = {r + 1}\n[round.tables]\n")
        for t in TABLES:
            a, b = boards_at(t, r)
            out.append(f'"{t}" = {{ ns = {t}, ew = {int(t) + 3}, boards = [{a}, {b}] }}\n')
    return "".join(out)


def deals_pbn() -> str:
    return "\n".join(f'[Board "{b}"]\n[Dealer "{board_dealer(b)}"]\n[Deal "{DEAL}"]\n'
                     for b in range(1, 2 * len(TABLES) + 1))


def script(board: int) -> BoardScript:
    if board in PASSED_OUT:
        return BoardScript(board=board, deal=DEAL, calls=["Pass"] * 4)
    s = clean_board(board)
    return BoardScript(board=board, deal=DEAL, calls=s.calls, trump=Suit.H, declarer=Seat.S)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "controller.cli", *args]


class Proc:
    def __init__(self, tmp: Path, name: str, args: list[str]) -> None:
        self.tmp, self.name, self.args = tmp, name, args
        self.runs = 0
        self.p: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        self.runs += 1
        log = open(self.tmp / f"{self.name}-{self.runs}.log", "wb")
        self.p = subprocess.Popen(cli(*self.args), stdout=log, stderr=subprocess.STDOUT,
                                  cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def send(self, sig: int) -> None:
        assert self.p is not None
        self.p.send_signal(sig)

    def stop(self, sig: int = signal.SIGTERM) -> None:
        assert self.p is not None
        if self.p.poll() is None:
            self.p.send_signal(sig)
            try:
                self.p.wait(15)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait(5)

    def logs(self) -> str:
        return "".join(p.read_text(errors="replace")
                       for p in sorted(self.tmp.glob(f"{self.name}-*.log")))


def events_of_session(rnd: random.Random, src_tag: str) -> list[tuple[str, dict[str, Any]]]:
    """Every table's events of every round, the tables interleaved in random slices (as
    they play at once); a passed-out board and the next board's start come in a burst."""
    out: list[tuple[str, dict[str, Any]]] = []
    for r in range(ROUNDS):
        streams = {}
        for t in TABLES:
            writer = EventWriter(f"pi-{t}-{src_tag}-r{r}")
            evs: list[dict[str, Any]] = []
            for b in boards_at(t, r):
                evs += list(writer.board(script(b)))
            streams[t] = evs
        while streams:
            t = rnd.choice(sorted(streams))
            take = rnd.randint(5, 60)
            out += [(f"bridge/{t}/event", ev) for ev in streams[t][:take]]
            streams[t] = streams[t][take:]
            if not streams[t]:
                del streams[t]
    return out


FAULTS = ("relay-kill", "relay-term", "relay-stop", "controller-kill", "controller-stop",
          "controller-term", "relay-kill", "relay-stop")


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path / "broker") as b:
        yield b


@pytest.mark.parametrize("seed", [int(s) for s in os.environ.get("CHAOS_SEEDS", "28").split(",")])
def test_every_board_released_once_none_early_under_faults(
        tmp_path: Path, broker: Mosquitto, seed: int) -> None:
    import paho.mqtt.client as mqtt

    rnd = random.Random(seed)
    (tmp_path / "s1.toml").write_text(schedule("chaos-1"))
    (tmp_path / "s2.toml").write_text(schedule("chaos-2"))
    (tmp_path / "deals.pbn").write_text(deals_pbn())
    url = broker.url
    observer = Recorder(broker.url, ["bridge/+/result", "public/#"])
    controller = Proc(tmp_path, "controller", [
        "controller", "--broker", url, "--deals", str(tmp_path / "deals.pbn"), "--schedule",
        str(tmp_path / "s1.toml"), "--journal", str(tmp_path / "j1.sqlite"),
        "--status-interval", "1"])
    relay = Proc(tmp_path, "relay", [
        "broadcast", "--broker", url, "--schedule", str(tmp_path / "s1.toml"), "--store",
        str(tmp_path / "relay.sqlite"), "--deals", str(tmp_path / "deals.pbn")])
    publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2)  # type: ignore[attr-defined]
    publisher.connect("127.0.0.1", broker.port)
    publisher.loop_start()
    try:
        wait_until(lambda: any(t == "public/session" for t, _, _ in observer.snapshot()), 30,
                 "the relay")
        events = events_of_session(rnd, "s1")
        faults = sorted(rnd.sample(range(100, len(events) - 50), len(FAULTS)))
        plan = dict(zip(faults, rnd.sample(FAULTS, len(FAULTS)), strict=True))
        done_faults: list[str] = []
        for i, (topic, ev) in enumerate(events):
            publisher.publish(topic, json.dumps(ev), qos=1).wait_for_publish(10)
            fault = plan.get(i)
            if fault is None:
                if i % 40 == 0:
                    time.sleep(0.05)   # tables play at a human pace, now and then
                continue
            done_faults.append(fault)
            proc = relay if fault.startswith("relay") else controller
            if fault.endswith("kill"):
                proc.stop(signal.SIGKILL)
                proc.start()
            elif fault.endswith("term"):
                proc.stop(signal.SIGTERM)
                proc.start()
            else:
                proc.send(signal.SIGSTOP)
                time.sleep(3)
                proc.send(signal.SIGCONT)
        assert len(done_faults) == len(FAULTS)

        expected = {(t, b) for t in TABLES for r in range(ROUNDS) for b in boards_at(t, r)}

        def released() -> set[tuple[str, int]]:
            out = set()
            for topic, p, _ in observer.snapshot():
                parts = topic.split("/")
                if parts[0] == "public" and len(parts) == 4 and parts[2] == "board" and \
                        isinstance(p, dict) and p.get("status") == "complete":
                    out.add((parts[1], int(parts[3])))
            return out

        wait_until(lambda: released() >= expected, 120,
                 f"every board released (controller log: {tmp_path})")
        # anything late or duplicated was published before the relay took two sentinels
        # after it (another session's alerts, reported once taken): the first, taken after
        # every earlier message; the second, only once the first left the relay idle, so
        # after the release step that followed
        for mark in ("sentinel-released", "sentinel-after"):
            publisher.publish("bridge/9/alert", json.dumps(
                {"v": 1, "table": "9", "session": mark}), qos=1).wait_for_publish(10)
            wait_until(lambda mark=mark: f"session {mark!r}" in relay.logs(), 30,
                       f"the relay taking {mark}")
        seen = observer.snapshot()
        finished: set[tuple[str, int]] = set()
        results: dict[tuple[str, int], int] = {}
        views: dict[tuple[str, int], dict[str, Any]] = {}
        for topic, p, _ in seen:
            parts = topic.split("/")
            if parts[0] == "bridge" and isinstance(p, dict):
                finished.add((parts[1], p["board"]))
                continue
            if parts[1] in ("session", "commentary") or not isinstance(p, dict):
                continue
            if parts[-1] == "now":   # what a table plays now: never a call, card or hand
                assert set(p) <= {"v", "session", "table", "board", "phase", "contract",
                                  "declarer"}, p
                continue
            board = p.get("board")
            table = parts[1]
            assert p.get("session") == "chaos-1", (topic, p)
            # none early: every table of the movement had published its result
            for t in TABLES:
                if board in {b for r in range(ROUNDS) for b in boards_at(t, r)}:
                    assert (t, board) in finished, (
                        f"{topic} public before table {t} finished board {board}")
            if parts[2] == "result":
                results[(table, board)] = results.get((table, board), 0) + 1
            if parts[2] == "board":
                views[(table, board)] = p
        assert results == {key: 1 for key in expected}, "a board released twice or never"
        for (_, b), view in views.items():
            if b in PASSED_OUT:
                assert view["result"]["contract"] == "Pass" and len(view["calls"]) == 4
            else:   # every call and card, none lost to a kill
                assert len(view["cards"]) == 52 and len(view["calls"]) == len(script(b).calls)
        assert "Traceback" not in relay.logs()

        # the next session under the same relay: the controller restarted with its file
        controller.stop(signal.SIGTERM)
        controller.args = [a if a not in (str(tmp_path / "s1.toml"),
                                          str(tmp_path / "j1.sqlite"))
                           else a.replace("s1.toml", "s2.toml").replace("j1", "j2")
                           for a in controller.args]
        controller.start()
        before = len(observer.snapshot())
        for topic, ev in events_of_session(rnd, "s2")[: len(events) // 3]:   # round 1
            publisher.publish(topic, json.dumps(ev), qos=1).wait_for_publish(10)
        wait_until(lambda: sum(1 for t, _, _ in observer.snapshot()[before:]
                             if t.startswith("bridge/")) >= 2 * len(TABLES), 60,
                 "the next session's round 1 results")
        # the relay has read them: it held each table's as the next session's
        wait_until(lambda: all(f"held: table {t}: the controller runs session 'chaos-2'"
                               in relay.logs() for t in TABLES), 60,
                   "the relay holding the next session's results")
        leaked = [t for t, _, _ in observer.snapshot()[before:] if t.startswith("public/")]
        assert leaked == [], "the relay published the next session"
    finally:
        publisher.loop_stop()
        publisher.disconnect()
        observer.close()
        for proc in (relay, controller):
            if proc.p is not None and proc.p.poll() is None:
                proc.send(signal.SIGCONT)
            proc.stop()
