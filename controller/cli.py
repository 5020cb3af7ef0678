"""``bridge-table``: one command, subcommands imported lazily (only what is run is loaded)."""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence

from controller.commandline import EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE

#: subcommand -> "module:main": ``main(argv: Sequence[str] | None = None) -> int`` in a module
#: ``cli`` beside the code it drives, ``cli_COMMAND`` where one folder serves several
#: commands (tests/test_commands.py holds every entry to it)
COMMANDS: dict[str, tuple[str, str]] = {
    "replay": ("controller.replay.cli:main", "replay sensor events through the Laws core"),
    "controller": ("controller.service.cli_controller:main",
                   "run the rules daemon on an MQTT broker"),
    "bridge": ("firmware_bridge.cli_bridge:main", "run the firmware bridge of one table"),
    "run": ("controller.service.cli_run:main", "bridge and controller together for one table"),
    "demo": ("controller.demo.cli:main",
             "a whole board on a simulated table, live in the terminal"),
    "tags": ("firmware_bridge.cli_tags:main", "tag registry: enroll a deck, list, check"),
    "verify": ("controller.verify.cli:main", "check dealt boards against their deal file"),
    "score": ("controller.session.cli_score:main",
              "matchpoints and IMPs across tables from results"),
    "export": ("controller.session.cli_export:main",
               "the session's records: PBN, LIN, CSV, USEBIO"),
    "results": ("controller.service.cli_results:main",
                "the ranking as the session goes; all records"),
    "broadcast": ("controller.broadcast.cli:main",
                  "the feed to the public, under a release policy"),
    "vugraph": ("controller.web.vugraph.cli:main", "the audience's web view (reads public/# only)"),
    "sim": ("firmware_bridge.sim.cli:main", "the simulated table's readers on pseudo-terminals"),
    "club-night": ("controller.clubnight.cli:main",
                   "a whole club night on this machine, simulated tables and all"),
    "broker-config": ("controller.venue.cli:main", "a locked-down mosquitto for a venue"),
    "console": ("controller.web.console.cli:main", "the director's console: tables, rulings"),
    "firmware": ("firmware_bridge.cli_firmware:main", "reader firmware onto a MicroPython board"),
    "selftest": ("firmware_bridge.cli_selftest:main", "commissioning test of a built table"),
    "layout": ("firmware_bridge.layout.cli:main",
               "a table's geometry: the design-rule check and the drawing"),
    "examples": ("firmware_bridge.cli_examples:main",
                 "where the shipped example files are (sim.toml, a table's layout)"),
}


def _usage() -> str:
    width = max(len(name) for name in COMMANDS)
    lines = ["usage: bridge-table COMMAND [ARGS...]", "       bridge-table --version", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {help_}" for name, (_, help_) in COMMANDS.items()]
    lines += ["", "bridge-table COMMAND --help: the command's options. Exit status: 0 done "
                  "(a service stopped by", "Ctrl-C or SIGTERM included), 1 failed while "
                  "running, 2 a wrong command line, configuration", "or input file, 130 a "
                  "command interrupted by Ctrl-C before it finished its work."]
    return "\n".join(lines)


def compiled() -> bool:
    """Whether the Laws core runs compiled (the compiled wheel: tools/compiled_build.py),
    not from its Python sources."""
    from importlib.machinery import EXTENSION_SUFFIXES

    from controller.laws import table

    return (table.__file__ or "").endswith(tuple(EXTENSION_SUFFIXES))


def version() -> str:
    """``bridge-table 0.1.0 (wire contract v1) (sources)``: the package's version, the
    contract's, and whether the compiled build or the Python sources run."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    from controller.wire import VERSION
    try:
        package = dist_version("bridge-table")
    except PackageNotFoundError:  # run from a checkout that was never installed
        package = "unknown"
    build = "compiled" if compiled() else "sources"
    return f"bridge-table {package} (wire contract v{VERSION}) ({build})"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(_usage(), file=sys.stderr)
        return EXIT_USAGE
    if args[0] in ("-h", "--help", "help"):
        print(_usage())
        return EXIT_OK
    # ``--version`` after any command or subcommand (``console passwd --version``), up to
    # a ``--`` that ends the options
    options = args[1:args.index("--")] if "--" in args else args[1:]
    if args[0] in ("-V", "--version") or "--version" in options:
        print(version())
        return EXIT_OK
    name, rest = args[0], args[1:]
    if name not in COMMANDS:
        print(f"bridge-table: unknown command {name!r}\n\n{_usage()}", file=sys.stderr)
        return EXIT_USAGE
    target = COMMANDS[name][0]
    module_name, func_name = target.split(":")
    try:
        func = getattr(importlib.import_module(module_name), func_name)
        result = func(rest)
    except KeyboardInterrupt:  # Ctrl-C where a command did not catch it: no traceback
        print(f"bridge-table {name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `bridge-table replay ... | head`: the reader has gone
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - no flush error at exit
        return EXIT_OK
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
