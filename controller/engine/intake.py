"""The engine's intake: what comes in, before a table applies it.

An input's topic is parsed once per topic (``parse_topic``) and its payload decoded once
with ``controller.wire`` (``parse_input``: one msgspec typed decode, then the names
become the Laws core's values). Each source (``src``) of a table is tracked per boot
(``SeqTracker``, wire contract 1.2): a seq already applied is a duplicate (QoS 1
redelivers, bridges resend), one out of order or of a retired boot is refused
(``refusal``). What a board start carries of a table's sources, for a snapshot
(controller/service/snapshot.py), is ``CarriedSource``: ``carry_sources`` and
``restore_sources``. No I/O, no clock.
"""

from __future__ import annotations

import re
from collections import OrderedDict, deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from controller import WIRE_VERSION, wire
from controller.laws.cards import FULL_DECK, Call, Card, ParseError, Seat, Suit
from controller.laws.events import MARKERS, ButtonEvent, TagEvent
from controller.laws.rulings import Ruling

__all__ = ["MAX_PAYLOAD", "MAX_SEQ", "MAX_TABLES", "MAX_SOURCES", "REFUSALS_KEPT", "Boot",
           "SeqTracker", "Source", "CarriedBoot", "CarriedSource", "Parsed", "CALLS",
           "tracker_of", "refusal", "ack_payload", "carry_sources", "restore_sources",
           "table_refused", "parse_topic", "parse_input", "event_input"]

#: Larger payloads are refused unread (a sensor event is ~200 bytes).
MAX_PAYLOAD = wire.MAX_PAYLOAD

#: Every table and every source costs memory kept for the session: bounded by default
#: (``bridge-table controller --max-tables/--max-sources``).
MAX_TABLES = 1000
MAX_SOURCES = 64
#: Largest ``seq`` accepted (1.2): 2^53 - 1, the largest integer every JSON reader keeps
#: exact. A larger one is refused with an ``error``; it can no longer silence its source.
MAX_SEQ = wire.MAX_SEQ
#: a ``src`` that may go into a topic (``{root}/{t}/ack/{src}``)
_TOPIC_SAFE_SRC = re.compile(r"[A-Za-z0-9_.-]{1,64}")
#: boots remembered per source; events of an older (retired) boot are refused, visibly
_BOOTS_PER_SRC = 4
_RETIRED_BOOTS = 64
#: sources whose last refusal is kept for the daemon's status
REFUSALS_KEPT = 32


class Boot(NamedTuple):
    """An event's ``boot`` and ``acked`` (1.2), both absent from a version-1 bridge."""

    id: str | None
    #: the bridge's word that every seq of this boot up to ``acked`` was acknowledged
    acked: int | None = None


@dataclass
class SeqTracker:
    """Per (``src``, ``boot``): which seqs were applied.

    With a ``boot`` (1.2) the bridge numbers its events 1, 2, 3... and resends whatever the
    controller has not acknowledged, so events are applied strictly in order: ``high`` is
    the last applied, a lower seq is a duplicate, a higher one than ``high + 1`` is out of
    order (not applied: the bridge sends the missing ones again, then this one).
    Without a boot (version 1 bridges) the old rule holds: applied once by (src, seq), late
    (lower) seqs still applied once inside a window of 2048.
    """

    strict: bool = False
    high: int = -1
    #: the first seq seen of this boot (a controller may meet a boot after its start)
    low: int = -1
    recent: set[int] = field(default_factory=set)

    def verdict(self, seq: int) -> str:
        """``new``, ``duplicate``, ``gap`` (strict: out of order), ``before_start`` (strict:
        below the first seq this controller saw of the boot) or ``too_old`` (legacy)."""
        if self.high < 0 or seq == self.high + 1:
            return "new"
        if self.strict:
            if seq < self.low:
                return "before_start"
            return "duplicate" if seq <= self.high else "gap"
        if seq > self.high:
            return "new"
        if seq in self.recent:
            return "duplicate"
        return "too_old" if seq <= self.high - 2048 else "new"

    def fast_forward(self, acked: int) -> bool:
        """The bridge says a controller acknowledged every seq up to ``acked`` (this one,
        with another journal, or before this one first heard of the boot): go on after it.
        True if that moved ``high``."""
        if not self.strict or acked <= self.high:
            return False
        self.high = acked
        if self.low < 0 or self.low > acked + 1:
            self.low = acked + 1
        return True

    def add(self, seq: int) -> None:
        if self.low < 0:
            self.low = seq
        if seq > self.high:
            self.high = seq
        if self.strict:
            return
        self.recent.add(seq)
        if len(self.recent) > 4096:  # keep the window bounded; seqs only grow
            floor = self.high - 2048
            self.recent = {s for s in self.recent if s > floor}


@dataclass
class Source:
    """One ``src`` at one table: its boots (newest last), and those retired."""

    boots: OrderedDict[str | None, SeqTracker] = field(default_factory=OrderedDict)
    retired: deque[str] = field(default_factory=lambda: deque(maxlen=_RETIRED_BOOTS))


def tracker_of(seqs: dict[str, Source], src: str, boot: str | None) -> SeqTracker | None:
    """The tracker of (src, boot) among a table's sources, made when new; None if that
    boot was retired (a newer one took over)."""
    source = seqs.get(src)
    if source is None:
        source = seqs[src] = Source()
    found = source.boots.get(boot)
    if found is not None:
        return found
    if boot is not None and boot in source.retired:
        return None
    found = source.boots[boot] = SeqTracker(strict=boot is not None)
    while len(source.boots) > _BOOTS_PER_SRC:
        old, _ = source.boots.popitem(last=False)
        if old is not None:
            source.retired.append(old)
    return found


def refusal(src: str, boot: str | None, seq: int, verdict: str,
            tracker: SeqTracker | None) -> tuple[str, str]:
    """Why an event is not applied because of its seq (``verdict``, or ``retired`` when
    its boot was): the ``Engine.stats`` counter it goes into and the words of its
    ``error``."""
    expected = None if tracker is None else tracker.high + 1
    if verdict == "gap":
        return "out_of_order", (
            f"seq {seq} of src {src!r} boot {boot!r} is out of order (expected "
            f"{expected}): not applied; the bridge sends the missing events again")
    if verdict == "before_start":
        return "refused", (
            f"seq {seq} of src {src!r} boot {boot!r} is below {tracker and tracker.low}, "
            f"the first this controller applied of that boot: refused, not applied")
    if verdict == "retired":
        return "refused", (f"src {src!r}: boot {boot!r} was replaced by a newer boot: "
                           f"event seq {seq} refused")
    return "refused", (
        f"seq {seq} of src {src!r} is more than 2048 below its highest "
        f"({expected and expected - 1}): refused as a stale duplicate; a bridge whose "
        f"seq went back must send a new boot")


def ack_payload(src: str, source: Source | None) -> dict[str, Any] | None:
    """The acknowledgement of ``src`` (its newest boot's last seq applied), or None when
    there is nothing to acknowledge or ``src`` cannot go into a topic."""
    if source is None or not source.boots or not _TOPIC_SAFE_SRC.fullmatch(src):
        return None
    boot, newest = next(reversed(source.boots.items()))
    if newest.high < 0:
        return None
    payload: dict[str, Any] = {"v": WIRE_VERSION, "src": src, "seq": newest.high}
    if boot is not None:
        payload["boot"] = boot
    return payload


@dataclass(frozen=True, slots=True)
class CarriedBoot:
    """One boot of a source as carried across boards: which of its seqs were applied
    (``strict``, ``high``, ``low`` and the window of ``recent`` seqs: ``SeqTracker``)."""

    boot: str | None
    strict: bool
    high: int
    low: int
    recent: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class CarriedSource:
    """One ``src`` at one table as carried across boards: its boots (newest last) and the
    boots it retired."""

    src: str
    boots: tuple[CarriedBoot, ...]
    retired: tuple[str, ...]


def carry_sources(seqs: dict[str, Source]) -> tuple[CarriedSource, ...]:
    """A table's sources as carried across boards (copies: the table goes on)."""
    return tuple(
        CarriedSource(src, tuple(CarriedBoot(boot, s.strict, s.high, s.low,
                                             tuple(sorted(s.recent)))
                                 for boot, s in source.boots.items()),
                      tuple(source.retired))
        for src, source in seqs.items())


def restore_sources(sources: tuple[CarriedSource, ...]) -> dict[str, Source]:
    """A table's sources again from what ``carry_sources`` carried."""
    seqs: dict[str, Source] = {}
    for s in sources:
        boots: OrderedDict[str | None, SeqTracker] = OrderedDict(
            (b.boot, SeqTracker(b.strict, b.high, b.low, set(b.recent))) for b in s.boots)
        seqs[s.src] = Source(boots, deque(s.retired, maxlen=_RETIRED_BOOTS))
    return seqs


def table_refused(table: str) -> str | None:
    """Why an input naming ``table`` is refused (``wire.table_id_problem``)."""
    problem = wire.table_id_problem(table)
    return None if problem is None else f"refused: {problem}"


_SEATS = {s.name: s for s in Seat}
_CARDS = {str(c): c for c in FULL_DECK}
#: every call by its text (the engine's call texts are looked up here: controller/engine/
#: render.py)
CALLS = {str(c): c for c in (
    [Call.parse(f"{lv}{d}") for lv in range(1, 8) for d in ("C", "D", "H", "S", "NT")]
    + [Call.parse("Pass"), Call.parse("X"), Call.parse("XX")])}

#: an input decoded: its ``src``, boot, ``seq`` and the Laws core's input
Parsed = tuple[str, Boot, int, TagEvent | ButtonEvent | Ruling]
#: the origin of an event from a version-1 bridge (no boot, nothing acked)
_NO_BOOT = Boot(None)


@lru_cache(maxsize=4096)
def parse_topic(topic: str, root: str) -> wire.Topic | None:
    """``wire.parse_topic``, kept per topic: a table sends on the same two topics all
    session, and splitting and checking them again for every event is work for nothing."""
    return wire.parse_topic(topic, root=root)


def parse_input(kind: str, payload: bytes | str | Mapping[str, Any]
                ) -> Parsed | wire.Malformed:
    """The one parser of incoming messages: ``controller.wire`` decodes and checks the
    payload's shape (one msgspec typed decode), then its names become the core's values."""
    msg = wire.decode_input("ruling" if kind == "ruling" else "event", payload)
    cls = type(msg)
    try:
        if cls is wire.TagEvent:
            tag: wire.TagEvent = msg  # type: ignore[assignment]
            origin = _NO_BOOT if tag.boot is None and tag.acked is None \
                else Boot(tag.boot, tag.acked)
            if tag.card is not None and tag.unknown is None:  # the common case, inline
                card = _CARDS.get(tag.card)
                return tag.src, origin, tag.seq, TagEvent(
                    tag.zone, tag.action,
                    _SEATS[tag.seat] if tag.seat is not None else None, tag.uid.upper(),
                    card=card if card is not None else Card.parse(tag.card),
                    deck=None if tag.deck is None else str(tag.deck), ts=tag.ts)
            return tag.src, origin, tag.seq, _tag_event(tag)
        if cls is wire.ButtonEvent:
            button: wire.ButtonEvent = msg  # type: ignore[assignment]
            seat = _SEATS[button.seat] if button.seat is not None else None
            return button.src, Boot(button.boot, button.acked), button.seq, ButtonEvent(
                button.button, seat, button.ts)
        if cls is wire.Ruling:
            ruling: wire.Ruling = msg  # type: ignore[assignment]
            return ruling.src, Boot(ruling.boot), ruling.seq, _ruling(ruling)
    except ParseError as exc:
        return wire.Malformed(str(exc))
    assert isinstance(msg, wire.Malformed)
    return msg


def event_input(payload: bytes | str | Mapping[str, Any]) -> Parsed | wire.Malformed:
    """An ``event`` payload as the core's input (``bench/bench_wire.py`` times this)."""
    return parse_input("event", payload)


def _card(text: str) -> Card:
    card = _CARDS.get(text)
    return card if card is not None else Card.parse(text)


def _call(text: str) -> Call:
    call = CALLS.get(text)
    return call if call is not None else Call.parse(text)


def _tag_event(msg: wire.TagEvent) -> TagEvent:
    """Raises ParseError for a card or call the core does not know."""
    zone, action = msg.zone, msg.action
    seat = _SEATS[msg.seat] if msg.seat is not None else None
    uid = msg.uid.upper()
    if msg.unknown is True:
        return TagEvent(zone, action, seat, uid, unknown=True)
    if msg.card is not None:
        return TagEvent(zone, action, seat, uid, card=_card(msg.card),
                        deck=None if msg.deck is None else str(msg.deck), ts=msg.ts)
    if msg.call is not None:
        if msg.call not in CALLS and msg.call.upper() in MARKERS:
            return TagEvent(zone, action, seat, uid, marker=msg.call.upper())
        return TagEvent(zone, action, seat, uid, call=_call(msg.call), ts=msg.ts)
    return TagEvent(zone, action, seat, uid, board=msg.board)


def _ruling(msg: wire.Ruling) -> Ruling:
    """Raises ParseError for a card, call or suit the core does not know."""
    return Ruling(
        msg.ruling, alert=msg.alert, tricks=msg.tricks,
        seat=_SEATS[msg.seat] if msg.seat is not None else None,
        card=_card(msg.card) if msg.card is not None else None,
        call=_call(msg.call) if msg.call is not None else None,
        suit=Suit[msg.suit] if msg.suit is not None else None,
        option=msg.option, board=msg.board)
