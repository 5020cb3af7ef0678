"""``bridge-table sim``: run a simulated table's readers on pseudo-terminals, and play events.

    bridge-table sim run  [--config TABLE.toml] [--link-dir var/sim] [--stdin]
    bridge-table sim play EVENTS.jsonl [--config TABLE.toml] [--rate 5 | --speed 10]

Each antenna reads one tag at a time unless told otherwise (``--tag-limit``, ``--miss-rate``,
``--seed``, ``--collision``: docs/sensing.md); ``play`` says at the end what the antennas
saw (the most tags on one antenna, collisions, late and lost reads).

Both print each reader's pty path, stable symlink and kind (``reader NAME PTY LINK KIND``),
so that a bridge in another process can open them as ``serial://LINK``. ``play`` waits for a
host to open every reader (``--wait``), plays the file, prints a summary, and keeps the readers
up until Ctrl-C unless ``--exit`` is given. ``run --stdin`` plays the event lines of standard
input as they come (type them, or pipe them in).

Without ``--link-dir`` both announce their readers in a well-known directory per table
(``firmware_bridge/sim/shared.py``), where ``bridge-table bridge`` on the
same config in another process finds them: the ``sim://`` readers of its config open them.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from controller.commandline import add_log_level, bounded, setup_logging
from firmware_bridge.examples import example
from firmware_bridge.sim.players import PlayerHabits, humanize_boards
from firmware_bridge.sim.serve import Playing, read_events_file, serve
from firmware_bridge.sim.table import Physics, SimError, SimTable

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bridge-table sim", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    for name in ("run", "play"):
        s = sub.add_parser(name)
        if name == "play":
            s.add_argument("events", type=Path, help="JSONL sensor events")
            pace = s.add_mutually_exclusive_group()
            pace.add_argument("--rate", type=float, default=0.0,
                              help="events per second (0: as fast as possible)")
            pace.add_argument("--speed", type=float, default=None,
                              help="multiplier of the gaps between the events' ts (1: real time)")
            s.add_argument("--hardware-time", action="store_true",
                           help="readers stamp lines with the events' ts")
            s.add_argument("--wait", type=float, default=60.0,
                           help="seconds to wait for a host on every reader (0: do not wait)")
            s.add_argument("--exit", action="store_true", help="stop once the file is played")
            s.add_argument("--turn-rate", type=_rate, default=None,
                           help="simulated players (firmware_bridge/sim/players.py): the "
                                "share of played cards turned on their spots (default: the "
                                "file's events as they are)")
            s.add_argument("--late-slide-rate", type=_rate, default=0.1,
                           help="with --turn-rate: cards and calls laid on the previous one")
            s.add_argument("--hesitate-rate", type=_rate, default=0.1,
                           help="with --turn-rate: long pauses before a call or a card")
            s.add_argument("--player-seed", type=int, default=0,
                           help="with --turn-rate: the players' seed")
        else:
            s.add_argument("--stdin", action="store_true",
                           help="play the events read from standard input (one JSON object a "
                                "line, as in a `sim play` file) as they come")
            s.add_argument("--rate", type=float, default=None,
                           help="--stdin: events per second at most (default: as typed on a "
                                "terminal, 10 from a pipe or a file: no hand moves cards "
                                "faster, and events at the same instant on two readers have "
                                "no order)")
        s.add_argument("--config", type=Path, default=None,
                       help="the simulated table's config (default the shipped sim.toml: "
                            "`bridge-table examples sim.toml`)")
        s.add_argument("--link-dir", type=Path, default=None,
                       help="directory for the readers' stable symlinks (default: a temp dir)")
        s.add_argument("--json", action="store_true", help="print reader paths as JSON lines")
        s.add_argument("--tag-limit", type=_tag_limit, default=1,
                       help="tags one antenna reads at once (default 1: a second tag is a "
                            "collision; 16 for readers built to inventory a pile)")
        s.add_argument("--miss-rate", type=_miss_rate, default=0.0,
                       help="chance a tag misses one polling round (0 <= P < 1; default 0)")
        s.add_argument("--seed", type=int, default=0, help="seed of the misses (default 0)")
        s.add_argument("--collision", choices=("error", "silence"), default="error",
                       help="what a reader says of a tag beyond its limit: an ERR line "
                            "(default) or nothing")
        add_log_level(s)
    return p


_tag_limit = bounded(int, lambda v: v >= 1, "a whole number of at least 1")
_miss_rate = bounded(float, lambda v: 0.0 <= v < 1.0, "a probability from 0 to below 1")


_rate = bounded(float, lambda v: 0.0 <= v <= 1.0, "a probability from 0 to 1")


def _players(args: argparse.Namespace, events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``sim play``'s events as the simulated players make them (``--turn-rate``)."""
    if args.turn_rate is None:
        return events
    habits = PlayerHabits(seed=args.player_seed, turn_rate=args.turn_rate,
                          late_slide_rate=args.late_slide_rate,
                          hesitate_rate=args.hesitate_rate)
    return humanize_boards(events, habits)


def _physics(args: argparse.Namespace) -> Physics:
    return Physics(tag_limit=args.tag_limit, miss_rate=args.miss_rate, seed=args.seed,
                   collision=args.collision)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    setup_logging(args)
    if args.config is None:
        args.config = example("sim.toml")
    try:  # a configuration it cannot use is said before any reader starts (exit 2)
        SimTable.from_config(args.config)
    except (SimError, OSError) as error:
        print(f"bridge-table sim: {error}", file=sys.stderr)
        return 2
    playing: Playing | None = None
    stdin, stdin_rate = False, None
    if args.cmd == "play":  # the file first: a table is not started for a file it cannot play
        try:
            events, problems = read_events_file(args.events)
        except OSError as error:
            print(f"bridge-table sim: {args.events}: cannot read: {error.strerror or error}",
                  file=sys.stderr)
            return 2
        except SimError as error:
            print(f"bridge-table sim: {args.events}: {error}", file=sys.stderr)
            return 2
        for problem in problems:
            print(f"skipped: {problem}", file=sys.stderr)
        events = _players(args, events)
        playing = Playing(events=events, rate=args.rate, speed=args.speed,
                          hardware_time=args.hardware_time, wait=args.wait, exit=args.exit)
    else:
        stdin, stdin_rate = args.stdin, args.rate
    try:
        return asyncio.run(serve(
            args.config, link_dir=args.link_dir, physics=_physics(args), as_json=args.json,
            playing=playing, stdin=stdin, stdin_rate=stdin_rate))
    except (SimError, OSError) as error:
        print(f"bridge-table sim: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
