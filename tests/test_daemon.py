"""The rules daemon over a real mosquitto: durability, reconnects, bad input, status."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import aiomqtt
import msgspec
import pytest
from boardevents import EventWriter, clean_board, t08_revoke
from broker import Mosquitto
from mqttwatch import Publisher, Seen, Watch, daemon_process, stop_process

from controller import wire
from controller.broker.settings import BrokerSettings
from controller.commandline import ControllerError
from controller.engine import Engine
from controller.service import latency
from controller.service.daemon import ControllerDaemon
from controller.service.engines import build_engine
from controller.service.journal import Journal, JournalError

pytestmark = pytest.mark.timeout(180)


def reference(table: str, events: Sequence[dict[str, Any]]) -> Engine:
    """The Engine fed each event exactly once: what the daemon must end up with."""
    engine = Engine()
    for e in events:
        engine.handle(f"bridge/{table}/event", json.dumps(e).encode())
    return engine


def is_state(table: str, seq: int) -> Any:
    def pred(m: Seen) -> bool:
        return (m.kind == "state" and m.table == table and isinstance(m.payload, dict)
                and (m.payload.get("last") or {}).get("seq") == seq)
    return pred


def played_at(events: Sequence[dict[str, Any]], card: str) -> int:
    """Index of the event that plays ``card`` (not the hand scan's)."""
    first_call = next(i for i, e in enumerate(events) if e["zone"] == "bid")
    return next(i for i, e in enumerate(events) if i > first_call and e.get("card") == card
                and e["action"] == "present")


def is_status(status: str) -> Any:
    def pred(m: Seen) -> bool:
        return m.topic == "bridge/controller/status" and isinstance(m.payload, dict) \
            and m.payload.get("status") == status
    return pred


async def start_daemon(url: str, journal: Path | None) -> tuple[ControllerDaemon, asyncio.Event,
                                                                asyncio.Task[None]]:
    d = ControllerDaemon(broker=BrokerSettings.from_url(url), engine=build_engine(),
                         journal=Journal(journal) if journal else None, status_interval=0.5,
                         reconnect_min=0.1, reconnect_max=0.5)
    stop = asyncio.Event()
    task = asyncio.create_task(d.run(stop))
    await asyncio.wait_for(d.ready.wait(), 20)
    return d, stop, task


async def stop_daemon(d: ControllerDaemon, stop: asyncio.Event, task: asyncio.Task[None]) -> None:
    stop.set()
    await asyncio.wait_for(task, 20)
    if d.journal is not None:
        d.journal.close()


@pytest.fixture
async def daemon(mosquitto: Mosquitto, tmp_path: Path) -> AsyncIterator[ControllerDaemon]:
    d, stop, task = await start_daemon(mosquitto.url, tmp_path / "journal.sqlite")
    yield d
    await stop_daemon(d, stop, task)


async def test_a_whole_board_ends_in_its_result(mosquitto: Mosquitto,
                                                daemon: ControllerDaemon) -> None:
    script = clean_board(5)
    events = list(EventWriter("table-1-pi").board(script))
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).events("1", events)
        result = (await w.wait(lambda m: m.kind == "result" and m.table == "1")).payload
        await w.wait(is_state("1", events[-1]["seq"]))
    # 4H by S, AUTO gives 11 tricks, board 5 is NS vulnerable: 4H+1 = +650 (Law 77)
    assert result["contract"] == "4H" and result["declarer"] == "S"
    assert result["tricks"] == 11 and result["score_ns"] == 650
    assert w.last("state", "1") == reference("1", events).snapshot("1")


async def test_the_status_carries_the_daemons_own_event_to_state_times(
        mosquitto: Mosquitto, daemon: ControllerDaemon) -> None:
    """Wire 1.16: every event the daemon took in is counted once in the status' latency
    histogram, and the histogram decodes as its Struct."""
    events = list(EventWriter("table-1-pi").board(clean_board(5)))
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).events("1", events)
        await w.wait(is_state("1", events[-1]["seq"]))
        mark = len(w.seen)
        online = (await w.wait(is_status("online"), after=mark)).payload
    status = msgspec.convert(online, wire.ControllerStatus)
    assert status.latency is not None
    assert status.latency.events == len(events) == sum(status.latency.counts)
    assert status.latency.le_ms == list(latency.BOUNDS_MS)
    assert status.latency.p99_ms is not None
    assert 0 < status.latency.p99_ms <= status.latency.max_ms < 60_000


async def test_malformed_payloads_get_an_error_and_the_table_goes_on(
        mosquitto: Mosquitto, daemon: ControllerDaemon) -> None:
    ok = EventWriter("bad-input-pi")
    first = ok.event(type="tag", zone="board", action="present", uid="BD0001", board=1)
    bad: list[tuple[str, bytes]] = [
        ("bridge/1/event", b"{not json"),
        ("bridge/1/event", b"\xff\xfe\x00garbage"),
        ("bridge/1/event", b""),
        ("bridge/1/event", b"[1, 2, 3]"),
        ("bridge/1/event", json.dumps({"v": 1, "src": "x", "seq": "one", "ts": 1.0,
                                       "type": "tag"}).encode()),
        ("bridge/1/event", json.dumps({"v": 1, "src": "x", "seq": 5, "ts": 1.0, "type": "tag",
                                       "zone": "tray", "seat": 7, "action": "present",
                                       "uid": "AB", "card": "SA"}).encode()),
        ("bridge/1/event", json.dumps({"v": 1, "src": "x", "seq": 6, "ts": 1.0,
                                       "type": "tag", "zone": "tray", "seat": "N",
                                       "action": "present", "uid": "AB",
                                       "card": "ZZ"}).encode()),
        ("bridge/1/event", b'{"v": 1, "pad": "' + b"x" * (1024 * 1024) + b'"}'),
        ("bridge/1/ruling", b"{not json"),
        ("bridge/1/ruling", json.dumps({"v": 1, "src": "td", "seq": 1, "ts": 1.0,
                                        "ruling": "banish"}).encode()),
        ("bridge/1/ruling", json.dumps({"v": 1, "src": "td", "seq": 2, "ts": 1.0,
                                        "ruling": "adjust", "tricks": "many"}).encode()),
    ]
    # unknown fields are not an error: forward compatible, applied and counted
    extra = ok.event(type="tag", zone="board", action="present", uid="BD0001", board=1,
                     colour="blue")
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).send([("bridge/1/event", json.dumps(first))] + bad +
                                            [("bridge/1/event", json.dumps(extra))])
        await w.wait(is_state("1", extra["seq"]))
        errors = [m.payload for m in w.of("error", "1")]
    assert len(errors) == len(bad)
    assert all(isinstance(e, dict) and e["table"] == "1" and e["error"] for e in errors)
    assert any(e["error"] == "payload_too_large" for e in errors)
    assert daemon.counters.oversize == 1
    assert daemon.engine.stats["events"] == 2  # the first event and the one with "colour"
    # refused before the journal: a 1 MB payload is not kept
    assert daemon.journal is not None
    assert max(len(e.payload) for e in daemon.journal.incoming()) < 64 * 1024


async def test_two_tables_on_one_daemon_do_not_cross(mosquitto: Mosquitto,
                                                     daemon: ControllerDaemon) -> None:
    a = list(EventWriter("table-1-pi").board(clean_board(5)))
    b = list(EventWriter("table-A12-pi").board(t08_revoke()))
    mixed: list[tuple[str, dict[str, Any]]] = []
    for i in range(max(len(a), len(b))):
        if i < len(a):
            mixed.append(("bridge/1/event", a[i]))
        if i < len(b):
            mixed.append(("bridge/A12/event", b[i]))
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).send(mixed)
        await w.wait(is_state("1", a[-1]["seq"]))
        await w.wait(is_state("A12", b[-1]["seq"]))
        ra = w.last("result", "1")
        rb = w.last("result", "A12")
    assert (ra["board"], ra["score_ns"], ra["irregularities"]) == (5, 650, [])
    assert (rb["board"], rb["tricks_played"], rb["tricks"], rb["score_ns"]) == (10, 9, 11, 650)
    assert [i["code"] for i in rb["irregularities"]] == ["REVOKE"]
    assert all(m.payload["table"] == "1" for m in w.of("state", "1"))
    assert all(m.payload["table"] == "A12" for m in w.of("alert", "A12"))
    assert w.of("alert", "1") == []
    assert w.last("state", "1") == reference("1", a).snapshot("1")
    assert w.last("state", "A12") == reference("A12", b).snapshot("A12")


@pytest.mark.parametrize("persistence", [True, False])
async def test_broker_restart_mid_board(tmp_path: Path, persistence: bool) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    half = len(events) // 2
    with Mosquitto(tmp_path / "broker", persistence=persistence) as broker:
        d, stop, task = await start_daemon(broker.url, tmp_path / "journal.sqlite")
        try:
            async with Watch(broker.url) as w:
                await Publisher(broker.url).events("1", events[:half])
                await w.wait(is_state("1", events[half - 1]["seq"]))
                broker.restart()
                mark = len(w.seen)
                # retained state is back (kept by the broker, or republished by the daemon)
                await w.wait(is_state("1", events[half - 1]["seq"]), after=mark)
                await asyncio.wait_for(d.ready.wait(), 20)
                await Publisher(broker.url).events("1", events[half:])
                result = (await w.wait(lambda m: m.kind == "result")).payload
                await w.wait(is_state("1", events[-1]["seq"]))
            assert d.counters.connects >= 2
            assert (result["tricks"], result["score_ns"]) == (11, 650)
            assert w.last("state", "1") == reference("1", events).snapshot("1")
        finally:
            await stop_daemon(d, stop, task)


async def test_sigkill_and_restart_mid_board_loses_nothing_and_applies_once(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    journal = tmp_path / "journal.sqlite"
    log = tmp_path / "daemon.log"
    # trick 6 (the revoke) is played by event ~170: kill after it, before it is established
    revoke_at = played_at(events, "H9")
    pub = Publisher(mosquitto.url)
    async with Watch(mosquitto.url) as w:
        proc = daemon_process(mosquitto.url, journal, log=log)
        try:
            await w.wait(is_status("online"))
            await pub.events("1", events[:revoke_at + 1])
            await w.wait(is_state("1", events[revoke_at]["seq"]))
            alert = (await w.wait(lambda m: m.kind == "alert")).payload
            assert (alert["code"], alert["status"], alert["seat"]) == ("REVOKE", "open", "E")
            # more events, and a kill while the daemon is busy with them
            burst = events[revoke_at + 1:revoke_at + 9]
            await pub.events("1", burst)
            proc.send_signal(signal.SIGKILL)
            proc.wait(20)
            await w.wait(is_status("offline"))
            # the bridge goes on while the controller is down: the broker queues them
            down = events[revoke_at + 9:revoke_at + 20]
            await pub.events("1", down)
            mark = len(w.seen)
            proc = daemon_process(mosquitto.url, journal, log=log)
            await w.wait(is_status("online"), after=mark)
            await w.wait(is_state("1", down[-1]["seq"]), after=mark)
            # a bridge resending from its spool: duplicates are dropped and counted
            await pub.events("1", events[revoke_at - 3:revoke_at + 20])
            await pub.events("1", events[revoke_at + 20:])
            result = (await w.wait(lambda m: m.kind == "result")).payload
            await w.wait(is_state("1", events[-1]["seq"]), after=mark)

            def dup_status(m: Seen) -> bool:
                return is_status("online")(m) and m.payload["engine"]["duplicates"] >= 23
            await w.wait(dup_status, after=mark)
        finally:
            assert stop_process(proc) == 0, log.read_text()[-3000:]
    assert (result["tricks_played"], result["tricks"], result["score_ns"]) == (9, 11, 650)
    assert [(i["code"], i["status"]) for i in result["irregularities"]] == [
        ("REVOKE", "established")]
    ref = reference("1", events)
    assert w.last("state", "1") == ref.snapshot("1")
    # one alert per change of status, each once: open, then established
    statuses = [m.payload["status"] for m in w.of("alert", "1")]
    assert statuses[0] == "open" and statuses[-1] == "established"
    # every event journaled exactly once (duplicates are journaled, then dropped by seq)
    with Journal(journal) as j:
        seqs = [json.loads(e.payload)["seq"] for e in j.incoming()]
    assert set(seqs) == {e["seq"] for e in events}


async def test_restart_keeps_open_alerts(mosquitto: Mosquitto, tmp_path: Path) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    revoke_at = played_at(events, "H9")
    journal = tmp_path / "journal.sqlite"
    d, stop, task = await start_daemon(mosquitto.url, journal)
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).events("1", events[:revoke_at + 1])
        before = (await w.wait(is_state("1", events[revoke_at]["seq"]))).payload
    await stop_daemon(d, stop, task)
    assert [i["code"] for i in before["irregularities"]] == ["REVOKE"]
    d, stop, task = await start_daemon(mosquitto.url, journal)
    try:
        assert d.counters.rebuilt == revoke_at + 1
        assert d.engine.snapshot("1") == before
    finally:
        await stop_daemon(d, stop, task)


class FailingOnceJournal(Journal):
    """A real journal whose first write fails, as a full disk would."""

    failed = False

    def append_incoming(self, messages: Sequence[tuple[str, bytes]],
                        received: float | None = None, *, durable: bool = True) -> list[int]:
        if not FailingOnceJournal.failed:
            FailingOnceJournal.failed = True
            raise JournalError("disk full (injected)")
        return super().append_incoming(messages, received, durable=durable)


async def test_a_message_not_journaled_is_not_acknowledged_and_comes_back(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    events = list(EventWriter("table-1-pi").board(clean_board(5)))[:5]
    d = ControllerDaemon(broker=BrokerSettings.from_url(mosquitto.url), engine=build_engine(),
                         journal=FailingOnceJournal(tmp_path / "j.sqlite"),
                         reconnect_min=0.1, reconnect_max=0.2)
    stop = asyncio.Event()
    task = asyncio.create_task(d.run(stop))
    try:
        await asyncio.wait_for(d.ready.wait(), 20)
        async with Watch(mosquitto.url) as w:
            await Publisher(mosquitto.url).events("1", events)
            await w.wait(is_state("1", events[-1]["seq"]))
        assert FailingOnceJournal.failed
        assert d.counters.connects >= 2  # the failure dropped the session, unacknowledged
        assert d.journal is not None
        assert sorted(json.loads(e.payload)["seq"] for e in d.journal.incoming()) == \
            [e["seq"] for e in events]
        assert d.engine.snapshot("1") == reference("1", events).snapshot("1")
    finally:
        await stop_daemon(d, stop, task)


class HeldSyncJournal(Journal):
    """A real journal whose ``sync`` waits until the test lets it go."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.held = False  # the daemon's own sync at connect goes through
        self.syncing = threading.Event()
        self.release = threading.Event()

    def sync(self) -> None:
        if not self.held:
            super().sync()
            return
        self.syncing.set()
        if not self.release.wait(30):
            raise JournalError("held too long (test)")
        super().sync()


async def test_the_state_does_not_wait_for_the_disk_and_nothing_is_acked_before_it(
        mosquitto: Mosquitto, tmp_path: Path) -> None:
    """The batch's state goes out while its fsync is under way; its end-to-end ack (and
    its PUBACK) only once the fsync is done."""
    events = list(EventWriter("table-1-pi").board(clean_board(5)))[:1]
    journal = HeldSyncJournal(tmp_path / "j.sqlite")
    d = ControllerDaemon(broker=BrokerSettings.from_url(mosquitto.url), engine=build_engine(),
                         journal=journal)
    stop = asyncio.Event()
    task = asyncio.create_task(d.run(stop))
    try:
        await asyncio.wait_for(d.ready.wait(), 20)
        journal.held = True
        async with Watch(mosquitto.url) as w:
            await Publisher(mosquitto.url).events("1", events)
            await w.wait(is_state("1", events[0]["seq"]))
            # the state is out before the sync ends (it is held); the worker hands the state
            # to paho and then starts the sync, so the state may arrive a moment before it
            assert await asyncio.to_thread(journal.syncing.wait, 20)
            await asyncio.sleep(0.3)
            assert not [m for m in w.seen if m.topic.startswith("bridge/1/ack/")]
            assert journal.last_incoming == 1  # written before applied
            journal.release.set()
            ack = await w.wait(lambda m: m.topic == f"bridge/1/ack/{events[0]['src']}")
            assert isinstance(ack.payload, dict) and ack.payload["seq"] == events[0]["seq"]
    finally:
        journal.release.set()
        await stop_daemon(d, stop, task)


async def test_status_is_retained_and_the_will_says_offline(mosquitto: Mosquitto,
                                                            tmp_path: Path) -> None:
    async with Watch(mosquitto.url) as w:
        proc = daemon_process(mosquitto.url, tmp_path / "j.sqlite")
        try:
            online = (await w.wait(is_status("online"))).payload
            assert online["src"] == "bridge-table-controller-bridge"
            proc.send_signal(signal.SIGKILL)
            proc.wait(20)
            offline = await w.wait(is_status("offline"))
            assert offline.payload == {"v": 1, "src": online["src"], "status": "offline"}
        finally:
            stop_process(proc)
        mark = len(w.seen)
        proc = daemon_process(mosquitto.url, tmp_path / "j.sqlite")
        await w.wait(is_status("online"), after=mark)
        assert stop_process(proc, signal.SIGTERM) == 0  # a clean stop says offline itself
        await w.wait(is_status("offline"), after=mark)
    async with Watch(mosquitto.url) as fresh:  # and it stays retained for newcomers
        m = await fresh.wait(lambda m: m.topic == "bridge/controller/status")
        assert m.retain and m.payload["status"] == "offline"


def test_journal_in_use_is_a_clear_error(tmp_path: Path) -> None:
    from controller.service.cli_controller import main
    with Journal(tmp_path / "j.sqlite"):
        assert main(["--broker", "mqtt://127.0.0.1:9", "--journal",
                     str(tmp_path / "j.sqlite")]) == 2


@pytest.mark.parametrize("url", ["http://host:1883", "mqtt://host:port"])
def test_bad_broker_url_is_a_clear_error(url: str) -> None:
    with pytest.raises(ControllerError):
        BrokerSettings.from_url(url)


def test_broker_url_forms() -> None:
    s = BrokerSettings.from_url("mqtts://u:p%40ss@broker.local")
    assert (s.host, s.port, s.tls, s.username, s.password) == ("broker.local", 8883, True, "u",
                                                               "p@ss")
    assert BrokerSettings.from_url("127.0.0.1:1884").port == 1884


def test_deals_file_errors_are_clear(tmp_path: Path) -> None:
    from controller.service.engines import load_deals
    with pytest.raises(ControllerError, match="cannot read"):
        load_deals(tmp_path / "absent.pbn")
    f = tmp_path / "deals.pbn"
    f.write_text('[Board "7"]\n[Dealer "S"]\n[Vulnerable "All"]\n'
                 f'[Deal "{t08_revoke().deal}"]\n')
    deals = load_deals(f)
    assert deals[7].dealer.name == "S" and deals[7].deal is not None


async def test_tls_and_password(tmp_path: Path) -> None:
    """mqtts:// with a CA file and a user: what a club broker on the network asks for."""
    import shutil
    import socket
    import ssl
    import subprocess

    from broker import free_port, mosquitto_binary

    if shutil.which("openssl") is None or shutil.which("mosquitto_passwd") is None:
        pytest.fail("openssl and mosquitto_passwd are needed (apt-get install openssl "
                    "mosquitto)")
    cert, key, pw = tmp_path / "cert.pem", tmp_path / "key.pem", tmp_path / "passwd"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout",
                    str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(pw), "controller", "s3cret"],
                   check=True, capture_output=True)
    port = free_port()
    conf = tmp_path / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\ncertfile {cert}\nkeyfile {key}\n"
                    f"password_file {pw}\nallow_anonymous false\nuser root\n")
    proc = subprocess.Popen([mosquitto_binary(), "-c", str(conf)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                await asyncio.sleep(0.05)
        wrong = ControllerDaemon(
            broker=BrokerSettings.from_url(f"mqtts://127.0.0.1:{port}", username="controller",
                                           password="wrong", ca_file=str(cert)),
            engine=build_engine(), reconnect_min=0.1, reconnect_max=0.2)
        stop_wrong = asyncio.Event()
        task_wrong = asyncio.create_task(wrong.run(stop_wrong))
        d = ControllerDaemon(
            broker=BrokerSettings.from_url(f"mqtts://127.0.0.1:{port}", username="controller",
                                           password="s3cret", ca_file=str(cert)),
            engine=build_engine(), client_id="tls-controller")
        stop = asyncio.Event()
        task = asyncio.create_task(d.run(stop))
        await asyncio.wait_for(d.ready.wait(), 20)
        tls = ssl.create_default_context(cafile=str(cert))
        async with aiomqtt.Client("127.0.0.1", port, username="controller", password="s3cret",
                                  tls_context=tls) as c:
            await c.subscribe("bridge/#", qos=1)
            event = EventWriter("tls-pi").event(type="tag", zone="board", action="present",
                                                uid="BD0001", board=1)
            await c.publish("bridge/9/event", json.dumps(event), qos=1)
            async with asyncio.timeout(20):
                async for m in c.messages:
                    if m.topic.value == "bridge/9/state":
                        assert json.loads(m.payload)["last"]["src"] == "tls-pi"  # type: ignore[arg-type]
                        break
        # a login refused before the broker ever accepted it is not retried (issue 43)
        from controller.broker.login import LoginRefused
        with pytest.raises(LoginRefused, match="refused the login"):
            await asyncio.wait_for(task_wrong, 20)
        assert wrong.counters.connects == 0 and not wrong.ready.is_set()
        stop.set()
        stop_wrong.set()
        await asyncio.wait_for(task, 20)
    finally:
        proc.terminate()
        proc.wait(10)


async def test_a_directors_ruling_reaches_the_table_through_the_daemon(
        mosquitto: Mosquitto, daemon: ControllerDaemon) -> None:
    events = list(EventWriter("table-1-pi").board(t08_revoke()))
    td = EventWriter("td-console")
    async with Watch(mosquitto.url) as w:
        await Publisher(mosquitto.url).events("1", events)
        first = (await w.wait(kind_is_result(11))).payload
        alert_id = first["irregularities"][0]["id"]
        # Law 64C: the director rules the non-offenders were damaged by one trick less
        ruling = td.event(ruling="adjust", alert=alert_id, tricks=10)
        await Publisher(mosquitto.url).send([("bridge/1/ruling", ruling)])
        adjusted = (await w.wait(kind_is_result(10))).payload
    assert (adjusted["tricks"], adjusted["score_ns"]) == (10, 620)
    assert adjusted["tricks_played"] == 9


def kind_is_result(tricks: int) -> Any:
    def pred(m: Seen) -> bool:
        return m.kind == "result" and m.table == "1" and m.payload.get("tricks") == tricks
    return pred
