"""``bridge-table results``: the session's ranking as it goes, and every record at the end.

The controller publishes each table's ``result`` (retained) and the ``feed``, ``alert``
and ``evidence`` of every board (wire contract). This command reads them from one of:

- the broker (the default): it subscribes to ``ROOT/+/result``, ``feed``, ``alert`` and
  ``evidence`` with the same broker options as every command (``--broker``,
  ``--credentials`` ...: controller/broker/settings.py), prints the ranking again after each
  new result, and ends on Ctrl-C, when every table has a result for every board the
  movement gives it (``--until-complete``), or once the retained results are in
  (``--once``: a broker keeps only each table's last result, so that is the ranking of
  the boards now on the tables, not the session's);
- the controller's journal (``--journal FILE``, once the controller is stopped: the
  journal is one process's at a time): the messages are computed again from it, exactly
  as the controller published them (``bridge-table replay``);
- a file of published messages (``--results FILE``: what ``bridge-table replay`` or this
  command's ``--out`` writes).

With ``--out DIR`` it writes, at the end, every record ``bridge-table export`` writes
(``--format``, all by default) and, from the broker, ``ID-messages.jsonl``: the messages it
received, which ``--results`` reads again. Empty or truncated input is an error (exit 2,
one line on standard error), as a bad session file is.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import io
import json
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, cast

from controller.session.export import (
    FORMATS,
    Published,
    export,
    parse_formats,
    read_published,
    scores_of,
)
from controller.session.results import BoardResult, ResultsError, SessionScores, load_jsonl
from controller.session.score import print_report, report
from controller.session.scoring import stray_results
from controller.session.sessionfile import Session, SessionError, load_session

if TYPE_CHECKING:
    import aiomqtt

    from controller.engine import Engine

__all__ = ["Collected", "main", "journal_messages"]

PROG = "bridge-table results"
KINDS = ("result", "feed", "alert", "evidence")


class Collected:
    """The controller's messages as they come, one ``{"topic", "payload"}`` line each."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.results = 0
        #: the results so far, kept as they come (the ranking is scored from these alone;
        #: the records are built from every line once, at the end)
        self.scores = SessionScores()
        self._strays: set[tuple[str, int]] = set()

    def add(self, topic: str, payload: bytes) -> bool:
        """Keep a message; True for a result a ranking should be printed again for."""
        try:
            value = json.loads(payload)
        except (ValueError, UnicodeDecodeError):
            print(f"{PROG}: {topic}: not JSON, skipped", file=sys.stderr)
            return False
        self.lines.append(json.dumps({"topic": topic, "payload": value}) + "\n")
        if topic.rsplit("/", 1)[-1] != "result" or not isinstance(value, dict):
            return False
        try:
            self.scores.add(BoardResult.from_payload(value))
        except ValueError as exc:
            print(f"{PROG}: {topic}: {exc}, skipped", file=sys.stderr)
            return False
        self.results += 1
        return True

    def published(self, errors: IO[str] | None = None) -> dict[tuple[str, int], Published]:
        return read_published(self.lines, errors, "broker")

    def report_strays(self, session: Session, scores: SessionScores) -> None:
        """Name each result the movement does not give its table, once."""
        for r in stray_results(session, scores):
            if (r.table, r.board) not in self._strays:
                self._strays.add((r.table, r.board))
                print(f"{PROG}: table {r.table} board {r.board}: the movement does not give "
                      f"this table this board; its result ({r.score_ns:+d}) is not scored",
                      file=sys.stderr)


def journal_messages(session_path: str | Path, journal: str | Path,
                     errors: IO[str] | None = None) -> list[str]:
    """What the controller published, computed again from its journal (the Engine is
    deterministic: the same inputs give the same messages), as JSON lines."""
    from controller.commandline import ControllerError
    from controller.replay.stream import replay_lines, write_messages
    from controller.service.engines import build_engine
    from controller.service.journal import Journal, JournalError

    path = Path(journal)
    if not path.is_file():
        raise ResultsError(f"{path}: no such journal")
    with open(path, "rb") as fp:
        if fp.read(16) != b"SQLite format 3\x00":   # opening it would make it one
            raise ResultsError(f"{path}: not a controller journal (not an SQLite file)")
    text = io.StringIO()
    try:
        with Journal(path) as j:
            j.export_jsonl(text, errors)
    except JournalError as exc:
        hint = "; while the controller runs, follow the session from the broker" \
            if "in use" in str(exc) else ""
        raise ResultsError(f"{exc}{hint}") from None
    except Exception as exc:       # sqlite3.DatabaseError: a file that is not a journal
        raise ResultsError(f"{path}: not a controller journal ({exc})") from None
    try:
        # the Engine the controller runs (its deals from the session); replay_lines asks it
        # only for its root and handle(), which every build of it has
        engine = cast("Engine", build_engine(session=session_path))
    except ControllerError as exc:
        raise SessionError(str(exc)) from None
    out = io.BytesIO()
    write_messages(replay_lines(engine, text.getvalue().splitlines(), errors=errors,
                                source=str(path)), out, set(KINDS))
    return out.getvalue().decode("utf-8").splitlines(keepends=True)


def _show(session: Session, scores: SessionScores, *, as_json: bool,
          header: str = "") -> None:
    data = report(session, scores)
    if as_json:
        print(json.dumps(data, indent=1))
        return
    if header:
        print(header)
    print_report({**data, "boards": []})        # the ranking (``score`` prints the boards)
    sys.stdout.flush()


def _complete(session: Session, scores: SessionScores) -> bool:
    """Every table has a result, or the director's score, for every board it plays."""
    adjusted = {(a.table, a.board) for a in session.adjustments}
    return all(scores.get(t, b) is not None or (t, b) in adjusted
               for t, boards in session.movement.schedule().items() for b in boards)


def _write(session: Session, published: dict[tuple[str, int], Published], out: Path,
           formats: Sequence[str], lines: Sequence[str] | None) -> None:
    for path in export(session, published, out, formats, sys.stderr):
        print(path)
    if lines is not None:
        path = out / f"{session.id}-messages.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        print(path)


async def _listen(args: argparse.Namespace, session: Session, collected: Collected,
                  stop: asyncio.Event) -> None:
    """Collect the controller's messages until a stop condition; a broker that goes away
    during the session is reconnected to (what it retained comes again, kept once)."""
    import aiomqtt

    from controller import wire
    from controller.broker.settings import settings_from_args

    broker = settings_from_args(args)
    connected = False
    seen: set[tuple[str, bytes]] = set()
    _stop_on_sigterm(stop)
    while not stop.is_set():
        try:
            async with aiomqtt.Client(**broker.client_args()) as client:
                connected = True
                await client.subscribe([(wire.topic("+", kind, root=args.root), 1)
                                        for kind in KINDS])
                if await _serve(client, args, session, collected, seen, stop):
                    return
        except aiomqtt.MqttError as exc:
            if not connected:
                raise ResultsError(f"{broker.url}: {exc}") from None
            print(f"{PROG}: {broker.url}: {exc}; connecting again", file=sys.stderr)
            await asyncio.sleep(1.0)


async def _listen_until_stopped(args: argparse.Namespace, session: Session,
                                collected: Collected) -> None:
    stop = asyncio.Event()
    await _listen(args, session, collected, stop)
    if stop.is_set():
        print(f"{PROG}: stopped: the records of the results received", file=sys.stderr)


def _stop_on_sigterm(stop: asyncio.Event) -> None:
    """SIGTERM (``systemctl stop``, ``kill``, a shell's job control) ends the listening as
    Ctrl-C does, so the records of the results received are still written: without it the
    process died at once and ``--out`` wrote nothing."""
    with contextlib.suppress(NotImplementedError, RuntimeError):   # no signals here
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)


async def _serve(client: aiomqtt.Client, args: argparse.Namespace, session: Session,
                 collected: Collected, seen: set[tuple[str, bytes]],
                 stop: asyncio.Event | None = None) -> bool:
    """Messages until a stop condition (True: ``--once`` settled, ``--until-complete``,
    or ``stop`` set) or the connection ends (an MqttError)."""
    quiet_since = time.monotonic()
    messages = client.messages.__aiter__()
    # one read kept across the idle checks: a read cancelled by a timeout (wait_for) could
    # drop the message it had just taken off aiomqtt's queue (a feed item lost in 1 of ~58)
    reading: asyncio.Future[aiomqtt.Message] | None = None
    try:
        while True:
            if reading is None:
                reading = asyncio.ensure_future(messages.__anext__())
            done, _ = await asyncio.wait({reading}, timeout=0.2)
            if stop is not None and stop.is_set():
                return True
            if not done:
                if args.once and time.monotonic() - quiet_since >= args.settle:
                    return True
                continue
            msg, reading = reading.result(), None
            if _take(msg, args, session, collected, seen):
                return True
            quiet_since = time.monotonic()
    finally:
        if reading is not None:
            reading.cancel()


def _take(msg: aiomqtt.Message, args: argparse.Namespace, session: Session,
          collected: Collected, seen: set[tuple[str, bytes]]) -> bool:
    """One message kept (and the ranking shown again after a result); True to stop."""
    payload = msg.payload if isinstance(msg.payload, bytes) else str(msg.payload).encode()
    topic = str(msg.topic)
    if msg.retain and (topic, payload) in seen:
        return False                    # a retained message again after a reconnection
    seen.add((topic, payload))
    if not collected.add(topic, payload):
        return False
    scores = collected.scores
    collected.report_strays(session, scores)
    if not args.once and not args.json:
        r = json.loads(payload)
        _show(session, scores, as_json=False,
              header=f"\n-- after table {r.get('table')} board {r.get('board')} "
                     f"({collected.results} results) --")
    return bool(args.until_complete and _complete(session, scores))


def main(argv: Sequence[str]) -> int:
    from controller.broker.settings import BrokerSettingsError, add_broker_arguments
    from controller.commandline import add_log_level, setup_logging

    ap = argparse.ArgumentParser(prog=PROG, description="The session's ranking as it goes, "
                                 "and every record at the end.",
                                 epilog="docs/session.md: 'Results live and at the end'")
    ap.add_argument("--session", required=True, help="the session file (docs/session.md)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--journal", help="the controller's journal (the controller stopped)")
    src.add_argument("--results", help="a file of published messages (JSONL)")
    add_broker_arguments(ap)
    ap.add_argument("--root", default="bridge", help="topic root (default: bridge)")
    ap.add_argument("--once", action="store_true",
                    help="broker: the ranking from the retained results, then stop")
    ap.add_argument("--settle", type=float, default=1.0, metavar="S",
                    help="--once: stop after S seconds without a message (default 1)")
    ap.add_argument("--until-complete", action="store_true",
                    help="broker: stop when every table has every board's result")
    ap.add_argument("--out", help="write every record into this directory at the end")
    ap.add_argument("--format", default=",".join(FORMATS),
                    help=f"records to write (default: {','.join(FORMATS)})")
    ap.add_argument("--json", action="store_true", help="the final scores as JSON")
    add_log_level(ap, default="WARNING")
    args = ap.parse_args(list(argv))
    setup_logging(args)
    try:
        formats = parse_formats(args.format)
        session = load_session(args.session)
        lines: list[str] | None = None
        if args.journal:
            published = read_published(journal_messages(args.session, args.journal,
                                                        sys.stderr), sys.stderr, args.journal)
        elif args.results:
            published = load_jsonl(args.results, read_published, sys.stderr)
        else:
            collected = Collected()
            try:
                asyncio.run(_listen_until_stopped(args, session, collected))
            except KeyboardInterrupt:
                print(f"{PROG}: interrupted: the records of the results received",
                      file=sys.stderr)
            lines = collected.lines
            published = collected.published(sys.stderr)
        source = args.journal or args.results or "the broker"
        if not any(item.result is not None for item in published.values()):
            if not args.journal and not args.results:
                raise ResultsError(f"{args.broker or 'the broker'}: no result received "
                                   "(no table had finished a board, or the controller "
                                   f"publishes under another --root than {args.root})")
            raise ResultsError(f"{source}: no result in it (an empty or truncated input, or "
                               f"not the controller's messages)")
        if lines is None:
            Collected().report_strays(session, scores_of(published))
        _show(session, scores_of(published), as_json=args.json,
              header="" if args.json else f"Results of {session.event} ({source})")
        if args.out:
            _write(session, published, Path(args.out), formats, lines)
    except (ValueError, SessionError, ResultsError, BrokerSettingsError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {getattr(exc, 'filename', None) or ''} {exc.strerror or exc}".strip(),
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    return 0
