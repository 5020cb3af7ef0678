"""The broadcast relay: the gate between the controller's messages and the public, the
board views, the LIN/PBN files it writes (read back in endplay), and the command."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from boardevents import BoardScript, EventWriter, clean_board
from broker import Mosquitto
from mqttwatch import Recorder, wait_until

from controller.broadcast.cli import main
from controller.broadcast.gate import Gate, GatePolicy
from controller.broadcast.operator import status_text
from controller.broadcast.relay import Relay
from controller.broadcast.store import HeldStore
from controller.engine import Engine
from controller.session.schedule import parse_movement

DEAL = "N:AQ4.QT5.KQJT.863 KJ73.962.9.AKJ52 85.AKJ874.A65.Q7 T962.3.87432.T94"

TWO_TABLES = {
    "session": {"id": "club-1", "event": "Monday pairs"},
    "pairs": {"1": "Ann Lee - Bo Tran", "2": "Cy Ngo - Di Wu", "3": "Ed Ho - Fa Li",
              "4": "Gu Ma - Hu Yi"},
    "round": [
        {"tables": {"1": {"ns": 1, "ew": 3, "boards": [1]},
                    "2": {"ns": 2, "ew": 4, "boards": [2]}}},
        {"tables": {"1": {"ns": 1, "ew": 4, "boards": [2]},
                    "2": {"ns": 2, "ew": 3, "boards": [1]}}},
    ],
}


def script(board: int, tricks_auto: bool = True) -> BoardScript:
    s = clean_board(board)
    return s


def board_messages(engine: Engine, table: str, board: int, src: str | None = None
                   ) -> list[tuple[str, dict[str, Any]]]:
    """Everything the controller publishes for a whole board at ``table``."""
    writer = EventWriter(src or f"pi-{table}-{board}")
    out: list[tuple[str, dict[str, Any]]] = []
    for ev in writer.board(script(board)):
        for o in engine.handle(f"bridge/{table}/event", ev):
            out.append((o.topic, o.payload))
    return out


ONLINE = ("bridge/controller/status", {"v": 1, "status": "online", "session": "club-1"})


def session_engine(session: str = "club-1") -> Engine:
    """The controller's Engine as ``--session`` makes it: its messages name the session."""
    engine = Engine()
    engine.session_id = session
    return engine


def make_relay(tmp_path: Path, now_contract: bool = False, **kw: Any
               ) -> tuple[Relay, HeldStore]:
    session = parse_movement(TWO_TABLES, "test")
    store = HeldStore(tmp_path / "relay.sqlite")
    from controller.broadcast.view import session_views
    info, sinfo = session_views(session)
    relay = Relay(Gate(GatePolicy(session.id, session.movement, **kw)), store=store,
                  info=info, session_info=sinfo, out=tmp_path / "out",
                  now_contract=now_contract)
    return relay, store


def feed(relay: Relay, msgs: list[tuple[str, dict[str, Any]]], now: float,
         retained: bool = False) -> list[tuple[str, dict[str, Any], bool]]:
    """What of boards the relay publishes (``now``, what a table plays, aside)."""
    out = []
    for topic, payload in msgs:
        relay.take(topic, payload, retained, now)
        out += [m for m in relay.release(now) if not m[0].endswith("/now")]
    return out


def test_a_board_waits_for_every_table_of_the_session(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    # round 1: table 1 plays board 1, table 2 board 2: nothing goes out
    assert feed(relay, board_messages(engine, "1", 1), 1) == []
    assert feed(relay, board_messages(engine, "2", 2), 2) == []
    # round 2: table 1 plays board 2: board 2 now finished everywhere
    out = feed(relay, board_messages(engine, "1", 2), 3)
    topics = {t for t, _, _ in out}
    assert "public/2/board/2" in topics and "public/1/board/2" in topics
    assert not any("/board/1" in t for t in topics)
    view = [p for t, p, _ in out if t == "public/1/board/2"][-1]
    assert view["deal"] is not None and view["result"]["contract"] == "4H"
    assert view["session"] == "club-1" and view["event"] == "Monday pairs"
    assert view["players"] == {"ns": "Ann Lee - Bo Tran", "ew": "Gu Ma - Hu Yi"}
    assert len(view["cards"]) == 52 and view["round"] == 2
    assert all(p.get("session") == "club-1" for t, p, _ in out if t.endswith("/feed"))
    out = feed(relay, board_messages(engine, "2", 1), 4)
    assert any(t == "public/1/board/1" for t, _, _ in out)
    assert store.status("club-1")["held"] == []
    store.close()


def test_an_unscheduled_table_is_held_until_released_by_hand(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    assert feed(relay, board_messages(engine, "9", 1), 1) == []
    for msgs in (board_messages(engine, "1", 1), board_messages(engine, "2", 1)):
        out = feed(relay, msgs, 2)
    assert not any(t.startswith("public/9/") for t, _, _ in out)
    status = store.status("club-1")
    assert any(h["table"] == "9" for h in status["held"])
    assert any(r["table"] == "9" and "movement does not name" in r["reason"]
               for r in status["reports"])
    store.operator("club-1", "release", 1, "9")
    store.sync_manual(relay.gate)
    assert any(t == "public/9/board/1" for t, _, _ in relay.release(3))
    store.close()


def test_the_last_sessions_retained_result_releases_nothing(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path, release="board")
    old = session_engine("club-0")
    msgs = board_messages(old, "1", 1)
    retained = [(t, p) for t, p in msgs if t.endswith(("/state", "/result"))][-2:]
    relay.take(*ONLINE, True, 0)
    assert feed(relay, retained, 1, retained=True) == []
    # this session's board 1 starts at table 1: its first calls stay held
    live = board_messages(session_engine(), "1", 1, src="pi-new")
    cut = next(i for i, (t, p) in enumerate(live) if t.endswith("/feed") and p["kind"] == "card")
    assert feed(relay, live[:cut], 2) == []
    store.close()


def test_a_restart_keeps_everything(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    feed(relay, board_messages(engine, "1", 1), 1)
    store.close()
    again, store = make_relay(tmp_path)
    again.take(*ONLINE, False, 0)
    out = feed(again, board_messages(engine, "2", 1), 2)
    assert any(t == "public/1/board/1" for t, _, _ in out)
    store.close()


def test_lin_and_pbn_files_read_back_in_endplay(tmp_path: Path) -> None:
    endplay_lin = pytest.importorskip("endplay.parsers.lin")
    from endplay.parsers import pbn as endplay_pbn

    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    for table, board in (("1", 1), ("2", 2), ("1", 2), ("2", 1)):
        feed(relay, board_messages(engine, table, board), 1)
    store.close()
    for table in ("1", "2"):
        views = {b: v for (t, b), v in relay.views.items() if t == table}
        with open(tmp_path / "out" / f"table-{table}.pbn") as fp:
            pbn_boards = endplay_pbn.load(fp)
        with open(tmp_path / "out" / f"table-{table}.lin") as fp:
            lin_boards = endplay_lin.load(fp)
        for boards in (pbn_boards, lin_boards):
            assert len(boards) == 2
            for b in boards:
                view = views[b.board_num]
                assert b.deal.to_pbn().split(":")[1] == view["deal"].split(":")[1] or \
                    _same_deal(b.deal.to_pbn(), view["deal"])
                assert [str(c) for c in b.auction][:len(view["calls"])] and \
                    len(b.auction) == len(view["calls"])
                played = [str(c) for t in b.play for c in ([t] if not hasattr(t, "__iter__")
                                                          else t)]
                assert len(played) == 52
                assert b.contract is not None and str(b.contract.level) == "4"
                assert b.contract.result == view["result"]["tricks"] - 10


def _same_deal(a: str, b: str) -> bool:
    def hands(pbn: str) -> dict[str, str]:
        first, rest = pbn.split(":")
        order = "NESW"
        i = order.index(first)
        return {order[(i + k) % 4]: h for k, h in enumerate(rest.split())}
    return hands(a) == hands(b)


def test_the_command_refuses_round_without_a_movement(capsys: pytest.CaptureFixture[str],
                                                       tmp_path: Path) -> None:
    assert main(["--release", "round", "--store", str(tmp_path / "s")]) == 2
    assert "refusing to start" in capsys.readouterr().err
    assert main(["--store", str(tmp_path / "s")]) == 2          # round is the default
    assert main(["--broker", "ftp://x", "--release", "live"]) == 2
    assert main(["--delay", "-3", "--release", "live"]) == 2
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b"\x00\xff\x00")
    assert main(["--schedule", str(bad)]) == 2
    assert "not TOML" in capsys.readouterr().err


def test_operator_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = HeldStore(tmp_path / "r.sqlite")
    store.set_session("club-1")
    store.close()
    assert main(["release", "--store", str(tmp_path / "r.sqlite"), "--board", "3",
                 "--table", "9"]) == 0
    assert main(["hold", "--store", str(tmp_path / "r.sqlite"), "--board", "4"]) == 0
    capsys.readouterr()
    assert main(["status", "--store", str(tmp_path / "r.sqlite"), "--json"]) == 0
    out = capsys.readouterr().out
    status = json.loads(out[out.index("{"):])
    assert {"table": "9", "board": 3, "action": "release"} in status["manual"]
    assert {"table": "*", "board": 4, "action": "hold"} in status["manual"]
    assert main(["status", "--store", str(tmp_path / "r.sqlite")]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == "Session club-1"
    assert "  board 3 at table 9: release" in text
    assert "  board 4 at every table: hold" in text
    assert "Held: nothing" in text and "Finished: no board yet" in text
    assert main(["status", "--store", str(tmp_path / "none.sqlite")]) == 2


def test_the_status_says_what_is_held_and_why_in_words() -> None:
    status = {
        "session": "club-1",
        "held": [{"table": "2", "board": 3, "items": 14}, {"table": "7", "board": 3,
                                                            "items": 1},
                 {"table": "12", "board": None, "items": 2}],
        "waiting": [{"table": "2", "board": 3, "waits_for": ["4", "5"]},
                    {"table": "7", "board": 3, "waits_for": [], "why": "not in the movement"},
                    {"table": "12", "board": None}],
        "finished": ["1/1", "1/2", "1/3", "1/5", "10/1", "2/1"],
        "manual": [], "reports": [{"table": "7", "board": 3, "reason": "table 7 does not "
                                   "play board 3"}]}
    assert status_text(status).splitlines() == [
        "Session club-1",
        "Held (not yet shown to the audience):",
        "  board 3 at table 2: 14 items; waits for table(s) 4, 5 to finish it",
        "  board 3 at table 7: 1 item; not in the movement",
        "  table 12 (no board yet): 2 items",
        "Finished:",
        "  table 1: boards 1-3, 5",
        "  table 2: board 1",
        "  table 10: board 1",
        "Reports:",
        "  table 7 board 3: table 7 does not play board 3",
        "Refused: nothing"]


def test_live_release_gives_a_snapshot_of_the_board_in_progress(tmp_path: Path) -> None:
    """``--release live`` (explicit): a late joiner's snapshot is the board so far, and
    never the hands (they come with the result)."""
    relay, store = make_relay(tmp_path, release="live", delay=0)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    msgs = board_messages(engine, "1", 1)
    cut = [i for i, (t, p) in enumerate(msgs) if t.endswith("/feed") and p["kind"] == "card"][5]
    out = feed(relay, msgs[:cut], 1)
    snap = [p for t, p, _ in out if t == "public/1/snapshot"][-1]
    assert snap["status"] == "playing" and snap["deal"] is None
    assert len(snap["calls"]) == 8 and 0 < len(snap["cards"]) < 52
    store.close()


def test_irregularities_go_out_with_their_laws_and_the_call_or_card(tmp_path: Path) -> None:
    """T08: East's established revoke; the alert is held with the board, then the view
    carries it (code, Law, text in three languages) and the adjusted result."""
    from boardevents import t08_revoke

    session = parse_movement({"session": {"id": "s"}, "tables": {"7": [10]}}, "test")
    store = HeldStore(tmp_path / "r.sqlite")
    relay = Relay(Gate(GatePolicy(session.id, session.movement)), store=store)
    relay.take(ONLINE[0], {**ONLINE[1], "session": "s"}, False, 0)
    engine = session_engine("s")
    msgs = []
    for ev in EventWriter("pi-7").board(t08_revoke()):
        msgs += [(o.topic, o.payload) for o in engine.handle("bridge/7/event", ev)]
    out = feed(relay, msgs, 1)
    view = [p for t, p, _ in out if t == "public/7/board/10"][-1]
    revoke = [i for i in view["irregularities"] if i["code"] == "REVOKE"]
    assert revoke and revoke[0]["law"].startswith("6") and set(revoke[0]["text"]) == \
        {"en", "vi", "zh"}
    assert view["result"]["tricks"] == 11 and view["result"]["score_ns"] == 650
    assert any(t == "public/7/alert" for t, _, _ in out)
    store.close()


def test_a_result_that_contradicts_the_tables_state_finishes_nothing(tmp_path: Path) -> None:
    session = parse_movement({"session": {"id": "s"}, "tables": {"1": [1]}}, "test")
    gate = Gate(GatePolicy(session.id, session.movement))
    gate.controller_status(None, {"status": "online", "session": "s"})
    gate.state("1", {"table": "1", "board": 1, "phase": "play", "session": "s"},
               retained=False, now=0)
    gate.offer("1", "feed", {"board": 1, "kind": "card"}, 0)
    gate.state("1", {"table": "1", "board": 1, "phase": "complete", "contract": "4H",
                     "declarer": "S", "session": "s"}, retained=False, now=1)
    gate.result("1", {"table": "1", "board": 1, "contract": "3NT", "declarer": "S",
                      "tricks": 9, "score_ns": 400, "session": "s"}, now=1)
    assert gate.due(10) == []
    assert any("contract" in r.reason for r in gate.reports.values())


def test_a_broken_store_is_an_error_not_a_traceback(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"\x00garbage" * 200)
    assert main(["status", "--store", str(bad)]) == 2
    sched = tmp_path / "s.toml"
    sched.write_text('[tables]\n"1" = [1]\n')
    assert main(["--schedule", str(sched), "--store", str(bad)]) == 2
    assert "store" in capsys.readouterr().err


def test_the_session_files_session_object_is_taken_as_it_is() -> None:
    """The session branch's ``Session`` (``id``, ``event``, ``movement``, ``competitor``)
    drives the gate and the views with no adapter."""
    from dataclasses import dataclass as dc

    from controller.broadcast.view import session_views

    @dc(frozen=True)
    class Competitor:
        number: int
        players: tuple[str, ...] = ()
        name: str = ""

    movement = parse_movement(TWO_TABLES, "t").movement

    class Session:
        id = "s-1"
        event = "Club"

        def __init__(self) -> None:
            self.movement = movement

        def competitor(self, number: int) -> Competitor:
            return Competitor(number, ("Ann", "Bo") if number == 1 else ())

    session = Session()
    policy = GatePolicy.for_session(session)
    assert policy.session_id == "s-1" and policy.movement is movement
    info, extra = session_views(session)
    assert info[("1", 1)]["players"] == {"ns": "Ann - Bo"}
    assert extra == {"event": "Club", "scoring": "MP"}


def test_a_call_the_director_was_called_for_reads_back_with_its_note(tmp_path: Path) -> None:
    """LIN ``an`` (and the PBN auction note) for a call with an irregularity: endplay
    still reads the same auction, play and result."""
    pytest.importorskip("endplay")
    from endplay.parsers import lin as elin
    from endplay.parsers import pbn as epbn

    from controller.broadcast.view import write_table_files

    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    for table, board in (("1", 1), ("2", 1)):
        feed(relay, board_messages(engine, table, board), 1)
    store.close()
    view = json.loads(json.dumps(relay.views[("1", 1)]))
    view["calls"][2][2] = 1
    view["irregularities"] = [{"id": 1, "code": "INSUFFICIENT_BID", "law": "27",
                               "status": "resolved",
                               "text": {"en": "Law 27: insufficient bid | accepted"}}]
    write_table_files(tmp_path / "x", "1", [view])
    lin_text = (tmp_path / "x" / "table-1.lin").read_text()
    # an explained call, not an alerted one (controller.formats.lin)
    assert "mb|1H|an|Law 27: insufficient bid / accepted|" in lin_text
    for parser, name in ((elin, "table-1.lin"), (epbn, "table-1.pbn")):
        with open(tmp_path / "x" / name) as fp:
            (b,) = parser.load(fp)
        assert len(b.auction) == len(view["calls"]) and len(b.play) == 52
        assert b.contract.result == 1


def test_live_files_carry_pass_scoring_site_date_and_each_player_at_their_seat(
        tmp_path: Path) -> None:
    """A passed-out board is ``[Contract "Pass"]``; Event, Site, Date and Scoring are
    filled; LIN ``pn`` and PBN's seats name each player of a pair at their own seat."""
    from controller.broadcast.view import write_table_files

    view = {"v": 1, "session": "s", "table": "1", "board": 1, "dealer": "N", "vul": "None",
            "deal": DEAL, "calls": [[s, "Pass", None] for s in "NESW"], "cards": [],
            "irregularities": [], "claim": None, "status": "complete",
            "result": {"table": "1", "board": 1, "contract": "Pass", "score_ns": 0,
                       "tricks": None, "tricks_played": None},
            "event": "Monday pairs", "site": "Hanoi Bridge Club", "date": "2026.12.01",
            "scoring": "MP", "players": {"ns": "Ann Lee - Bo Tran", "ew": "Team Cy"}}
    write_table_files(tmp_path, "1", [view])
    pbn = (tmp_path / "table-1.pbn").read_text()
    for tag in ('[Contract "Pass"]', '[Scoring "MP"]', '[Site "Hanoi Bridge Club"]',
                '[Date "2026.12.01"]', '[Event "Monday pairs"]', '[North "Ann Lee"]',
                '[South "Bo Tran"]', '[East "Team Cy"]'):
        assert tag in pbn, tag
    assert '[West "Team Cy"]' not in pbn
    lin = (tmp_path / "table-1.lin").read_text()
    # LIN's seats: South, West, North, East
    assert "pn|Bo Tran,,Ann Lee,Team Cy|" in lin, lin[:60]
    # LIN has no Site: the vugraph line's second text carries the venue (issue 43)
    assert lin.startswith("vg|Monday pairs,Hanoi Bridge Club,P,1,1,,0,,0|\n"), lin[:80]
    from controller.formats.lin import read_lin
    (record,) = read_lin(lin).records
    assert record.tags["Event"] == "Monday pairs"
    assert lin.count("qx|o1|") == 1, lin[:60]  # one board label (BBO's vugraph files)
    assert lin.count("mb|p|") == 4
    endplay_pbn = pytest.importorskip("endplay.parsers.pbn")
    with open(tmp_path / "table-1.pbn") as fp:
        (board,) = endplay_pbn.load(fp)
    assert board.contract is not None and board.contract.is_passout()


def _now_sent(relay: Relay) -> list[dict[str, Any]]:
    relay.take(*ONLINE, False, 0)
    sent = []
    for topic, payload in board_messages(session_engine(), "1", 1):
        relay.take(topic, payload, False, 1)
        sent += [p for t, p, _ in relay.release(1) if t == "public/1/now"]
    assert sent and all(set(p) == {"v", "session", "table", "board", "phase", "contract",
                                   "declarer"} for p in sent)
    return sent


@pytest.mark.parametrize("release", ["round", "board"])
def test_now_carries_no_contract_of_a_held_board(tmp_path: Path, release: str) -> None:
    """Issue 43: "Now: Board 6 - 2D by West" while board 6 waited for table 3: Law 16
    makes it unauthorised information to the players still to play it. (``--release
    board`` releases a board once its table has finished it: its contract is out then.)"""
    relay, store = make_relay(tmp_path, release=release)
    sent = _now_sent(relay)
    assert {p["phase"] for p in sent} >= {"auction", "play"}
    playing = [p for p in sent if p["phase"] in ("auction", "play")]
    assert all(p["contract"] is None and p["declarer"] is None for p in playing), sent
    if release == "round":     # table 2 has still to play board 1
        assert all(p["contract"] is None and p["declarer"] is None for p in sent), sent
    store.close()


def test_now_carries_the_contract_when_the_board_is_out_or_the_operator_opted_in(
        tmp_path: Path) -> None:
    (tmp_path / "live").mkdir()
    (tmp_path / "opt-in").mkdir()
    for relay, store in (make_relay(tmp_path / "live", release="live"),
                         make_relay(tmp_path / "opt-in", now_contract=True)):
        sent = _now_sent(relay)
        assert [p["contract"] for p in sent if p["phase"] == "play"][-1] == "4H"
        store.close()


def test_what_a_table_plays_now_names_the_board_and_contract_only(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path, now_contract=True)
    sent = _now_sent(relay)
    assert [p["contract"] for p in sent if p["phase"] == "play"][-1] == "4H"
    assert len(sent) == len({json.dumps(p, sort_keys=True) for p in sent})   # changes only
    # another session's table: nothing
    other = session_engine("club-0")
    relay.take("bridge/2/state", [o.payload for o in other.handle(
        "bridge/2/event", EventWriter("pi-x").event(type="tag", zone="board",
                                                   action="present", uid="BD0002",
                                                   board=2)) if o.topic.endswith("state")][0],
               False, 2)
    assert not [t for t, _, _ in relay.release(2) if t == "public/2/now"]
    store.close()


def test_a_relay_stopped_mid_release_publishes_the_rest_once_restarted(tmp_path: Path) -> None:
    """Items leave the store only once committed (the broker acknowledged them): a relay
    killed after publishing some of a burst publishes the others, and only those, after a
    restart; a view whose publication was not acknowledged is published again."""
    relay, store = make_relay(tmp_path)
    engine = session_engine()
    relay.take(*ONLINE, False, 0)
    for table, board in (("1", 1), ("2", 2), ("1", 2)):
        for topic, payload in board_messages(engine, table, board):
            relay.take(topic, payload, False, 1)
    plan = relay.plan(2)
    assert plan and all(p.item is not None for p in plan)
    done = plan[: len(plan) // 2]
    for p in done:                       # acknowledged by the broker, then the kill
        assert p.item is not None
        relay.commit(p.item)
    store.close()
    again, store = make_relay(tmp_path)
    rest = again.plan(2)
    assert [p.item.n for p in rest if p.item] == [p.item.n for p in plan[len(done):] if p.item]
    for p in rest:
        assert p.item is not None
        again.commit(p.item)
    views = again.view_messages()        # the views of both halves, none published yet
    assert {p.view for p in views if p.view} == {("1", 2), ("2", 2)}
    for p in views:
        if p.view is not None:
            again.view_published(p.view)
    view = again.views[("1", 2)]
    assert len(view["cards"]) == 52 and view["result"]["contract"] == "4H"
    store.close()
    third, store = make_relay(tmp_path)
    assert third.plan(3) == [] and third.view_messages() == []
    store.close()


def test_a_redelivered_message_is_taken_once(tmp_path: Path) -> None:
    relay, store = make_relay(tmp_path)
    relay.take(*ONLINE, False, 0)
    msgs = board_messages(session_engine(), "1", 1)
    for topic, payload in msgs + msgs:   # QoS 1 after a kill: delivered again
        relay.take(topic, payload, False, 1)
    store.close()
    again, store = make_relay(tmp_path)
    for topic, payload in msgs:          # and again after the restart
        again.take(topic, payload, False, 2)
    kinds = [h.kind for h in again.gate.held]
    assert kinds.count("result") == 1
    assert len([h for h in again.gate.held if h.payload.get("kind") == "card"]) == 52
    store.close()


def test_broadcast_comment(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    relay, store = make_relay(tmp_path)
    store.set_session("club-1")
    assert main(["comment", "North finds the only lead", "--store",
                 str(tmp_path / "relay.sqlite")]) == 0
    msg = relay.comment_message()
    assert msg is not None and msg.topic == "public/commentary"
    assert msg.payload["text"] == "North finds the only lead"
    assert msg.payload["session"] == "club-1"
    assert relay.comment_message() is None            # once
    assert main(["comment", "x" * 281, "--store", str(tmp_path / "relay.sqlite")]) == 2
    assert main(["comment", " \n\t", "--store", str(tmp_path / "relay.sqlite")]) == 2
    store.close()


def test_a_board_read_and_passed_out_inside_one_controller_batch_is_released(
        tmp_path: Path) -> None:
    """The daemon's batch (Engine.defer/flush): a passed-out board and the next board's
    start in one batch. Its only state shows it over (or the next board): the relay still
    sees it in play (its feed) and releases it once every table has finished it."""
    from boardevents import BoardScript

    session = parse_movement({"session": {"id": "s"}, "tables": {"1": [1, 2]}}, "test")
    store = HeldStore(tmp_path / "r.sqlite")
    relay = Relay(Gate(GatePolicy(session.id, session.movement)), store=store)
    relay.take(ONLINE[0], {**ONLINE[1], "session": "s"}, False, 0)
    engine = session_engine("s")
    writer = EventWriter("pi-1")
    passed = BoardScript(board=1, deal=DEAL, calls=["Pass"] * 4)
    events = list(writer.board(passed)) + list(writer.board(script(2)))[:1]
    engine.defer()
    outs = [o for ev in events for o in engine.handle("bridge/1/event", ev)]
    outs += [o for table_outs in engine.flush().values() for o in table_outs]
    states = [o.payload for o in outs if o.topic.endswith("/state")]
    assert not any(s.get("board") == 1 and s.get("phase") in ("auction", "scanning")
                   for s in states)        # the board was never seen in play by its state
    out = feed(relay, [(o.topic, o.payload) for o in outs], 1)
    views = [p for t, p, _ in out if t == "public/1/board/1"]
    assert views and views[-1]["result"]["contract"] == "Pass"
    assert views[-1]["status"] == "complete" and len(views[-1]["calls"]) == 4
    store.close()


def test_a_relay_of_the_last_session_keeps_the_next_ones_items_for_its_relay(
        tmp_path: Path) -> None:
    """The relay ran on for club-1 while the controller played club-2: nothing public,
    and the relay restarted for club-2 on the same store releases club-2's boards with
    every call and card (it did not lose what it took in meanwhile)."""
    relay, store = make_relay(tmp_path)
    evening = session_engine("club-2")
    relay.take(ONLINE[0], {**ONLINE[1], "session": "club-2"}, False, 0)
    msgs = []
    for table, board in (("1", 1), ("2", 2), ("1", 2), ("2", 1)):
        msgs += board_messages(evening, table, board)
    assert feed(relay, msgs, 1) == []
    assert store.status("club-1")["held"] == []
    store.close()
    data = {**TWO_TABLES, "session": {"id": "club-2", "event": "Evening pairs"}}
    session = parse_movement(data, "test")
    store = HeldStore(tmp_path / "relay.sqlite")
    again = Relay(Gate(GatePolicy(session.id, session.movement)), store=store)
    # on subscribing: the retained status and each table's last state and result
    last = {}
    for topic, payload in msgs:
        if topic.endswith(("/state", "/result")) or "controller" in topic:
            last[topic] = payload
    again.take(ONLINE[0], {**ONLINE[1], "session": "club-2"}, True, 2)
    out = feed(again, list(last.items()), 2, retained=True)
    boards = {t for t, _, _ in out if "/board/" in t}
    assert boards == {"public/1/board/1", "public/1/board/2", "public/2/board/1",
                      "public/2/board/2"}
    for key in (("1", 1), ("2", 2)):
        assert len(again.views[key]["cards"]) == 52
    store.close()


def test_release_of_an_unfinished_board_needs_force_and_the_movement_is_checked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    relay, store = make_relay(tmp_path)
    session = parse_movement(TWO_TABLES, "test")
    store.set_session(session.id, session.movement)
    relay.take(*ONLINE, False, 0)
    feed(relay, board_messages(session_engine(), "1", 1), 1)      # table 2 has not played 1
    path = str(tmp_path / "relay.sqlite")
    assert main(["release", "--store", path, "--board", "1", "--table", "1"]) == 2
    err = capsys.readouterr().err
    assert "not finished at table(s) 2" in err and "--force" in err
    assert main(["release", "--store", path, "--board", "9"]) == 2
    assert "not in session club-1's movement (boards 1-2)" in capsys.readouterr().err
    assert main(["release", "--store", path, "--board", "1", "--table", "7"]) == 2
    assert "table 7 does not play board 1" in capsys.readouterr().err
    assert store.status("club-1")["manual"] == []
    assert main(["release", "--store", path, "--board", "1", "--table", "1", "--force"]) == 0
    assert {"table": "1", "board": 1, "action": "release"} in store.status("club-1")["manual"]
    feed(relay, board_messages(session_engine(), "2", 1), 2)      # now finished everywhere
    assert main(["release", "--store", path, "--board", "1"]) == 0
    store.close()


def test_sigterm_ends_the_relay_with_a_stopped_line(mosquitto: Mosquitto,
                                                    tmp_path: Path) -> None:
    """``systemctl stop``: exit status 0 and a "stopped" line, as the console and vugraph."""
    watch = Recorder(mosquitto.url, "public/session")
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "broadcast", "--broker", mosquitto.url,
         "--release", "live", "--store", str(tmp_path / "relay.sqlite")],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        # its session is published once it is subscribed: its signal handlers are in place
        wait_until(lambda: bool(watch.topics()), 30, "the relay's public/session")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
    finally:
        watch.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err.decode()
    assert err.decode().splitlines()[-1].endswith("stopped"), err.decode()
    assert b"Traceback" not in err


def test_site_is_the_session_files_venue() -> None:
    """Issue 43: the relay wrote [Site "?"] although the session names its venue."""
    from controller.broadcast.view import session_views
    from controller.session import load_session

    session = load_session(Path(__file__).parent.parent / "hw_configs" /
                           "session-mitchell.toml")
    assert session.venue
    _, extra = session_views(session)
    assert extra["site"] == session.venue


def _board_secrets(payload: Any) -> list[str]:
    """Whatever in a public payload tells of a board's play: a contract, a declarer, a
    call or a card (keys with a value), anywhere in it."""
    found: list[str] = []
    if isinstance(payload, dict):
        for key, value in payload.items():
            if key in ("contract", "declarer", "call", "card", "calls", "cards", "auction",
                       "deal", "play") and value not in (None, [], {}, ""):
                found.append(f"{key}={value!r}")
            found += _board_secrets(value)
    elif isinstance(payload, list):
        for value in payload:
            found += _board_secrets(value)
    return found


def test_no_public_message_of_a_held_board_tells_of_its_play(tmp_path: Path) -> None:
    """The relay's promise (issue 43's "Done when"): board 1 played at table 1 and not
    yet at table 2; nothing the relay publishes until then carries board 1's contract,
    declarer, a call or a card. Table 2 playing it releases it (a positive control)."""
    relay, store = make_relay(tmp_path)
    relay.take(*ONLINE, False, 0)
    engine = session_engine()
    public: list[tuple[str, Any]] = []
    for topic, payload in board_messages(engine, "1", 1):
        relay.take(topic, payload, False, 1)
        public += [(t, p) for t, p, _ in relay.release(1)]
    assert public, "the relay said nothing (no now, no session): the test sees nothing"
    leaks = [(t, _board_secrets(p)) for t, p in public if _board_secrets(p)]
    assert leaks == []
    engine_2 = session_engine()
    for topic, payload in board_messages(engine_2, "2", 1):
        relay.take(topic, payload, False, 2)
    released = relay.release(3)
    assert any(_board_secrets(p) for t, p, _ in released if t.startswith("public/1/board/1"))
    store.close()
