"""The reader and display registries (firmware_bridge.backends, firmware_bridge.readers):
built-in backends imported only when chosen, third-party ones from an installed
distribution's entry points, and the table file validated against both."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from firmware_bridge.backends import DISPLAYS, BackendUnavailable, Registry, UnknownBackend
from firmware_bridge.config import config_from_dict
from firmware_bridge.display import TerminalDisplay, make_display
from firmware_bridge.errors import ConfigError, DisplayError
from firmware_bridge.readers import READERS, ReaderError, open_reader, reader_schemes
from firmware_bridge.readers.memory import MemoryReader

ROOT = Path(__file__).parent.parent

PLUGIN = '''
from firmware_bridge.display import Display
from firmware_bridge.readers.base import Reader


class LoopReader(Reader):
    """A third-party reader: everything it needs is the Reader base and from_url."""

    @classmethod
    def from_url(cls, name, url, *, kind=None, **options):
        return cls(name, kind=kind or "tap", **options)

    async def _start(self):
        self._tag("0", "04C0FFEE", "present", 1.0)

    async def _stop(self):
        pass


class BannerDisplay(Display):
    @classmethod
    def from_config(cls, config, *, stream=None, title=""):
        made = cls()
        made.title = title
        return made

    def show(self, lines):
        self.lines = list(lines)
'''


def install_plugin(root: Path, readers: dict[str, str], displays: dict[str, str]) -> None:
    """A distribution on sys.path as pip would leave it: a module and a dist-info with the
    entry points (importlib.metadata reads exactly these files)."""
    (root / "bt_plugin_example.py").write_text(PLUGIN)
    (root / "bt_plugin_boom.py").write_text('raise RuntimeError("no SPI bus here")\n')
    info = root / "bt_plugin_example-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bt-plugin-example\n"
                                   "Version: 0.1\n")
    lines = ["[bridge_table.readers]"] + [f"{k} = {v}" for k, v in readers.items()]
    lines += ["[bridge_table.displays]"] + [f"{k} = {v}" for k, v in displays.items()]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    install_plugin(tmp_path, {"loop": "bt_plugin_example:LoopReader",
                              "broken": "bt_plugin_example:NoSuchClass",
                              "boom": "bt_plugin_boom:Reader"},
                   {"banner": "bt_plugin_example:BannerDisplay"})
    monkeypatch.syspath_prepend(str(tmp_path))


def table(readers: list[dict[str, Any]], display: dict[str, Any] | None = None
          ) -> dict[str, Any]:
    return {"table": {"id": "3"}, "readers": readers, "display": display or {"type": "none"}}


def one_reader(url: str) -> list[dict[str, Any]]:
    return [{"name": "north", "url": url, "antennas": {"0": {"seat": "N", "zone": "tray"}}}]


def test_builtin_schemes_and_display_types() -> None:
    assert {"serial", "nfc", "sim", "memory"} <= set(reader_schemes())
    assert {"none", "terminal", "hd44780", "ssd1306"} <= set(DISPLAYS.names())
    assert "memory" in READERS and "telepathy" not in READERS


def test_backends_are_imported_only_when_chosen() -> None:
    code = textwrap.dedent("""
        import sys
        from firmware_bridge.config import load_config
        from firmware_bridge.readers import open_reader
        config = load_config("hw_configs/sim.toml")
        backends = [m for m in sys.modules if m.startswith("firmware_bridge.readers.")
                    and m != "firmware_bridge.readers.base"]
        assert backends == [], backends
        open_reader("north", "memory://x")
        assert "firmware_bridge.readers.memory" in sys.modules
        assert "firmware_bridge.readers.nfc" not in sys.modules
        assert "firmware_bridge.readers.serial" not in sys.modules
        assert "nfc" not in sys.modules and "gpiozero" not in sys.modules
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_unknown_scheme_names_the_known_ones() -> None:
    with pytest.raises(ReaderError, match=r"unknown scheme 'telepathy' \(known: .*memory"):
        open_reader("north", "telepathy://mind")
    with pytest.raises(ReaderError, match="has no scheme"):
        open_reader("north", "/dev/ttyUSB0")


def test_the_config_refuses_a_scheme_no_backend_has(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"readers\[0\]\.url: 'loop://x': the scheme must be"
                                          r" one of .*memory://"):
        config_from_dict(table(one_reader("loop://x")), tmp_path / "t.toml")
    with pytest.raises(ConfigError, match="display.type: 'banner' is not one of"):
        config_from_dict(table([], {"type": "banner"}), tmp_path / "t.toml")


def test_memory_scheme_is_accepted_by_the_config(tmp_path: Path) -> None:
    config = config_from_dict(table(one_reader("memory://3/north")), tmp_path / "t.toml")
    assert config.readers[0].url == "memory://3/north"


@pytest.mark.usefixtures("plugin")
async def test_a_plugin_reader_is_found_validated_and_opened(tmp_path: Path) -> None:
    assert "loop" in reader_schemes()
    config = config_from_dict(table(one_reader("loop://anything")), tmp_path / "t.toml")
    reader = open_reader("north", config.readers[0].url)
    assert type(reader).__name__ == "LoopReader" and reader.kind == "tap"
    async with reader:
        async for item in reader:
            assert (item.reader, getattr(item, "uid", None)) == ("north", "04C0FFEE")
            break


@pytest.mark.usefixtures("plugin")
def test_a_broken_plugin_is_a_reader_error_not_a_crash() -> None:
    with pytest.raises(ReaderError, match="reader 'broken' cannot be loaded"):
        open_reader("north", "broken://x")
    with pytest.raises(ReaderError, match="reader 'boom' cannot be loaded: RuntimeError: no SPI"):
        open_reader("north", "boom://x")


@pytest.mark.usefixtures("plugin")
def test_a_plugin_display_is_found_validated_and_made(tmp_path: Path) -> None:
    config = config_from_dict(table([], {"type": "banner"}), tmp_path / "t.toml")
    display = make_display(config.display, title="table 3")
    assert type(display).__name__ == "BannerDisplay"
    display.show(["1NT by N"])
    assert getattr(display, "lines", None) == ["1NT by N"]


def test_builtin_display_comes_from_the_registry(tmp_path: Path) -> None:
    config = config_from_dict(table([], {"type": "terminal", "cols": 16, "rows": 2}),
                              tmp_path / "t.toml")
    out = io.StringIO()
    display = make_display(config.display, stream=out, title="t3")
    assert isinstance(display, TerminalDisplay) and (display.cols, display.rows) == (16, 2)
    display.show(["hello"])
    assert "|hello" in out.getvalue()


def test_registry_register_and_errors() -> None:
    registry = Registry("widget", "bridge_table.test_widgets", {})
    with pytest.raises(UnknownBackend, match="unknown widget 'w'"):
        registry.load("w")
    registry.register("w", "firmware_bridge.readers.memory:MemoryReader")
    assert registry.load("w") is MemoryReader and registry.names() == ("w",)
    registry.register("gone", "firmware_bridge.no_such_module:Thing")
    with pytest.raises(BackendUnavailable, match="widget 'gone' cannot be loaded"):
        registry.load("gone")
    with pytest.raises(ValueError, match="not 'module:attr'"):
        registry.register("bad", "firmware_bridge.readers.memory")


def test_a_display_registry_failure_is_a_display_error(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    config = config_from_dict(table([], {"type": "terminal"}), tmp_path / "t.toml")
    monkeypatch.setitem(DISPLAYS.builtins, "terminal", "firmware_bridge.display:Nowhere")
    monkeypatch.setattr(DISPLAYS, "_loaded", {})
    with pytest.raises(DisplayError, match="display 'terminal' cannot be loaded"):
        make_display(config.display)
