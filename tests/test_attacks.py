"""Nobody disconnects, impersonates or drowns anybody (issue 27): the attacks of a player
or a spectator with the credentials they really have, against a real mosquitto started
with ``bridge-table broker-config``'s files and a real controller; and the legitimate paths
still working beside them.

- takeovers of every fixed and default client id (the broker binds the client id to the
  user: ``use_username_as_clientid``);
- a foreign ``src`` (the console's, another table's, junk to fill the source limit): the
  controller's ``--identities`` refuses it with an ``error``;
- a flood of one table (the controller's per-table intake bound) while another plays;
- oversize packets and payloads, a queue for an absent controller filled with large
  messages (``max_packet_size``, ``message_size_limit``, ``max_queued_bytes``);
- a watcher on the output folder while broker-config writes it (no secret readable by
  others, even for a moment), and the journal created 0600;
- option values that would open the ACL.

No timing is asserted: the flood's cost to another table is measured in
bench/bench_flood.py (docs/security.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from boardevents import EventWriter, clean_board
from broker import venue_broker
from test_venue_config import (  # noqa: F401 - the fixture closes the probes
    NOT_AUTHORIZED,
    WAIT,
    Venue,
    _close_probes,
    _probes,
    connected,
    probe,
)

from controller.broker.identity import load_identities
from controller.broker.settings import read_credentials
from controller.service.intake import Intake
from controller.venue.cli import main
from controller.venue.config import (
    BrokerConfigError,
    BrokerPlan,
    accounts,
    check_id,
    parse_tables,
)

pytestmark = pytest.mark.timeout(240)

DIRECTOR_SRC = "console-td"
#: the client ids the project's commands use by default or as fixed ids, and every user
#: name (what the broker turns each client id into)
KNOWN_IDS = ("bridge-table-controller-bridge", "bridge-table-controller-bridge-1",
             "bridge-table-controller-bridge-part1of2", "table-1-pi", "table-2-pi",
             "station-1-verify", "venue-broadcast", "bridge-table-console", "vugraph",
             "controller", "director", "broadcast", "public", "table-1", "table-2",
             "table-3", "table-1-controller")


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    tmp = tmp_path_factory.mktemp("attacks")
    broker, out = venue_broker(tmp, ["1", "2", "3"], director_src=[DIRECTOR_SRC])
    with broker:
        yield Venue(broker, out, 0)


def _daemon(venue: Venue, **kw: Any) -> Any:
    from controller.service.daemon import ControllerDaemon
    from controller.service.engines import build_engine
    return ControllerDaemon(broker=venue.settings("controller"), engine=build_engine(),
                            identities=load_identities(venue.out / "identities.toml"), **kw)


async def _until(what: str, ready: Any) -> None:
    async with asyncio.timeout(WAIT):
        while not ready():
            await asyncio.sleep(0.05)


def _board(bridge: Any, table: str, src: str, board: int = 5) -> None:
    for event in EventWriter(src).board(clean_board(board)):
        assert bridge.publish(f"bridge/{table}/event", event) < 0x80


def _payloads(p: Any, topic: str) -> list[dict[str, Any]]:
    with p.cond:
        return [json.loads(m.payload) for m in p.messages if m.topic == topic]


# -- takeovers --------------------------------------------------------------------------------

#: (victims: user -> the client id its program uses, the topic it reads; attackers)
TAKEOVERS = [
    ({"controller": ("bridge-table-controller-bridge", "bridge/1/event"),
      "table-1": ("table-1-pi", "bridge/1/indicator"),
      "director": ("bridge-table-console", "bridge/1/state"),
      "broadcast": ("venue-broadcast", "bridge/1/alert"),
      "public": ("vugraph", "public/1/feed")}, ("table-2", "table-3")),
    ({"table-2": ("table-2-pi", "bridge/2/indicator"),
      "table-3": ("table-3-pi", "bridge/3/indicator")},
     ("public", "broadcast", "director", "controller", "table-1")),
]


@pytest.mark.parametrize("victims, attackers", TAKEOVERS)
def test_no_login_takes_over_another_clients_id(venue: Venue, victims: dict[str, Any],
                                                attackers: tuple[str, ...]) -> None:
    """Users connected with the client id their program uses; then every other user
    connects with each known client id (the controller's fixed one, the bridges' default
    ``src``, every user name): nobody is disconnected, each still receives."""
    watching = {user: connected(venue, user, client_id=cid)
                for user, (cid, _) in victims.items()}
    for user, p in watching.items():
        assert p.subscribe(victims[user][1]) == [1]
    for attacker in attackers:
        for cid in KNOWN_IDS:
            p = probe(venue, attacker, client_id=cid)
            assert p.connack == 0, (attacker, cid)  # it logs in, as itself
            p.close()
            _probes.remove(p)
    for user, p in watching.items():
        assert p.disconnects == [], f"{user} was disconnected"
    # each still receives what is published for it
    controller = connected(venue, "controller", client_id="check") \
        if "controller" not in watching else watching["controller"]
    for user, (_, topic) in victims.items():
        sender = "broadcast" if topic.startswith("public/") else (
            "table-1" if topic.endswith("/event") else "controller")
        out = watching.get(sender) or (controller if sender == "controller"
                                       else connected(venue, sender))
        assert out.publish(topic, {"alive": user}) < 0x80
        watching[user].wait_message(topic, f'"alive": "{user}"')


async def test_the_controller_outlives_takeover_attempts(venue: Venue) -> None:
    """The issue's attack: 18 logins with the controller's fixed client id. The controller
    stays connected (one connection all along, its status online) and the board played
    meanwhile gets its result."""
    daemon = _daemon(venue)
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    director = connected(venue, "director")
    director.subscribe("bridge/2/result")
    director.subscribe("bridge/controller/status")
    try:
        await asyncio.wait_for(daemon.ready.wait(), WAIT)
        for n in range(18):
            attacker = ("public", "table-2", "table-3")[n % 3]
            p = await asyncio.to_thread(probe, venue, attacker, client_id=daemon.client_id)
            p.close()
            _probes.remove(p)
        bridge = await asyncio.to_thread(connected, venue, "table-2", client_id="table-2-pi")
        await asyncio.to_thread(_board, bridge, "2", "table-2-pi")
        await _until("a result", lambda: _payloads(director, "bridge/2/result"))
        assert daemon.counters.connects == 1
        assert [s["status"] for s in _payloads(director, "bridge/controller/status")] \
            == ["online"]
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


# -- impersonation ----------------------------------------------------------------------------

async def test_a_table_cannot_speak_with_another_src(venue: Venue) -> None:
    """Table 1's Pi sends an event with the console's ``src`` and seq 9e12, another table's
    ``src``, and 70 made-up ones: each is refused with an ``error``, none takes a seat; the
    director's next ruling is applied, and table 1's own bridge still plays."""
    daemon = _daemon(venue)
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    director = connected(venue, "director")
    for topic in ("bridge/1/error", "bridge/1/state", "bridge/1/result"):
        director.subscribe(topic)
    try:
        await asyncio.wait_for(daemon.ready.wait(), WAIT)
        pi = await asyncio.to_thread(connected, venue, "table-1", client_id="table-1-pi")
        forged = EventWriter(DIRECTOR_SRC, seq=9_000_000_000_000).event(
            type="tag", zone="board", action="present", uid="BD0005", board=5)
        assert pi.publish("bridge/1/event", forged) < 0x80
        other = EventWriter("table-2-pi").event(type="tag", zone="board", action="present",
                                                uid="BD0005", board=5)
        assert pi.publish("bridge/1/event", other) < 0x80
        for n in range(70):
            junk = EventWriter(f"junk-{n}").event(type="tag", zone="board",
                                                  action="present", uid="BD0005", board=5)
            pi.publish("bridge/1/event", junk, qos=0)
        await _until("72 errors", lambda: len(_payloads(director, "bridge/1/error")) >= 72)
        errors = _payloads(director, "bridge/1/error")
        assert all(e["error"].startswith("refused: src") for e in errors)
        assert {e["detail"]["src"] for e in errors} >= {DIRECTOR_SRC, "table-2-pi", "junk-69"}
        assert daemon.counters.foreign_src == 72
        assert not any(k.startswith("1/") for k in daemon.engine.refusals)
        # the legitimate paths: table 1's bridge plays a board, the director rules
        await asyncio.to_thread(_board, pi, "1", "table-1-pi")
        await _until("a result", lambda: _payloads(director, "bridge/1/result"))
        ruling = {"v": 1, "src": DIRECTOR_SRC, "seq": 1, "ts": 1.0, "ruling": "clear",
                  "alert": 999}
        assert director.publish("bridge/1/ruling", ruling) < 0x80
        await _until("the ruling applied", lambda: any(
            s.get("last") == {"src": DIRECTOR_SRC, "seq": 1}
            for s in _payloads(director, "bridge/1/state")))
        # a ruling from a src that is not a director's is refused too
        bad = dict(ruling, src="table-1-pi", seq=2)
        assert director.publish("bridge/1/ruling", bad) < 0x80
        await _until("its error", lambda: any(
            e["input"] == "ruling" for e in _payloads(director, "bridge/1/error")))
        assert len(daemon.engine._tables["1"].seqs) == 2  # noqa: SLF001 - the two seats
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


# -- floods -----------------------------------------------------------------------------------

async def test_a_flooding_table_is_bounded_and_another_still_plays(
        venue: Venue, monkeypatch: pytest.MonkeyPatch) -> None:
    """Table 3 floods the controller (QoS 0, as fast as paho sends, for 3 s) while table 2
    plays a board: the flood past table 3's intake bound is dropped and reported on its
    ``error``, then its events are paused (unsubscribed: the broker drops the flood);
    table 2's board gets its result with none of its events dropped; once the pause is
    over, table 3's own bridge plays a board."""
    monkeypatch.setattr("controller.service.daemon.PAUSE", 1.0)
    # a whole board (about 215 events) is sent at once here: it fits in the burst
    daemon = _daemon(venue, intake=Intake(burst=300, rate=20.0))
    stop = asyncio.Event()
    task = asyncio.create_task(daemon.run(stop))
    director = connected(venue, "director")
    for topic in ("bridge/3/error", "bridge/2/result", "bridge/2/error", "bridge/3/state"):
        director.subscribe(topic)
    try:
        await asyncio.wait_for(daemon.ready.wait(), WAIT)
        flooder = await asyncio.to_thread(connected, venue, "table-3", client_id="table-3-pi")
        player = await asyncio.to_thread(connected, venue, "table-2", client_id="table-2-pi")
        writer = EventWriter("table-3-pi")

        def flood() -> None:
            until = threading.Event()
            threading.Timer(3.0, until.set).start()
            while not until.is_set():
                flooder.client.publish("bridge/3/event", json.dumps(writer.event(
                    type="button", seat="N", button="undo")), qos=0)
                if writer.seq % 200 == 0:
                    until.wait(0.01)  # paho's thread sends what is queued

        flooding = asyncio.create_task(asyncio.to_thread(flood))
        await asyncio.to_thread(_board, player, "2", "table-2-pi", 7)
        await flooding
        await _until("table 2's result", lambda: any(
            r["board"] == 7 for r in _payloads(director, "bridge/2/result")))
        await _until("the flood paused", lambda: any(
            e["error"] == "rate_limited" and "paused" in e["detail"]
            for e in _payloads(director, "bridge/3/error")))
        assert daemon.counters.throttled > 0
        assert not any(e["error"] == "rate_limited" for e in _payloads(director, "bridge/2/error"))
        # the pause ends: table 3's bridge is heard again
        await _until("the pause over", lambda: not daemon._paused)  # noqa: SLF001
        seq = writer.seq + 1000
        event = EventWriter("table-3-pi", seq=seq).event(
            type="tag", zone="board", action="present", uid="BD0009", board=9)

        def applied() -> bool:
            return any(s.get("last") == {"src": "table-3-pi", "seq": seq}
                       for s in _payloads(director, "bridge/3/state"))

        # sent again each second until applied, as its bridge does until acknowledged
        # (ack_timeout): flood messages still in the controller's socket when the pause
        # ends may take the table's refilled allowance first, and drop the first sending,
        # as may a subscription given back but not acknowledged yet (no pause for it)
        async with asyncio.timeout(WAIT):
            while not applied():
                assert await asyncio.to_thread(flooder.publish, "bridge/3/event", event) < 0x80
                for _ in range(20):
                    if applied():
                        break
                    await asyncio.sleep(0.05)
    finally:
        stop.set()
        await asyncio.wait_for(task, 30)


async def test_what_was_queued_for_an_absent_controller_is_no_flood(tmp_path: Path) -> None:
    """A board's 215 events queued by the broker while the controller was away arrive at
    once when it comes back: past a bound of 50, all applied (the backlog allowance), the
    board gets its result."""
    broker, out = venue_broker(tmp_path, ["1"], director_src=[DIRECTOR_SRC])
    venue = Venue(broker, out, 0)
    with broker:
        director = connected(venue, "director")
        director.subscribe("bridge/1/result")
        for run in range(2):
            daemon = _daemon(venue, intake=Intake(burst=50, rate=1.0))
            stop = asyncio.Event()
            task = asyncio.create_task(daemon.run(stop))
            await asyncio.wait_for(daemon.ready.wait(), WAIT)
            if run == 0:  # away: the broker queues the board for the controller's session
                stop.set()
                await asyncio.wait_for(task, 30)
                pi = await asyncio.to_thread(connected, venue, "table-1")
                await asyncio.to_thread(_board, pi, "1", "table-1-pi")
        try:
            await _until("the result", lambda: _payloads(director, "bridge/1/result"))
            assert daemon.counters.throttled == 0
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)


def test_an_oversize_packet_disconnects_its_sender(venue: Venue) -> None:
    controller = connected(venue, "controller")
    controller.subscribe("bridge/+/event")
    big = connected(venue, "table-1")
    big.client.publish("bridge/1/event", b"x" * 200_000, qos=1)
    big.wait(lambda: bool(big.disconnects), "the disconnection")
    # a payload over the wire contract's 64 KiB inside the packet limit: refused, not
    # forwarded (mosquitto 2.0.11 answers it by disconnecting the sender)
    over = connected(venue, "table-2")
    info = over.client.publish("bridge/2/event", "y" * 65_600, qos=1)
    over.wait(lambda: info.mid in over.pubacks or bool(over.disconnects), "an answer")
    assert over.pubacks.get(info.mid, 0x80) >= 0x80
    assert connected(venue, "table-2").publish("bridge/2/event", {"barrier": 1}) < 0x80
    controller.wait_message("bridge/2/event", "barrier")
    assert all(len(m.payload) < 65_000 for m in controller.messages)


def test_an_absent_controllers_queue_is_bounded_in_bytes(tmp_path: Path) -> None:
    """With the controller away, table 1 sends 60 messages of 60 KB: the broker keeps
    what ``max_queued_bytes`` (1 MB here) and the in-flight window allow, not all 3.6 MB."""
    broker, out = venue_broker(tmp_path, ["1"], max_queued_bytes=1_000_000)
    venue = Venue(broker, out, 0)
    with broker:
        away = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="controller",
                           clean_session=False, reconnect_on_failure=False)
        creds = read_credentials(out / "clients" / "controller.toml")
        got: list[int] = []
        away.username_pw_set("controller", str(creds["password"]))
        context = venue.settings("controller").tls_context()
        assert context is not None
        away.tls_set_context(context)
        away.on_message = lambda c, u, m: got.append(len(m.payload))
        away.connect("localhost", broker.port)
        away.loop_start()
        try:
            _, mid = away.subscribe("bridge/+/event", qos=1)
            table = connected(venue, "table-1")
            table.publish("bridge/1/event", {"barrier": 0})
            _wait(lambda: got == [len(json.dumps({"barrier": 0}))])
            away.disconnect()
            away.loop_stop()
            got.clear()
            for _ in range(60):
                assert table.publish("bridge/1/event", "z" * 60_000) < 0x80
            away.reconnect()
            away.loop_start()
            table.publish("bridge/1/event", {"barrier": 1})
            _wait(lambda: bool(got))
            quiet = threading.Event()
            quiet.wait(2.0)  # what was queued arrives at once; nothing more comes later
            assert 0 < sum(1 for n in got if n >= 60_000) <= 30, got
        finally:
            away.disconnect()
            away.loop_stop()


def _wait(ready: Any) -> None:
    done = threading.Event()
    for _ in range(int(WAIT / 0.05)):
        if ready():
            return
        done.wait(0.05)
    raise AssertionError("the broker did not deliver")


# -- secrets on disk --------------------------------------------------------------------------

PUBLIC_FILES = {"mosquitto.conf", "acl", "identities.toml", "ca.crt", "server.crt", "crl.pem"}


def test_no_secret_is_ever_readable_by_others(tmp_path: Path) -> None:
    """A watcher polls the output folder while broker-config writes it (and rotates every
    password): no file other than the public ones is ever seen with a mode wider than 0600
    (0700 for folders), and no file it could read ever held a password."""
    out = tmp_path / "broker"
    seen_wide: set[str] = set()
    readable: dict[str, bytes] = {}

    def watch(proc: subprocess.Popen[bytes]) -> None:
        while proc.poll() is None:
            for folder, dirs, files in os.walk(out):
                for name in dirs + files:
                    path = os.path.join(folder, name)
                    try:
                        mode = os.stat(path).st_mode
                    except FileNotFoundError:
                        continue
                    if not mode & 0o077:
                        continue
                    if stat.S_ISDIR(mode) or name not in PUBLIC_FILES:
                        seen_wide.add(f"{path} {stat.filemode(mode)}")
                    if stat.S_ISREG(mode):
                        try:
                            readable[path] = readable.get(path, b"") + Path(path).read_bytes()
                        except OSError:
                            pass

    for extra in ([], ["--rotate", "all"]):
        proc = subprocess.Popen(
            [sys.executable, "-c", "import sys; from controller.venue.cli import main; "
             "sys.exit(main(sys.argv[1:]))", "1-4", "--out", str(out), "--host", "localhost",
             "--client-certs", *extra], env=dict(os.environ, PYTHONPATH=os.getcwd()),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        watcher = threading.Thread(target=watch, args=(proc,))
        watcher.start()
        assert proc.wait(120) == 0, proc.stderr.read() if proc.stderr else ""
        watcher.join()
        if proc.stderr:
            proc.stderr.close()
    assert not {s for s in seen_wide if not s.startswith(f"{out} ")}, seen_wide
    passwords = [str(read_credentials(p)["password"]) for p in (out / "clients").glob("*.toml")
                 if not p.name.endswith("-cert.toml")]
    assert len(passwords) == 10     # tables 1-4, controller, director, broadcast, scorer,
                                    # vugraph, public
    for path, data in readable.items():
        for password in passwords:
            assert password.encode() not in data, path
    assert b"PRIVATE KEY" not in b"".join(readable.values())
    assert not (out / "passwd.tmp").exists()
    assert stat.S_IMODE((out / "passwd").stat().st_mode) == 0o600


def test_the_journal_is_created_0600(tmp_path: Path) -> None:
    from controller.service.journal import Journal
    old = os.umask(0o022)
    try:
        journal = Journal(tmp_path / "journal.sqlite")
        journal.append_incoming([("bridge/1/event", b"{}")])
        for path in tmp_path.iterdir():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        journal.close()
    finally:
        os.umask(old)


# -- option values ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["7\n", "7\n8", "a b", "controller", "7/8", "+"])
def test_a_table_id_is_anchored_at_its_end(name: str) -> None:
    """A session or schedule file's key ``"7\n"`` (``$`` matched before the newline and
    wrote a broken ACL line) is refused like every other bad id."""
    with pytest.raises(BrokerConfigError):
        check_id(name)
    assert parse_tables(" 7 ,8") == ["7", "8"]  # a list's spaces are not part of an id


@pytest.mark.parametrize("options", [
    ["--public", "bridge"], ["--public", "bridge/pub"], ["--root", "public/x"],
    ["--ack-topic", "#"], ["--ack-topic", "ack/+"], ["--root", "+"], ["--public", "#"],
    ["--root", "bridge/"], ["--event-src", "{t}/x"], ["--director-src", "a\n"],
    ["--event-src", "{0}"],
])
def test_options_that_would_open_the_acl_are_refused(tmp_path: Path, options: list[str],
                                                     capsys: pytest.CaptureFixture[str]
                                                     ) -> None:
    assert main(["1", "--out", str(tmp_path / "b"), *options]) == 2
    assert "bridge-table broker-config:" in capsys.readouterr().err
    assert not (tmp_path / "b" / "acl").exists()


def test_every_acl_topic_is_a_wire_topic_and_the_relay_reads_alerts() -> None:
    """Each topic of the ACL is one of ``controller.wire``'s (root, a table or ``+``, a
    kind; the status topics; the public root): nothing wider than a user's needs."""
    from controller import wire
    users = {a.username: a for a in accounts(BrokerPlan(tables=["1", "2"], partitions=2,
                                                        table_controllers=True,
                                                        stations=["V1"]))}
    for a in users.values():
        for topic in a.read + a.write:
            if topic == "public/#":
                continue
            parsed = wire.parse_topic(topic.replace("+", "ANY"))
            assert parsed is not None and parsed.root == "bridge", (a.username, topic)
            assert "#" not in topic, (a.username, topic)
    assert "bridge/+/alert" in users["broadcast"].read
    assert "bridge/+/evidence" not in users["broadcast"].read
    assert {"controller-part1of2", "controller-part2of2"} <= set(users)
    assert "controller" not in users
    assert users["controller-part1of2"].write[-1] == "bridge/controller/+/status"
    one = {a.username: a for a in accounts(BrokerPlan(tables=["1"]))}["controller"]
    assert one.write[-1] == "bridge/controller/status"


def test_partition_users_match_the_controllers_names() -> None:
    from controller.service.partition import scope_name
    assert f"controller-{scope_name(None, (1, 2))}" == "controller-part1of2"


def test_a_bridges_table_id_is_anchored_at_its_end(tmp_path: Path) -> None:
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.errors import ConfigError
    for bad in ("7\n", "table-7-pi\n"):
        with pytest.raises(ConfigError):
            config_from_dict({"table": {"id": "7", "src": bad} if bad.startswith("table")
                              else {"id": bad},
                              "spool": {"path": str(tmp_path / "s.sqlite")}},
                             tmp_path / "t.toml")


async def test_partitioned_controllers_each_log_in_as_their_own_user(tmp_path: Path) -> None:
    """``--partitions 2``: two controllers on one broker, each with its own user, stay
    connected side by side (one connection per user) and each answers its share."""
    from controller.service.daemon import ControllerDaemon
    from controller.service.engines import build_engine
    from controller.service.partition import hash_share, scope_name

    tables = ["1", "2", "3", "4", "5", "6"]
    broker, out = venue_broker(tmp_path, tables, partitions=2)
    venue = Venue(broker, out, 0)
    with broker:
        ids = load_identities(out / "identities.toml")
        daemons = [ControllerDaemon(
            broker=venue.settings(f"controller-part{k}of2"), engine=build_engine(),
            identities=ids, only_tables=hash_share(tables, k, 2), name=scope_name(None, (k, 2)))
            for k in (1, 2)]
        assert all(d.only_tables for d in daemons)
        stop = asyncio.Event()
        tasks = [asyncio.create_task(d.run(stop)) for d in daemons]
        director = connected(venue, "director")
        director.subscribe("bridge/+/result")
        try:
            for d in daemons:
                await asyncio.wait_for(d.ready.wait(), WAIT)
            played = [d.only_tables[0] for d in daemons]
            for t in played:
                bridge = await asyncio.to_thread(connected, venue, f"table-{t}")
                await asyncio.to_thread(_board, bridge, t, f"table-{t}-pi")
            await _until("both results", lambda: all(
                _payloads(director, f"bridge/{t}/result") for t in played))
            assert [d.counters.connects for d in daemons] == [1, 1]
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks), 30)


async def test_a_station_checker_beside_its_bridge(tmp_path: Path) -> None:
    """A verification station's bridge (``verify-S``) and the checker following its events
    (``verify-S-check``, following and reporting on one connection) stay connected side by
    side; the checker sees the bridge's events and its verdict reaches the director."""
    from controller.verify.runs import MqttReporter, follow_events

    broker, out = venue_broker(tmp_path, ["1"], stations=["V1"])
    venue = Venue(broker, out, 0)
    with broker:
        bridge = connected(venue, "verify-V1", client_id="table-V1-pi")
        director = connected(venue, "director")
        director.subscribe("bridge/V1/verify")
        seen: list[bytes | str] = []
        stop, ready = asyncio.Event(), asyncio.Event()

        class Events:
            async def message(self, payload: bytes | str) -> None:
                seen.append(payload)
                stop.set()

        reporter = MqttReporter(venue.settings("verify-V1-check"), "bridge", "V1")
        async with reporter:
            assert reporter.error is None
            task = asyncio.create_task(follow_events(
                venue.settings("verify-V1-check"), "bridge/V1/event", Events(),  # type: ignore[arg-type]
                stop, ready, client=reporter._client))  # noqa: SLF001
            await asyncio.wait_for(ready.wait(), WAIT)
            assert await asyncio.to_thread(bridge.publish, "bridge/V1/event", {"e": 1}) < 0x80
            await asyncio.wait_for(task, WAIT)
            await reporter._publish({"verdict": "ok"}, retain=False)  # noqa: SLF001
            assert reporter.error is None
        await asyncio.to_thread(director.wait_message, "bridge/V1/verify", "verdict")
        assert seen and bridge.disconnects == []
