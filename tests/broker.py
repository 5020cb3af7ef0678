"""A private mosquitto on a free loopback port, for tests and benchmarks.

The launcher lives in the package (``controller.broker.mosquitto``) because the demo uses it too;
this module keeps the tests' import path (``from broker import Mosquitto``).

Usage::

    with Mosquitto(tmp_path) as broker:
        broker.url        # "mqtt://127.0.0.1:PORT"
        broker.restart()  # stop and start on the same port, keeping its persistence
        broker.stop(); broker.start()
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.broker.mosquitto import Mosquitto, MosquittoError, free_port, mosquitto_binary

__all__ = ["Mosquitto", "MosquittoError", "free_port", "mosquitto_binary", "venue_broker"]


def venue_broker(workdir: Path, tables: Sequence[str], **plan: Any) -> tuple[Mosquitto, Path]:
    """A mosquitto started with the configuration ``bridge-table broker-config`` writes for
    ``tables`` (TLS, users, ACL, persistence), on free loopback ports, files in ``workdir``.

    Returns the (not yet started) broker, on the password TLS listener's port, and the
    directory of the configuration; ``clients/USER.toml`` are the credentials files, whose
    URL names the listener as ``localhost``. ``plan`` goes to ``BrokerPlan`` (e.g.
    ``client_certs=True``: then ``plan["cert_port"]`` is given or a free port).
    """
    from controller.venue.config import BrokerPlan, write_broker_config

    out = Path(workdir) / "venue"
    port = free_port()
    options: dict[str, Any] = {"hosts": ["localhost"], "ips": ["127.0.0.1"],
                               "bind": "127.0.0.1", "port": port,
                               "persistence_dir": Path(workdir) / "persist", **plan}
    if options.get("client_certs") and "cert_port" not in options:
        options["cert_port"] = free_port()
    Path(options["persistence_dir"]).mkdir(parents=True, exist_ok=True)
    write_broker_config(BrokerPlan(tables=list(tables), **options), out)
    broker = Mosquitto(Path(workdir) / "broker", port=port, config=out / "mosquitto.conf")
    return broker, out
