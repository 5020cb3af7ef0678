"""The verification station: follow boards as they come and give a verdict for each.

Two layers:

- ``StationFollower`` (pure, synchronous): fed ``TagEvent`` values (zone ``board`` or
  ``pocket``), it keeps the board being checked and returns a ``BoardResult`` whenever a board
  is finished: the four pockets are in (each pocket reader emptied again after holding cards,
  or 13 taps on a tap reader), or the next board's tag arrives, or ``flush()`` at the end.
- ``Station`` (asyncio): opens the station's readers (engineer A's ``open_reader``), turns each
  ``TagRead`` into a ``TagEvent`` with the config's antenna map and a tag registry, feeds the
  follower and hands each result to callbacks (progress bar, MQTT, report).

Two layouts: ``pockets`` (a reader, or an antenna, per pocket: the seat comes from the
antenna) and ``sequential`` (one pocket reader; the pockets are presented in turn, N E S W by
default: each time the reader empties the next seat begins).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from controller.laws.cards import Card, Deal, ParseError, Seat
from controller.laws.dealcheck import (
    DealIndex,
    DuplicateBoardDetector,
    Finding,
    FindingKind,
    ForeignTag,
    Verdict,
    check_board,
    match_board,
)
from controller.laws.events import Action, TagEvent, Zone
from firmware_bridge.taginfo import TagInfo, TagLookup

__all__ = [
    "Layout", "BoardResult", "StationFollower", "TagLookup", "TagInfo", "Station",
    "StationReader", "tag_event", "VerifyError", "tag_event_from_payload", "EventFollower",
]

Layout = Literal["pockets", "sequential"]


class VerifyError(Exception):
    """Base of the verify package's exceptions (set-up problems only: bad deal file, config)."""


@dataclass(frozen=True, slots=True)
class BoardResult:
    """One board checked: the verdict, the board tag read (None: none), what each pocket held."""

    verdict: Verdict
    board_tag: int | None
    seen: Mapping[Seat, tuple[Card, ...]] = field(hash=False)
    foreign: tuple[ForeignTag, ...] = ()
    deck: str | None = None
    ts: float | None = None

    @property
    def board(self) -> int:
        return self.verdict.board

    @property
    def ok(self) -> bool:
        return self.verdict.ok


@dataclass
class _Pocket:
    cards: list[Card] = field(default_factory=list)
    decks: list[str | None] = field(default_factory=list)
    uids: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)   # uids no registry knows, or no card
    on_reader: set[str] = field(default_factory=set)
    done: bool = False

    @property
    def touched(self) -> bool:
        return bool(self.uids or self.unknown)


@dataclass
class _Board:
    tag: int | None = None
    pockets: dict[Seat, _Pocket] = field(default_factory=lambda: {s: _Pocket() for s in Seat})
    turn: int = 0          # sequential layout: index into the order
    ts: float | None = None

    @property
    def touched(self) -> bool:
        return any(p.touched for p in self.pockets.values())


class StationFollower:
    """Boards as they come: board tag -> pocket tags -> verdict.

    ``deals``: the deal file's sound deals by board; ``broken``: boards whose record was
    broken (named in the verdict rather than "no such board"). ``tap``: the pocket readers
    are tap readers (a pocket is in after 13 taps instead of when its reader empties).
    """

    def __init__(self, deals: Mapping[int, Deal], *, broken: Collection[int] = (),
                 layout: Layout = "pockets", order: Sequence[Seat] = tuple(Seat),
                 tap: bool = False) -> None:
        if layout not in ("pockets", "sequential"):
            raise VerifyError(f"layout must be 'pockets' or 'sequential', not {layout!r}")
        if sorted(order) != sorted(Seat):
            raise VerifyError(f"the order must name each seat once: {order!r}")
        self.deals = deals if isinstance(deals, DealIndex) else DealIndex(deals)
        self.broken = frozenset(broken)
        self.layout: Layout = layout
        self.order = tuple(order)
        self.tap = tap
        self.duplicates = DuplicateBoardDetector()
        self.results: list[BoardResult] = []
        self.notes: list[str] = []
        self._board = _Board()

    # --- state --------------------------------------------------------------------------

    @property
    def board_tag(self) -> int | None:
        """The board tag of the board being checked (None: none read yet)."""
        return self._board.tag

    @property
    def current_seat(self) -> Seat | None:
        """Sequential layout: the pocket expected now."""
        if self.layout != "sequential" or self._board.turn >= 4:
            return None
        return self.order[self._board.turn]

    # --- input ----------------------------------------------------------------------------

    def feed(self, event: TagEvent, ts: float | None = None) -> list[BoardResult]:
        """Apply one tag event; returns the boards it finished (zero or one, two at most)."""
        out: list[BoardResult] = []
        if event.zone is Zone.BOARD:
            if event.action is not Action.PRESENT:
                return out  # the wallet taken off the reader: nothing to do
            if event.board is None:
                self.notes.append(f"tag {event.uid} on the board reader is no board tag")
                return out
            if self._board.tag == event.board:
                return out  # the same wallet read again
            if self._board.tag is not None and self._board.touched:
                out += self._finish()
            if self._board.touched:
                # the cards came in before their board tag (the readers are separate lines,
                # or the wallet was put down late): the tag belongs to them
                self._board.tag = event.board
            else:
                self._board = _Board(tag=event.board, ts=ts)
            return out
        if event.zone is not Zone.POCKET:
            return out
        if self._board.ts is None:
            self._board.ts = ts
        seat = self._seat_for(event)
        if seat is None:
            # sequential: all four pockets in, a fifth comes: a new board without a tag
            out += self._finish()
            self._board = _Board(ts=ts)
            seat = self._seat_for(event)
            assert seat is not None
        pocket = self._board.pockets[seat]
        if event.action is Action.PRESENT:
            pocket.on_reader.add(event.uid)
            if event.uid in pocket.uids or event.uid in pocket.unknown:
                return out  # the same tag again (read twice): it is one card
            if event.card is not None and not event.unknown:
                pocket.cards.append(event.card)
                pocket.decks.append(event.deck)
                pocket.uids.append(event.uid)
            else:
                pocket.unknown.append(event.uid)
            if self.tap and len(pocket.uids) + len(pocket.unknown) >= 13:
                out += self._pocket_in(seat)
        else:
            pocket.on_reader.discard(event.uid)
            if not pocket.on_reader and pocket.touched and not self.tap:
                out += self._pocket_in(seat)
        return out

    def flush(self) -> list[BoardResult]:
        """The end of the session: the board being checked, if any cards were seen (a board
        tag read with no pocket after it is a note, not a verdict)."""
        if self._board.touched:
            return self._finish()
        if self._board.tag is not None:
            self.notes.append(f"board {self._board.tag}: tag read, no pocket shown")
            self._board = _Board()
        return []

    # --- internals ------------------------------------------------------------------------

    def _seat_for(self, event: TagEvent) -> Seat | None:
        if self.layout == "pockets":
            return event.seat if event.seat is not None else Seat.N
        if self._board.turn >= 4:
            return None
        return self.order[self._board.turn]

    def _pocket_in(self, seat: Seat) -> list[BoardResult]:
        pocket = self._board.pockets[seat]
        pocket.done = True
        if self.layout == "sequential":
            self._board.turn += 1
            if self._board.turn >= 4:
                return self._finish()
            return []
        if all(p.done for p in self._board.pockets.values()):
            return self._finish()
        return []

    def _finish(self) -> list[BoardResult]:
        board, self._board = self._board, _Board()
        result = self._verdict(board)
        self.results.append(result)
        return [result]

    def _verdict(self, b: _Board) -> BoardResult:
        all_decks = Counter(d for p in b.pockets.values() for d in p.decks)
        deck = all_decks.most_common(1)[0][0] if all_decks else None
        seen: dict[Seat, list[Card]] = {s: [] for s in Seat}
        foreign: list[ForeignTag] = []
        for seat, p in b.pockets.items():
            for card, d, uid in zip(p.cards, p.decks, p.uids, strict=True):
                if d != deck:
                    foreign.append(ForeignTag(uid=uid, seat=seat, card=card, deck=d))
                else:
                    seen[seat].append(card)
            foreign += [ForeignTag(uid=u, seat=seat) for u in p.unknown]
        frozen_seen = {s: tuple(v) for s, v in seen.items()}
        findings: list[Finding] = []
        number = b.tag
        if number is None:
            matched = match_board(seen, self.deals)
            number = matched[0] if matched is not None else 0
            findings.append(Finding(
                FindingKind.NO_BOARD_TAG, board=matched[0] if matched else None,
                detail="no board tag read" + (f"; the cards are board {matched[0]}'s deal"
                                              if matched else "")))
        expected = self.deals.get(number)
        if expected is None:
            if b.tag is not None:
                why = "is broken" if number in self.broken else "is not in the deal file"
                matched = match_board(seen, self.deals)
                more = f"; the cards are board {matched[0]}'s deal" if matched else ""
                findings.append(Finding(FindingKind.NO_DEAL, board=number,
                                        detail=f"board {number} {why}{more}"))
            findings += [Finding(FindingKind.FOREIGN_CARD, seat=t.seat, card=t.card,
                                 detail=f"foreign {t.describe()}") for t in foreign]
            verdict = Verdict(number, False, tuple(findings))
        else:
            checked = check_board(expected, seen, board=number, foreign=foreign,
                                  deals=self.deals)
            findings += checked.findings
            matched_boards = {f.board for f in checked.findings
                              if f.kind is FindingKind.CARDS_MATCH_BOARD}
            # cards that are another board's deal are named already; only the rest can make
            # a board dealt twice
            earlier = None if matched_boards else self.duplicates.observe(number, seen)
            if earlier is not None:
                findings.append(Finding(FindingKind.DUPLICATE_BOARD, board=earlier,
                                        detail=f"the same deal was seen as board {earlier}"))
            verdict = Verdict(number, not findings, tuple(findings))
        return BoardResult(verdict, b.tag, frozen_seen, tuple(foreign), deck, b.ts)


# --- from reader reads to tag events --------------------------------------------------------

def tag_event(zone: str, seat: str | None, uid: str, action: str,
              info: TagInfo | None) -> TagEvent:
    """A ``TagEvent`` for one read: ``info`` None (or a tag of the wrong kind) is unknown."""
    z = Zone(zone)
    a = Action(action)
    s = Seat.parse(seat) if seat else None
    if info is None:
        return TagEvent(z, a, s, uid, unknown=True)
    if info.kind == "board" and info.board is not None:
        return TagEvent(z, a, s, uid, board=int(info.board))
    if info.kind == "card" and info.card:
        try:
            return TagEvent(z, a, s, uid, card=Card.parse(info.card), deck=info.deck)
        except ParseError:
            return TagEvent(z, a, s, uid, unknown=True)
    return TagEvent(z, a, s, uid, unknown=True)


@dataclass(frozen=True)
class StationReader:
    """One reader of the station and what each of its antennas is: (zone, seat)."""

    reader: Any                                   # firmware_bridge.readers.Reader
    antennas: Mapping[str, tuple[str, str | None]]


ResultCallback = Callable[[BoardResult], Awaitable[None] | None]
NoteCallback = Callable[[str], None]


class Station:
    """The readers, the registry and the follower, run together.

    ``await station.run()`` reads until ``stop()``; then the board in progress is flushed.
    ``await station.wait_until(pred)`` lets a driver (the simulator) pace itself on what the
    station has applied.
    """

    def __init__(self, readers: Sequence[StationReader], registry: TagLookup,
                 follower: StationFollower, *, on_result: Iterable[ResultCallback] = (),
                 on_note: NoteCallback | None = None) -> None:
        self.readers = list(readers)
        self.registry = registry
        self.follower = follower
        self.on_result = list(on_result)
        self.on_note = on_note
        self.applied = 0
        self.notes: Counter[str] = Counter()
        self._queue: asyncio.Queue[tuple[StationReader, Any] | None] = asyncio.Queue()
        self._changed = asyncio.Condition()
        self._stopping = False
        self.ready = asyncio.Event()

    def stop(self) -> None:
        self._stopping = True
        self._queue.put_nowait(None)

    async def wait_until(self, predicate: Callable[[], bool], timeout: float = 30.0) -> bool:
        async with self._changed:
            try:
                await asyncio.wait_for(self._changed.wait_for(predicate), timeout)
            except TimeoutError:
                return False
        return True

    async def run(self) -> list[BoardResult]:
        async with contextlib.AsyncExitStack() as stack:
            for r in self.readers:
                await stack.enter_async_context(r.reader)
            pumps = [asyncio.create_task(self._pump(r)) for r in self.readers]
            self.ready.set()
            try:
                while True:
                    item = await self._queue.get()
                    if item is None:
                        break
                    await self._apply(*item)
            finally:
                for t in pumps:
                    t.cancel()
                await asyncio.gather(*pumps, return_exceptions=True)
        for result in self.follower.flush():
            await self._deliver(result)
        async with self._changed:
            self._changed.notify_all()
        return list(self.follower.results)

    async def _pump(self, r: StationReader) -> None:
        async for item in r.reader:
            self._queue.put_nowait((r, item))

    def _note(self, text: str) -> None:
        self.notes[text] += 1
        if self.on_note is not None:
            try:
                self.on_note(text)
            except Exception:  # noqa: BLE001 - a broken console must not stop the station
                pass

    async def _apply(self, r: StationReader, item: Any) -> None:
        if not hasattr(item, "uid"):   # ReaderHealth: counted, shown, never fatal
            self._note(f"reader {getattr(item, 'reader', '?')}: {getattr(item, 'kind', '?')} "
                       f"({getattr(item, 'detail', '')})")
            return
        where = r.antennas.get(str(item.antenna))
        if where is None:
            self._note(f"reader {item.reader}: antenna {item.antenna} is not in the config")
            return
        zone, seat = where
        event = tag_event(zone, seat, item.uid, item.action, self.registry.lookup(item.uid))
        results = self.follower.feed(event, ts=item.ts)
        self.applied += 1
        for result in results:
            await self._deliver(result)
        async with self._changed:
            self._changed.notify_all()

    async def _deliver(self, result: BoardResult) -> None:
        # one consumer failing (a closed terminal, a report sink) must not cost the others
        # their verdicts nor stop the station: it becomes a note
        for callback in self.on_result:
            try:
                maybe = callback(result)
                if maybe is not None:
                    await maybe
            except Exception as e:  # noqa: BLE001
                self._note(f"board {result.board}: {getattr(callback, '__name__', callback)} "
                           f"failed: {e!r}")


# --- from the wire: a bridge already runs the station's readers ----------------------------

def tag_event_from_payload(payload: Any) -> tuple[tuple[str, int] | None, TagEvent] | None:
    """A contract ``event`` payload as ((src, seq), TagEvent); None for what the station does
    not use (buttons, other zones) or cannot read (a malformed message)."""
    if not isinstance(payload, dict) or payload.get("type") != "tag":
        return None
    try:
        zone = Zone(str(payload["zone"]))
        action = Action(str(payload["action"]))
        uid = str(payload["uid"]).upper()
        seat = Seat.parse(str(payload["seat"])) if payload.get("seat") else None
        card = Card.parse(str(payload["card"])) if payload.get("card") else None
        board = payload.get("board")
        board = int(board) if board is not None and not isinstance(board, bool) else None
    except (KeyError, ValueError, TypeError):
        return None
    if zone not in (Zone.BOARD, Zone.POCKET):
        return None
    src, seq = payload.get("src"), payload.get("seq")
    key = (src, seq) if isinstance(src, str) and isinstance(seq, int) else None
    deck = payload.get("deck")
    unknown = bool(payload.get("unknown")) or (card is None and board is None)
    return key, TagEvent(zone, action, seat, uid, card=card,
                         deck=None if deck is None else str(deck), board=board, unknown=unknown)


class EventFollower:
    """Contract events (``{root}/{station}/event``, from a bridge running the station's
    readers) into the follower: duplicates (same src and seq) applied once, bad messages
    counted, never fatal."""

    def __init__(self, follower: StationFollower, *, on_result: Iterable[ResultCallback] = ()
                 ) -> None:
        self.follower = follower
        self.on_result = list(on_result)
        self.applied = 0
        self.ignored = 0
        self.duplicates = 0
        self._seen: set[tuple[str, int]] = set()

    async def message(self, raw: bytes | str) -> list[BoardResult]:
        import json
        try:
            payload = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            self.ignored += 1
            return []
        parsed = tag_event_from_payload(payload)
        if parsed is None:
            self.ignored += 1
            return []
        key, event = parsed
        if key is not None:
            if key in self._seen:
                self.duplicates += 1
                return []
            self._seen.add(key)
        ts = payload.get("ts")
        results = self.follower.feed(event, ts=float(ts) if isinstance(ts, int | float) else None)
        self.applied += 1
        for result in results:
            for callback in self.on_result:
                try:
                    maybe = callback(result)
                    if maybe is not None:
                        await maybe
                except Exception as e:  # noqa: BLE001 - as in Station._deliver
                    self.follower.notes.append(f"board {result.board}: a consumer failed: {e!r}")
        return results
