"""Docs that cannot drift: every shell block in README.md and docs/ that runs a
``bridge-table`` command is run here, for real, or is marked as not runnable with its reason.

What counts as such a block: a fenced block labelled ``sh``, ``bash``, ``shell``,
``console`` or unlabelled, one of whose commands (backslash continuations joined, a leading
``$ `` prompt and ``sudo`` dropped, ``#`` comments removed; in a ``console`` block only the
lines after a ``$ `` prompt, the rest being output) starts with ``bridge-table``,
``.venv/bin/bridge-table`` or ``/opt/bridge-table/.venv/bin/bridge-table``. Output quoted in a
doc goes in a ``text`` block; a command's output is not a command.

How a block is run (:func:`run_block`), in a fresh directory per block (:class:`Workspace`)
holding what the docs name: the shipped examples
(``hw_configs/``) and ``tests/data/`` copied from the clone (the
configurations' broker pointed at the private one), ``RESULTS.jsonl`` (results of the
example Mitchell session made by ``bridge-table replay`` from scripted boards),
``session.toml`` and ``session.pbn`` (that session), ``room.toml`` (the same), ``var/``.
Every ``bridge-table`` command is run as ``python -m controller.cli ARGS`` (the same
``main`` as the installed script) with ``BRIDGE_TABLE_BROKER`` set to one private mosquitto
shared by the module, ``mqtt://127.0.0.1:1883`` in an argument replaced by its URL,
``--listen HOST:PORT`` by a free loopback port and ``/tmp/...`` by a directory of the
workspace. Commands run in the block's order:

- a batch command must end with exit status 0 (or the one :data:`COMMANDS` gives) and no
  traceback;
- a long-running command (the ``long`` ones in :data:`COMMANDS`) is started in the
  background; when the block's commands have all been started, each must still be running
  (or have exited 0) after :data:`SETTLE` seconds, with no traceback and no ERROR line on
  standard error (one given ``--listen`` must accept a connection there); then each is
  stopped with SIGINT and must end with 0 or 130 (Ctrl-C), no traceback. A command that
  needs the simulated table's readers (``needs_sim``) gets a ``bridge-table sim run``
  started for it unless the block starts one itself.
- ``mosquitto ...`` in a block is the private broker the harness already runs (a
  ``mosquitto -c FILE`` of a locked-down configuration is not: a block that needs one needs
  a line in :meth:`Workspace.create` or a ``prepare`` starting it, e.g. with
  ``tests/broker.py``'s ``venue_broker``, or the marker);
- one command a line: a ``> FILE`` at its end is written, a trailing ``&`` is dropped, a pipe
  or ``&&`` fails the block.

A block that cannot run here (real hardware, a venue's host and TLS files, systemd,
root-only install steps, a synopsis with placeholders) is marked on the line just before
its fence::

    <!-- not run: REASON -->

with the reason (required). A block neither runnable nor marked fails, naming its file and
line.

For a new block: if its commands are subcommands already in :data:`COMMANDS`, nothing is
needed. A new subcommand needs one line in :data:`COMMANDS` (long-running or batch, the
standard input to give it, a ``prepare`` function writing the files it names into the
workspace, the exit status the doc says). A file every block may name goes in
:meth:`Workspace.create`. A block that cannot run gets the marker.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from boardevents import BoardScript, EventWriter
from broker import Mosquitto, free_port

from firmware_bridge.examples import EXAMPLES

ROOT = Path(__file__).resolve().parent.parent
DOC_FILES = (ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")))
SHELL_LABELS = frozenset({"", "sh", "bash", "shell", "console"})
PROGRAMS = frozenset({"bridge-table", ".venv/bin/bridge-table",
                      "/opt/bridge-table/.venv/bin/bridge-table"})
#: programs a block may start that the harness provides itself
PROVIDED = frozenset({"mosquitto"})
MARKER = re.compile(r"^\s*<!--\s*not run:(?P<reason>.*?)-->\s*$")
#: a quoted output checked against the run of the block before: its standard output, or a
#: file it wrote (a JSON file: the keys quoted, with their values)
CHECK = re.compile(r"^\s*<!--\s*(?:(?P<output>output)|file:\s*(?P<file>\S+)[^>]*)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent>\s*)(?P<fence>`{3,}|~{3,})\s*(?P<label>[\w+-]*)")
#: what a block's line may not hold: the harness runs one command a line
SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", "<", "<<", "2>", "&>"})
#: seconds a long-running command must stay up
SETTLE = 3.0
#: seconds a batch command may take, and a stopped one to end
BATCH_TIMEOUT = 120.0
STOP_TIMEOUT = 15.0
ERROR_LINE = re.compile(r"\b(ERROR|CRITICAL)\b")


# -- reading the docs ---------------------------------------------------------------------
@dataclass(frozen=True)
class Command:
    line: int                      # line of the doc where the command starts
    argv: tuple[str, ...]          # the words, sudo and the prompt dropped

    @property
    def is_bridge_table(self) -> bool:
        return bool(self.argv) and self.argv[0] in PROGRAMS

    @property
    def args(self) -> tuple[str, ...]:
        """The words after the program."""
        return self.argv[1:]


@dataclass(frozen=True)
class Block:
    path: Path
    line: int                      # line of the opening fence
    label: str
    text: str
    marker: str | None             # the marker's reason ("" if the marker has none)
    commands: tuple[Command, ...] = ()
    check: str | None = None       # "output", or the file this block quotes

    @property
    def where(self) -> str:
        try:
            name = self.path.relative_to(ROOT)
        except ValueError:
            name = self.path
        return f"{name}:{self.line}"

    @property
    def runs_bridge_table(self) -> bool:
        return any(c.is_bridge_table for c in self.commands)


def parse_commands(body: list[str], first_line: int,
                   prompted: bool = False) -> tuple[Command, ...]:
    """The commands of a block's lines (``first_line`` is the line number of ``body[0]``);
    ``prompted`` (a ``console`` block): only the lines after a ``$ `` prompt, the others
    being their output."""
    commands: list[Command] = []
    pending: list[str] = []
    start = first_line
    for number, raw in enumerate(body, first_line):
        if not pending:
            start = number
            if prompted and not raw.lstrip().startswith("$ "):
                continue
        stripped = raw.strip()
        if stripped.endswith("\\"):
            pending.append(stripped[:-1])
            continue
        pending.append(stripped)
        text = " ".join(pending)
        pending = []
        if text.startswith("$ "):
            text = text[2:]
        try:
            words = shlex.split(text, comments=True)
        except ValueError:          # an unbalanced quote: not a command we can read
            words = text.split()
        while words and (words[0] == "sudo" or re.fullmatch(r"\w+=\S*", words[0])):
            words = words[1:]
        if words:
            commands.append(Command(start, tuple(words)))
    return tuple(commands)


def read_blocks(path: Path) -> Iterator[Block]:
    """Every fenced block of a Markdown file with its commands and marker."""
    lines = path.read_text(encoding="utf-8").split("\n")
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        fence = opening.group("fence")
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i])
            i += 1
        marker = MARKER.match(lines[start - 1]) if start else None
        check = CHECK.match(lines[start - 1]) if start else None
        label = opening.group("label").lower()
        yield Block(path=path, line=start + 1, label=label, text="\n".join(body),
                    marker=marker.group("reason").strip() if marker else None,
                    check=(check.group("output") or check.group("file")) if check else None,
                    commands=parse_commands(body, start + 2, prompted=label == "console")
                    if label in SHELL_LABELS else ())
        i += 1


def doc_blocks() -> list[Block]:
    """The shell blocks of README.md and docs/ that run ``bridge-table``."""
    return [b for path in DOC_FILES for b in read_blocks(path) if b.runs_bridge_table]


def quoted_outputs(block: Block) -> list[Block]:
    """The blocks after ``block`` (before the next one that runs a command) that quote
    its output or a file it wrote."""
    following = list(read_blocks(block.path))
    out = []
    for later in following:
        if later.line <= block.line:
            continue
        if later.runs_bridge_table:
            break
        if later.check is not None:
            out.append(later)
    return out


def _contains(quoted: object, actual: object) -> bool:
    """Every key quoted is in ``actual`` with the value quoted (dicts), or equal."""
    if isinstance(quoted, dict) and isinstance(actual, dict):
        return all(k in actual and _contains(v, actual[k]) for k, v in quoted.items())
    return quoted == actual


def check_quoted(block: Block, quoted: Block, ws: Workspace) -> None:
    """A quoted output is what the block's run printed or wrote."""
    where = f"{quoted.where} (quotes {block.where}'s {quoted.check})"
    if quoted.check == "output":
        actual = ws.last_stdout
    else:
        assert quoted.check is not None
        path = ws.path / quoted.check
        assert path.is_file(), f"{where}: the run wrote no {quoted.check}"
        actual = path.read_text(encoding="utf-8")
    if quoted.label == "json":
        assert _contains(json.loads(quoted.text), json.loads(actual)), (
            f"{where}: the JSON quoted is not what the run wrote:\n{actual[:3000]}")
        return
    def lines(text: str) -> list[str]:
        return [line.rstrip() for line in text.strip("\n").split("\n")]
    assert lines(quoted.text) == lines(actual), (
        f"{where}: the doc quotes something else than the run printed; the run's:\n{actual}")


# -- how each command is prepared ---------------------------------------------------------
@dataclass(frozen=True)
class Spec:
    long: bool = False                          # runs until stopped
    stdin: str | None = None                    # what a batch command reads
    prepare: Callable[[Workspace], None] | None = None
    exit: int = 0                               # the exit status the docs say
    needs_sim: bool = False                     # reads the simulated table's readers


def _journal(ws: Workspace) -> None:
    """The journal of a controller (stopped) that received the example session's events."""
    ws.make_journal()


def _rotate(ws: Workspace) -> None:
    """``--rotate`` changes an existing configuration: write it first."""
    done = ws.bridge_table("broker-config", "1-12", "--out", "broker", "--host",
                           "scoring.venue.lan")
    assert done.returncode == 0, done.stderr


def _live_results(ws: Workspace) -> None:
    """``clients/scorer.toml`` as ``broker-config`` writes it (for the private broker),
    and the session's results on the broker, as a running controller leaves them."""
    (ws.path / "clients").mkdir(exist_ok=True)
    (ws.path / "clients" / "scorer.toml").write_text(f'url = "{ws.broker_url}"\n')
    ws.publish_results()


def _relay(ws: Workspace) -> None:
    ws.start_relay()


def _console_password(ws: Workspace) -> None:
    """The directors' password file a console block names, unless the block wrote it."""
    if not (ws.path / "console-password").exists():
        done = ws.bridge_table("console", "passwd", "console-password", "--name", "Ada",
                               "--stdin", stdin="correct horse battery\n")
        assert done.returncode == 0, done.stderr


PASSWORD_TWICE = "correct horse battery\ncorrect horse battery\n"

#: the subcommand (one or two words) -> how to run it
COMMANDS: dict[str, Spec] = {
    "replay": Spec(),
    "score": Spec(),
    "export": Spec(),
    "verify": Spec(),
    "tags": Spec(),
    "layout": Spec(),
    "broker-config": Spec(prepare=lambda ws: _rotate(ws) if "--rotate" in ws.current else None),
    "selftest": Spec(needs_sim=True),
    "console passwd": Spec(stdin=PASSWORD_TWICE),
    "console": Spec(long=True, prepare=_console_password),
    "controller": Spec(long=True),
    "bridge": Spec(long=True, needs_sim=True),
    "run": Spec(long=True, needs_sim=True),
    "sim run": Spec(long=True),
    "vugraph": Spec(long=True),
    "broadcast status": Spec(prepare=_relay),
    "broadcast release": Spec(prepare=_relay),
    "broadcast hold": Spec(prepare=_relay),
    "broadcast clear": Spec(prepare=_relay),
    "broadcast comment": Spec(prepare=_relay),
    "broadcast": Spec(long=True),
    "results": Spec(long=True, prepare=_live_results),
    "results --journal": Spec(prepare=_journal),
    "results --results": Spec(),
    "results --once": Spec(),
    "club-night": Spec(),
}


def spec_of(command: Command) -> tuple[str, Spec] | None:
    """The :data:`COMMANDS` line for a command: its two first words, else its first; a
    ``results`` reading a file or stopping by itself is a batch command."""
    args = command.args
    if args and args[0] == "results":
        for option in ("--journal", "--results", "--once"):
            if option in args:
                return f"results {option}", COMMANDS[f"results {option}"]
    for key in (" ".join(args[:2]), " ".join(args[:1])):
        if key in COMMANDS:
            return key, COMMANDS[key]
    return None


# -- the workspace ------------------------------------------------------------------------
def _mitchell_events(path: Path) -> None:
    """Scripted boards of rounds 1-2 of the example Mitchell session at tables 1-3, each
    board bid and played out by laws.md's AUTO rule with a contract varying by table."""
    from controller.formats.pbn import deals_by_board
    from controller.laws.cards import Suit, board_dealer
    from controller.session import load_session

    session = load_session(EXAMPLES / "session-mitchell.toml")
    deals = deals_by_board(EXAMPLES / "session-mitchell-boards.pbn")
    contracts = [("1NT", None), ("2S", Suit.S), ("3H", Suit.H)]
    lines = []
    for table in ("1", "2", "3"):
        writer = EventWriter(f"table-{table}-pi")
        for rnd in (1, 2):
            for board in session.movement.boards_at(table, rnd):
                bid, trump = contracts[(int(table) + board) % 3]
                declarer = board_dealer(board)
                deal = deals[board].deal
                assert deal is not None
                script = BoardScript(board=board, deal=deal.to_pbn(declarer),
                                     calls=[bid, "Pass", "Pass", "Pass"], trump=trump,
                                     declarer=declarer)
                lines += [json.dumps({"topic": f"bridge/{table}/event", "payload": ev})
                          for ev in writer.board(script)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@dataclass
class Workspace:
    """A block's directory: the files the docs name, the environment, the processes."""

    path: Path
    broker_url: str
    results: Path                     # the module's RESULTS.jsonl
    current: tuple[str, ...] = ()     # the command being prepared
    last_stdout: str = ""             # the last batch command's standard output
    retained: list[str] = field(default_factory=list)   # topics to clear at the end
    listening: dict[int, str] = field(default_factory=dict)  # pid -> its --listen address
    started: list[tuple[Command, subprocess.Popen[str], Path]] = field(default_factory=list)

    @property
    def examples(self) -> Path:
        """The workspace's copy of the shipped examples, where the docs name them."""
        return self.path / "hw_configs"

    def create(self) -> None:
        shutil.copytree(EXAMPLES,
                        self.examples)
        for config in self.examples.glob("*.toml"):
            text = config.read_text(encoding="utf-8")
            config.write_text(text.replace("mqtt://127.0.0.1:1883", self.broker_url),
                              encoding="utf-8")
        shutil.copytree(ROOT / "tests" / "data", self.path / "tests" / "data")
        shutil.copy(self.results, self.path / "RESULTS.jsonl")
        for name in ("session.toml", "room.toml"):
            shutil.copy(self.examples / "session-mitchell.toml", self.path / name)
        shutil.copy(self.examples / "session-mitchell-boards.pbn",
                    self.path / "session-mitchell-boards.pbn")
        shutil.copy(self.examples / "session-mitchell-boards.pbn",
                    self.path / "session.pbn")
        for directory in ("var", "tmp", "sim"):
            (self.path / directory).mkdir()

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("BRIDGE_TABLE_", "PYTEST"))}
        env.update(PYTHONPATH=str(ROOT), BRIDGE_TABLE_BROKER=self.broker_url,
                   BRIDGE_TABLE_SIM_DIR=str(self.path / "sim"), PYTHONUNBUFFERED="1",
                   HOME=str(self.path))
        return env

    def rewrite(self, args: tuple[str, ...]) -> list[str]:
        """The arguments pointed at this workspace's broker, ports and directories."""
        out: list[str] = []
        previous = ""
        for arg in args:
            arg = re.sub(r"mqtt://(127\.0\.0\.1|localhost):1883", self.broker_url, arg)
            if previous == "--listen":
                arg = f"127.0.0.1:{free_port()}"
            if arg.startswith("/tmp/"):
                arg = str(self.path / "tmp" / arg[len("/tmp/"):])
            out.append(arg)
            previous = arg
        return out

    def argv(self, args: tuple[str, ...] | list[str]) -> list[str]:
        return [sys.executable, "-m", "controller.cli", *args]

    def bridge_table(self, *args: str,
                     stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        """A batch command run to its end."""
        return subprocess.run(self.argv(list(args)), cwd=self.path, env=self.env,
                              input=stdin if stdin is not None else "",
                              capture_output=True, text=True, timeout=BATCH_TIMEOUT,
                              start_new_session=True)   # no terminal: getpass reads stdin

    def start(self, command: Command, args: list[str]) -> subprocess.Popen[str]:
        log = self.path / f"stderr-{len(self.started)}.log"
        proc = subprocess.Popen(self.argv(args), cwd=self.path, env=self.env,
                                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                stderr=log.open("w"), text=True, start_new_session=True)
        self.started.append((command, proc, log))
        if "--listen" in args[:-1]:
            self.listening[proc.pid] = args[args.index("--listen") + 1]
        return proc

    def make_journal(self) -> None:
        """``var/controller-journal.sqlite``: the journal of a controller that received the
        example session's events (what it appends as they arrive), stopped since."""
        from controller.service.journal import Journal

        events = self.results.with_name("events.jsonl").read_text(encoding="utf-8")
        messages = [(m["topic"], json.dumps(m["payload"]).encode())
                    for m in map(json.loads, events.splitlines())]
        with Journal(self.path / "var" / "controller-journal.sqlite") as journal:
            journal.append_incoming(messages)

    def publish_results(self) -> None:
        """The example session's results on the broker, retained, as the controller
        publishes them (a live ``results`` shows them and writes the records)."""
        from paho.mqtt import publish

        host, port = self.broker_url.rsplit("/", 1)[1].split(":")
        messages = [json.loads(line) for line in
                    self.results.read_text(encoding="utf-8").splitlines()]
        publish.multiple([{"topic": m["topic"], "payload": json.dumps(m["payload"]),
                           "qos": 1, "retain": True} for m in messages],
                         hostname=host, port=int(port))
        self.retained += [m["topic"] for m in messages]

    def start_relay(self) -> None:
        """``bridge-table broadcast`` running with its store, for the operator's commands.

        An ad hoc relay (``--release board``, no session): the operator's ``release --board
        7 --table 12`` is refused by a relay gating by round unless table 12 plays board 7
        in its session and every table that plays it has finished it, which no block plays.
        """
        if any(c.args[:1] == ("broadcast",) and len(c.args) > 1 and c.args[1].startswith("-")
               for c, _, _ in self.started):
            return
        proc = self.start(Command(0, ("bridge-table", "broadcast", "--release", "board")),
                          ["broadcast", "--release", "board"])
        store = self.path / "var" / "broadcast.sqlite"
        deadline = time.monotonic() + 30
        while not store.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        time.sleep(0.5)

    def stop_all(self) -> None:
        for _, proc, _ in reversed(self.started):
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        if self.retained:
            from paho.mqtt import publish

            host, port = self.broker_url.rsplit("/", 1)[1].split(":")
            publish.multiple([{"topic": t, "payload": b"", "retain": True}
                              for t in dict.fromkeys(self.retained)],
                             hostname=host, port=int(port))


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Mosquitto]:
    with Mosquitto(tmp_path_factory.mktemp("broker")) as running:
        yield running


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """RESULTS.jsonl: the results ``bridge-table replay`` publishes for scripted boards of
    the example Mitchell session (their events beside it, ``events.jsonl``)."""
    where = tmp_path_factory.mktemp("results")
    events = where / "events.jsonl"
    _mitchell_events(events)
    done = subprocess.run(
        [sys.executable, "-m", "controller.cli", "replay", str(events), "--session",
         str(EXAMPLES / "session-mitchell.toml"), "--topics", "result"],
        capture_output=True, text=True, timeout=BATCH_TIMEOUT,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    path = where / "RESULTS.jsonl"
    path.write_text(done.stdout, encoding="utf-8")
    assert len(done.stdout.splitlines()) >= 18, done.stdout[:500]
    return path


# -- running a block ----------------------------------------------------------------------
def _clean(text: str) -> bool:
    return "Traceback" not in text


def run_block(block: Block, ws: Workspace) -> None:
    """Run every command of ``block`` in ``ws`` as the module docstring says; fail naming
    the doc's file and line."""
    starts_sim = any(spec_of(c) is not None and spec_of(c)[0] == "sim run"  # type: ignore[index]
                     for c in block.commands if c.is_bridge_table)
    sim_started = False
    try:
        for command in block.commands:
            where = f"{block.where} (line {command.line}: {' '.join(command.argv)})"
            if not command.is_bridge_table:
                if command.argv[0] in PROVIDED:
                    continue
                pytest.fail(f"{where}: {command.argv[0]!r} is not a command the harness "
                            f"runs; mark the block '<!-- not run: REASON -->' or add it to "
                            f"PROVIDED in tests/test_docs_commands.py")
            found = spec_of(command)
            if found is None:
                pytest.fail(f"{where}: no line for this subcommand in COMMANDS "
                            f"(tests/test_docs_commands.py); add one, or mark the block "
                            f"'<!-- not run: REASON -->'")
            _, spec = found
            words = list(command.args)
            if words[-1:] == ["&"]:         # "in the background": long commands are anyway
                words.pop()
            redirect = None
            if len(words) >= 2 and words[-2] == ">":
                redirect, words = words[-1], words[:-2]
            operators = sorted({w for w in words if w in SHELL_OPERATORS})
            if operators:
                pytest.fail(f"{where}: {' '.join(operators)}: the harness runs one command "
                            f"a line (a '> FILE' at the end is allowed); split the line, or "
                            f"mark the block '<!-- not run: REASON -->'")
            ws.current = tuple(words)
            if spec.prepare is not None:
                spec.prepare(ws)
            if spec.needs_sim and not starts_sim and not sim_started:
                ws.start(Command(0, ("bridge-table", "sim", "run")),
                         ["sim", "run", "--config", "hw_configs/sim.toml"])
                sim_started = True
                time.sleep(1.5)
            args = ws.rewrite(tuple(words))
            if spec.long:
                ws.start(command, args)
                if args[:2] == ["sim", "run"]:
                    time.sleep(1.5)          # its pseudo-terminals, before a bridge opens them
                continue
            done = ws.bridge_table(*args, stdin=spec.stdin)
            ws.last_stdout = done.stdout
            if redirect is not None:
                (ws.path / redirect).write_text(done.stdout, encoding="utf-8")
            assert done.returncode == spec.exit and _clean(done.stderr), (
                f"{where}: exit status {done.returncode} (the doc says {spec.exit})\n"
                f"{done.stderr[-3000:]}")
        if ws.started:
            time.sleep(SETTLE)
        for command, proc, log in ws.started:
            where = f"{block.where} (line {command.line}: {' '.join(command.argv)})"
            code = proc.poll()
            err = log.read_text(encoding="utf-8", errors="replace")
            assert code in (None, 0) and _clean(err) and not ERROR_LINE.search(err), (
                f"{where}: after {SETTLE} s: exit status {code}\n{err[-3000:]}")
            listen = ws.listening.get(proc.pid)
            if listen is not None and code is None:
                host, port = listen.rsplit(":", 1)
                try:
                    socket.create_connection((host, int(port)), timeout=5).close()
                except OSError as exc:
                    pytest.fail(f"{where}: nothing listens on {listen} (given for the "
                                f"doc's --listen): {exc}\n{err[-3000:]}")
        for command, proc, log in reversed(ws.started):
            where = f"{block.where} (line {command.line}: {' '.join(command.argv)})"
            if proc.poll() is None:
                proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{where}: still running {STOP_TIMEOUT} s after SIGINT")
            err = log.read_text(encoding="utf-8", errors="replace")
            assert code in (0, 130) and _clean(err), (
                f"{where}: exit status {code} after SIGINT\n{err[-3000:]}")
    finally:
        ws.stop_all()


# -- the tests ----------------------------------------------------------------------------
BLOCKS = doc_blocks()
RUNNABLE = [b for b in BLOCKS if b.marker is None]


def test_the_docs_have_blocks_to_run() -> None:
    assert len(RUNNABLE) >= 5, [b.where for b in BLOCKS]


def test_every_marker_is_on_the_line_before_a_fence() -> None:
    misplaced = []
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").split("\n")
        for number, line in enumerate(lines[:-1], 1):
            if (MARKER.match(line) or CHECK.match(line)) and not FENCE.match(lines[number]):
                misplaced.append(f"{path.relative_to(ROOT)}:{number}")
    assert not misplaced, f"a marker not on the line just before a fence: {misplaced}"


def test_every_marker_gives_its_reason() -> None:
    unexplained = [b.where for b in BLOCKS if b.marker is not None and not b.marker]
    assert not unexplained, f"'<!-- not run: -->' without a reason: {unexplained}"


@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_a_documented_block_runs_as_written(block: Block, broker: Mosquitto,
                                            results_file: Path, tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "ws", broker.url, results_file)
    ws.path.mkdir()
    ws.create()
    run_block(block, ws)
    for quoted in quoted_outputs(block):
        check_quoted(block, quoted, ws)


# -- figures the docs quote ---------------------------------------------------------------
def _verify_default_boards() -> int:
    from controller.verify.cli import _parser

    return int(_parser().get_default("boards"))


def _demo_set_boards() -> int:
    from controller.formats.pbn import deals_by_board

    return len(deals_by_board(ROOT / "controller" / "data" / "verify-demo.pbn"))


def _oled_font() -> int:
    import inspect

    from firmware_bridge.display import SSD1306Display

    return int(inspect.signature(SSD1306Display.__init__).parameters["font_size"].default)


def _display_rows() -> int:
    from controller.indicators.display_text import ROWS

    return ROWS


def _display_width() -> int:
    from controller.indicators.display_text import WIDTH

    return WIDTH


def _scenario_boards() -> str:
    from controller.formats.pbn import read_pbn

    pbn = read_pbn((ROOT / "tests" / "data" / "laws_scenarios.pbn").read_text(encoding="utf-8"))
    return " ".join(game.tags["Board"] for game in pbn.games)


#: (doc, a pattern quoting the figure in its one group, the figure as the code gives it).
#: A figure a doc quotes gets a line here; a pattern that no longer matches fails, so a
#: reworded sentence is looked at again.
FIGURES: list[tuple[str, str, Callable[[], object]]] = [
    ("docs/verification.md", r"verify-demo\.pbn` \((\d+)\s+boards", _demo_set_boards),
    ("docs/verification.md", r"asks for more; (\d+) by default", _verify_default_boards),
    ("docs/config.md", r"TrueType font, (\d+) px high", _oled_font),
    ("docs/config.md", r"on rows of (\d+) px", lambda: _oled_font() + 1),
    ("docs/config.md", r"\((\d+) rows on 128x64", lambda: 64 // (_oled_font() + 1)),
    ("docs/config.md", r"rows on 128x64, the\s+controller's (\w+)\)",
     lambda: {4: "four"}.get(_display_rows(), _display_rows())),
    ("docs/laws.md", r"gets (\w+) rows per language",
     lambda: {4: "four"}.get(_display_rows(), _display_rows())),
    ("docs/laws.md", r"each at most\s+(\d+) columns", _display_width),
    ("docs/wire-contract.md", r"every row is at most (\d+) columns", _display_width),
    ("docs/formats.md", r"laws_scenarios\.pbn`: the (\d+) scenarios",
     lambda: len(_scenario_boards().split())),
    ("docs/formats.md", r"one\s+game each, boards ([\d ]+)\)", _scenario_boards),
]


@pytest.mark.parametrize(("doc", "pattern", "figure"), FIGURES,
                         ids=[f"{d}:{p[:24]}" for d, p, _ in FIGURES])
def test_a_figure_the_docs_quote_is_the_codes(doc: str, pattern: str,
                                              figure: Callable[[], object]) -> None:
    text = (ROOT / doc).read_text(encoding="utf-8")
    found = re.search(pattern, text)
    assert found is not None, f"{doc}: no longer says /{pattern}/: update FIGURES"
    line = text.count("\n", 0, found.start()) + 1
    assert found.group(1) == str(figure()), (
        f"{doc}:{line}: quotes {found.group(1)}, the code gives {figure()}")


# -- the harness itself -------------------------------------------------------------------
SAMPLE = """# A doc

```sh
bridge-table replay events.jsonl \\
    --deals deals.pbn   # a comment
```

<!-- not run: a real table -->
```sh
sudo bridge-table bridge --config /etc/bridge-table/table-1.toml
```

<!-- not run: -->
```
$ .venv/bin/bridge-table score RESULTS.jsonl
```

```text
bridge-table bridge: t.toml: table.source: unknown key
```

```sh
bridge-table frobnicate --now
```

```console
$ bridge-table score RESULTS.jsonl \\
    --json
bridge-table score: printed, not run
```
"""


def test_the_harness_reads_blocks_commands_and_markers(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(SAMPLE, encoding="utf-8")
    blocks = [b for b in read_blocks(doc) if b.runs_bridge_table]
    assert [(b.line, b.marker) for b in blocks] == [
        (3, None), (9, "a real table"), (14, ""), (22, None), (26, None)]
    assert blocks[-1].commands == (Command(27, ("bridge-table", "score", "RESULTS.jsonl",
                                                "--json")),)
    first = blocks[0].commands
    assert first == (Command(4, ("bridge-table", "replay", "events.jsonl", "--deals",
                                 "deals.pbn")),)
    assert blocks[1].commands[0].argv[:2] == ("bridge-table", "bridge")
    assert blocks[2].commands[0].argv == (".venv/bin/bridge-table", "score", "RESULTS.jsonl")


def test_a_block_the_harness_cannot_run_fails_naming_its_line(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text(SAMPLE, encoding="utf-8")
    unknown = [b for b in read_blocks(doc) if b.runs_bridge_table][-2]
    ws = Workspace(tmp_path / "ws", "mqtt://127.0.0.1:1", tmp_path / "RESULTS.jsonl")
    with pytest.raises(pytest.fail.Exception, match=r"doc\.md:22 \(line 23: bridge-table "
                                                    r"frobnicate --now\): no line"):
        run_block(unknown, ws)


def test_a_pipe_in_a_block_fails_naming_its_line(tmp_path: Path) -> None:
    doc = tmp_path / "doc.md"
    doc.write_text("```sh\nbridge-table replay x.jsonl | head\n```\n", encoding="utf-8")
    block = next(iter(read_blocks(doc)))
    ws = Workspace(tmp_path / "ws", "mqtt://127.0.0.1:1", tmp_path / "RESULTS.jsonl")
    with pytest.raises(pytest.fail.Exception, match=r"doc\.md:1 \(line 2: .*\): \|: the "
                                                    r"harness runs one command"):
        run_block(block, ws)
