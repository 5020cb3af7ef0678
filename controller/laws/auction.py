"""The auction (Laws 17-39): turn order, legal calls, the end of the auction, declarer,
and every auction irregularity the sensors can see, with its rectification.

The class is fed what the table's sensors see (a call put down, a call card taken back,
a card exposed) and the director's rulings. It never raises for a player's irregularity:
it records an ``Irregularity`` in the shared ``IrregularityLog`` and moves its status on
(open -> resolved / established) as later events settle it.

Model (laws.md section 2):

* ``_standing`` holds the calls that stand, in order. Everything else (turn, last bid,
  doubling, consecutive passes, who named each denomination first) is derived from it:
  incrementally on the common path, by a full rebuild when a rectification cancels
  calls. The turn is always the LHO of the last standing call (the dealer at first):
  accepted calls out of rotation make rotation continue from the offender (29A) and
  implied passes (28A) are standing passes.
* At most one irregular call is *pending* at a time: put down, not yet standing, not yet
  cancelled. The next call or a director's ruling settles it: the offender's LHO calling
  accepts a call out of rotation (29A), an insufficient bid (27A1) or a call by a player
  required to pass (37A), and cancels an inadmissible double with everything after it
  (36A); the player due calling first cancels a call out of rotation (28B); the
  offender calling again replaces it.
* Rectifications that depend on later calls (Laws 30-32 after a call out of rotation was
  cancelled) are *follow-ups* watching the standing calls; the 2017 "comparable call"
  judgements wait for the director's ``comparable`` / ``not_comparable`` ruling.

Which reading the code follows where laws.md is terse or ambiguous:

* 2017 Law 30: a pass out of rotation at RHO's turn gives the offender ``pass_next``
  (30A) whether or not anyone has bid; at partner's turn, or at LHO's turn when the
  offender has not called yet, partner is free and the offender's next call is judged
  comparable or not (30B); not comparable gives partner ``pass_next``.
* 2007 Law 30B2(b) (partner may not double or redouble at that turn) is recorded as the
  param ``partner_no_double`` for the director, not enforced.
* A call by a third player while another irregular call is pending is recorded,
  cancelled and flagged ``CALL_OUT_OF_ROTATION`` with detail ``while_pending`` for the
  director; it does not disturb the pending call.
* 28B cancels a call out of rotation without rectification only when the player due who
  calls is an opponent of the offender; the offender's partner calling at his own turn
  forfeits nothing: the call is cancelled (29B) and Laws 30-32 apply as on a ``reject``,
  partner's call then judged under their obligations.
* An inadmissible double or redouble out of rotation is Law 36 at once (2017 36B; 2007 via
  32B1, 32A and 32B2 alike): never accepted, cancelled, the player due calls, the
  offender's partner passes throughout.
* 2017 27B4: an insufficient bid replaced by another insufficient bid makes that bid the
  pending one, which LHO may accept (later calls are judged against it). 2007: struck.
* The ``unintended`` ruling (25A, both editions): until partner calls, even after LHO
  called; LHO's call over it is withdrawn if no longer legal, else he may still withdraw it
  (25A4).
* Law 24: every card exposed during the auction by a player who becomes a defender is a
  penalty card, including one taken back before the auction ended (the Law keeps it face
  up); a single low card is a minor penalty card, anything else major.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Final, NamedTuple

from .cards import (
    PASS,
    PASSED_OUT,
    Bid,
    Call,
    CallKind,
    Card,
    Contract,
    Denomination,
    Doubling,
    Rules,
    Seat,
)
from .irregularities import Code, Irregularity, IrregularityLog, Status
from .record import AuctionEntry
from .rulings import Ruling, RulingKind

__all__ = ["Auction", "AuctionOutcome", "auction_outcome", "PASS_NEXT", "PASS_ALL"]

PASS_NEXT: Final = "pass_next"
PASS_ALL: Final = "pass_all"

_BID: Final = CallKind.BID
_DOUBLE: Final = CallKind.DOUBLE
_REDOUBLE: Final = CallKind.REDOUBLE
_PASS: Final = CallKind.PASS
_SEATS: Final = tuple(Seat)


class _Kind(enum.Enum):
    """What a pending irregular call is waiting to have settled."""

    OUT_OF_ROTATION = "coor"
    INSUFFICIENT = "ib"
    INADMISSIBLE = "x"
    REQUIRED_TO_PASS = "37"
    CHANGE = "25"


@dataclass(slots=True)
class _Pending:
    kind: _Kind
    irr: int
    seat: Seat
    call: Call
    entry: int                   # index in the record
    due: Seat                    # the player whose turn it was
    oor: int | None = None       # set when the call is an accepted call out of rotation
    rejected: bool = False       # insufficient bid: the director ruled it not accepted
    withdrawn: bool = False      # the call card was taken back (awaiting a replacement)
    first: Call | None = None    # 2017 27B4: the insufficient bid the pending one replaced


@dataclass(slots=True)
class _FollowUp:
    """A rectification of Laws 30-32 that waits on later calls."""

    irr: int
    offender: Seat
    withdrawn: Call
    law: str
    watch_rho: bool              # RHO's turn cases (31A/32A/32B): wait for RHO's call first
    rho_acted: bool | None = None


@dataclass(slots=True)
class _Judgement:
    """What a director's comparable / not_comparable ruling does to an irregularity."""

    offender: Seat
    withdrawn: Call
    not_comparable: tuple[tuple[Seat, str], ...]   # obligations to impose
    lift_on_comparable: bool                       # lift this irregularity's obligations
    law_comparable: str
    law_not_comparable: str


@dataclass(slots=True)
class _LeadRestriction:
    irr: int
    offender: Seat
    withdrawn: Call | None
    after: int                   # standing calls at the time (2007 26A: "later specified")
    law: str                     # "26B", or "26A" for a withdrawn suit bid (2007)
    active: bool = True


@dataclass(slots=True)
class _Exposure:
    irr: int
    cards: list[Card] = field(default_factory=list)   # every card exposed, in order
    premature_lead: bool = False
    obliged: bool = False        # partner's pass_next already imposed


class Auction:
    """The auction of one board (Laws 17-39); see the module docstring for the model."""

    def __init__(self, dealer: Seat, log: IrregularityLog, *, rules: Rules = Rules.L2017
                 ) -> None:
        self.dealer: Final = dealer
        self.log: Final = log
        self.rules: Final = rules
        self._l2007: Final = rules is Rules.L2007
        self._record: list[AuctionEntry] = []
        # standing calls: (seat, call, record index, id of the accepted call out of rotation)
        self._standing: list[tuple[Seat, Call, int, int | None]] = []
        self._calls_list: list[tuple[Seat, Call]] = []   # the same calls, as ``calls`` shows
        self._calls_cache: tuple[tuple[Seat, Call], ...] | None = ()
        self._record_cache: tuple[AuctionEntry, ...] | None = ()
        # derived state
        self._turn: Seat = dealer
        self._last_bid: Bid | None = None
        self._last_bidder: Seat = dealer
        self._dbl = 0
        self._dbl_seat: Seat = dealer
        self._passes = 0
        self._first_namer: list[Seat | None] = [None] * 10   # side (0 NS, 1 EW) * 5 + denom
        # outcome
        self._complete = False
        self._contract: Contract | None = None
        self._declarer: Seat | None = None
        self._lead_faced = False
        # irregularities
        self._pending: _Pending | None = None
        self._oblig: dict[Seat, dict[int, str]] = {}
        self._followups: list[_FollowUp] = []
        self._judgements: dict[int, _Judgement] = {}
        self._restrictions: list[_LeadRestriction] = []
        self._exposures: dict[Seat, _Exposure] = {}
        self._on_table: dict[Seat, set[Card]] = {}
        self._after_close: dict[int, Seat] = {}      # open Law 39 items -> offender
        # seats with a pass implied (28A) or substituted (37B, 38) and no call since: the
        # pass card they put down late is that pass, not a new call
        self._passed_for: set[Seat] = set()
        self._mine: dict[int, Code] = {}
        # 25A4: the LHO whose call over an unintended call still stands and may be withdrawn
        self._may_withdraw: Seat | None = None
        # an inadmissible double or redouble out of rotation awaiting the director's
        # choice of Law 36 or Law 32 first: irr -> (offender, call, player due, standing
        # calls then)
        self._law_choice: dict[int, tuple[Seat, Call, Seat, int]] = {}

    # ------------------------------------------------------------------ queries
    @property
    def turn(self) -> Seat | None:
        """The player due to call by rotation of the standing calls; None once complete."""
        return None if self._complete else self._turn

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def passed_out(self) -> bool:
        return self._complete and self._last_bid is None

    @property
    def contract(self) -> Contract | None:
        return self._contract

    @property
    def declarer(self) -> Seat | None:
        return self._declarer

    @property
    def dummy(self) -> Seat | None:
        return None if self._declarer is None else self._declarer.partner

    @property
    def opening_leader(self) -> Seat | None:
        return None if self._declarer is None else self._declarer.lho

    @property
    def last_bid(self) -> Bid | None:
        """The last standing bid (an accepted insufficient bid included, 27A1)."""
        return self._last_bid

    @property
    def doubling(self) -> Doubling:
        return Doubling(self._dbl)

    @property
    def lead_faced(self) -> bool:
        return self._lead_faced

    @property
    def pending(self) -> int | None:
        """Id of the irregular call awaiting the next call or a ruling (None when none)."""
        return None if self._pending is None else self._pending.irr

    @property
    def calls(self) -> tuple[tuple[Seat, Call], ...]:
        """The calls that stand, in order (implied and substituted passes included)."""
        cached = self._calls_cache
        if cached is None:
            cached = self._calls_cache = tuple(self._calls_list)
        return cached

    @property
    def record(self) -> tuple[AuctionEntry, ...]:
        """Every call put down, cancelled ones marked, plus implied/substituted passes."""
        cached = self._record_cache
        if cached is None:
            cached = self._record_cache = tuple(self._record)
        return cached

    @property
    def obligations(self) -> dict[Seat, str]:
        """Seats that must pass: ``pass_next`` or ``pass_all`` (empty once complete)."""
        if self._complete:
            return {}
        return {seat: PASS_ALL if PASS_ALL in by_src.values() else PASS_NEXT
                for seat, by_src in self._oblig.items() if by_src}

    @property
    def exposed(self) -> dict[Seat, frozenset[Card]]:
        """Cards exposed during the auction that are still on the table."""
        return {s: frozenset(cards) for s, cards in self._on_table.items() if cards}

    @property
    def penalty_cards(self) -> dict[Seat, frozenset[Card]]:
        """Once complete: the cards exposed during the auction by a defender (24 -> 50)."""
        if not self._complete or self._declarer is None:
            return {}
        declaring = (self._declarer, self._declarer.partner)
        return {s: frozenset(x.cards) for s, x in self._exposures.items()
                if s not in declaring and x.cards}

    @property
    def minor_penalty_cards(self) -> dict[Seat, frozenset[Card]]:
        """The subset of ``penalty_cards`` that are minor: a single low card (24A, 50B)."""
        out: dict[Seat, frozenset[Card]] = {}
        for seat, cards in self.penalty_cards.items():
            exposure = self._exposures[seat]
            if len(cards) == 1 and not exposure.premature_lead \
                    and not next(iter(cards)).rank.is_honour:
                out[seat] = cards
        return out

    @property
    def lead_restrictions(self) -> tuple[tuple[Seat, str], ...]:
        """Law 26 eligibility: (seat whose first lead may be restricted, law).

        ``"26B"``: declarer may prohibit the lead of one suit; ``"26A:S"`` (2007): declarer
        may require or prohibit the lead of that suit. Before the auction ends this lists
        the potential ones; once complete only those against a defender remain.
        """
        out: list[tuple[Seat, str]] = []
        for r in self._restrictions:
            if not r.active:
                continue
            if self._complete:
                if self._declarer is None or r.offender in (self._declarer,
                                                            self._declarer.partner):
                    continue
            law = r.law
            if law == "26A":
                bid = r.withdrawn.bid if r.withdrawn is not None else None
                assert bid is not None and bid.denomination is not Denomination.NT
                # 26A1: no restriction if the offender later bid that suit legally
                if any(s is r.offender and c.bid is not None
                       and c.bid.denomination is bid.denomination
                       for s, c, _, _ in self._standing[r.after:]):
                    continue
                law = f"26A:{bid.denomination.name}"
            out.append((r.offender.partner, law))
        return tuple(out)

    # ------------------------------------------------------------------ inputs
    def call(self, seat: Seat, call: Call) -> None:
        """A call card put down in ``seat``'s bidding zone."""
        if self._pending is not None:
            self._sync_cleared()
        if self._complete:
            self._call_after_close(seat, call)
            return
        p = self._pending
        if self._passed_for and seat in self._passed_for:
            self._passed_for.discard(seat)
            if call.is_pass:
                return  # the pass already stands for him (28A / 37B / 38)
        if p is None:
            st = self._standing
            if st and st[-1][0] is seat and st[-1][1] == call:
                return  # the same card put back (or read twice): nothing happened
            if self._may_withdraw is seat and self._lho_withdraws(seat, call):
                return
        elif p.seat is seat and p.call == call:
            p.withdrawn = False
            return
        elif p.kind is _Kind.CHANGE and p.seat is seat and self._standing \
                and self._standing[-1][1] == call:
            # the original call put back instead of the substitute: back to it (25)
            self._settle_change(p, accept=False, detail="cancelled", law="25B")
            return
        entry = self._put(seat, call)
        if not call.is_legal_level:
            self._above_seven(seat, call, entry)
        elif p is not None:
            self._on_pending(p, seat, call, entry)
        else:
            self._route(seat, call, entry)
        self._check_end()

    def withdraw(self, seat: Seat, call: Call) -> bool:
        """A call card taken back from ``seat``'s bidding zone while the auction is open.

        Taking back a cancelled call, or tidying after the auction, is not irregular; a
        change of call is flagged when a different call follows (Law 25). False when
        nothing changed (a standing call picked up after the next call: the common case).
        """
        if self._complete:
            return False
        p = self._pending
        cleared = False
        if p is not None:  # (with none pending there is nothing to sync)
            self._sync_cleared()
            p = self._pending
            cleared = p is None
        if p is not None and p.seat is seat and p.call == call:
            if p.kind is _Kind.CHANGE:
                self._settle_change(p, accept=False, detail="cancelled", law="25B")
            else:
                p.withdrawn = True
            return True
        if p is None and self._may_withdraw is seat and self._standing \
                and self._standing[-1][1] == call:
            self._lho_withdraws(seat, None)
            return True
        # A standing call taken back only matters if another call follows (Law 25); another
        # seat's call pending the director is left as it was.
        return cleared

    def expose(self, seat: Seat, card: Card) -> None:
        """A card appears on ``seat``'s tray during the auction (Law 24)."""
        if self._complete:
            return
        on_table = self._on_table.setdefault(seat, set())
        if card in on_table:
            return
        on_table.add(card)
        x = self._exposures.get(seat)
        if x is None:
            item = self.log.open(Code.CARD_EXPOSED_DURING_AUCTION, law="24A", seat=seat,
                                 card=card, detail="low", cards=str(card))
            self._mine[item.id] = item.code
            x = self._exposures[seat] = _Exposure(item.id)
        if card not in x.cards:
            x.cards.append(card)
        self._classify_exposure(seat, x)

    def unexpose(self, seat: Seat, card: Card) -> None:
        """An exposed card taken back during the auction (it stays a penalty card, 24)."""
        on_table = self._on_table.get(seat)
        if on_table is None or card not in on_table:
            return
        on_table.discard(card)
        x = self._exposures.get(seat)
        if x is not None and not self._complete:
            self.log.update(x.irr, returned=" ".join(
                str(c) for c in x.cards if c not in on_table))

    def face_opening_lead(self) -> None:
        """The opening lead is faced: the Clarification Period is over (Law 22B)."""
        if self._lead_faced:
            return
        self._lead_faced = True
        for irr in list(self._after_close):
            self.log.update(irr, status=Status.RESOLVED)
        self._after_close.clear()

    def declarer_spreads(self) -> None:
        """Law 54A: after an opening lead out of turn declarer spread his hand; he becomes
        dummy and his partner declarer (the contract, the side and the lead stand)."""
        if self._declarer is not None:
            self._declarer = self._declarer.partner

    def rule(self, ruling: Ruling) -> bool:
        """Apply a director's ruling on one of this auction's irregularities."""
        if ruling.kind is RulingKind.UNINTENDED:
            return self._unintended(ruling)
        irr = ruling.alert
        if irr is None or irr not in self._mine:
            return False
        kind = ruling.kind
        self._sync_cleared()
        if kind is RulingKind.OPTION and irr in self._law_choice:
            return self._choose_law(irr, ruling.option or "")
        if kind in (RulingKind.UNDO, RulingKind.ADJUST, RulingKind.CLAIM, RulingKind.BOARD,
                    RulingKind.OPTION):
            return False
        p = self._pending
        if p is not None and p.irr == irr:
            self._rule_pending(p, ruling)
            self._check_end()
            return True
        code = self._mine[irr]
        if kind in (RulingKind.COMPARABLE, RulingKind.NOT_COMPARABLE):
            judgement = self._judgements.pop(irr, None)
            if judgement is not None and not self._cleared(irr):
                self._judge(irr, judgement, kind is RulingKind.COMPARABLE)
            return True
        if kind is RulingKind.LEAD and code is Code.CARD_EXPOSED_DURING_AUCTION:
            for seat, x in self._exposures.items():
                if x.irr == irr and not x.premature_lead:
                    x.premature_lead = True
                    self._classify_exposure(seat, x)
            return True
        if kind is RulingKind.CLEAR:
            self._law_choice.pop(irr, None)
            self._judgements.pop(irr, None)
            self._followups = [f for f in self._followups if f.irr != irr]
            self._after_close.pop(irr, None)
            self.log.update(irr, status=Status.RESOLVED, detail="cleared")
            return True
        return True  # accept / reject on a settled irregularity: nothing left to do

    # ------------------------------------------------------------------ Law 25A
    def _unintended(self, ruling: Ruling) -> bool:
        """25A1: until his partner calls, a player may replace an unintended call by the
        intended one (2007: without pause for thought; 2017: however he became aware of
        it). The intended call takes the unintended one's place; 25A4: his LHO may
        withdraw a call made over it (no rectification; 16C): a call no longer legal after
        the substitution is withdrawn at once and LHO calls again, a legal one stands
        until LHO puts down another call or takes it back.

        ``alert`` names the intended call already put down (then flagged as a change of
        call or a call out of rotation); otherwise ``seat`` and ``call`` name it. Refused
        (False) once partner has called (25A2). When the auction ended before it reached
        partner: 2007 (25A3) no substitution after the end of the auction; 2017 (25A2)
        none after the end of the auction period (the opening lead faced), so in the
        Clarification Period the auction is opened again.
        """
        # 2007 25A3: no substitution after the end of the auction; 2017 25A2: none after
        # the end of the auction period (17D: the opening lead faced)
        reopen = self._complete
        if reopen and (self._l2007 or self._lead_faced):
            return False
        self._sync_cleared()
        p = self._pending
        seat, intended, entry = ruling.seat, ruling.call, None
        if p is not None:
            mine = ruling.alert == p.irr or (
                ruling.alert is None and seat is p.seat and intended in (None, p.call))
            if not mine:
                return False        # another irregular call awaits its settlement first
            if p.kind is _Kind.CHANGE:
                self._settle_change(p, accept=True, detail="unintended", law="25A")
                self._check_end()
                return True
            seat, intended, entry = p.seat, p.call, p.entry
        elif ruling.alert is not None:
            return False
        if seat is None or intended is None:
            return False
        st = self._standing
        idx = next((i for i in range(len(st) - 1, -1, -1) if st[i][0] is seat), None)
        if idx is None or any(s is seat.partner for s, _, _, _ in st[idx + 1:]):
            return False            # no call of his to replace, or partner has called (25A2)
        _, original, original_entry, oor = st[idx]
        if original == intended:
            return False
        if reopen:
            # the auction ended before it reached his partner: it is open again
            self._complete, self._contract, self._declarer = False, None, None
        if p is not None:
            self._pending = None
            self.log.update(p.irr, status=Status.RESOLVED, detail="unintended", law="25A")
        if entry is None:
            entry = self._put(seat, intended)
        item = self.log.open(Code.CHANGE_OF_CALL, law="25A", seat=seat, call=intended,
                             detail="unintended", status=Status.RESOLVED,
                             original=str(original))
        self._own(item, entry)
        self._cancel(original_entry, item.id)
        later = st[idx + 1:]
        del st[idx:]
        self._rebuild()
        self._in_rotation(seat, intended, entry, oor=oor)
        withdrawn: list[str] = []
        for s, c, e, o in later:
            # LHO's call over the unintended call: it stands if still legal (he may still
            # withdraw it), otherwise it is withdrawn and he calls again
            if self._pending is None and s is self._turn and self._legal_here(s, c):
                self._apply(s, c, e, o)
                self._may_withdraw = s
            else:
                self._cancel(e, item.id)
                withdrawn.append(str(c))
        if withdrawn:
            self.log.update(item.id, lho_withdrawn=" ".join(withdrawn))
        elif later:
            self.log.update(item.id, lho_may_withdraw=later[0][0].name)
        self._check_end()
        return True

    def _legal_here(self, seat: Seat, call: Call) -> bool:
        """Whether ``call`` would be sufficient / admissible from ``seat`` now."""
        if call.kind is _BID:
            bid = call.bid
            return bid is not None and (self._last_bid is None
                                        or bid.rank > self._last_bid.rank)
        if call.kind is _DOUBLE or call.kind is _REDOUBLE:
            return self._admissible(seat, call.kind)
        return True

    def _lho_withdraws(self, seat: Seat, call: Call | None) -> bool:
        """25A4: after a substitution the LHO takes back (``call`` None) or changes the
        call he made over the unintended call: no rectification."""
        st = self._standing
        if self._may_withdraw is not seat or self._pending is not None or not st \
                or st[-1][0] is not seat or (call is not None and st[-1][1] == call):
            return False
        self._may_withdraw = None
        _, old, old_entry, _ = st.pop()
        self._cancel(old_entry, None)
        self._rebuild()
        if call is not None:
            entry = self._put(seat, call)
            self._in_rotation(seat, call, entry)
            self._check_end()
        return True

    # ------------------------------------------------------------------ routing
    def _route(self, seat: Seat, call: Call, entry: int) -> None:
        """A call with nothing pending."""
        turn = self._turn
        if seat is turn:
            self._in_rotation(seat, call, entry)
            return
        st = self._standing
        if st and st[-1][0] is seat:
            self._change_of_call(seat, call, entry)
        elif self._oblig.get(turn) and seat is turn.lho:
            # 28A: the player due is required to pass, so his LHO calls in rotation; the
            # implied pass goes in the record before the call that implied it
            self._record.insert(entry, AuctionEntry(turn, PASS, note="implied pass (28A)"))
            self._apply(turn, PASS, entry, None)
            self._passed_for.add(turn)
            self._in_rotation(seat, call, entry + 1)
        elif (call.kind is _DOUBLE or call.kind is _REDOUBLE) \
                and not self._admissible(seat, call.kind):
            self._inadmissible_out_of_rotation(seat, call, entry, turn)
        else:
            item = self.log.open(Code.CALL_OUT_OF_ROTATION, law="28", seat=seat, call=call,
                                 detail="pending", due=turn.name,
                                 at=_relation(seat, turn))
            self._own(item, entry)
            self._pending = _Pending(_Kind.OUT_OF_ROTATION, item.id, seat, call, entry, turn)

    def _inadmissible_out_of_rotation(self, seat: Seat, call: Call, entry: int,
                                      due: Seat) -> None:
        """An inadmissible double or redouble out of rotation: never accepted (35A, 32),
        so cancelled at once and the turn stays with the player due. Whether Law 36 (2017
        36B / 36D; 2007 via 32B1) or Law 32 (the call out of rotation) applies first is
        the director's choice: the alert stays open with both (``option`` ``36`` or
        ``32``, ``_choose_law``); no obligation is in force until he rules."""
        code = Code.INADMISSIBLE_DOUBLE if call.kind is _DOUBLE else Code.INADMISSIBLE_REDOUBLE
        item = self.log.open(code, law="36", seat=seat, call=call,
                             detail="cancelled,director_choice", due=due.name,
                             out_of_rotation=True, at=_relation(seat, due), choices="36,32")
        self._own(item, entry)
        self._cancel(entry, item.id)
        self._law_choice[item.id] = (seat, call, due, len(self._standing))

    def _choose_law(self, irr: int, option: str) -> bool:
        """The director's choice for an inadmissible double or redouble out of rotation.
        ``36``: 36B, the offender makes any legal call at his turn, his partner passes
        throughout, 26. ``32``: the rectification of a double or redouble out of rotation
        (section 4.3's X/XX rows, 2007 and 2017), its waiting parts run over the calls
        made since."""
        if option not in ("36", "32"):
            return False
        seat, call, due, since = self._law_choice.pop(irr)
        if option == "36":
            self._oblige(seat.partner, PASS_ALL, irr)
            self._restrict(irr, seat, call)
            self.log.update(irr, status=Status.RESOLVED, detail="cancelled,pass_all",
                            law="36B")
            return True
        others = self._followups
        self._followups = []
        self._law_30_32(irr, seat, call, due)
        for s, c, _, _ in self._standing[since:]:
            self._follow(s, c)
        self._followups = others + self._followups
        return True

    def _in_rotation(self, seat: Seat, call: Call, entry: int, *, oor: int | None = None,
                     check_obligation: bool = True) -> None:
        """A call at the caller's turn: 37, 36, 27 (``_law27_insufficient_bid``), or it stands."""
        kind = call.kind
        if check_obligation and kind is not _PASS and self._oblig.get(seat):
            item = self.log.open(Code.CALL_BY_PLAYER_REQUIRED_TO_PASS, law="37", seat=seat,
                                 call=call, detail="pending",
                                 obligation=self.obligations.get(seat, PASS_NEXT))
            self._own(item, entry)
            self._pending = _Pending(_Kind.REQUIRED_TO_PASS, item.id, seat, call, entry,
                                     seat, oor)
            return
        if kind is _DOUBLE or kind is _REDOUBLE:
            if not self._admissible(seat, kind):
                code = (Code.INADMISSIBLE_DOUBLE if kind is _DOUBLE
                        else Code.INADMISSIBLE_REDOUBLE)
                item = self.log.open(code, law="36", seat=seat, call=call, detail="pending")
                self._own(item, entry)
                self._pending = _Pending(_Kind.INADMISSIBLE, item.id, seat, call, entry,
                                         seat, oor)
                return
        elif kind is _BID and self._law27_insufficient_bid(seat, call, entry, oor):
            return
        self._apply(seat, call, entry, oor)

    def _admissible(self, seat: Seat, kind: CallKind) -> bool:
        """19A1 / 19B1: X of an opponent's bid, XX of an opponent's X, only passes since."""
        if kind is _DOUBLE:
            return (self._last_bid is not None and self._dbl == 0
                    and (seat - self._last_bidder) & 1 == 1)
        return self._dbl == 1 and (seat - self._dbl_seat) & 1 == 1

    def _on_pending(self, p: _Pending, seat: Seat, call: Call, entry: int) -> None:
        """A call while an irregular call awaits settlement."""
        lho = p.seat.lho
        kind = p.kind
        if kind is _Kind.OUT_OF_ROTATION:
            if seat is p.seat:
                self._replace_pending(p, call, entry)
            elif seat is p.due and seat is p.seat.partner:
                # 28B is about an opponent due to call: the offender's partner calling at
                # his own turn forfeits nothing. The call out of rotation is cancelled (29B),
                # Laws 30-32 apply with their obligations to pass, and partner's call is
                # judged under them (a call he was then required not to make: 37)
                self.log.update(p.irr, partner_called=True)
                self._reject_out_of_rotation(p)
                self._route(seat, call, entry)
            elif seat is p.due:
                self._pending = None
                self._cancel(p.entry, p.irr)
                self.log.update(p.irr, status=Status.RESOLVED, detail="cancelled", law="28B")
                self._route(seat, call, entry)
            elif seat is lho:
                self._accept_out_of_rotation(p)
                self._dispatch(seat, call, entry)
            else:
                self._while_pending(seat, call, entry)
        elif kind is _Kind.INSUFFICIENT:
            self._law27_next_call(p, seat, call, entry)
        elif kind is _Kind.INADMISSIBLE:
            if seat is lho:
                # 36A: cancel it and every later call; back to the offender, no rectification
                self._pending = None
                self._cancel(p.entry, p.irr)
                self._cancel(entry, p.irr)
                self.log.update(p.irr, status=Status.RESOLVED, detail="cancelled_later",
                                law="36A")
            elif seat is p.seat:
                self._reject_inadmissible(p)
                self._dispatch(seat, call, entry)
            else:
                self._while_pending(seat, call, entry)
        elif kind is _Kind.REQUIRED_TO_PASS:
            if seat is lho:
                self._accept_required_to_pass(p)
                self._dispatch(seat, call, entry)
            elif seat is p.seat:
                self._reject_required_to_pass(p, substitute=False)
                self._dispatch(seat, call, entry)
            else:
                self._while_pending(seat, call, entry)
        else:  # change of call
            if seat is lho:
                self._settle_change(p, accept=True, detail="accepted", law="25B")
                self._dispatch(seat, call, entry)
            elif seat is p.seat:
                self._replace_pending(p, call, entry)
            else:
                self._while_pending(seat, call, entry)

    def _dispatch(self, seat: Seat, call: Call, entry: int) -> None:
        p = self._pending
        if p is not None:
            self._on_pending(p, seat, call, entry)
        else:
            self._route(seat, call, entry)

    def _rule_pending(self, p: _Pending, ruling: Ruling) -> None:
        kind, rk = p.kind, ruling.kind
        if rk is RulingKind.CLEAR:
            # the director closes it with no further action: the call is struck, no
            # rectification (a change of call: the original call stands)
            self._pending = None
            self._cancel(p.entry, p.irr)
            self.log.update(p.irr, status=Status.RESOLVED, detail="cleared")
            return
        if kind is _Kind.OUT_OF_ROTATION:
            if rk is RulingKind.ACCEPT:
                self._accept_out_of_rotation(p)
            elif rk is RulingKind.REJECT:
                self._reject_out_of_rotation(p)
        elif kind is _Kind.INSUFFICIENT:
            self._law27_ruling(p, rk)
        elif kind is _Kind.INADMISSIBLE:
            if rk is RulingKind.REJECT:
                self._reject_inadmissible(p)
            # an inadmissible double or redouble cannot be accepted (35A): ignore accept
        elif kind is _Kind.REQUIRED_TO_PASS:
            if rk is RulingKind.ACCEPT:
                self._accept_required_to_pass(p)
            elif rk is RulingKind.REJECT:
                self._reject_required_to_pass(p, substitute=True)
        elif rk is RulingKind.ACCEPT:
            unintended = ruling.option == "unintended"
            self._settle_change(p, accept=True, detail="unintended" if unintended
                                else "accepted", law="25A" if unintended else "25B")
        elif rk is RulingKind.REJECT:
            self._settle_change(p, accept=False, detail="cancelled", law="25B")

    # ------------------------------------------------------------------ settling pending calls
    def _accept_out_of_rotation(self, p: _Pending) -> None:
        """29A: the call stands and rotation continues from the offender."""
        self._pending = None
        self.log.update(p.irr, status=Status.RESOLVED, detail="accepted", law="29A")
        self._in_rotation(p.seat, p.call, p.entry, oor=p.irr)

    def _accept_required_to_pass(self, p: _Pending) -> None:
        """37A: the call and LHO's call stand; a pass_all obligation still holds."""
        self._pending = None
        self.log.update(p.irr, status=Status.RESOLVED, detail="accepted", law="37A")
        self._in_rotation(p.seat, p.call, p.entry, oor=p.oor, check_obligation=False)

    def _reject_required_to_pass(self, p: _Pending, *, substitute: bool) -> None:
        """37B: cancelled, a pass substituted, both offenders pass for the rest."""
        self._pending = None
        self._cancel(p.entry, p.irr)
        self._oblige(p.seat, PASS_ALL, p.irr)
        self._oblige(p.seat.partner, PASS_ALL, p.irr)
        self._restrict(p.irr, p.seat, p.call)
        self.log.update(p.irr, status=Status.RESOLVED, law="37B",
                        detail="substituted_pass" if substitute else "cancelled,pass_all")
        if substitute:
            self._substitute_pass(p.seat, "substituted pass (37B)")

    def _reject_inadmissible(self, p: _Pending) -> None:
        """36B: cancelled; the offender calls legally, partner passes for the rest."""
        self._pending = None
        self._cancel(p.entry, p.irr)
        self._oblige(p.seat.partner, PASS_ALL, p.irr)
        self._restrict(p.irr, p.seat, p.call)
        self.log.update(p.irr, status=Status.RESOLVED, detail="cancelled,pass_all", law="36B")

    def _replace_pending(self, p: _Pending, call: Call, entry: int) -> None:
        """The offender puts down another call before the pending one is settled."""
        self._cancel(p.entry, p.irr)
        p.call, p.entry, p.withdrawn = call, entry, False
        self._record[entry] = replace(self._record[entry], irregularity=p.irr)
        self.log.update(p.irr, call=call)

    def _settle_change(self, p: _Pending, *, accept: bool, detail: str, law: str) -> None:
        """Law 25: the substitute stands (accepted or unintended) or is cancelled."""
        self._pending = None
        self.log.update(p.irr, status=Status.RESOLVED, detail=detail, law=law)
        if not accept:
            self._cancel(p.entry, p.irr)
            return
        _, _, original_entry, _ = self._standing.pop()
        self._cancel(original_entry, p.irr)
        self._rebuild()
        self._in_rotation(p.seat, p.call, p.entry)

    def _change_of_call(self, seat: Seat, call: Call, entry: int) -> None:
        original = self._standing[-1][1]
        item = self.log.open(Code.CHANGE_OF_CALL, law="25", seat=seat, call=call,
                             detail="pending", original=str(original))
        self._own(item, entry)
        self._pending = _Pending(_Kind.CHANGE, item.id, seat, call, entry, seat.lho)

    def _while_pending(self, seat: Seat, call: Call, entry: int) -> None:
        item = self.log.open(Code.CALL_OUT_OF_ROTATION, law="28", seat=seat, call=call,
                             detail="while_pending", pending=self.pending)
        self._own(item, entry)
        self._cancel(entry, item.id)

    def _above_seven(self, seat: Seat, call: Call, entry: int) -> None:
        """38: cancelled, a pass substituted at his turn, both offenders pass throughout."""
        substitute = self._pending is None and seat is self._turn
        item = self.log.open(Code.BID_ABOVE_SEVEN, law="38", seat=seat, call=call,
                             detail="substituted_pass" if substitute else "cancelled,pass_all",
                             status=Status.RESOLVED)
        self._own(item, entry)
        self._cancel(entry, item.id)
        self._oblige(seat, PASS_ALL, item.id)
        self._oblige(seat.partner, PASS_ALL, item.id)
        self._restrict(item.id, seat, None)
        if substitute:
            self._substitute_pass(seat, "substituted pass (38)")

    # ------------------------------------------------------------------ Law 27: insufficient bid
    def _law27_insufficient_bid(self, seat: Seat, call: Call, entry: int,
                                oor: int | None) -> bool:
        """Law 27, applied to a bid at the caller's turn: one no higher than the last bid is
        an insufficient bid, held pending until LHO calls over it (27A1), the offender
        replaces it (27B, ``_law27_replacement``) or the director rules (``_law27_ruling``).
        True if it was one (and is now pending)."""
        bid = call.bid
        last = self._last_bid
        assert bid is not None
        if last is not None and bid.rank <= last.rank:
            item = self.log.open(Code.INSUFFICIENT_BID, law="27", seat=seat, call=call,
                                 detail="pending", last_bid=str(last))
            self._own(item, entry)
            self._pending = _Pending(_Kind.INSUFFICIENT, item.id, seat, call, entry,
                                     seat, oor)
            return True
        return False

    def _law27_next_call(self, p: _Pending, seat: Seat, call: Call, entry: int) -> None:
        """A call while an insufficient bid is pending: the offender's is a replacement (27B);
        LHO's, unless the director rejected it, accepts it (27A1, 2017 27B4)."""
        if seat is p.seat:
            self._law27_replacement(p, call, entry)
        elif seat is p.seat.lho and not p.rejected:
            self._law27_accept(p)
            self._dispatch(seat, call, entry)
        else:
            self._while_pending(seat, call, entry)

    def _law27_ruling(self, p: _Pending, rk: RulingKind) -> None:
        """The director accepts the pending insufficient bid (27A1) or rejects it (27B: the
        offender must replace it; LHO's call no longer accepts it)."""
        if rk is RulingKind.ACCEPT:
            self._law27_accept(p)
        elif rk is RulingKind.REJECT and not p.rejected:
            p.rejected = True
            self.log.update(p.irr, detail="rejected", law="27B")

    def _law27_accept(self, p: _Pending) -> None:
        """The pending bid stands as made (27A1; 2017 27B4 for an insufficient replacement):
        its legality is not checked again."""
        self._pending = None
        self.log.update(p.irr, status=Status.RESOLVED, detail="accepted",
                        law="27B4" if p.first is not None else "27A1")
        self._apply(p.seat, p.call, p.entry, p.oor)

    def _law27_replacement(self, p: _Pending, call: Call, entry: int) -> None:
        """27B: the offender replaces his insufficient bid (27C: an early one stands)."""
        ib = (p.first or p.call).bid
        assert ib is not None
        last = self._last_bid
        assert last is not None
        bid = call.bid
        if bid is not None and bid.rank <= last.rank:
            if not self._l2007:
                # 2017 27B4: replaced by another insufficient bid. LHO may accept it (27A1
                # applies to it: it stands and later calls are judged against it);
                # otherwise the offender replaces it under 27B
                first = p.first or p.call
                self._replace_pending(p, call, entry)
                p.first, p.rejected = first, False
                self.log.update(p.irr, law="27B4", detail="pending", replacement=str(call),
                                original=str(first))
                return
            # 2007: not a legal replacement: struck, the insufficient bid still awaits one
            self._cancel(entry, p.irr)
            self.log.update(p.irr, invalid_replacement=str(call))
            return
        self._pending = None
        self._cancel(p.entry, p.irr)
        partner = p.seat.partner
        lowest = _lowest_sufficient(last, ib.denomination)
        if bid is not None and bid == lowest:
            # 27B1a: no rectification once the director confirms (not artificial / same
            # denominations): the item stays open for that confirmation
            self.log.update(p.irr, detail="lowest_sufficient", law="27B1a",
                            replacement=str(call))
            self._judgements[p.irr] = _Judgement(
                p.seat, p.call, ((partner, PASS_ALL),), False, "27B1a", "27B2")
            self._in_rotation(p.seat, call, entry)
            return
        self._oblige(partner, PASS_ALL, p.irr)
        self._restrict(p.irr, p.seat, p.call)
        self._judgements[p.irr] = _Judgement(p.seat, p.call, (), True, "27B1b",
                                             "27B3" if bid is None and not call.is_pass
                                             else "27B2")
        if call.kind is _DOUBLE or call.kind is _REDOUBLE:
            # 27B3: a double or redouble is no replacement; cancelled, he calls again
            self._cancel(entry, p.irr)
            self.log.update(p.irr, status=Status.RESOLVED, detail="cancelled,pass_all",
                            law="27B3",
                            replacement=str(call))
            return
        self.log.update(p.irr, status=Status.RESOLVED, detail="replaced,pass_all", law="27B2",
                        replacement=str(call))
        self._in_rotation(p.seat, call, entry)

    # ------------------------------------------------------------------ Laws 30-32
    def _reject_out_of_rotation(self, p: _Pending) -> None:
        """The director cancels a call out of rotation LHO did not accept (section 4.3)."""
        self._pending = None
        self._cancel(p.entry, p.irr)
        self._law_30_32(p.irr, p.seat, p.call, p.due)

    def _law_30_32(self, irr: int, o: Seat, call: Call, due: Seat) -> None:
        """Laws 30-32 for a call out of rotation the director cancelled (section 4.3)."""
        rel = _relation(o, due)
        partner = o.partner

        def done(law: str, detail: str = "rejected", **params: object) -> None:
            self.log.update(irr, status=Status.RESOLVED, detail=detail, law=law, **params)

        def follow(law: str, watch_rho: bool) -> None:
            self._followups.append(_FollowUp(irr, o, call, law, watch_rho))
            self.log.update(irr, detail="rejected", law=law)

        if self._l2007:
            if call.is_pass:
                if self._last_bid is None:
                    self._oblige(o, PASS_NEXT, irr)
                    done("30A")
                elif rel == "rho":
                    self._oblige(o, PASS_NEXT, irr)
                    done("30B1")
                else:
                    self._oblige(o, PASS_ALL, irr)
                    done("30B2", partner_no_double=True)
            elif call.is_bid:
                if rel == "rho":
                    follow("31A", True)
                else:
                    self._oblige(partner, PASS_ALL, irr)
                    self._restrict(irr, o, call)
                    done("31B", "rejected,pass_all")
            elif rel == "rho":
                follow("32B", True)
            else:
                self._oblige(partner, PASS_ALL, irr)
                self._restrict(irr, o, call)
                done("32A", "rejected,pass_all")
        elif call.is_pass:
            if rel == "rho":
                self._oblige(o, PASS_NEXT, irr)
                done("30A")
            else:
                follow("30B", False)
        elif call.is_bid:
            follow("31A" if rel == "rho" else "31B", rel == "rho")
        else:
            follow("32A" if rel == "rho" else "32B", rel == "rho")

    def _follow(self, seat: Seat, call: Call) -> None:
        """A call now stands: move the waiting rectifications of Laws 30-32 on."""
        keep: list[_FollowUp] = []
        for f in self._followups:
            if self._cleared(f.irr):
                continue
            o = f.offender
            if f.watch_rho and f.rho_acted is None:
                if seat is o.rho:
                    f.rho_acted = not call.is_pass
                    if self._l2007 and f.rho_acted and not f.withdrawn.is_bid:
                        # 2007 32B2: RHO acted over a double out of rotation
                        self._oblige(o.partner, PASS_ALL, f.irr)
                        self._restrict(f.irr, o, f.withdrawn)
                        self.log.update(f.irr, status=Status.RESOLVED, detail="rejected,pass_all",
                                        law="32B2")
                        continue
                keep.append(f)
                continue
            if seat is not o:
                keep.append(f)
                continue
            self._settle_follow_up(f, call)
        self._followups = keep

    def _settle_follow_up(self, f: _FollowUp, call: Call) -> None:
        """The offender's next call after his cancelled call out of rotation."""
        o, irr = f.offender, f.irr
        repeated = call == f.withdrawn
        if f.watch_rho and not f.rho_acted:
            if repeated:  # 31A1 / 32A1 (2007 32B1): repeated after RHO passed
                self.log.update(irr, status=Status.RESOLVED, detail="repeated",
                                law=f.law + "1", repeat=str(call))
                return
        if self._l2007:
            withdrawn_bid = f.withdrawn.bid
            if withdrawn_bid is not None and call.bid is not None \
                    and call.bid.denomination is withdrawn_bid.denomination:
                self._oblige(o.partner, PASS_NEXT, irr)
                self.log.update(irr, status=Status.RESOLVED, detail="same_denomination,pass_next",
                                law=f.law + "2a", repeat=str(call))
            else:
                self._oblige(o.partner, PASS_ALL, irr)
                self._restrict(irr, o, f.withdrawn)
                self.log.update(irr, status=Status.RESOLVED, detail="other_call,pass_all",
                                law=f.law + ("2b" if f.withdrawn.is_bid else "2"),
                                repeat=str(call))
            return
        # 2017 (23A): the director judges whether the offender's call is comparable
        self._judgements[irr] = _Judgement(o, f.withdrawn, ((o.partner, PASS_NEXT),), False,
                                           f.law, f.law)
        self.log.update(irr, detail="awaiting_comparable", replacement=str(call))

    def _judge(self, irr: int, j: _Judgement, comparable: bool) -> None:
        if comparable:
            if j.lift_on_comparable:
                for by_src in self._oblig.values():
                    by_src.pop(irr, None)
                for r in self._restrictions:
                    if r.irr == irr:
                        r.active = False
            self.log.update(irr, status=Status.RESOLVED, detail="comparable",
                            law=j.law_comparable)
            return
        if not j.lift_on_comparable:   # the rectification was not applied yet
            for seat, kind in j.not_comparable:
                self._oblige(seat, kind, irr)
            self._restrict(irr, j.offender, j.withdrawn)
        self.log.update(irr, status=Status.RESOLVED, detail="not_comparable",
                        law=j.law_not_comparable,
                        obligation=j.not_comparable[0][1] if j.not_comparable else None)

    # ------------------------------------------------------------------ Law 24, Law 39
    def _classify_exposure(self, seat: Seat, x: _Exposure) -> None:
        if len(x.cards) >= 2:
            detail, law = "two_or_more", "24C"
        elif x.premature_lead:
            detail, law = "premature_lead", "24B"
        elif x.cards[0].rank.is_honour:
            detail, law = "honour", "24B"
        else:
            detail, law = "low", "24A"
        self.log.update(x.irr, detail=detail, law=law,
                        cards=" ".join(str(c) for c in x.cards))
        if detail != "low" and not x.obliged:
            x.obliged = True
            self._oblige(seat.partner, PASS_NEXT, x.irr)

    def _settle_exposures(self) -> None:
        """End of the auction: a defender's exposed cards become penalty cards (24 -> 50);
        declarer's or dummy's go back to the hand."""
        declarer = self._declarer
        for seat, x in self._exposures.items():
            item = self.log.get(x.irr)
            kind = item.detail.split(",")[0] if item is not None else ""
            if declarer is None:
                self.log.update(x.irr, status=Status.RESOLVED, outcome="passed_out")
            elif seat is declarer or seat is declarer.partner:
                self.log.update(x.irr, status=Status.RESOLVED, outcome="returned",
                                detail=f"{kind},returned")
            else:
                minor = len(x.cards) == 1 and not x.premature_lead \
                    and not x.cards[0].rank.is_honour
                penalty = "minor" if minor else "major"
                self.log.update(x.irr, status=Status.ESTABLISHED, outcome="penalty_card",
                                penalty=penalty, detail=f"{kind},{penalty}_penalty_card")

    def _call_after_close(self, seat: Seat, call: Call) -> None:
        """39: cancelled. A defender's bid, X or XX with his LHO silent: 26 for partner."""
        # LHO calling after it: no lead restriction for the earlier call (39C)
        for irr, offender in list(self._after_close.items()):
            if offender.lho is seat:
                del self._after_close[irr]
                for r in self._restrictions:
                    if r.irr == irr:
                        r.active = False
                self.log.update(irr, status=Status.RESOLVED, detail="cancelled",
                                lead_restriction=None)
        entry = self._put(seat, call)
        declarer = self._declarer
        eligible = (declarer is not None and not self._lead_faced and not call.is_pass
                    and seat is not declarer and seat is not declarer.partner)
        law = "39C" if eligible else "39B"
        item = self.log.open(Code.CALL_AFTER_AUCTION_CLOSED, law=law, seat=seat, call=call,
                             detail="cancelled,lead_restriction" if eligible else "cancelled",
                             status=Status.OPEN if eligible else Status.RESOLVED,
                             lead_restriction=seat.partner.name if eligible else None)
        self._own(item, entry)
        self._cancel(entry, item.id)
        if eligible:
            self._after_close[item.id] = seat
            self._restrict(item.id, seat, call)

    # ------------------------------------------------------------------ state
    def _cleared(self, irr: int) -> bool:
        """The director cleared it (the Table may do that without telling us)."""
        item = self.log.get(irr)
        return item is not None and item.detail == "cleared"

    def _sync_cleared(self) -> None:
        """A pending call whose alert the director cleared: struck, no rectification."""
        p = self._pending
        if p is not None:
            item = self.log.get(p.irr)
            if item is not None and item.status is not Status.OPEN:
                self._pending = None
                self._cancel(p.entry, p.irr)
                self._check_end()

    def _put(self, seat: Seat, call: Call) -> int:
        self._record.append(AuctionEntry(seat, call))
        self._record_cache = None
        return len(self._record) - 1

    def _own(self, item: Irregularity, entry: int) -> None:
        self._mine[item.id] = item.code
        self._record[entry] = replace(self._record[entry], irregularity=item.id)
        self._record_cache = None

    def _cancel(self, entry: int, irr: int | None) -> None:
        e = self._record[entry]
        self._record[entry] = replace(
            e, cancelled=True, irregularity=e.irregularity if e.irregularity else irr)
        self._record_cache = None

    def _substitute_pass(self, seat: Seat, note: str) -> None:
        self._record.append(AuctionEntry(seat, PASS, note=note))
        self._record_cache = None
        self._apply(seat, PASS, len(self._record) - 1, None)
        self._passed_for.add(seat)

    def _oblige(self, seat: Seat, kind: str, source: int) -> None:
        if self._complete:
            return
        by_src = self._oblig.setdefault(seat, {})
        if by_src.get(source) != PASS_ALL:
            by_src[source] = kind

    def _restrict(self, irr: int, offender: Seat, withdrawn: Call | None) -> None:
        law = "26B"
        if self._l2007 and withdrawn is not None and withdrawn.bid is not None \
                and withdrawn.bid.denomination is not Denomination.NT:
            law = "26A"
        self._restrictions.append(
            _LeadRestriction(irr, offender, withdrawn, len(self._standing), law))

    def _apply(self, seat: Seat, call: Call, entry: int, oor: int | None) -> None:
        """A call now stands."""
        if self._may_withdraw is not None:
            self._may_withdraw = None     # 25A4: LHO's chance ends with the next call
        self._standing.append((seat, call, entry, oor))
        self._calls_list.append((seat, call))
        self._calls_cache = None
        self._advance(seat, call)
        if self._passed_for:
            # his turn again: a pass card from him now is a new call
            self._passed_for.discard(self._turn)
        oblig = self._oblig
        if oblig:
            by_src = oblig.get(seat)
            if by_src:
                for src in [s for s, k in by_src.items() if k == PASS_NEXT]:
                    del by_src[src]
        if self._followups:
            self._follow(seat, call)

    def _advance(self, seat: Seat, call: Call) -> None:
        bid = call.bid
        if bid is not None:
            self._last_bid = bid
            self._last_bidder = seat
            self._dbl = 0
            self._passes = 0
            key = (seat & 1) * 5 + bid.denomination
            if self._first_namer[key] is None:
                self._first_namer[key] = seat
        elif call.kind is _PASS:
            self._passes += 1
        else:
            self._dbl = 1 if call.kind is _DOUBLE else 2
            self._dbl_seat = seat
            self._passes = 0
        self._turn = _SEATS[(seat + 1) & 3]

    def _rebuild(self) -> None:
        self._turn = self.dealer
        self._last_bid = None
        self._last_bidder = self.dealer
        self._dbl = 0
        self._dbl_seat = self.dealer
        self._passes = 0
        self._first_namer = [None] * 10
        self._calls_cache = None
        self._calls_list = [(seat, call) for seat, call, _, _ in self._standing]
        for seat, call, _, _ in self._standing:
            self._advance(seat, call)

    def _check_end(self) -> None:
        """22A: three passes after a call, or four passes; 17D3 if a pass skipped a player."""
        if self._pending is not None or self._complete:
            return
        passes = self._passes
        if passes < (3 if self._last_bid is not None else 4):
            return
        st = self._standing
        start = len(st) - passes
        seats = {s for s, _, _, _ in st[start:]}
        if self._last_bid is not None:
            last_caller = st[start - 1][0]
            required = [last_caller.lho, last_caller.partner, last_caller.rho]
        else:
            required = list(_SEATS)
        missing = [s for s in required if s not in seats]
        if missing:
            # 17D3 (2007 17E2): a pass out of rotation cost someone his turn: back to him,
            # that pass and the later ones are cancelled
            cut = next((i for i in range(start, len(st)) if st[i][3] is not None), start)
            irr = st[cut][3]
            for _, _, entry, _ in st[cut:]:
                self._cancel(entry, irr)
            del st[cut:]
            self._rebuild()
            if irr is not None:
                self.log.update(irr, detail="reverted", reverted_to=missing[0].name,
                                law="17E2" if self._l2007 else "17D3")
            return
        self._complete = True
        last = self._last_bid
        if last is None:
            self._contract = PASSED_OUT
        else:
            self._contract = Contract(last, Doubling(self._dbl))
            self._declarer = self._first_namer[(self._last_bidder & 1) * 5
                                                + last.denomination]
        for f in self._followups:
            # the offender made no further call: nothing left to rectify
            self.log.update(f.irr, status=Status.RESOLVED, detail="auction_ended")
        self._followups.clear()
        if self._exposures:
            self._settle_exposures()


def _relation(offender: Seat, due: Seat) -> str:
    """Whose turn it was, seen from the offender: ``rho``, ``partner`` or ``lho``."""
    return ("lho", "partner", "rho")[(due - offender - 1) & 3] if due is not offender \
        else "self"


def _lowest_sufficient(last: Bid, denomination: Denomination) -> Bid | None:
    level = last.level if denomination > last.denomination else last.level + 1
    return Bid(level, denomination) if level <= 7 else None


class AuctionOutcome(NamedTuple):
    """What a sequence of standing calls comes to (Law 22): ``complete``, and once complete
    the ``contract`` (``PASSED_OUT`` after four passes) and its ``declarer``."""

    complete: bool
    contract: Contract | None
    declarer: Seat | None


def auction_outcome(calls: Iterable[tuple[Seat, Call]]) -> AuctionOutcome:
    """The outcome of calls that all stand, in the order made (as a record gives them).

    Complete after four passes or after a bid and three passes. The declarer is the first
    player of the final side to name the final denomination (the Laws' definition of
    declarer, as the ``Auction`` class finds it while the calls are made). No irregularity
    is judged here: replay the calls through ``Auction`` for that (``check_record`` does).
    """
    standing = list(calls)
    last: tuple[Seat, Bid] | None = None
    doubling = Doubling.NONE
    passes = 0
    for seat, call in standing:
        if call.kind is CallKind.PASS:
            passes += 1
            continue
        passes = 0
        if call.bid is not None:
            last, doubling = (seat, call.bid), Doubling.NONE
        else:
            doubling = Doubling.DOUBLED if call.kind is CallKind.DOUBLE else Doubling.REDOUBLED
    if last is None:
        return AuctionOutcome(True, PASSED_OUT, None) if passes >= 4 \
            else AuctionOutcome(False, None, None)
    if passes < 3:
        return AuctionOutcome(False, None, None)
    final_seat, final_bid = last
    declarer = next(s for s, c in standing
                    if c.bid is not None and s.side is final_seat.side
                    and c.bid.denomination is final_bid.denomination)
    return AuctionOutcome(True, Contract(final_bid, doubling), declarer)
