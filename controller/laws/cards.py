"""Values of the game: seats, suits, ranks, cards, calls, contracts, boards.

Everything here is immutable and hashable. Converters come in pairs:
``Card.parse("SA")`` / ``str(card)``, ``Call.parse("1NT")`` / ``str(call)``.
Text forms are the wire contract's (PBN's): ``SA``, ``HT``, ``1NT``, ``Pass``, ``X``, ``XX``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Final

__all__ = [
    "Seat", "Side", "Suit", "Rank", "Card", "Denomination", "Call", "Bid", "Contract",
    "Vulnerability", "Rules", "Doubling", "FULL_DECK", "board_dealer", "board_vulnerability",
    "Deal", "ParseError", "CallKind", "PASS", "DOUBLE", "REDOUBLE", "PASSED_OUT", "ALL_CALLS",
    "SEAT_NAMES", "CARD_NAMES", "CALL_NAMES",
]


class ParseError(ValueError):
    """A text form that does not name a value (a card, a call, a deal)."""


class Side(enum.Enum):
    NS = "NS"
    EW = "EW"

    def __str__(self) -> str:
        return self.value


class Seat(enum.IntEnum):
    """Seats clockwise; ``lho`` calls and plays after this seat (Laws 3, 4)."""

    N = 0
    E = 1
    S = 2
    W = 3

    @property
    def lho(self) -> Seat:
        return Seat((self + 1) % 4)

    @property
    def rho(self) -> Seat:
        return Seat((self + 3) % 4)

    @property
    def partner(self) -> Seat:
        return Seat((self + 2) % 4)

    @property
    def side(self) -> Side:
        # N and S are the even seats; an int test, not two enum comparisons (hot: every
        # trick's winner is asked its side on every card)
        return Side.EW if self & 1 else Side.NS

    def is_opponent_of(self, other: Seat) -> bool:
        return self.side is not other.side

    def rotated(self, steps: int) -> Seat:
        """The seat ``steps`` places clockwise from this one."""
        return Seat((self + steps) % 4)

    def __str__(self) -> str:
        return self.name

    @classmethod
    def parse(cls, text: str) -> Seat:
        try:
            return cls[text.strip().upper()[:1]]
        except KeyError:
            raise ParseError(f"not a seat: {text!r}") from None


class Suit(enum.IntEnum):
    """Suits in rank order C < D < H < S."""

    C = 0
    D = 1
    H = 2
    S = 3

    def __str__(self) -> str:
        return self.name

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]

    @classmethod
    def parse(cls, text: str) -> Suit:
        try:
            return cls[text.strip().upper()]
        except KeyError:
            raise ParseError(f"not a suit: {text!r}") from None


_RANK_CHARS: Final = "23456789TJQKA"


class Rank(enum.IntEnum):
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def char(self) -> str:
        return _RANK_CHARS[self - 2]

    @property
    def is_honour(self) -> bool:
        """A K Q J T: the Law 24 honours."""
        return self >= Rank.TEN

    def __str__(self) -> str:
        return self.char

    @classmethod
    def parse(cls, text: str) -> Rank:
        t = text.strip().upper()
        if t == "10":
            t = "T"
        idx = _RANK_CHARS.find(t) if len(t) == 1 else -1
        if idx < 0:
            raise ParseError(f"not a rank: {text!r}")
        return cls(idx + 2)


@dataclass(frozen=True, slots=True, order=True)
class Card:
    """A playing card; orders by suit then rank. ``Card.parse("SA")`` / ``str(card)``."""

    suit: Suit
    rank: Rank
    # the hash the dataclass would compute at every call (``hash((suit, rank))``), kept:
    # cards are hashed several times for each card put (the play's sets), and the same
    # value keeps every set of cards iterating in the same order as before
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.suit, self.rank)))

    def __hash__(self) -> int:
        return self._hash

    @classmethod
    def parse(cls, text: str) -> Card:
        t = text.strip().upper()
        if t[1:] == "10":
            t = t[0] + "T"
        if len(t) != 2:
            raise ParseError(f"not a card: {text!r}")
        try:
            return _CARDS[t]
        except KeyError:
            raise ParseError(f"not a card: {text!r}") from None

    def __str__(self) -> str:
        return self.suit.name + self.rank.char

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    @property
    def index(self) -> int:
        """0..51, suit-major (C2 = 0, SA = 51)."""
        return self.suit * 13 + (self.rank - 2)


_CARDS: Final[dict[str, Card]] = {
    s.name + r.char: Card(s, r) for s in Suit for r in Rank
}
#: The 52 cards in the enrolment order SA, SK .. C2: the same objects as ``Card.parse``
#: gives, so that a card from either is found in a set or a dict by identity, without
#: ``Card.__eq__``
FULL_DECK: Final[tuple[Card, ...]] = tuple(
    _CARDS[s.name + r.char] for s in reversed(Suit) for r in reversed(Rank)
)


class Denomination(enum.IntEnum):
    """C < D < H < S < NT (Law 18C)."""

    C = 0
    D = 1
    H = 2
    S = 3
    NT = 4

    def __str__(self) -> str:
        return self.name

    @property
    def trump(self) -> Suit | None:
        return None if self is Denomination.NT else Suit(int(self))

    @classmethod
    def parse(cls, text: str) -> Denomination:
        t = text.strip().upper()
        if t == "N":
            t = "NT"
        try:
            return cls[t]
        except KeyError:
            raise ParseError(f"not a denomination: {text!r}") from None


class Doubling(enum.IntEnum):
    NONE = 0
    DOUBLED = 1
    REDOUBLED = 2

    @property
    def suffix(self) -> str:
        return "X" * int(self)


@dataclass(frozen=True, slots=True, order=True)
class Bid:
    level: int
    denomination: Denomination

    @property
    def rank(self) -> int:
        """5*(level-1) + denomination: a bid is sufficient iff its rank is higher."""
        return 5 * (self.level - 1) + int(self.denomination)

    def __str__(self) -> str:
        return f"{self.level}{self.denomination.name}"


class CallKind(enum.Enum):
    BID = "bid"
    PASS = "Pass"
    DOUBLE = "X"
    REDOUBLE = "XX"


@dataclass(frozen=True, slots=True)
class Call:
    """A call as PBN writes it: ``1C``..``7NT``, ``Pass``, ``X``, ``XX``.

    A bid above seven (``8C``, a misread or a joke card) can be represented so that the
    core can flag it (Law 38); ``is_legal_level`` says whether it is a real bid.
    """

    kind: CallKind
    bid: Bid | None = None

    @classmethod
    def parse(cls, text: str) -> Call:
        t = text.strip().upper()
        if t in ("PASS", "P", "AP"):
            return PASS
        if t in ("X", "D", "DBL"):
            return DOUBLE
        if t in ("XX", "R", "RDBL"):
            return REDOUBLE
        if len(t) >= 2 and t[0].isdigit() and t[1:].isalpha():
            level = int(t[0])
            if level < 1:
                raise ParseError(f"not a call: {text!r}")
            return cls(CallKind.BID, Bid(level, Denomination.parse(t[1:])))
        raise ParseError(f"not a call: {text!r}")

    def __hash__(self) -> int:
        # written out, not generated by the dataclass: the generated one hashes the
        # CallKind in interpreted code (an Enum's hash is its name's), in the mypyc build
        # too, for every call looked up. Equal calls, equal hashes: a bid by its rank
        # (5 up), the others by kind (0-2); the same in every process.
        bid = self.bid
        if bid is not None:
            return 5 * bid.level + int(bid.denomination)
        kind = self.kind
        return 0 if kind is CallKind.PASS else 1 if kind is CallKind.DOUBLE else 2

    @classmethod
    def make_bid(cls, level: int, denomination: Denomination) -> Call:
        return cls(CallKind.BID, Bid(level, denomination))

    @property
    def is_bid(self) -> bool:
        return self.kind is CallKind.BID

    @property
    def is_pass(self) -> bool:
        return self.kind is CallKind.PASS

    @property
    def is_legal_level(self) -> bool:
        return self.bid is None or 1 <= self.bid.level <= 7

    def __str__(self) -> str:
        if self.bid is not None:
            return str(self.bid)
        return self.kind.value


PASS: Final = Call(CallKind.PASS)
DOUBLE: Final = Call(CallKind.DOUBLE)
REDOUBLE: Final = Call(CallKind.REDOUBLE)

#: Every call of a bidding box in the order a box is enrolled: 1C 1D .. 7NT, Pass, X, XX.
ALL_CALLS: Final[tuple[Call, ...]] = tuple(
    Call.make_bid(level, d) for level in range(1, 8) for d in Denomination
) + (PASS, DOUBLE, REDOUBLE)


@dataclass(frozen=True, slots=True)
class Contract:
    """``4S``, ``4SX``, ``3NTXX``; ``Contract.parse("Pass")`` gives ``None``-bid passed out."""

    bid: Bid | None
    doubling: Doubling = Doubling.NONE

    @property
    def passed_out(self) -> bool:
        return self.bid is None

    @classmethod
    def parse(cls, text: str) -> Contract:
        t = text.strip().upper()
        if t in ("PASS", "P", ""):
            return PASSED_OUT
        dbl = Doubling.NONE
        if t.endswith("XX"):
            dbl, t = Doubling.REDOUBLED, t[:-2]
        elif t.endswith("X"):
            dbl, t = Doubling.DOUBLED, t[:-1]
        call = Call.parse(t)
        if call.bid is None or not call.is_legal_level:
            raise ParseError(f"not a contract: {text!r}")
        return cls(call.bid, dbl)

    def __str__(self) -> str:
        if self.bid is None:
            return "Pass"
        return str(self.bid) + self.doubling.suffix


PASSED_OUT: Final = Contract(None)


class Vulnerability(enum.Enum):
    NONE = "None"
    NS = "NS"
    EW = "EW"
    ALL = "All"

    def is_vulnerable(self, seat_or_side: Seat | Side) -> bool:
        side = seat_or_side.side if isinstance(seat_or_side, Seat) else seat_or_side
        if self is Vulnerability.ALL:
            return True
        return bool(self.value == side.value)

    def __str__(self) -> str:
        return self.value

    @classmethod
    def parse(cls, text: str) -> Vulnerability:
        t = text.strip().lower()
        aliases = {"none": cls.NONE, "-": cls.NONE, "love": cls.NONE, "0": cls.NONE,
                   "ns": cls.NS, "n": cls.NS, "ew": cls.EW, "e": cls.EW,
                   "all": cls.ALL, "both": cls.ALL, "b": cls.ALL}
        try:
            return aliases[t]
        except KeyError:
            raise ParseError(f"not a vulnerability: {text!r}") from None


class Rules(enum.Enum):
    """Which edition of the Laws applies where 2007 and 2017 differ (laws.md section 8)."""

    L2007 = "2007"
    L2017 = "2017"

    @classmethod
    def parse(cls, text: str | int) -> Rules:
        t = str(text).strip()
        for r in cls:
            if r.value == t:
                return r
        raise ParseError(f"not a Laws edition (2007 or 2017): {text!r}")


_VUL_CYCLE: Final = (Vulnerability.NONE, Vulnerability.NS, Vulnerability.EW, Vulnerability.ALL)


def board_dealer(board: int) -> Seat:
    """Law 2: dealer N on 1 5 9 13, E on 2 6 10 14, S on 3 7 11 15, W on 4 8 12 16."""
    if board < 1:
        raise ValueError(f"board numbers start at 1, not {board}")
    return Seat((board - 1) % 4)


def board_vulnerability(board: int) -> Vulnerability:
    """Law 2: None 1 8 11 14, NS 2 5 12 15, EW 3 6 9 16, All 4 7 10 13; repeats every 16."""
    if board < 1:
        raise ValueError(f"board numbers start at 1, not {board}")
    k = (board - 1) % 16
    return _VUL_CYCLE[(k + k // 4) % 4]


@dataclass(frozen=True, slots=True)
class Deal:
    """Four hands. ``Deal.from_pbn("N:AK.. ...")`` / ``deal.to_pbn()``.

    A hand may hold fewer or more than 13 cards: deal files can be broken and
    verification must be able to describe exactly how.
    """

    hands: tuple[frozenset[Card], frozenset[Card], frozenset[Card], frozenset[Card]]

    def __getitem__(self, seat: Seat) -> frozenset[Card]:
        return self.hands[seat]

    @classmethod
    def from_hands(cls, hands: dict[Seat, frozenset[Card] | set[Card]]) -> Deal:
        return cls(tuple(frozenset(hands.get(s, ())) for s in Seat))  # type: ignore[arg-type]

    @classmethod
    def from_pbn(cls, text: str) -> Deal:
        """PBN ``[Deal]`` value: ``"N:KQ8.T76.A42.AK7 J5.J985.J963.643 ..."``; ``-`` for unknown."""
        t = text.strip().strip('"')
        if len(t) < 2 or t[1] != ":":
            raise ParseError(f"deal has no first seat: {text!r}")
        first = Seat.parse(t[0])
        parts = t[2:].split()
        if len(parts) != 4:
            raise ParseError(f"deal needs four hands, got {len(parts)}: {text!r}")
        hands: dict[Seat, frozenset[Card]] = {}
        for i, part in enumerate(parts):
            seat = first.rotated(i)
            if part == "-":
                hands[seat] = frozenset()
                continue
            suits = part.split(".")
            if len(suits) != 4:
                raise ParseError(f"hand {part!r} needs four suits")
            cards: set[Card] = set()
            for letter, suit, ranks in zip("SHDC", (Suit.S, Suit.H, Suit.D, Suit.C), suits,
                                           strict=True):
                for ch in ranks:
                    # the 52 cards are made once (``_CARDS``); a lower-case or bad rank
                    # goes through Rank.parse, which reads it or says why not
                    card = _CARDS.get(letter + ch)
                    cards.add(card if card is not None else Card(suit, Rank.parse(ch)))
            hands[seat] = frozenset(cards)
        return cls.from_hands(hands)  # type: ignore[arg-type]

    def hand_pbn(self, seat: Seat) -> str:
        hand = self.hands[seat]
        return ".".join(
            "".join(c.rank.char for c in sorted((c for c in hand if c.suit is s), reverse=True))
            for s in (Suit.S, Suit.H, Suit.D, Suit.C)
        )

    def to_pbn(self, first: Seat = Seat.N) -> str:
        return f"{first.name}:" + " ".join(self.hand_pbn(first.rotated(i)) for i in range(4))

    def holder(self, card: Card) -> Seat | None:
        for seat in Seat:
            if card in self.hands[seat]:
                return seat
        return None

    @property
    def is_complete(self) -> bool:
        """Four hands of 13 making the whole pack."""
        union: frozenset[Card] = frozenset().union(*self.hands)
        return all(len(h) == 13 for h in self.hands) and len(union) == 52

    def rotated(self, steps: int) -> Deal:
        """The deal with every hand moved ``steps`` seats clockwise."""
        return Deal.from_hands({s.rotated(steps): self.hands[s] for s in Seat})

    def __str__(self) -> str:
        return self.to_pbn()


# The vocabulary as text, from the values: what readers, tag registries and configs spell
# (firmware_bridge takes it from here rather than spelling it again).
#: Seats clockwise: ``N E S W``.
SEAT_NAMES: Final[tuple[str, ...]] = tuple(s.name for s in Seat)
#: The 52 cards in enrolment order: ``SA SK .. S2 HA .. C2``.
CARD_NAMES: Final[tuple[str, ...]] = tuple(str(c) for c in FULL_DECK)
#: The calls in enrolment order: ``1C 1D 1H 1S 1NT .. 7NT Pass X XX``.
CALL_NAMES: Final[tuple[str, ...]] = tuple(str(c) for c in ALL_CALLS)
