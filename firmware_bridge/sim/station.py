"""Station mode of the simulated table: a verification station on pseudo-terminals.

A board reader and four pocket readers (layout ``pockets``), or a board reader and one pocket
reader the pockets are shown to in turn (layout ``sequential``): a ``SimTable`` whose readers
are ``VirtualFirmware`` on ptys, opened as ``sim://STATION/READER`` and so read back through the
real serial path (pyserial + the line protocol).

The driver puts each board's wallet tag on the board reader, then feeds each pocket's cards
one at a time through its pocket's feed slot (a tap reader: one card on the antenna at a time,
docs/sensing.md), as an operator would, and paces itself on what the station has applied.
The ``sequential`` layout shows the pockets in turn to one reader, each pocket lying on it
whole: the pile inventory, an option for readers built for it (its simulated reader reads up
to 16 tags at once). ``plan_boards`` turns a set of deals and a list of ``Fault`` into what is
physically presented: cards missing, moved, duplicated, from another deck, unknown tags, hands
rotated or swapped, another board's cards in the wallet, no board tag.

``SimTags`` is the station's tag registry: deterministic UIDs for every card of every deck
(deck = the board's number, one deck per board wallet) and for the board wallets; it answers
``lookup(uid)`` like engineer A's ``TagRegistry``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal

from controller.broker.settings import DEFAULT_URL
from controller.laws.cards import FULL_DECK, Card, Deal, Seat
from firmware_bridge.readers import open_reader
from firmware_bridge.sim.firmware import VirtualFirmware
from firmware_bridge.sim.table import PASS_ROUNDS, SimReaderSpec, SimTable
from firmware_bridge.taginfo import TagInfo

__all__ = ["SimTags", "Fault", "FAULT_KINDS", "BoardPlan", "plan_boards",
           "demo_faults", "SimStation"]

Layout = Literal["pockets", "sequential"]


class SimTags:
    """UIDs for the simulated station: ``04DDDDCC80`` cards (deck DDDD, card index CC),
    ``0B00BBBB`` board wallets; ``extra`` entries for replacement cards."""

    def __init__(self) -> None:
        self._extra: dict[str, TagInfo] = {}

    @staticmethod
    def uid_for_card(deck: str, card: Card) -> str:
        return f"04{int(deck):04X}{card.index:02X}80"

    @staticmethod
    def uid_for_board(board: int) -> str:
        return f"0B00{board:04X}"

    def add(self, info: TagInfo) -> str:
        self._extra[info.uid] = info
        return info.uid

    def lookup(self, uid: str) -> TagInfo | None:
        uid = uid.upper()
        if uid in self._extra:
            return self._extra[uid]
        if len(uid) == 10 and uid.startswith("04") and uid.endswith("80"):
            try:
                deck, index = int(uid[2:6], 16), int(uid[6:8], 16)
            except ValueError:
                return None
            if index < 52:
                card = next(c for c in FULL_DECK if c.index == index)
                return TagInfo(uid, "card", card=str(card), deck=str(deck))
        if len(uid) == 8 and uid.startswith("0B00"):
            try:
                return TagInfo(uid, "board", board=int(uid[4:], 16))
            except ValueError:
                return None
        return None


#: Every fault the simulator can put into a board, and the finding kind it must produce.
FAULT_KINDS: dict[str, str] = {
    "missing_card": "missing_card",
    "wrong_pocket": "wrong_pocket",
    "duplicated_card": "duplicated_card",
    "foreign_card": "foreign_card",
    "unknown_tag": "foreign_card",
    "rotated_1": "rotated",
    "rotated_2": "rotated",
    "rotated_3": "rotated",
    "hands_swapped": "hand_in_wrong_pocket",
    "other_board": "cards_match_board",
    "no_board_tag": "no_board_tag",
}


@dataclass(frozen=True)
class Fault:
    board: int
    kind: str


@dataclass(frozen=True)
class BoardPlan:
    """What is physically presented for one board."""

    board: int                                  # the wallet's number
    board_tag: bool                             # is its tag read?
    pockets: Mapping[Seat, tuple[str, ...]] = field(hash=False)   # UIDs per pocket
    faults: tuple[str, ...] = ()


def demo_faults(boards: Sequence[int]) -> list[Fault]:
    """Each fault kind once: on every other board from the second when the set is large
    enough, else on consecutive boards from the second (as many kinds as fit)."""
    numbers = list(boards)
    slots = numbers[1::2] if len(numbers) > 2 * len(FAULT_KINDS) else numbers[1:]
    return [Fault(b, k) for b, k in zip(slots, FAULT_KINDS, strict=False)]


def plan_boards(deals: Mapping[int, Deal], faults: Sequence[Fault] = (),
                tags: SimTags | None = None) -> list[BoardPlan]:
    """The physical presentation of each board, faults applied (deterministically)."""
    tags = tags or SimTags()
    by_board: dict[int, list[str]] = {}
    for f in faults:
        if f.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault {f.kind!r} (known: {', '.join(FAULT_KINDS)})")
        by_board.setdefault(f.board, []).append(f.kind)
    numbers = sorted(deals)
    plans: list[BoardPlan] = []
    for i, board in enumerate(numbers):
        deal = deals[board]
        deck = str(board)
        kinds = by_board.get(board, [])
        for kind in kinds:
            if kind.startswith("rotated_"):
                deal = deal.rotated(int(kind[-1]))
            elif kind == "hands_swapped":
                deal = Deal.from_hands({s: deal[s.partner] if s in (Seat.N, Seat.S) else deal[s]
                                        for s in Seat})
            elif kind == "other_board":
                other = numbers[i - 1] if i > 0 else numbers[(i + 1) % len(numbers)]
                deal, deck = deals[other], str(other)
        pockets: dict[Seat, list[str]] = {
            s: [tags.uid_for_card(deck, c) for c in sorted(deal[s], reverse=True)] for s in Seat}
        for kind in kinds:
            if kind == "missing_card":
                pockets[Seat.E].pop(3)
            elif kind == "wrong_pocket":
                pockets[Seat.W].append(pockets[Seat.N].pop(5))
            elif kind == "duplicated_card":
                # a replacement card enrolled for the S pocket's first card: a second one of it
                info = tags.lookup(pockets[Seat.S][0])
                assert info is not None
                uid = f"05{board:04X}{len(pockets[Seat.S]):02X}99"
                tags.add(TagInfo(uid, "card", card=info.card, deck=info.deck))
                pockets[Seat.N].append(uid)
            elif kind == "foreign_card":
                uid = pockets[Seat.W][0]
                info = tags.lookup(uid)
                assert info is not None and info.card is not None
                pockets[Seat.W][0] = tags.uid_for_card(str(int(deck) + 1000),
                                                       Card.parse(info.card))
            elif kind == "unknown_tag":
                pockets[Seat.S].append(f"DEAD{board:04X}BEEF")
        plans.append(BoardPlan(board, "no_board_tag" not in kinds,
                               {s: tuple(v) for s, v in pockets.items()}, tuple(kinds)))
    return plans


class SimStation:
    """The station's readers as a simulated table (engineer A's ``SimTable``): a virtual
    firmware per reader, opened as ``sim://STATION/READER`` through the real serial path.
    ``config()`` is the station's TOML as a dict (engineer B's schema + ``[station]``)."""

    def __init__(self, *, layout: Layout = "pockets", station_id: str = "station-sim",
                 broker_url: str = DEFAULT_URL,
                 order: Sequence[Seat] = tuple(Seat)) -> None:
        self.layout: Layout = layout
        self.station_id = station_id
        self.broker_url = broker_url
        self.order = tuple(order)
        #: the pockets' cards go through feed slots one at a time (tap readers); else
        #: (``sequential``) each pocket lies whole on one reader built for a pile
        self.feed = layout == "pockets"
        specs = [SimReaderSpec("board", {0: ("board", None)})]
        if layout == "pockets":
            specs += [SimReaderSpec(f"pocket-{s.name}", {0: ("pocket", s.name)}, kind="tap")
                      for s in Seat]
        else:
            specs.append(SimReaderSpec("pockets", {0: ("pocket", "N")}, tag_limit=16))
        self.specs = tuple(specs)
        self.table = SimTable(station_id, self.specs)

    @property
    def board_fw(self) -> VirtualFirmware:
        return self.table.firmwares["board"]

    def pocket_fw(self, seat: Seat) -> VirtualFirmware:
        name = f"pocket-{seat.name}" if self.layout == "pockets" else "pockets"
        return self.table.firmwares[name]

    async def __aenter__(self) -> SimStation:
        await self.table.start()
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.table.close()

    def config(self) -> dict[str, Any]:
        readers = [{"name": spec.name, "url": f"sim://{self.station_id}/{spec.name}",
                    "kind": spec.kind,
                    "antennas": {str(a): ({"zone": z} if seat is None else
                                          {"zone": z, "seat": seat})
                                 for a, (z, seat) in spec.antennas.items()}}
                   for spec in self.specs]
        return {"table": {"id": self.station_id, "src": f"{self.station_id}-pi"},
                "broker": {"url": self.broker_url},
                "readers": readers,
                "station": {"layout": self.layout, "order": [s.name for s in self.order]}}

    def open_readers(self) -> list[tuple[Any, dict[str, tuple[str, str | None]]]]:
        """(reader, antenna map) pairs, opened through ``open_reader("sim://...")``."""
        out = []
        for r in self.config()["readers"]:
            reader = open_reader(r["name"], r["url"], kind=r["kind"])
            ants = {k: (v["zone"], v.get("seat")) for k, v in r["antennas"].items()}
            out.append((reader, ants))
        return out

    async def present(self, plan: BoardPlan, station: Any, *, timeout: float = 30.0) -> bool:
        """Show one board to ``station`` (a ``controller.verify.station.Station``); returns
        once the station has given its verdict for it (False: it did not, in time)."""
        before = len(station.follower.results)
        if plan.board_tag:
            uid = SimTags.uid_for_board(plan.board)
            start = station.applied
            self.board_fw.place(0, uid)
            if not await station.wait_until(lambda: station.follower.board_tag == plan.board,
                                            timeout):
                return False
            self.board_fw.lift(0, uid)
            # the wallet's removal applied before any pocket: the readers are separate lines
            if not await station.wait_until(lambda: station.applied >= start + 2, timeout):
                return False
        seats = self.order if self.layout == "sequential" else tuple(Seat)
        if self.feed:
            # each pocket's cards through its feed slot, one at a time; a pocket in after 13
            target = station.applied + sum(len(set(plan.pockets[s])) for s in seats)
            for seat in seats:
                fw = self.pocket_fw(seat)
                for uid in plan.pockets[seat]:
                    fw.place(0, uid, dwell=PASS_ROUNDS)
                    fw.lift(0, uid)
            if not await station.wait_until(lambda: station.applied >= target, timeout):
                return False
            if any(len(plan.pockets[s]) != 13 for s in Seat):
                # a pocket short (or over) is not in at 13: the next board's tag (or the
                # end) closes this board
                return True
            return bool(await station.wait_until(
                lambda: len(station.follower.results) > before, timeout))
        for seat in seats:
            fw = self.pocket_fw(seat)
            uids = plan.pockets[seat]
            if not uids:
                continue
            target = station.applied + 2 * len(set(uids))
            for uid in uids:
                fw.place(0, uid)
            for uid in uids:
                fw.lift(0, uid)
            if self.layout == "sequential":
                # the next pocket goes on only once this one is off and counted
                if not await station.wait_until(lambda t=target: station.applied >= t, timeout):
                    return False
        if any(not plan.pockets[s] for s in Seat):
            # a pocket never shown: the next board's tag (or the end) closes this board
            return True
        return bool(await station.wait_until(
            lambda: len(station.follower.results) > before, timeout))

    async def run(self, plans: Sequence[BoardPlan], station: Any,
                  *, timeout: float = 30.0) -> int:
        """Present every plan; returns how many boards timed out (0 when all went through)."""
        await station.ready.wait()
        # each firmware booted before the host opened its port: wait for every host to have
        # spoken (it asks for an inventory on connecting), so that the first board's tags are
        # not mixed with the start-up inventory
        await self.table.wait_hosts(timeout)
        late = 0
        for plan in plans:
            with contextlib.suppress(TimeoutError):
                if not await self.present(plan, station, timeout=timeout):
                    late += 1
        return late

