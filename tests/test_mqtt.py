"""controller.service.mqtt: the versions it supports, and its session on a real broker."""

from __future__ import annotations

import importlib.metadata
import queue

import pytest
from broker import Mosquitto

from controller.broker.settings import BrokerSettings
from controller.service.mqtt import (
    LOST,
    SUPPORTED,
    Connection,
    MqttError,
    Received,
    UnsupportedVersion,
    check_versions,
    supported,
)


def test_the_installed_paho_and_aiomqtt_are_the_supported_ones() -> None:
    """Fails loudly after an upgrade of paho-mqtt or aiomqtt past the range the adapter was
    written for (manual acks, callback signatures): check controller/service/mqtt.py against the new
    version, then widen SUPPORTED."""
    found = check_versions()
    assert set(found) == set(SUPPORTED)
    for dist, version in found.items():
        assert version == importlib.metadata.version(dist)
        assert supported(dist, version)


@pytest.mark.parametrize(("dist", "version", "ok"), [
    ("paho-mqtt", "2.1.0", True), ("paho-mqtt", "2.2.0", True), ("paho-mqtt", "2.9.1", True),
    ("paho-mqtt", "1.6.1", False), ("paho-mqtt", "2.0.0", False), ("paho-mqtt", "3.0.0", False),
    ("paho-mqtt", "3.0.0rc1", False), ("aiomqtt", "2.5.1", True), ("aiomqtt", "1.2.1", False),
    ("aiomqtt", "3.0", False),
])
def test_supported_ranges(dist: str, version: str, ok: bool) -> None:
    assert supported(dist, version) is ok


def test_an_unsupported_version_is_refused_with_the_range(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = importlib.metadata.version

    def fake(dist: str) -> str:
        return "3.0.0" if dist == "paho-mqtt" else real(dist)
    monkeypatch.setattr(importlib.metadata, "version", fake)
    with pytest.raises(UnsupportedVersion, match=r"paho-mqtt 3\.0\.0 .*paho-mqtt>=2\.1,<3"):
        check_versions()


def test_manual_ack_a_message_not_acked_comes_back(mosquitto: Mosquitto) -> None:
    """The manual-ack path: unacknowledged messages are redelivered to the next session of
    the same client id; acknowledged ones are not."""
    settings = BrokerSettings.from_url(mosquitto.url)
    sender_inbox: queue.SimpleQueue[Received | str] = queue.SimpleQueue()
    inbox: queue.SimpleQueue[Received | str] = queue.SimpleQueue()
    first = Connection(settings, "mqtt-test", inbox)
    first.open(5)
    first.subscribe([("t/+", 1)], 5)
    sender = Connection(settings, "mqtt-test-sender", sender_inbox, clean_session=True)
    sender.open(5)
    mids = [sender.publish(f"t/{i}", b"x", 1, False) for i in range(4)]
    got = [inbox.get(timeout=10) for _ in mids]
    assert all(isinstance(m, Received) for m in got)
    received = [m for m in got if isinstance(m, Received)]
    assert [m.topic for m in received] == ["t/0", "t/1", "t/2", "t/3"]
    for m in received[:2]:
        first.ack(m.mid, m.qos)
    assert sender.wait_published(mids[-1], 5)
    first.close()  # t/2 and t/3 were not acknowledged
    again: queue.SimpleQueue[Received | str] = queue.SimpleQueue()
    second = Connection(settings, "mqtt-test", again)
    second.open(5)
    redelivered = [again.get(timeout=10) for _ in range(2)]
    assert [m.topic for m in redelivered if isinstance(m, Received)] == ["t/2", "t/3"]
    with pytest.raises(queue.Empty):
        again.get(timeout=0.5)
    mosquitto.kill()
    assert again.get(timeout=30) == LOST
    second.close()
    sender.close()
    with pytest.raises(MqttError):
        Connection(settings, "mqtt-test", again).open(1)


def test_what_was_sent_is_collected_in_the_order_it_was_handed_over(
        mosquitto: Mosquitto) -> None:
    """QoS 0 messages count as sent once written, QoS 1 ones once acknowledged; a QoS 1
    message whose PUBACK has not come holds back the QoS 0 ones behind it (the daemon's
    published-through mark only ever needs the oldest still open)."""
    settings = BrokerSettings.from_url(mosquitto.url)
    sender = Connection(settings, "mqtt-test-order", queue.SimpleQueue(), clean_session=True)
    sender.open(5)
    try:
        mids = [sender.publish(f"o/{i}", b"x", i % 2, i % 3 == 0) for i in range(9)]
        assert sender.wait_published(mids[-1], 5)
        assert list(sender.published) == mids
        with sender.corked():  # queued, not yet written: nothing collected
            held = sender.publish("o/held", b"x", 0, False)
            sender.collect_published()
            assert list(sender.published) == mids
        assert sender.wait_published(held, 5)
        assert list(sender.published) == [*mids, held]
    finally:
        sender.close()
