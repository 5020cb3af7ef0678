"""controller.tomlfile: the one TOML loader, and the problem it reports with file and line."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.tomlfile import TomlFileError, TomlProblem, load_toml, loads_toml, read_toml
from firmware_bridge.config import load_config
from firmware_bridge.errors import ConfigError
from firmware_bridge.tags import RegistryError, RegistryFile


def problem_of(path: Path) -> TomlProblem:
    with pytest.raises(TomlFileError) as caught:
        load_toml(path)
    return caught.value.problem


def test_a_good_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "ok.toml"
    path.write_text('[table]\nid = "4"\n', encoding="utf-8")
    assert load_toml(path) == {"table": {"id": "4"}}


def test_broken_toml_names_file_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "4"\nlanguage = en\n', encoding="utf-8")
    problem = problem_of(path)
    assert (problem.file, problem.reason, problem.line, problem.column) == \
        (str(path), "syntax", 3, 12)
    assert str(problem) == f"{path}: not valid TOML: Invalid value (at line 3, column 12)"


def test_a_binary_file_is_a_problem_on_its_line_not_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "tags.toml"
    path.write_bytes(b"version = 1\n[boards]\n\"1\" = \"\xff\xfe\"\n")
    problem = problem_of(path)
    assert (problem.reason, problem.line) == ("not-utf8", 3)
    assert problem.describe() == "not valid TOML: not UTF-8 text (at line 3)"


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    assert problem_of(tmp_path / "nowhere.toml").reason == "missing"
    problem = problem_of(tmp_path)  # a directory
    assert problem.reason == "unreadable" and problem.describe().startswith("cannot read")


def test_an_unterminated_document_says_where_it_ends() -> None:
    with pytest.raises(TomlFileError) as caught:
        loads_toml('a = "open\n', "x.toml")
    assert caught.value.problem.line == 1 and "x.toml" in str(caught.value)


def test_read_toml_raises_the_callers_own_error(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text("[session\n", encoding="utf-8")

    class SessionError(ValueError):
        pass

    with pytest.raises(SessionError, match=r"s\.toml: not a TOML session file: .*line 1"):
        read_toml(path, SessionError, "a TOML session file")


def test_the_table_config_and_the_tag_registry_report_through_it(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text("[table]\nid = 4 4\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"table\.toml: not valid TOML: .*\(at line 2, column"):
        load_config(path)
    with pytest.raises(RegistryError, match=r"table\.toml: not valid TOML: .*\(at line 2"):
        RegistryFile.read(path)
    assert RegistryFile.read(tmp_path / "new.toml", missing_ok=True).boards == {}
    with pytest.raises(RegistryError, match="no such registry file"):
        RegistryFile.read(tmp_path / "new.toml")
