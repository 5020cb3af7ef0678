"""One table's state machine: boards, hand scans, auction, play, rulings, undo.

The ``Table`` is fed one sensor event or director ruling at a time and returns an
``Update`` value: the irregularities opened or changed, the broadcast items, and whether
the board's result changed. It reads each event by zone and phase exactly as the wire
contract's table says, and hands calls to ``Auction`` and cards to ``Play``.

Every input of the current board is kept, so ``undo`` (a misread tag) rebuilds the board
from its history without the struck event: the result is exactly as if it never happened.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, NamedTuple

from .auction import Auction
from .cards import (
    Call,
    Card,
    Contract,
    Deal,
    Rules,
    Seat,
    Vulnerability,
    board_dealer,
    board_vulnerability,
)
from .dealcheck import TABLE_CODES as FINDING_CODES
from .dealcheck import DealIndex, FindingKind, check_board
from .events import Action, Button, ButtonEvent, TagEvent, Zone
from .irregularities import Code, Irregularity, IrregularityLog, Status
from .play import Play
from .record import BoardRecord, DealInfo, PlayedTrick
from .rulings import Ruling, RulingKind, option_problem
from .scoring import score_ns

__all__ = ["Phase", "FeedItem", "Update", "Board", "Table", "Input", "TURN_WINDOW"]

Input = TagEvent | ButtonEvent | Ruling

#: Irregularities the table itself owns (the rest belong to Auction or Play).
TABLE_CODES: frozenset[Code] = frozenset({
    Code.WRONG_BOARD, Code.CARDS_FROM_WRONG_BOARD, Code.HAND_COUNT, Code.MISSING_CARD,
    Code.INCORRECT_CARD_COUNT, Code.UNKNOWN_TAG, Code.CARD_FROM_OTHER_BOARD,
})

#: A deck named by a board number: ``"5"``, ``"B5"``, ``"board-05"``.
_DECK_NUMBER = re.compile(r"\D*0*(\d+)")

#: Laws 15A / 2007 17D: this many cards of one other board's pack in a seat's hand scan
#: (more than half a hand) and the hand he picked up is that board's: one open
#: CARDS_FROM_WRONG_BOARD. Fewer are stray cards of another pack (13C), one alert each.
WRONG_HAND_CARDS = 7

#: docs/sensing.md, "A card turned": a card that leaves its play spot during the play and is
#: back on the same spot, the same tag, within this many seconds (the events' ``ts``) was
#: turned where it lies (the opening lead faced, Law 41; a played card turned face down
#: before it is slid off, Law 65A; dummy's card straightened), not withdrawn (Law 47).
#: A person turns a card in 0.2-1.5 s (firmware_bridge/sim/players.py); the reader reports
#: the removal 3 missed rounds (0.3 s) after the card left and the card again the first round
#: it answers, so a turn shows as a gap of at most ~1.2 s: 2 s leaves a margin and is still
#: shorter than a player who takes a card back into his hand and lays it again.
TURN_WINDOW: Final = 2.0


#: Deal-check findings each seat's own scan check reports (Law 7B count, 14A missing card,
#: a card scanned in two hands), so the whole-board check leaves them out.
_SEAT_CHECKS = frozenset({FindingKind.HAND_COUNT, FindingKind.MISSING_CARD,
                          FindingKind.DUPLICATED_CARD})


class Phase(enum.StrEnum):
    WAITING = "waiting"      # no board on the table
    SCANNING = "scanning"    # board read; hand scans, before the first call
    AUCTION = "auction"
    LEAD = "lead"            # auction over; clarification period, opening lead not yet faced
    PLAY = "play"
    COMPLETE = "complete"    # 13 tricks played (or passed out); hands going back into the board


# The enum members read for every input, as module constants: on Python 3.11 reading a
# member off its class (``Zone.SPOT``) costs several times the lookup of a global.
_SCANNING: Final = Phase.SCANNING
_AUCTION: Final = Phase.AUCTION
_LEAD: Final = Phase.LEAD
_PLAY: Final = Phase.PLAY
_COMPLETE: Final = Phase.COMPLETE
_SPOT: Final = Zone.SPOT
_TRAY: Final = Zone.TRAY
_BID: Final = Zone.BID
_BOARD: Final = Zone.BOARD
_PRESENT: Final = Action.PRESENT
_SEATS: Final = tuple(Seat)   # (iterating the enum class is a generator in Python)


class FeedItem(NamedTuple):
    """One broadcast item: ``board`` (a board starts), ``call``, ``card``, ``auction``
    (the standing auction was corrected: ``calls`` holds it whole), ``play`` (the played
    cards were corrected), ``result``. (Immutable values; NamedTuples because one is made
    for nearly every event, and they are the cheapest to make.)"""

    kind: str
    seat: Seat | None = None
    call: Call | None = None
    card: Card | None = None
    trick: int | None = None
    calls: tuple[tuple[Seat, Call], ...] = ()
    cards: tuple[tuple[Seat, Card], ...] = ()


class Update(NamedTuple):
    """What one input changed."""

    irregularities: tuple[Irregularity, ...] = ()
    feed: tuple[FeedItem, ...] = ()
    board_started: bool = False
    result_changed: bool = False
    notes: tuple[str, ...] = ()
    # a board replaced before it was finished: its alerts' last changes, under its number
    previous: tuple[Irregularity, ...] = ()
    previous_board: int | None = None
    # 1.6: a ruling the table could not apply, and why: nothing changed (``error``)
    refused: str = ""
    # the input changed nothing a listener is shown (``Board.quiet``): a quitted card
    # leaving its spot before the end of play, a call card picked up that changes nothing
    shown_unchanged: bool = False


_NOTHING = Update()
_QUIET = Update(shown_unchanged=True)


class Board:
    """One board in progress. Rebuilt from its inputs on ``undo``; holds no I/O."""

    def __init__(
        self,
        number: int,
        *,
        rules: Rules,
        log: IrregularityLog,
        info: DealInfo | None,
        played_before: bool = False,
        scheduled: bool = True,
        all_deals: Mapping[int, Deal] | None = None,
        number_known: bool = True,
    ) -> None:
        self.number = number
        # read from the wallet or set by the director (not guessed for a board nobody read)
        self.number_known = number_known
        self._pack: str | None = None     # the deck of the first card seen (see _other_pack)
        # the last deck found to be this board's pack: the same answer for the same text
        # (a board's number, and whether it is known, do not change; nor does _pack once set)
        self._own_deck: str | None = None
        self.rules = rules
        self.log = log
        self.info = info
        self.dealer: Seat = info.dealer if info else board_dealer(number)
        self.vulnerability: Vulnerability = (
            info.vulnerability if info else board_vulnerability(number))
        self.deal: Deal | None = info.deal if info and info.deal and info.deal.is_complete else None
        self.phase = Phase.SCANNING
        self.scans: dict[Seat, dict[Card, None]] = {s: {} for s in _SEATS}
        self.called: set[Seat] = set()
        self.auction = Auction(self.dealer, log, rules=rules)
        self.play: Play | None = None
        self.hands_back: dict[Seat, int] = dict.fromkeys(_SEATS, 0)
        self.done = False
        self.history: list[Input] = []
        # one more for every input applied (Board.apply is the one way a board changes):
        # what is computed from the board is kept while this is the same (Table._result_key)
        self.version = 0
        # the last input changed nothing shown (state, indicator, feed, result): set by the
        # paths that know it, read by Table.apply (``Update.shown_unchanged``)
        self.quiet = False
        self.notes: list[str] = []
        # open MISSING/HAND_COUNT ids
        self._missing: dict[Seat, list[int]] = {s: [] for s in _SEATS}
        self._unknown: dict[str, int] = {}
        self._lead_faced = False
        self.refused = ""    # why the last ruling was refused (1.6), read by Table._collect
        # Laws 15A / 2007 17D: cards of other boards' packs seen in each seat's hand scan,
        # the seat's CARDS_FROM_WRONG_BOARD alert, the offender whose call was cancelled
        # (until he calls again) and the cancelled calls still lying on the bidding zones
        self._foreign: dict[tuple[Seat, int], set[Card]] = {}
        # tags of another board's pack read before any card of the seat's own: whether
        # they are his hand (15A) or stray cards (13C) shows later (uid -> event, removed)
        self._pend: dict[Seat, dict[str, tuple[TagEvent, bool]]] = {}
        self._wrong_hand: dict[Seat, int] = {}
        self._wrong_call: tuple[int, Seat, Call] | None = None
        self._struck: set[tuple[Seat, Call]] = set()
        self._recalled: set[tuple[Seat, Card]] = set()   # quitted cards back on a spot
        self._lying: set[tuple[Seat, Card]] = set()      # cards on the play spots in play
        # a card that left its play spot in play, by seat: its removal is read once it is
        # known not to be a turn (TURN_WINDOW; ``_settle_lifts``, ``settle``)
        self._lifted: dict[Seat, TagEvent] = {}
        self._gone: dict[Seat, TagEvent] = {}   # each spot's last card lost after play
        self._clock = float("-inf")   # the newest ``ts`` of the board's sensor events
        self.settled_now = False   # the last input also read a lifted card (Table._feed)
        self.played_before = played_before
        self.scheduled = scheduled
        self.all_deals = all_deals
        self._deal_checked = False
        if not scheduled:
            log.open(Code.WRONG_BOARD, law=self._law_wrong_board(), detail="not_scheduled",
                     board=number)
        elif played_before:
            log.open(Code.WRONG_BOARD, law=self._law_wrong_board(), detail="already_played",
                     board=number)

    # -- derived values -------------------------------------------------------------------
    def _law_wrong_board(self) -> str:
        return "15" if self.rules is Rules.L2007 else "15B"

    @property
    def contract(self) -> Contract | None:
        return self.auction.contract

    @property
    def declarer(self) -> Seat | None:
        return self.auction.declarer

    @property
    def turn(self) -> Seat | None:
        phase = self.phase
        if phase is _SCANNING or phase is _AUCTION:
            return self.auction.turn
        if self.play is not None and (phase is _LEAD or phase is _PLAY):
            return self.play.turn
        return None

    @property
    def complete(self) -> bool:
        return self.phase is _COMPLETE

    @property
    def known_hands(self) -> dict[Seat, frozenset[Card]] | None:
        """The hands for Play: the deal file first, then four complete, disjoint scans."""
        if self.deal is not None:
            return dict(zip(_SEATS, self.deal.hands, strict=True))
        scans = {s: frozenset(self.scans[s]) for s in _SEATS}
        union: frozenset[Card] = frozenset().union(*scans.values())
        if all(len(h) == 13 for h in scans.values()) and len(union) == 52:
            return scans
        return None

    @property
    def record_deal(self) -> Deal | None:
        hands = self.known_hands
        if hands is None and self.play is not None:
            inferred = self.play.known_hands
            if all(len(inferred.get(s, ())) == 13 for s in Seat):
                hands = inferred
        return Deal.from_hands(dict(hands)) if hands else None

    @property
    def declarer_tricks(self) -> tuple[int | None, int | None]:
        """(as played, after Law 64 and rulings); None before the end of play."""
        if self.play is None or not self.play.complete:
            return None, None
        return self.play.declarer_tricks_played, self.play.declarer_tricks

    @property
    def score_ns(self) -> int | None:
        contract = self.auction.contract
        if contract is None or not self.complete:
            return None
        if contract.passed_out:
            return 0
        _, tricks = self.declarer_tricks
        if tricks is None:
            return None
        return score_ns(contract, self.auction.declarer, self.vulnerability, tricks)

    @property
    def tricks(self) -> tuple[PlayedTrick, ...]:
        return self.play.tricks if self.play is not None else ()

    # -- inputs ---------------------------------------------------------------------------
    def apply(self, inp: Input) -> None:
        self.version += 1
        self.history.append(inp)
        self.quiet = False
        lifts_quiet = True
        ts = inp.ts if type(inp) is TagEvent else None
        if ts is not None and ts > self._clock:
            # the newest event time seen: a removal already older than a turn is no turn
            self._clock = ts
        if self._lifted:
            turned, lifts_quiet = self._settle_lifts(inp)
            if turned:   # the second half of a turn: the card lies there as before
                self.quiet = lifts_quiet
                if not lifts_quiet:
                    self._advance()
                return
            self.quiet = False   # (what the lifts' reading said is in lifts_quiet)
        else:
            self.settled_now = False
        if type(inp) is TagEvent:
            deck = inp.deck
            if inp.zone is _SPOT and not inp.unknown and (deck is None or deck == self._own_deck):
                self._spot(inp)   # the common case: what _tag does with it, without the call
            else:
                self._tag(inp)
            if self.quiet:
                if lifts_quiet:
                    return  # nothing changed that could move the phase on
                self.quiet = False
        elif isinstance(inp, TagEvent):
            self._tag(inp)
        elif isinstance(inp, ButtonEvent):
            self._button(inp)
        else:
            self.refused = ""
            self._ruling(inp)
            if self.refused:
                self.history.pop()    # refused: as if it never came (undo replays none)
                return
        if not lifts_quiet:
            self.quiet = False
        self._advance()

    @property
    def lifted(self) -> bool:
        """A card left its play spot and may yet come back (a turn): ``settle`` reads it."""
        return bool(self._lifted)

    def settle(self, now: float) -> bool:
        """Read the cards that left their spots more than ``TURN_WINDOW`` before ``now`` (a
        time value, the events' clock: the core has none) as what their removal is: a card
        taken back (Laws 45C4, 47, 62), a card quitted, a hand going home. Whether anything
        shown may have changed."""
        due = [seat for seat, ev in self._lifted.items()
               if ev.ts is not None and now - ev.ts > TURN_WINDOW]
        if not due:
            return False
        self.version += 1
        self.quiet = False
        quiet = self._read_lifts(due)
        self.quiet = quiet
        self._advance()
        return not quiet

    def _settle_lifts(self, inp: Input) -> tuple[bool, bool]:
        """Before ``inp``: the lifted cards it shows were taken away, read in the order they
        left. A lifted card is read when its seat's spot shows anything but the same card
        back within ``TURN_WINDOW`` (another card laid, a card lifted), when ``inp`` comes
        more than the window after it, and before any ruling, button or board read or an
        input with no time. Returns (``inp`` is the same card back in time: a turn, whether
        what was read changed nothing shown)."""
        lifted = self._lifted
        ts = inp.ts if isinstance(inp, (TagEvent, ButtonEvent)) else None
        spot_seat = inp.seat if isinstance(inp, TagEvent) and inp.zone is _SPOT else None
        turned = False
        due: list[Seat] = []
        for seat, ev in lifted.items():
            if spot_seat is not None and seat is spot_seat:
                assert isinstance(inp, TagEvent)
                if inp.action is _PRESENT and inp.card == ev.card and inp.uid == ev.uid \
                        and ts is not None and ev.ts is not None \
                        and ts - ev.ts <= TURN_WINDOW:
                    turned = True
                else:
                    due.append(seat)
            elif ts is None or ev.ts is None or ts - ev.ts > TURN_WINDOW \
                    or not isinstance(inp, TagEvent) or inp.zone is _BOARD:
                due.append(seat)
        if turned:
            assert spot_seat is not None
            del lifted[spot_seat]
        quiet = self._read_lifts(due) if due else True
        self.settled_now = bool(due)
        return turned, quiet

    def _read_lifts(self, seats: list[Seat]) -> bool:
        """The removals of ``seats``' lifted cards read now, oldest first; whether each
        changed nothing shown."""
        quiet = True
        for seat in sorted(seats, key=lambda s: self._lifted[s].ts or 0.0):
            ev = self._lifted.pop(seat)
            self.quiet = False
            self._spot_removed(ev)
            quiet = quiet and self.quiet
        return quiet

    def _advance(self) -> None:
        """Move the phase on after an input: auction over, lead faced, play over."""
        phase = self.phase
        auction = self.auction
        if phase is _PLAY:
            # the common case, first: a card in play (the auction is over, the lead faced)
            play = self.play
            if play is not None and play.declarer is auction.declarer and self._lead_faced:
                if play.complete:
                    self.phase = _COMPLETE
                    if play.hands_returned:
                        self.done = True
                return
        elif phase is _AUCTION or phase is _SCANNING:
            if self.play is None and (phase is _SCANNING or not auction.complete):
                return   # the auction goes on: nothing moves
        elif (phase is _LEAD or phase is _COMPLETE) and not auction.complete:
            # 2017 25A: an unintended call replaced in the Clarification Period: the
            # auction goes on (no card has been led: see _ruling)
            self.phase = phase = _AUCTION
            self.play = None
        if phase is _AUCTION and auction.complete:
            contract = auction.contract
            if contract is None or contract.passed_out:
                self.phase = phase = _COMPLETE
            else:
                declarer = auction.declarer
                assert declarer is not None
                self.play = Play(
                    contract, declarer, self.log, rules=self.rules, hands=self.known_hands,
                    penalty_cards=auction.penalty_cards,
                )
                self.phase = phase = _LEAD
        play = self.play
        if play is not None:
            if play.declarer is not auction.declarer:
                auction.declarer_spreads()   # 54A: roles swapped
            if not self._lead_faced and play.lead_faced:
                self._lead_faced = True
                auction.face_opening_lead()
            if phase is _LEAD and play.card_count:
                self.phase = phase = _PLAY
            if (phase is _PLAY or phase is _LEAD) and play.complete:
                self.phase = phase = _COMPLETE
            if phase is _COMPLETE and play.hands_returned:
                self.done = True

    def _tag(self, ev: TagEvent) -> None:
        if ev.unknown:
            self._unknown_tag(ev)
            return
        zone = ev.zone
        deck = ev.deck
        # (``deck == self._own_deck``: _other_pack's first answer, without the call)
        if deck is not None and deck != self._own_deck and ev.card is not None \
                and (zone is _TRAY or zone is _SPOT) and self._other_pack(deck):
            if not self._wrong_board_hand(ev, ev.card, deck):
                self._unknown_tag(ev, Code.CARD_FROM_OTHER_BOARD, card=ev.card, deck=deck)
            return
        if zone is _SPOT:
            self._spot(ev)
        elif zone is _BID:
            self._bid(ev)
        elif zone is _TRAY:
            self._tray(ev)
        elif zone is _BOARD and ev.action is _PRESENT and ev.board is not None:
            # Another wallet read in the middle of this board: tell the director only.
            self.log.open(Code.WRONG_BOARD, law=self._law_wrong_board(),
                          detail="other_board_read", other_board=ev.board)
        # pocket tags belong to a verification station, not to a table

    def _other_pack(self, deck: str) -> bool:
        """Whether a card's ``deck`` is not the pack of this board (Laws 13, 15, 17D).

        A deck named by a board number (``"5"``, ``"B5"``: the registry's ``[decks."5"]``,
        the cards of board 5's wallet) is this board's pack when the number is this board's
        (a board read from its wallet or set by the director). A deck with no number, or
        any deck on a board nobody read, is compared with the deck of the first card seen
        on this board.
        """
        if deck == self._own_deck:
            return False
        m = _DECK_NUMBER.fullmatch(deck)
        if m is not None and self.number_known:
            other = int(m.group(1)) != self.number
        elif self._pack is None:
            self._pack = deck
            other = False
        else:
            other = deck != self._pack
        if not other:
            self._own_deck = deck
        return other

    def _wrong_board_hand(self, ev: TagEvent, card: Card, deck: str) -> bool:
        """Laws 15A / 2007 17D: a hand picked up from another board's wallet (its tags name
        that board's pack). Tags of another numbered board read at a seat before any card
        of its own wait: at ``WRONG_HAND_CARDS`` of one board they are his hand, one open
        CARDS_FROM_WRONG_BOARD for the seat, open until the director rules; a card of his
        own read first shows them stray cards (13C: ``_flush_pending``, one alert each).
        True: the tag is accounted for here."""
        seat = ev.seat
        m = _DECK_NUMBER.fullmatch(deck)
        if seat is None or m is None or not self.number_known \
                or self.phase not in (Phase.SCANNING, Phase.AUCTION) \
                or len(self.scans[seat]) >= 13:
            return False
        other = int(m.group(1))
        known = self._wrong_hand.get(seat)
        if known is not None:
            item = self.log.get(known)
            return item is not None and item.param("board") == other
        pend = self._pend.get(seat)
        if not ev.present:
            if pend is None or ev.uid not in pend:
                return False
            pend[ev.uid] = (pend[ev.uid][0], True)
            return True
        if self.scans[seat]:
            return False          # he holds cards of his own: a stray card (13C)
        if pend is None:
            pend = self._pend[seat] = {}
        if ev.uid not in pend:
            pend[ev.uid] = (ev, False)
        seen = self._foreign.setdefault((seat, other), set())
        seen.add(card)
        if len(seen) < WRONG_HAND_CARDS:
            return True
        opened = self.log.open(Code.CARDS_FROM_WRONG_BOARD, law=self._deal_law(
            Code.CARDS_FROM_WRONG_BOARD), seat=seat, detail="", board=other,
            count=len(seen), deck=deck)
        self._wrong_hand[seat] = opened.id
        for uid, (pev, _) in list(pend.items()):
            pm = _DECK_NUMBER.fullmatch(pev.deck or "")
            if pm is not None and int(pm.group(1)) == other:
                del pend[uid]
        self._flush_pending(seat)     # cards of a third pack, if any: stray cards
        return True

    def _flush_pending(self, seat: Seat) -> None:
        """The waiting tags of another pack at ``seat`` are stray cards after all: one
        CARD_FROM_OTHER_BOARD each, resolved at once for a tag already taken away."""
        pend = self._pend.pop(seat, None)
        if not pend:
            return
        for pev, removed in pend.values():
            assert pev.card is not None and pev.deck is not None
            self._unknown_tag(pev, Code.CARD_FROM_OTHER_BOARD, card=pev.card, deck=pev.deck)
            if removed:
                self._unknown_tag(pev._replace(action=Action.REMOVED),
                                  Code.CARD_FROM_OTHER_BOARD, card=pev.card, deck=pev.deck)

    def _wrong_board_call(self, seat: Seat, call: Call) -> bool:
        """Laws 15A1 / 2007 17D: a call made holding cards picked up from a wrong board is
        cancelled (2017: with any subsequent call; 2007: the offender's LHO repeats his
        call). True: the call is cancelled, not entered in the auction. The offender calls
        again once his own hand is scanned (13 cards) or the director has ruled."""
        held = self._wrong_call
        if held is not None:
            item_id, offender, cancelled = held
            item = self.log.get(item_id)
            still = item is not None and item.is_open
            if seat is not offender:
                if not still:
                    return False
                later = int(item.param("later", 0)) + 1 if item is not None else 1
                flags: dict[str, Any] = {"later": later}
                if seat is offender.partner:
                    flags["partner_called"] = True
                elif seat is offender.lho:
                    flags["lho_called"] = True
                self._struck.add((seat, call))
                self.log.update(item_id, detail=self._wrong_board_detail(item_id, flags),
                                **flags)
                return True
            if still and len(self.scans[seat]) < 13:
                self._struck.add((seat, call))
                self._wrong_call = (item_id, seat, call)
                self.log.update(item_id, call=call)
                return True
            # he calls again with his own hand: the auction continues from here
            self._wrong_call = None
            if item is not None:
                differs = call != cancelled
                self.log.update(item_id, detail=self._wrong_board_detail(
                    item_id, {"differs": differs}), repeat=str(call), differs=differs)
            return False
        item_id_or_none = self._wrong_hand.get(seat)
        if item_id_or_none is None:
            return False
        item = self.log.get(item_id_or_none)
        if item is None or not item.is_open or len(self.scans[seat]) >= 13:
            return False
        self._struck.add((seat, call))
        self._wrong_call = (item.id, seat, call)
        self.log.update(item.id, call=call, detail="cancelled",
                        law="15A1" if self.rules is Rules.L2017 else "17D")
        return True

    def _wrong_board_detail(self, item_id: int, flags: dict[str, Any]) -> str:
        """The outcome phrases: cancelled (with later calls), and ``adjusted`` where the
        Laws give an adjusted score: partner called over the cancelled call (2017 15A1a,
        2007 17D2), or under 2007 17D2 LHO called over it and the new call differs."""
        item = self.log.get(item_id)
        assert item is not None
        params = dict(item.params)
        params.update(flags)
        parts = ["cancelled_later" if params.get("later") else "cancelled"]
        if params.get("partner_called") or (
                self.rules is Rules.L2007 and params.get("lho_called") and params.get("differs")):
            parts.append("adjusted")
        return ",".join(parts)

    def _unknown_tag(self, ev: TagEvent, code: Code = Code.UNKNOWN_TAG,
                     card: Card | None = None, deck: str | None = None) -> None:
        """One open UNKNOWN_TAG (or CARD_FROM_OTHER_BOARD) per tag lying there, never a
        card of the hand, an exposed card or a played card; resolved when the tag is taken
        away."""
        known = self._unknown.get(ev.uid)
        item = self.log.get(known) if known is not None else None
        still_open = item is not None and item.is_open
        if ev.present:
            if not still_open:
                extra: dict[str, Any] = {} if deck is None else {"deck": deck}
                opened = self.log.open(code, law="13F" if self.rules is Rules.L2007
                                       else "13C", seat=ev.seat, uid=ev.uid, zone=str(ev.zone),
                                       trick=self._trick_number(), card=card, **extra)
                self._unknown[ev.uid] = opened.id
        elif known is not None:
            del self._unknown[ev.uid]
            if still_open:
                self.log.update(known, status=Status.RESOLVED, detail="removed")

    def _trick_number(self) -> int | None:
        return (self.play.trick_number or None) if self.play is not None else None

    def _bid(self, ev: TagEvent) -> None:
        seat, call = ev.seat, ev.call
        if seat is None:
            self.notes.append("bid tag without a seat ignored")
            return
        if call is None:  # STOP / ALERT markers are not calls
            return
        auction = self.auction
        if ev.action is not _PRESENT:
            struck = self._struck
            if struck and (seat, call) in struck:
                struck.discard((seat, call))   # a cancelled call picked up
                self.quiet = True
                return
            self.quiet = auction.complete or not auction.withdraw(seat, call)
            return
        if self.phase is _SCANNING:
            self._start_auction()
        if self._pend and seat in self._pend:
            self._flush_pending(seat)
        if (self._wrong_hand or self._wrong_call) and not auction.complete \
                and self._wrong_board_call(seat, call):
            return
        if seat not in self.called:
            self.called.add(seat)
            self._check_seat_scan(seat)
        auction.call(seat, call)

    def _tray(self, ev: TagEvent) -> None:
        seat, card = ev.seat, ev.card
        if seat is None or card is None:
            self.notes.append("tray tag without seat or card ignored")
            return
        if self.phase is Phase.SCANNING:
            if ev.present:
                self._scan(seat, card)
            return  # removed before the auction: the player picks the hand up
        if self.phase is Phase.AUCTION:
            if ev.present:
                if seat in self._wrong_hand and len(self.scans[seat]) < 13:
                    self._scan(seat, card)    # his own hand, picked up again (15A1b)
                    return
                if self._completes_scan(seat, card):
                    return
                self.auction.expose(seat, card)
            elif card in self.auction.exposed.get(seat, frozenset()):
                self.auction.unexpose(seat, card)
            return
        if self.phase is Phase.COMPLETE and not ev.present:
            self.hands_back[seat] += 1
        if self.play is None:
            # Passed out: the hands go back into the board (Law 22B); four hands back close
            # the board. Anything else on a tray now is nobody's play.
            if self.hands_back[seat] and all(self.hands_back[s] for s in _SEATS):
                self.done = True
            return
        if ev.present:
            self.play.put(seat, card, ts=ev.ts)
        else:
            self.play.take(seat, card)

    def _spot(self, ev: TagEvent) -> None:
        """A seat's play spot (docs/sensing.md): one card at a time. Read as a tray before
        the play (the shoe-style hand read, exposed cards); in play a card leaving the spot
        after its trick is complete is quitted (Law 65), not taken back, and the last
        trick quitted from all four spots ends the board."""
        play = self.play
        seat, card = ev.seat, ev.card
        phase = self.phase
        if play is None or seat is None or card is None or \
                phase is _SCANNING or phase is _AUCTION:
            self._tray(ev)
            return
        key = (seat, card)
        # (hashing a card is the hot spot here: each test below hashes it once at most)
        if ev.action is _PRESENT:
            lying = self._lying
            before = len(lying)
            lying.add(key)
            if len(lying) != before:   # it was not lying there
                if play.quitted(seat, card):
                    # a quitted card laid on the spot again: lifting it takes it back (62A)
                    self._recalled.add(key)
            # (a card still lying there read again, after a reader's restart: no news)
            play.put(seat, card, ts=ev.ts)
            return
        if ev.ts is not None and phase is not _COMPLETE and ev.ts >= self._clock - TURN_WINDOW:
            # maybe a turn (TURN_WINDOW): read once the card is known not to come back
            self._lifted[seat] = ev
            self.quiet = True
            return
        if phase is _COMPLETE:
            # after the last trick a turn has no consequence: the card is read as gone at
            # once (the hands going home); if it comes back, ``turned_back`` says so
            self._gone[seat] = ev
        self._spot_removed(ev)

    def turned_back(self, ev: TagEvent) -> bool:
        """``ev`` lays again, within ``TURN_WINDOW``, the card its seat's spot lost after
        the last trick: the card was turned, not a card of the next board."""
        gone = self._gone.get(ev.seat) if ev.seat is not None else None
        return gone is not None and ev.present and gone.uid == ev.uid \
            and ev.ts is not None and gone.ts is not None and ev.ts - gone.ts <= TURN_WINDOW

    def _spot_removed(self, ev: TagEvent) -> None:
        """A card left its play spot in play, and is not coming back as a turn."""
        play = self.play
        seat, card = ev.seat, ev.card
        if play is None or seat is None or card is None:
            return   # (the play was undone meanwhile: nothing lies anywhere)
        phase = self.phase
        key = (seat, card)
        self._lying.discard(key)
        recalled = self._recalled
        if recalled and key in recalled:
            recalled.discard(key)
            play.take(seat, card)
        elif play.quitted(seat, card):
            if phase is _COMPLETE:
                hands_back = self.hands_back
                hands_back[seat] += 1
                if all(hands_back[s] for s in _SEATS):
                    self.done = True
            else:
                self.quiet = True   # a quitted card leaving its spot mid-play (Law 65)
        else:
            play.take(seat, card)

    def _button(self, ev: ButtonEvent) -> None:
        if ev.button is Button.NEXT and self.phase is Phase.COMPLETE:
            self.done = True

    # -- hand scans -----------------------------------------------------------------------
    def _scan(self, seat: Seat, card: Card) -> None:
        if card in self.scans[seat]:
            return
        for other in Seat:
            if other is not seat and card in self.scans[other]:
                self.log.open(Code.INCORRECT_CARD_COUNT, law="13", seat=seat, card=card,
                              detail="two_hands", other_seat=str(other))
        self.scans[seat][card] = None
        if seat in self._pend:
            self._flush_pending(seat)
        if len(self.scans[seat]) == 13 and all(len(self.scans[s]) >= 13 for s in Seat):
            self._check_deal()

    def _check_deal(self) -> None:
        """The hand scans against the deal file, once, before anyone calls (Laws 13-15).

        Counts and missing cards are the seats' own checks at their first call (Law 7B,
        14A); this names what only the whole board shows: the cards of another board, a
        rotated board, a card in the wrong hand.
        """
        if self._deal_checked or self.deal is None or not self._any_scans():
            return
        self._deal_checked = True
        verdict = check_board(self.deal, {s: list(self.scans[s]) for s in Seat},
                              board=self.number, deals=self.all_deals)
        for finding in verdict.findings:
            code = FINDING_CODES.get(finding.kind)
            if code is None or finding.kind in _SEAT_CHECKS:
                continue
            params: dict[str, Any] = {}
            if finding.other_seat is not None:
                params["other_seat"] = finding.other_seat.name
            if finding.board is not None:
                params["board"] = finding.board
            if finding.count is not None:
                params["count"] = finding.count
            self.log.open(code, law=self._deal_law(code), seat=finding.seat,
                          card=finding.card, detail=str(finding.kind), **params)

    def _deal_law(self, code: Code) -> str:
        if code is Code.CARDS_FROM_WRONG_BOARD:
            return "17D" if self.rules is Rules.L2007 else "15A"
        if code is Code.WRONG_BOARD:
            return self._law_wrong_board()
        return "13"

    def _any_scans(self) -> bool:
        return any(self.scans.values())   # (a hand for each seat)

    def _start_auction(self) -> None:
        self.phase = Phase.AUCTION
        if not self._any_scans():
            return
        self._check_deal()
        counts = {s: len(self.scans[s]) for s in Seat}
        if any(c > 13 for c in counts.values()) and any(c < 13 for c in counts.values()):
            self.log.open(Code.INCORRECT_CARD_COUNT, law="13", detail="over_under",
                          counts=" ".join(f"{s}{counts[s]}" for s in Seat))

    def _check_seat_scan(self, seat: Seat) -> None:
        """Before a seat's first call its hand must have been counted: 13 cards (Law 7B)."""
        if not self._any_scans():
            return
        count = len(self.scans[seat])
        if count == 13:
            return
        item = self.log.open(Code.HAND_COUNT, law="7B2", seat=seat, count=count,
                             detail="unscanned" if count == 0 else "count")
        self._missing[seat].append(item.id)
        if count < 13 and all(len(self.scans[s]) <= 13 for s in Seat):
            if self.deal is not None:
                for card in sorted(self.deal[seat] - frozenset(self.scans[seat])):
                    miss = self.log.open(Code.MISSING_CARD, law="14A", seat=seat, card=card)
                    self._missing[seat].append(miss.id)
            else:
                miss = self.log.open(Code.MISSING_CARD, law="14A", seat=seat, count=13 - count)
                self._missing[seat].append(miss.id)

    def _completes_scan(self, seat: Seat, card: Card) -> bool:
        """A card found during the auction for a short hand: the scan, not an exposure (14A)."""
        if not self._missing[seat] or card in self.scans[seat]:
            return False
        if any(card in self.scans[s] for s in Seat):
            return False
        if self.deal is not None and card not in self.deal[seat]:
            return False
        self.scans[seat][card] = None
        for item_id in list(self._missing[seat]):
            item = self.log.get(item_id)
            if item is None or not item.is_open:
                continue
            if item.code is Code.MISSING_CARD and (item.card is None or item.card == card):
                self.log.update(item_id, status=Status.RESOLVED, detail="found")
        if len(self.scans[seat]) >= 13:
            for item_id in self._missing[seat]:
                item = self.log.get(item_id)
                if item is not None and item.is_open:
                    self.log.update(item_id, status=Status.RESOLVED, detail="found")
            self._missing[seat].clear()
        return True

    # -- rulings --------------------------------------------------------------------------
    def _ruling(self, ruling: Ruling) -> None:
        kind = ruling.kind
        named = self.log.get(ruling.alert) if ruling.alert is not None else None
        problem = option_problem(ruling, named.code if named is not None else None)
        if problem is not None and ruling.option is not None and ruling.alert is not None \
                and named is None:
            problem = f"option {ruling.option!r}: alert {ruling.alert} is not on this board"
        if problem is not None:
            self.refused = problem
            return
        if kind is RulingKind.UNINTENDED and (self.done or (
                self.play is not None and self.play.card_count)):
            self.notes.append("ruling unintended: the auction period is over (25A)")
            return
        if kind is RulingKind.CLEAR and ruling.alert is not None:
            # Auction and Play may have to undo what a pending irregularity holds up.
            if self.auction.rule(ruling) or (self.play is not None and self.play.rule(ruling)):
                return
            item = self.log.get(ruling.alert)
            if item is not None and item.status is not Status.RESOLVED:
                self.log.update(ruling.alert, status=Status.RESOLVED, detail="cleared")
            return
        if ruling.alert is not None:
            item = self.log.get(ruling.alert)
            if item is None:
                self.notes.append(f"ruling names no alert of this board: {ruling.alert}")
                return
            if item.code in TABLE_CODES:
                if kind in (RulingKind.ACCEPT, RulingKind.REJECT):
                    self.log.update(item.id, status=Status.RESOLVED, detail=str(kind))
                return
        if self.auction.rule(ruling):
            return
        if self.play is not None and self.play.rule(ruling):
            return
        if ruling.option is not None:
            self.refused = (f"option {ruling.option!r} could not be applied to alert "
                            f"{ruling.alert} now: nothing changed")
            return
        self.notes.append(f"ruling {kind} had no effect in phase {self.phase}")


@dataclass
class _Fed:
    """What the broadcast feed has sent of the board so far."""

    calls: tuple[tuple[Seat, Call], ...] = ()
    cards_n: int = 0
    last_card: tuple[Seat, Card] | None = None


@dataclass
class Table:
    """A table across boards. ``apply`` one input at a time; read the current ``board``."""

    table_id: str
    rules: Rules = Rules.L2017
    deals: Mapping[int, DealInfo] = field(default_factory=dict)
    schedule: Collection[int] | None = None
    board: Board | None = None
    played: list[int] = field(default_factory=list)
    feed: bool = True   # compute broadcast items (a replay that keeps no feed skips them)
    _next_id: int = 1
    _index: DealIndex | None = None
    _fed: _Fed = field(default_factory=_Fed)
    # the last result key: (board, its version, key), see _result_key
    _result_memo: tuple[Board, int, tuple[object, ...]] | None = None

    # -- public ---------------------------------------------------------------------------
    def apply(self, inp: Input) -> Update:
        """Apply one sensor event or ruling; never raises for a player's irregularity."""
        board = self.board
        if type(inp) is TagEvent and board is not None and inp.zone is not _BOARD \
                and not board.done:
            # the common case, first: a card or a call on the board in progress
            if board.phase is not _COMPLETE:
                board.apply(inp)
                if board.quiet:   # (a quiet input leaves the phase where it was)
                    return _QUIET
                return self._collect(board, (), None,
                                     None if board.settled_now else inp.zone)
            before = self._result_key()
            board.apply(inp)
            return self._collect(board, before, None, None if board.settled_now else inp.zone)
        if isinstance(inp, Ruling):
            if inp.option is not None and inp.kind in (RulingKind.UNDO, RulingKind.BOARD):
                return Update(refused=f"ruling {inp.kind} takes no option "
                                      f"(option {inp.option!r})")
            if inp.kind is RulingKind.UNDO:
                return self.undo()
            if inp.kind is RulingKind.BOARD and inp.board is not None:
                return self._start_board(inp.board, replaced=True)
        if isinstance(inp, TagEvent) and inp.zone is Zone.BOARD and not inp.unknown:
            if inp.action is Action.PRESENT and inp.board is not None:
                return self._board_tag(inp.board)
            return Update()
        if isinstance(inp, ButtonEvent) and inp.button is Button.UNDO:
            return self.undo()
        board = self.board
        if board is None or board.done:
            if board is not None and isinstance(inp, TagEvent) and inp.zone is _SPOT \
                    and board.turned_back(inp):
                return _QUIET   # the last trick's card turned before it is slid off
            if isinstance(inp, TagEvent) and inp.present \
                    and inp.zone in (Zone.BID, Zone.TRAY, Zone.SPOT):
                # No board was read: the next board of the deals file, or the next number.
                started = self._start_board(self._implicit_board(), number_known=False)
                board = self.board
                assert board is not None
                before = self._result_key()
                board.apply(inp)
                return self._collect(board, before, started)
            if board is None:
                return Update(notes=("no board on the table: event ignored",))
        before = self._result_key()
        board.apply(inp)
        return self._collect(board, before, zone=inp.zone if isinstance(inp, TagEvent) else None)

    def settle(self, now: float) -> Update:
        """The cards lifted from their spots more than ``TURN_WINDOW`` before ``now`` read
        as taken away (``Board.settle``): what a clock outside the core calls, so that a
        card lifted and held is shown without waiting for the table's next event."""
        board = self.board
        if board is None or not board.lifted:
            return _NOTHING
        before = self._result_key()
        if not board.settle(now):
            return _NOTHING
        return self._collect(board, before)

    def undo(self) -> Update:
        """Strike the last sensor event of the board (and the rulings after it)."""
        board = self.board
        if board is None:
            return Update(notes=("nothing to undo",))
        history = list(board.history)
        while history and isinstance(history[-1], Ruling):
            history.pop()
        if not history:
            return Update(notes=("nothing to undo on this board",))
        struck = history.pop()
        return self._rebuild(board, history, f"undone: {_describe(struck)}")

    def drop_last_input(self) -> Update:
        """Rebuild the board without its last input, whatever it was.

        The engine calls this when applying an input failed half-way (a defect, not a
        player's irregularity): the board goes back to the consistent state before it.
        """
        board = self.board
        if board is None or not board.history:
            return Update()
        history = list(board.history)
        struck = history.pop()
        return self._rebuild(board, history, f"input dropped: {_describe(struck)}")

    def _rebuild(self, board: Board, history: list[Input], note: str) -> Update:
        before = self._result_key()
        old_items = {i.id: i for i in board.log}
        rebuilt = Board(board.number, rules=board.rules,
                        log=IrregularityLog(first_id=board.log.first_id), info=board.info,
                        played_before=board.played_before, scheduled=board.scheduled,
                        all_deals=board.all_deals, number_known=board.number_known)
        for inp in history:
            rebuilt.apply(inp)
            if rebuilt.refused:
                # a ruling that no longer applies to the board rebuilt: dropped, in notes
                rebuilt.notes.append(f"ruling dropped: {rebuilt.refused}")
                rebuilt.refused = ""
        rebuilt.log.drain()
        self.board = rebuilt
        changed: list[Irregularity] = []
        new_items = {i.id: i for i in rebuilt.log}
        for item_id, old in old_items.items():
            new = new_items.get(item_id)
            if new is None:
                if old.status is not Status.RESOLVED:
                    changed.append(_resolved_by_undo(old))
            elif new != old:
                changed.append(new)
        for item_id, new in new_items.items():
            if item_id not in old_items:
                changed.append(new)
        self._next_id = max(self._next_id, rebuilt.log.next_id, board.log.next_id)
        update = self._collect(rebuilt, before)
        return Update(
            irregularities=tuple(changed) + update.irregularities,
            feed=update.feed, result_changed=update.result_changed,
            notes=(note,) + update.notes,
        )

    def flag(self, code: Code, **fields: Any) -> Update:
        """Open an irregularity on the current board that something outside the table
        found (a fouled board seen across tables); returns it as an update."""
        board = self.board
        if board is None:
            return Update()
        board.log.open(code, **fields)
        self._next_id = max(self._next_id, board.log.next_id)
        return Update(irregularities=tuple(board.log.drain()))

    @property
    def record(self) -> BoardRecord | None:
        board = self.board
        if board is None:
            return None
        played, result = board.declarer_tricks
        return BoardRecord(
            board=board.number, dealer=board.dealer, vulnerability=board.vulnerability,
            deal=board.record_deal, auction=board.auction.record,
            contract=board.auction.contract, declarer=board.auction.declarer,
            tricks=board.tricks, tricks_played=played, tricks_result=result,
            score_ns=board.score_ns, irregularities=tuple(board.log), table=self.table_id,
        )

    # -- boards ---------------------------------------------------------------------------
    def _implicit_board(self) -> int:
        if self.deals:
            for number in sorted(self.deals):
                if number not in self.played:
                    return number
        return (max(self.played) + 1) if self.played else 1

    def _deal_index(self) -> DealIndex:
        if self._index is None:
            self._index = DealIndex({n: i.deal for n, i in self.deals.items()
                                     if i.deal is not None and i.deal.is_complete})
        return self._index

    def resume(self, played: list[int], next_id: int) -> None:
        """Go on from values carried across boards (a snapshot's): the boards played and
        the first irregularity id of the next board. Only before any board is on the table."""
        if self.board is not None:
            raise ValueError("a board is on the table")
        self.played = played
        self._next_id = next_id

    def _new_board(self, number: int, *, first_id: int, number_known: bool = True) -> Board:
        return Board(number, rules=self.rules, log=IrregularityLog(first_id=first_id),
                     info=self.deals.get(number), played_before=number in self.played,
                     scheduled=self.schedule is None or number in self.schedule,
                     all_deals=self._deal_index(), number_known=number_known)

    def _board_tag(self, number: int) -> Update:
        board = self.board
        if board is None or board.done or board.complete:
            # the next board; the wallet of the board just finished read again is that
            # board played a second time: WRONG_BOARD ``already_played`` (15B / 15)
            return self._start_board(number)
        if board.number == number:
            return Update()  # the same wallet read again during its board
        if board.phase is Phase.SCANNING and not board.called:
            return self._start_board(number, replaced=True)
        before = self._result_key()
        board.apply(TagEvent(Zone.BOARD, Action.PRESENT, None, "", board=number))
        return self._collect(board, before)

    def _start_board(self, number: int, *, replaced: bool = False,
                     number_known: bool = True) -> Update:
        if number < 1:
            return Update(notes=(f"board number {number} ignored",))
        closing: list[Irregularity] = []
        old = self.board
        if old is not None and old.complete and not _listed(old.number, self.played):
            self.played.append(old.number)
        if old is not None:
            if replaced:
                for item in old.log.open_items():
                    closing.append(old.log.update(item.id, status=Status.RESOLVED,
                                                  detail="board_replaced"))
                old.log.drain()
            self._next_id = max(self._next_id, old.log.next_id)
        board = self._new_board(number, first_id=self._next_id, number_known=number_known)
        self.board = board
        self._fed = _Fed()
        opened = board.log.drain()
        self._next_id = board.log.next_id
        return Update(irregularities=tuple(opened), feed=(FeedItem("board"),),
                      board_started=True, previous=tuple(closing),
                      previous_board=old.number if closing and old is not None else None)

    # -- collecting an update -------------------------------------------------------------
    def _result_key(self) -> tuple[object, ...]:
        board = self.board
        if board is None or not board.complete:
            return ()
        memo = self._result_memo
        if memo is not None and memo[0] is board and memo[1] == board.version:
            # the key after the last input is the key before this one: computed once
            return memo[2]
        key = (board.number, str(board.contract), board.declarer, board.declarer_tricks)
        self._result_memo = (board, board.version, key)
        return key

    def _collect(self, board: Board, before: tuple[object, ...],
                 started: Update | None = None, zone: Zone | None = None) -> Update:
        items = board.log.drain()
        if items:
            self._next_id = max(self._next_id, board.log.next_id)
        feed = self._feed(board, zone) if self.feed else []
        if started is not None:
            feed = list(started.feed) + feed
            items = started.irregularities + items
        elif not items and not feed and board.phase is not _COMPLETE and not board.notes \
                and not board.refused:
            return _NOTHING   # the common case, first: what the end of this gives
        result_changed = False
        if board.phase is _COMPLETE:
            after = self._result_key()
            result_changed = bool(after) and after != before
            if result_changed:
                if not _listed(board.number, self.played):
                    self.played.append(board.number)
                feed.append(FeedItem("result"))
        notes: tuple[str, ...] = ()
        if board.notes:
            notes = tuple(board.notes)
            board.notes.clear()
        refused = board.refused
        if refused:
            board.refused = ""
            return Update(items, tuple(feed), started is not None, result_changed, notes,
                          refused=refused)
        if not items and not feed and not notes and started is None and not result_changed:
            return _NOTHING
        return Update(items, tuple(feed), started is not None, result_changed, notes)

    def _feed(self, board: Board, zone: Zone | None = None) -> list[FeedItem]:
        """Broadcast what changed in the standing calls and played cards.

        A bid tag can only change the calls and a tray or spot tag only the cards (``zone``); a
        ruling or an undo may change both. Normal play only adds at the end, which is
        checked cheaply; anything else (a cancelled call, a withdrawn card, a 62D
        correction, an undo) sends the standing auction or play whole.
        """
        out: list[FeedItem] = []
        fed = self._fed
        if zone is not _TRAY and zone is not _SPOT:
            calls = board.auction.calls
            n = len(fed.calls)
            if len(calls) != n or (n and calls[-1] != fed.calls[-1]):
                if calls[:n] == fed.calls:
                    for seat, call in calls[n:]:
                        out.append(FeedItem("call", seat, call))
                else:
                    out.append(FeedItem("auction", calls=calls))
                fed.calls = calls
        if zone is _BID:
            return out
        play = board.play
        if play is None:
            if fed.cards_n:
                out.append(FeedItem("play"))
                fed.cards_n, fed.last_card = 0, None
            return out
        count = play.card_count
        grown = count - fed.cards_n
        if grown < 0:
            tail = []
        else:
            # the last card sent and the cards after it (the common case: one card more)
            tail = play.last_cards(grown + 1)
            joins = fed.cards_n == 0 or (len(tail) > grown and tail[0][:2] == fed.last_card)
            if joins:
                if grown:
                    for seat, card, trick in tail[-grown:]:
                        out.append(FeedItem("card", seat, None, card, trick))
                if tail:
                    fed.cards_n, fed.last_card = count, tail[-1][:2]
                return out
        cards = tuple((s, c) for t in play.tricks for s, c in t.cards)
        out.append(FeedItem("play", cards=cards))
        fed.cards_n, fed.last_card = count, (cards[-1] if cards else None)
        return out


def _listed(number: int, played: list[int]) -> bool:
    """``number in played``, the last first: a board finished is the last one listed, and
    a session of many boards would read the whole list for it at every board."""
    return bool(played) and played[-1] == number or number in played


def _resolved_by_undo(item: Irregularity) -> Irregularity:
    return replace(item, status=Status.RESOLVED, detail="undone")


def _describe(inp: Input) -> str:
    if isinstance(inp, TagEvent):
        what = inp.card or inp.call or inp.marker or inp.board or inp.uid
        # ``is not None``: North is seat 0, false as an IntEnum, and was left out
        seat = inp.seat if inp.seat is not None else ""
        return f"{inp.zone} {inp.action} {seat} {what}".strip()
    if isinstance(inp, ButtonEvent):
        return f"button {inp.button}"
    return f"ruling {inp.kind}"
