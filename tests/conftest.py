from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from broker import Mosquitto  # noqa: E402

DATA = Path(__file__).parent / "data"


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Mosquitto]:
    """A private mosquitto broker on a free loopback port for one test."""
    with Mosquitto(tmp_path / "broker") as broker:
        yield broker


@pytest.fixture
def data_dir() -> Path:
    return DATA
