"""The notation of laws.md section 7, mapped onto the wire contract's events.

``C:W:1H`` is a call (a bid card ``present`` in W's bidding zone), ``+E:HJ`` a card put on
E's tray, ``-N:C6`` one taken from it, ``T1 W:CT N:C2 ...(S)`` a trick (each card put in
turn; the winner in brackets is checked), ``H:N,E,S:13`` hand scans, ``Board 15`` the board
reader. ``AUTO`` finishes play with the deterministic rule of section 7. Rulings go through
the engine's ``ruling`` topic like a director's console.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from controller.engine import Engine, Outgoing
from controller.laws.cards import Card, Deal, Rules, Seat, Suit, board_dealer, board_vulnerability
from controller.laws.record import DealInfo
from controller.laws.table import Table


def card_uid(card: Card) -> str:
    return f"C{card.index:02X}"


@dataclass
class Harness:
    """One table driven through the Engine as the bridge and the director would."""

    board: int
    deal: Deal
    rules: Rules = Rules.L2017
    schedule: Iterable[int] | None = None
    table: str = "7"
    deals_known: bool = True
    others: dict[int, Deal] = field(default_factory=dict)   # more boards of the deals file
    engine: Engine = field(init=False)
    out: list[Outgoing] = field(default_factory=list)
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    seq: int = 0

    def __post_init__(self) -> None:
        deals = {n: DealInfo(n, board_dealer(n), board_vulnerability(n), d)
                 for n, d in {**self.others, self.board: self.deal}.items()}
        schedule = {self.table: frozenset(self.schedule)} if self.schedule else None
        self.engine = Engine(deals=deals if self.deals_known else {}, rules=self.rules,
                             schedule=schedule)

    # -- raw events ------------------------------------------------------------------------
    def send(self, payload: dict[str, Any], kind: str = "event") -> list[Outgoing]:
        self.seq += 1
        payload = {"v": 1, "src": "sim" if kind == "event" else "td", "seq": self.seq,
                   "ts": 1_700_000_000.0 + self.seq, **payload}
        topic = f"bridge/{self.table}/{kind}"
        self.sent.append((topic, payload))
        outs = self.engine.handle(topic, payload)
        self.out += outs
        return outs

    def tag(self, zone: str, seat: str | None, action: str, **what: Any) -> list[Outgoing]:
        payload: dict[str, Any] = {"type": "tag", "zone": zone, "action": action,
                                   "uid": what.pop("uid", "00")}
        if seat is not None:
            payload["seat"] = seat
        payload.update(what)
        return self.send(payload)

    def board_tag(self, number: int) -> list[Outgoing]:
        return self.tag("board", None, "present", board=number, uid=f"B{number:02X}")

    def call(self, seat: str, call: str) -> list[Outgoing]:
        return self.tag("bid", seat, "present", call=call, uid=f"BID{seat}{call}")

    def put(self, seat: str, card: str, action: str = "present") -> list[Outgoing]:
        c = Card.parse(card)
        return self.tag("tray", seat, action, card=str(c), deck=str(self.board), uid=card_uid(c))

    def take(self, seat: str, card: str) -> list[Outgoing]:
        return self.put(seat, card, "removed")

    def rule(self, ruling: str, **fields: Any) -> list[Outgoing]:
        return self.send({"ruling": ruling, **fields}, kind="ruling")

    def scan(self, seats: str = "NESW", count: int = 13, pick_up: bool = True,
             deal: Deal | None = None) -> None:
        """Each seat's hand scan (of ``deal``, by default the board's own)."""
        for s in seats.split(",") if "," in seats else seats:
            seat = Seat[s]
            cards = sorted((deal or self.deal)[seat])[:count]
            for c in cards:
                self.put(s, str(c))
            if pick_up:
                for c in cards:
                    self.take(s, str(c))

    # -- the notation ----------------------------------------------------------------------
    def run(self, script: str) -> None:
        for token in _tokens(script):
            self.step(token)

    def step(self, token: str) -> None:
        if token == "AUTO":
            self.auto()
            return
        m = re.fullmatch(r"C:([NESW]):(\w+)", token)
        if m:
            call = {"P": "Pass", "N": "NT"}.get(m.group(2), m.group(2))
            call = re.sub(r"^(\d)N$", r"\1NT", call)
            self.call(m.group(1), call)
            return
        m = re.fullmatch(r"([+-])([NESW]):(\w\w)", token)
        if m:
            (self.put if m.group(1) == "+" else self.take)(m.group(2), m.group(3))
            return
        m = re.fullmatch(r"([NESW]):(\w\w)(?:\(([NESW])\))?", token)
        if m:
            self.put(m.group(1), m.group(2))
            if m.group(3):
                last = self.last_trick()
                assert last is not None and last.winner is Seat[m.group(3)], (
                    f"trick won by {last.winner if last else None}, expected {m.group(3)}")
            return
        m = re.fullmatch(r"T\d+", token)
        if m:
            return
        raise ValueError(f"unknown scenario token {token!r}")

    # -- views -----------------------------------------------------------------------------
    @property
    def t(self) -> Table:
        return self.engine._tables[self.table].table

    def last_trick(self) -> Any:
        board = self.t.board
        assert board is not None and board.play is not None
        return board.play.tricks[-1] if board.play.tricks else None

    def alerts(self, code: str | None = None) -> list[dict[str, Any]]:
        """Every alert message published, in order (``code`` filters)."""
        return [o.payload for o in self.out if o.topic.endswith("/alert")
                and (code is None or o.payload["code"] == code)]

    def final_alerts(self) -> dict[int, dict[str, Any]]:
        """The last status of each alert id."""
        final: dict[int, dict[str, Any]] = {}
        for a in self.alerts():
            final[a["id"]] = a
        return final

    def codes(self) -> set[str]:
        return {a["code"] for a in self.alerts()}

    def result(self) -> dict[str, Any] | None:
        results = [o.payload for o in self.out if o.topic.endswith("/result")]
        return results[-1] if results else None

    def state(self) -> dict[str, Any]:
        return self.engine.snapshot(self.table)

    # -- AUTO ------------------------------------------------------------------------------
    def auto(self) -> None:
        """Finish play: penalty card if legal, else lowest of the suit led, else lowest card
        (clubs < diamonds < hearts < spades)."""
        for _ in range(60):
            due = self.next_play()
            if due is None:
                return
            seat, card, penalty = due
            if penalty:
                self.take(seat.name, str(card))
            self.put(seat.name, str(card))
        raise AssertionError("AUTO did not finish the play")

    def next_play(self) -> tuple[Seat, Card, bool] | None:
        """AUTO's next card: (the seat due, its card, whether it is a penalty card); None
        when the play is over."""
        board = self.t.board
        assert board is not None and board.play is not None
        play = board.play
        if play.complete:
            return None
        seat = play.turn
        assert seat is not None, "nobody is due to play"
        played = {c for t in play.tricks for s, c in t.cards if s is seat}
        hand = set(play.known_hands[seat]) - played
        trick = play.tricks[-1] if play.tricks and play.tricks[-1].winner is None else None
        led: Suit | None = trick.cards[0][1].suit if trick and trick.cards else None
        penalty = sorted(play.penalty_cards.get(seat, frozenset()) - played)
        following = [c for c in hand if led is not None and c.suit is led]
        legal_pen = [c for c in penalty if led is None or c.suit is led or not following]
        if legal_pen:
            return seat, legal_pen[0], True
        if following:
            return seat, min(following, key=lambda c: c.rank), False
        return seat, min(hand, key=lambda c: (c.suit, c.rank)), False


def _tokens(script: str) -> list[str]:
    out: list[str] = []
    for raw in script.replace(",", " ").split():
        out.append(raw.strip("`"))
    return [t for t in out if t]
