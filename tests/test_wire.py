"""controller/wire.py: the Structs round-trip, the documented examples decode, malformed
payloads are values, every payload the engine publishes over whole boards fits its Struct,
and docs/wire-schema.json is what the code generates."""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from shared_data import real_file, real_files
from test_properties import _random_input

from controller import wire
from controller.boards.generate import random_board, random_deal
from controller.engine import Engine, Outgoing
from controller.formats.events import record_events
from controller.formats.lin import read_lin
from controller.formats.pbn import deals_by_board, read_pbn
from controller.laws.cards import Rules, board_dealer, board_vulnerability
from controller.laws.events import Action, Button, Zone
from controller.laws.record import BoardRecord, DealInfo
from controller.laws.rulings import RulingKind

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / "data"
DOC = ROOT / "docs" / "wire-contract.md"
SCHEMA = ROOT / "docs" / "wire-schema.json"


# -- checking a payload against its Struct ---------------------------------------------------
def _no_nulls(value: Any) -> Any:
    """Absent and null are the same to a listener (the Structs omit None when encoding)."""
    if isinstance(value, dict):
        return {k: _no_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_no_nulls(v) for v in value]
    return value


def fits(payload: Any, kind: Any) -> None:
    """``payload`` (as it goes on the wire) decodes strictly into ``kind`` and nothing is
    lost on the way: no field the Struct does not know, at any depth."""
    wire_json = msgspec.json.decode(msgspec.json.encode(payload))
    obj = msgspec.convert(wire_json, kind, strict=True)
    assert _no_nulls(msgspec.to_builtins(obj)) == _no_nulls(wire_json), (
        "fields the Struct does not know", kind, wire_json)


def check_outputs(outs: list[Outgoing]) -> int:
    for out in outs:
        parsed = wire.parse_topic(out.topic)
        assert parsed is not None, out.topic
        try:
            fits(out.payload, wire.OUTPUTS[parsed.kind])
        except msgspec.ValidationError as exc:
            raise AssertionError(f"{out.topic}: {exc}: {out.payload}") from None
    return len(outs)


# -- round trips --------------------------------------------------------------------------
EVENTS: list[wire.Event] = [
    wire.TagEvent(v=1, src="table-7-pi", seq=1042, ts=1764412345.25, zone=Zone.TRAY, seat="E",
                  action=Action.PRESENT, uid="04A2193B7C5E80", card="H9", deck="10"),
    wire.TagEvent(v=1, src="p", seq=3, boot="9f2c.a:b-_", acked=2, ts=1.0, zone=Zone.BOARD,
                  action=Action.REMOVED, uid="B1", board=5),
    wire.TagEvent(v=1, src="p", seq=4, ts=1.0, zone=Zone.BID, seat="N", action=Action.PRESENT,
                  uid="X", call="STOP"),
    wire.TagEvent(v=1, src="p", seq=5, ts=1.0, zone=Zone.TRAY, seat="S", action=Action.PRESENT,
                  uid="DEAD", unknown=True),
    wire.ButtonEvent(v=1, src="p", seq=6, ts=2.0, button=Button.CLAIM, seat="W"),
    wire.ButtonEvent(v=1, src="p", seq=7, ts=2.0, button=Button.NEXT),
]


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: f"{type(e).__name__}-{e.seq}")
def test_events_round_trip(event: wire.Event) -> None:
    data = wire.encode(event)
    assert b"null" not in data  # absent fields are absent, not null
    assert wire.decode_input("event", data) == event
    assert wire.decode(data, type(event)) == event
    assert wire.decode_input("event", json.loads(data)) == event


def test_rulings_round_trip() -> None:
    ruling = wire.Ruling(v=1, src="td", seq=7, ts=3.0, ruling=RulingKind.UNINTENDED, seat="N",
                         call="1D")
    assert wire.decode_input("ruling", wire.encode(ruling)) == ruling
    adjust = wire.Ruling(v=1, src="td", seq=8, ts=3.0, ruling=RulingKind.ADJUST, alert=2, tricks=9)
    assert wire.decode_input("ruling", wire.encode(adjust)) == adjust


def test_topics_build_and_parse() -> None:
    assert wire.topic("7", "state") == "bridge/7/state"
    assert wire.topic("7", "event", root="club") == "club/7/event"
    assert wire.ack_topic("7", "table-7-pi") == "bridge/7/ack/table-7-pi"
    assert wire.status_topic() == "bridge/controller/status"
    assert wire.status_topic("7") == "bridge/controller/7/status"
    assert wire.parse_topic("bridge/7/ack/pi") == wire.Topic("bridge", "7", "ack", "pi")
    assert wire.parse_topic("bridge/7/event") == wire.Topic("bridge", "7", "event")
    for bad in ("bridge/7", "other/7/event", "bridge//event", "bridge/+/event",
                "bridge/7/#", "bridge/7/"):
        assert wire.parse_topic(bad) is None, bad


def test_the_version_is_the_packages() -> None:
    from controller import WIRE_VERSION
    assert wire.VERSION == WIRE_VERSION == 1
    data = json.loads(wire.encode(EVENTS[0]))
    assert data["v"] == wire.VERSION


# -- malformed input: a value, never an exception ------------------------------------------
GOOD = {"v": 1, "src": "a", "seq": 1, "ts": 1.0, "type": "tag", "zone": "tray", "seat": "N",
        "action": "present", "uid": "1", "card": "SA"}


@pytest.mark.parametrize("change, fragment", [
    ({"v": 2}, "version"),
    ({"v": True}, "version"),
    ({"v": None}, "version"),
    ({"src": ""}, "src"),
    ({"src": "s" * 129}, "src"),
    ({"seq": -1}, "seq"),
    ({"seq": 2**53}, "seq"),
    ({"seq": True}, "seq"),
    ({"ts": "now"}, "ts"),
    ({"type": "smell"}, "type"),
    ({"zone": "floor"}, "zone"),
    ({"action": "hover"}, "action"),
    ({"seat": "Q"}, "seat"),
    ({"seat": None}, "seat"),
    ({"boot": "a/b"}, "boot"),
    ({"acked": 3}, "acked"),
    ({"boot": "b1", "acked": 1}, "acked"),
    ({"deck": [[1]]}, "deck"),
    ({"deck": False}, "deck"),
    ({"call": "1C"}, "exactly one"),
    ({"card": None}, "exactly one"),
    ({"board": 0}, "board"),
    ({"uid": 5}, "uid"),
])
def test_a_malformed_event_is_a_value_saying_what_is_wrong(change: dict[str, Any],
                                                           fragment: str) -> None:
    payload = {**GOOD, **change}
    for form in (payload, json.dumps(payload).encode(), json.dumps(payload)):
        got = wire.decode_input("event", form)
        assert isinstance(got, wire.Malformed), (form, got)
        assert fragment in got.reason, got.reason
    # and the engine answers it on error, unapplied
    engine = Engine()
    outs = engine.handle("bridge/7/event", json.dumps(payload).encode())
    assert [o.topic for o in outs] == ["bridge/7/error"]
    assert fragment in outs[0].payload["error"]
    check_outputs(outs)


@pytest.mark.parametrize("payload, fragment", [
    (b"", "not JSON"),
    (b"{", "not JSON"),
    (b"\xff", "not JSON"),
    (b"[]", "not a JSON object"),
    (b"17", "not a JSON object"),
    (b'"x"', "not a JSON object"),
    (b"[" * 5000 + b"]" * 5000, "not a JSON object"),
    (b'{"v":1,"x":' + b"[" * 5000 + b"]" * 5000 + b"}", "nested too deeply"),
    (b" " * (wire.MAX_PAYLOAD + 1), "over"),
    (b'{"v":1}', "type"),
])
def test_bytes_that_are_no_event_are_a_value(payload: bytes, fragment: str) -> None:
    got = wire.decode_input("event", payload)
    assert isinstance(got, wire.Malformed) and fragment in got.reason, got


@pytest.mark.parametrize("change, fragment", [
    ({"ruling": "smile"}, "unknown ruling"),
    ({"ruling": "adjust"}, "tricks"),
    ({"ruling": "claim", "tricks": 14}, "tricks"),
    ({"ruling": "board"}, "board"),
    ({"ruling": "unintended", "seat": "N"}, "unintended"),
    ({"ruling": "accept", "alert": 0}, "alert"),
    ({"ruling": "option", "suit": "Z"}, "suit"),
])
def test_a_malformed_ruling_is_a_value(change: dict[str, Any], fragment: str) -> None:
    payload = {"v": 1, "src": "td", "seq": 1, "ts": 1, **change}
    got = wire.decode_input("ruling", payload)
    assert isinstance(got, wire.Malformed) and fragment in got.reason, got


def test_unknown_fields_are_ignored() -> None:
    got = wire.decode_input("event", {**GOOD, "colour": "red", "extra": {"a": [1]}})
    assert isinstance(got, wire.TagEvent) and got.card == "SA"


# -- the documented examples ------------------------------------------------------------------
#: the section a ```json example sits in -> the topic kind of its payload
EXAMPLE_KINDS = {"Sensor events": "event", "`state`": "state", "`alert`": "alert",
                 "`indicator`": "indicator", "Pairs at the table": "result",
                 "The director's evidence": "evidence", "Sensing model: play spots": "event",
                 "The presses for the director": "evidence",
                 "The tables a partitioned controller serves": "status",
                 "The controller's own event -> state time": "status"}


def documented_examples() -> list[tuple[str, str, str]]:
    """(section, kind, JSON) of every fenced json block and every one-line payload example
    in backticks that is JSON, in docs/wire-contract.md."""
    out: list[tuple[str, str, str]] = []
    section = ""
    text = DOC.read_text(encoding="utf-8")
    for block in re.split(r"(?m)^(?=#{2,3} )", text):
        section = block.splitlines()[0].lstrip("# ").strip() if block.startswith("#") else ""
        kind = next((k for name, k in EXAMPLE_KINDS.items() if section.startswith(name)), "")
        for body in re.findall(r"```json\n(.*?)```", block, flags=re.S):
            out.append((section, kind, body))
    return out


def test_there_are_documented_examples() -> None:
    kinds = {kind for _, kind, _ in documented_examples()}
    assert {"event", "state", "alert", "indicator", "result"} <= kinds


@pytest.mark.parametrize("section, kind, body", documented_examples(),
                         ids=lambda x: x if len(x) < 30 else None)
def test_every_documented_example_decodes(section: str, kind: str, body: str) -> None:
    assert kind, f"docs/wire-contract.md: an example in {section!r} whose topic the test " \
                 "does not know: add the section to EXAMPLE_KINDS"
    payload = json.loads(body)  # the examples are real JSON, not sketches
    fits(payload, wire.OUTPUTS[kind])


def test_documented_ack_and_ruling_examples_decode() -> None:
    fits({"v": 1, "src": "table-7-pi", "boot": "9f2c41d07a5be613", "seq": 1042}, wire.Ack)
    ack = re.search(r"`(\{\"v\":1,\"src\":\"table-7-pi\",\"boot\":[^`]*)`",
                    DOC.read_text(encoding="utf-8"))
    assert ack is not None
    fits(json.loads(ack.group(1)), wire.Ack)
    ruling = wire.decode_input("ruling", {"v": 1, "src": "td", "seq": 7, "ts": 1.0,
                                          "ruling": "unintended", "alert": 12})
    assert isinstance(ruling, wire.Ruling)


# -- every payload the engine publishes over whole boards -----------------------------------
def _play(engine: Engine, records: list[BoardRecord], *, scans: bool) -> int:
    checked = 0
    seq = 1
    for record in records:
        events = record_events(record, scans=scans, seq_start=seq)
        seq += len(events)
        for event in events:
            checked += check_outputs(engine.handle("bridge/1/event", event))
    checked += check_outputs(engine.retained()) + check_outputs(engine.acks())
    return checked


def test_engine_outputs_of_the_replay_file_fit_their_structs() -> None:
    from controller.replay.stream import replay_lines
    engine = Engine(deals=deals_by_board(DATA / "replay_t08_revoke.pbn"))
    lines = (DATA / "replay_t08_revoke.jsonl").read_bytes().splitlines()
    outs = list(replay_lines(engine, lines))
    assert any(o.topic.endswith("/alert") for o in outs)
    assert check_outputs(outs) > 100
    check_outputs(engine.retained())
    check_outputs(engine.acks_due())


@pytest.mark.parametrize("name", ["laws_scenarios.pbn", "laws_scenarios.lin"])
def test_engine_outputs_of_the_laws_scenario_records_fit(name: str) -> None:
    path = DATA / name
    records = read_pbn(path).records() if name.endswith(".pbn") else list(
        read_lin(path).records)
    for n, record in enumerate(records, 1):  # renumbered: one engine, numbers unique
        engine = Engine(deals={n: DealInfo(n, record.dealer, record.vulnerability,
                                           record.deal)})
        record = BoardRecord(board=n, dealer=record.dealer, vulnerability=record.vulnerability,
                             deal=record.deal, auction=record.auction,
                             contract=record.contract, declarer=record.declarer,
                             tricks=record.tricks)
        assert _play(engine, [record], scans=record.deal is not None) > 0


def test_engine_outputs_of_generated_boards_fit() -> None:
    rng = random.Random(14)
    records = [random_board(rng, i).record for i in range(1, 9)]
    engine = Engine(deals={r.board: r.deal_info for r in records},
                    pairs_at=lambda table, board: (3, 11))
    assert _play(engine, records, scans=True) > 8 * 60


@pytest.mark.parametrize("seed", range(12))
def test_engine_outputs_of_random_streams_with_irregularities_and_rulings_fit(
        seed: int) -> None:
    """The streams of tests/test_properties.py: wrong cards, calls out of turn, unknown
    tags, buttons, every kind of ruling: alerts of every sort, corrections in the feed."""
    rng = random.Random(seed)
    deal = random_deal(rng)
    known = seed % 2 == 0
    deals = {1: DealInfo(1, board_dealer(1), board_vulnerability(1), deal if known else None)}
    engine = Engine(deals=deals, rules=Rules.L2007 if seed % 3 == 0 else Rules.L2017)
    kinds: set[str] = set()
    outs = engine.handle("bridge/1/event", {"v": 1, "src": "b", "seq": 0, "ts": 0.0,
                                            "type": "tag", "zone": "board",
                                            "action": "present", "uid": "W", "board": 1})
    for seq in range(1, 400):
        kind, body = _random_input(rng, deal)
        outs += engine.handle(f"bridge/1/{kind}", {"v": 1, "src": kind, "seq": seq,
                                                    "ts": float(seq), **body})
    check_outputs(outs)
    check_outputs(engine.retained())
    check_outputs(engine.acks())
    kinds |= {o.topic.rsplit("/", 1)[1] for o in outs}
    assert {"state", "indicator", "feed", "alert"} <= kinds


REAL = [p for p in real_files(".pbn", ".lin")][:4]


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name if p else "absent")
def test_engine_outputs_of_real_boards_fit(path: Path | None) -> None:
    path = real_file(path)
    records = read_pbn(path).records() if path.suffix.lower() == ".pbn" else list(
        read_lin(path).records)
    boards = [r for r in records if r.deal is not None and r.deal.is_complete
              and r.contract is not None][:12]
    renumbered = [BoardRecord(board=n, dealer=r.dealer, vulnerability=r.vulnerability,
                              deal=r.deal, auction=r.auction, contract=r.contract,
                              declarer=r.declarer, tricks=r.tricks)
                  for n, r in enumerate(boards, 1)]
    engine = Engine(deals={r.board: r.deal_info for r in renumbered})
    assert _play(engine, renumbered, scans=True) >= len(renumbered)


# -- JSON Schema ------------------------------------------------------------------------------
def test_the_schema_in_the_docs_is_the_codes() -> None:
    assert SCHEMA.read_text(encoding="utf-8") == wire.schema_text(), (
        "docs/wire-schema.json differs from controller/wire.py: run "
        "`.venv/bin/python -m controller.wire --schema > docs/wire-schema.json`")


def test_the_schema_command_writes_it() -> None:
    proc = subprocess.run([sys.executable, "-m", "controller.wire", "--schema"], cwd=ROOT,
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    schema = json.loads(proc.stdout)
    assert set(schema["topics"]) == set(wire.OUTPUTS)
    assert {"TagEvent", "ButtonEvent", "State", "Alert", "Indicator", "Result", "FeedCard",
            "Error", "Ack", "Health", "ControllerStatus"} <= set(schema["$defs"])
    assert schema["$defs"]["TagEvent"]["properties"]["type"] == {"enum": ["tag"]}


def test_the_contract_points_to_the_schema() -> None:
    assert "wire-schema.json" in DOC.read_text(encoding="utf-8")


# -- the daemon's own payloads ------------------------------------------------------------------
def _daemon(engine: Any, **info: Any) -> Any:
    from controller.broker.settings import BrokerSettings
    from controller.service.daemon import ControllerDaemon
    return ControllerDaemon(broker=BrokerSettings(), engine=engine, info=info)


@pytest.mark.parametrize("info", [{"rules": "2017"}, {"rules": "2007", "table": "3"},
                                  {"demo": True}])
def test_the_daemons_status_fits(info: dict[str, Any]) -> None:
    daemon = _daemon(Engine(), **info)
    daemon.engine.handle("bridge/3/event", {**GOOD, "zone": "board", "seat": None,
                                            "card": None, "board": 1})
    online = daemon.status()
    fits(online, wire.ControllerStatus)
    assert online["tables"] == ["3"] and online["status"] == "online"
    fits(daemon.status("offline"), wire.ControllerStatus)


def test_the_daemons_errors_follow_the_documented_shape() -> None:
    class Broken:
        stats: dict[str, int] = {}
        tables: list[str] = []

        def handle(self, topic: str, payload: bytes) -> list[Outgoing]:
            raise RuntimeError("a defect")

    daemon = _daemon(Broken())
    payload = json.dumps(GOOD).encode()
    [internal] = daemon._apply("bridge/7/ruling", payload)
    assert internal.topic == "bridge/7/error"
    fits(internal.payload, wire.Error)
    assert internal.payload["input"] == "ruling" and internal.payload["error"] == "internal"
    assert internal.payload["excerpt"] == payload.decode()[:200]
    assert "a defect" in internal.payload["detail"]
    big = b'{"v":1,' + b" " * 70_000 + b"}"
    too_large = daemon._too_large("bridge/7/event", len(big), big[:800])
    fits(too_large.payload, wire.Error)
    assert too_large.payload["error"] == "payload_too_large"
    assert too_large.payload["detail"]["bytes"] == len(big)
    assert too_large.payload["excerpt"].startswith('{"v":1,')


# -- the firmware bridge encodes with the wire module ----------------------------------------
def test_the_bridge_spools_contract_events_and_health(tmp_path: Path) -> None:
    from firmware_bridge.bridge import Bridge
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.publisher import Publisher, Spool

    config = config_from_dict({
        "table": {"id": "4", "src": "table-4-pi"},
        "broker": {"url": "mqtt://127.0.0.1:9"},  # never connected in this test
        "spool": {"path": "spool.sqlite"},
        "gpio": {"factory": "mock"},
        "display": {"type": "none"},
    }, tmp_path / "table.toml")
    bridge = Bridge(config)
    bridge.publisher = Publisher(config, Spool(config.spool.path))
    assert bridge.press("claim", "W", ts=5.0) == 1
    assert bridge.press("next", None, ts=6.0) == 2
    tag = wire.TagEvent(v=wire.VERSION, src="table-4-pi", seq=0, ts=7.0, zone=Zone.TRAY,
                        seat="N", action=Action.PRESENT, uid="04AA", card="SA", deck="4")
    assert bridge.publisher.publish_event(tag) == 3
    sent = [wire.decode_input("event", m.payload) for m in bridge.publisher.spool.pending()]
    boot = bridge.publisher.boot
    assert sent == [
        wire.ButtonEvent(v=1, src="table-4-pi", seq=1, boot=boot, ts=5.0, button=Button.CLAIM,
                         seat="W"),
        wire.ButtonEvent(v=1, src="table-4-pi", seq=2, boot=boot, ts=6.0, button=Button.NEXT),
        msgspec.structs.replace(tag, seq=3, boot=boot),
    ]
    fits(bridge.health_payload(), wire.Health)
    for status in ("online", "offline"):
        fits(json.loads(bridge.publisher.status_payload(status)), wire.BridgeStatus)


# -- the verification station and the public topics -----------------------------------------
def test_the_verification_stations_payloads_fit() -> None:
    from test_verify import _results

    from controller.verify.report import VerifyReport, report_json, result_json

    results = _results()
    report = VerifyReport("station-9", "set.dup", tuple(results), tuple(range(1, 8)),
                          ("board 7: broken",))
    fits(report_json(report), wire.Verify)
    for r in results:  # what MqttReporter.board publishes
        fits({"v": wire.VERSION, "type": "board", "station": "station-9"} | result_json(r),
             wire.Verify)
    assert any(not r.ok for r in results)


def test_the_public_board_view_and_session_fit() -> None:
    from controller.broadcast.view import apply_item, new_view

    engine = Engine(deals={1: DealInfo(1, board_dealer(1), board_vulnerability(1),
                                       random_deal(random.Random(3)))})
    record = random_board(random.Random(3), 1).record
    outs = [o for e in record_events(record) for o in engine.handle("bridge/5/event", e)]
    view = new_view("s1", "5", 1, {"round": 1, "ns": 3, "ew": 11, "event": "Club"})
    for out in outs:
        kind = out.topic.rsplit("/", 1)[1]
        if kind in ("feed", "alert", "result"):
            apply_item(view, kind, out.payload)
    fits(view, wire.BoardView)
    fits({"v": wire.VERSION, "session": "s1", "tables": ["1", "5"], "event": "Club"},
         wire.PublicSession)
    for out in outs:  # the relay republishes feed and result with the session
        if out.topic.endswith(("/feed", "/result")):
            fits({**out.payload, "session": "s1"},
                 wire.OUTPUTS[out.topic.rsplit("/", 1)[1]])


def test_the_bridge_reads_acks_with_the_wire_module(tmp_path: Path,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.publisher import Publisher, Spool

    config = config_from_dict({"table": {"id": "4", "src": "table-4-pi"},
                               "broker": {"url": "mqtt://127.0.0.1:9"},
                               "spool": {"path": "spool.sqlite"}}, tmp_path / "table.toml")
    publisher = Publisher(config, Spool(config.spool.path))
    for ts in (1.0, 2.0, 3.0):
        publisher.publish_event({"ts": ts, "type": "button", "button": "director"})
    for bad in (b"{", b"[]", b'{"v":1,"src":"table-4-pi","seq":"2","boot":"b"}',
                b'{"v":2,"src":"table-4-pi","seq":2,"boot":"b"}',
                b'{"v":1,"src":"table-4-pi","seq":2}'):
        publisher.on_ack(bad)
    assert publisher.spool.depth() == 3 and publisher.acked_seq is None
    assert len([r for r in caplog.records if "ack ignored" in r.getMessage()]) == 5
    ack = wire.Ack(v=wire.VERSION, src="table-4-pi", seq=2, boot=publisher.boot)
    publisher.on_ack(wire.encode(ack))
    assert publisher.spool.depth() == 1 and publisher.acked_seq == 2
