"""End to end: mosquitto, the controller, the relay and the vugraph as processes; the
attacks on the release gate fail (unscheduled table, forged result, next session's
board 1, two relays), and a real browser shows what was released.

One stack for the module (starting it takes seconds); the tests run in order.
"""

from __future__ import annotations

import functools
import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from boardevents import BoardScript, EventWriter, clean_board
from broker import Mosquitto, free_port
from mqttwatch import Recorder, wait_until
from screenshots import screenshot_dir

from controller.laws.cards import Seat, Suit, board_dealer

ROOT = Path(__file__).resolve().parent.parent
#: docs/img with ``make screenshots``, else a scratch folder (tests/screenshots.py)
IMG = screenshot_dir()

DEAL1 = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"
DEAL2 = "N:85.AKJ874.A65.Q7 KJ73.962.9.AKJ52 AQ4.QT5.KQJT.863 T962.3.87432.T94"
DEALS = {1: DEAL1, 2: DEAL2}

SCHEDULE = """
[session]
id = "club-2026-11-30"
event = "Monday pairs"

[pairs]
"1" = "Ann Lee - Bo Tran"
"2" = "Cy Ngo - Di Wu"
"3" = "Ed Ho - Fa Li"
"4" = "Gu Ma - Hu Yi"

[[round]]
number = 1
[round.tables]
"1" = { ns = 1, ew = 3, boards = [1] }
"2" = { ns = 2, ew = 4, boards = [2] }

[[round]]
number = 2
[round.tables]
"1" = { ns = 1, ew = 4, boards = [2] }
"2" = { ns = 2, ew = 3, boards = [1] }
"""


def script(board: int) -> BoardScript:
    s = clean_board(board)
    return BoardScript(board=board, deal=DEALS[board], calls=s.calls, trump=Suit.H,
                       declarer=Seat.S)


def pbn_deals() -> str:
    out = []
    for b, deal in DEALS.items():
        vul = ["None", "NS", "EW", "All"][[0, 1, 2, 3, 1, 2, 3, 0][(b - 1) % 8]]
        out.append(f'[Event "Monday pairs"]\n[Board "{b}"]\n[Dealer "{board_dealer(b)}"]\n'
                   f'[Vulnerable "{vul}"]\n[Deal "{deal}"]\n')
    return "\n".join(out)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "controller.cli", *args]


class Stack:
    """mosquitto, the controller, the relay and the vugraph as processes, on ``schedule``;
    ``relay_args`` added to the relay's (``--release live``)."""

    def __init__(self, tmp: Path, broker: Mosquitto, schedule: str = SCHEDULE,
                 relay_args: Sequence[str] = ()) -> None:
        self.tmp, self.broker, self.url = tmp, broker, broker.url
        (tmp / "deals.pbn").write_text(pbn_deals())
        (tmp / "session.toml").write_text(schedule, encoding="utf-8")
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.writers: dict[str, EventWriter] = {}
        self.sentinels = 0   # relay_took's marks, each its own
        self.start("controller", "controller", "--broker", self.url, "--deals",
                   str(tmp / "deals.pbn"), "--schedule", str(tmp / "session.toml"),
                   "--no-journal", "--status-interval", "1")
        self.start("relay", "broadcast", "--broker", self.url, "--schedule",
                   str(tmp / "session.toml"), "--store", str(tmp / "relay.sqlite"),
                   "--deals", str(tmp / "deals.pbn"), "--out", str(tmp / "out"), *relay_args)
        self.port = free_port()
        self.start("vugraph", "vugraph", "--broker", self.url, "--listen",
                   f"127.0.0.1:{self.port}")
        self.web = f"http://127.0.0.1:{self.port}"
        wait_until(self._web_up, 20, "the vugraph")
        self.public = Recorder(self.url, "public/#")
        self.bridge = Recorder(self.url, "bridge/#")
        wait_until(lambda: any(t == "public/session" for t in self.public.topics()), 20,
                 "the relay's session")
        wait_until(lambda: any(t == "bridge/controller/status" for t in self.bridge.topics()),
                 20, "the controller")

    def _web_up(self) -> bool:
        try:
            with urllib.request.urlopen(self.web + "/api/state", timeout=1) as r:
                return bool(json.load(r)["connected"])
        except OSError:
            return False

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        log = open(self.tmp / f"{name}.log", "wb")
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        p = subprocess.Popen(cli(*args), stdout=log, stderr=subprocess.STDOUT, cwd=ROOT,
                             env=env)
        self.procs[name] = p
        return p

    def log(self, name: str) -> str:
        return (self.tmp / f"{name}.log").read_text(errors="replace")

    def play(self, table: str, board: int, src: str | None = None) -> None:
        """Every event of a whole board at ``table``, then wait for its result."""
        key = src or f"pi-{table}"
        writer = self.writers.setdefault(key, EventWriter(key))
        n = len(self.bridge.seen)
        for ev in writer.board(script(board)):
            self.bridge.publish(f"bridge/{table}/event", ev)
        wait_until(lambda: any(t == f"bridge/{table}/result" and p and p.get("board") == board
                             for t, p, _ in self.bridge.seen[n:]), 30,
                 f"the result of board {board} at table {table}")
        # every relay running on the tables' topics has taken the last messages
        self.sentinels += 1
        relay_took(self, f"sentinel-{self.sentinels}-after-{table}-{board}",
                   *(name for name, p in self.procs.items()
                     if name in ("relay", "relay-next") and p.poll() is None))

    def get(self, path: str) -> Any:
        with urllib.request.urlopen(self.web + path, timeout=10) as r:
            return json.load(r)

    def stop(self) -> None:
        self.public.close()
        self.bridge.close()
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in self.procs.values():
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("broadcast-e2e")
    with Mosquitto(tmp / "broker") as broker:
        s = Stack(tmp, broker)
        try:
            yield s
        finally:
            s.stop()


def board_topics(stack: Stack) -> list[str]:
    """What of a board went public: every public topic but the session, what each table
    plays now (board and contract) and the commentary."""
    return [t for t in stack.public.topics() if t not in ("public/session", "public/commentary")
            and not t.endswith("/now")]


def released(stack: Stack, table: str, board: int, session: str = "club-2026-11-30") -> bool:
    with stack.public.lock:
        return any(t == f"public/{table}/board/{board}" and p.get("session") == session
                   for t, p, _ in stack.public.seen)


def test_1_round_one_releases_nothing_and_an_unscheduled_table_is_held(stack: Stack) -> None:
    stack.play("9", 1)                 # a table the movement does not name
    stack.play("1", 1)
    stack.play("2", 2)
    # the relay has read all three before anything is looked for: it refused table 9 and
    # holds board 1 at table 1 and board 2 at table 2
    wait_until(lambda: "movement does not name" in stack.log("relay"), 30,
               "the relay refusing table 9")
    wait_until(lambda: {(w["table"], w["board"]) for w in status(stack)["waiting"]}
               >= {("1", 1), ("2", 2)}, 30, "the relay holding boards 1 and 2")
    assert board_topics(stack) == []
    # a forged result for board 2 at table 1 (never played there): releases nothing
    refused = stack.log("relay").count("untrusted")
    stack.bridge.publish("bridge/1/result", {"v": 1, "table": "1", "board": 2,
                                             "dealer": "E", "vul": "NS", "contract": "4H",
                                             "declarer": "S", "tricks": 10, "score_ns": 620},
                         retain=True)
    wait_until(lambda: stack.log("relay").count("untrusted") > refused, 30,
               "the relay refusing the forgery")
    assert board_topics(stack) == []
    # each held board says which tables it waits for
    def waits_for() -> dict[tuple[str, int], list[str]]:
        return {(w["table"], w["board"]): w["waits_for"] for w in status(stack)["waiting"]}

    # (read until it holds: the relay records a table's board finished from the messages
    # after its result, which a loaded machine may deliver a moment after the sentinel)
    wait_until(lambda: {k: v for k, v in waits_for().items() if k in (("2", 2), ("1", 1))}
               == {("2", 2): ["1"], ("1", 1): ["2"]}, 30,
               "board 2 at table 2 waiting for table 1, board 1 at table 1 for table 2")
    # and says so in words to the operator
    text = operator(stack, "status").stdout
    assert "waits for table(s) 1 to finish it" in text and "board 2 at table 2:" in text
    # the operator cannot leak by accident: board 2 is not finished at table 1
    out = operator(stack, "release", "--board", "2", "--table", "2")
    assert out.returncode == 2 and "table(s) 1" in out.stderr and "--force" in out.stderr
    out = operator(stack, "release", "--board", "2")
    assert out.returncode == 2 and "--force" in out.stderr
    out = operator(stack, "release", "--board", "7")
    assert out.returncode == 2 and "not in session" in out.stderr
    # the audience sees what each table plays now (the board), nothing more: not even the
    # contract of a board still held (Law 16; the relay's --now-contract opts in)
    now = {t["table"]: t["now"] for t in stack.get("/api/state")["tables"]}
    assert now["1"]["board"] == 1 and now["1"].get("contract") is None
    assert now["1"].get("declarer") is None
    assert not {"auction", "current", "cards", "deal"} & set(now["1"])
    assert "9" not in now
    # the relay has taken all of it and gone through its release step since (a second
    # sentinel is taken only once the first left it idle): nothing released
    relay_took(stack, "sentinel-round-one-taken", "relay")
    relay_took(stack, "sentinel-round-one-released", "relay")
    assert board_topics(stack) == []


def relay_took(stack: Stack, mark: str, *relays: str) -> None:
    """A sentinel through the relays' own path: an alert naming the session ``mark``,
    published after everything before it; each relay in ``relays`` reports it once taken
    (``held: ... the controller runs session 'mark'``), so it has taken every earlier
    message. Another session's: kept apart in the store, never public."""
    stack.bridge.publish("bridge/9/alert", {"v": 1, "table": "9", "session": mark})
    def took(name: str) -> bool:
        return f"session {mark!r}" in stack.log(name)

    for name in relays:
        wait_until(functools.partial(took, name), 30, f"{name} taking the sentinel {mark}")


def operator(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cli("broadcast", *args, "--store", str(stack.tmp / "relay.sqlite")),
                          cwd=ROOT, capture_output=True, text=True, timeout=30)


def status(stack: Stack) -> Any:
    out = operator(stack, "status", "--json")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_2_round_two_releases_each_board_once_every_table_has_played_it(stack: Stack) -> None:
    stack.play("1", 2)
    wait_until(lambda: released(stack, "1", 2) and released(stack, "2", 2), 20, "board 2")
    assert not released(stack, "1", 1)
    stack.play("2", 1)
    wait_until(lambda: released(stack, "1", 1) and released(stack, "2", 1), 20, "board 1")
    # board 1 released at the tables that played it: table 9's board 1, read long before
    # (test 1), would have gone out with them
    assert not any(t.startswith("public/9/") for t in stack.public.topics())
    view = [p for t, p, _ in stack.public.seen if t == "public/1/board/1"][-1]
    assert view["deal"] == DEAL1 or view["deal"].endswith(DEAL1.split(":")[1])
    assert view["session"] == "club-2026-11-30" and view["status"] == "complete"
    assert len(view["cards"]) == 52 and view["result"]["contract"] == "4H"
    feeds = [p for t, p, _ in stack.public.seen if t == "public/1/feed"]
    assert feeds and all(p["session"] == "club-2026-11-30" for p in feeds)


def test_3_the_operator_cannot_release_a_table_outside_the_movement(stack: Stack) -> None:
    out = operator(stack, "release", "--board", "1", "--table", "9")
    assert out.returncode == 2 and "table 9 does not play board 1" in out.stderr
    # the refusal wrote nothing for the relay to act on (no wait for a publication that
    # would not come: the store the relay reads has no decision for table 9)
    now = status(stack)
    assert not any(m["table"] in ("9", "*") for m in now["manual"])
    assert any(w["table"] == "9" for w in now["waiting"])
    assert not any(t.startswith("public/9/") for t in stack.public.topics())


def test_4_live_lin_and_pbn_read_back_in_endplay(stack: Stack) -> None:
    from endplay.parsers import lin as elin
    from endplay.parsers import pbn as epbn

    for table in ("1", "2"):
        with open(stack.tmp / "out" / f"table-{table}.lin") as fp:
            lin = {b.board_num: b for b in elin.load(fp)}
        with open(stack.tmp / "out" / f"table-{table}.pbn") as fp:
            pbn = {b.board_num: b for b in epbn.load(fp)}
        assert sorted(lin) == sorted(pbn) == [1, 2]
        for number in (1, 2):
            view = stack.get(f"/api/table/{table}")["boards"][number - 1]
            s = script(number)
            for b in (lin[number], pbn[number]):
                assert _hands(b.deal.to_pbn()) == _hands(DEALS[number])
                assert [_call(c) for c in b.auction] == list(s.calls)
                cards = [str(c.suit.abbr if hasattr(c.suit, "abbr") else c.suit) for t in b.play
                         for c in ([t] if not isinstance(t, list | tuple) else t)]
                assert len(cards) == 52
                assert b.contract.level == 4 and b.contract.result == \
                    view["result"]["tricks"] - 10


def _hands(pbn: str) -> dict[str, str]:
    first, rest = pbn.split(":")
    order = "NESW"
    i = order.index(first)
    return {order[(i + k) % 4]: h for k, h in enumerate(rest.split())}


def _call(c: Any) -> str:
    from endplay.types import Penalty

    if getattr(c, "penalty", None) == Penalty.passed or str(c).lower().startswith("p"):
        return "Pass"
    text = str(c)
    for sym, letter in (("♠", "S"), ("♥", "H"), ("♦", "D"), ("♣", "C")):
        text = text.replace(sym, letter)
    return text


def test_5_the_vugraph_shows_the_released_board(stack: Stack, chromium_browser: Any) -> None:
    page = chromium_browser.new_page(viewport={"width": 1200, "height": 900})
    try:
        page.goto(stack.web + "/")
        page.wait_for_selector("#tables tr[data-table='1']")
        assert page.locator("#tables tr[data-table='9']").count() == 0
        page.screenshot(path=str(IMG / "vugraph-tables.png"))
        page.goto(stack.web + "/#/table/1/1")
        page.wait_for_selector("#diagram #hand-N")
        north = page.locator("#hand-N").inner_text()
        assert "Q 10 5" in north.replace("\n", " ") and "North" in north
        # each player of the pair at their own seat
        assert "Ann Lee" in page.locator("#hand-N").inner_text()
        assert "Bo Tran" in page.locator("#hand-S").inner_text()
        assert "Bo Tran" not in page.locator("#hand-N").inner_text()
        cells = [c.strip() for c in page.locator("#auction tbody td").all_inner_texts()]
        assert [c for c in cells if c] == ["Pass", "Pass", "1♥", "Pass", "4♥", "Pass", "Pass",
                                           "Pass"]
        assert "4♥ by South" in page.locator("#result").inner_text()
        assert "11 tricks" in page.locator("#result").inner_text()
        assert page.locator("#tricks tr").count() == 13
        # a finished board opens on the whole deal
        assert "Trick 0 / 13" in page.locator("#step").inner_text()
        page.screenshot(path=str(IMG / "vugraph-table.png"), full_page=True)
        page.click("#last")
        assert "Trick 13 / 13" in page.locator("#step").inner_text()
        assert page.locator(".hand .gone").count() == 52
        # step-through: back to the start, then trick by trick
        page.click("#first")
        assert "Trick 0 / 13" in page.locator("#step").inner_text()
        assert page.locator("#hand-N .gone").count() == 0
        page.click("#next")
        assert "Trick 1 / 13" in page.locator("#step").inner_text()
        first = page.locator("#felt .c").all_inner_texts()
        assert len(first) == 4
        assert page.locator(".hand .gone").count() == 4
        page.click("#next")
        page.click("#next")
        assert "Trick 3 / 13" in page.locator("#step").inner_text()
        assert page.locator(".hand .gone").count() == 12
        page.click("#prev")
        assert "Trick 2 / 13" in page.locator("#step").inner_text()
        page.screenshot(path=str(IMG / "vugraph-step.png"), full_page=True)
        # the board across tables, with double dummy and par
        page.goto(stack.web + "/#/board/1")
        page.wait_for_selector("#results tbody tr")
        assert page.locator("#results tbody tr").count() == 2     # tables 1 and 2
        page.wait_for_selector("#dd, #dd-absent")
        page.screenshot(path=str(IMG / "vugraph-board.png"), full_page=True)
        # other languages
        page.goto(stack.web + "/?lang=vi#/table/1/1")
        page.wait_for_selector("#hand-N")
        assert "Bắc" in page.locator("#hand-N").inner_text()
        page.goto(stack.web + "/?lang=zh#/table/1/1")
        page.wait_for_selector("#hand-N")
        assert "北" in page.locator("#hand-N").inner_text()
        page.screenshot(path=str(IMG / "vugraph-zh.png"), full_page=True)
    finally:
        page.close()


def test_6_a_late_joiner_sees_the_board_as_released(stack: Stack, chromium_browser: Any) -> None:
    """A new page (and a new vugraph process) after release: the retained views are there."""
    port = free_port()
    late = stack.start("vugraph-late", "vugraph", "--broker", stack.url, "--listen",
                       f"127.0.0.1:{port}")
    try:
        page = chromium_browser.new_page(viewport={"width": 390, "height": 844})
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _up(url), 20, "the late vugraph")
        page.goto(url + "/#/table/2")
        page.wait_for_selector("#hand-S")
        assert "Table 2" in page.locator("#board-title").inner_text()
        assert page.locator("#result").count() == 1
        page.screenshot(path=str(IMG / "vugraph-phone.png"), full_page=True)
        page.close()
    finally:
        late.send_signal(signal.SIGINT)
        late.wait(10)


def _up(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/api/state", timeout=1) as r:
            return bool(json.load(r)["connected"])
    except OSError:
        return False


def test_7_the_vugraph_shows_only_what_the_relay_released(stack: Stack) -> None:
    """Table 5 of another session and table 9 before release never reached it: every
    table it shows is of the session, and its boards are the released ones."""
    state = stack.get("/api/state")
    assert {t["table"] for t in state["tables"]} == {"1", "2"}
    assert all(t["snapshot"]["session"] == "club-2026-11-30" for t in state["tables"])


def test_8_two_relays_coexist_and_ctrl_c_ends_cleanly(stack: Stack) -> None:
    second = stack.start("relay2", "broadcast", "--broker", stack.url, "--schedule",
                         str(stack.tmp / "session.toml"), "--store",
                         str(stack.tmp / "relay2.sqlite"), "--public", "public2")
    w = Recorder(stack.url, "public2/#")
    try:
        wait_until(lambda: "public2/session" in w.topics(), 20, "the second relay")
        # both relays take a message sent after the second one connected: had the second
        # one's connection pushed the first off the broker (one client id for two), the
        # first would have said "retrying" before anything reached it again
        relay_took(stack, "sentinel-two-relays", "relay", "relay2")
        assert stack.procs["relay"].poll() is None and second.poll() is None
        assert "retrying" not in stack.log("relay2") and "retrying" not in stack.log("relay")
    finally:
        w.close()
        second.send_signal(signal.SIGINT)
        assert second.wait(10) == 0
    assert "Traceback" not in stack.log("relay2")


def test_9_a_relay_left_running_publishes_nothing_of_the_next_session(stack: Stack) -> None:
    """The controller restarted with the next session's file under the morning's relay:
    the next session's board 1, finished at every table, publishes nothing (the morning
    finished board 1 too); the next session's own relay releases it."""
    nxt = stack.tmp / "next.toml"
    nxt.write_text(SCHEDULE.replace("club-2026-11-30", "club-2026-12-07"))
    controller = stack.procs["controller"]
    controller.send_signal(signal.SIGINT)
    assert controller.wait(10) == 0
    n = len(stack.public.seen)
    stack.start("controller-next", "controller", "--broker", stack.url, "--deals",
                str(stack.tmp / "deals.pbn"), "--schedule", str(nxt), "--no-journal",
                "--status-interval", "1")
    wait_until(lambda: any(t == "bridge/controller/status" and p and
                         p.get("session") == "club-2026-12-07"
                         for t, p, _ in stack.bridge.seen), 20, "the next session's controller")
    # the next session's relay, on the same public topics as the morning's
    stack.start("relay-next", "broadcast", "--broker", stack.url, "--schedule", str(nxt),
                "--store", str(stack.tmp / "relay-next.sqlite"), "--deals",
                str(stack.tmp / "deals.pbn"))
    wait_until(lambda: any(t == "public/session" and p.get("session") == "club-2026-12-07"
                         for t, p, _ in stack.public.seen[n:]), 20, "the next session's relay")
    # what table 1 plays now, while its board is held: the board, no contract, no card
    stack.play("1", 1, src="pi-1-next")
    wait_until(lambda: any(t == "public/1/now" and p.get("session") == "club-2026-12-07"
                         and p.get("board") == 1 and p.get("phase") == "play"
                         for t, p, _ in stack.public.seen[n:]), 20, "table 1 playing now")
    assert not any(t == "public/1/now" and (p.get("contract") or p.get("declarer"))
                   for t, p, _ in stack.public.seen[n:])
    assert not any(t.startswith("public/1/board/") for t, _, _ in stack.public.seen[n:])
    stack.play("2", 2, src="pi-2-next")
    stack.play("1", 2, src="pi-1-next")
    stack.play("2", 1, src="pi-2-next")
    wait_until(lambda: all(released(stack, t, b, "club-2026-12-07") for t in ("1", "2")
                         for b in (1, 2)), 20, "the next session's boards, by its own relay")
    # the morning relay has taken every result of the next session (a first sentinel
    # after them) and gone through its release step since (a second one, taken only once
    # the first left the relay idle); what it published then reached the broker before a
    # commentary line of the next session's relay, which the recorder sees after it
    relay_took(stack, "sentinel-next-session-taken", "relay")
    relay_took(stack, "sentinel-next-session-released", "relay")
    fence = "The next session's boards are out"
    out = subprocess.run(cli("broadcast", "comment", fence, "--store",
                             str(stack.tmp / "relay-next.sqlite")), cwd=ROOT,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    wait_until(lambda: any(t == "public/commentary" and p.get("text") == fence
                           for t, p, _ in stack.public.snapshot()[n:]), 20,
               "the next session's relay's commentary")
    later = [(t, p) for t, p, _ in stack.public.seen[n:] if t != "public/session"]
    assert later and all(p.get("session") == "club-2026-12-07" for _, p in later), \
        "the morning's relay published the next session"
    assert "runs session 'club-2026-12-07'" in stack.log("relay")


def test_10_round_without_a_movement_refuses_to_start(tmp_path: Path) -> None:
    out = subprocess.run(cli("broadcast", "--release", "round", "--store",
                             str(tmp_path / "s.sqlite")), cwd=ROOT, capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 2 and "refusing to start" in out.stderr
    assert "Traceback" not in out.stderr


def test_11_a_late_joiner_sees_a_board_in_progress_under_live_release(
        stack: Stack, chromium_browser: Any) -> None:
    """``--release live`` (an event where no board is shared): a page opened mid-board
    shows the calls and cards so far, and no hand."""
    live = stack.tmp / "live.toml"
    live.write_text('[session]\nid = "exhibition"\nevent = "Exhibition match"\n'
                    '[tables]\n"5" = [1]\n')
    # the exhibition's own controller (its own topic root), which names its session
    ctl = stack.start("controller-live", "controller", "--broker", stack.url, "--root", "exh",
                      "--deals", str(stack.tmp / "deals.pbn"), "--schedule", str(live),
                      "--no-journal", "--status-interval", "1")
    relay = stack.start("relay-live", "broadcast", "--broker", stack.url, "--schedule",
                        str(live), "--release", "live", "--store",
                        str(stack.tmp / "live.sqlite"), "--public", "publive",
                        "--root", "exh")
    port = free_port()
    web = stack.start("vugraph-live", "vugraph", "--broker", stack.url, "--listen",
                      f"127.0.0.1:{port}", "--public", "publive")
    url = f"http://127.0.0.1:{port}"
    try:
        w = Recorder(stack.url, "publive/#")
        ctl_status = Recorder(stack.url, "exh/controller/status")
        wait_until(lambda: "publive/session" in w.topics(), 20, "the live relay")
        wait_until(lambda: any(p and p.get("status") == "online" for _, p, _ in ctl_status.seen),
                 20, "the exhibition's controller")   # subscribed: no event is lost
        ctl_status.close()
        wait_until(lambda: _up(url), 20, "the live vugraph")
        events = list(EventWriter("pi-5").board(script(1)))
        for ev in events[:1 + 104 + 8 + 6]:        # the auction and six cards
            stack.bridge.publish("exh/5/event", ev)
        wait_until(lambda: "publive/5/snapshot" in w.topics() and
                 len([p for t, p, _ in w.seen if t == "publive/5/snapshot"][-1]["cards"]) == 6,
                 20, "six cards released live")
        w.close()
        page = chromium_browser.new_page(viewport={"width": 1200, "height": 900},
                                         bypass_csp=True)   # wait_for_function evaluates
        page.goto(url + "/#/table/5")
        page.wait_for_selector("#tricks tr")
        assert page.locator("#tricks tr").count() == 2
        assert page.locator("#hidden").count() == 1          # no hand before the end
        cells = [c for c in page.locator("#auction tbody td").all_inner_texts() if c.strip()]
        assert len(cells) == 8
        assert "Exhibition match" in page.locator("#event").inner_text()
        page.screenshot(path=str(IMG / "vugraph-live.png"), full_page=True)
        # the board goes on: the open page follows it (SSE)
        for ev in events[1 + 104 + 8 + 6:1 + 104 + 8 + 8]:
            stack.bridge.publish("exh/5/event", ev)
        page.wait_for_function("document.querySelectorAll('#tricks tr').length === 2 && "
                               "document.querySelector('#step').innerText.includes('/ 2') && "
                               "document.querySelectorAll('#tricks tr')[1].children.length "
                               "=== 6", timeout=15000)
        page.close()
    finally:
        for p in (relay, web, ctl):
            p.send_signal(signal.SIGINT)
            p.wait(10)


def _no_horizontal_scroll(page: Any) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"{width} px wide"


@pytest.mark.parametrize("viewport", [{"width": 360, "height": 740},
                                      {"width": 1280, "height": 800}], ids=["phone", "laptop"])
def test_12_one_session_at_a_time_live_after_stepping_keyboard_and_phone(
        stack: Stack, chromium_browser: Any, viewport: dict[str, int]) -> None:
    """After test 9 the public topics hold two sessions: the page shows the relay's
    current one and never mixes them; opening a finished board, stepping and going back
    home leaves the page live (a commentary line posted afterwards shows at once)."""
    # bypass_csp: wait_for_function evaluates its text, which the page's CSP forbids
    page = chromium_browser.new_page(viewport=viewport, bypass_csp=True)
    try:
        page.goto(stack.web + "/")
        page.wait_for_selector("#tables tr[data-table='1']")
        assert page.locator("#session").input_value() == "club-2026-12-07"
        assert sorted(page.locator("#session option").all_inner_texts()) == [
            "club-2026-11-30", "club-2026-12-07"]
        page.wait_for_selector("#ranking tbody tr")
        assert page.locator("#ranking tbody tr").count() == 4        # pairs 1-4
        _no_horizontal_scroll(page)
        # a board across tables: the next session's results only
        page.goto(stack.web + "/#/board/1")
        page.wait_for_selector("#results tbody tr")
        assert page.locator("#results tbody tr").count() == 2
        assert "Ann Lee - Bo Tran" in page.locator("#results").inner_text()   # the names
        lead = page.locator("#results tbody tr").first.locator("td").nth(4).inner_text()
        assert lead.strip()[:1] in "♠♥♦♣"                                   # the lead
        _no_horizontal_scroll(page)
        summary = stack.get("/api/board/1")
        assert summary["session"] == "club-2026-12-07" and len(summary["results"]) == 2
        morning = stack.get("/api/board/1?session=club-2026-11-30")
        assert morning["session"] == "club-2026-11-30" and len(morning["results"]) == 2
        # a finished board, stepped with the keyboard, double dummy per card
        page.goto(stack.web + "/#/table/1/1")
        page.wait_for_selector("#step")
        assert "Trick 0 / 13" in page.locator("#step").inner_text()
        _no_horizontal_scroll(page)
        page.keyboard.press("ArrowRight")
        assert "Trick 1 / 13" in page.locator("#step").inner_text()
        page.keyboard.press("End")
        assert "Trick 13 / 13" in page.locator("#step").inner_text()
        assert "NS 11" in page.locator("#running").inner_text()
        page.keyboard.press("Home")
        assert "Trick 0 / 13" in page.locator("#step").inner_text()
        page.keyboard.press("ArrowRight")
        page.wait_for_selector("#dd-now", timeout=60000)            # endplay's DDS
        assert page.locator("#tricks sub.dd").count() == 52
        # the diagram's step buttons are on screen with the diagram (a phone too)
        box = page.locator("#next").bounding_box()
        assert box is not None and box["y"] < viewport["height"] * 1.6
        # back home: the page still follows the broadcast
        page.goto(stack.web + "/#/")
        page.wait_for_selector("#tables")
        text = f"Board 2: a squeeze at table 1 ({viewport['width']} px)"
        out = subprocess.run(cli("broadcast", "comment", text, "--store",
                                 str(stack.tmp / "relay-next.sqlite")), cwd=ROOT,
                             capture_output=True, text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        page.wait_for_function("document.querySelector('#commentary').innerText.includes("
                               f"{json.dumps(text)})", timeout=15000)
        _no_horizontal_scroll(page)
        page.screenshot(path=str(IMG / f"vugraph-home-{viewport['width']}.png"), full_page=True)
        # another session, chosen: its own boards
        page.select_option("#session", "club-2026-11-30")
        page.wait_for_function("!document.querySelector('#commentary').innerText")
        assert page.locator("#session").input_value() == "club-2026-11-30"
    finally:
        page.close()
