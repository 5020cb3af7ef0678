"""``bridge-table console``: the director's console web app; ``console passwd FILE``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import logging
import os
import signal
import socket
import ssl
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from controller.boards.deals import DealsError
from controller.broker.settings import add_broker_arguments, settings_from_args
from controller.commandline import (
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    ControllerError,
    add_log_level,
    setup_logging,
)
from controller.web.auth import (
    PasswordFileError,
    check_account_name,
    read_accounts,
    write_account,
    write_password_file,
)
from controller.web.limits import parse_trusted, uvicorn_config
from controller.web.listener import Connection, Hub
from controller.web.serving import add_trusted_proxy, check_bindable, parse_listen

if TYPE_CHECKING:
    from controller.session import Session as SessionFile

log = logging.getLogger("bridge_table.console")


def _ask(prompt: str) -> str:
    """One password, not echoed on a terminal. From a pipe (a script giving the password
    and its repeat as two lines) it is read as a line: getpass would warn that it cannot
    hide what a pipe does not show anyway."""
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    print(prompt.rstrip(), file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\r\n")


def passwd(argv: Sequence[str]) -> int:
    ap = argparse.ArgumentParser(prog="bridge-table console passwd",
                                 description="Add a director to the password file, or change "
                                             "their password (scrypt hash, mode 0600).")
    ap.add_argument("file", help="the password file to write")
    ap.add_argument("--name", help="the director's login name: each director their own "
                    "password (without it: one password shared by all, the file replaced)")
    ap.add_argument("--stdin", action="store_true",
                    help="read the password from standard input (one line)")
    args = ap.parse_args(argv)
    try:
        if args.name is not None:
            check_account_name(args.name)
    except PasswordFileError as exc:
        print(exc, file=sys.stderr)
        return 2
    try:
        if args.stdin:
            password = sys.stdin.readline().rstrip("\r\n")
        else:
            password = _ask(f"{args.name or 'director'}'s password: ")
            if _ask("again: ") != password:
                print("the two passwords differ; nothing written", file=sys.stderr)
                return EXIT_USAGE
    except EOFError:
        print("\nno password given; nothing written", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted; nothing written", file=sys.stderr)
        return EXIT_INTERRUPTED
    if len(password) < 8:
        print("the password must have at least 8 characters; nothing written",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.name is None:
            write_password_file(Path(args.file), password)
            print(f"wrote {args.file}: one password for every director")
        else:
            new = write_account(Path(args.file), args.name, password)
            print(f"{'added' if new else 'changed the password of'} {args.name} in {args.file}")
    except (OSError, PasswordFileError) as exc:    # a path or a file to fix: exit 2
        print(f"cannot write {args.file}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


def check_certificate(cert: str, key: str) -> None:
    """Raise :class:`ControllerError` when the certificate and its key cannot be served
    (a missing file, not PEM, a key of another certificate): said before serving, not a
    traceback from the web server once it starts."""
    try:
        ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER).load_cert_chain(cert, key)
    except ssl.SSLError as exc:
        why = f"not a PEM certificate and its matching private key ({exc.reason or exc})"
    except OSError as exc:
        why = exc.strerror or str(exc)
    else:
        return
    raise ControllerError(f"--tls-cert {cert} with --tls-key {key}: cannot serve HTTPS with "
                          f"them: {why}")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="bridge-table console",
        description="The director's console: every table live, rulings, the ruling log. "
                    "Make the password file first: bridge-table console passwd FILE.")
    add_broker_arguments(ap)
    ap.add_argument("--listen", default="127.0.0.1:8080",
                    help="HOST:PORT to serve on (default %(default)s)")
    ap.add_argument("--director-password-file", dest="director_password_file",
                    default=os.environ.get("BRIDGE_TABLE_CONSOLE_PASSWORD", "console-password"),
                    help="the director's password file (default %(default)s)")
    ap.add_argument("--db", default="var/console.sqlite",
                    help="the ruling log (SQLite, default %(default)s)")
    ap.add_argument("--src", default=f"console-{socket.gethostname()}",
                    help="the console's src in its rulings (default %(default)s)")
    ap.add_argument("--session", help="the session file (docs/session.md): the round and "
                    "pairs of each table's board, its deals file when --deals is not given; "
                    "the adjusted scores given from the console are written into it")
    ap.add_argument("--deals", help="the session's deals file (PBN, DUP, BRI, DGE): the hands "
                    "shown on the table view")
    ap.add_argument("--root", default="bridge", help="topic root (default %(default)s)")
    ap.add_argument("--client-id", default="", help="MQTT client id")
    ap.add_argument("--secure-cookie", action="store_true",
                    help="mark the session cookie Secure (behind an HTTPS proxy)")
    ap.add_argument("--tls-cert", help="serve HTTPS with this certificate (PEM; the cookie is "
                    "then Secure)")
    ap.add_argument("--tls-key", help="the certificate's private key (PEM)")
    add_trusted_proxy(ap)
    add_log_level(ap)
    return ap


async def _serve(server: object, hub: Hub, conn: Connection) -> None:
    import uvicorn
    assert isinstance(server, uvicorn.Server)

    def stop() -> None:
        server.should_exit = True
        hub.close()     # the event streams end, so the shutdown does not wait on them

    conn.stop_serving = stop    # a login the broker refuses at start stops the console

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop)
    await server.serve()


def _session_inputs(args: argparse.Namespace, warnings: list[tuple[str, tuple[object, ...]]]
                    ) -> tuple[SessionFile | None, dict[str, dict[int, int]],
                               dict[int, dict[str, list[str]]]]:
    """The session file (``--session``), the round of each table's board from it, and the
    hands of the deals file (``--deals``, else the session's); the deals file's problems
    are added to ``warnings``. SessionError (a ValueError) and DealsError when unreadable."""
    deals: dict[int, dict[str, list[str]]] = {}
    rounds: dict[str, dict[int, int]] = {}
    session = None
    deals_file = Path(args.deals) if args.deals else None
    if args.session:
        from controller.session import load_session
        from controller.web.console.app import rounds_of_session
        session = load_session(args.session)   # SessionError is a ValueError
        rounds = rounds_of_session(session.movement)
        deals_file = deals_file or session.deals
    if deals_file is not None:
        from controller.web.console.app import deals_for_console
        deals, problems = deals_for_console(deals_file)
        for problem in problems:
            warnings.append(("%s: %s", (deals_file, problem)))
    return session, rounds, deals


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["passwd"]:
        return passwd(args_list[1:])
    args = parser().parse_args(args_list)
    setup_logging(args)
    if bool(args.tls_cert) != bool(args.tls_key):
        log.error("--tls-cert and --tls-key go together")
        return 2
    # every input is checked before anything is logged about serving: a console that
    # cannot start says only why. Warnings found on the way wait for the serving line.
    warnings: list[tuple[str, tuple[object, ...]]] = []
    try:
        host, port = parse_listen(args.listen)
        broker = settings_from_args(args)
        check_bindable(host, port)
        if args.tls_cert:
            check_certificate(args.tls_cert, args.tls_key)
        trusted = parse_trusted(args.trusted_proxy)
        accounts = read_accounts(Path(args.director_password_file))
        password_hash = accounts.pop("", "")
        if password_hash:
            warnings.append(("%s holds one password shared by every director: the name "
                             "given at login is not checked; give each director their own "
                             "with bridge-table console passwd %s --name NAME",
                             (args.director_password_file, args.director_password_file)))
        session, rounds, deals = _session_inputs(args, warnings)
    except (ControllerError, ValueError, PasswordFileError, DealsError) as exc:
        log.error("%s", exc)
        return 2
    if not args.tls_cert:
        # the first line says why there is no HTTPS and how to have it
        loopback = host in ("127.0.0.1", "::1", "localhost")
        log.warning(
            "serving plain HTTP on %s: %s; give --tls-cert and --tls-key to serve HTTPS, "
            "or keep --listen on 127.0.0.1 behind an HTTPS reverse proxy and pass "
            "--secure-cookie (docs/console.md)", args.listen,
            "reachable from this machine only" if loopback else
            "passwords and session cookies cross the network in clear")
    for message, message_args in warnings:
        log.warning(message, *message_args)
    import uvicorn

    from controller.web.console.app import build_app
    from controller.web.console.state import ConsoleConfig
    app = build_app(ConsoleConfig(broker=broker, password_hash=password_hash,
                                  db=Path(args.db), src=args.src, root=args.root,
                                  client_id=args.client_id,
                                  secure_cookie=args.secure_cookie or bool(args.tls_cert),
                                  deals=deals, rounds=rounds, session=session,
                                  accounts=accounts, trusted_proxies=trusted))
    config = uvicorn_config(app, host, port, ssl_certfile=args.tls_cert,
                            ssl_keyfile=args.tls_key)
    server = uvicorn.Server(config)
    # uvicorn's own handlers are replaced by ours: Ctrl-C ends the server with no traceback
    server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]
    log.info("console on %s://%s:%d/ (broker %s)", "https" if args.tls_cert else "http",
             host, port, broker.url)
    try:
        asyncio.run(_serve(server, app.state.console.store.hub, app.state.console.conn))
    except KeyboardInterrupt:
        pass
    if app.state.console.conn.refused is not None:
        return 2    # said at ERROR by the listener: a configuration error
    log.info("stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
