"""Every ``bridge-table`` command's ``main`` is found the same way (controller/cli.py's
COMMANDS): ``main(argv: Sequence[str] | None = None) -> int`` in a module ``cli`` in the
folder of the code it drives, or ``cli_COMMAND`` (hyphens as underscores) where one folder
serves several commands; importable, ``--help`` exits 0 with its usage, ``--version``
answered through ``bridge-table`` itself. Each test lists every command that breaks its
rule in one message."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

from controller.cli import COMMANDS, main, version


def _target(command: str) -> tuple[str, str]:
    module, _, function = COMMANDS[command][0].partition(":")
    return module, function


def _folder(module: str) -> str:
    """The package (folder) a module is in; a package's own ``__init__`` is in itself."""
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.submodule_search_locations is not None:
        return module
    return module.rpartition(".")[0]


def _naming_problem(command: str, counts: dict[str, int]) -> str | None:
    """What is wrong with where ``command``'s main is said to be (None: nothing)."""
    module, function = _target(command)
    folder, name = _folder(module), module.rpartition(".")[2]
    own = "cli_" + command.replace("-", "_")
    if function != "main":
        return f"{command}: the function is {function!r}, not 'main'"
    if module == "controller.cli":
        return f"{command}: controller.cli is the dispatcher of every command: the command's " \
               "main goes in a cli module in the folder of the code it drives " \
               "(docs/architecture.md, 'A new command')"
    if name == "cli":
        if counts[folder] > 1:
            return f"{command}: {module} in a folder of {counts[folder]} commands: " \
                   f"{folder}.{own}"
        return None
    if name != own:
        if folder == "controller":
            return f"{command}: {module} is a module at the top of controller/: the " \
                   f"command's main goes in a folder of its own code, controller/FOLDER/cli.py"
        choices = f"{folder}.{own}" if counts[folder] > 1 else f"{folder}.cli"
        return f"{command}: {module} is not {choices}"
    return None


def _assert_none(check: Callable[[str], str | None], what: str) -> None:
    """One assertion naming every command that ``check`` finds wrong."""
    problems = [problem for command in COMMANDS
                for problem in (check(command),) if problem is not None]
    assert not problems, f"{what}:\n  " + "\n  ".join(problems)


def _folder_counts() -> dict[str, int]:
    """Folder -> how many commands have their main in it."""
    counts: dict[str, int] = defaultdict(int)
    for command in COMMANDS:
        counts[_folder(_target(command)[0])] += 1
    return counts


def test_every_main_is_in_a_cli_module_beside_its_code() -> None:
    counts = _folder_counts()
    _assert_none(lambda command: _naming_problem(command, counts),
                 "commands whose main is not in a cli module")


def test_no_two_commands_share_a_main() -> None:
    targets: dict[str, list[str]] = defaultdict(list)
    for command, (target, _) in COMMANDS.items():
        targets[target].append(command)
    shared = {target: names for target, names in targets.items() if len(names) > 1}
    assert not shared, shared


def _import_problem(command: str) -> str | None:
    module, function = _target(command)
    try:
        found = getattr(importlib.import_module(module), function, None)
    except ImportError as error:
        return f"{command}: {module} cannot be imported: {error}"
    if not callable(found):
        return f"{command}: {module} has no function {function!r}"
    return None


def _signature_problem(command: str) -> str | None:
    problem = _import_problem(command)
    if problem is not None:
        return problem
    module, function = _target(command)
    func = getattr(importlib.import_module(module), function)
    signature = inspect.signature(func)
    params = list(signature.parameters.values())
    said = f"{command}: {module}.{function}{signature}"
    if not params or params[0].name != "argv" or params[0].default is not None \
            or params[0].kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                      inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return f"{said}: the first parameter is not argv=None"
    if str(params[0].annotation) != "Sequence[str] | None":
        return f"{said}: argv is not Sequence[str] | None"
    if str(signature.return_annotation) != "int":
        return f"{said}: it does not return int"
    extra = [p.name for p in params[1:] if p.kind is not inspect.Parameter.KEYWORD_ONLY
             or p.default is inspect.Parameter.empty]
    if extra:
        return f"{said}: parameters after argv not keyword-only with a default: {extra}"
    return None


def test_every_main_is_importable() -> None:
    problems = [p for p in map(_import_problem, COMMANDS) if p is not None]
    assert not problems, "commands whose main cannot be found:\n  " + "\n  ".join(problems)


def test_every_main_takes_argv_and_returns_an_exit_code() -> None:
    _assert_none(_signature_problem,
                 "commands whose main is not main(argv: Sequence[str] | None = None) -> int")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_help_is_the_commands_usage(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    module, function = _target(command)
    func = getattr(importlib.import_module(module), function)
    try:
        code = func(["--help"])
    except SystemExit as exited:  # argparse's way
        code = exited.code
    out, err = capsys.readouterr()
    assert code in (0, None), err
    assert out.startswith(f"usage: bridge-table {command}"), out[:200]


@pytest.mark.parametrize("command", list(COMMANDS))
def test_version_is_answered_by_bridge_table(command: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--version"]) == 0
    assert capsys.readouterr().out.strip() == version()


def test_the_one_installed_program_is_bridge_table() -> None:
    """Every command is reached through ``bridge-table`` (controller/cli.py's main): the
    package installs that one program, not one per command."""
    import tomllib
    from pathlib import Path

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml")
                            .read_text(encoding="utf-8"))["project"]
    assert project["scripts"] == {"bridge-table": "controller.cli:main"}
    assert "gui-scripts" not in project and "entry-points" not in project


def readme_commands(text: str) -> set[str]:
    """The commands README.md's "Commands" table has a row for (``bridge-table X ...``)."""
    table = text[text.index("## Commands"):]
    table = table[:table.index("\n## ", 1)] if "\n## " in table[1:] else table
    return {line.split("`bridge-table ", 1)[1].split()[0].rstrip("`")
            for line in table.splitlines() if line.startswith("| `bridge-table ")}


def test_every_command_has_its_row_in_the_readme() -> None:
    text = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    missing = sorted(set(COMMANDS) - readme_commands(text))
    assert missing == [], f"commands with no row in README.md's Commands table: {missing}"


def test_a_missing_row_would_be_seen() -> None:
    text = "## Commands\n\n| `bridge-table run --config X` | a |\n| `bridge-table sim run` | b |\n"
    assert readme_commands(text + "\n## Next\n| `bridge-table demo` | c |\n") == {"run", "sim"}


@pytest.mark.parametrize(("target", "said"), [
    ("controller.cli:main", "controller.cli is the dispatcher"),
    ("controller.wire:main", "a module at the top of controller/"),
    ("controller.replay.stream:main", "controller.replay.stream is not controller.replay.cli"),
])
def test_a_main_in_the_wrong_place_is_told_where_it_goes(
        target: str, said: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(COMMANDS, "hello", (target, "a command placed wrongly"))
    problem = _naming_problem("hello", _folder_counts())
    assert problem is not None and said in problem


# -- the convention every command keeps (docs/install.md, controller/commandline.py; issue 43) --

#: each command's subcommands: ``--version`` is answered after them too
SUBCOMMANDS = {"console": ("passwd",), "sim": ("run", "play"),
               "broadcast": ("status", "release", "hold", "clear", "comment"),
               "tags": ("enroll", "list", "check"), "firmware": ("flash", "settings")}
#: the commands that run until stopped or follow a session live (with the subcommand that
#: does): each takes ``--log-level``
LONG_RUNNING = {"controller": (), "bridge": (), "run": (), "console": (), "vugraph": (),
                "broadcast": (), "results": (), "verify": (), "demo": (), "selftest": (),
                "sim": ("run",)}


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    try:
        main([*argv, "--help"])
    except SystemExit:      # argparse's way
        pass
    return capsys.readouterr().out


def test_every_subcommand_answers_version(capsys: pytest.CaptureFixture[str]) -> None:
    wrong = []
    for command, subs in SUBCOMMANDS.items():
        assert command in COMMANDS
        for sub in subs:
            code = main([command, sub, "--version"])
            if code != 0 or capsys.readouterr().out.strip() != version():
                wrong.append(f"{command} {sub}")
    assert wrong == [], "--version not answered after these"


def test_every_long_running_command_takes_log_level(capsys: pytest.CaptureFixture[str]
                                                   ) -> None:
    missing = [" ".join((command, *sub)) for command, sub in LONG_RUNNING.items()
               if "--log-level" not in _help([command, *sub], capsys)]
    assert missing == [], "long-running commands without --log-level"


def test_the_web_apps_default_to_distinct_ports() -> None:
    """The console and the vugraph run on the same scoring machine: both defaulted to
    8080, so the second one started refused to serve."""
    from controller.web.console.cli import parser as console
    from controller.web.vugraph.cli import parser as vugraph

    ports = {console().get_default("listen"), vugraph().get_default("listen")}
    assert len(ports) == 2, ports


@pytest.mark.parametrize("command", ["score", "export", "results"])
def test_the_session_and_results_files_are_named_one_way(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    text = _help([command], capsys)
    assert "--session FILE" in text and "--results" in text, text


@pytest.mark.parametrize("argv, stdin, code", [
    (["passwd", "FILE", "--stdin"], "short\n", 2),          # too short: an input to fix
    (["passwd", "FILE", "--stdin"], "", 2),                 # no password at all
])
def test_console_passwd_exits_as_documented(argv: list[str], stdin: str, code: int,
                                            tmp_path: Path,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    args = [str(tmp_path / "pw") if a == "FILE" else a for a in argv]
    assert main(["console", *args]) == code
    assert not (tmp_path / "pw").exists()


def test_console_passwd_interrupted_exits_130(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.web.console import cli

    def interrupted(prompt: str) -> str:
        raise KeyboardInterrupt
    monkeypatch.setattr(cli, "_ask", interrupted)
    assert main(["console", "passwd", str(tmp_path / "pw")]) == 130
