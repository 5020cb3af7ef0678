"""A private mosquitto on a free loopback port, for tests and benchmarks.

The launcher lives in the package (``controller.mosquitto``) because the demo uses it too;
this module keeps the tests' import path (``from broker import Mosquitto``).

Usage::

    with Mosquitto(tmp_path) as broker:
        broker.url        # "mqtt://127.0.0.1:PORT"
        broker.restart()  # stop and start on the same port, keeping its persistence
        broker.stop(); broker.start()
"""

from __future__ import annotations

from controller.mosquitto import Mosquitto, MosquittoError, free_port, mosquitto_binary

__all__ = ["Mosquitto", "MosquittoError", "free_port", "mosquitto_binary"]
