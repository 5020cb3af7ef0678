"""Watch a real broker from a test: every message on ``bridge/#``, waited on by predicate."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
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
