"""``bridge-table broker-config``: the command line of ``controller.venue.config`` (what it
writes, and why, is said there)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from controller.broker.identity import DEFAULT_EVENT_SRC
from controller.commandline import bounded
from controller.venue.config import (
    DEFAULT_ACK,
    BrokerConfigError,
    BrokerPlan,
    parse_tables,
    tables_from_file,
    write_broker_config,
)

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bridge-table broker-config",
        description="Write a locked-down mosquitto configuration for a venue: TLS, one user "
                    "per table, ACLs, persistence, queues (docs/security.md).")
    ap.add_argument("tables", help="the tables: a list and ranges like 1-12,A1, or a "
                                   "session or schedule file")
    ap.add_argument("--out", required=True, help="directory to write into")
    ap.add_argument("--host", action="append", default=[],
                    help="the broker's host name, as clients reach it (repeat for more; "
                         "default: this machine's name)")
    ap.add_argument("--ip", action="append", default=[],
                    help="the broker's IP address, put in its certificate (repeatable)")
    ap.add_argument("--port", type=_port, default=8883, help="TLS listener (default 8883)")
    ap.add_argument("--bind", default="", help="address to listen on (default: all)")
    ap.add_argument("--client-certs", action="store_true",
                    help="also a listener where clients log in by certificate, and a "
                         "certificate for each client")
    ap.add_argument("--cert-port", type=_port, default=8884,
                    help="--client-certs: the certificate listener's port (default "
                         "%(default)s)")
    ap.add_argument("--local-port", type=_port, default=None,
                    help="also plain MQTT on 127.0.0.1:PORT (only for programs on the "
                         "broker's own machine)")
    ap.add_argument("--stations", default="", help="verification stations, e.g. V1,V2")
    ap.add_argument("--table-controllers", action="store_true",
                    help="each table's Pi also runs its table's controller (bridge-table run)")
    ap.add_argument("--root", default="bridge",
                    help="topic root of the tables (default %(default)s)")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    ap.add_argument("--ack-topic", default=DEFAULT_ACK,
                    help="acknowledgements to a table's bridge: ROOT/T/ack/SRC, the wire "
                         "contract's (only 'ack' or its old spelling 'ack/#')")
    ap.add_argument("--partitions", type=_at_least(0), default=0, metavar="N",
                    help="N partitioned controllers (--partition K/N): a user "
                         "controller-partKofN each instead of one controller")
    ap.add_argument("--event-src", action="append", default=[], metavar="TEMPLATE",
                    help="the src of a table's bridge, {t} the table (repeatable; default "
                         f"{DEFAULT_EVENT_SRC}, the bridge's own default)")
    ap.add_argument("--director-src", action="append", default=[], metavar="SRC",
                    help="the src of a director's console in its rulings (repeatable; "
                         "default console-HOSTNAME, the console's own default here)")
    ap.add_argument("--install-dir", default=None,
                    help="where these files will be on the broker (default: --out)")
    ap.add_argument("--persistence-dir", default="/var/lib/mosquitto",
                    help="where mosquitto keeps its database (default %(default)s)")
    ap.add_argument("--autosave", type=_at_least(1), default=1,
                    help="seconds between saves of the broker's database (default 1; each "
                         "save writes all of it: more on a slow SD card)")
    ap.add_argument("--max-queued", type=_at_least(1), default=0,
                    help="messages kept for a client that is away, at least 1 (default: "
                         "from the tables)")
    ap.add_argument("--rotate", action="append", default=[],
                    help="new password (and certificate) for this user, or 'all' (repeatable)")
    ap.add_argument("--cafile", help="the venue's own CA certificate (with --certfile, "
                                     "--keyfile) instead of making one")
    ap.add_argument("--certfile", help="the broker's certificate")
    ap.add_argument("--keyfile", help="the broker's private key")
    return ap


#: a TCP port a listener can have (mosquitto refuses ``listener 0``)
_port = bounded(int, lambda v: 1 <= v <= 65535, "a port from 1 to 65535")


def _at_least(low: int) -> Callable[[str], int]:
    """A whole number of at least ``low`` (a bound written into mosquitto.conf)."""
    return bounded(int, lambda v: v >= low, f"a whole number of at least {low}")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        source = Path(args.tables)
        tables = tables_from_file(source) if source.is_file() else parse_tables(args.tables)
        stations = parse_tables(args.stations) if args.stations.strip() else []
        clash = set(tables) & set(stations)
        if clash:
            raise BrokerConfigError(f"{', '.join(sorted(clash))}: both a table and a station")
        plan = BrokerPlan(
            tables=tables, stations=stations, hosts=args.host, ips=args.ip, port=args.port,
            bind=args.bind, client_certs=args.client_certs, cert_port=args.cert_port,
            local_port=args.local_port, root=args.root, public=args.public,
            ack=args.ack_topic, table_controllers=args.table_controllers,
            install_dir=Path(args.install_dir) if args.install_dir else None,
            persistence_dir=Path(args.persistence_dir), max_queued=args.max_queued,
            autosave=args.autosave, partitions=args.partitions,
            event_src=tuple(args.event_src) or (DEFAULT_EVENT_SRC,),
            director_src=tuple(args.director_src), rotate=args.rotate,
            cafile=Path(args.cafile) if args.cafile else None,
            certfile=Path(args.certfile) if args.certfile else None,
            keyfile=Path(args.keyfile) if args.keyfile else None)
        out = Path(args.out)
        write_broker_config(plan, out)
    except (BrokerConfigError, OSError) as e:
        print(f"bridge-table broker-config: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    print(f"{len(tables)} table(s), {len(stations)} station(s): {out}/mosquitto.conf, acl, "
          f"passwd; credentials in {out}/clients/ (one file a client, mode 0600)")
    print("next: docs/security.md, 'Deploying at a venue'")
    return 0
