"""Replay benchmark: events per second through the Laws core, and ``bridge-table replay``
on generated boards against the same work done with endplay, in the same run.

    .venv/bin/python bench/bench_replay.py [--boards 1000] [--seed 1] [--stream spot|tray]
        [--no-jobs] [--write]

The package this Python has installed is measured: the clone's sources from ``.venv`` (an
editable install), the compiled wheel from ``.venv-compiled`` (``make test`` installs it
there: tools/compiled_build.py), and then the clone's sources beside it, in the same
rounds.

Times are CPU seconds (``time.process_time``; the command's from ``getrusage`` of its
process), best of three (the commands: best of ``--rounds`` rounds, each running every
command once): on a machine shared with other work, wall-clock time measures the
neighbours as much as the code.

The endplay baseline reads the same JSONL (the same JSON parser: the floor), applies each
call with its checks (turn, sufficient bid, legal double/redouble, end of auction,
contract and declarer via ``Contract.from_auction``) and each card with its checks
(``legal_moves`` then ``Deal.play``, which follows suit and finds trick winners), and
counts declarer's tricks; a bid card or a card leaving its spot is decoded and passed
over (endplay has nothing to do with it). ``--stream spot`` (the default) is a real
table's stream (``make_session``); ``--stream tray`` the calls-and-cards stream of the
earlier figures. ``--write`` puts the figures into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec

ROOT = Path(__file__).resolve().parents[1]
# after site-packages: the installed package first (the compiled wheel where it is)
sys.path.append(str(ROOT))

from controller.boards.generate import random_board  # noqa: E402
from controller.engine import Engine  # noqa: E402
from controller.formats.events import interleave, record_events, write_jsonl  # noqa: E402
from controller.formats.pbn import pbn_text  # noqa: E402
from controller.laws.cards import Call, Card, Seat  # noqa: E402
from controller.laws.events import Action, TagEvent, Zone  # noqa: E402
from controller.laws.record import BoardRecord  # noqa: E402
from controller.laws.table import Table  # noqa: E402
from controller.replay.stream import replay_lines  # noqa: E402

_decoder = msgspec.json.Decoder()
_encoder = msgspec.json.Encoder()


def make_session(n: int, seed: int, sensing: str = "spot") -> tuple[list[BoardRecord], bytes]:
    """``n`` random boards as a table sends them. ``spot`` (the default): a real table's
    stream, one card per antenna: the board's tag, each call put on its call spot and the
    one before it picked up, each card on its play spot and each quitted trick's cards
    leaving (``record_events(..., sensing="spot")``, the hands from the deal file, not
    scanned). ``tray``: the wire contract 1.0 stream of calls and cards only (the figures
    of the earlier sections)."""
    rng = random.Random(seed)
    records = [random_board(rng, i).record for i in range(1, n + 1)]
    buf = io.StringIO()
    seq = 1
    for r in records:
        events = record_events(r, scans=False, seq_start=seq, return_hands=False,
                               sensing="spot" if sensing == "spot" else "tray")
        seq += len(events)
        write_jsonl(events, buf)
    return records, buf.getvalue().encode()


def multi_table(data: bytes, tables: int) -> bytes:
    """The session's events shared out over ``tables`` tables (boards in contiguous
    ranges, each table's lines in order), lines interleaved: the same events, as a room
    would send them (``replay --jobs``)."""
    lines = data.splitlines()
    starts = [i for i, line in enumerate(lines) if b'"zone":"board"' in line] + [len(lines)]
    per = -(-(len(starts) - 1) // tables)
    streams = []
    for t in range(tables):
        chunk = lines[starts[min(t * per, len(starts) - 1)]:starts[min((t + 1) * per,
                                                                         len(starts) - 1)]]
        streams.append([b'{"topic":"bridge/T%d/event","payload":%s}' % (t + 1, line)
                        for line in chunk])
    return b"\n".join(interleave(streams, random.Random(len(lines)), 8)) + b"\n"


def bench_json_floor(data: bytes) -> float:
    t = time.process_time()
    for line in data.splitlines():
        _decoder.decode(line)
    return time.process_time() - t


def bench_core(records: list[BoardRecord], data: bytes) -> tuple[float, int]:
    """Table.apply on pre-built events: the Laws core alone, no JSON."""
    deals = {r.board: r.deal_info for r in records}
    inputs = []
    for line in data.splitlines():
        d = _decoder.decode(line)
        seat = Seat[d["seat"]] if "seat" in d else None
        inputs.append(TagEvent(
            Zone(d["zone"]), Action(d["action"]), seat, d["uid"],
            card=Card.parse(d["card"]) if "card" in d else None,
            call=Call.parse(d["call"]) if "call" in d else None, board=d.get("board")))
    table = Table("1", deals=deals)
    t = time.process_time()
    for inp in inputs:
        table.apply(inp)
    return time.process_time() - t, len(inputs)


def bench_replay(records: list[BoardRecord], data: bytes,
                 kinds: frozenset[str] | None = None) -> tuple[float, int, bytes]:
    """What ``bridge-table replay`` does, in process: decode, Engine, encode every output
    (``kinds``: what ``--topics`` keeps)."""
    deals = {r.board: r.deal_info for r in records}
    engine = Engine(deals=deals, kinds=kinds)
    out: list[bytes] = []
    t = time.process_time()
    for msg in replay_lines(engine, data.splitlines()):
        out.append(_encoder.encode({"topic": msg.topic, "payload": msg.payload}))
    elapsed = time.process_time() - t
    return elapsed, len(out), b"\n".join(out)


def bench_endplay(records: list[BoardRecord], data: bytes) -> tuple[float, int]:
    from endplay.types import Bid, Contract, Deal, Player
    from endplay.types import Card as EPCard

    deals = {r.board: r.deal for r in records}
    dealers = {r.board: r.dealer for r in records}
    players = [Player.north, Player.east, Player.south, Player.west]
    declarer_tricks = 0
    t = time.process_time()
    deal = None
    auction: list[Bid] = []
    turn = 0
    last_bid: tuple[int, int, int] | None = None
    doubled = 0
    passes = 0
    done = False
    declarer = None
    played = 0
    for line in data.splitlines():
        d = _decoder.decode(line)
        zone = d["zone"]
        if zone == "board":
            board = d["board"]
            deal = Deal(deals[board].to_pbn())  # type: ignore[union-attr]
            auction, turn, last_bid, doubled, passes, done = [], dealers[board], None, 0, 0, False
            played = 0
        elif zone == "bid" and d["action"] == "present":
            seat = "NESW".index(d["seat"])
            assert seat == turn and not done, "call out of turn"
            text = d["call"]
            if text == "Pass":
                auction.append(Bid("pass"))
                passes += 1
            elif text == "X":
                assert last_bid and doubled == 0 and (last_bid[2] - seat) % 2, "bad double"
                auction.append(Bid("X"))
                doubled, passes = 1, 0
            elif text == "XX":
                assert doubled == 1, "bad redouble"
                auction.append(Bid("XX"))
                doubled, passes = 2, 0
            else:
                level = int(text[0])
                rank = (level - 1) * 5 + ("C", "D", "H", "S", "NT").index(text[1:])
                assert last_bid is None or rank > last_bid[0], "insufficient"
                auction.append(Bid(text))
                last_bid, doubled, passes = (rank, level, seat), 0, 0
            turn = (turn + 1) % 4
            if (last_bid is None and passes == 4) or (last_bid is not None and passes == 3):
                done = True
                if last_bid is not None:
                    contract = Contract.from_auction(players[dealers[board]], auction)
                    declarer = contract.declarer
                    assert deal is not None
                    deal.trump = contract.denom
                    deal.first = declarer.lho
        elif (zone == "tray" or zone == "spot") and d["action"] == "present":
            assert deal is not None
            card = d["card"]
            ep_card = EPCard(card)
            assert ep_card in deal.legal_moves(), "illegal card"
            deal.play(ep_card)
            played += 1
            if played % 4 == 0 and declarer is not None:
                if deal.first in (declarer, declarer.partner):
                    declarer_tricks += 1
    return time.process_time() - t, declarer_tricks


#: a command of the installed package: -P, so that the clone it runs in is not put first
#: on its sys.path (``python -m`` puts the folder it runs in first: the clone's sources)
INSTALLED = (sys.executable, "-P", "-m", "controller.cli")
#: the same command from the sources of the tree it runs in
SOURCES = (sys.executable, "-m", "controller.cli")


def core_kind() -> str:
    """Which Laws core the commands import: the sources, or the compiled wheel."""
    proc = subprocess.run([*INSTALLED, "--version"], capture_output=True, text=True,
                          cwd=ROOT)
    return "compiled with mypyc (the compiled wheel, installed: tools/compiled_build.py)" \
        if proc.stdout.strip().endswith("(compiled)") else "pure Python (the sources)"


def machine() -> str:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.machine()}, {os.cpu_count()} cores ({cpu}), Python "
            f"{platform.python_version()}, {platform.system()} {platform.release()}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--boards", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--write", action="store_true")
    ap.add_argument("--stream", choices=("spot", "tray"), default="spot",
                    help="spot: a real table's stream (default); tray: calls and cards only")
    ap.add_argument("--no-jobs", action="store_true", help="leave out the --jobs runs")
    ap.add_argument("--tables", type=int, default=4,
                    help="tables the session is shared out over for --jobs (default 4)")
    ap.add_argument("--jobs", type=int, default=2,
                    help="processes of the --jobs run (default 2)")
    ap.add_argument("--rounds", type=int, default=5,
                    help="rounds of the commands, each command once a round; the best "
                         "run of each is kept (default 5)")
    ap.add_argument("--main-tree", type=Path,
                    help="an earlier checkout (git archive main | tar -x -C DIR) whose "
                    "replay command is timed alongside")
    args = ap.parse_args()
    load = os.getloadavg()  # the machine may be shared: its load goes with the figures
    records, data = make_session(args.boards, args.seed, args.stream)
    n_events = len(data.splitlines())
    floor = min(bench_json_floor(data) for _ in range(3))
    core, n_core = min((bench_core(records, data) for _ in range(3)), key=lambda x: x[0])
    rep, n_out, _ = min((bench_replay(records, data) for _ in range(3)), key=lambda x: x[0])
    few = frozenset({"result", "alert"})
    rep_few, n_few, _ = min((bench_replay(records, data, few) for _ in range(3)),
                            key=lambda x: x[0])
    ep = min((bench_endplay(records, data) for _ in range(3)), key=lambda x: x[0])
    # the command itself, start-up included
    with tempfile.TemporaryDirectory() as tmp:
        events = Path(tmp) / "events.jsonl"
        deals = Path(tmp) / "deals.pbn"
        events.write_bytes(data)
        deals.write_text(pbn_text(records))
        def command(*extra: str, tree: Path = ROOT, pure: bool = False) -> float:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            # pure: the Python sources of the tree, whatever is installed
            proc = subprocess.run([*(SOURCES if pure or tree != ROOT else INSTALLED),
                                   "replay", str(events), "--deals", str(deals), *extra],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  cwd=tree.resolve())
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert proc.returncode == 0, proc.stderr[-2000:]
            # the command's own CPU time (user + system), start-up included
            return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)

        def timed(*extra: str, path: Path) -> tuple[float, float]:
            """(CPU seconds of the command and its workers, wall-clock seconds)."""
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            proc = subprocess.run([*INSTALLED, "replay", str(path), "--deals", str(deals),
                                   *extra],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            assert proc.returncode == 0, proc.stderr[-2000:]
            return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall

        multi = Path(tmp) / "multi.jsonl"
        multi.write_bytes(multi_table(data, args.tables))
        jobs_runs = {} if args.no_jobs else {
            n: [timed("--jobs", str(n), path=multi) for _ in range(3)] for n in (1, args.jobs)}
        # the commands in rounds, each round running every one once: a neighbour's burst
        # then costs each command one of its runs, not all the runs of one command
        variants: dict[str, tuple[tuple[str, ...], Path, bool]] = {
            "cli": ((), ROOT, False), "few": (("--topics", "result,alert"), ROOT, False),
            "en": (("--languages", "en"), ROOT, False)}
        compiled = core_kind().startswith("compiled")
        if compiled:  # and the same commands from the sources, side by side
            variants.update(pure=((), ROOT, True),
                            pure_few=(("--topics", "result,alert"), ROOT, True))
        if args.main_tree:
            variants.update(main=((), args.main_tree, False),
                            main_few=(("--topics", "result,alert"), args.main_tree, False))
        timings: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(args.rounds):
            for name, (extra, tree, pure) in variants.items():
                timings[name].append(command(*extra, tree=tree, pure=pure))
        cli, cli_few, cli_en = min(timings["cli"]), min(timings["few"]), min(timings["en"])
        cli_main = min(timings["main"]) if args.main_tree else None
        cli_main_few = min(timings["main_few"]) if args.main_tree else None
        cli_pure = min(timings["pure"]) if compiled else None
        cli_pure_few = min(timings["pure_few"]) if compiled else None
    rows = [
        ("JSON decode only (the floor)", floor, n_events),
        ("Laws core: Table.apply, no JSON", core, n_core),
        ("replay in process: decode + Engine + encode every output", rep, n_events),
        ("replay in process, `--topics result,alert`", rep_few, n_events),
        ("endplay: decode + each call and card with its checks", ep[0], n_events),
        ("`bridge-table replay` command, start-up and --deals included", cli, n_events),
        ("`bridge-table replay --languages en` command (one display language)", cli_en,
         n_events),
        ("`bridge-table replay --topics result,alert` command", cli_few, n_events),
    ]
    if cli_pure is not None and cli_pure_few is not None:
        rows.append(("the same command from the clone's Python sources",
                     cli_pure, n_events))
        rows.append(("the same `--topics result,alert` command from the Python sources",
                     cli_pure_few, n_events))
    if cli_main is not None and cli_main_few is not None:
        rows.append(("the earlier checkout's `bridge-table replay` command (`--main-tree`)",
                     cli_main, n_events))
        rows.append(("the earlier checkout's `bridge-table replay --topics result,alert` "
                     "command", cli_main_few, n_events))
    lines = [
        f"Command: `{os.path.relpath(sys.executable, ROOT)} bench/bench_replay.py --boards "
        f"{args.boards} --seed {args.seed}`",
        f"Load average before the run: {' '.join(f'{x:.2f}' for x in load)}; after: "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}",
        f"Machine: {machine()}",
        f"Laws core: {core_kind()}",
        f"Session: {args.boards} random boards, {n_events} events ("
        + ("a real table's stream: board tag, calls put and picked up, cards put on the "
           "play spots and quitted" if args.stream == "spot" else
           "board, calls, cards; no scans") + f"), {n_out} messages out",
        "",
        "| path | CPU seconds | events per CPU second |",
        "|---|---:|---:|",
    ]
    lines += [f"| {name} | {sec:.3f} | {n / sec:,.0f} |" for name, sec, n in rows]
    lines += ["", f"Against endplay doing the same checks: the core alone is "
                  f"**{ep[0] / core:.1f}x** faster; replay with `--topics result,alert` "
                  f"(the same output endplay gives: contract and tricks) "
                  f"**{ep[0] / rep_few:.1f}x**; "
                  f"replay writing every message ({n_out} of them: state, indicator and feed "
                  f"after each event) {ep[0] / rep:.1f}x in process; the command, start-up "
                  f"and deals file included, **{ep[0] / cli:.1f}x** "
                  f"({ep[0] / cli_en:.1f}x with one display language; "
                  f"the command with `--topics result,alert` {ep[0] / cli_few:.1f}x)"
                  + (f"; from the Python sources {ep[0] / cli_pure:.1f}x "
                     f"({ep[0] / cli_pure_few:.1f}x with `--topics result,alert`)"
                     if cli_pure is not None and cli_pure_few is not None else "")
                  + (f"; the earlier checkout's command {ep[0] / cli_main:.1f}x "
                     f"({ep[0] / cli_main_few:.1f}x with `--topics result,alert`)"
                     if cli_main is not None and cli_main_few is not None else "")
                  + ". Goals (issue 32): results only >= 10x, every message >= 3x."]
    if jobs_runs:
        lines += ["", f"`--jobs` on the same events shared out over {args.tables} tables "
                  "(best of three each; CPU seconds of the command and its workers):", "",
                  "| run | CPU seconds | wall-clock seconds |", "|---|---:|---:|"]
    for n, runs in jobs_runs.items():
        lines.append(f"| `--jobs {n}` | {min(c for c, _ in runs):.3f} | "
                     f"{min(w for _, w in runs):.3f} |")
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(ROOT / "docs" / "benchmarks.md",
                      "## Replay through the Laws core" if args.stream == "tray" else
                      "## Replay on a real table's stream (issue 32)", text)
    return 0


def write_section(path: Path, heading: str, body: str) -> None:
    """Replace (or add) one ``## `` section of docs/benchmarks.md, leaving the others."""
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    parts = text.split("\n## ")
    head, sections = parts[0], ["## " + p for p in parts[1:]]
    new = f"{heading}\n\n{body}\n"
    for i, sec in enumerate(sections):
        if sec.splitlines()[0].strip() == heading:
            sections[i] = new
            break
    else:
        sections.append(new)
    path.write_text(head.rstrip() + "\n\n" + "\n".join(s.rstrip() + "\n" for s in sections))


if __name__ == "__main__":
    sys.exit(main())
