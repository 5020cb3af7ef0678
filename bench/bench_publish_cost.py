"""The CPU the daemon's MQTT adapter spends handing a message to paho and learning it sent.

    .venv/bin/python bench/bench_publish_cost.py [--messages 100000] [--batch 50]

A private mosquitto (no persistence) and one ``controller.service.mqtt.Connection``: the
messages go out as the daemon sends a batch's states (QoS 0, retained, ~400 bytes, corked
``--batch`` at a time), and after each batch what paho has sent is collected as the
daemon's ``_confirm`` does. Prints the process's CPU time (both threads: the caller and
paho's network thread) per message. Issue 32 item 3: paho's ``on_publish`` callback made a
``ReasonCode`` and a ``Properties`` for every QoS 0 message it wrote.
"""

from __future__ import annotations

import argparse
import queue
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from controller.broker.mosquitto import Mosquitto  # noqa: E402
from controller.broker.settings import BrokerSettings  # noqa: E402
from controller.service.mqtt import Connection, Received  # noqa: E402


def measure(messages: int, batch: int) -> tuple[float, float]:
    """(CPU s, wall s) to publish ``messages`` and see every one of them sent."""
    with Mosquitto(Path(tempfile.mkdtemp(prefix="bench-publish-")), persistence=False) as broker:
        inbox: queue.SimpleQueue[Received | str] = queue.SimpleQueue()
        conn = Connection(BrokerSettings.from_url(broker.url), "bench-publish-cost", inbox,
                          clean_session=True)
        conn.open(5)
        payload = b"x" * 400
        # a tree before issue 32 (``cp`` this file into it) had paho's on_publish fill
        # ``published`` itself
        collect = getattr(conn, "collect_published", lambda: None)
        try:
            cpu0, wall0 = time.process_time(), time.perf_counter()
            for first in range(0, messages, batch):
                with conn.corked():
                    for k in range(min(batch, messages - first)):
                        conn.publish(f"bridge/T{k}/state", payload, 0, True)
                collect()
                conn.published.clear()
            last = conn.publish("bridge/bench/end", b"x", 1, False)
            while not conn.wait_published(last, 1.0):
                if not conn.connected:
                    raise SystemExit("the broker went away")
            return time.process_time() - cpu0, time.perf_counter() - wall0
        finally:
            conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--batch", type=int, default=50, help="messages per corked batch")
    args = ap.parse_args()
    if args.messages < 1 or args.batch < 1:
        ap.error("--messages and --batch must be at least 1")
    cpu, wall = measure(args.messages, args.batch)
    print(f"{args.messages} QoS 0 messages in batches of {args.batch}: {cpu:.2f} CPU s, "
          f"{cpu / args.messages * 1e6:.1f} us each (wall {wall:.2f} s)")
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:
        raise SystemExit(130) from None
