"""A table whose bridge is killed and started again mid-board, through the real serial chain:
``bridge-table sim play`` (the simulated readers on pseudo-terminals), the real ``bridge-table
bridge`` process with its spool, a private mosquitto and the real controller process
(``python -m controller.service.cli_controller`` with its journal).

The bridge is stopped (SIGTERM or SIGKILL) at chosen or seeded random points of the auction and
the play, and started again ``down`` seconds later with the same config and spool. When the
file is played and the controller has acknowledged everything, the journal is re-fed to a
fresh Engine and compared with a clean replay of the file:

- the events applied, each as what happened at the table (zone, seat, action, card, call or
  board), must be the file's, each once and in the file's order (nothing lost, nothing
  applied twice: what the table did while the bridge was down comes from the readers'
  replay of their lines, merged by time across readers);
- the results and the alerts must be the clean replay's (no false alert).

``python tests/bridgerestart.py run [--seed 1] [--kills 4] [--rate 8] [--deals]`` prints the
figures; ``python tests/bridgerestart.py run --at 17:term`` kills at 17 s (as issue 24 tried
it). The table reads one card on an antenna at a time (docs/sensing.md): the events are
``controller.formats.events.record_events(..., sensing="spot")`` of three seeded random
boards, each hand passed card by card across its play spot, or (``--deals``) nothing read
before the auction and the controller started with the boards' deals file.
``tests/test_bridge_restart.py`` runs it under pytest.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from firmware_bridge.examples import EXAMPLES

if TYPE_CHECKING:
    from controller.laws.record import BoardRecord

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

SIM_CONFIG = EXAMPLES / "sim.toml"
SRC = "table-1-pi"
#: the semantic fields of an event: what happened at the table, whoever numbered it
WHAT = ("zone", "seat", "action", "card", "call", "board")
#: the readers' clock (``--hardware-time``) for the first event, and between two events
TS_START = 1_764_400_000.0
TS_STEP = 0.25


#: the boards' seed: three random boards (controller.boards.generate), each played to its end
BOARDS_SEED = 24


def board_records(boards: int = 3) -> list[BoardRecord]:
    """``boards`` seeded random boards numbered 1, 2, 3, ... (deal, auction and play)."""
    from controller.boards.generate import random_board

    rng = random.Random(BOARDS_SEED)
    return [random_board(rng, number).record for number in range(1, boards + 1)]


def board_file_events(boards: int = 3, *, deals: bool = False) -> list[dict[str, Any]]:
    """The boards as a ``sim play`` file holds them, on the product's sensing model
    (docs/sensing.md: one card on a play spot, one call on a call spot): each board's cards
    from the sim registry's deck of that number. ``deals``: the controller has the deals
    file (``deals_file``), nothing is read before the auction; else each player first passes
    his 13 cards one by one across his play spot."""
    from controller.formats.events import record_events

    events: list[dict[str, Any]] = []
    for record in board_records(boards):
        events += record_events(record, sensing="spot", scans=not deals,
                                deck=str(record.board), src=SRC, seq_start=len(events) + 1,
                                ts_start=TS_START + len(events) * TS_STEP, ts_step=TS_STEP)
    return events


def deals_file(path: Path, boards: int = 3) -> Path:
    """The boards' deals as a dealing machine's file (PBN: the deal alone, no auction or
    play), for ``controller --deals``."""
    from dataclasses import replace

    from controller.formats.pbn import write_pbn

    with path.open("w", encoding="utf-8") as fp:
        write_pbn([replace(r, auction=(), contract=None, declarer=None, tricks=(),
                           tricks_played=None, tricks_result=None)
                   for r in board_records(boards)], fp)
    return path


def what(event: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(event.get(key) for key in WHAT)


def sim_config(workdir: Path, ack_timeout: float | None = None) -> Path:
    """The shipped sim.toml with its registry by absolute path and the spool in ``workdir``
    (waiting ``ack_timeout`` seconds for an acknowledgement before sending again, if given)."""
    text = SIM_CONFIG.read_text(encoding="utf-8")
    text = text.replace('files = ["tags-sim.toml"]',
                        f'files = ["{SIM_CONFIG.parent / "tags-sim.toml"}"]')
    text = text.replace('path = "var/spool-table-1.sqlite"',
                        f'path = "{workdir / "spool.sqlite"}"'
                        + (f"\nack_timeout = {ack_timeout}" if ack_timeout is not None else ""))
    path = workdir / "sim.toml"
    path.write_text(text, encoding="utf-8")
    return path


@dataclass(frozen=True)
class Kill:
    at: float    # seconds after the play started
    signal: int  # SIGTERM or SIGKILL


def phases(events: Sequence[dict[str, Any]]) -> list[tuple[str, int, int]]:
    """(name, first index, last index) of each board's auction and play in ``events``."""
    out: list[tuple[str, int, int]] = []
    board = 0
    bids: list[int] = []
    plays: list[int] = []

    def close() -> None:
        if bids:
            out.append((f"board {board} auction", bids[0], bids[-1]))
        if plays:
            out.append((f"board {board} play", plays[0], plays[-1]))

    for i, e in enumerate(events):
        if e["zone"] == "board":
            close()
            board, bids, plays = int(e["board"]), [], []
        elif e["zone"] == "bid" and e["action"] == "present":
            bids.append(i)
        elif e["zone"] == "spot" and bids:   # a card played or quitted (not a hand read)
            plays.append(i)
    close()
    return out


def phase_of(events: Sequence[dict[str, Any]], index: int) -> str:
    """Where event ``index`` (the next one the table plays) falls."""
    for name, first, last in phases(events):
        if first <= index <= last + 1:
            return name
    return "between"


def seeded_kills(seed: int, count: int, events: Sequence[dict[str, Any]], rate: float, *,
                 gap: float = 6.0, after: float = -6.0,
                 first: int | None = None) -> list[Kill]:
    """``count`` kills at seeded random points of the auctions and the plays (alternately,
    each in the next phase of its kind that is far enough), SIGTERM and SIGKILL alternating
    from a seeded first (or ``first``); at least ``gap`` seconds apart (the bridge is down 2 s
    and takes ~1 s to start), and from ``after + gap`` on."""
    rng = random.Random(seed)
    picked = rng.choice((signal.SIGTERM, signal.SIGKILL))
    first = picked if first is None else first
    other = signal.SIGKILL if first == signal.SIGTERM else signal.SIGTERM
    kinds = {"auction": [p for p in phases(events) if p[0].endswith("auction")],
             "play": [p for p in phases(events) if p[0].endswith("play")]}
    kills: list[Kill] = []
    for n in range(count):
        kind = "auction" if n % 2 == 0 else "play"
        # a phase that still starts late enough
        choices = [p for p in kinds[kind] if p[2] / rate > after + gap]
        if not choices:
            break
        _, start, end = choices[0]  # the next one: the point in it is random
        at = max(after + gap, start / rate) + rng.uniform(0.0, 1.0) * \
            max(0.0, end / rate - max(after + gap, start / rate))
        kills.append(Kill(round(at, 2), first if n % 2 == 0 else other))
        after = at
    return kills


@dataclass
class Figures:
    events: int = 0
    applied: int = 0
    lost: int = 0
    doubled: int = 0
    out_of_order: int = 0
    duplicates_dropped: int = 0
    resends: int = 0
    #: events the controller dropped over the table's intake bound (the bridge resent them)
    intake_dropped: int = 0
    results: int = 0
    clean_results: int = 0
    results_equal: bool = False
    alerts_equal: bool = False
    #: alerts of the clean replay (the boards are played without an irregularity: none)
    clean_alerts: int = 0
    false_alerts: list[str] = field(default_factory=list)
    missing_alerts: list[str] = field(default_factory=list)
    kills: list[str] = field(default_factory=list)
    #: the first places where the events applied differ from the file's: (index, applied,
    #: the file's), to see what went out of order
    differences: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return (self.lost, self.doubled, self.out_of_order) == (0, 0, 0) \
            and self.applied == self.events and self.results_equal and self.alerts_equal


class RestartSession:
    def __init__(self, workdir: Path, *, kills: Sequence[Kill], boards: int = 3,
                 rate: float = 8.0, down: float = 2.0, hardware_time: bool = True,
                 deals: bool = False, identities: bool = False,
                 ack_timeout: float | None = None, controller_args: Sequence[str] = ()) -> None:
        from controller.broker.mosquitto import Mosquitto

        self.workdir = workdir
        self.kills = list(kills)
        self.rate = rate
        self.down = down
        self.hardware_time = hardware_time
        self.events = board_file_events(boards, deals=deals)
        #: the controller's deals file (nothing read before the auction), or None: the hands
        #: are read card by card on the play spots
        self.deals = deals_file(workdir / "deals.pbn", boards) if deals else None
        self.controller_args = list(controller_args)
        if identities:  # as a venue starts it: only table 1's bridge may speak for table 1
            ids = workdir / "identities.toml"
            ids.write_text(f'root = "bridge"\nrulings = []\n[events]\n"1" = ["{SRC}"]\n',
                           encoding="utf-8")
            self.controller_args += ["--identities", str(ids)]
        self.broker = Mosquitto(workdir / "broker", persistence=False)
        self.journal = workdir / "journal.sqlite"
        self.config = sim_config(workdir, ack_timeout)
        self.spool = workdir / "spool.sqlite"
        self.file = workdir / "events.jsonl"
        self.file.write_text("".join(json.dumps(e) + "\n" for e in self.events))
        self.controller: subprocess.Popen[bytes] | None = None
        self.bridge: subprocess.Popen[bytes] | None = None
        self.sim: subprocess.Popen[bytes] | None = None
        self.done_kills: list[str] = []

    def _env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
        env["BRIDGE_TABLE_SIM_DIR"] = str(self.workdir / "sim")
        env["PYTHONUNBUFFERED"] = "1"
        # the controller as it starts by default: no identities unless the session says so
        env.pop("BRIDGE_TABLE_IDENTITIES", None)
        return env

    def _spawn(self, args: list[str], log: str, *, stdout: int | None = None
               ) -> subprocess.Popen[bytes]:
        out = open(self.workdir / log, "ab")  # noqa: SIM115 - the child's
        try:
            return subprocess.Popen([sys.executable, *args], stdout=stdout or out, stderr=out,
                                    stdin=subprocess.DEVNULL, env=self._env(), cwd=ROOT)
        finally:
            out.close()

    def start_bridge(self) -> None:
        self.bridge = self._spawn(["-m", "controller.cli", "bridge", "--config",
                                   str(self.config), "--broker", self.broker.url,
                                   "--log-level", "INFO"], "bridge.log")

    def _stop(self, proc: subprocess.Popen[bytes] | None, sig: int) -> None:
        if proc is not None and proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)

    def _next_seq(self) -> int | None:
        try:
            db = sqlite3.connect(f"file:{self.spool}?mode=ro", uri=True, timeout=1.0)
            try:
                row = db.execute("SELECT value FROM meta WHERE key = 'next_seq'").fetchone()
                return None if row is None else int(row[0])
            finally:
                db.close()
        except sqlite3.Error:
            return None

    def _spool_depth(self) -> int | None:
        try:
            db = sqlite3.connect(f"file:{self.spool}?mode=ro", uri=True, timeout=1.0)
            try:
                return int(db.execute("SELECT count(*) FROM outbox").fetchone()[0])
            finally:
                db.close()
        except sqlite3.Error:
            return None

    def run(self, timeout: float = 400.0) -> Figures:
        started = time.monotonic()
        self.broker.start()
        try:
            self.controller = self._spawn(
                ["-m", "controller.service.cli_controller", "--broker", self.broker.url,
                 "--journal", str(self.journal), "--status-interval", "1", "--log-level", "INFO",
                 *(["--deals", str(self.deals)] if self.deals else []),
                 *self.controller_args],
                "controller.log")
            self.sim = self._spawn(
                ["-m", "controller.cli", "sim", "play", str(self.file), "--config",
                 str(self.config), "--rate", f"{self.rate:g}", "--wait", "60",
                 *(["--hardware-time"] if self.hardware_time else [])],
                "sim.log", stdout=subprocess.PIPE)
            assert self.sim.stdout is not None
            for _ in range(6):  # the readers' paths: announced, a bridge may open them
                line = self.sim.stdout.readline().decode()
                if not line.startswith("reader "):
                    raise RuntimeError(f"sim play: {line!r}; see {self.workdir}/sim.log")
            self.start_bridge()
            played = self._wait_line(self.sim.stdout, timeout=120, kills=True)
            if not played.startswith("played "):
                raise RuntimeError(f"sim play: {played!r}")
            # the last lines reach the bridge, the controller acknowledges them all
            deadline = time.monotonic() + 60
            calm = 0
            while time.monotonic() < deadline and calm < 10:
                calm = calm + 1 if self._spool_depth() == 0 else 0
                time.sleep(0.1)
            if time.monotonic() - started > timeout:
                raise TimeoutError("the session took too long")
        finally:
            self._stop(self.bridge, signal.SIGTERM)
            self._stop(self.sim, signal.SIGINT)
            self._stop(self.controller, signal.SIGTERM)
            self.broker.stop()
        figures = self.check()
        figures.seconds = round(time.monotonic() - started, 1)
        return figures

    def _wait_line(self, stream: IO[bytes], *, timeout: float, kills: bool) -> str:
        """The next line of ``sim play`` (its summary once the file is played), killing and
        restarting the bridge at the planned times meanwhile."""
        import selectors

        selector = selectors.DefaultSelector()
        selector.register(stream, selectors.EVENT_READ)
        plan = sorted(self.kills, key=lambda k: k.at) if kills else []
        # the kills' times count from the first event the bridge spooled
        t0: float | None = None
        started = time.monotonic()
        try:
            while True:
                if t0 is None and (self._next_seq() or 1) > 1:
                    t0 = time.monotonic()
                now = time.monotonic() - (t0 if t0 is not None else started)
                if plan and t0 is not None and now >= plan[0].at:
                    kill = plan.pop(0)
                    # the next event the table plays (at the sim's pace from the first)
                    playing = int(now * self.rate) + 1
                    self._stop(self.bridge, kill.signal)
                    name = "SIGTERM" if kill.signal == signal.SIGTERM else "SIGKILL"
                    where = phase_of(self.events, playing)
                    self.done_kills.append(f"{name} at {now:.1f} s ({where}, event {playing})")
                    time.sleep(self.down)
                    self.start_bridge()
                    continue
                wait = min(0.2, plan[0].at - now) if plan else 0.5
                if selector.select(max(0.01, wait)):
                    return stream.readline().decode()
                if now > timeout:
                    raise TimeoutError("sim play did not finish")
        finally:
            selector.close()

    # -- the comparison ------------------------------------------------------------------

    def check(self) -> Figures:
        """Re-feed the journal to a fresh Engine; compare with a clean replay of the file."""
        from controller.engine import Engine, Outgoing
        from controller.service.engines import load_deals

        figures = Figures(events=len(self.events), kills=list(self.done_kills))

        def outcome(engine: Engine, inputs: list[tuple[str, bytes]]
                    ) -> tuple[list[str], list[Any], list[tuple[Any, ...]]]:
            alerts: list[str] = []
            results: list[Any] = []
            applied: list[tuple[Any, ...]] = []
            topic_event = "bridge/1/event"
            for topic, payload in inputs:
                before = engine.stats["events"]
                out: list[Outgoing] = engine.handle(topic, payload)
                if topic == topic_event and engine.stats["events"] > before:
                    applied.append(what(json.loads(payload)))
                alerts += [_alert_text(o.payload) for o in out if o.topic.endswith("/alert")]
                results += [o.payload for o in out if o.topic.endswith("/result")]
            return alerts, results, applied

        clean_inputs = [("bridge/1/event", json.dumps(
            {"v": 1, "src": SRC, "seq": n, **{k: v for k, v in e.items()
                                              if k not in ("v", "src", "seq")}}).encode())
            for n, e in enumerate(self.events, 1)]
        boards = load_deals(self.deals) if self.deals else None
        clean_alerts, clean_results, _ = outcome(Engine(deals=boards), clean_inputs)
        figures.clean_alerts = len(clean_alerts)
        db = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        rows = db.execute("SELECT topic, payload FROM incoming ORDER BY n").fetchall()
        db.close()
        rebuilt = Engine(deals=boards)
        alerts, results, applied = outcome(rebuilt, [(str(t), bytes(p)) for t, p in rows])
        figures.applied = len(applied)
        figures.duplicates_dropped = rebuilt.stats["duplicates"]
        wanted = [what(e) for e in self.events]
        figures.lost = _count_missing(wanted, applied)
        figures.doubled = _count_missing(applied, wanted)
        figures.out_of_order = sum(1 for a, b in zip(applied, wanted, strict=False) if a != b)
        figures.differences = [f"{i}: applied {a}, the file's {b}" for i, (a, b)
                               in enumerate(zip(applied, wanted, strict=False)) if a != b][:6]
        figures.results = len(results)
        figures.clean_results = len(clean_results)
        figures.results_equal = [_result_key(r) for r in results] == \
            [_result_key(r) for r in clean_results]
        figures.false_alerts = _count_missing_list(alerts, clean_alerts)
        figures.missing_alerts = _count_missing_list(clean_alerts, alerts)
        figures.alerts_equal = not figures.false_alerts and not figures.missing_alerts
        figures.resends = _resends(self.workdir / "bridge.log")
        figures.intake_dropped = _intake_dropped(self.workdir / "controller.log")
        return figures


def _alert_text(payload: dict[str, Any]) -> str:
    keys = ("kind", "code", "board", "seat", "offender", "status")
    return " ".join(f"{k}={payload[k]}" for k in keys if k in payload)


def _result_key(result: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in result.items() if k not in ("ts",)}, sort_keys=True)


def _count_missing(wanted: list[tuple[Any, ...]], got: list[tuple[Any, ...]]) -> int:
    from collections import Counter

    return sum((Counter(wanted) - Counter(got)).values())


def _count_missing_list(got: list[str], wanted: list[str]) -> list[str]:
    from collections import Counter

    return sorted((Counter(got) - Counter(wanted)).elements())


def _resends(log: Path) -> int:
    if not log.exists():
        return 0
    return log.read_text(errors="replace").count("sending again what the controller")


def _intake_dropped(log: Path) -> int:
    import re

    if not log.exists():
        return 0
    return sum(int(n) for n in re.findall(r"(\d+) event\(s\) over its intake bound dropped",
                                          log.read_text(errors="replace")))


def print_figures(f: Figures, out: Any = None) -> None:
    out = sys.stdout if out is None else out
    print(f"kills: {', '.join(f.kills) or 'none'}; {f.seconds} s", file=out)
    print(f"events {f.events}, applied {f.applied}, lost {f.lost}, applied twice {f.doubled}, "
          f"in another order {f.out_of_order}, duplicates dropped {f.duplicates_dropped}, "
          f"bridge resends {f.resends}, dropped over the intake bound {f.intake_dropped}",
          file=out)
    print(f"results {f.results} (a clean replay: {f.clean_results}), equal to a clean replay: "
          f"{f.results_equal}; alerts equal: {f.alerts_equal} (false "
          f"{len(f.false_alerts)}: {f.false_alerts[:8]}, missing "
          f"{len(f.missing_alerts)}: {f.missing_alerts[:8]}; a clean replay's {f.clean_alerts})",
          file=out)
    if f.differences:
        print("out of order: " + "; ".join(f.differences), file=out)


def _parse_at(text: str) -> Kill:
    at, _, sig = text.partition(":")
    return Kill(float(at), signal.SIGKILL if sig.lower() == "kill" else signal.SIGTERM)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="play the boards, kill the bridge, print the figures")
    r.add_argument("--boards", type=int, default=3)
    r.add_argument("--rate", type=float, default=8.0, help="events a second")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--kills", type=int, default=None,
                   help="seeded random kills (after the --at ones; default 4 without --at)")
    r.add_argument("--at", action="append", type=_parse_at, default=[],
                   help="SECONDS:term|kill, a kill at that time (repeatable)")
    r.add_argument("--deals", action="store_true",
                   help="the controller has the deals file: no hand read before the auction")
    r.add_argument("--controller-arg", action="append", default=[], metavar="ARG",
                   help="an argument more for the controller (repeatable), e.g. "
                   "--controller-arg=--intake-burst=20")
    r.add_argument("--identities", action="store_true",
                   help="the controller checks who speaks (--identities: table 1's bridge)")
    r.add_argument("--ack-timeout", type=float, default=None,
                   help="the bridge's [spool] ack_timeout (seconds before sending again)")
    r.add_argument("--down", type=float, default=2.0, help="seconds the bridge stays down")
    r.add_argument("--workdir", help="keep logs, journal and spool here")
    r.add_argument("--no-hardware-time", action="store_true",
                   help="the readers do not stamp their lines with the file's times")
    args = ap.parse_args(argv)
    with contextlib.ExitStack() as stack:
        workdir = Path(args.workdir) if args.workdir else \
            Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bridge-restart-")))
        workdir.mkdir(parents=True, exist_ok=True)
        count = args.kills if args.kills is not None else (0 if args.at else 4)
        last = max((k.at for k in args.at), default=-6.0)
        kills = args.at + seeded_kills(args.seed, count,
                                       board_file_events(args.boards, deals=args.deals),
                                       args.rate, after=last)
        figures = RestartSession(workdir, kills=kills, boards=args.boards, rate=args.rate,
                                 down=args.down, hardware_time=not args.no_hardware_time,
                                 deals=args.deals, identities=args.identities,
                                 ack_timeout=args.ack_timeout,
                                 controller_args=args.controller_arg).run()
        print_figures(figures)
    return 0 if figures.ok else 1


if __name__ == "__main__":
    sys.exit(main())
