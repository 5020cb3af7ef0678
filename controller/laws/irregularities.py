"""Irregularities as values: codes, statuses, and the log a board keeps of them.

The core never raises for a player's irregularity: it records an ``Irregularity`` in the
board's ``IrregularityLog`` and the caller drains the changes after each event (python-chess
style: problems are values, not exceptions).
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from .cards import Call, Card, Seat

__all__ = ["Code", "Status", "Irregularity", "IrregularityLog", "DEFAULT_LAW", "DIRECTOR_ONLY"]


class Code(enum.StrEnum):
    """Alert codes of the wire contract (fixed names)."""

    # before and between calls
    WRONG_BOARD = "WRONG_BOARD"
    CARDS_FROM_WRONG_BOARD = "CARDS_FROM_WRONG_BOARD"
    HAND_COUNT = "HAND_COUNT"
    MISSING_CARD = "MISSING_CARD"
    INCORRECT_CARD_COUNT = "INCORRECT_CARD_COUNT"
    UNKNOWN_TAG = "UNKNOWN_TAG"
    # project addition (wire contract 1.2): a card tag of another board's pack
    CARD_FROM_OTHER_BOARD = "CARD_FROM_OTHER_BOARD"
    # auction
    CALL_OUT_OF_ROTATION = "CALL_OUT_OF_ROTATION"
    INSUFFICIENT_BID = "INSUFFICIENT_BID"
    INADMISSIBLE_DOUBLE = "INADMISSIBLE_DOUBLE"
    INADMISSIBLE_REDOUBLE = "INADMISSIBLE_REDOUBLE"
    CALL_BY_PLAYER_REQUIRED_TO_PASS = "CALL_BY_PLAYER_REQUIRED_TO_PASS"
    BID_ABOVE_SEVEN = "BID_ABOVE_SEVEN"
    CALL_AFTER_AUCTION_CLOSED = "CALL_AFTER_AUCTION_CLOSED"
    CHANGE_OF_CALL = "CHANGE_OF_CALL"
    CARD_EXPOSED_DURING_AUCTION = "CARD_EXPOSED_DURING_AUCTION"
    # play
    OPENING_LEAD_OUT_OF_TURN = "OPENING_LEAD_OUT_OF_TURN"
    LEAD_OUT_OF_TURN = "LEAD_OUT_OF_TURN"
    PREMATURE_PLAY = "PREMATURE_PLAY"
    PENALTY_CARD_NOT_PLAYED = "PENALTY_CARD_NOT_PLAYED"
    REVOKE = "REVOKE"
    FIFTH_CARD = "FIFTH_CARD"
    EXTRA_CARD_SAME_TRICK = "EXTRA_CARD_SAME_TRICK"
    DEFECTIVE_TRICK = "DEFECTIVE_TRICK"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    CARD_WITHDRAWN = "CARD_WITHDRAWN"
    # project addition (wire contract 1.1): across tables, one board seen with other hands
    FOULED_BOARD = "FOULED_BOARD"


class Status(enum.StrEnum):
    OPEN = "open"
    ESTABLISHED = "established"
    CORRECTED = "corrected"
    RESOLVED = "resolved"


#: The Law each code cites by default (2017 numbering; the core may cite another, e.g. 62D).
DEFAULT_LAW: dict[Code, str] = {
    Code.WRONG_BOARD: "15",
    Code.CARDS_FROM_WRONG_BOARD: "15A",
    Code.HAND_COUNT: "7B2",
    Code.MISSING_CARD: "14",
    Code.INCORRECT_CARD_COUNT: "13",
    Code.UNKNOWN_TAG: "13F",
    Code.CARD_FROM_OTHER_BOARD: "13C",
    Code.CALL_OUT_OF_ROTATION: "28",
    Code.INSUFFICIENT_BID: "27",
    Code.INADMISSIBLE_DOUBLE: "36",
    Code.INADMISSIBLE_REDOUBLE: "36",
    Code.CALL_BY_PLAYER_REQUIRED_TO_PASS: "37",
    Code.BID_ABOVE_SEVEN: "38",
    Code.CALL_AFTER_AUCTION_CLOSED: "39",
    Code.CHANGE_OF_CALL: "25",
    Code.CARD_EXPOSED_DURING_AUCTION: "24",
    Code.OPENING_LEAD_OUT_OF_TURN: "54",
    Code.LEAD_OUT_OF_TURN: "53",
    Code.PREMATURE_PLAY: "57",
    Code.PENALTY_CARD_NOT_PLAYED: "50D",
    Code.REVOKE: "63A",
    Code.FIFTH_CARD: "45E",
    Code.EXTRA_CARD_SAME_TRICK: "58B",
    Code.DEFECTIVE_TRICK: "67",
    Code.CARD_NOT_IN_HAND: "7B3",
    Code.CARD_WITHDRAWN: "47",
    Code.FOULED_BOARD: "87",
}

#: Codes only players may draw attention to: shown to the director alone until play ends
#: (Laws 9A2, 61B), unless the event's regulations say otherwise.
DIRECTOR_ONLY: frozenset[Code] = frozenset({Code.REVOKE, Code.DEFECTIVE_TRICK})


@dataclass(frozen=True, slots=True)
class Irregularity:
    """One irregularity of a board, as it stands now.

    ``id`` is stable across status changes (the contract's alert ``id``). ``detail`` is a
    machine-readable key naming the variant (``"honour"``, ``"accepted"``, ``"64A1"``...);
    ``params`` carries the values the messages need (``{"tricks": 2}``).
    """

    id: int
    code: Code
    law: str
    status: Status = Status.OPEN
    seat: Seat | None = None
    trick: int | None = None
    card: Card | None = None
    call: Call | None = None
    detail: str = ""
    params: tuple[tuple[str, Any], ...] = ()

    def param(self, name: str, default: Any = None) -> Any:
        for key, value in self.params:
            if key == name:
                return value
        return default

    @property
    def is_open(self) -> bool:
        return self.status is Status.OPEN


@dataclass
class IrregularityLog:
    """Every irregularity of one table, with the changes since the last ``drain``.

    Ids are unique for the table across boards (``first_id`` lets a table continue
    numbering on the next board).
    """

    first_id: int = 1
    _items: dict[int, Irregularity] = field(default_factory=dict)
    _changed: list[int] = field(default_factory=list)

    def open(
        self,
        code: Code,
        *,
        law: str | None = None,
        seat: Seat | None = None,
        trick: int | None = None,
        card: Card | None = None,
        call: Call | None = None,
        detail: str = "",
        status: Status = Status.OPEN,
        **params: Any,
    ) -> Irregularity:
        _check_types({"seat": seat, "card": card, "call": call})
        new_id = self.first_id + len(self._items)
        item = Irregularity(
            id=new_id, code=code, law=law or DEFAULT_LAW[code], status=status, seat=seat,
            trick=trick, card=card, call=call, detail=detail,
            params=tuple(sorted(params.items())),
        )
        self._items[new_id] = item
        self._changed.append(new_id)
        return item

    def update(self, item_id: int, **changes: Any) -> Irregularity:
        """Change fields of an irregularity (``status``, ``detail``, ``law``...).

        Unknown keyword names go into ``params``. A change that changes nothing is not
        reported.
        """
        old = self._items[item_id]
        fields = {k: v for k, v in changes.items() if k in Irregularity.__dataclass_fields__}
        _check_types(fields)
        extra = {k: v for k, v in changes.items() if k not in fields}
        if extra:
            merged = dict(old.params)
            merged.update(extra)
            fields["params"] = tuple(sorted(merged.items()))
        new = replace(old, **fields)
        if new != old:
            self._items[item_id] = new
            if item_id not in self._changed:
                self._changed.append(item_id)
        return new

    def get(self, item_id: int) -> Irregularity | None:
        return self._items.get(item_id)

    def __iter__(self) -> Iterator[Irregularity]:
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        return len(self._items)

    def open_items(self, code: Code | None = None) -> list[Irregularity]:
        return [
            i for i in self._items.values()
            if i.status is Status.OPEN and (code is None or i.code is code)
        ]

    def drain(self) -> tuple[Irregularity, ...]:
        """The irregularities opened or changed since the last drain, in order of change."""
        if not self._changed:
            return ()
        out = tuple(self._items[i] for i in self._changed)
        self._changed.clear()
        return out

    @property
    def next_id(self) -> int:
        return self.first_id + len(self._items)


_FIELD_TYPES: dict[str, type] = {"seat": Seat, "card": Card, "call": Call, "status": Status,
                                 "code": Code}


def _check_types(fields: dict[str, Any]) -> None:
    """A wrong type here is a defect in the core: fail where it is made, not in a message."""
    for name, value in fields.items():
        expected = _FIELD_TYPES.get(name)
        if expected is not None and value is not None and not isinstance(value, expected):
            raise TypeError(f"irregularity field {name} must be {expected.__name__}, "
                            f"not {type(value).__name__} {value!r}")
