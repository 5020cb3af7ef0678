"""``bridge-table``: one command, subcommands imported lazily (only what is run is loaded)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

#: subcommand -> "module:function"; each function takes argv (list[str]) and returns an exit code.
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("controller.replay:main", "replay sensor events through the Laws core"),
    "controller": ("controller.daemon:main", "run the rules daemon on an MQTT broker"),
    "bridge": ("firmware_bridge.bridge:main", "run the firmware bridge of one table"),
    "run": ("controller.run:main", "bridge and controller together for one table"),
    "demo": ("controller.demo:main", "a whole board on a simulated table, live in the terminal"),
    "tags": ("firmware_bridge.tags:main", "tag registry: enroll a deck, list, check"),
    "verify": ("controller.verify.cli:main", "check dealt boards against their deal file"),
    "score": ("controller.session:main", "matchpoints and IMPs across tables from results"),
    "export": ("controller.session.export:main", "the session's records: PBN, LIN, CSV, USEBIO"),
    "results": ("controller.session.live:main", "the ranking as the session goes; all records"),
    "broadcast": ("controller.broadcast:main", "the feed to the public, under a release policy"),
    "vugraph": ("controller.web.vugraph:main", "the audience's web view (reads public/# only)"),
    "sim": ("firmware_bridge.sim.cli:main", "the simulated table's readers on pseudo-terminals"),
    "broker-config": ("controller.brokerconfig:main", "a locked-down mosquitto for a venue"),
    "console": ("controller.web.console.cli:main", "the director's console: tables, rulings"),
    "firmware": ("firmware_bridge.mcu.flash:main", "reader firmware onto a MicroPython board"),
}


def _usage() -> str:
    lines = ["usage: bridge-table COMMAND [ARGS...]", "", "commands:"]
    lines += [f"  {name:<11} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        print(_usage())
        return 0 if args else 2
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"bridge-table: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return 2
    target = COMMANDS[name][0]
    module_name, func_name = target.split(":")
    func = getattr(importlib.import_module(module_name), func_name)
    result = func(rest)
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
