"""The MQTT wire contract in one place: every topic and every payload (docs/wire-contract.md).

Each payload is a msgspec ``Struct``; the sensor events are a tagged union on ``type``
(``tag`` / ``button``) and the feed items one on ``kind``. ``VERSION`` is the ``v`` every
payload carries. The topic builders and ``parse_topic`` know the ``{root}/{t}/...`` layout.

Who uses what:

- the firmware bridge (``firmware_bridge.bridge``, ``firmware_bridge.publisher``) builds
  ``TagEvent`` / ``ButtonEvent`` and encodes them with ``encode``;
- ``controller.engine`` decodes each incoming event or ruling once with ``decode_input``,
  which returns the Struct or a ``Malformed`` value (never raises on bad input);
- every listener may decode an output with ``decode(payload, State)`` and the like; the
  output Structs ignore fields they do not know (a newer controller may add some).

``python -m controller.wire --schema`` writes the JSON Schema of every payload (the
checked-in copy is ``docs/wire-schema.json``; ``tests/test_wire.py`` keeps the two equal).

Standard library and msgspec only: no I/O beyond the schema command, no clock.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Final, Literal, NamedTuple, TypeAlias, TypeVar

import msgspec
from msgspec import Meta, Struct

from controller import WIRE_VERSION
from controller.laws.events import Action, Button, Zone
from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind

__all__ = [
    "VERSION", "ROOT", "MAX_PAYLOAD", "MAX_SEQ", "MAX_SRC", "Malformed", "Topic",
    "TagEvent", "ButtonEvent", "Event", "Ruling", "Input",
    "Last", "Played", "ActiveIrregularity", "State", "Alert", "SeatLights", "Indicator",
    "ResultIrregularity", "Result", "FeedBoard", "FeedCall", "FeedCard", "FeedAuction",
    "FeedPlay", "FeedResult", "Feed", "Error", "Ack", "BridgeStatus", "ControllerStatus", "Latency",
    "ReaderHealth", "Health", "PublicSession", "BoardView",
    "ViewIrregularity", "ViewResult", "PublicNow", "Commentary", "Finding", "VerifiedBoard",
    "VerifyBoard", "VerifyReport", "Verify", "TempoFlag", "Tempo", "ClaimPosition", "Press",
    "Evidence", "SeatLightsShown", "IndicatorShown",
    "OUTPUTS", "topic", "ack_topic", "status_topic", "parse_topic", "encode", "decode",
    "TABLE_ID", "RESERVED_TABLE_IDS", "table_id_problem", "parse_tables",
    "decode_input", "decode_indicator", "json_object", "to_builtins", "error_payload",
    "public_kind", "public_problem",
    "schema", "main",
]

#: The ``v`` of every payload (docs/wire-contract.md, "Versioning").
VERSION: Final = WIRE_VERSION
#: The default topic root.
ROOT: Final = "bridge"
#: Larger payloads are refused unread (a sensor event is ~200 bytes).
MAX_PAYLOAD: Final = 64 * 1024
#: Largest ``seq`` (1.2): 2^53 - 1, the largest integer every JSON reader keeps exact.
MAX_SEQ: Final = 2**53 - 1
#: The longest ``src`` (a bridge's is ``table-{id}-pi``).
MAX_SRC: Final = 128

# -- names (docs/wire-contract.md, "Names") ------------------------------------------------
V = Annotated[Literal[1], Meta(description="the contract version")]
SeatName = Annotated[Literal["N", "E", "S", "W"], Meta(description="a seat, clockwise")]
CardName = Annotated[str, Meta(pattern="^[SHDC][AKQJT98765432]$",
                               description="suit S H D C and rank A K Q J T 9 .. 2")]
CallName = Annotated[str, Meta(pattern="^([1-7](C|D|H|S|NT)|Pass|X|XX)$",
                               description="a call as PBN writes it")]
BidCard = Annotated[str, Meta(pattern="^([1-9](C|D|H|S|NT)|Pass|X|XX)$",
                              description="a call card as read: a bid above seven (8C, "
                                          "Law 38) is the irregularity an alert names")]
Contract = Annotated[str, Meta(pattern="^([1-7](C|D|H|S|NT)(X|XX)?|Pass)$",
                               description="e.g. 4S, 4SX, 3NT; Pass when passed out")]
Vul = Literal["None", "NS", "EW", "All"]
Status = Literal["open", "established", "corrected", "resolved"]
Phase = Literal["waiting", "scanning", "auction", "lead", "play", "complete", "done"]
Tricks13 = Annotated[int, Meta(ge=0, le=13)]
BoardNo = Annotated[int, Meta(ge=1)]
Src = Annotated[str, Meta(min_length=1, max_length=MAX_SRC)]
Seq = Annotated[int, Meta(ge=0, le=MAX_SEQ)]
Boot = Annotated[str, Meta(pattern="^[A-Za-z0-9_.:-]{1,64}$",
                           description="1.2: the bridge's epoch id")]
Seconds = Annotated[float, Meta(ge=-1e15, le=1e15,
                                description="seconds since the epoch (finite)")]
EventCard = Annotated[str, Meta(description="a card as the Names say (SA, HT, C2); the "
                                           "controller also reads s10-style spellings")]
EventCall = Annotated[str, Meta(description="a call (1C .. 7NT, Pass, X, XX; a bid above "
                                           "seven is read, for Law 38) or a bidding-box "
                                           "marker, STOP or ALERT")]
Texts = Annotated[dict[str, str], Meta(description="language (en, vi, zh) -> text")]
#: 1.17: a board number on a public topic (exact in every JSON reader)
PublicBoardNo = Annotated[int, Meta(ge=1, le=MAX_SEQ)]
#: 1.17: the four hands as PBN writes a deal (what a page may show as cards, no markup)
PbnDeal = Annotated[str, Meta(pattern="^[NESW]:[AKQJT98765432.\\- ]{0,80}$",
                              description="the four hands as a PBN deal")]


# -- inputs: bridge -> controller, director -> controller ----------------------------------
class _Input(Struct, kw_only=True, omit_defaults=True):
    """Fields every input carries (the ``v`` / ``src`` / ``seq`` / ``ts`` header)."""

    v: V
    src: Src
    seq: Seq
    boot: Boot | None = None
    ts: Seconds


class _EventHead(_Input, kw_only=True, omit_defaults=True):
    acked: Annotated[int, Meta(ge=0)] | None = None


class TagEvent(_EventHead, tag_field="type", tag="tag", kw_only=True, omit_defaults=True):
    """``bridge/{t}/event``, ``type: tag``: a tag came onto or off a reader."""

    zone: Zone
    seat: SeatName | None = None
    action: Action
    uid: Annotated[str, Meta(description="the tag's UID, hex")] = ""
    card: EventCard | None = None
    deck: Annotated[str | int, Meta(description="the pack: a board number or a name")] | None \
        = None
    call: EventCall | None = None
    board: BoardNo | None = None
    unknown: bool | None = None


class ButtonEvent(_EventHead, tag_field="type", tag="button", kw_only=True,
                  omit_defaults=True):
    """``bridge/{t}/event``, ``type: button``."""

    button: Button
    seat: SeatName | None = None


Event: TypeAlias = TagEvent | ButtonEvent


class Ruling(_Input, kw_only=True, omit_defaults=True):
    """``bridge/{t}/ruling``: the director's ruling (see the contract's table of kinds)."""

    ruling: RulingKind
    alert: Annotated[int, Meta(ge=1)] | None = None
    tricks: Tricks13 | None = None
    seat: SeatName | None = None
    card: EventCard | None = None
    call: EventCall | None = None
    suit: Literal["S", "H", "D", "C"] | None = None
    option: str | None = None
    board: BoardNo | None = None
    note: str | None = None


Input: TypeAlias = TagEvent | ButtonEvent | Ruling


@dataclass(frozen=True, slots=True)
class Malformed:
    """A payload that does not follow the contract, and why (the ``error`` message's text)."""

    reason: str


# -- outputs: controller -> everyone ------------------------------------------------------
class Last(Struct):
    src: str
    seq: int


class Played(Struct):
    seat: SeatName
    card: CardName


class ActiveIrregularity(Struct, omit_defaults=True):
    id: int
    code: Code
    status: Status
    seat: SeatName | None = None


class State(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/state`` (retained): the table now. Never a hand."""

    v: V
    table: str
    board: BoardNo | None
    phase: Phase
    last: Last | None
    dealer: SeatName | None = None
    vul: Vul | None = None
    turn: SeatName | None = None
    auction: list[tuple[SeatName, CallName]] | None = None
    contract: Contract | None = None
    declarer: SeatName | None = None
    dummy: SeatName | None = None
    tricks: dict[Literal["NS", "EW"], Tricks13] | None = None
    trick: Annotated[int, Meta(ge=0, le=13)] | None = None
    current: list[Played] | None = None
    obligations: dict[SeatName, Any] | None = None
    penalty_cards: dict[SeatName, list[CardName]] | None = None
    irregularities: list[ActiveIrregularity] | None = None
    notes: list[str] | None = None
    ns: int | None = None
    ew: int | None = None
    #: 1.8: the session the controller runs (its ``--session``/``--schedule``)
    session: str | None = None


class Alert(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/alert``: an irregularity opened or changed status."""

    v: V
    id: int
    table: str
    board: int | None
    code: Code
    law: str | None
    seat: SeatName | None
    trick: int | None
    status: Status
    text: Texts
    detail: str | None = None
    card: CardName | None = None
    call: BidCard | None = None
    params: dict[str, Any] | None = None
    #: 1.8: the session the controller runs
    session: str | None = None


class SeatLights(Struct):
    turn: bool
    alert: bool


class Indicator(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/indicator`` (retained): each seat's LEDs and the display's rows."""

    v: V
    table: str
    board: int | None
    seats: dict[SeatName, SeatLights]
    alerts: list[int]
    display: Annotated[dict[str, Annotated[list[Annotated[str, Meta(max_length=20)]],
                                           Meta(min_length=4, max_length=4)]],
                       Meta(description="language -> four rows of at most 20 columns")]


class SeatLightsShown(Struct, kw_only=True):
    """A seat's lights as a bridge reads them from ``indicator``: a light not named is off."""

    turn: bool = False
    alert: bool = False


class IndicatorShown(Struct, kw_only=True):
    """``indicator`` as a table's bridge reads it to light the seats and fill the display
    (``decode_indicator``). The controller always sends the whole ``Indicator``; a reader
    takes a partial one too (what an older or hand-written publisher sends): every field
    but ``v`` may be missing, a missing seat is dark, a missing language shows nothing.
    Unknown fields are ignored (a newer controller may add some)."""

    v: V
    table: str | None = None
    board: int | None = None
    seats: dict[SeatName, SeatLightsShown] = {}
    alerts: list[int] = []
    display: dict[str, list[str]] = {}


class ResultIrregularity(Struct):
    id: int
    code: Code
    status: Status
    law: str | None
    seat: SeatName | None


class Result(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/result`` (retained): the board's result."""

    v: V
    table: str
    board: BoardNo
    dealer: SeatName
    vul: Vul
    contract: Contract
    declarer: SeatName | None = None
    #: null when the board was passed out
    tricks: Tricks13 | None
    tricks_played: Tricks13 | None
    score_ns: int
    irregularities: list[ResultIrregularity]
    ns: int | None = None
    ew: int | None = None
    #: 1.8: the session the controller runs; also what ``bridge-table broadcast`` adds on
    #: ``public/{t}/result``
    session: str | None = None


class TempoFlag(Struct, kw_only=True, omit_defaults=True):
    """A call or card the policy's ``[tempo]`` thresholds flag (docs/tempo.md)."""

    kind: Literal["slow_call", "slow_pass", "slow_pass_after_skip", "slow_card"]
    seat: SeatName
    law: str
    seconds: float
    limit: float
    #: the player's median on the board, null when there is none yet
    usual: float | None
    call: str | None = None
    card: str | None = None
    trick: int | None = None
    index: Annotated[int, Meta(ge=0)]


class Tempo(Struct):
    """``calls`` ``[seat, call, seconds]``, ``cards`` ``[seat, card, trick, seconds]``
    (seconds since the previous call or card, null for the board's first), ``flags``."""

    calls: list[tuple[SeatName, str, float | None]]
    cards: list[tuple[SeatName, str, int, float | None]]
    flags: list[TempoFlag]


class ClaimPosition(Struct, kw_only=True):
    """The position a claim was made in (controller/evidence/payload.py)."""

    tricks: Tricks13
    remaining: Tricks13
    trick: Annotated[int, Meta(ge=1, le=13)]
    declarer: SeatName
    strain: str
    leader: SeatName
    won: Tricks13
    #: the four remaining hands as a PBN deal, null when the controller does not know them
    hands: str | None


class Press(Struct, kw_only=True, omit_defaults=True):
    """1.14: a player pressed "director" or "claim" (``evidence.presses``)."""

    button: Literal["director", "claim"]
    seat: SeatName | None
    #: the press's own time (the event's ``ts``)
    ts: Seconds | None
    #: the event's ``src`` and ``seq``: with ``ts``, what names the press
    src: Src | None = None
    seq: Seq | None = None


class Evidence(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/evidence`` (retained, director only; 1.3): tempo and claim position."""

    v: V
    table: str
    board: int | None
    tempo: Tempo
    claim: ClaimPosition | None = None
    #: 1.14: the board's presses for the director, in order (absent: none yet)
    presses: list[Press] | None = None


class _FeedHead(Struct, kw_only=True, omit_defaults=True, tag_field="kind"):
    v: V
    table: str
    board: int | None
    n: Annotated[int, Meta(ge=1)]
    #: 1.8: the session the controller runs; also what ``bridge-table broadcast`` adds on
    #: ``public/{t}/feed``
    session: str | None = None


class FeedBoard(_FeedHead, tag="board", kw_only=True, omit_defaults=True):
    dealer: SeatName | None = None
    vul: Vul | None = None


class FeedCall(_FeedHead, tag="call", kw_only=True, omit_defaults=True):
    seat: SeatName
    call: CallName


class FeedCard(_FeedHead, tag="card", kw_only=True, omit_defaults=True):
    seat: SeatName
    card: CardName
    trick: Annotated[int, Meta(ge=1, le=13)]


class FeedAuction(_FeedHead, tag="auction", kw_only=True, omit_defaults=True):
    calls: list[tuple[SeatName, CallName]]


class FeedPlay(_FeedHead, tag="play", kw_only=True, omit_defaults=True):
    cards: list[tuple[SeatName, CardName]]


class FeedResult(_FeedHead, tag="result", kw_only=True, omit_defaults=True):
    contract: Contract | None = None
    declarer: SeatName | None = None
    tricks: Tricks13 | None = None
    score_ns: int | None = None
    deal: PbnDeal | None = None


Feed: TypeAlias = FeedBoard | FeedCall | FeedCard | FeedAuction | FeedPlay | FeedResult


class Error(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/error`` (1.1): an input that could not be applied, and why."""

    v: V
    table: str
    input: Literal["event", "ruling"]
    error: str
    excerpt: Annotated[str, Meta(max_length=200)]
    #: 1.3: machine-readable particulars (``payload_too_large``: topic, bytes, limit)
    detail: Any = None


class Ack(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/ack/{src}`` (1.2, retained)."""

    v: V
    src: str
    seq: Seq
    boot: Boot | None = None


class BridgeStatus(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/bridge`` (retained): the bridge's presence; the will says offline."""

    v: V
    src: str
    status: Literal["online", "offline"]


class Latency(Struct, kw_only=True):
    """1.16: the controller's own event -> outputs times since it started
    (``controller.service.latency``): from an input's arrival in the controller to its
    batch's outputs handed to the network to write. ``counts[i]`` events took at most
    ``le_ms[i]`` ms (and more than the bound before it); the last count, beyond every bound.
    Two statuses of one controller run subtract to a window's distribution."""

    events: int
    p50_ms: float | None
    p99_ms: float | None
    max_ms: float
    le_ms: list[float]
    counts: list[int]


class ControllerStatus(Struct, kw_only=True, omit_defaults=True):
    """``bridge/controller/status`` and ``bridge/controller/{t}/status`` (retained)."""

    v: V
    src: str
    status: Literal["online", "offline"]
    ts: float | None = None
    tables: list[str] | None = None
    counters: dict[str, int] | None = None
    engine: dict[str, int] | None = None
    refused_sources: dict[str, str] | None = None
    #: what the command adds: ``--rules``, the table of ``bridge-table run``, the demo
    rules: str | None = None
    table: str | None = None
    demo: bool | None = None
    #: 1.8: the session the controller runs (``--session``/``--schedule``), when online
    session: str | None = None
    #: 1.15: the tables a controller given ``--tables``/``--partition`` serves (``tables``
    #: lists those it has heard from), when online: whose results its word covers
    serves: list[str] | None = None
    #: 1.16: the controller's own event -> outputs times since it started, when online
    latency: Latency | None = None


class ReaderHealth(Struct, kw_only=True):
    kind: str | None
    open: bool
    connected: bool
    anomalies: dict[str, int]


class Health(Struct, kw_only=True, omit_defaults=True):
    """``bridge/{t}/health``: the bridge's counters."""

    v: V
    src: str
    table: str
    ts: float
    connected: bool
    spool_depth: int
    spool_max: int
    spool_refused: int
    next_seq: int | None
    boot: str | None
    acked_seq: int | None
    resends: int
    readers: dict[str, ReaderHealth]
    events: int
    buttons: int
    unknown_tags: int
    duplicate_sightings: int
    last_duplicate: dict[str, Any] | None
    unmapped_antennas: int
    last_unmapped: dict[str, Any] | None
    bad_indicators: int
    last_bad_indicator: Any
    output_errors: int


class PublicSession(Struct, kw_only=True):
    """``public/session`` (1.2, retained)."""

    v: V
    session: str
    tables: list[str]
    event: str | None = None


class ViewIrregularity(Struct, kw_only=True, omit_defaults=True):
    """1.17: one irregularity in a board's view (the released alert, its public fields)."""

    id: int | None = None
    code: Code
    law: str | None = None
    seat: SeatName | None = None
    trick: int | None = None
    status: Status
    text: Texts = {}
    card: CardName | None = None
    call: BidCard | None = None
    detail: str | None = None


class ViewResult(Struct, kw_only=True, omit_defaults=True):
    """1.17: a board's result in its view (the released ``result`` without ``v``)."""

    table: str | None = None
    board: PublicBoardNo | None = None
    dealer: SeatName | None = None
    vul: Vul | None = None
    contract: Contract
    declarer: SeatName | None = None
    tricks: Tricks13 | None = None
    tricks_played: Tricks13 | None = None
    score_ns: int | None = None
    irregularities: list[ResultIrregularity] | None = None
    ns: int | None = None
    ew: int | None = None
    session: str | None = None


class BoardView(Struct, kw_only=True, omit_defaults=True):
    """``public/{t}/board/{b}`` and ``public/{t}/snapshot`` (1.2, retained; every field
    typed in 1.17: the relay publishes no view that does not decode)."""

    v: V
    session: str
    table: str
    board: PublicBoardNo
    round: int | None = None
    #: a pair's number, or its name as the session file gives it
    ns: int | str | None = None
    ew: int | str | None = None
    players: dict[Literal["ns", "ew"], str] | None = None
    event: str | None = None
    site: str | None = None
    date: str | None = None
    scoring: str | None = None
    dealer: SeatName | None = None
    vul: Vul | None = None
    deal: PbnDeal | None = None
    calls: list[tuple[SeatName, CallName, int | None]]
    cards: list[tuple[SeatName, CardName]]
    irregularities: list[ViewIrregularity]
    claim: dict[Literal["tricks"], Tricks13] | None = None
    result: ViewResult | None = None
    status: Literal["playing", "complete"]


class PublicNow(Struct, kw_only=True, omit_defaults=True):
    """``public/{t}/now`` (1.17, retained): the board a table plays; its contract and
    declarer only once the board is released at that table (1.18) or the operator opted in;
    never a call, card or hand."""

    v: V
    session: str
    table: str
    board: PublicBoardNo | None = None
    phase: Phase | None = None
    contract: Contract | None = None
    declarer: SeatName | None = None


class Commentary(Struct, kw_only=True):
    """``public/commentary`` (1.17, retained): the operator's latest line."""

    v: V
    session: str
    text: Annotated[str, Meta(max_length=2000)]
    at: Seconds


class Finding(Struct, omit_defaults=True):
    """One fault the verification station found on a board (docs/verification.md)."""

    kind: str
    detail: str
    seat: SeatName | None = None
    card: CardName | None = None
    other_seat: SeatName | None = None
    board: int | None = None
    count: int | None = None


class VerifiedBoard(Struct, kw_only=True):
    board: int
    ok: bool
    board_tag: int | None
    deck: str | None
    counts: dict[SeatName, int]
    findings: list[Finding]


class VerifyBoard(VerifiedBoard, tag_field="type", tag="board", kw_only=True):
    """``{root}/{station}/verify``, ``type: board``: one board's verdict."""

    v: V
    station: str


class VerifyReport(Struct, tag_field="type", tag="report", kw_only=True):
    """``{root}/{station}/verify``, ``type: report`` (retained): the whole run."""

    v: V
    station: str
    deals: str
    summary: dict[str, Any]
    file_problems: list[str]
    notes: dict[str, int]
    boards: list[VerifiedBoard]


Verify: TypeAlias = VerifyBoard | VerifyReport


#: topic kind -> the Struct (or union) of its payload: what ``decode`` and the schema use
OUTPUTS: Final[Mapping[str, Any]] = {
    "event": Event, "ruling": Ruling, "state": State, "alert": Alert, "indicator": Indicator,
    "result": Result, "feed": Feed, "error": Error, "ack": Ack, "bridge": BridgeStatus,
    "status": ControllerStatus, "health": Health, "session": PublicSession,
    "board": BoardView, "verify": Verify, "evidence": Evidence, "now": PublicNow,
    "commentary": Commentary,
}


# -- topics ---------------------------------------------------------------------------------
class Topic(NamedTuple):
    """A parsed ``{root}/{table}/{kind}[/{rest}]`` topic."""

    root: str
    table: str
    kind: str
    rest: str | None = None


def topic(table: str, kind: str, *, root: str = ROOT) -> str:
    """``{root}/{table}/{kind}``: event, ruling, state, alert, indicator, result, feed,
    error, bridge, health."""
    return f"{root}/{table}/{kind}"


def ack_topic(table: str, src: str, *, root: str = ROOT) -> str:
    """``{root}/{table}/ack/{src}`` (1.2)."""
    return f"{root}/{table}/ack/{src}"


def status_topic(table: str | None = None, *, root: str = ROOT) -> str:
    """The controller's status: ``{root}/controller/status`` for the daemon of every table,
    ``{root}/controller/{t}/status`` for a one-table controller (``bridge-table run``)."""
    return f"{root}/controller/status" if table is None else f"{root}/controller/{table}/status"


#: A table id (docs/wire-contract.md, "Table ids and limits"): 1-32 characters, letters,
#: digits, ``_ . -``, starting with a letter or a digit (so never ``.``, ``..`` or empty):
#: one topic level. The controller, broker-config and every ``--tables`` read it so.
TABLE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,31}")
#: Names under the topic root that are not tables (the daemon's status lives under them).
RESERVED_TABLE_IDS = frozenset({"controller"})
#: a range in a list of tables: optional letters (the section), first number, ``-``, the
#: same letters or none, last number: ``1-500``, ``A1-A20``, ``A1-20``
_TABLE_RANGE = re.compile(r"([A-Za-z_.]*)(\d+)-(?:\1)?(\d+)")
#: the most tables one list may name
MAX_TABLES_IN_SPEC = 100_000


def table_id_problem(table: str) -> str | None:
    """Why ``table`` is not a table id (None when it is one)."""
    if TABLE_ID.fullmatch(table) is None:
        return (f"table id {table[:64]!r}{'...' if len(table) > 64 else ''} is not "
                "1-32 letters, digits, '_', '.', '-' starting with a letter or a digit")
    if table in RESERVED_TABLE_IDS:
        return f"table id {table!r} is reserved"
    return None


def parse_tables(spec: str) -> tuple[str, ...]:
    """The table ids of a list such as ``1-500,A1-A20,B7``, in order, each once; ValueError
    says what is wrong (an id that is not one, half a range, a range backwards)."""
    tables: dict[str, None] = {}
    for item in (piece.strip() for piece in spec.split(",")):
        if not item:
            continue
        if item.startswith("-") or item.endswith("-"):  # "1-": a range half typed
            raise ValueError(f"{item!r} is half a range: give both ends (1-12)")
        m = _TABLE_RANGE.fullmatch(item)
        if m is not None:
            prefix, first, last = m.group(1), int(m.group(2)), int(m.group(3))
            if last < first:
                raise ValueError(f"{item!r} runs backwards")
            if last - first + 1 + len(tables) > MAX_TABLES_IN_SPEC:
                raise ValueError(f"more than {MAX_TABLES_IN_SPEC} tables")
            names: Iterable[str] = (f"{prefix}{i}" for i in range(first, last + 1))
        else:
            names = (item,)
        for name in names:
            problem = table_id_problem(name)
            if problem is not None:
                raise ValueError(problem)
            tables[name] = None
    if not tables:
        raise ValueError(f"no table in {spec!r}")
    return tuple(tables)


def parse_topic(name: str, *, root: str = ROOT) -> Topic | None:
    """The parts of a ``{root}/{t}/{kind}[/{rest}]`` topic; None for another root, a
    wildcard or an empty level. ``{t}`` may be ``controller`` (the daemon's status lives
    under it): ``controller.engine`` refuses it as a table id."""
    parts = name.split("/", 3)
    if len(parts) < 3 or parts[0] != root or not parts[1] or not parts[2] \
            or any("+" in p or "#" in p for p in parts):
        return None
    return Topic(root, parts[1], parts[2], parts[3] if len(parts) > 3 else None)


# -- encoding and decoding -------------------------------------------------------------------
_encoder = msgspec.json.Encoder()
_event_decoder = msgspec.json.Decoder(Event)
_ruling_decoder = msgspec.json.Decoder(Ruling)
_indicator_decoder = msgspec.json.Decoder(IndicatorShown)
_FRIENDLY = {
    "$.v": f"unsupported contract version (this controller speaks v={VERSION})",
    "$.type": "type must be 'tag' or 'button'",
    "$.ruling": "unknown ruling",
    "$.seat": "seat must be one of N E S W",
    "$.zone": "bad zone",
    "$.action": "bad action",
    "$.button": "unknown button",
    "$.deck": "deck must be a string or an integer",
    "$.ts": "ts must be a number of seconds since the epoch",
}
T = TypeVar("T")


#: Compact UTF-8 JSON of a payload (a Struct, or a mapping already in wire shape): the
#: encoder's own method, not a function that calls it (called for every message the
#: controller publishes and replay writes: a Python call in between cost 0.1 s a 1,000-board
#: replay)
encode: Final[Callable[[Struct | Mapping[str, Any]], bytes]] = _encoder.encode


def decode(payload: bytes | str, kind: type[T]) -> T:
    """Decode a payload into ``kind`` (a Struct of this module); raises
    ``msgspec.ValidationError`` / ``msgspec.DecodeError`` when it does not fit."""
    return msgspec.json.decode(payload, type=kind)


def to_builtins(payload: Struct) -> dict[str, Any]:
    """A Struct as the dict the engine's ``Outgoing`` carries (defaults omitted)."""
    out: dict[str, Any] = msgspec.to_builtins(payload)
    return out


def _explain(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    at = text.rpartition(" - at `")[2].rstrip("`") if " - at `" in text else ""
    friendly = _FRIENDLY.get(at)
    return f"{friendly}: {text}" if friendly else text


def _check_tag(msg: TagEvent) -> Malformed | None:
    if msg.acked is not None and (msg.boot is None or msg.acked >= msg.seq):
        return Malformed("acked must be an integer from 0 to seq - 1, with a boot")
    if msg.seat is None and (msg.zone is Zone.TRAY or msg.zone is Zone.BID
                             or msg.zone is Zone.SPOT):
        return Malformed(f"a {msg.zone} tag needs a seat")
    if msg.unknown is not True and (
            (msg.card is not None) + (msg.call is not None) + (msg.board is not None) != 1):
        return Malformed("a tag event needs exactly one of card, call, board or unknown")
    return None


def _check_button(msg: ButtonEvent) -> Malformed | None:
    if msg.acked is not None and (msg.boot is None or msg.acked >= msg.seq):
        return Malformed("acked must be an integer from 0 to seq - 1, with a boot")
    return None


def _check_ruling(msg: Ruling) -> Malformed | None:
    if (msg.ruling is RulingKind.ADJUST or msg.ruling is RulingKind.CLAIM) \
            and msg.tricks is None:
        return Malformed(f"ruling {msg.ruling} needs tricks (0-13)")
    if msg.ruling is RulingKind.BOARD and msg.board is None:
        return Malformed("ruling board needs board")
    if msg.ruling is RulingKind.UNINTENDED and msg.alert is None and (
            msg.call is None or msg.seat is None):
        return Malformed("ruling unintended needs alert, or seat and call")
    return None


#: What the types cannot say, per input Struct: ``acked`` below ``seq`` with a ``boot``, a
#: seat on tray and bid tags, exactly one of card / call / board / unknown, a ruling's
#: required fields.
_CHECKS: Final[Mapping[type, Any]] = {TagEvent: _check_tag, ButtonEvent: _check_button,
                                      Ruling: _check_ruling}


def decode_input(kind: Literal["event", "ruling"],
                 payload: bytes | str | Mapping[str, Any]) -> Input | Malformed:
    """An ``event`` or ``ruling`` payload (JSON bytes or text, or a mapping already decoded)
    as its Struct, or ``Malformed`` saying what is wrong. Never raises on bad input; unknown
    fields are ignored (a newer bridge may add some)."""
    text = type(payload) is bytes or isinstance(payload, bytes | str | bytearray)
    try:
        if not text:
            msg: Input = msgspec.convert(payload, Event if kind == "event" else Ruling)
        elif len(payload) > MAX_PAYLOAD:
            return Malformed(f"payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
        elif kind == "event":
            msg = _event_decoder.decode(payload)  # type: ignore[arg-type]
        else:
            msg = _ruling_decoder.decode(payload)  # type: ignore[arg-type]
    except msgspec.ValidationError as exc:
        if not text or _is_object(payload):  # type: ignore[arg-type]
            return Malformed(_explain(exc))
        return Malformed("payload is not a JSON object")
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return Malformed(f"not JSON: {exc}")
    except RecursionError:  # msgspec recurses per level: ~1,000 levels of [[[...]]]
        return Malformed("JSON nested too deeply")
    cls = type(msg)
    problem = _check_tag(msg) if cls is TagEvent else _CHECKS[cls](msg)  # type: ignore[arg-type]
    return msg if problem is None else problem


def decode_indicator(payload: bytes | str) -> IndicatorShown | Malformed:
    """An ``indicator`` payload as a bridge reads it (``IndicatorShown``), or ``Malformed``
    saying what is wrong. An empty payload (a retained message cleared) is all dark with
    nothing shown. Never raises on bad input."""
    if not payload.strip():
        return IndicatorShown(v=VERSION)
    if len(payload) > MAX_PAYLOAD:
        return Malformed(f"payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
    try:
        return _indicator_decoder.decode(payload)
    except msgspec.ValidationError as exc:
        if _is_object(payload):
            return Malformed(_explain(exc))
        return Malformed("payload is not a JSON object")
    except (msgspec.DecodeError, UnicodeDecodeError) as exc:
        return Malformed(f"not JSON: {exc}")
    except RecursionError:
        return Malformed("JSON nested too deeply")


def json_object(payload: bytes | str) -> dict[str, Any] | None:
    """A payload that a listener keeps as it is (the web apps' views of ``state``,
    ``result``, ``public/...``): its JSON object, or None when it is over ``MAX_PAYLOAD``,
    not JSON, or not an object."""
    if len(payload) > MAX_PAYLOAD:
        return None
    try:
        data = json.loads(payload)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _is_object(payload: bytes | str) -> bool:
    """Whether the JSON text is an object (only asked after a validation error)."""
    text = payload.lstrip() if isinstance(payload, str) else payload.lstrip().decode(
        "utf-8", "replace")
    return text.startswith("{")


def error_payload(table: str, input_kind: str, error: str,
                  payload: bytes | str | Mapping[str, Any] | None = None, *,
                  detail: Any = None) -> dict[str, Any]:
    """An ``error`` message (1.1): ``excerpt`` is the payload's first 200 characters."""
    if payload is None:
        raw = ""
    elif isinstance(payload, str):
        raw = payload[:200]
    elif isinstance(payload, bytes | bytearray):
        raw = bytes(payload[:800]).decode("utf-8", "replace")[:200]
    else:
        raw = _repr(payload)[:200]
    kind: Literal["event", "ruling"] = "ruling" if input_kind == "ruling" else "event"
    return to_builtins(Error(v=VERSION, table=table, input=kind, error=error, excerpt=raw,
                             detail=detail))


def _repr(payload: Any) -> str:
    """A mapping payload as text for an excerpt, even one nested too deeply to repr."""
    try:
        return repr(payload)
    except RecursionError:
        return "<nested too deeply>"


# -- the public topics (1.17): what the relay may publish, what the vugraph shows -------
def public_kind(topic: str) -> str | None:
    """The wire kind of a public topic (``public/3/board/7`` -> ``board``,
    ``public/3/snapshot`` -> ``board``, ``public/session`` -> ``session``), or None."""
    parts = topic.split("/")
    if len(parts) == 2:
        return parts[1] if parts[1] in ("session", "commentary") else None
    if len(parts) == 3:
        kind = "board" if parts[2] == "snapshot" else parts[2]
        return kind if kind in ("feed", "alert", "result", "now", "board") else None
    if len(parts) == 4 and parts[2] == "board":
        return "board"
    return None


def public_problem(kind: str, payload: Mapping[str, Any]) -> str | None:
    """Why ``payload`` is not a ``kind`` payload of the wire contract (None: it is)."""
    target = OUTPUTS.get(kind)
    if target is None:
        return f"no wire Struct for {kind!r}"
    try:
        msgspec.convert(payload, target, strict=True)
    except msgspec.ValidationError as exc:
        return str(exc)
    except RecursionError:
        return "nested too deeply"
    return None


# -- JSON Schema -----------------------------------------------------------------------------
def schema() -> dict[str, Any]:
    """The JSON Schema of every payload: ``$defs`` holds each Struct, ``topics`` maps each
    topic kind to its payload's schema."""
    kinds: Sequence[str] = list(OUTPUTS)
    refs, defs = msgspec.json.schema_components([OUTPUTS[k] for k in kinds],
                                                ref_template="#/$defs/{name}")
    _source_docstrings(defs)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"bridge-table wire contract, v {VERSION}",
        "description": "Generated by `python -m controller.wire --schema` from "
                       "controller/wire.py; docs/wire-contract.md explains each topic.",
        "topics": dict(zip(kinds, refs, strict=True)),
        "$defs": defs,
    }


#: the docstring mypyc gives a class it compiled without keeping the source's (an enum's)
_COMPILED_STAND_IN = "mypyc filler docstring"


def _source_docstrings(defs: dict[str, Any]) -> None:
    """The descriptions the sources give, where a class of the compiled wheel
    (tools/compiled_build.py) has a stand-in docstring: the schema is the same whichever
    runs. The wheel ships each compiled module's source beside it."""
    stand_ins = [name for name, d in defs.items()
                 if isinstance(d, dict) and d.get("description") == _COMPILED_STAND_IN]
    if not stand_ins:
        return
    import ast
    from importlib.machinery import EXTENSION_SUFFIXES
    from pathlib import Path

    import controller

    # each compiled module's source found from its name: mypyc gives a module that a
    # compiled module imported first a ``__file__`` with the package's folder twice
    package = Path(controller.__file__).parent
    sources = [package.joinpath(*name.split(".")[1:]).with_suffix(".py")
               for name, module in list(sys.modules.items())
               if name.startswith("controller.")
               and (getattr(module, "__file__", None) or "").endswith(
                   tuple(EXTENSION_SUFFIXES))]
    docs: dict[str, str | None] = {}
    for path in sorted(p for p in sources if p.is_file()):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                docs.setdefault(node.name, ast.get_docstring(node))
    for name in stand_ins:
        doc = docs.get(name)
        if doc:
            defs[name]["description"] = doc
        else:
            del defs[name]["description"]


def schema_text() -> str:
    return json.dumps(schema(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m controller.wire",
                                 description="The wire contract's JSON Schema.")
    ap.add_argument("--schema", action="store_true",
                    help="write the JSON Schema of every payload to standard output")
    args = ap.parse_args(argv)
    if not args.schema:
        ap.print_help()
        return 2
    sys.stdout.write(schema_text())
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
