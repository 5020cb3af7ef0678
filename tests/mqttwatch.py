"""Watch a real broker from a test: every message on ``bridge/#``, waited on by predicate."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import aiomqtt

REPO = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Seen:
    topic: str
    payload: Any          # decoded JSON, or the raw bytes when not JSON
    retain: bool

    @property
    def kind(self) -> str:
        return self.topic.rsplit("/", 1)[-1]

    @property
    def table(self) -> str:
        return self.topic.split("/")[1]


def _host_port(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    return parts.hostname or "127.0.0.1", parts.port or 1883


class Watch:
    """``async with Watch(broker.url) as w: await w.wait(lambda m: ...)``."""

    def __init__(self, url: str, topic: str = "bridge/#") -> None:
        self.host, self.port = _host_port(url)
        self.topic = topic
        self.seen: list[Seen] = []
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._client: aiomqtt.Client | None = None

    async def _collect(self) -> None:
        while True:
            try:
                async with aiomqtt.Client(self.host, self.port) as client:
                    await client.subscribe(self.topic, qos=1)
                    self._client = client
                    async for m in client.messages:
                        raw = bytes(m.payload) if isinstance(m.payload, bytes | bytearray) \
                            else str(m.payload).encode()
                        try:
                            payload: Any = json.loads(raw)
                        except ValueError:
                            payload = raw
                        self.seen.append(Seen(m.topic.value, payload, bool(m.retain)))
                        self._changed.set()
            except aiomqtt.MqttError:  # the broker restarted: watch again
                self._client = None
                await asyncio.sleep(0.2)

    async def __aenter__(self) -> Watch:
        self._task = asyncio.create_task(self._collect())
        for _ in range(200):
            if self._client is not None:
                break
            await asyncio.sleep(0.05)
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait(self, pred: Callable[[Seen], bool], timeout: float = 30.0,
                   after: int = 0) -> Seen:
        """The first message (index >= ``after``) that satisfies ``pred``."""
        async def scan() -> Seen:
            i = after
            while True:
                while i < len(self.seen):
                    if pred(self.seen[i]):
                        return self.seen[i]
                    i += 1
                self._changed.clear()
                await self._changed.wait()
        return await asyncio.wait_for(scan(), timeout)

    def of(self, kind: str, table: str | None = None) -> list[Seen]:
        return [m for m in self.seen if m.kind == kind and (table is None or m.table == table)]

    def last(self, kind: str, table: str) -> Any:
        found = self.of(kind, table)
        return found[-1].payload if found else None


class Publisher:
    """Publishes events QoS 1 the way a bridge does, reconnecting if the broker restarts."""

    def __init__(self, url: str) -> None:
        self.host, self.port = _host_port(url)

    async def send(self, items: Iterable[tuple[str, bytes | str | Mapping[str, Any]]]) -> None:
        pending = list(items)
        while pending:
            try:
                async with aiomqtt.Client(self.host, self.port) as client:
                    while pending:
                        topic, payload = pending[0]
                        data = payload if isinstance(payload, bytes | str) else \
                            json.dumps(payload)
                        await client.publish(topic, data, qos=1)
                        pending.pop(0)
            except aiomqtt.MqttError:
                await asyncio.sleep(0.2)

    async def events(self, table: str, events: Iterable[Mapping[str, Any]]) -> None:
        await self.send((f"bridge/{table}/event", e) for e in events)


def daemon_process(url: str, journal: Path, *extra: str,
                   log: Path | None = None) -> subprocess.Popen[bytes]:
    """``bridge-table controller`` in a subprocess (killable with SIGKILL)."""
    out = open(log, "ab") if log else subprocess.DEVNULL  # noqa: SIM115
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "controller", "--broker", url,
         "--journal", str(journal), "--status-interval", "0.5", *extra],
        cwd=REPO, stdout=out, stderr=out, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONUNBUFFERED": "1"})
    if log:
        out.close()  # type: ignore[union-attr]
    return proc


def stop_process(proc: subprocess.Popen[bytes], sig: int = signal.SIGTERM,
                 timeout: float = 20) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    return int(proc.returncode)


def wait_until(predicate: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Poll ``predicate`` (every 0.1 s) until it holds; AssertionError after ``timeout``."""
    end = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


class Recorder:
    """A plain MQTT client (paho, in its own thread) recording every message under its
    filters in the broker's order, for tests that are not asyncio: ``seen`` holds
    (topic, payload decoded from JSON or None, retained). ``client_id`` with
    ``clean_session=False`` is a persistent subscriber, as a console or a relay is."""

    def __init__(self, url: str, topics: str | Iterable[str], *, client_id: str = "",
                 clean_session: bool = True) -> None:
        import paho.mqtt.client as mqtt

        host, port = _host_port(url)
        self.seen: list[tuple[str, Any, bool]] = []
        self.lock = threading.Lock()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                  clean_session=clean_session)
        self.client.on_message = self._on
        self.client.connect(host, port)
        filters = [topics] if isinstance(topics, str) else list(topics)
        self.client.subscribe([(f, 1) for f in filters])
        self.client.loop_start()

    def _on(self, client: Any, userdata: Any, msg: Any) -> None:
        try:
            payload = json.loads(msg.payload)
        except ValueError:
            payload = None
        with self.lock:
            self.seen.append((msg.topic, payload, bool(msg.retain)))

    def snapshot(self) -> list[tuple[str, Any, bool]]:
        with self.lock:
            return list(self.seen)

    def topics(self) -> list[str]:
        return [t for t, _, _ in self.snapshot()]

    def of(self, kind: str) -> list[tuple[str, Any]]:
        """(topic, payload) of the messages whose topic ends in ``/kind``."""
        return [(t, p) for t, p, _ in self.snapshot() if t.rsplit("/", 1)[-1] == kind]

    def publish(self, topic: str, payload: Any, retain: bool = False) -> None:
        self.client.publish(topic, json.dumps(payload), qos=1, retain=retain).wait_for_publish(5)

    def close(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()
