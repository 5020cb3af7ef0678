"""One table's bridge and controller together in one process (``bridge-table run``: ``cli_run``).

The normal way to start a table's Pi: one asyncio process runs the firmware bridge
(``firmware_bridge.bridge.Bridge``) and a rules daemon (``controller.service.daemon``) that serves
only this table (it subscribes ``{root}/{t}/event`` and ``{root}/{t}/ruling``, so that Pis
sharing a club broker never answer each other's tables). Both talk through the broker of
the config's ``[broker]`` section, as they would in two processes: the bridge's spool and
the controller's journal keep everything across a restart.

The controller's journal defaults to ``controller-journal-{table}.sqlite`` beside the
bridge's spool. Its status goes to ``{root}/controller/{t}/status``.

If either part stops with an error, the other is stopped too and the exit code says so
(1; 2 for a bad config); SIGINT / SIGTERM stop both cleanly (0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
from pathlib import Path
from typing import Any

from controller.broker.login import LoginRefused
from controller.commandline import ControllerError
from controller.service.daemon import DEFAULT_MAX_PAYLOAD, ControllerDaemon, install_stop_signals
from controller.service.engines import build_engine
from controller.service.journal import Journal, JournalError

__all__ = ["serve_table", "run_table", "controller_for"]

log = logging.getLogger("bridge_table.run")


def controller_for(config: Any, args: argparse.Namespace) -> ControllerDaemon:
    """A one-table controller on the bridge config's broker."""
    b = config.broker
    broker = b.settings()
    if getattr(args, "controller_credentials", None):
        from controller.broker.settings import BrokerSettingsError, resolve
        try:  # the table file's URL still names the broker
            broker = resolve(b.url or None, credentials=args.controller_credentials, env={})
        except BrokerSettingsError as e:
            raise ControllerError(str(e)) from e
    elif broker.username:
        log.warning("the controller logs in as %s, like the bridge: a broker from "
                    "bridge-table broker-config binds a client id to its user, so the two "
                    "would disconnect each other; give --controller-credentials "
                    "(clients/table-T-controller.toml, broker-config --table-controllers)",
                    broker.username)
    engine = build_engine(root=b.root, deals=args.deals, rules=args.rules, policy=args.policy)
    journal = None
    if not args.no_journal:
        path = Path(args.journal) if args.journal else \
            Path(config.spool.path).parent / f"controller-journal-{config.table.id}.sqlite"
        try:
            journal = Journal(path, sync=args.journal_sync)
        except JournalError as e:
            raise ControllerError(str(e)) from e
        log.info("controller journal %s", path)
    return ControllerDaemon(broker=broker, engine=engine, journal=journal, root=b.root,
                            only_tables=(config.table.id,), max_payload=DEFAULT_MAX_PAYLOAD,
                            info={"rules": str(args.rules), "table": config.table.id})


async def run_table(bridge: Any, daemon: ControllerDaemon, stop: asyncio.Event) -> int:
    """Run both until ``stop``; if one fails, stop the other. Returns the exit code."""
    tasks = {asyncio.create_task(daemon.run(stop), name="controller"),
             asyncio.create_task(bridge.run(stop), name="bridge")}
    code = 0
    pending = set(tasks)
    while pending:
        done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            exc = None if task.cancelled() else task.exception()
            if isinstance(exc, LoginRefused):   # a configuration error: said, exit 2
                log.error("%s stopped: %s", task.get_name(), exc)
                code = 2
            elif exc is not None:
                log.error("%s stopped: %s", task.get_name(), exc, exc_info=exc)
                code = max(code, 1)
            elif not stop.is_set():
                log.error("%s stopped by itself", task.get_name())
                code = max(code, 1)
            stop.set()  # one part gone: stop the other cleanly
    return code


async def serve_table(args: argparse.Namespace) -> int:
    """The table of ``args.config`` served until SIGTERM or SIGINT: its exit code (2 for a
    bad config or spool, 1 when a part failed)."""
    from firmware_bridge.bridge import Bridge
    from firmware_bridge.config import load_config
    from firmware_bridge.errors import BridgeError, ConfigError, SpoolError

    try:
        config = load_config(args.config, broker_url=args.broker,
                             credentials=args.credentials)
    except ConfigError as e:
        print(f"bridge-table run: {e}", file=sys.stderr)
        return 2
    try:
        daemon = controller_for(config, args)
    except ControllerError as e:
        print(f"bridge-table run: {e}", file=sys.stderr)
        return 2
    stop = asyncio.Event()
    remove = install_stop_signals(stop)
    try:
        return await run_table(Bridge(config), daemon, stop)
    except SpoolError as e:
        # set-up, as the bridge alone says (exit 2: systemd does not loop on it)
        print(f"bridge-table run: {e}", file=sys.stderr)
        return 2
    except BridgeError as e:
        print(f"bridge-table run: {e}", file=sys.stderr)
        return 1
    finally:
        remove()
        if daemon.journal is not None:
            with contextlib.suppress(Exception):
                daemon.journal.close()
