"""The controller's one MQTT adapter: paho-mqtt on its own network thread, manual acks.

``controller.service.daemon`` talks to the broker only through :class:`Connection`. One
connection is one MQTT session of the daemon (``clean_session=False``, a fixed client id):

- paho's network thread (``loop_start``) reads, writes and keeps the connection alive; the
  daemon's worker thread never waits on the network;
- received messages go into the daemon's inbox (a ``queue.SimpleQueue``) as
  :class:`Received`, with the :class:`Connection` they came on; a lost connection puts
  :data:`LOST` there, so the worker sees it in order with the messages;
- **manual acknowledgements** (``manual_ack_set(True)``, paho-mqtt 2's public API): paho
  sends no PUBACK by itself; :meth:`Connection.ack` sends it once the daemon has journaled
  the message. A message received but not acknowledged is redelivered by the broker to the
  next session;
- :meth:`Connection.publish` hands a message to paho and returns its ``mid`` without waiting;
  once paho has it sent (QoS 0: written to the socket; QoS 1: PUBACK received),
  :meth:`Connection.collect_published` appends the mid to :attr:`Connection.published`,
  which the worker reads when it suits it. The worker asks paho's ``MQTTMessageInfo`` of
  each message, in the order they were handed over, rather than setting ``on_publish``:
  for every QoS 0 message paho wrote, that callback made a ``ReasonCode`` and a
  ``Properties`` the adapter threw away, 14% of the daemon's time with 1,024 tables
  passing their hands (``docs/benchmarks-archive.md``, issue 32 item 3).

A new :class:`Connection` (a new paho client) for each session: mids, in-flight messages and
the unacknowledged messages of a lost session are never mixed with the next one's; what was
not acknowledged is redelivered by the broker, what the daemon published without a PUBACK it
publishes again itself.

The versions this adapter is written against are checked at start (:func:`check_versions`):
manual acks and the callback signatures are paho-mqtt 2 behaviour that a major upgrade may
change.
"""

from __future__ import annotations

import collections
import contextlib
import importlib.metadata
import queue
import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode
from paho.mqtt.reasoncodes import ReasonCode

from controller.broker.settings import BrokerSettings

__all__ = ["LOST", "Connection", "MqttError", "Received", "SUPPORTED", "UnsupportedVersion",
           "check_versions", "supported"]

#: distribution -> (lowest supported version, first unsupported version)
SUPPORTED: Final[dict[str, tuple[tuple[int, ...], tuple[int, ...]]]] = {
    "paho-mqtt": ((2, 1), (3,)),
    # the other commands (bridge, web apps, tests) use aiomqtt, which wraps paho
    "aiomqtt": ((2, 5), (3,)),
}

#: put in the inbox when the connection it belongs to is lost
LOST: Final = "lost"


class MqttError(Exception):
    """The broker cannot be reached, refused us, or the connection was lost; ``rc``: the
    broker's reason code when it gave one (``controller.broker.login`` reads it)."""

    def __init__(self, message: str, rc: ReasonCode | None = None) -> None:
        super().__init__(message)
        self.rc = rc


class UnsupportedVersion(RuntimeError):
    """An installed MQTT library outside the range this adapter was written for."""


def _parse(version: str) -> tuple[int, ...]:
    parts: list[int] = []
    for piece in version.split("."):
        digits = re.match(r"\d+", piece)
        if digits is None:
            break
        parts.append(int(digits.group()))
        if digits.end() < len(piece):  # 3.0.0rc1: a pre-release of 3.0.0, counted as it
            break
    return tuple(parts)


def supported(distribution: str, version: str) -> bool:
    """Whether ``version`` of ``distribution`` is in :data:`SUPPORTED`'s range."""
    low, high = SUPPORTED[distribution]
    v = _parse(version)
    return low <= v < high


def check_versions() -> dict[str, str]:
    """The installed versions of the MQTT libraries; :class:`UnsupportedVersion` naming the
    range when one is outside it (an upgrade that needs this adapter looked at again)."""
    found: dict[str, str] = {}
    for dist, (low, high) in SUPPORTED.items():
        try:
            version = importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            raise UnsupportedVersion(f"{dist} is not installed") from None
        if not supported(dist, version):
            want = f">={'.'.join(map(str, low))},<{'.'.join(map(str, high))}"
            raise UnsupportedVersion(
                f"{dist} {version} is installed; controller/service/mqtt.py supports {dist}{want} "
                "(manual acknowledgements and callbacks): check the adapter against the new "
                "version, then widen SUPPORTED")
        found[dist] = version
    return found


@dataclass(frozen=True, slots=True)
class Received:
    """A message as it came, with the connection to acknowledge it on."""

    connection: Connection
    topic: str
    payload: bytes
    qos: int
    mid: int
    #: ``time.perf_counter()`` when paho's network thread handed it over (the daemon's own
    #: event -> state time starts here: ``controller.service.latency``)
    at: float = 0.0


def _sent(info: paho.MQTTMessageInfo) -> bool:
    """Whether paho has sent the message (QoS 0) or seen its PUBACK (QoS 1); False for one
    it could not queue (no connection): it goes out again with the next session."""
    try:
        return info.is_published()
    except (ValueError, RuntimeError):
        return False


def _nodelay(client: paho.Client, userdata: Any, sock: Any) -> None:
    # small messages answered at once: Nagle + delayed ACK would add ~40 ms to each
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Connection:
    """One MQTT session: ``open()``, ``subscribe()``, ``publish()``/``ack()``, ``close()``."""

    def __init__(self, broker: BrokerSettings, client_id: str,
                 inbox: queue.SimpleQueue[Received | str], *,
                 will: tuple[str, bytes, int, bool] | None = None,
                 clean_session: bool = False, max_inflight: int = 100) -> None:
        self.broker = broker
        self.inbox = inbox
        #: mids paho has sent (QoS 0) or seen acknowledged (QoS 1), as
        #: :meth:`collect_published` finds them
        self.published: collections.deque[int] = collections.deque()
        #: what was handed to paho and not yet found sent, in the order it was handed over
        self._handed: collections.deque[tuple[int, paho.MQTTMessageInfo]] = collections.deque()
        self._connected = threading.Event()
        self._answered = threading.Event()
        self._refused: str | None = None
        self._refused_code: ReasonCode | None = None
        #: mids of the SUBACKs received (a SUBACK may come before subscribe() returns its mid)
        self._subacks: set[int] = set()
        self._subacked = threading.Condition()
        self._lost = False
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id,
                        clean_session=clean_session)
        c.manual_ack_set(True)
        # paho keeps (and orders) what is over the window itself; a far larger window makes
        # it scan every in-flight message on each PUBACK
        c.max_inflight_messages_set(max_inflight)
        c.max_queued_messages_set(0)
        # the daemon reconnects itself, with a new session object; paho must not first
        c.reconnect_delay_set(60, 120)
        if broker.username is not None:
            c.username_pw_set(broker.username, broker.password)
        tls = broker.tls_context()
        if tls is not None:
            c.tls_set_context(tls)
        if will is not None:
            topic, payload, qos, retain = will
            c.will_set(topic, payload, qos=qos, retain=retain)
        c.on_socket_open = _nodelay
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        c.on_subscribe = self._on_subscribe
        self._client = c

    # -- callbacks (paho's network thread) ---------------------------------------------------
    def _on_connect(self, client: paho.Client, userdata: Any, flags: Any, reason: ReasonCode,
                    properties: Any) -> None:
        if reason.is_failure:
            self._refused = str(reason)
            self._refused_code = reason
        else:
            self._connected.set()
        self._answered.set()

    def _on_disconnect(self, client: paho.Client, userdata: Any, flags: Any,
                       reason: ReasonCode, properties: Any) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        self._answered.set()
        with self._subacked:  # no SUBACK will come now
            self._subacked.notify_all()
        if was and not self._lost:
            self._lost = True
            self.inbox.put(LOST)

    def _on_message(self, client: paho.Client, userdata: Any, m: paho.MQTTMessage) -> None:
        self.inbox.put(Received(self, m._topic.decode("utf-8", "replace"),  # noqa: SLF001
                                bytes(m.payload), m.qos, m.mid, time.perf_counter()))

    def _on_subscribe(self, client: paho.Client, userdata: Any, mid: int,
                      reasons: Sequence[ReasonCode], properties: Any) -> None:
        if any(r.is_failure for r in reasons):
            self._refused = "subscription refused: " + ", ".join(map(str, reasons))
        with self._subacked:
            self._subacks.add(mid)
            self._subacked.notify_all()

    # -- the worker's side ----------------------------------------------------------------
    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def open(self, timeout: float) -> None:
        """Connect and start the network thread; :class:`MqttError` if the broker does not
        accept us within ``timeout`` seconds (a broker shutting down may accept the TCP
        connection and never answer it)."""
        c = self._client
        c.connect_timeout = timeout
        try:
            c.connect(self.broker.host, self.broker.port, keepalive=self.broker.keepalive)
        except (OSError, ValueError) as e:
            raise MqttError(f"cannot connect to {self.broker.url}: {e}") from e
        c.loop_start()
        if not self._answered.wait(timeout) or not self._connected.is_set():
            why = self._refused or f"no answer within {timeout:g} s"
            self.close()
            raise MqttError(f"{self.broker.url} refused the connection: {why}"
                            if self._refused else f"{self.broker.url}: {why}",
                            self._refused_code)

    def subscribe(self, subscriptions: Sequence[tuple[str, int]], timeout: float) -> None:
        """Subscribe (in packets of at most 500 topics) and wait for every SUBACK."""
        mids = set()
        for i in range(0, len(subscriptions), 500):
            rc, mid = self._client.subscribe(list(subscriptions[i:i + 500]))
            if rc != MQTTErrorCode.MQTT_ERR_SUCCESS or mid is None:
                raise MqttError(f"subscribe failed: {paho.error_string(rc)}")
            mids.add(mid)
        with self._subacked:
            if not self._subacked.wait_for(
                    lambda: mids <= self._subacks or not self.connected, timeout):
                raise MqttError(f"no SUBACK within {timeout:g} s")
        if not self.connected:
            raise MqttError("connection lost while subscribing")
        if self._refused:
            raise MqttError(self._refused)

    def pause(self, topic: str) -> None:
        """Unsubscribe ``topic``, not waiting for the UNSUBACK (``controller.service.intake``: a
        flooding table's events are then dropped by the broker, not read by the daemon)."""
        self._client.unsubscribe(topic)

    def resume(self, topic: str, qos: int) -> None:
        """Subscribe ``topic`` again, not waiting for the SUBACK."""
        self._client.subscribe(topic, qos)

    def publish(self, topic: str, payload: bytes, qos: int, retain: bool) -> int:
        """Hand a message to paho; its mid. Not waited for: see :meth:`collect_published`."""
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        self._handed.append((info.mid, info))
        return int(info.mid)

    def collect_published(self) -> None:
        """Append to :attr:`published` the mids of what paho has sent (QoS 0) or seen
        acknowledged (QoS 1) since, in the order they were handed over: the first one not
        yet out holds back those behind it until it is (a QoS 1 message waits for its
        PUBACK a few milliseconds; never longer than its connection lives)."""
        handed = self._handed
        while handed and _sent(handed[0][1]):
            self.published.append(handed.popleft()[0])

    def wait_published(self, mid: int, timeout: float) -> bool:
        """For the rare message a caller must see out (the goodbye status)."""
        deadline = threading.Event()
        for _ in range(int(timeout / 0.02) + 1):
            self.collect_published()
            if mid in self.published:
                return True
            if not self.connected:
                return False
            deadline.wait(0.02)
        self.collect_published()
        return mid in self.published

    @contextlib.contextmanager
    def corked(self) -> Iterator[None]:
        """Queue a batch's PUBACKs and publishes, then wake paho's network thread once.

        paho wakes its network thread for every packet queued from another thread (a write
        to a socket pair): the profile at 1,024 tables put 18% of the daemon's time in that
        system call alone, and as much again in the network thread waking up for one
        packet at a time. While corked the packets only queue up (``_sockpairW``, paho 2's
        wake-up socket, is held back: internal, hence SUPPORTED's upper bound); uncorking
        wakes the thread once and it writes them all."""
        c = self._client
        wake = getattr(c, "_sockpairW", None)
        if wake is None:
            yield
            return
        c._sockpairW = None  # noqa: SLF001 - see the docstring
        try:
            yield
        finally:
            if c._sockpairW is None:  # noqa: SLF001 - paho did not replace it meanwhile
                c._sockpairW = wake  # noqa: SLF001
            with contextlib.suppress(OSError):  # full (a wake is pending) or closed
                wake.send(b"\0")

    def ack(self, mid: int, qos: int) -> None:
        """The PUBACK of a received message (after the daemon journaled it)."""
        if qos > 0:
            self._client.ack(mid, qos)

    def close(self) -> None:
        """Disconnect cleanly (no will) if connected, and stop the network thread."""
        self._lost = True  # our own doing: not reported as a loss
        try:
            self._client.disconnect()
        except (OSError, ValueError):
            pass
        self._client.loop_stop()
