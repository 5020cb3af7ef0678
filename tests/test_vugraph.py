"""The vugraph's data side: it reads public/# only, and the results across tables."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from controller.web.vugraph import app as vugraph
from controller.web.vugraph.app import Store, board_summary, double_dummy

DEAL = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"


def view(table: str, board: int, contract: str, score: int, tricks: int = 10) -> dict[str, Any]:
    return {"v": 1, "session": "s", "table": table, "board": board, "deal": DEAL,
            "status": "complete", "calls": [], "cards": [],
            "result": {"contract": contract, "declarer": "S", "tricks": tricks,
                       "score_ns": score}}


def test_only_public_topics_are_taken() -> None:
    store = Store()
    assert not store.take("bridge/1/state", {"table": "1"})
    assert not store.take("bridge/1/feed", {"board": 1})
    assert store.take("public/1/board/3", view("1", 3, "4H", 420))
    assert store.take("public/1/snapshot", view("1", 3, "4H", 420))
    assert not store.take("public/1/board/x", {})
    assert store.state()["tables"][0]["boards"] == [3]


async def test_the_listener_subscribes_to_public_only(monkeypatch: pytest.MonkeyPatch) -> None:
    import aiomqtt

    subscribed: list[Any] = []
    stop = asyncio.Event()

    class Fake:
        def __init__(self, *a: Any, **k: Any) -> None:
            pass

        async def __aenter__(self) -> Fake:
            return self

        async def __aexit__(self, *a: Any) -> None:
            return None

        async def subscribe(self, topic: Any, qos: int = 0) -> None:
            subscribed.append(topic)

        @property
        def messages(self) -> Any:
            async def gen() -> Any:
                stop.set()
                raise aiomqtt.MqttError("end of the test")
                yield  # pragma: no cover

            return gen()

    monkeypatch.setattr(aiomqtt, "Client", Fake)
    from controller.daemon import BrokerSettings

    await asyncio.wait_for(vugraph.listen(Store(), BrokerSettings.from_url("mqtt://x:1"),
                                          stop), 5)
    assert subscribed == ["public/#"]


def test_results_across_tables_matchpoints_and_frequency() -> None:
    store = Store()
    for t, c, s in (("1", "4H", 420), ("2", "4H", 420), ("3", "3H", 170)):
        store.take(f"public/{t}/board/1", view(t, 1, c, s))
    out = board_summary(store, 1)
    assert [r["mp_ns"] for r in out["results"]] == [3.0, 3.0, 0.0]
    assert [r["mp_ew"] for r in out["results"]] == [1.0, 1.0, 4.0]
    assert {(f["contract"], f["count"]) for f in out["frequency"]} == {("4H", 2), ("3H", 1)}
    assert "imps_ns" not in out


def test_two_tables_give_imps() -> None:
    store = Store()
    store.take("public/1/board/1", view("1", 1, "4H", 420))
    store.take("public/2/board/1", view("2", 1, "3H", 170))
    assert board_summary(store, 1)["imps_ns"] == 6


def test_double_dummy_and_par_or_says_absent(monkeypatch: pytest.MonkeyPatch) -> None:
    dd = double_dummy(DEAL, 1)
    if dd["available"]:
        assert dd["tricks"]["H"]["S"] == 11 and dd["tricks"]["H"]["E"] == 1
        assert dd["par_score_ns"] == 450 and "5HS=" in dd["par"]
    import builtins

    real = builtins.__import__

    def no_endplay(name: str, *a: Any, **k: Any) -> Any:
        if name.startswith("endplay"):
            raise ImportError(name)
        return real(name, *a, **k)

    vugraph._DD_CACHE.clear()
    monkeypatch.setattr(builtins, "__import__", no_endplay)
    assert double_dummy(DEAL, 1) == {"available": False}
