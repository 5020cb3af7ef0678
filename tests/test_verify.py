"""The verification station: the follower on its own, the report, the config, and whole sets
through the real serial path of the simulated station (and the real broker)."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
import tomllib
from collections.abc import Iterator, Sequence
from pathlib import Path

import aiomqtt
import pytest
from broker import Mosquitto

from controller.formats.dup import write_dup
from controller.laws.cards import FULL_DECK, Card, Deal, Seat
from controller.laws.dealcheck import FindingKind
from controller.laws.events import Action, TagEvent, Zone
from controller.verify.cli import main
from controller.verify.report import (
    VerifyReport,
    progress_bar,
    report_csv,
    report_json,
    summary_text,
    write_report,
)
from controller.verify.runs import demo_deals, load_deals, station_config
from controller.verify.station import (
    BoardResult,
    Station,
    StationFollower,
    StationReader,
    VerifyError,
    tag_event,
)
from firmware_bridge.examples import EXAMPLES
from firmware_bridge.sim.station import (
    FAULT_KINDS,
    BoardPlan,
    Fault,
    SimStation,
    SimTags,
    demo_faults,
    plan_boards,
)

K = FindingKind
ROOT = Path(__file__).resolve().parent.parent


def random_deals(n: int, seed: int = 7) -> dict[int, Deal]:
    rng = random.Random(seed)
    out = {}
    for b in range(1, n + 1):
        cards = list(FULL_DECK)
        rng.shuffle(cards)
        out[b] = Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})
    return out


def board_events(plan: BoardPlan, tags: SimTags, *, tag_first: bool = True,
                 seats: Sequence[Seat] = tuple(Seat), sequential: bool = False
                 ) -> Iterator[TagEvent]:
    """What the station's readers report for one presented board, as tag events."""
    board = []
    if plan.board_tag:
        uid = SimTags.uid_for_board(plan.board)
        board = [tag_event("board", None, uid, "present", tags.lookup(uid)),
                 tag_event("board", None, uid, "removed", tags.lookup(uid))]
    pockets = []
    for seat in seats:
        name = "N" if sequential else seat.name
        uids = plan.pockets[seat]
        pockets += [tag_event("pocket", name, u, "present", tags.lookup(u)) for u in uids]
        pockets += [tag_event("pocket", name, u, "removed", tags.lookup(u)) for u in uids]
    yield from (board + pockets) if tag_first else (pockets + board)


def follow(follower: StationFollower, events: Iterator[TagEvent]) -> list[BoardResult]:
    out: list[BoardResult] = []
    for e in events:
        out += follower.feed(e)
    return out


# --- the follower on its own --------------------------------------------------------------

@pytest.mark.parametrize("kind", list(FAULT_KINDS))
def test_every_fault_is_found_and_named(kind: str) -> None:
    deals = random_deals(4)
    tags = SimTags()
    plans = plan_boards(deals, [Fault(3, kind)], tags)
    follower = StationFollower(deals)
    results = []
    for plan in plans:
        results += follow(follower, board_events(plan, tags))
    results += follower.flush()
    assert [r.board for r in results] == [1, 2, 3, 4]
    by_board = {r.board: r for r in results}
    assert all(by_board[b].ok for b in (1, 2, 4)), [by_board[b].verdict for b in (1, 2, 4)]
    assert not by_board[3].ok
    assert FAULT_KINDS[kind] in {k.value for k in by_board[3].verdict.kinds}


def test_each_fault_names_what_and_where() -> None:
    deals = random_deals(12)
    tags = SimTags()
    faults = [Fault(2, "missing_card"), Fault(3, "wrong_pocket"), Fault(4, "foreign_card"),
              Fault(5, "rotated_2"), Fault(6, "other_board"), Fault(7, "duplicated_card")]
    follower = StationFollower(deals)
    for plan in plan_boards(deals, faults, tags):
        follow(follower, board_events(plan, tags))
    r = {x.board: x.verdict for x in follower.results}
    (missing,) = [f for f in r[2].findings if f.kind is K.MISSING_CARD]
    assert missing.seat is Seat.E and missing.card in deals[2][Seat.E]
    (moved,) = [f for f in r[3].findings if f.kind is K.WRONG_POCKET]
    assert (moved.seat, moved.other_seat) == (Seat.W, Seat.N)
    (foreign,) = [f for f in r[4].findings if f.kind is K.FOREIGN_CARD]
    assert foreign.seat is Seat.W and "deck 1004" in foreign.detail
    (rot,) = r[5].findings
    assert rot.kind is K.ROTATED and rot.count == 2
    (other,) = r[6].findings
    assert other.kind is K.CARDS_MATCH_BOARD and other.board == 5
    (dup,) = [f for f in r[7].findings if f.kind is K.DUPLICATED_CARD]
    assert dup.seat is Seat.N and dup.card in deals[7][Seat.S]


def test_cards_before_the_board_tag_take_the_tag() -> None:
    deals = random_deals(2)
    tags = SimTags()
    plans = plan_boards(deals, (), tags)
    follower = StationFollower(deals)
    # the pocket lines come in before the board reader's line: the verdict waits for the tag
    events = list(board_events(plans[0], tags, tag_first=False))
    results = follow(follower, iter(events[:-2]))
    # all four pockets in and no tag yet: closed without it, named by the deal the cards are
    (r,) = results
    assert r.board_tag is None and r.board == 1 and r.verdict.kinds == {K.NO_BOARD_TAG}
    follower2 = StationFollower(deals)
    pockets = [e for e in events if e.zone is Zone.POCKET]
    board = [e for e in events if e.zone is Zone.BOARD]
    # the tag arrives while the last pocket is still on its reader
    results = follow(follower2, iter(pockets[:-1] + board + pockets[-1:]))
    assert [(r.board, r.ok) for r in results] == [(1, True)]


def test_a_pocket_never_shown_is_closed_by_the_next_board() -> None:
    deals = random_deals(2)
    tags = SimTags()
    plans = plan_boards(deals, (), tags)
    follower = StationFollower(deals)
    assert follow(follower, board_events(plans[0], tags, seats=(Seat.N, Seat.E, Seat.S))) == []
    results = follow(follower, board_events(plans[1], tags))
    assert [r.board for r in results] == [1, 2]
    first = results[0].verdict
    assert {(f.seat, f.count) for f in first.findings if f.kind is K.HAND_COUNT} == {(Seat.W, 0)}
    assert results[1].ok


def test_the_same_wallet_read_twice_is_one_board() -> None:
    deals = random_deals(1)
    tags = SimTags()
    (plan,) = plan_boards(deals, (), tags)
    uid = SimTags.uid_for_board(1)
    follower = StationFollower(deals)
    again = [tag_event("board", None, uid, "present", tags.lookup(uid))]
    results = follow(follower, iter(again + list(board_events(plan, tags))))
    assert [(r.board, r.ok) for r in results] == [(1, True)]
    # a wallet read and never followed by its pockets: a note at the end, not a verdict
    follow(follower, iter(again))
    assert follower.flush() == [] and follower.notes == ["board 1: tag read, no pocket shown"]


def test_sequential_layout_follows_the_order() -> None:
    deals = random_deals(3)
    tags = SimTags()
    order = (Seat.S, Seat.W, Seat.N, Seat.E)
    follower = StationFollower(deals, layout="sequential", order=order)
    results = []
    for plan in plan_boards(deals, [Fault(2, "rotated_1")], tags):
        results += follow(follower, board_events(plan, tags, seats=order, sequential=True))
    assert [(r.board, r.ok) for r in results] == [(1, True), (2, False), (3, True)]
    assert results[1].verdict.kinds == {K.ROTATED}
    # shown in the wrong order, the hands look rotated: the order matters
    follower = StationFollower(deals, layout="sequential", order=order)
    plan = plan_boards(deals, (), tags)[0]
    (r,) = follow(follower, board_events(plan, tags, seats=tuple(Seat), sequential=True))
    assert r.verdict.kinds == {K.ROTATED} and r.verdict.findings[0].count == 2


def test_tap_readers_close_a_pocket_at_thirteen() -> None:
    deals = random_deals(1)
    tags = SimTags()
    (plan,) = plan_boards(deals, (), tags)
    follower = StationFollower(deals, tap=True)
    events = [e for e in board_events(plan, tags) if e.action is Action.PRESENT]
    (r,) = follow(follower, iter(events))
    assert r.ok


def test_unknown_and_broken_boards() -> None:
    deals = random_deals(3)
    tags = SimTags()
    plans = plan_boards(deals, (), tags)
    follower = StationFollower({1: deals[1], 3: deals[3]}, broken={2})
    for plan in plans:
        follow(follower, board_events(plan, tags))
    follow(follower, board_events(BoardPlan(9, True, plans[0].pockets), tags))
    r = {x.board: x.verdict for x in follower.results}
    assert r[1].ok and r[3].ok
    assert r[2].kinds == {K.NO_DEAL} and "broken" in r[2].findings[0].detail
    assert r[9].kinds == {K.NO_DEAL} and "board 1's deal" in r[9].findings[0].detail


def test_a_deal_dealt_twice_is_named() -> None:
    deals = random_deals(2)
    deals[2] = deals[1]
    tags = SimTags()
    follower = StationFollower(deals)
    for plan in plan_boards(deals, (), tags):
        follow(follower, board_events(plan, tags))
    first, second = follower.results
    assert first.ok
    (d,) = second.verdict.findings
    assert d.kind is K.DUPLICATE_BOARD and d.board == 1


def test_bad_tags_never_crash() -> None:
    follower = StationFollower(random_deals(1))
    follow(follower, iter([
        TagEvent(Zone.BOARD, Action.PRESENT, None, "FFFF", unknown=True),
        TagEvent(Zone.POCKET, Action.REMOVED, Seat.N, "AAAA", unknown=True),
        TagEvent(Zone.TRAY, Action.PRESENT, Seat.N, "BBBB", card=Card.parse("SA")),
        tag_event("pocket", "E", "CCCC", "present", SimTags().lookup("04000199" + "80")),
    ]))
    (r,) = follower.flush()
    assert not r.ok and r.board == 0
    assert follower.notes
    with pytest.raises(VerifyError):
        StationFollower({}, order=(Seat.N, Seat.N, Seat.S, Seat.W))


# --- report, deal files, config ------------------------------------------------------------

def _results(faults: Sequence[Fault] = (Fault(2, "missing_card"), Fault(4, "rotated_3"))
             ) -> list[BoardResult]:
    deals = random_deals(6)
    tags = SimTags()
    follower = StationFollower(deals)
    for plan in plan_boards(deals, faults, tags):
        follow(follower, board_events(plan, tags))
    return follower.results


def test_report_json_csv_and_text(tmp_path: Path) -> None:
    results = _results()
    report = VerifyReport("station-9", "set.dup", tuple(results), tuple(range(1, 8)),
                          ("board 7: broken",))
    doc = report_json(report)
    assert doc["summary"]["faulty"] == 2 and doc["summary"]["not_verified"] == [7]
    assert [b["board"] for b in doc["boards"] if not b["ok"]] == [2, 4]
    assert doc["boards"][1]["counts"]["E"] == 12
    rows = list(csv.DictReader(io.StringIO(report_csv(report))))
    assert {r["kind"] for r in rows if r["board"] == "2"} == {"missing_card", "hand_count"}
    assert [r for r in rows if r["board"] == "4"][0]["count"] == "3"
    assert len([r for r in rows if r["ok"] == "true"]) == 4
    json_path, csv_path = write_report(report, tmp_path / "out.json")
    assert json.loads(json_path.read_text()) == doc
    assert csv_path.name == "out.csv" and csv_path.read_text() == report_csv(report)
    text = summary_text(report)
    assert "6 boards checked, 4 ok, 2 faulty" in text and "not verified: 7" in text
    assert progress_bar(3, 6, 1, width=10) == "[#####.....] 3/6 boards, 1 faulty"
    # North is seat 0: it must still be named in the CSV
    moved = VerifyReport("s", "f", tuple(_results([Fault(3, "wrong_pocket")])))
    rows = [r for r in csv.DictReader(io.StringIO(report_csv(moved))) if r["board"] == "3"]
    assert {(r["kind"], r["seat"], r["other_seat"]) for r in rows} == {
        ("wrong_pocket", "W", "N"), ("hand_count", "N", ""), ("hand_count", "W", "")}


def test_load_deals_from_each_format(tmp_path: Path, data_dir: Path) -> None:
    four = load_deals(data_dir / "four-boards.dup")
    assert sorted(four.deals) == [1, 2, 3, 4] and four.problems == ()
    broken = load_deals(data_dir / "broken.dup")
    assert broken.problems and all(str(p).startswith("board ") for p in broken.problems)
    demo = demo_deals(36)
    assert len(demo.deals) == 36 and demo.problems == ()
    twice = dict(four.deals) | {5: four.deals[2]}
    (tmp_path / "twice.dup").write_bytes(write_dup(twice))
    assert any("same deal as board 2" in p for p in load_deals(tmp_path / "twice.dup").problems)
    with pytest.raises(VerifyError):
        load_deals(tmp_path / "nothing.dup")


def test_station_config_loads_and_rejects_typos(tmp_path: Path) -> None:
    path = EXAMPLES / "station.toml"
    data = tomllib.loads(path.read_text())
    cfg = station_config(data, path)
    assert cfg.station_id == "station-1" and cfg.layout == "pockets"
    assert {ants["0"] for *_, ants in cfg.readers} == {
        ("board", None), ("pocket", "N"), ("pocket", "E"), ("pocket", "S"), ("pocket", "W")}
    bad = dict(data) | {"station": {"layout": "pockets", "odrer": ["N"]}}
    with pytest.raises(VerifyError, match="odrer"):
        station_config(bad, path)
    with pytest.raises(VerifyError):
        station_config(dict(data) | {"station": {"layout": "diagonal"}}, path)


# --- through the real serial path ---------------------------------------------------------

async def _run_sim(deals: dict[int, Deal], faults: list[Fault], layout: str = "pockets"
                   ) -> list[BoardResult]:
    tags = SimTags()
    plans = plan_boards(deals, faults, tags)
    async with SimStation(layout=layout) as sim:  # type: ignore[arg-type]
        readers = [StationReader(r, a) for r, a in sim.open_readers()]
        follower = StationFollower(deals, layout=layout,  # type: ignore[arg-type]
                                   tap=sim.feed)
        station = Station(readers, tags, follower)
        runner = asyncio.create_task(station.run())
        late = await sim.run(plans, station)
        station.stop()
        results = await runner
        if sim.feed:   # the cards went through the feed slots one at a time
            assert sim.table.peak_tags() == 1 and sim.table.reads()["collisions"] == 0
    assert late == 0
    return results


@pytest.mark.slow
@pytest.mark.timeout(240)
async def test_500_boards_through_the_serial_path_of_the_simulated_station() -> None:
    deals = random_deals(500, seed=500)
    faults = demo_faults(list(range(1, 501))[200:])     # the planted faults, late in the set
    results = await _run_sim(deals, faults)
    assert [r.board for r in results] == list(range(1, 501))
    planted = {f.board: f.kind for f in faults}
    for r in results:
        if r.board in planted:
            assert FAULT_KINDS[planted[r.board]] in {k.value for k in r.verdict.kinds}, r
        else:
            assert r.ok, r.verdict


async def test_sequential_station_through_the_serial_path() -> None:
    deals = random_deals(6, seed=6)
    results = await _run_sim(deals, [Fault(3, "wrong_pocket"), Fault(5, "rotated_1")],
                             layout="sequential")
    assert [(r.board, r.ok) for r in results] == [(1, True), (2, True), (3, False), (4, True),
                                                  (5, False), (6, True)]


def test_verify_simulate_command_publishes_and_reports(mosquitto: Mosquitto, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    received: list[dict[str, object]] = []

    async def subscribe_and_run() -> int:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe("bridge/station-sim/verify", qos=1)
            code = await asyncio.to_thread(
                main, ["--simulate", "--boards", "24", "-q", "--broker", mosquitto.url,
                       "--report", str(tmp_path / "rep")])

            async def collect() -> None:
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    received.append(json.loads(message.payload))
                    if received[-1]["type"] == "report":
                        return

            await asyncio.wait_for(collect(), 20)
            return code

    code = asyncio.run(subscribe_and_run())
    out = capsys.readouterr().out
    assert code == 0, out
    assert "every one found" in out
    boards = [m for m in received if m["type"] == "board"]
    assert [m["board"] for m in boards] == list(range(1, 25))
    report = received[-1]
    assert report["summary"]["faulty"] == len(FAULT_KINDS)  # type: ignore[index]
    assert json.loads((tmp_path / "rep.json").read_text())["summary"] == report["summary"]
    # the report is retained: a late subscriber still gets it

    async def late() -> dict[str, object]:
        async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
            await client.subscribe("bridge/station-sim/verify", qos=1)
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                return dict(json.loads(message.payload))
        raise AssertionError("no retained report")

    assert asyncio.run(asyncio.wait_for(late(), 10))["type"] == "report"


def test_verify_without_a_deal_file_is_a_clear_error(capsys: pytest.CaptureFixture[str],
                                                     tmp_path: Path) -> None:
    assert main(["--config", str(EXAMPLES / "station.toml")]) == 2
    assert "--deals" in capsys.readouterr().err
    assert main(["--deals", str(tmp_path / "none.dup")]) == 2
    assert "no such deal file" in capsys.readouterr().err
    garbage = tmp_path / "garbage.dup"
    garbage.write_bytes(bytes(range(256)) * 3)
    assert main(["--deals", str(garbage)]) == 2
    err = capsys.readouterr().err
    assert "no usable deal" in err and "board 1, byte 0:" in err
    binary = tmp_path / "photo.pbn"
    binary.write_bytes(bytes(range(256)) * 800)
    assert main(["--deals", str(binary), "--simulate"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a PBN deals file: binary data" in err


async def test_a_failing_consumer_does_not_stop_the_station() -> None:
    deals = random_deals(3, seed=3)
    tags = SimTags()
    seen: list[int] = []

    def broken_console(result: BoardResult) -> None:
        raise BrokenPipeError("stdout closed")

    async with SimStation() as sim:
        readers = [StationReader(r, a) for r, a in sim.open_readers()]
        station = Station(readers, tags, StationFollower(deals, tap=sim.feed),
                          on_result=[broken_console, lambda r: seen.append(r.board)])
        runner = asyncio.create_task(station.run())
        late = await sim.run(plan_boards(deals, (), tags), station)
        station.stop()
        results = await runner
    assert late == 0 and seen == [1, 2, 3] and all(r.ok for r in results)
    assert sum(n for note, n in station.notes.items() if "BrokenPipeError" in note) == 3


async def test_following_a_bridges_events_on_the_broker(mosquitto: Mosquitto, tmp_path: Path,
                                                        data_dir: Path) -> None:
    """A bridge runs the readers and publishes contract events: verify follows the topic."""
    from controller.verify.cli import _options, _parser
    from controller.verify.runs import run_on_events
    deals = load_deals(data_dir / "four-boards.dup").deals
    args = _options(_parser().parse_args(["--deals", str(data_dir / "four-boards.dup"), "--events",
                                 mosquitto.url, "--station", "st9", "-q", "--config",
                                 str(tmp_path / "none.toml"), "--report", str(tmp_path / "r")]))
    out, err = io.StringIO(), io.StringIO()
    ready = asyncio.Event()
    task = asyncio.create_task(run_on_events(args, out, err, ready))
    await asyncio.wait_for(ready.wait(), 10)
    seq = 0

    def payload(zone: str, action: str, uid: str, **extra: object) -> bytes:
        nonlocal seq
        seq += 1
        body = {"v": 1, "src": "st9-pi", "seq": seq, "ts": 1000.0 + seq, "type": "tag",
                "zone": zone, "action": action, "uid": uid} | extra
        return json.dumps(body).encode()

    async with aiomqtt.Client("127.0.0.1", mosquitto.port) as client:
        topic = "bridge/st9/event"
        await client.publish(topic, b"{not json", qos=1)
        await client.publish(topic, json.dumps({"v": 1, "type": "button", "button": "next"}),
                             qos=1)
        for board, deal in sorted(deals.items()):
            hands = {s: sorted(deal[s]) for s in Seat}
            if board == 3:
                hands[Seat.E].append(hands[Seat.S].pop())
            msg = payload("board", "present", f"B{board:02d}", board=board)
            await client.publish(topic, msg, qos=1)
            await client.publish(topic, msg, qos=1)          # delivered twice: applied once
            for seat, cards in hands.items():
                for c in cards:
                    await client.publish(topic, payload("pocket", "present", f"C{c}",
                                                        seat=seat.name, card=str(c),
                                                        deck=str(board)), qos=1)
                for c in cards:
                    await client.publish(topic, payload("pocket", "removed", f"C{c}",
                                                        seat=seat.name, card=str(c),
                                                        deck=str(board)), qos=1)
    code = await asyncio.wait_for(task, 30)
    assert code == 1, out.getvalue() + err.getvalue()
    doc = json.loads((tmp_path / "r.json").read_text())
    assert [(b["board"], b["ok"]) for b in doc["boards"]] == [(1, True), (2, True), (3, False),
                                                              (4, True)]
    kinds = {f["kind"] for f in doc["boards"][2]["findings"]}
    assert kinds == {"wrong_pocket", "hand_count"}
    assert any("delivered twice" in n for n in doc["notes"])
    assert any("2 messages ignored" in n for n in doc["notes"])


def test_verify_simulate_fails_when_a_board_of_the_set_is_not_verified(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.formats.dup import write_bri
    rng = random.Random(3)
    deals = {}
    for n in range(1, 5):
        cards = list(FULL_DECK)
        rng.shuffle(cards)
        deals[n] = Deal.from_hands({s: frozenset(cards[13 * s:13 * s + 13]) for s in Seat})
    data = bytearray(write_bri(deals))
    data[128:130] = b"99"              # board 2's record broken: it cannot be dealt
    path = tmp_path / "set.bri"
    path.write_bytes(bytes(data))
    code = main(["--deals", str(path), "--simulate", "--no-faults", "-q"])
    out = capsys.readouterr().out
    assert code == 1, out
    assert "boards not verified: [2]" in out
    # the sound set passes
    path.write_bytes(write_bri(deals))
    assert main(["--deals", str(path), "--simulate", "--no-faults", "-q"]) == 0
