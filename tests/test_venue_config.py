"""``bridge-table broker-config`` against a real mosquitto started with the configuration it
writes: every attack from the venue's network refused, every legitimate path working.

The attacks speak MQTT 5 (paho) so that the broker's reason codes are seen: mosquitto
answers an unauthorised QoS 1 publish with PUBACK 0x87 (Not authorized) and drops it; it
drops an unauthorised QoS 0 publish silently; it refuses a login with CONNACK 0x87. It
grants a subscription to ``bridge/#`` (SUBACK QoS 1) and then delivers only what the ACL
lets the user read, so a read attack is shown by what arrives, up to a barrier message.
"""

from __future__ import annotations

import asyncio
import json
import os
import ssl
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from boardevents import EventWriter, clean_board
from broker import Mosquitto, free_port, venue_broker

from controller.broker.settings import BrokerSettings, read_credentials, resolve
from controller.venue.cli import main
from controller.venue.config import (
    BrokerConfigError,
    BrokerPlan,
    accounts,
    parse_tables,
    write_broker_config,
)

pytestmark = pytest.mark.timeout(180)

NOT_AUTHORIZED = 0x87
WAIT = 15.0  # a bound so that a broken broker fails the test instead of hanging it


@dataclass
class Venue:
    broker: Mosquitto
    out: Path
    cert_port: int
    local_port: int | None = None

    def credentials(self, user: str, *, cert: bool = False) -> Path:
        return self.out / "clients" / f"{user}{'-cert' if cert else ''}.toml"

    def settings(self, user: str, *, cert: bool = False) -> BrokerSettings:
        return resolve(credentials=self.credentials(user, cert=cert), env={})


@pytest.fixture(scope="module")
def venue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Venue]:
    tmp = tmp_path_factory.mktemp("venue")
    local_port = free_port()
    broker, out = venue_broker(tmp, ["1", "2", "3"], stations=["V1"], client_certs=True,
                               local_port=local_port)
    text = (out / "mosquitto.conf").read_text()
    cert_port = int(text.split("use_identity_as_username")[0].rsplit("listener ", 1)[1]
                    .split()[0])
    with broker:
        yield Venue(broker, out, cert_port, local_port)


@dataclass
class Probe:
    """One MQTT 5 client (paho, its own network thread) that records what the broker says."""

    client: mqtt.Client
    connack: int | None = None
    pubacks: dict[int, int] = field(default_factory=dict)
    subacks: dict[int, list[int]] = field(default_factory=dict)
    messages: list[mqtt.MQTTMessage] = field(default_factory=list)
    cond: threading.Condition = field(default_factory=threading.Condition)
    #: the DISCONNECT reason codes the broker sent (or 0x80+ when the connection dropped)
    disconnects: list[int] = field(default_factory=list)

    def wait(self, ready: Callable[[], bool], what: str) -> None:
        with self.cond:
            if not self.cond.wait_for(ready, WAIT):
                raise AssertionError(f"no {what} from the broker")

    def publish(self, topic: str, payload: Any, qos: int = 1, retain: bool = False) -> int:
        """The PUBACK reason code (QoS 1), or 0 once sent (QoS 0)."""
        info = self.client.publish(topic, json.dumps(payload), qos=qos, retain=retain)
        if qos == 0:
            info.wait_for_publish(WAIT)
            return 0
        self.wait(lambda: info.mid in self.pubacks, f"PUBACK for {topic}")
        return self.pubacks[info.mid]

    def subscribe(self, topic: str) -> list[int]:
        _, mid = self.client.subscribe(topic, qos=1)
        self.wait(lambda: mid in self.subacks, f"SUBACK for {topic}")
        return self.subacks[mid]

    def wait_message(self, topic: str, marker: str | None = None) -> mqtt.MQTTMessage:
        def found() -> mqtt.MQTTMessage | None:
            for m in self.messages:
                if m.topic == topic and (marker is None or marker in m.payload.decode()):
                    return m
            return None
        self.wait(lambda: found() is not None, f"message on {topic}")
        m = found()
        assert m is not None
        return m

    def topics(self) -> set[str]:
        with self.cond:
            return {m.topic for m in self.messages}

    def close(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


_probes: list[Probe] = []


@pytest.fixture(autouse=True)
def _close_probes() -> Iterator[None]:
    yield
    while _probes:
        _probes.pop().close()


def probe(venue: Venue, user: str | None, *, password: str | None = None,
          cert: bool = False, port: int | None = None, plain: bool = False,
          client_id: str | None = None, clean_start: bool = True) -> Probe:
    """Log in as ``user`` with its credentials file (``password`` to try another one;
    ``user=None``: anonymous, over TLS; ``plain``: without TLS, on the local listener)."""
    if user is None:
        settings = resolve(f"mqtts://localhost:{venue.broker.port}",
                           ca_file=venue.out / "clients" / "ca.crt", env={})
    else:
        settings = venue.settings(user, cert=cert)
    # no reconnecting: a probe taken over by another of its user stays disconnected
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5,
                         client_id=client_id or f"probe-{user}-{time.monotonic_ns()}",
                         reconnect_on_failure=False)
    p = Probe(client)
    if settings.username:
        client.username_pw_set(settings.username, password or settings.password)
    if plain:
        assert venue.local_port is not None
        port = venue.local_port
    else:
        context = settings.tls_context()
        assert context is not None
        client.tls_set_context(context)

    def on_connect(c: Any, u: Any, flags: Any, rc: Any, props: Any) -> None:
        with p.cond:
            p.connack = int(rc.value)
            p.cond.notify_all()

    def on_publish(c: Any, u: Any, mid: int, rc: Any, props: Any) -> None:
        with p.cond:
            p.pubacks[mid] = int(rc.value)
            p.cond.notify_all()

    def on_subscribe(c: Any, u: Any, mid: int, rcs: Any, props: Any) -> None:
        with p.cond:
            p.subacks[mid] = [int(r.value) for r in rcs]
            p.cond.notify_all()

    def on_message(c: Any, u: Any, msg: mqtt.MQTTMessage) -> None:
        with p.cond:
            p.messages.append(msg)
            p.cond.notify_all()

    def on_disconnect(c: Any, u: Any, flags: Any, rc: Any, props: Any) -> None:
        with p.cond:
            p.disconnects.append(int(rc.value))
            p.cond.notify_all()

    client.on_connect, client.on_publish = on_connect, on_publish
    client.on_disconnect = on_disconnect
    client.on_subscribe, client.on_message = on_subscribe, on_message
    client.connect("127.0.0.1" if plain else settings.host, port or settings.port,
                   clean_start=clean_start)
    client.loop_start()
    _probes.append(p)
    p.wait(lambda: p.connack is not None, "CONNACK")
    return p


def connected(venue: Venue, user: str, **kw: Any) -> Probe:
    p = probe(venue, user, **kw)
    assert p.connack == 0, f"{user} could not log in: {p.connack:#x}"
    return p


# -- logging in --------------------------------------------------------------------------

def test_anonymous_client_is_refused(venue: Venue) -> None:
    assert probe(venue, None).connack == NOT_AUTHORIZED


def test_wrong_password_is_refused(venue: Venue) -> None:
    assert probe(venue, "table-1", password="not-the-password").connack == NOT_AUTHORIZED
    # another user's password does not open this account either
    other = read_credentials(venue.credentials("table-2"))["password"]
    assert probe(venue, "table-1", password=other).connack == NOT_AUTHORIZED


def _never_connects(client: mqtt.Client, port: int) -> bool:
    """Whether the broker at ``port`` refuses ``client`` (drops it, or the TLS handshake
    fails), rather than logging it in."""
    try:
        client.connect("localhost", port)
        for _ in range(100):
            if client.loop(0.1) != mqtt.MQTT_ERR_SUCCESS:
                return True
            if client.is_connected():
                return False
    except (ssl.SSLError, OSError):
        return True
    return not client.is_connected()


def test_plain_mqtt_is_not_offered(venue: Venue) -> None:
    """Only TLS listeners: a plain MQTT client with the right password gets nowhere."""
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    s = venue.settings("table-1")
    client.username_pw_set(s.username, s.password)
    assert _never_connects(client, venue.broker.port)


def test_local_plain_listener_still_needs_a_login(venue: Venue) -> None:
    """``--local-port``: plain MQTT on 127.0.0.1 for programs on the broker's machine, with
    the same users and ACL."""
    assert probe(venue, None, plain=True).connack == NOT_AUTHORIZED
    assert probe(venue, "public", password="guess", plain=True).connack == NOT_AUTHORIZED
    t1 = connected(venue, "table-1", plain=True)
    assert t1.publish("bridge/1/event", {"plain": 1}) < 0x80
    assert t1.publish("bridge/2/event", {"plain": 1}) == NOT_AUTHORIZED


# -- a table's Pi ----------------------------------------------------------------------------

def test_table_cannot_publish_another_tables_events(venue: Venue) -> None:
    t1 = connected(venue, "table-1")
    director = connected(venue, "director")
    assert director.subscribe("bridge/#") == [1]
    assert t1.publish("bridge/2/event", {"forged": "qos1"}) == NOT_AUTHORIZED
    assert t1.publish("bridge/2/bridge", {"forged": "status"}) == NOT_AUTHORIZED
    # QoS 0: no answer at all, and nothing delivered; its own event after it is the barrier
    t1.publish("bridge/2/event", {"forged": "qos0"}, qos=0)
    assert t1.publish("bridge/1/event", {"barrier": "t1"}) < 0x80
    director.wait_message("bridge/1/event", "barrier")
    assert "bridge/2/event" not in director.topics()
    assert "bridge/2/bridge" not in director.topics()


@pytest.mark.parametrize("kind", ["state", "alert", "indicator", "result", "feed", "error",
                                  "evidence",
                                  "ruling"])
def test_table_cannot_forge_what_the_controller_or_director_says(venue: Venue,
                                                                 kind: str) -> None:
    t1 = connected(venue, "table-1")
    assert t1.publish(f"bridge/1/{kind}", {"forged": kind}) == NOT_AUTHORIZED
    assert t1.publish(f"bridge/1/{kind}", {"forged": kind}, retain=True) == NOT_AUTHORIZED
    assert t1.publish("bridge/controller/status", {"status": "offline"},
                      retain=True) == NOT_AUTHORIZED


def test_table_cannot_set_a_retained_indicator(venue: Venue) -> None:
    controller = connected(venue, "controller")
    t1 = connected(venue, "table-1")
    assert controller.publish("bridge/1/indicator", {"by": "controller"}, retain=True) < 0x80
    assert t1.publish("bridge/1/indicator", {"by": "forger"}, retain=True) == NOT_AUTHORIZED
    assert t1.publish("bridge/2/indicator", {"by": "forger"}, retain=True) == NOT_AUTHORIZED
    late = connected(venue, "director")
    late.subscribe("bridge/+/indicator")
    assert json.loads(late.wait_message("bridge/1/indicator").payload) == {"by": "controller"}
    assert "forger" not in b"".join(m.payload for m in late.messages).decode()


def test_table_reads_only_its_own_indicator(venue: Venue) -> None:
    """The hands of every table are on ``bridge/T/state``: a table's Pi reads none of them."""
    controller = connected(venue, "controller")
    hands = {"hands": {"N": "AKQJ.T98.765.432"}}
    for t in ("1", "2"):
        assert controller.publish(f"bridge/{t}/state", hands, retain=True) < 0x80
        assert controller.publish(f"bridge/{t}/result", {"board": 1}, retain=True) < 0x80
    t1 = connected(venue, "table-1")
    # mosquitto grants the subscription and filters what it delivers by the ACL
    assert t1.subscribe("bridge/#") == [1]
    assert t1.subscribe("public/#") == [1]
    controller.publish("bridge/2/state", hands)
    controller.publish("bridge/2/feed", {"call": "1NT"})
    controller.publish("bridge/1/ack/table-1-pi", {"seq": 1})
    controller.publish("bridge/1/indicator", {"barrier": 1})
    t1.wait_message("bridge/1/indicator", "barrier")
    assert t1.topics() <= {"bridge/1/indicator", "bridge/1/ack/table-1-pi"}
    assert "bridge/1/ack/table-1-pi" in t1.topics()  # the acknowledgements reach it


def test_evidence_reaches_the_director_only(venue: Venue) -> None:
    """The tempo flags and the claim check (``bridge/T/evidence``) are for the director: no
    table's Pi (its own table's included), not the relay, not the public reads them."""
    controller = connected(venue, "controller")
    evidence = {"tempo": {"flags": [{"kind": "slow_pass", "seat": "W"}]}}
    assert controller.publish("bridge/1/evidence", evidence, retain=True) < 0x80
    readers = {user: connected(venue, user) for user in ("table-1", "broadcast", "public")}
    for probe in readers.values():
        assert probe.subscribe("#") == [1]
        assert probe.subscribe("bridge/1/evidence") == [1]
    director = connected(venue, "director")
    director.subscribe("bridge/+/evidence")
    assert "slow_pass" in director.wait_message("bridge/1/evidence").payload.decode()
    controller.publish("bridge/1/evidence", {"live": "slow_card"})
    director.wait_message("bridge/1/evidence", "slow_card")
    # barriers each may read: what arrived before them is all they will get
    controller.publish("bridge/1/indicator", {"barrier": 1})
    readers["table-1"].wait_message("bridge/1/indicator", "barrier")
    # one connection per user: the relay's barrier comes from its own reader
    assert readers["broadcast"].publish("public/1/feed", {"barrier": 1}) < 0x80
    readers["broadcast"].wait_message("public/1/feed", "barrier")
    readers["public"].wait_message("public/1/feed", "barrier")
    for user, probe in readers.items():
        assert "bridge/1/evidence" not in probe.topics(), user
        assert b"slow_" not in b"".join(m.payload for m in probe.messages), user
    for user in ("table-1", "broadcast", "public", "director"):
        assert connected(venue, user).publish("bridge/1/evidence", {"forged": 1}) \
            == NOT_AUTHORIZED, user


# -- the public and the relay --------------------------------------------------------------

def test_public_reads_public_only(venue: Venue) -> None:
    controller = connected(venue, "controller")
    broadcast = connected(venue, "broadcast")
    public = connected(venue, "public")
    public.subscribe("bridge/#")
    public.subscribe("#")
    public.subscribe("public/#")
    assert controller.publish("bridge/1/state", {"hands": "secret"}, retain=True) < 0x80
    assert public.publish("public/1/result", {"forged": 1}) == NOT_AUTHORIZED
    assert public.publish("bridge/1/ruling", {"forged": 1}) == NOT_AUTHORIZED
    assert public.publish("bridge/1/event", {"forged": 1}) == NOT_AUTHORIZED
    assert broadcast.publish("public/1/feed", {"released": 1}) < 0x80
    public.wait_message("public/1/feed", "released")
    assert all(t.startswith("public/") for t in public.topics())


def test_broadcast_relays_but_cannot_forge(venue: Venue) -> None:
    broadcast = connected(venue, "broadcast")
    for topic in ("bridge/1/result", "bridge/1/state", "bridge/1/ruling", "bridge/1/event",
                  "bridge/1/indicator"):
        assert broadcast.publish(topic, {"forged": 1}) == NOT_AUTHORIZED


def test_director_rules_but_cannot_play_or_score(venue: Venue) -> None:
    director = connected(venue, "director")
    controller = connected(venue, "controller")
    controller.subscribe("bridge/+/ruling")
    assert director.publish("bridge/2/ruling", {"ruling": "clear"}) < 0x80
    controller.wait_message("bridge/2/ruling", "clear")
    for topic in ("bridge/2/event", "bridge/2/result", "bridge/2/state", "bridge/2/indicator",
                  "public/2/result"):
        assert director.publish(topic, {"forged": 1}) == NOT_AUTHORIZED


def test_verification_station_publishes_only_its_own_verdicts(venue: Venue) -> None:
    station = connected(venue, "verify-V1")
    assert station.publish("bridge/V1/verify", {"board": 1}) < 0x80
    assert station.publish("bridge/V1/event", {"e": 1}) < 0x80
    assert station.publish("bridge/1/verify", {"board": 1}) == NOT_AUTHORIZED
    assert station.publish("bridge/1/event", {"e": 1}) == NOT_AUTHORIZED


# -- client certificates ---------------------------------------------------------------------

def test_client_certificate_logs_in_as_its_user(venue: Venue) -> None:
    """On the certificate listener the certificate's CN is the user, under the same ACL."""
    s = venue.settings("table-1", cert=True)
    assert (s.port, s.username, s.password, s.cert_file is not None) == (venue.cert_port, None,
                                                                         None, True)
    t1 = connected(venue, "table-1", cert=True)
    assert t1.publish("bridge/1/event", {"by": "cert"}) < 0x80
    assert t1.publish("bridge/2/event", {"by": "cert"}) == NOT_AUTHORIZED
    assert t1.publish("bridge/1/result", {"by": "cert"}) == NOT_AUTHORIZED


def test_certificate_listener_refuses_a_client_without_certificate(venue: Venue) -> None:
    s = venue.settings("table-1")  # a password, but no certificate
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.username_pw_set(s.username, s.password)
    context = s.tls_context()
    assert context is not None
    client.tls_set_context(context)
    assert _never_connects(client, venue.cert_port)


def test_certificate_alone_does_not_open_the_password_listener(venue: Venue) -> None:
    p = probe(venue, "table-1", cert=True, port=venue.broker.port)
    assert p.connack == NOT_AUTHORIZED


# -- the legitimate paths, end to end ----------------------------------------------------------

async def test_bridge_controller_director_broadcast_public(venue: Venue, tmp_path: Path) -> None:
    """A whole board from table 3's bridge (the firmware bridge's publisher, logged in with
    its credentials file; no other test here touches table 3) through the controller to its
    indicator and result; the director's ruling reaches the controller; the relay puts the
    result on public/, where the public reads it. Every client logs in with the file
    broker-config wrote for it."""
    import aiomqtt

    from controller.broadcast import Gate, GatePolicy, run_relay
    from controller.broadcast.relay import Relay
    from controller.service.daemon import ControllerDaemon
    from controller.service.engines import build_engine
    from controller.session.schedule import parse_movement
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.publisher import Publisher, Spool

    config = config_from_dict({"table": {"id": "3", "src": "table-3-pi"},
                               "broker": {"credentials": str(venue.credentials("table-3"))},
                               "spool": {"path": str(tmp_path / "spool.sqlite")}},
                              tmp_path / "table.toml")
    assert config.broker.tls and config.broker.username == "table-3"
    seen: list[str] = []
    indicator = asyncio.Event()

    def on_message(topic: str, payload: bytes) -> None:
        seen.append(topic)
        indicator.set()

    publisher = Publisher(config, Spool(config.spool.path), on_message=on_message)
    engine = build_engine()
    engine.session_id = "venue-1"  # the relay trusts only its own session's outputs (1.8)
    daemon = ControllerDaemon(broker=venue.settings("controller"), engine=engine,
                              client_id="venue-controller", info={"session": "venue-1"})
    stop = asyncio.Event()
    relay_ready = asyncio.Event()
    tasks = [asyncio.create_task(daemon.run(stop)), asyncio.create_task(publisher.run(stop)),
             asyncio.create_task(run_relay(venue.settings("broadcast"),
                                           # the fail-closed default: table 3 plays
                                           # board 5, and only it, in this session
                                           Relay(Gate(GatePolicy.for_session(parse_movement(
                                               {"tables": {"3": [5]}}, "venue", "venue-1")))),
                                           stop=stop, ready=relay_ready,
                                           client_id="venue-broadcast"))]
    director, public = venue.settings("director"), venue.settings("public")
    try:
        async with aiomqtt.Client(**director.client_args(), identifier="venue-director") as d, \
                aiomqtt.Client(**public.client_args(), identifier="venue-public") as p:
            await d.subscribe("bridge/3/#", qos=1)
            await p.subscribe("public/3/result", qos=1)
            await asyncio.wait_for(daemon.ready.wait(), WAIT)
            await asyncio.wait_for(relay_ready.wait(), WAIT)
            await asyncio.wait_for(publisher.connected.wait(), WAIT)
            for event in EventWriter("table-3-pi").board(clean_board(5)):
                publisher.publish_event({k: v for k, v in event.items()
                                         if k not in ("v", "src", "seq")})
            result = await _next(d, "bridge/3/result")
            assert result["board"] == 5 and result["contract"].startswith("4H")
            await asyncio.wait_for(indicator.wait(), WAIT)
            assert set(seen) == {"bridge/3/indicator"}
            released = await _next(p, "public/3/result")
            assert released["board"] == 5
            # the director's ruling reaches the controller, which answers it
            await d.publish("bridge/3/ruling", json.dumps(
                {"v": 1, "src": "console", "seq": 1, "ts": 1.0, "ruling": "clear",
                 "alert": 999}), qos=1)
            state = await _next(d, "bridge/3/state")
            while state.get("last", {}).get("src") != "console":
                state = await _next(d, "bridge/3/state")
            assert state["last"] == {"src": "console", "seq": 1}  # applied by the controller
    finally:
        stop.set()
        await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
        publisher.spool.close()


async def test_a_bridge_resends_when_the_controller_comes_online(tmp_path: Path) -> None:
    """On broker-config's broker a table's login reads the controller's status (and only
    that beyond its own table), so a board published before any controller subscribed is
    sent again when the controller comes online, and completes: without that read it waited
    for the acknowledgement timeout (set out of reach here), the controller holding every
    later event behind the first (found by bridge-table club-night)."""
    import aiomqtt

    from controller.service.daemon import ControllerDaemon
    from controller.service.engines import build_engine
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.publisher import Publisher, Spool

    broker, out = venue_broker(tmp_path / "venue", ["4"])
    config = config_from_dict({"table": {"id": "4", "src": "table-4-pi"},
                               "broker": {"credentials": str(out / "clients" / "table-4.toml")},
                               "spool": {"path": str(tmp_path / "spool.sqlite"),
                                         "ack_timeout": 600}},
                              tmp_path / "table.toml")
    publisher = Publisher(config, Spool(config.spool.path))
    stop = asyncio.Event()
    with broker:
        director = resolve(credentials=out / "clients" / "director.toml", env={})
        tasks = [asyncio.create_task(publisher.run(stop))]
        try:
            async with aiomqtt.Client(**director.client_args(), identifier="late-director") \
                    as d:
                await d.subscribe("bridge/4/#", qos=1)
                await asyncio.wait_for(publisher.connected.wait(), WAIT)
                for event in EventWriter("table-4-pi").board(clean_board(5)):
                    publisher.publish_event({k: v for k, v in event.items()
                                             if k not in ("v", "src", "seq")})
                await _next(d, "bridge/4/event")  # out, with no controller to read it
                engine = build_engine()
                daemon = ControllerDaemon(broker=resolve(
                    credentials=out / "clients" / "controller.toml", env={}), engine=engine,
                    client_id="late-controller", info={"session": "late-1"})
                tasks.append(asyncio.create_task(daemon.run(stop)))
                result = await _next(d, "bridge/4/result")
                assert result["board"] == 5 and result["contract"].startswith("4H")
        finally:
            stop.set()
            await asyncio.wait_for(asyncio.gather(*tasks, return_exceptions=True), 30)
            publisher.spool.close()


async def _next(client: Any, *topics: str) -> dict[str, Any]:
    async with asyncio.timeout(WAIT):
        async for message in client.messages:
            if str(message.topic) in topics and not message.retain:  # not an earlier test's
                payload = json.loads(bytes(message.payload))
                assert isinstance(payload, dict)
                return payload
    raise AssertionError(f"no message on {topics}")


def test_persistence_survives_a_broker_crash(venue: Venue) -> None:
    """KILL the broker after its next save: the retained result is there after a restart."""
    controller = connected(venue, "controller")
    assert controller.publish("bridge/2/result", {"kept": "after a crash"}, retain=True) < 0x80
    saves = venue.broker.log.read_text().count("Saving in-memory database")
    # autosave_interval 1: wait until a save begun after the publish has ended, that is
    # until the one after it begins (mosquitto saves in its single thread, logging first)
    deadline = time.monotonic() + WAIT
    while venue.broker.log.read_text().count("Saving in-memory database") <= saves + 1:
        assert time.monotonic() < deadline, "the broker did not save its database"
        time.sleep(0.05)
    assert venue.broker.proc is not None
    venue.broker.proc.kill()
    venue.broker.proc.wait()
    venue.broker.start()
    late = connected(venue, "director")
    late.subscribe("bridge/2/result")
    assert json.loads(late.wait_message("bridge/2/result").payload) == {"kept": "after a crash"}


# -- the files ----------------------------------------------------------------------------------

def test_files_secrets_and_rotation(tmp_path: Path) -> None:
    plan = BrokerPlan(tables=["1", "2"], hosts=["broker.venue"], ips=["10.0.0.2"])
    write_broker_config(plan, tmp_path)
    clients = tmp_path / "clients"
    passwords = {f.stem: read_credentials(f)["password"] for f in clients.glob("*.toml")}
    assert set(passwords) == {"table-1", "table-2", "controller", "director", "broadcast",
                              "scorer", "vugraph", "public"}
    assert len(set(passwords.values())) == len(passwords)
    for f in [*clients.glob("*.toml"), tmp_path / "passwd", tmp_path / "certs" / "ca.key",
              tmp_path / "certs" / "server.key"]:
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    passwd = (tmp_path / "passwd").read_text()
    assert all(pw not in passwd for pw in passwords.values())  # hashed
    assert sorted(line.split(":")[0] for line in passwd.splitlines()) == sorted(passwords)
    cred = read_credentials(clients / "table-1.toml")
    assert cred["url"] == "mqtts://broker.venue:8883"
    assert Path(cred["ca_file"]).read_text() == (tmp_path / "certs" / "ca.crt").read_text()
    conf = (tmp_path / "mosquitto.conf").read_text()
    for line in ("allow_anonymous false", "listener 8883", "autosave_interval 1",
                 "max_queued_messages 100000", "persistence true", f"acl_file {tmp_path}/acl"):
        assert line in conf
    assert "1883" not in conf and "use_identity_as_username" not in conf
    ca = (tmp_path / "certs" / "ca.crt").read_text()
    # a second run keeps every password and the CA, except the rotated user's password
    write_broker_config(BrokerPlan(tables=["1", "2"], hosts=["broker.venue"],
                                   rotate=["table-2"]), tmp_path)
    again = {f.stem: read_credentials(f)["password"] for f in clients.glob("*.toml")}
    assert {u for u in again if again[u] != passwords[u]} == {"table-2"}
    assert (tmp_path / "certs" / "ca.crt").read_text() == ca


def test_local_listener_only_on_loopback_and_only_when_asked(tmp_path: Path) -> None:
    from controller.venue.config import mosquitto_conf
    conf = mosquitto_conf(BrokerPlan(tables=["1"], local_port=1883), tmp_path)
    assert "listener 1883 127.0.0.1\n" in conf
    assert conf.count("listener ") == 2


def test_table_controllers_may_answer_their_own_table_only() -> None:
    users = {a.username: a for a in accounts(BrokerPlan(tables=["1", "2"],
                                                        table_controllers=True))}
    t1 = users["table-1-controller"]  # its own user: one connection per user
    assert "bridge/1/result" in t1.write and "bridge/controller/1/status" in t1.write
    assert "bridge/1/event" in t1.read and "bridge/1/ruling" in t1.read
    assert not any("/2/" in t or "#" in t or "+" in t.replace("ack/+", "")
                   for t in t1.write + t1.read)
    assert users["table-1"].write == ("bridge/1/event", "bridge/1/bridge", "bridge/1/health")


def test_queues_grow_with_the_session() -> None:
    from controller.venue.config import mosquitto_conf
    conf = mosquitto_conf(BrokerPlan(tables=[str(t) for t in range(1, 201)]), Path("/x"))
    assert "max_queued_messages 360000" in conf


@pytest.mark.parametrize("spec, tables", [
    ("1-3,A1", ["1", "2", "3", "A1"]),
    (" 2, 1-2 ,", ["2", "1"]),
])
def test_table_lists(spec: str, tables: list[str]) -> None:
    assert parse_tables(spec) == tables


@pytest.mark.parametrize("spec", ["controller", "..", "1/2", "a+b", "x" * 33, "", "5-1",
                                  "#", "1-", "-3", "1-4,7-"])
def test_bad_table_ids_are_refused(spec: str) -> None:
    with pytest.raises(BrokerConfigError):
        parse_tables(spec)


def test_command_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    schedule = tmp_path / "round.toml"
    schedule.write_text('[tables]\n"1" = [1, 2]\n"7" = "3-4"\n')
    assert main([str(schedule), "--out", str(tmp_path / "b"), "--host", "h.venue",
                 "--stations", "V1"]) == 0
    assert sorted(f.stem for f in (tmp_path / "b" / "clients").glob("*.toml")) == [
        "broadcast", "controller", "director", "public", "scorer", "table-1", "table-7",
        "verify-V1", "verify-V1-check", "vugraph"]
    assert main(["1,controller", "--out", str(tmp_path / "c")]) == 2
    assert "table id 'controller' is reserved" in capsys.readouterr().err
    junk = tmp_path / "junk.bin"
    junk.write_bytes(os.urandom(64) + b"\xff")
    assert main([str(junk), "--out", str(tmp_path / "d")]) == 2
    assert "neither a session file" in capsys.readouterr().err


def test_a_session_files_typo_is_said_as_every_command_says_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43: broker-config hid a session-file typo behind "neither a session nor a
    schedule file"; score, controller and results name the key."""
    from controller.session import SessionError, load_session

    session = tmp_path / "session.toml"
    session.write_text('[session]\nid = "s"\n[movement]\ntype = "mitchell"\ntables = 3\n'
                       'boards_per_round = 2\n[scoring]\nmethd = "matchpoints"\n')
    with pytest.raises(SessionError) as every_other:
        load_session(session)
    assert main([str(session), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "neither" not in err and "scoring.methd" in err
    assert str(every_other.value) in err


def test_cli_lists_the_command() -> None:
    from controller.cli import COMMANDS
    assert COMMANDS["broker-config"][0] == "controller.venue.cli:main"


async def test_a_pi_running_its_own_controller(tmp_path: Path) -> None:
    """``--table-controllers`` (``bridge-table run``): table 1's Pi logs in as table-1 for
    its bridge and as table-1-controller for its controller (one connection per user); a
    board gets its result, and the controller's login still cannot answer for table 2."""
    import aiomqtt

    from controller.service.daemon import ControllerDaemon
    from controller.service.engines import build_engine

    broker, out = venue_broker(tmp_path, ["1", "2"], table_controllers=True)
    settings = resolve(credentials=out / "clients" / "table-1.toml", env={})
    own = resolve(credentials=out / "clients" / "table-1-controller.toml", env={})
    with broker:
        daemon = ControllerDaemon(broker=own, engine=build_engine(), only_tables=("1",),
                                  client_id="pi-1-controller")
        stop = asyncio.Event()
        task = asyncio.create_task(daemon.run(stop))
        try:
            director = resolve(credentials=out / "clients" / "director.toml", env={})
            async with aiomqtt.Client(**settings.client_args(), identifier="pi-1-bridge") as pi, \
                    aiomqtt.Client(**director.client_args(), identifier="director") as d:
                await pi.subscribe("bridge/1/indicator", qos=1)
                await d.subscribe("bridge/1/result", qos=1)
                await asyncio.wait_for(daemon.ready.wait(), WAIT)
                for event in EventWriter("table-1-pi").board(clean_board(5)):
                    await pi.publish("bridge/1/event", json.dumps(event), qos=1)
                assert (await _next(d, "bridge/1/result"))["board"] == 5
                assert "board" in await _next(pi, "bridge/1/indicator")
        finally:
            stop.set()
            await asyncio.wait_for(task, 30)
        other = probe(Venue(broker, out, 0), "table-1-controller")
        assert other.connack == 0
        assert other.publish("bridge/2/result", {"forged": 1}) == NOT_AUTHORIZED
        assert other.publish("bridge/controller/status", {"forged": 1}) == NOT_AUTHORIZED
        other.close()
        _probes.remove(other)


def test_rotating_a_certificate_withdraws_the_old_one(tmp_path: Path) -> None:
    """A lost Pi: ``--rotate table-2`` gives table-2 a new certificate and the broker
    refuses the old one (the CRL), while table-1's certificate still logs in."""
    broker, out = venue_broker(tmp_path, ["1", "2"], client_certs=True)
    clients = out / "clients"
    old_cert, old_key = tmp_path / "old.crt", tmp_path / "old.key"
    old_cert.write_bytes((clients / "table-2.crt").read_bytes())
    old_key.write_bytes((clients / "table-2.key").read_bytes())
    conf = (out / "mosquitto.conf").read_text()
    cert_port = int(conf.split("use_identity_as_username")[0].rsplit("listener ", 1)[1]
                    .split()[0])
    plan = BrokerPlan(tables=["1", "2"], hosts=["localhost"], ips=["127.0.0.1"],
                      bind="127.0.0.1", port=broker.port, client_certs=True,
                      cert_port=cert_port, persistence_dir=tmp_path / "persist",
                      rotate=["table-2"])
    write_broker_config(plan, out)
    assert (clients / "table-2.crt").read_bytes() != old_cert.read_bytes()
    with broker:
        venue = Venue(broker, out, cert_port)
        assert connected(venue, "table-1", cert=True).connack == 0
        assert connected(venue, "table-2", cert=True).connack == 0
        stolen = resolve(f"mqtts://localhost:{cert_port}", ca_file=clients / "ca.crt",
                         cert_file=old_cert, key_file=old_key, env={})
        client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
        context = stolen.tls_context()
        assert context is not None
        client.tls_set_context(context)
        assert _never_connects(client, cert_port)


@pytest.mark.parametrize("option", [["--port", "0"], ["--port", "70000"], ["--port", "x"],
                                    ["--cert-port", "-1"], ["--local-port", "0"],
                                    ["--max-queued", "-5"], ["--max-queued", "0"],
                                    ["--autosave", "0"], ["--partitions", "-1"]])
def test_values_mosquitto_refuses_or_that_undo_the_bounds_are_refused(
        option: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # "listener 0" stops mosquitto 2.0 from starting; a negative queue bound is no bound
    with pytest.raises(SystemExit) as stopped:
        main(["1-3", "--out", str(tmp_path / "b"), *option])
    assert stopped.value.code == 2
    assert option[0] in capsys.readouterr().err
    assert not (tmp_path / "b").exists()



def test_the_scorer_reads_what_results_subscribes_to_and_nothing_else() -> None:
    """``bridge-table results`` has its own login (issue 43: on the console's, the two
    closed each other's connection all session), reading only what it needs."""
    from controller.service.ranking import KINDS
    from controller.venue.config import SCORER_READS

    assert set(SCORER_READS) == set(KINDS)
    users = {a.username: a for a in accounts(BrokerPlan(tables=["1", "2"]))}
    assert users["scorer"].write == ()
    assert users["scorer"].read == tuple(f"bridge/+/{kind}" for kind in SCORER_READS)
    assert users["vugraph"].read == ("public/#",) and users["vugraph"].write == ()
