"""The broadcast relay on an MQTT broker (aiomqtt): subscribe, take, release, reconnect.

A message is acknowledged to the broker only once the relay's store has it, and a released
item leaves the store only once the broker has acknowledged its public copy (``Relay``):
a relay killed anywhere loses nothing and publishes nothing twice.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import time
import uuid
from typing import TYPE_CHECKING, Any

from controller import wire
from controller.broadcast.relay import Relay
from controller.broker.aioloop import quiet_closed_sockets
from controller.broker.login import LoginWatch
from controller.commandline import OutageLog

if TYPE_CHECKING:
    from controller.broker.settings import BrokerSettings

__all__ = ["run_relay", "run_until_signalled"]

log = logging.getLogger("bridge_table.broadcast")


async def run_relay(broker: BrokerSettings, relay: Relay, *, stop: asyncio.Event | None = None,
                    client_id: str | None = None, ready: asyncio.Event | None = None) -> None:
    """Run ``relay`` on a broker until ``stop``; reconnects after a broker error, but not
    after a login refused at start (:class:`LoginRefused`, ``controller.broker.login``)."""
    import aiomqtt

    stop = stop or asyncio.Event()
    cid = client_id or (relay.store.client_id() if relay.store is not None else
                        f"bridge-table-broadcast-{uuid.uuid4().hex[:12]}")
    root = relay.root
    outage = OutageLog(log, f"broker {broker.url}")
    login = LoginWatch(log, broker.url, broker.username, who="the relay")
    while not stop.is_set():
        delay = 1.0
        try:
            client = aiomqtt.Client(
                broker.host, broker.port, identifier=cid, clean_session=False,
                username=broker.username, password=broker.password,
                tls_context=broker.tls_context(), keepalive=broker.keepalive)
            # a message is acknowledged once the store has it (``_serve``): one that came
            # while the relay died is delivered again by the broker, not lost
            client._client.manual_ack_set(True)  # noqa: SLF001  # paho, under aiomqtt
            async with client:
                login.up()
                await client.subscribe(
                    [(wire.status_topic(root=root), 1), (wire.status_topic("+", root=root), 1)]
                    + [(wire.topic("+", kind, root=root), 1)
                       for kind in ("state", "feed", "alert", "result")])
                await client.publish(f"{relay.public}/session",
                                     json.dumps(relay.session_payload()), qos=1, retain=True)
                outage.recovered()
                if ready is not None:
                    ready.set()
                await _serve(client, relay, stop)
        except aiomqtt.MqttError as exc:
            if login.lost(exc):
                delay = 10.0
            login.failed(exc)   # a login refused at start: LoginRefused, the command exits 2
            outage.failed(exc, delay)
            try:
                await asyncio.wait_for(stop.wait(), delay)
            except TimeoutError:
                pass


async def _serve(client: Any, relay: Relay, stop: asyncio.Event) -> None:
    wake = asyncio.Event()
    stopping = asyncio.Event()

    async def receive() -> None:
        async for message in client.messages:
            try:
                payload = json.loads(bytes(message.payload))
            except (ValueError, TypeError):
                log.warning("bad payload on %s ignored", message.topic)
                payload = None
            if payload is not None:
                try:
                    relay.take(str(message.topic), payload, bool(message.retain),
                               time.time())
                except Exception:  # a defect must not stop the relay (nor lose the rest)
                    log.exception("message on %s not taken", message.topic)
            client._client.ack(message.mid, message.qos)  # noqa: SLF001  # stored: ack
            wake.set()

    async def release() -> None:
        last_sync = 0.0
        while not stopping.is_set():
            wake.clear()
            now = time.time()
            synced = relay.store is not None and now - last_sync >= 1.0
            if synced and relay.store is not None:
                last_sync = now
                relay.store.sync_manual(relay.gate)
            for p in relay.plan(now):
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
                assert p.item is not None
                relay.commit(p.item)       # acknowledged by the broker: released
                if stopping.is_set():
                    break
            for p in relay.view_messages():
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
                if p.view is not None:
                    relay.view_published(p.view)
            relay.write_files()
            extra = relay.now_messages()
            if synced:   # the operator's commentary, read with the decisions
                relay.save_status()
                comment = relay.comment_message()
                extra += [comment] if comment is not None else []
            for p in extra:
                await client.publish(p.topic, json.dumps(p.payload), qos=1, retain=p.retain)
            if stopping.is_set():
                return
            nxt = relay.gate.next_time()
            timeout = 1.0 if nxt is None else min(1.0, max(0.0, nxt - time.time()))
            try:
                await asyncio.wait_for(wake.wait(), timeout)
            except TimeoutError:
                pass

    receiver = asyncio.create_task(receive())
    releaser = asyncio.create_task(release())
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({receiver, releaser, stopper},
                                 return_when=asyncio.FIRST_COMPLETED)
    # on a stop, the release in progress ends at a message boundary (an item is never
    # half released); a broker that does not answer within 5 s ends it anyway (the items
    # not acknowledged stay held and go out after a restart)
    stopping.set()
    wake.set()
    await _cancel(receiver)
    if releaser not in done:
        await asyncio.wait({releaser}, timeout=5.0)
    await _cancel(releaser)
    await _cancel(stopper)
    for task in done:
        if task is not stopper and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def _cancel(task: asyncio.Task[Any]) -> None:
    while not task.done():  # a cancellation can be swallowed on Python 3.11: repeat
        task.cancel()
        await asyncio.wait({task}, timeout=0.1)


def run_until_signalled(broker: BrokerSettings, relay: Relay,
                        client_id: str | None = None) -> None:
    """Run ``relay`` until SIGINT or SIGTERM (the command's way: ``broadcast.cli``)."""
    async def run() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        quiet_closed_sockets(loop)   # a broker that went away is said, never a traceback
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await run_relay(broker, relay, stop=stop, client_id=client_id)

    try:
        asyncio.run(run())
    except KeyboardInterrupt:
        pass
