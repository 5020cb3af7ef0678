"""``bridge-table vugraph``: the audience's web view of a session (reads ``public/#`` only)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import ControllerError, add_log_level, setup_logging
from controller.web.limits import parse_trusted
from controller.web.serving import add_trusted_proxy, check_bindable, parse_listen


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table vugraph",
                                 description="the audience's web view of a session "
                                             "(reads public/# only)")
    add_broker_arguments(ap)
    # not the console's 8080: both run on the scoring machine
    ap.add_argument("--listen", default="127.0.0.1:8081",
                    help="HOST:PORT (default %(default)s; the console's is 8080)")
    ap.add_argument("--public", default="public", help="topic root of the released feed")
    add_trusted_proxy(ap)
    add_log_level(ap)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    setup_logging(args)
    try:
        broker = settings_from_args(args)
        host, port = parse_listen(args.listen)
        check_bindable(host, port)
        trusted = parse_trusted(args.trusted_proxy)
    except (ControllerError, ValueError) as exc:
        print(f"bridge-table vugraph: {exc}", file=sys.stderr)
        return 2
    from controller.web.vugraph.app import Store, serve

    return 0 if serve(Store(args.public), broker, host, port, trusted_proxies=trusted) else 2


if __name__ == "__main__":
    raise SystemExit(main())
