"""The session's ranking as it goes, and every record at the end (``bridge-table results``:
``cli_results``).

The controller publishes each table's ``result`` (retained) and the ``feed``, ``alert``
and ``evidence`` of every board (wire contract). The ranking is read from one of:

- the broker (``follow_broker``): it subscribes to ``ROOT/+/result``, ``feed``, ``alert``
  and ``evidence``, prints the ranking again after each new result, and ends on Ctrl-C or
  SIGTERM, when every table has a result for every board the movement gives it
  (``until_complete``), or once the retained results are in (``once``: a broker keeps only
  each table's last result, so that is the ranking of the boards now on the tables, not the
  session's);
- the controller's journal (``published_from_journal``, once the controller is stopped: the
  journal is one process's at a time): the messages are computed again from it, exactly
  as the controller published them (``bridge-table replay``);
- a file of published messages (what ``bridge-table replay`` or ``write_records`` writes).

At the end, ``write_records`` writes every record ``bridge-table export`` writes and, from
the broker, ``ID-messages.jsonl``: the messages received, which a file source reads again.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import logging
import signal
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING, Protocol, cast

from controller.broker.aioloop import quiet_closed_sockets
from controller.broker.login import LoginWatch
from controller.session.export import Published, export, read_published, scores_of
from controller.session.report import print_report, report
from controller.session.scoring import stray_results
from controller.session.sessionfile import Session, SessionError
from controller.session.table_results import BoardResult, ResultsError, SessionScores

if TYPE_CHECKING:
    import aiomqtt

    from controller.broker.settings import BrokerSettings
    from controller.engine import Engine

__all__ = ["Collected", "ListenOptions", "follow_broker", "journal_messages",
           "published_from_journal", "require_a_result", "final_ranking", "show_ranking",
           "write_records"]

log = logging.getLogger("bridge_table.results")
PROG = "bridge-table results"
KINDS = ("result", "feed", "alert", "evidence")



class ListenOptions(Protocol):
    """How the ranking follows the broker (the command line's ``--root``, ``--once``,
    ``--settle``, ``--until-complete``, ``--json``)."""

    root: str
    once: bool
    settle: float
    until_complete: bool
    json: bool


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


def show_ranking(session: Session, scores: SessionScores, *, as_json: bool,
                 header: str = "") -> None:
    """The ranking (``--json``: the whole report) on standard output."""
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


def write_records(session: Session, published: dict[tuple[str, int], Published], out: Path,
                  formats: Sequence[str], lines: Sequence[str] | None) -> None:
    """Every record ``bridge-table export`` writes, and the messages received (``lines``,
    from the broker) as ``ID-messages.jsonl``."""
    for path in export(session, published, out, formats, sys.stderr):
        print(path)
    if lines is not None:
        path = out / f"{session.id}-messages.jsonl"
        path.write_text("".join(lines), encoding="utf-8")
        print(path)


async def _listen(broker: BrokerSettings, options: ListenOptions, session: Session,
                  collected: Collected, stop: asyncio.Event) -> None:
    """Collect the controller's messages until a stop condition; a broker that goes away
    during the session is reconnected to (what it retained comes again, kept once)."""
    import aiomqtt

    from controller import wire

    connected = False
    seen: set[tuple[str, bytes]] = set()
    login = LoginWatch(log, broker.url, broker.username, who=PROG)
    _stop_on_sigterm(stop)
    while not stop.is_set():
        delay = 1.0
        try:
            async with aiomqtt.Client(**broker.client_args()) as client:
                connected = True
                login.up()
                await client.subscribe([(wire.topic("+", kind, root=options.root), 1)
                                        for kind in KINDS])
                if await _serve(client, options, session, collected, seen, stop):
                    return
        except aiomqtt.MqttError as exc:
            if login.lost(exc):
                delay = 10.0
            login.failed(exc)   # refused at start: LoginRefused, exit 2
            if not connected:
                raise ResultsError(f"{broker.url}: {exc}") from None
            print(f"{PROG}: {broker.url}: {exc}; connecting again", file=sys.stderr)
            await asyncio.sleep(delay)


async def _listen_until_stopped(broker: BrokerSettings, options: ListenOptions,
                                session: Session, collected: Collected) -> None:
    stop = asyncio.Event()
    await _listen(broker, options, session, collected, stop)
    if stop.is_set():
        print(f"{PROG}: stopped: the records of the results received", file=sys.stderr)


def _stop_on_sigterm(stop: asyncio.Event) -> None:
    """SIGTERM (``systemctl stop``, ``kill``, a shell's job control) ends the listening as
    Ctrl-C does, so the records of the results received are still written: without it the
    process died at once and ``--out`` wrote nothing."""
    with contextlib.suppress(NotImplementedError, RuntimeError):   # no signals here
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    quiet_closed_sockets(asyncio.get_running_loop())   # a broker that went away: no traceback


async def _serve(client: aiomqtt.Client, args: ListenOptions, session: Session,
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


def _take(msg: aiomqtt.Message, args: ListenOptions, session: Session,
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
        show_ranking(session, scores, as_json=False,
              header=f"\n-- after table {r.get('table')} board {r.get('board')} "
                     f"({collected.results} results) --")
    return bool(args.until_complete and _complete(session, scores))



def follow_broker(broker: BrokerSettings, options: ListenOptions,
                  session: Session) -> Collected:
    """The controller's messages from the broker until a stop condition, Ctrl-C or
    SIGTERM (then what was received so far)."""
    collected = Collected()
    try:
        asyncio.run(_listen_until_stopped(broker, options, session, collected))
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted: the records of the results received", file=sys.stderr)
    return collected


def published_from_journal(session_path: str | Path, journal: str | Path,
                           errors: IO[str] | None = None) -> dict[tuple[str, int], Published]:
    """What the controller published, computed again from its journal, by table and board."""
    return read_published(journal_messages(session_path, journal, errors), errors,
                          str(journal))


def require_a_result(published: Mapping[tuple[str, int], Published], source: str, *,
                     broker: str | None = None, root: str = "bridge") -> None:
    """ResultsError when ``published`` holds no result; ``broker``: they came from this
    broker (its URL, or "the broker"), under ``root``."""
    if any(item.result is not None for item in published.values()):
        return
    if broker is not None:
        raise ResultsError(f"{broker}: no result received (no table had finished a board, "
                           f"or the controller publishes under another --root than {root})")
    raise ResultsError(f"{source}: no result in it (an empty or truncated input, or not the "
                       f"controller's messages)")


def final_ranking(session: Session, published: Mapping[tuple[str, int], Published], *,
                  source: str, as_json: bool, strays_said: bool = False) -> None:
    """The ranking at the end (``strays_said``: the results the movement does not give
    their table were named as they came)."""
    scores = scores_of(published)
    if not strays_said:
        Collected().report_strays(session, scores)
    show_ranking(session, scores, as_json=as_json,
                 header="" if as_json else f"Results of {session.event} ({source})")
