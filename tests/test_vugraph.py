"""The vugraph's data side: it reads public/# only, and the results across tables."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from controller import wire
from controller.web.vugraph import app as vugraph
from controller.web.vugraph.app import Store, board_summary, double_dummy

DEAL = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"


def view(table: str, board: int, contract: str, score: int, tricks: int = 10) -> dict[str, Any]:
    return {"v": 1, "session": "s", "table": table, "board": board, "deal": DEAL,
            "status": "complete", "calls": [], "cards": [], "irregularities": [],
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
    # what the relay would refuse is not shown either (a payload put on public/# by hand)
    assert not store.take("public/1/board/4", {**view("1", 4, "4H", 420), "deal": "<img>"})
    assert not store.take("public/1/now", {"v": 1, "session": "s", "table": "1",
                                           "board": 2, "contract": {"x": 1}})
    assert [t["table"] for t in store.state()["tables"]] == ["1"]
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
    from controller.broker.settings import BrokerSettings

    await asyncio.wait_for(vugraph.listen(Store(), BrokerSettings.from_url("mqtt://x:1"),
                                          stop), 5)
    assert subscribed == [[("public/#", 1)]]


def test_the_store_reads_payloads_through_the_wire_module() -> None:
    store = Store()
    assert store.handle("public/1/board/3", json.dumps(view("1", 3, "4H", 420)).encode())
    assert list(store.boards) == [("s", "1", 3)]
    # not JSON, not an object, over the contract's size: dropped, nothing shown
    assert not store.handle("public/2/board/3", b"{not json")
    assert not store.handle("public/2/board/3", b"[1]")
    big = {**view("2", 3, "4H", 420), "pad": "x" * wire.MAX_PAYLOAD}
    assert not store.handle("public/2/board/3", json.dumps(big).encode())
    assert list(store.boards) == [("s", "1", 3)]


def test_the_link_going_up_and_down_is_told_to_the_page() -> None:
    store = Store()
    queue: asyncio.Queue[str] = asyncio.Queue()
    store.listeners.add(queue)
    store.set_connected(True)
    assert store.state()["connected"] is True
    store.set_connected(False)
    assert store.state()["connected"] is False
    assert [json.loads(queue.get_nowait())["topic"] for _ in range(2)] == \
        ["connected", "disconnected"]


def test_results_across_tables_matchpoints_and_frequency() -> None:
    store = Store()
    for t, c, s in (("1", "4H", 420), ("2", "4H", 420), ("3", "3H", 170)):
        store.take(f"public/{t}/board/1", view(t, 1, c, s))
    out = board_summary(store, 1)
    assert [r["mp_ns"] for r in out["results"]] == [3.0, 3.0, 0.0]
    assert [r["mp_ew"] for r in out["results"]] == [1.0, 1.0, 4.0]
    assert {(f["contract"], f["count"]) for f in out["frequency"]} == {("4H", 2), ("3H", 1)}
    assert "imps_ns" not in out


def test_two_tables_of_a_teams_match_give_imps() -> None:
    store = Store()
    store.take("public/1/board/1", {**view("1", 1, "4H", 420), "scoring": "IMP"})
    store.take("public/2/board/1", {**view("2", 1, "3H", 170), "scoring": "IMP"})
    assert board_summary(store, 1)["imps_ns"] == 6


@pytest.mark.parametrize("scoring", ["MP", "cross-imps", None])
def test_two_results_of_a_pairs_board_give_no_imps(scoring: str | None) -> None:
    """Issue 43: the vugraph showed IMPs on a pairs board that had two results so far."""
    store = Store()
    for t, c, s in (("1", "4H", 420), ("2", "3H", 170)):
        v = view(t, 1, c, s)
        store.take(f"public/{t}/board/1", {**v, "scoring": scoring} if scoring else v)
    assert "imps_ns" not in board_summary(store, 1)


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


def test_two_sessions_are_never_compared() -> None:
    """The evening's board 1 is matchpointed against the evening's results only; the
    page shows the relay's current session unless asked for another."""
    store = Store()
    store.take("public/session", {"v": 1, "session": "eve", "tables": ["1", "2"]})
    for sid, t, c, s in (("aft", "1", "3NT", 600), ("aft", "2", "4H", 420),
                         ("eve", "1", "4H", 420), ("eve", "2", "3H", 170)):
        store.take(f"public/{t}/board/1", {**view(t, 1, c, s), "session": sid})
    # the same topic, retained, keeps only the last: the afternoon's views are gone from
    # the broker but the vugraph keeps each session's own
    assert store.sessions() == ["aft", "eve"]
    out = board_summary(store, 1)
    assert out["session"] == "eve" and [r["score_ns"] for r in out["results"]] == [420, 170]
    aft = board_summary(store, 1, "aft")
    assert [r["score_ns"] for r in aft["results"]] == [600, 420]
    assert store.state()["session"]["session"] == "eve"
    assert store.state("aft")["session"] == {"session": "aft"}


def test_the_running_ranking_adds_each_pairs_matchpoints() -> None:
    store = Store()
    rows = (("1", 1, "4H", 420, "1", "3"), ("2", 1, "3H", 170, "2", "4"),
            ("1", 2, "2S", -110, "1", "4"), ("2", 2, "3S", -140, "2", "3"))
    for t, b, c, s, ns, ew in rows:
        store.take(f"public/{t}/board/{b}", {**view(t, b, c, s), "ns": ns, "ew": ew,
                                             "players": {"ns": f"P{ns}", "ew": f"P{ew}"}})
    ranking = store.state("s")["ranking"]
    # no pair sat both ways (a Mitchell): two fields, each ranked apart, a tie shared
    assert [(r["field"], r["rank"], r["pair"], r["mp"], r["top"]) for r in ranking] == [
        ("EW", "1=", "3", 2.0, 4), ("EW", "1=", "4", 2.0, 4),
        ("NS", "1", "1", 4.0, 4), ("NS", "2", "2", 0.0, 4)]
    by_pair = {r["pair"]: r for r in ranking}
    assert by_pair["1"]["pct"] == 100.0 and by_pair["2"]["pct"] == 0.0
    assert by_pair["3"]["pct"] == 50.0 and by_pair["4"]["pct"] == 50.0
    assert by_pair["1"]["name"] == "P1" and by_pair["1"]["boards"] == 2


def test_a_pair_that_sat_both_ways_makes_one_field() -> None:
    """Pairs that change direction (a Howell, an arrow-switch) are one field, one ranking."""
    store = Store()
    rows = (("1", 1, "4H", 420, "1", "3"), ("2", 1, "3H", 170, "2", "4"),
            ("1", 2, "3S", -140, "3", "1"), ("2", 2, "2S", -110, "4", "2"))
    for t, b, c, s, ns, ew in rows:
        store.take(f"public/{t}/board/{b}", {**view(t, b, c, s), "ns": ns, "ew": ew})
    ranking = store.state("s")["ranking"]
    assert {r["field"] for r in ranking} == {None}
    assert [(r["rank"], r["pair"], r["mp"]) for r in ranking] == [
        ("1=", "1", 4.0), ("1=", "4", 4.0), ("3=", "2", 0.0), ("3=", "3", 0.0)]


def test_what_each_table_plays_now_and_the_commentary_are_kept_per_session() -> None:
    store = Store()
    store.take("public/session", {"v": 1, "session": "s", "tables": ["1"]})
    store.take("public/1/now", {"v": 1, "session": "s", "table": "1", "board": 3, "phase": "play",
                                "contract": "4H", "declarer": "S"})
    store.take("public/commentary", {"v": 1, "session": "s", "text": "a squeeze", "at": 1.0})
    state = store.state()
    assert state["tables"][0]["now"]["contract"] == "4H"
    assert state["commentary"]["text"] == "a squeeze"
    assert store.state("other")["commentary"] is None


def test_per_card_double_dummy_ends_on_the_tricks_taken() -> None:
    pytest.importorskip("endplay")
    from controller.web.vugraph.app import dd_trace

    assert dd_trace({"deal": DEAL, "result": {"contract": "Pass"}, "cards": []}) == \
        {"available": False}
    out = dd_trace({"deal": DEAL, "result": {"contract": "4H", "declarer": "S"},
                    "cards": [["W", "CT"], ["N", "C3"], ["E", "CA"], ["S", "C7"]]})
    assert out["available"] and len(out["tricks"]) == 5
    assert out["tricks"][0] == 11          # the double-dummy table: 11 in hearts by South
    assert all(0 <= t <= 13 for t in out["tricks"])


def test_sigterm_stops_the_vugraph_cleanly_with_a_viewer_connected() -> None:
    """``systemctl stop`` (SIGTERM) with a viewer's live stream open: the vugraph ends
    within seconds with exit status 0 and says so, as the console does (uvicorn's own
    handler re-raised the signal: exit status 143)."""
    import signal
    import socket
    import subprocess
    import sys
    import time
    import urllib.request

    from broker import free_port

    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "vugraph", "--broker",
                             "mqtt://127.0.0.1:1", "--listen", f"127.0.0.1:{port}"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL)
    viewer = None
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=2) as page:
                    assert page.status == 200
                break
            except OSError:
                assert proc.poll() is None and time.monotonic() < deadline, "no page served"
                time.sleep(0.2)
        viewer = socket.create_connection(("127.0.0.1", port), timeout=10)
        viewer.sendall(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        assert b"200" in viewer.recv(4096)          # the live stream is open
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if viewer is not None:
            viewer.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert "Traceback" not in err.decode() and "stopped" in err.decode()
