"""The play of a board: Laws 41-67 as the sensors see them (laws.md sections 3, 4, 4.4).

``Play`` takes the tray events of the play period (``put``: a tag appears on a seat's tray,
``take``: it leaves it) and the director's rulings, keeps the tricks, and records every
irregularity in the board's ``IrregularityLog``. It never raises for a player's
irregularity. It is deterministic and cheap: the Table rebuilds it by re-applying events.

Readings this module follows where the sensors or the Laws leave a choice (documented
here because the Director's console and the tests rely on them):

* A card put by a seat that is not the leader to an empty trick (after trick 1) is a
  LEAD_OUT_OF_TURN when the seat is on the side that won the previous trick (the classic
  "wrong hand" lead, Laws 55/56), and a FIFTH_CARD (45E) when it is on the side that lost
  it. A ``lead`` ruling turns a fifth card into a lead out of turn, and so does a play to
  it by the next hand in rotation (a play that treats it as a lead, 53A).
* A lead out of turn is accepted by a play from the next hand in rotation (53A; under
  2017, only before trick 13) or an ``accept`` ruling; it is refused by a ``reject``
  ruling, by the offender taking it back, or by a card from the side due to lead.
  A defender's refused lead becomes a major penalty card (56); declarer's goes back.
* CARD_WITHDRAWN (Law 47): a played card taken back when the Laws do not allow it stays
  played: the trick is unchanged and play goes on; putting the card back resolves it.
* CARD_NOT_IN_HAND: the card does not count as played and ``frozen`` is true until the
  tag is taken away or the director clears the alert. Other events are still applied.
* A penalty card stays on its owner's tray; a ``put`` of it when its owner is due plays it
  (with inventory readers it is taken and put back; tap readers report the put alone).
* Failure to play a penalty card is PENALTY_CARD_NOT_PLAYED (52), not a REVOKE; it is
  accepted automatically once declarer plays from either hand after it (52B).
* Law 67B1 (2007 and 2017): the card the director adds to a defective trick leaves the
  trick's owner unchanged and the offender is deemed to have revoked: one trick per 64A2.
  The transfer is recorded on the DEFECTIVE_TRICK alert.
* A trick-12 revoke (law "62D") is corrected by default at the end of play: the
  offender's trick-12 and trick-13 cards are swapped and both tricks recomputed.
* ``declarer_tricks`` counts the declaring side's tricks (declarer's and dummy's).
* ``adjust`` and ``claim`` rulings are taken whether or not they name an alert. A claim
  establishes every revoke not yet corrected (2017 63A4, 2007 63A3); Law 64 then counts the
  claimed tricks.
* A director's ``clear`` is read from the shared log as well (the Table may apply it
  itself): a cleared revoke is not rectified (64B4/64B5 are given this way), a cleared
  CARD_NOT_IN_HAND unfreezes.
* Revoke correction (62A) and the retractions it allows (62C) reopen the last trick when
  nobody has led to the next one; otherwise the replacing card goes into the old trick.
* With unknown hands, a discard taken back is a revoke being corrected if a card of the
  suit led replaces it; otherwise the discard stays played (CARD_WITHDRAWN).
* 2017 57D: a defender's card at his RHO's turn waits; it is played when RHO has played,
  or becomes a major penalty card if it is then illegal. 2007 has no 57D: the card is a
  major penalty card (Laws 49/50).
* DEFECTIVE_TRICK while pending (67A): the next card of the seat that missed the trick
  goes into that trick. Once a player of each side has played on, it is 67B1 and waits
  for the director's ruling naming the card (any ruling kind carrying ``card``).
* Law 58 (with the events' timestamps): a defender's card read within
  ``SIMULTANEOUS_WINDOW`` before the proper play of the player due is deemed subsequent to
  it (58A), not premature; two cards from one hand within it are 58B (a defender's other
  card a penalty card per 50B, without Law 57's options; declarer's goes back).
* 54A: ``option`` (or ``accept``) with option ``54A`` swaps declarer and dummy; the Table
  tells the Auction, so every output names the new declarer.
* 2017 62C3/64B8: when both sides revoked on one trick and one revoke is established
  while the other is not, the established one is cited "62C3" and not rectified.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from .cards import FULL_DECK, Card, Contract, Rules, Seat, Suit
from .irregularities import Code, IrregularityLog, Status
from .record import PlayedTrick
from .rulings import Ruling, RulingKind

__all__ = ["Play", "PlayError", "trick_winner", "build_tricks"]

_LAST_TRICK = 13

#: Law 58: two cards whose sensor timestamps (the events' ``ts``) are this close were put
#: down at the same time. A defender's card read first but within this window of the
#: proper play of the player due is deemed subsequent to it (58A), not premature (57); a
#: second card from one hand within it of the first is a simultaneous play (58B). Apart
#: by more, the cards were put down one after the other.
SIMULTANEOUS_WINDOW = 0.25   # seconds
#: each seat, then the others clockwise (playing order from a leader)
_ROTATION: dict[Seat, tuple[Seat, ...]] = {s: tuple(s.rotated(i) for i in range(4)) for s in Seat}
# Seats read for every card, as module constants: on Python 3.11 reading a member off its
# enum class (``Seat.N``) costs several times the lookup of a global.
_NORTH: Final = Seat.N
_SOUTH: Final = Seat.S
_SEATS: Final = tuple(Seat)   # (iterating the enum class is a generator in Python)


class PlayError(ValueError):
    """A programming error in how the Play is driven (never a player's irregularity)."""


def trick_winner(cards: Iterable[tuple[Seat, Card]], trump: Suit | None) -> Seat:
    """The seat that wins a trick whose first card is the lead (Law 44E/F)."""
    it = iter(cards)
    try:
        best_seat, best = next(it)
    except StopIteration:
        raise PlayError("an empty trick has no winner") from None
    for seat, card in it:
        if card.suit is best.suit:
            if card.rank > best.rank:
                best_seat, best = seat, card
        elif card.suit is trump:
            best_seat, best = seat, card
    return best_seat


def build_tricks(
    plays: Iterable[tuple[Seat, Card]], opening_leader: Seat, trump: Suit | None,
) -> tuple[PlayedTrick, ...]:
    """Cards in playing order (as LIN and the feeds give them) into tricks, each led by the
    winner of the one before; the last may be incomplete (no winner)."""
    cards = list(plays)
    tricks: list[PlayedTrick] = []
    leader = opening_leader
    for start in range(0, len(cards), 4):
        trick = tuple(cards[start:start + 4])
        winner = trick_winner(trick, trump) if len(trick) == 4 else None
        tricks.append(PlayedTrick(len(tricks) + 1, leader, trick, winner))
        if winner is not None:
            leader = winner
    return tuple(tricks)


@dataclass(eq=False)
class _Trick:
    number: int
    leader: Seat
    cards: list[tuple[Seat, Card]] = field(default_factory=list)
    winner: Seat | None = None
    missing: Seat | None = None       # closed with three cards (defective, Law 67)

    def played_by(self, seat: Seat) -> Card | None:
        for s, c in self.cards:
            if s is seat:
                return c
        return None

    @property
    def suit_led(self) -> Suit | None:
        return self.cards[0][1].suit if self.cards else None


@dataclass(eq=False)
class _Revoke:
    item: int
    seat: Seat
    trick: int
    suit: Suit
    card: Card
    established: bool = False
    corrected: bool = False
    cleared: bool = False
    faced: bool = False          # 64B3: failure to play a faced card (dummy's or a penalty card)
    both_on_trick: bool = False  # 2017 62C3: the other side also revoked on this trick
    defective: bool = False      # 67B1: deemed revoke, always one trick per 64A2


@dataclass(eq=False)
class _Failure:
    """Unknown hands: a seat did not follow suit; a revoke if he later shows the suit."""

    seat: Seat
    trick: int
    suit: Suit
    card: Card
    detected: bool = False


@dataclass(frozen=True, slots=True)
class _Requirement:
    item: int
    kind: str          # "highest" | "lowest" | "must_lead" | "must_not_lead"
    suit: Suit | None
    trick: int         # highest/lowest: the trick it applies to


@dataclass(eq=False)
class _PendingLead:
    item: int
    seat: Seat
    card: Card
    expected: Seat     # the seat that should have led


@dataclass(eq=False)
class _Defective:
    item: int
    trick: _Trick
    missing: Seat
    stage: str = "67A"          # "67A" (pending), "67B1" (both sides played on), "done"


class Play:
    """The play period of one board (Laws 41-67).

    ``hands`` None means the hands are unknown: they are inferred from the cards played and
    a revoke is found when its offender later shows the suit he failed to follow.
    """

    def __init__(
        self,
        contract: Contract,
        declarer: Seat,
        log: IrregularityLog,
        *,
        rules: Rules = Rules.L2017,
        hands: Mapping[Seat, frozenset[Card]] | None = None,
        penalty_cards: Mapping[Seat, frozenset[Card]] | None = None,
        first_trick: int = 1,
    ) -> None:
        if contract.bid is None:
            raise PlayError("a passed-out board has no play")
        if not 1 <= first_trick <= _LAST_TRICK:
            raise PlayError(f"first_trick must be 1..13, not {first_trick}")
        self.contract = contract
        self.trump: Suit | None = contract.bid.denomination.trump
        self.declarer = declarer
        self.dummy = declarer.partner
        self.opening_leader = declarer.lho
        self.rules = rules
        self.first_trick = first_trick
        self._log = log
        self._owned: set[int] = set()
        self._hands_known = hands is not None
        self._initial: dict[Seat, frozenset[Card]] = (
            {s: frozenset(hands.get(s, frozenset())) for s in _SEATS} if hands is not None else {}
        )
        self._remaining: dict[Seat, set[Card]] = {s: set(self._initial.get(s, ())) for s in _SEATS}
        self._seen: dict[Seat, set[Card]] = {s: set() for s in _SEATS}
        self._owner: dict[Card, Seat] = {}
        self._played: set[Card] = set()            # read with unknown hands only
        self._tray: dict[Seat, set[Card]] = {s: set() for s in _SEATS}
        # penalty cards: card -> (major, id of the irregularity that made it, or None)
        self._penalty: dict[Seat, dict[Card, tuple[bool, int | None]]] = {s: {} for s in _SEATS}
        self._stray: dict[Seat, dict[Card, int | None]] = {s: {} for s in _SEATS}
        self._withdrawn: dict[Seat, dict[Card, int]] = {s: {} for s in _SEATS}
        self._frozen: set[int] = set()
        self._tricks: list[_Trick] = [_Trick(first_trick, self.opening_leader)]
        # What the tricks add up to, kept as they grow so that no event pays for a loop over
        # the board's tricks: cards in the tricks, completed tricks won by each side, and
        # the (seat, card) pairs of completed tricks. A card added or a trick closed in play
        # updates them (``_play``, ``_tally_close``); any other change to the tricks
        # (a correction, a reopened trick, 62A/67 repairs) marks them stale (``_stale``)
        # and the next read counts them again (``_recount``).
        self._tally_ok = True
        self._n_cards = 0
        self._won_ns = 0
        self._won_ew = 0
        self._quit: set[tuple[Seat, Card]] = set()
        self._revokes: list[_Revoke] = []
        self._failures: list[_Failure] = []
        self._requirements: dict[Seat, _Requirement] = {}
        self._opening_lot: _PendingLead | None = None
        self._lot: _PendingLead | None = None
        self._fifth: _PendingLead | None = None          # a fifth card that may become a lead
        # 45E: a defender's card when the other side is on lead, awaiting the director's
        # choice (penalty card 45E1, or a lead); True once the proper lead followed
        self._fifth_wait: dict[int, tuple[_PendingLead, bool]] = {}
        # 57A alerts awaiting declarer's option: irregularity -> (offender, trick). The
        # option is about partner's play to that trick: once he has played, it has lapsed
        self._premature_open: dict[int, tuple[Seat, int]] = {}
        self._queued: tuple[int, Seat, Card, _Trick] | None = None  # 2017 57D
        self._queued_ts: float | None = None
        self._pcnp: dict[int, tuple[Seat, Card, Card, _Trick]] = {}
        self._penalty_source: dict[int, Seat] = {}      # irregularity -> offender (for options)
        self._correcting: dict[Seat, _Revoke] = {}
        self._pending_correction: dict[Seat, tuple[_Trick, Card]] = {}  # unknown hands
        self._defective: list[_Defective] = []
        self._complete = False
        self._claim: tuple[int, int] | None = None
        self._adjusted: int | None = None
        # Law 58 (sensor timestamps): the event being applied, each seat's last card put,
        # and a premature play that the next proper play may show was simultaneous
        self._ts: float | None = None
        self._last_put: dict[Seat, tuple[float, Card]] = {}
        self._last_seat: Seat | None = None      # whose card was put last (counted or not)
        self._simul: tuple[int, Seat, Card, float, Seat] | None = None
        self._corrected_winners: dict[int, Seat] = {}
        self._transfer = 0               # tricks to declarer's side (negative: taken away)
        for seat, cards in (penalty_cards or {}).items():
            major = len(cards) > 1 or any(c.rank.is_honour for c in cards)
            for card in cards:
                self._penalty[seat][card] = (major, None)
                self._tray[seat].add(card)
                self._see(seat, card)

    # ------------------------------------------------------------------ queries
    @property
    def turn(self) -> Seat | None:
        """Whose card is due (dummy's seat when dummy is due); None when play is over."""
        if self._complete:
            return None
        return self._due(self._tricks[-1])

    @property
    def lead_faced(self) -> bool:
        first = self._tricks[0]
        return len(first.cards) >= 2 or len(self._tricks) > 1 or self._complete

    @property
    def tricks(self) -> tuple[PlayedTrick, ...]:
        return tuple(
            PlayedTrick(t.number, t.leader, tuple(t.cards), t.winner)
            for t in self._tricks if t.cards or t.winner is not None
        )

    @property
    def tricks_won(self) -> tuple[int, int]:
        """Completed tricks as played, (NS, EW); kept as play goes, not counted again."""
        if not self._tally_ok:
            self._recount()
        return self._won_ns, self._won_ew

    def quitted(self, seat: Seat, card: Card) -> bool:
        """Whether ``seat`` played ``card`` to a trick that is complete (Law 65)."""
        if not self._tally_ok:
            self._recount()
        return (seat, card) in self._quit

    def _recount(self) -> None:
        """The tallies counted from the tricks themselves (after a change other than a
        card added or a trick closed in play)."""
        n = ns = ew = 0
        quit: set[tuple[Seat, Card]] = set()
        for t in self._tricks:
            n += len(t.cards)
            if t.winner is not None:
                if t.winner is _NORTH or t.winner is _SOUTH:
                    ns += 1
                else:
                    ew += 1
                quit.update(t.cards)
        self._n_cards, self._won_ns, self._won_ew, self._quit = n, ns, ew, quit
        self._tally_ok = True

    def _stale(self) -> None:
        self._tally_ok = False

    def _tally_close(self, trick: _Trick, had_winner: bool) -> None:
        """``trick`` was just given its winner."""
        winner = trick.winner
        if had_winner or not self._tally_ok or winner is None:
            self._tally_ok = False
            return
        if winner is _NORTH or winner is _SOUTH:
            self._won_ns += 1
        else:
            self._won_ew += 1
        self._quit.update(trick.cards)

    @property
    def current_trick(self) -> PlayedTrick | None:
        """The trick in progress (cards played so far), or None between tricks."""
        t = self._tricks[-1] if self._tricks else None
        if t is None or t.winner is not None or not t.cards:
            return None
        return PlayedTrick(t.number, t.leader, tuple(t.cards), None)

    @property
    def current_cards(self) -> tuple[tuple[Seat, Card], ...]:
        """``current_trick.cards`` (empty between tricks), without making the trick."""
        t = self._tricks[-1] if self._tricks else None
        if t is None or t.winner is not None or not t.cards:
            return ()
        return tuple(t.cards)

    @property
    def trick_number(self) -> int:
        """The number of the latest trick with a card in it (0 before the opening lead)."""
        for t in reversed(self._tricks):
            if t.cards or t.winner is not None:
                return t.number
        return 0

    @property
    def card_count(self) -> int:
        """How many cards lie in the tricks (kept as play goes)."""
        if not self._tally_ok:
            self._recount()
        return self._n_cards

    def last_cards(self, count: int) -> list[tuple[Seat, Card, int]]:
        """The last ``count`` cards played, oldest first, each with its trick number."""
        out: list[tuple[Seat, Card, int]] = []
        if count <= 0:
            if count == 0:
                return out
            count = sum(len(t.cards) for t in self._tricks)   # (less than none: all)
        for t in reversed(self._tricks):
            cards = t.cards
            need = count - len(out)
            if len(cards) >= need:   # the last trick needed (the current one, nearly always)
                number = t.number
                out[:0] = [(seat, card, number) for seat, card in cards[len(cards) - need:]]
                return out
            if cards:
                number = t.number
                out[:0] = [(seat, card, number) for seat, card in cards]
        return out

    @property
    def complete(self) -> bool:
        return self._complete

    @property
    def frozen(self) -> bool:
        """A card not in its seat's hand is on the tray: play waits for the director."""
        for item in self._frozen:
            got = self._log.get(item)
            if got is not None and got.status is Status.OPEN:
                return True
        return False

    @property
    def hands_returned(self) -> bool:
        return self._complete and not any(self._tray.values())

    def _declarer_won(self) -> int:
        """Completed tricks won by declarer's side, as played."""
        ns, ew = self.tricks_won
        return ns if self.declarer is Seat.N or self.declarer is Seat.S else ew

    @property
    def declarer_tricks_played(self) -> int:
        return self._declarer_won() + (self._claim[0] if self._claim else 0)

    @property
    def declarer_tricks(self) -> int:
        if self._adjusted is not None:
            return self._adjusted
        if not self._revokes:
            # no revoke: no Law 64 transfer and no 62D correction (``_law64`` would give 0
            # and no corrected winner), so the tricks as played and claimed
            won = self._declarer_won() + (self._claim[0] if self._claim else 0)
            return max(0, min(_LAST_TRICK, won + self._transfer))
        transfer, corrected = self._transfer, self._corrected_winners
        if self._complete:
            # recomputed: the Table may have cleared a revoke without telling us
            transfer, corrected, _ = self._law64()
        won = sum(
            1 for t in self._tricks
            if t.winner is not None
            and corrected.get(t.number, t.winner).side is self.declarer.side
        )
        won += self._claim[0] if self._claim else 0
        return max(0, min(_LAST_TRICK, won + transfer))

    @property
    def tricks_transferred(self) -> int:
        """Tricks Law 64 (and 67B1) moved to declarer's side; negative when taken from it."""
        if self._complete:
            return self._law64()[0]
        return self._transfer

    @property
    def corrected_tricks(self) -> tuple[PlayedTrick, ...]:
        """The tricks after the default 62D correction (the same as ``tricks`` without one)."""
        out: list[PlayedTrick] = []
        swap = self._swap_62d()
        for t in self._tricks:
            if not t.cards and t.winner is None:
                continue
            if swap is not None and t.number in (12, 13):
                out.append(swap[t.number - 12])
            else:
                out.append(PlayedTrick(t.number, t.leader, tuple(t.cards), t.winner))
        return tuple(out)

    @property
    def penalty_cards(self) -> dict[Seat, frozenset[Card]]:
        return {s: frozenset(p) for s, p in self._penalty.items() if p}

    def is_major_penalty_card(self, seat: Seat, card: Card) -> bool:
        entry = self._penalty[seat].get(card)
        return entry is not None and entry[0]

    @property
    def requirements(self) -> dict[Seat, tuple[str, Suit | None]]:
        """Declarer's options in force (57A, 50D2): seat -> (kind, suit)."""
        return {s: (r.kind, r.suit) for s, r in self._requirements.items()}

    @property
    def known_hands(self) -> dict[Seat, frozenset[Card]]:
        """Full 13-card hands as known (``hands``) or inferred from the cards seen so far."""
        if self._hands_known:
            return dict(self._initial)
        full = {s: frozenset(c) for s, c in self._seen.items() if len(c) == 13}
        if len(full) == 3:
            (rest,) = [s for s in Seat if s not in full]
            seen: set[Card] = set().union(*full.values())
            full[rest] = frozenset(c for c in FULL_DECK if c not in seen)
        return full

    def remaining(self, seat: Seat) -> frozenset[Card]:
        """Cards the seat still holds (hands known), penalty cards included."""
        return frozenset(self._remaining[seat])

    def legal_cards(self, seat: Seat) -> frozenset[Card]:
        """The cards the seat may play now by Law 44 and any option in force (hands known)."""
        cur = self._cur
        return frozenset(self._allowed(seat, cur))

    # ------------------------------------------------------------------ inputs
    def put(self, seat: Seat, card: Card, *, ts: float | None = None) -> None:
        """A tag appears on ``seat``'s tray during play (``ts``: when the reader saw it)."""
        simul = self._simul
        if simul is not None:
            self._simul = None
            if ts is not None and seat is simul[4] and seat is self.turn \
                    and abs(ts - simul[3]) <= SIMULTANEOUS_WINDOW:
                self.put(seat, card, ts=ts)   # (no simultaneous play pending now)
                if self._trick_of(seat, card) is not None:   # the proper play counted
                    self._deemed_subsequent(simul)
                return
        self._ts = ts
        if self._complete:
            self._tray[seat].add(card)        # spread for a review or a claim: nothing to do
            return
        # (emptiness tests first: hashing a Card is the hot spot of a benchmark)
        tray = self._tray[seat]
        withdrawn = self._withdrawn[seat]
        if withdrawn and card in withdrawn:
            item = withdrawn.pop(card)
            tray.add(card)
            self._log.update(item, status=Status.RESOLVED, detail="replaced")
            return
        penalties = self._penalty[seat]
        # Every way on from here lays the card on the tray, and nothing before its laying
        # reads the tray: laid now, the set's size tells whether it lay there (one hash of
        # the card, not two)
        size = len(tray)
        tray.add(card)
        if len(tray) == size:
            if self.turn is seat:
                # tap reader: a card left on the tray is played now
                if penalties and card in penalties:
                    self._put_card(seat, card)
                elif self._release_stray(seat, card):
                    self._put_card(seat, card)
            return                            # a re-read of a tag already there
        if penalties and card in penalties and self.turn is not seat:
            return                            # the penalty card laid face up again
        if not (card in self._remaining[seat] if self._hands_known
                else self._holds(seat, card)):
            item = self._open(Code.CARD_NOT_IN_HAND, seat=seat, trick=self._tricks[-1].number,
                              card=card, detail="freeze")
            self._stray[seat][card] = item
            self._frozen.add(item)
            return
        # (_simultaneous_second is False unless the seat's own card was the last one put)
        if ts is not None and self._last_seat is seat \
                and self._simultaneous_second(seat, card, ts):
            return
        if not self._hands_known:
            self._see(seat, card)
            if seat not in self._pending_correction:
                self._detect_shown(seat, card)
        self._put_card(seat, card)
        self._last_seat = seat
        if ts is not None:
            self._last_put[seat] = (ts, card)

    # ------------------------------------------------------------------ Law 58
    def _simultaneous_second(self, seat: Seat, card: Card, ts: float) -> bool:
        """58B: a second card from the same hand within the window of its card just
        played: the first read is the card played (the one he designates; a ruling may
        say otherwise); a defender's other card is a penalty card, minor or major per 50B
        (a single card below honour rank exposed inadvertently is minor), with none of
        Law 57's options; declarer's or dummy's goes back to the hand."""
        last = self._last_put.get(seat)
        if last is None or abs(ts - last[0]) > SIMULTANEOUS_WINDOW \
                or self._last_seat is not seat:
            return False          # not his two cards in a row: other cards came between
        trick = self._trick_of(seat, last[1])
        if trick is None or trick.winner is seat:
            return False          # his card was not played, or he won the trick and leads
        self._tray[seat].add(card)
        if not self._hands_known:
            self._see(seat, card)
        if self._is_defender(seat):
            major = card.rank.is_honour or bool(self._penalty[seat])
            penalty = "major" if major else "minor"
            item = self._open(Code.EXTRA_CARD_SAME_TRICK, law="58B", seat=seat,
                              trick=trick.number, card=card, status=Status.RESOLVED,
                              detail=f"{penalty}_penalty_card", simultaneous=True,
                              played=str(last[1]))
            # a penalty card without declarer's Law 57 options (not in _penalty_source)
            self._penalty[seat][card] = (major, None)
        else:
            item = self._open(Code.EXTRA_CARD_SAME_TRICK, law="58B", seat=seat,
                              trick=trick.number, card=card, status=Status.RESOLVED,
                              detail="returned", simultaneous=True, played=str(last[1]))
            self._stray[seat][card] = item
        return True

    def _deemed_subsequent(self, simul: tuple[int, Seat, Card, float, Seat]) -> None:
        """58A: the defender's card read just before the proper play of the player due
        (within the window) was simultaneous with it: it is deemed subsequent to it, not a
        premature play. The penalty card is lifted and the card is played in its place in
        the order (it may be the next proper play, or out of turn as the Laws then say)."""
        item, seat, card, ts, _ = simul
        self._penalty[seat].pop(card, None)
        self._penalty_source.pop(item, None)
        for other, req in list(self._requirements.items()):
            if req.item == item:
                del self._requirements[other]
        self._log.update(item, status=Status.RESOLVED, detail="simultaneous", law="58A")
        if not self._complete and card in self._tray[seat]:
            self._ts = ts
            self._put_card(seat, card)
            self._last_put[seat] = (ts, card)
            self._last_seat = seat

    def _release_stray(self, seat: Seat, card: Card) -> bool:
        """A returned card (fifth card, extra card) still on the tray is played in turn."""
        strays = self._stray[seat]
        if not strays or card not in strays or not self._holds(seat, card):
            return False
        item = strays.pop(card)
        if item is not None:
            self._fifth_wait.pop(item, None)   # played in turn: nothing left to choose
            got = self._log.get(item)
            if got is not None and got.status is Status.OPEN:
                self._log.update(item, status=Status.RESOLVED, detail="returned")
        if self._fifth is not None and self._fifth.card == card:
            self._fifth = None
        return True

    def take(self, seat: Seat, card: Card) -> None:
        """A tag leaves ``seat``'s tray: a withdrawal, or after play the hand going home."""
        if card not in self._tray[seat]:
            return                            # never seen on this tray: nothing to undo
        self._tray[seat].discard(card)
        if self._complete:
            return
        if card in self._stray[seat]:
            item = self._stray[seat].pop(card)
            if item is not None and item in self._fifth_wait:
                # back in the hand: no longer a lead anyone can play to (53A), but the
                # director's choice (45E) still stands open
                if self._fifth is not None and self._fifth.item == item:
                    self._fifth = None
                return
            if item is not None:
                self._frozen.discard(item)
                self._log.update(item, status=Status.RESOLVED, detail=self._returned(item))
            if self._fifth is not None and self._fifth.card == card and self._fifth.seat is seat:
                self._fifth = None
            return
        if self._queued is not None and self._queued[1] is seat and self._queued[2] == card:
            item = self._queued[0]
            self._queued = None
            self._make_penalty(seat, card, major=True, item=item)
            self._log.update(item, detail="penalty_card", law="57A", status=Status.RESOLVED)
            return
        if card in self._penalty[seat]:
            return                            # lifted to be played
        trick = self._trick_of(seat, card)
        if trick is None:
            return
        self._withdraw(seat, card, trick)

    def rule(self, ruling: Ruling) -> bool:
        kind = ruling.kind
        # adjust and claim concern the whole play, whichever alert (if any) they answer;
        # a trick count out of range is refused (False), never raised: it comes from a console
        if kind is RulingKind.ADJUST:
            if ruling.tricks is None or not 0 <= ruling.tricks <= _LAST_TRICK:
                return False
            self._adjusted = ruling.tricks
            return True
        if kind is RulingKind.CLAIM:
            return self._do_claim(ruling.tricks)
        if ruling.alert is None or ruling.alert not in self._owned:
            return False
        item = self._log.get(ruling.alert)
        if item is None:
            return False
        code = item.code
        if kind is RulingKind.CLEAR:
            self._clear(ruling.alert)
            return True
        if code is Code.OPENING_LEAD_OUT_OF_TURN and self._opening_lot is not None \
                and self._opening_lot.item == ruling.alert:
            # 54A: declarer spreads his hand, as ``option`` "54A" (the documented form) or
            # as ``accept`` with that option
            swap = ruling.option in ("swap", "54A")
            if kind is RulingKind.ACCEPT or (kind is RulingKind.OPTION and swap):
                self._accept_opening_lead(swap=swap, law="54A" if swap else "54B")
                return True
            if kind is RulingKind.REJECT:
                self._refuse_opening_lead()
                return True
        lot = self._lot
        if code is Code.LEAD_OUT_OF_TURN and lot is not None and lot.item == ruling.alert:
            if kind is RulingKind.ACCEPT:
                self._accept_lead(law="53A")
                return True
            if kind is RulingKind.REJECT:
                self._refuse_lead()
                return True
        if ruling.alert in self._fifth_wait and kind in (RulingKind.LEAD, RulingKind.OPTION):
            return self._fifth_choice(ruling.alert, "lead" if kind is RulingKind.LEAD
                                      else ruling.option or "")
        if code is Code.FIFTH_CARD and kind is RulingKind.LEAD and self._fifth is not None \
                and self._fifth.item == ruling.alert:
            self._fifth_to_lead(accepted=False)
            return True
        if code is Code.PENALTY_CARD_NOT_PLAYED and ruling.alert in self._pcnp:
            if kind is RulingKind.ACCEPT:
                del self._pcnp[ruling.alert]
                self._log.update(ruling.alert, status=Status.RESOLVED, detail="accepted",
                                 law="52B")
                return True
            if kind is RulingKind.REJECT:
                self._pcnp_reject(ruling.alert)
                return True
        if kind is RulingKind.OPTION and ruling.alert in self._penalty_source:
            return self._option(ruling)
        if code is Code.DEFECTIVE_TRICK and ruling.card is not None:
            return self._defective_add(ruling.alert, ruling.seat, ruling.card)
        return False

    # ------------------------------------------------------------------ helpers: state
    @property
    def _cur(self) -> _Trick:
        return self._tricks[-1]

    def _due(self, trick: _Trick) -> Seat:
        cards = trick.cards
        n = len(cards)
        if n < 4:
            # the common case, first: the cards so far came in rotation from the leader
            rotation = _ROTATION[trick.leader]
            i = 0
            while i < n and cards[i][0] is rotation[i]:
                i += 1
            if i == n:
                return rotation[n]
        played = [s for s, _ in cards]
        for seat in _ROTATION[trick.leader]:
            if seat not in played:
                return seat
        return trick.leader  # a full trick is never current

    def _open(self, code: Code, **kwargs: object) -> int:
        item = self._log.open(code, **kwargs)  # type: ignore[arg-type]
        self._owned.add(item.id)
        return item.id

    def _is_defender(self, seat: Seat) -> bool:
        return seat.side is not self.declarer.side

    def _see(self, seat: Seat, card: Card) -> None:
        self._seen[seat].add(card)
        self._owner.setdefault(card, seat)

    def _holds(self, seat: Seat, card: Card) -> bool:
        if self._hands_known:
            return card in self._remaining[seat]
        if card in self._played:
            return False
        owner = self._owner.get(card)
        if owner is not None:
            return owner is seat
        return len(self._seen[seat]) < 13

    def _has_suit(self, seat: Seat, suit: Suit, *, besides: Card | None = None) -> bool:
        """Whether the seat holds a card of the suit (hands known; penalty cards count)."""
        for c in self._remaining[seat]:
            if c.suit is suit and c != besides:
                return True
        return False

    def _trick_of(self, seat: Seat, card: Card) -> _Trick | None:
        for t in reversed(self._tricks):
            if t.played_by(seat) == card:
                return t
        return None

    def _make_penalty(self, seat: Seat, card: Card, *, major: bool, item: int | None) -> None:
        self._penalty[seat][card] = (major, item)
        if item is not None:
            self._penalty_source[item] = seat

    def _returned(self, item: int) -> str:
        got = self._log.get(item)
        if got is not None and got.code is Code.CARD_NOT_IN_HAND:
            return "removed"
        return "returned"

    # ------------------------------------------------------------------ helpers: legality
    def _allowed(self, seat: Seat, trick: _Trick) -> set[Card]:
        """Cards the seat may play to ``trick`` by Law 44 and options in force (hands known)."""
        hand = self._remaining[seat]
        suit_led = trick.suit_led if trick.cards and trick.cards[0][0] is not seat else None
        cards = set(hand)
        if suit_led is not None:
            same = {c for c in hand if c.suit is suit_led}
            if same:
                cards = same
        req = self._requirements.get(seat)
        if req is not None:
            cards = self._apply_requirement(req, cards, suit_led, trick)
        return cards

    def _apply_requirement(self, req: _Requirement, cards: set[Card], suit_led: Suit | None,
                           trick: _Trick) -> set[Card]:
        if req.kind in ("highest", "lowest"):
            if req.trick != trick.number or suit_led is None:
                return cards
            same = [c for c in cards if c.suit is suit_led]
            if not same:
                return cards
            return {max(same) if req.kind == "highest" else min(same)}
        if req.suit is None:
            return cards
        if suit_led is not None and any(c.suit is suit_led for c in cards):
            return cards                      # following suit overrides (44C)
        if req.kind == "must_lead":
            sub = {c for c in cards if c.suit is req.suit}
        else:
            sub = {c for c in cards if c.suit is not req.suit}
        return sub or cards

    # ------------------------------------------------------------------ put routing
    def _put_card(self, seat: Seat, card: Card) -> None:
        # (each test of a collection's emptiness first: they are empty nearly always)
        if self._correcting and seat in self._correcting:
            self._finish_correction(seat, card)
            return
        if self._pending_correction and seat in self._pending_correction:
            self._finish_unknown_correction(seat, card)
            return
        for d in self._defective:
            if d.stage == "67A" and d.missing is seat and d.trick.played_by(seat) is None:
                self._defective_add(d.item, seat, card, by_player=True)
                return
        cur = self._tricks[-1]
        fifth = self._fifth
        if fifth is not None and not cur.cards and seat is fifth.seat.lho \
                and seat is not cur.leader:
            self._fifth_to_lead(accepted=True)
            self._follow(seat, card)
            return
        self._fifth = None
        if self._fifth_wait and not cur.cards and seat is cur.leader:
            # the proper lead follows a defender's card awaiting the director: if he
            # deems that card led, 2017 53B (it may be withdrawn) / 2007 53C (withdrawn)
            for item, (waiting, followed) in list(self._fifth_wait.items()):
                if not followed:
                    self._fifth_wait[item] = (waiting, True)
                    self._log.update(item, choices="penalty_card,withdraw",
                                     proper_lead=True)
        if self._opening_lot is not None:
            self._opening_lead_reply(seat, card)
            return
        if self._lot is not None:
            lot = self._lot
            if seat is lot.seat.lho and not (self.rules is Rules.L2017
                                             and cur.number == _LAST_TRICK):
                self._accept_lead(law="53A")
                self._follow(seat, card)
                return
            if len(cur.cards) == 1 and seat is lot.expected \
                    and seat.side is not lot.seat.side and self._is_defender(lot.seat):
                self._proper_lead_follows(seat, card)
                return
            if len(cur.cards) == 1 and (seat is lot.expected or (
                    seat.side is lot.expected.side and not self._is_defender(seat)
                    and seat is not lot.seat)):
                self._refuse_lead()
                self._lead(seat, card)
                return
        if not cur.cards:
            self._lead(seat, card)
        else:
            self._follow(seat, card)

    def _lead(self, seat: Seat, card: Card) -> None:
        cur = self._tricks[-1]
        expected = cur.leader
        if seat is expected:
            self._play(seat, card, cur)
            return
        opening = cur.number == self.first_trick and len(self._tricks) == 1
        if opening:
            if self._is_defender(seat):
                item = self._open(Code.OPENING_LEAD_OUT_OF_TURN, law="54", seat=seat,
                                  trick=cur.number, card=card, expected=str(expected))
                self._opening_lot = _PendingLead(item, seat, card, expected)
                cur.leader = seat
                self._play(seat, card, cur, check=False)
            else:
                # declaring side "leads" before the opening lead: the card goes back, no
                # rectification (2017 54E -> Law 24 for the declaring side; 2007 Law 48)
                law = "54E" if self.rules is Rules.L2017 else "48"
                item = self._open(Code.OPENING_LEAD_OUT_OF_TURN, law=law, seat=seat,
                                  trick=cur.number, card=card, detail="declaring_side",
                                  expected=str(expected))
                self._stray[seat][card] = item
            return
        if seat.side is expected.side:
            item = self._open(Code.LEAD_OUT_OF_TURN, law="53", seat=seat, trick=cur.number,
                              card=card, expected=str(expected))
            self._lot = _PendingLead(item, seat, card, expected)
            cur.leader = seat
            self._play(seat, card, cur, check=False)
            return
        # a card from the side that lost the last trick before its winner leads: 45E
        if self._is_defender(seat):
            # 45E1: a penalty card, unless the director deems it led (53, 56): his choice,
            # so the card waits on the tray, neither played nor a penalty card yet
            item = self._open(Code.FIFTH_CARD, law="45E", seat=seat, trick=cur.number - 1,
                              card=card, detail="director_choice", major=card.rank.is_honour,
                              choices="penalty_card,lead")
            self._stray[seat][card] = item
            self._fifth_wait[item] = (_PendingLead(item, seat, card, expected), False)
        else:
            item = self._open(Code.FIFTH_CARD, law="45E2", seat=seat, trick=cur.number - 1,
                              card=card, detail="returned")
            self._stray[seat][card] = item
        self._fifth = _PendingLead(item, seat, card, expected)

    def _follow(self, seat: Seat, card: Card) -> None:
        cur = self._tricks[-1]
        due = self._due(cur)
        if seat is due:   # (the seat due has not played to the trick: the common case)
            self._play(seat, card, cur)
            return
        if cur.played_by(seat) is not None:
            self._second_card(seat, card, cur)
            return
        # out of turn, to a trick already led
        if not self._is_defender(seat):
            item = self._open(Code.PREMATURE_PLAY, law="57C3" if self.rules is Rules.L2017
                              else "57C2", seat=seat, trick=cur.number, card=card,
                              detail="declarer", status=Status.RESOLVED)
            del item
            self._play(seat, card, cur)
            return
        partner = seat.partner
        if cur.played_by(partner) is None:
            self._premature(seat, card, cur)
            return
        # partner has played: a defender playing at his RHO's turn
        if self.rules is Rules.L2017 and due is seat.rho:
            item = self._open(Code.PREMATURE_PLAY, law="57D", seat=seat, trick=cur.number,
                              card=card, detail="57D")
            self._queued = (item, seat, card, cur)
            self._queued_ts = self._ts
            return
        major = True
        item = self._open(Code.PREMATURE_PLAY, law="57A" if self.rules is Rules.L2017 else "49",
                          seat=seat, trick=cur.number, card=card, detail="penalty_card",
                          status=Status.RESOLVED)
        self._make_penalty(seat, card, major=major, item=item)
        if self._ts is not None:
            self._simul = (item, seat, card, self._ts, due)

    def _premature(self, seat: Seat, card: Card, cur: _Trick, *, lead: bool = False) -> None:
        """A defender's card before his partner has played to ``cur``; ``lead``: it is a
        lead to the next trick (57A: always a penalty card, 57C1 is about plays)."""
        both = cur.played_by(self.declarer) is not None and cur.played_by(self.dummy) is not None
        if both and not lead:
            self._open(Code.PREMATURE_PLAY, law="57C1",
                       seat=seat, trick=cur.number, card=card, detail="no_rectification",
                       status=Status.RESOLVED)
            self._play(seat, card, cur)
            return
        item = self._open(Code.PREMATURE_PLAY, law="57A", seat=seat, trick=cur.number, card=card,
                          detail="penalty_card")
        self._make_penalty(seat, card, major=True, item=item)
        self._premature_open[item] = (seat, cur.number)
        if not lead and self._ts is not None:
            self._simul = (item, seat, card, self._ts, self._due(cur))

    def _second_card(self, seat: Seat, card: Card, cur: _Trick) -> None:
        # the winner of a three-card trick leading: the trick is defective (67)
        if len(cur.cards) == 3 and trick_winner(cur.cards, self.trump) is seat \
                and cur.number < _LAST_TRICK:
            missing = self._due(cur)
            cur.winner = seat
            self._stale()
            cur.missing = missing
            item = self._open(Code.DEFECTIVE_TRICK, law="67A", seat=missing, trick=cur.number,
                              detail="67A")
            self._defective.append(_Defective(item, cur, missing))
            nxt = _Trick(cur.number + 1, seat)
            self._tricks.append(nxt)
            self._play(seat, card, nxt)
            return
        if self._is_defender(seat) and cur.played_by(seat.partner) is None:
            self._premature(seat, card, cur, lead=True)   # a lead before partner played
            return
        item = self._open(Code.EXTRA_CARD_SAME_TRICK, law="58B", seat=seat, trick=cur.number,
                          card=card)
        self._stray[seat][card] = item

    # ------------------------------------------------------------------ playing a card
    def _play(self, seat: Seat, card: Card, trick: _Trick, *, check: bool = True) -> None:
        """``card`` from ``seat`` counts as played to ``trick``."""
        cards = trick.cards
        suit_led = cards[0][1].suit if cards else None    # (trick.suit_led)
        penalties = self._penalty[seat]
        # (_check_obligations has nothing to do without one of these: the common case)
        if check and (self._pcnp or penalties or self._requirements
                      or (suit_led is not None and card.suit is not suit_led)):
            self._check_obligations(seat, card, trick, suit_led)
        cards.append((seat, card))
        # the tallies (see __init__)
        if trick.winner is not None:
            self._tally_ok = False      # a card into a closed trick: counted again
        elif self._tally_ok:
            self._n_cards += 1
        self._remaining[seat].discard(card)
        if not self._hands_known:
            self._played.add(card)
        if penalties and card in penalties:
            major, item = penalties.pop(card)
            if item is not None and item in self._penalty_source:
                self._maybe_discharged(item)
        # (_after_play has nothing to do without one of these: the common case)
        if self._premature_open or self._revokes or self._defective \
                or self._queued is not None:
            self._after_play(seat, trick)
        if len(trick.cards) == 4 and trick is self._tricks[-1]:
            self._close(trick)

    def _check_obligations(self, seat: Seat, card: Card, trick: _Trick,
                           suit_led: Suit | None) -> None:
        # accepting a penalty card not played: declarer's play after it (52B)
        if self._pcnp and not self._is_defender(seat):
            for item in list(self._pcnp):
                del self._pcnp[item]
                self._log.update(item, status=Status.RESOLVED, detail="accepted", law="52B")
        penalties = self._penalty[seat]
        if penalties and card not in penalties:
            missed = self._missed_penalty(seat, card, suit_led)
            if missed is not None:
                item = self._open(Code.PENALTY_CARD_NOT_PLAYED,
                                  law="50D" if penalties[missed][0] else "50C", seat=seat,
                                  trick=trick.number, card=card, penalty_card=str(missed))
                self._pcnp[item] = (seat, card, missed, trick)
        req = self._requirements.get(seat)
        if req is not None and req.kind in ("highest", "lowest") and req.trick != trick.number:
            del self._requirements[seat]      # the trick it was chosen for is over
            req = None
        if req is not None:
            del self._requirements[seat]
            if self._hands_known:
                allowed = self._allowed_with(seat, trick, req)
                if card not in allowed:
                    self._new_revoke(seat, trick, req.suit or suit_led or card.suit, card,
                                     detail="61A")
                    return
        if suit_led is not None and card.suit is not suit_led:
            if self._hands_known:
                if self._has_suit(seat, suit_led, besides=card):
                    self._new_revoke(seat, trick, suit_led, card)
            else:
                self._failures.append(_Failure(seat, trick.number, suit_led, card))

    def _allowed_with(self, seat: Seat, trick: _Trick, req: _Requirement) -> set[Card]:
        hand = self._remaining[seat]
        suit_led = trick.suit_led
        cards = set(hand)
        if suit_led is not None:
            same = {c for c in hand if c.suit is suit_led}
            if same:
                cards = same
        return self._apply_requirement(req, cards, suit_led, trick)

    def _missed_penalty(self, seat: Seat, card: Card, suit_led: Suit | None) -> Card | None:
        """The penalty card the seat had to play instead of ``card`` (50C/50D), if any."""
        for pc, (major, _) in sorted(self._penalty[seat].items()):
            legal = (suit_led is None or pc.suit is suit_led
                     or (self._hands_known and not self._has_suit(seat, suit_led)))
            if not legal:
                continue
            if major:
                return pc
            # minor: no other card of its suit below an honour (50C)
            if card.suit is pc.suit and not card.rank.is_honour:
                return pc
        return None

    def _maybe_discharged(self, item: int) -> None:
        seat = self._penalty_source.get(item)
        if seat is None:
            return
        if not any(i == item for _, i in self._penalty[seat].values()):
            self._penalty_source.pop(item, None)

    def _new_revoke(self, seat: Seat, trick: _Trick, suit: Suit, card: Card, *,
                    detail: str = "") -> _Revoke:
        faced = seat is self.dummy or (
            self._hands_known
            and all(c in self._penalty[seat] for c in self._remaining[seat]
                    if c.suit is suit and c != card)
        )
        item = self._open(Code.REVOKE, law="61A" if detail == "61A" else "61", seat=seat,
                          trick=trick.number, card=card, detail=detail, suit=str(suit))
        r = _Revoke(item, seat, trick.number, suit, card, faced=faced)
        self._revokes.append(r)
        return r

    def _after_play(self, seat: Seat, trick: _Trick) -> None:
        if self._premature_open:
            self._premature_lapsed(seat, trick)
        # revokes become established by a play of the offender or partner to a later trick
        for r in self._revokes:
            if r.established or r.corrected or self._is_cleared(r) or r.defective:
                continue
            if trick.number > r.trick and (seat is r.seat or seat is r.seat.partner):
                self._establish(r)
        # a defective trick goes from 67A to 67B once both sides have played on
        for d in self._defective:
            if d.stage == "67A" and trick.number == d.trick.number + 1:
                sides = {s.side for s, _ in trick.cards}
                if len(sides) == 2:
                    d.stage = "67B1"
                    self._log.update(d.item, law="67B1", detail="67B1",
                                     status=Status.ESTABLISHED)
        # 2017 57D: the card played at RHO's turn is made at its proper turn, if legal
        if self._queued is not None:
            item, qseat, qcard, qtrick = self._queued
            if seat is qseat and trick is qtrick:
                # he played another card instead: the one shown is a major penalty card
                self._queued = None
                self._make_penalty(qseat, qcard, major=True, item=item)
                self._log.update(item, status=Status.RESOLVED, detail="penalty_card")
            elif trick is qtrick and trick is self._cur and seat is qseat.rho \
                    and len(trick.cards) < 4 and self._due(trick) is qseat:
                self._queued = None
                qts = self._queued_ts
                if qts is not None and self._ts is not None \
                        and abs(self._ts - qts) <= SIMULTANEOUS_WINDOW:
                    # 58A: put down with RHO's proper play: deemed subsequent to it, a play
                    # in turn (a revoke if it does not follow suit), not a 57D play
                    self._log.update(item, status=Status.RESOLVED, detail="simultaneous",
                                     law="58A")
                    self._play(qseat, qcard, trick)
                    return
                legal = True
                if self._hands_known and trick.suit_led is not None \
                        and qcard.suit is not trick.suit_led \
                        and self._has_suit(qseat, trick.suit_led, besides=qcard):
                    legal = False
                if legal:
                    self._log.update(item, status=Status.RESOLVED, detail="57D")
                    self._play(qseat, qcard, trick)
                else:
                    self._make_penalty(qseat, qcard, major=True, item=item)
                    self._log.update(item, status=Status.RESOLVED, detail="penalty_card")

    def _establish(self, r: _Revoke, *, by_claim: bool = False) -> None:
        """63A: established by a play to the next trick (63A1), or by a claim or concession
        (2017 63A4, 2007 63A3)."""
        r.established = True
        if r.trick == 12:
            law = "62D"
        elif by_claim:
            law = "63A4" if self.rules is Rules.L2017 else "63A3"
        else:
            law = "63A1"
        if self.rules is Rules.L2017 and any(
                o.trick == r.trick and o.seat.side is not r.seat.side and not o.established
                and not self._is_cleared(o) and not o.defective for o in self._revokes):
            # 2017 62C3: both sides revoked on this trick and only one side has played on:
            # both revokes are to be corrected, and the established one is not rectified
            # by Law 64 (64B8)
            r.both_on_trick = True
            self._log.update(r.item, status=Status.ESTABLISHED, law="62C3", detail="62C3")
            return
        self._log.update(r.item, status=Status.ESTABLISHED, law=law)

    def _close(self, trick: _Trick) -> None:
        had_winner = trick.winner is not None
        trick.winner = trick_winner(trick.cards, self.trump)
        self._tally_close(trick, had_winner)
        if trick.number >= _LAST_TRICK:
            self._end_of_play()
            return
        self._tricks.append(_Trick(trick.number + 1, trick.winner))

    # ------------------------------------------------------------------ unknown hands
    def _detect_shown(self, seat: Seat, card: Card) -> None:
        """Unknown hands: a card of a suit the seat failed to follow shows a revoke."""
        for f in self._failures:
            if f.detected or f.seat is not seat or f.suit is not card.suit:
                continue
            f.detected = True
            trick = next((t for t in self._tricks if t.number == f.trick), None)
            if trick is None:
                continue
            r = self._new_revoke(seat, trick, f.suit, f.card)
            later = any(
                t.number > f.trick and (t.played_by(seat) is not None
                                        or t.played_by(seat.partner) is not None)
                for t in self._tricks
            )
            if later:
                self._establish(r)

    # ------------------------------------------------------------------ withdrawals
    def _withdraw(self, seat: Seat, card: Card, trick: _Trick) -> None:
        lead = self._opening_lot or self._lot
        if lead is not None and lead.seat is seat and lead.card == card:
            if lead is self._opening_lot:
                self._refuse_opening_lead()
            else:
                self._refuse_lead()
            return
        for r in self._revokes:
            if r.seat is seat and r.card == card and not (r.established or r.corrected
                                                         or self._is_cleared(r) or r.defective):
                # 62A: the revoke is corrected; the withdrawn card is a major penalty card
                # when it came from a defender's hand (62B1)
                self._reopen(trick)
                self._remove_from_trick(seat, card, trick)
                if self._is_defender(seat):
                    self._make_penalty(seat, card, major=True, item=r.item)
                    self._log.update(r.item, penalty_card=card)
                self._correcting[seat] = r
                return
        if not self._hands_known and self._correctable(seat, trick) \
                and trick.suit_led is not None \
                and card.suit is not trick.suit_led and trick.cards[0][0] is not seat:
            # maybe the correction of a revoke we cannot see yet: decided by the next card
            self._reopen(trick)
            self._remove_from_trick(seat, card, trick)
            self._pending_correction[seat] = (trick, card)
            return
        if (trick is self._cur or self._can_reopen(trick)) \
                and self._retraction_allowed(seat, card, trick):
            # 62C: after a revoke is corrected, cards played after it may be retracted
            self._reopen(trick)
            self._remove_from_trick(seat, card, trick)
            offender = self._revoke_in(trick)
            if offender is not None and seat is offender.seat.partner and self._is_defender(seat):
                self._make_penalty(seat, card, major=True, item=offender.item)
            return
        item = self._open(Code.CARD_WITHDRAWN, law="47", seat=seat, trick=trick.number,
                          card=card, detail="stays_played")
        self._withdrawn[seat][card] = item

    def _can_reopen(self, trick: _Trick) -> bool:
        """The last closed trick, nobody has led to the next one, and it is not defective."""
        return (len(self._tricks) >= 2 and self._tricks[-2] is trick and not self._cur.cards
                and trick.missing is None)

    def _reopen(self, trick: _Trick) -> None:
        """Make the last closed trick current again for a correction (62A, 62C)."""
        if self._can_reopen(trick):
            self._tricks.pop()
            trick.winner = None
            self._stale()

    def _correctable(self, seat: Seat, trick: _Trick) -> bool:
        """The trick is current, or the seat's side has not played to a later one (62A)."""
        if trick is self._cur:
            return True
        return not any(
            t.number > trick.number and (t.played_by(seat) is not None
                                         or t.played_by(seat.partner) is not None)
            for t in self._tricks
        )

    def _revoke_in(self, trick: _Trick) -> _Revoke | None:
        for r in self._revokes:
            if r.trick == trick.number and not r.established and not self._is_cleared(r) \
                    and not r.defective:
                return r
        return None

    def _retraction_allowed(self, seat: Seat, card: Card, trick: _Trick) -> bool:
        """62C: after a revoke in this trick, cards played after it may be retracted."""
        r = self._revoke_in(trick)
        if r is None or seat is r.seat or trick.played_by(seat) != card:
            return False
        order = _ROTATION[trick.leader]
        return order.index(seat) > order.index(r.seat)

    def _remove_from_trick(self, seat: Seat, card: Card, trick: _Trick) -> None:
        trick.cards = [(s, c) for s, c in trick.cards if not (s is seat and c == card)]
        self._stale()
        self._remaining[seat].add(card)
        self._played.discard(card)

    def _finish_correction(self, seat: Seat, card: Card) -> None:
        """A revoke corrected by a card put in place of the withdrawn one (62A)."""
        r = self._correcting.pop(seat)
        trick = next(t for t in self._tricks if t.number == r.trick)
        if trick is self._cur:
            if trick.played_by(seat) is not None:
                self._put_card(seat, card)    # not a replacement after all
                return
            if card.suit is r.suit or not self._has_suit(seat, r.suit, besides=card):
                self._mark_corrected(r)
            self._play(seat, card, trick)     # a new failure to follow is a new revoke
            return
        self._check_revoke_replacement(seat, card, trick, r)
        self._put_into_closed(seat, card, trick)

    def _mark_corrected(self, r: _Revoke) -> None:
        r.corrected = True
        law = "62B1" if self._is_defender(r.seat) else "62B2"
        self._log.update(r.item, status=Status.CORRECTED, law=law, detail="corrected")

    def _put_into_closed(self, seat: Seat, card: Card, trick: _Trick) -> None:
        """A card put back into a closed trick (a correction): recompute its winner; the
        next trick's leader follows when nobody has led to it yet."""
        trick.cards.append((seat, card))
        self._stale()
        self._remaining[seat].discard(card)
        self._played.add(card)
        self._penalty[seat].pop(card, None)
        if trick.missing is seat:
            # the card the defective trick lacked is back in it (67A)
            trick.missing = None
            for d in self._defective:
                if d.trick is trick and d.stage != "done":
                    d.stage = "done"
                    self._log.update(d.item, status=Status.CORRECTED, detail="67A", card=card)
        if len(trick.cards) == 4:
            trick.winner = trick_winner(trick.cards, self.trump)
            self._stale()
            nxt = next((t for t in self._tricks if t.number == trick.number + 1), None)
            if nxt is not None and not nxt.cards:
                nxt.leader = trick.winner

    def _check_revoke_replacement(self, seat: Seat, card: Card, trick: _Trick,
                                  r: _Revoke) -> None:
        if card.suit is r.suit or not self._has_suit(seat, r.suit, besides=card):
            self._mark_corrected(r)
        else:
            self._new_revoke(seat, trick, r.suit, card)

    def _finish_unknown_correction(self, seat: Seat, card: Card) -> None:
        trick, old = self._pending_correction.pop(seat)
        suit_led = trick.suit_led
        if suit_led is not None and card.suit is suit_led and trick.played_by(seat) is None:
            # it was a revoke, now corrected (62A); the failure is not a revoke any more
            for f in self._failures:
                if f.seat is seat and f.trick == trick.number and f.card == old:
                    f.detected = True
            item_r = self._new_revoke(seat, trick, suit_led, old)
            item_r.corrected = True
            law = "62B1" if self._is_defender(seat) else "62B2"
            self._log.update(item_r.item, status=Status.CORRECTED, law=law, detail="corrected")
            if self._is_defender(seat):
                self._make_penalty(seat, old, major=True, item=item_r.item)
            if trick is self._cur:
                self._play(seat, card, trick)
            else:
                self._put_into_closed(seat, card, trick)
            return
        if card == old:
            # the same card put back: nothing happened
            if trick.played_by(seat) is None:
                if trick is self._cur:
                    self._play(seat, card, trick, check=False)
                else:
                    self._put_into_closed(seat, card, trick)
            return
        # not a correction: the withdrawn card stays played (Law 47), the new card is routed
        item = self._open(Code.CARD_WITHDRAWN, law="47", seat=seat, trick=trick.number,
                          card=old, detail="stays_played")
        self._withdrawn[seat][old] = item
        if trick.played_by(seat) is None:
            if trick is self._cur:
                trick.cards.append((seat, old))
                self._stale()
                self._remaining[seat].discard(old)
                self._played.add(old)
                if len(trick.cards) == 4:
                    self._close(trick)
            else:
                self._put_into_closed(seat, old, trick)
        if not self._complete:
            self._detect_shown(seat, card)
            self._put_card(seat, card)

    # ------------------------------------------------------------------ leads out of turn
    def _opening_lead_reply(self, seat: Seat, card: Card) -> None:
        lot = self._opening_lot
        assert lot is not None
        if seat is lot.seat.lho:
            self._accept_opening_lead(swap=False, law="54B1")
            self._follow(seat, card)
        elif seat is self.dummy:
            self._accept_opening_lead(swap=False, law="54B2")
            self._follow(seat, card)
        elif seat is lot.expected and len(self._cur.cards) == 1:
            self._refuse_opening_lead()
            self._lead(seat, card)
        else:
            self._follow(seat, card)

    def _accept_opening_lead(self, *, swap: bool, law: str) -> None:
        lot = self._opening_lot
        assert lot is not None
        self._opening_lot = None
        if swap:
            # 54A: declarer spreads his hand and becomes dummy
            self.declarer, self.dummy = self.dummy, self.declarer
            self.opening_leader = self.declarer.lho
        self._log.update(lot.item, status=Status.RESOLVED, detail="accepted", law=law)

    def _refuse_opening_lead(self) -> None:
        lot = self._opening_lot
        assert lot is not None
        self._opening_lot = None
        self._take_back_lead(lot)
        self._make_penalty(lot.seat, lot.card, major=True, item=lot.item)
        self._log.update(lot.item, status=Status.RESOLVED, detail="refused", law="54D")

    def _accept_lead(self, *, law: str) -> None:
        lot = self._lot
        assert lot is not None
        self._lot = None
        self._log.update(lot.item, status=Status.RESOLVED, detail="accepted", law=law)

    def _refuse_lead(self) -> None:
        lot = self._lot
        assert lot is not None
        self._lot = None
        cur = self._cur
        # a defender's lead: 56; declarer's lead not accepted: 55B (55B1 at a defender's
        # turn to lead, 55B2 from the wrong hand of his own side)
        law = "56" if self._is_defender(lot.seat) else "55B"
        if cur.winner is not None:
            # trick 13 (2017: not accepted by a play): every card was forced, so the trick
            # is read again as led by the right hand
            cur.leader = lot.expected
            cur.cards.sort(key=lambda sc: (sc[0] - lot.expected) % 4)
            cur.winner = trick_winner(cur.cards, self.trump)
            self._stale()
            self._log.update(lot.item, status=Status.RESOLVED, detail="refused", law=law)
            if self._complete:
                self._settle()
            return
        self._take_back_lead(lot)
        if self._is_defender(lot.seat):
            self._make_penalty(lot.seat, lot.card, major=True, item=lot.item)
        self._log.update(lot.item, status=Status.RESOLVED, detail="refused", law=law)

    def _take_back_lead(self, lot: _PendingLead) -> None:
        """The card led out of turn leaves the current trick; the right hand is to lead."""
        cur = self._cur
        if cur.played_by(lot.seat) == lot.card:
            self._remove_from_trick(lot.seat, lot.card, cur)
        cur.leader = lot.expected

    def _premature_lapsed(self, seat: Seat, trick: _Trick) -> None:
        """57A: the offender's partner played to the trick with no option chosen: declarer
        can no longer choose one; the alert is resolved (the penalty card stays, 50)."""
        for item, (offender, number) in list(self._premature_open.items()):
            if seat is offender.partner and trick.number == number:
                del self._premature_open[item]
                got = self._log.get(item)
                if got is not None and got.is_open:
                    self._log.update(item, status=Status.RESOLVED, option_lapsed=True)

    def _proper_lead_follows(self, seat: Seat, card: Card) -> None:
        """A defender's lead out of turn, then the proper lead by an opponent (declarer's
        side): the proper lead stands. 2017 53B: the card led in error *may* be withdrawn
        (16C): the director's choice, withdrawn or a major penalty card (56); the card
        waits on the tray meanwhile. 2007 53C: it is withdrawn."""
        lot = self._lot
        assert lot is not None
        self._lot = None
        self._take_back_lead(lot)
        if self.rules is Rules.L2007:
            self._stray[lot.seat][lot.card] = None     # back in the hand, played in turn
            self._log.update(lot.item, status=Status.RESOLVED, detail="returned", law="53C")
        else:
            self._stray[lot.seat][lot.card] = lot.item
            self._fifth_wait[lot.item] = (lot, True)
            self._log.update(lot.item, detail="director_choice", law="53B",
                             choices="penalty_card,withdraw", proper_lead=True)
        self._lead(seat, card)

    def _fifth_choice(self, item: int, choice: str) -> bool:
        """45E: the director's choice for a defender's card played when the other side was
        on lead. ``penalty_card``: 45E1, a penalty card (minor or major per 50B).
        ``lead``: it was a lead out of turn, 53 then applies (declarer may accept it; not
        accepted, 56 makes it a major penalty card); once the proper lead has followed, a
        card deemed led is withdrawn (``withdraw``: 2017 53B, 2007 53C), no rectification
        (16C)."""
        pending, proper_lead = self._fifth_wait[item]
        seat, card = pending.seat, pending.card
        if choice == "lead" and not proper_lead:
            if self._cur.cards:
                return False
            del self._fifth_wait[item]
            self._fifth = pending
            self._fifth_to_lead(accepted=False)
            return True
        if choice in ("withdraw", "lead") and proper_lead:
            del self._fifth_wait[item]
            # back in the hand: a tap of it at his turn plays it (a stray with no alert)
            self._stray[seat][card] = None
            self._log.update(item, status=Status.RESOLVED, detail="returned",
                             law="53B" if self.rules is Rules.L2017 else "53C")
            return True
        if choice == "penalty_card":
            del self._fifth_wait[item]
            if self._fifth is not None and self._fifth.item == item:
                self._fifth = None
            self._stray[seat].pop(card, None)
            got = self._log.get(item)
            led = got is not None and got.code is Code.LEAD_OUT_OF_TURN
            # a lead not accepted: 56, a major penalty card; not a lead: 45E1, per 50B
            major = led or card.rank.is_honour
            self._make_penalty(seat, card, major=major, item=item)
            self._log.update(item, status=Status.RESOLVED, detail="penalty_card",
                             law="56" if led else "45E1")
            return True
        return False

    def _fifth_to_lead(self, *, accepted: bool) -> None:
        fifth = self._fifth
        assert fifth is not None
        self._fifth = None
        self._fifth_wait.pop(fifth.item, None)
        seat, card = fifth.seat, fifth.card
        self._stray[seat].pop(card, None)
        if card in self._penalty[seat]:
            del self._penalty[seat][card]
            self._penalty_source.pop(fifth.item, None)
        self._log.update(fifth.item, status=Status.RESOLVED, detail="lead")
        cur = self._cur
        item = self._open(Code.LEAD_OUT_OF_TURN, law="53", seat=seat, trick=cur.number,
                          card=card, expected=str(fifth.expected))
        cur.leader = seat
        self._play(seat, card, cur, check=False)
        self._lot = _PendingLead(item, seat, card, fifth.expected)
        if accepted:
            self._accept_lead(law="53A")

    # ------------------------------------------------------------------ rulings
    def _clear(self, item: int) -> None:
        self._frozen.discard(item)
        self._fifth_wait.pop(item, None)
        for r in self._revokes:
            if r.item == item:
                r.cleared = True
        for d in self._defective:
            if d.item == item:
                d.stage = "done"
        self._pcnp.pop(item, None)
        if self._opening_lot is not None and self._opening_lot.item == item:
            self._opening_lot = None
        if self._lot is not None and self._lot.item == item:
            self._lot = None
        for seat in Seat:
            for card, i in list(self._stray[seat].items()):
                if i == item:
                    self._stray[seat][card] = None
        self._log.update(item, status=Status.RESOLVED, detail="cleared")
        if self._complete:
            self._settle()

    def _pcnp_reject(self, item: int) -> None:
        seat, wrong, penalty_card, trick = self._pcnp.pop(item)
        idx = next((i for i, (s, c) in enumerate(trick.cards) if s is seat and c == wrong), None)
        if idx is None:
            return
        trick.cards[idx] = (seat, penalty_card)
        self._stale()
        self._remaining[seat].discard(penalty_card)
        self._remaining[seat].add(wrong)
        self._played.discard(wrong)
        self._played.add(penalty_card)
        self._penalty[seat].pop(penalty_card, None)
        self._make_penalty(seat, wrong, major=True, item=item)
        self._log.update(item, status=Status.RESOLVED, detail="rejected", law="52B2")
        if trick.winner is not None:
            trick.winner = trick_winner(trick.cards, self.trump)
            self._stale()
            nxt = next((t for t in self._tricks if t.number == trick.number + 1), None)
            if nxt is not None and not nxt.cards:
                nxt.leader = trick.winner

    def _option(self, ruling: Ruling) -> bool:
        assert ruling.alert is not None
        offender = self._penalty_source[ruling.alert]
        option = ruling.option or ""
        if option not in ("highest", "lowest", "must_lead", "must_not_lead"):
            return False
        if option in ("must_lead", "must_not_lead") and ruling.suit is None:
            return False
        source = self._log.get(ruling.alert)
        if option in ("highest", "lowest") and source is not None \
                and source.param("option_lapsed"):
            return False      # 57A: partner has played to that trick (50D2's remain)
        partner = offender.partner
        self._requirements[partner] = _Requirement(ruling.alert, option, ruling.suit,
                                                   self._cur.number)
        # 50D2: when declarer requires or forbids the lead of a suit, the penalty cards of
        # that suit are picked up
        if option in ("must_lead", "must_not_lead") and not self._cur.cards:
            for card in [c for c in self._penalty[offender] if c.suit is ruling.suit]:
                del self._penalty[offender][card]
        changes: dict[str, object] = {"option": option}
        if ruling.suit:
            changes["option_suit"] = str(ruling.suit)
        self._premature_open.pop(ruling.alert, None)
        if source is not None and source.code is Code.PREMATURE_PLAY and source.is_open:
            # 57A: declarer's option applied, the director's part is done; the
            # requirement holds on (ignoring it is a revoke, 61A) and the penalty card
            # stays until played
            changes["status"] = Status.RESOLVED
        self._log.update(ruling.alert, **changes)
        return True

    def _defective_add(self, item: int, seat: Seat | None, card: Card, *,
                       by_player: bool = False) -> bool:
        d = next((x for x in self._defective if x.item == item), None)
        if d is None or d.stage == "done" or d.trick.played_by(d.missing) is not None:
            return False
        missing = d.missing
        if seat is not None and seat is not missing:
            return False
        # the card may already be on a later trick as the seat's play: move it
        later = self._trick_of(missing, card)
        if later is not None and later is not d.trick:
            self._remove_from_trick(missing, card, later)
        if card not in self._tray[missing]:
            self._tray[missing].add(card)
            self._see(missing, card)
        d.trick.cards.append((missing, card))
        d.trick.missing = None
        self._stale()
        self._remaining[missing].discard(card)
        self._played.add(card)
        self._penalty[missing].pop(card, None)
        if d.stage == "67A":
            # 67A: the offender supplies a legal card; no rectification
            d.trick.winner = trick_winner(d.trick.cards, self.trump)
            self._stale()
            suit_led = d.trick.suit_led
            if self._hands_known and suit_led is not None and card.suit is not suit_led \
                    and self._has_suit(missing, suit_led):
                self._new_revoke(missing, d.trick, suit_led, card)
            d.stage = "done"
            self._log.update(item, status=Status.CORRECTED, detail="67A", card=card)
            return True
        # 67B1: the trick's owner does not change; deemed a revoke (one trick, 64A2)
        d.stage = "done"
        self._revokes.append(_Revoke(item, missing, d.trick.number,
                                     d.trick.suit_led or card.suit, card,
                                     established=True, defective=True))
        self._log.update(item, status=Status.RESOLVED, detail="67B1", card=card)
        del by_player
        if self._complete:
            self._settle()
        return True

    def _do_claim(self, tricks: int | None) -> bool:
        done = sum(1 for t in self._tricks if t.winner is not None)
        left = _LAST_TRICK - (self.first_trick - 1) - done
        if self._complete or tricks is None or not 0 <= tricks <= left:
            return False
        # 2017 63A4 / 2007 63A3: a claim or concession establishes every revoke not yet
        # corrected
        for r in self._revokes:
            if not (r.established or r.corrected or self._is_cleared(r)):
                self._establish(r, by_claim=True)
        self._claim = (tricks, left - tricks)
        cur = self._cur
        if cur.winner is None:
            for seat, card in cur.cards:
                self._remaining[seat].add(card)
                self._played.discard(card)
            cur.cards = []
            self._stale()
        self._end_of_play()
        return True

    # ------------------------------------------------------------------ end of play
    def _end_of_play(self) -> None:
        self._complete = True
        self._queued = None
        self._settle()

    def _swap_62d(self) -> tuple[PlayedTrick, PlayedTrick] | None:
        """The default 62D correction: the offender's trick-12 and trick-13 cards swapped."""
        r12 = next((r for r in self._revokes if r.trick == 12 and r.established
                    and not self._is_cleared(r) and not r.defective), None)
        if r12 is None:
            return None
        t12 = next((t for t in self._tricks if t.number == 12), None)
        t13 = next((t for t in self._tricks if t.number == 13), None)
        if t12 is None or t13 is None or t12.winner is None or t13.winner is None:
            return None
        c12, c13 = t12.played_by(r12.seat), t13.played_by(r12.seat)
        if c12 is None or c13 is None:
            return None
        cards12 = tuple((s, c13 if s is r12.seat else c) for s, c in t12.cards)
        w12 = trick_winner(cards12, self.trump)
        by_seat = {s: (c12 if s is r12.seat else c) for s, c in t13.cards}
        cards13 = tuple((w12.rotated(i), by_seat[w12.rotated(i)]) for i in range(4))
        w13 = trick_winner(cards13, self.trump)
        return (PlayedTrick(12, t12.leader, cards12, w12), PlayedTrick(13, w12, cards13, w13))

    def _is_cleared(self, r: _Revoke) -> bool:
        """Cleared by the director: by a ruling given to us, or one the Table applied."""
        if r.cleared:
            return True
        item = self._log.get(r.item)
        return item is not None and item.status is Status.RESOLVED and item.detail == "cleared"

    def _settle(self) -> None:
        """Apply the 62D correction and Law 64 (laws.md 4.4) to the alerts."""
        transfer, corrected, updates = self._law64()
        self._transfer = transfer
        self._corrected_winners = corrected
        for item, changes in updates:
            self._log.update(item, **changes)

    def _law64(self) -> tuple[int, dict[int, Seat], list[tuple[int, dict[str, object]]]]:
        """(tricks to declarer's side, 62D-corrected winners, alert updates): pure."""
        updates: list[tuple[int, dict[str, object]]] = []
        corrected: dict[int, Seat] = {}
        swap = self._swap_62d()
        if swap is not None and swap[0].winner is not None and swap[1].winner is not None:
            corrected = {12: swap[0].winner, 13: swap[1].winner}
            for r in self._revokes:
                if r.trick == 12 and r.established and not r.defective \
                        and not self._is_cleared(r):
                    updates.append((r.item, {"law": "62D", "detail": "62D",
                                             "status": Status.CORRECTED,
                                             "tricks_transferred": 0}))
        won: dict[int, Seat] = {}
        for t in self._tricks:
            if t.winner is not None:
                won[t.number] = corrected.get(t.number, t.winner)
        if self._claim is not None:
            n = max(won, default=self.first_trick - 1) + 1
            for _ in range(self._claim[0]):
                won[n] = self.declarer
                n += 1
            for _ in range(self._claim[1]):
                won[n] = self.declarer.lho
                n += 1
        est = [r for r in self._revokes
               if r.established and not r.corrected and not self._is_cleared(r)
               and (r.trick != 12 or r.defective)]          # 64B6: 62D instead
        if len({r.seat.side for r in est}) > 1:
            for r in est:
                updates.append((r.item, {"detail": "64B7", "tricks_transferred": 0}))
            return 0, corrected, updates
        transfer = 0
        used: set[int] = set()
        seen_suits: set[tuple[Seat, Suit]] = set()
        for r in est:
            side = r.seat.side
            key = (r.seat, r.suit)
            if r.defective:
                rule = "64A2"
            elif r.both_on_trick:
                rule = "64B8"
            elif r.faced:
                rule = "64B3"
            elif key in seen_suits:
                rule = "64B2"
            else:
                rule = ""
            seen_suits.add(key)
            n = 0
            avail = [t for t in sorted(won) if t >= r.trick and won[t].side is side
                     and t not in used]
            if rule in ("64B3", "64B2", "64B8"):
                pass
            elif not rule and won.get(r.trick) is r.seat:
                # 64A1: won by the offender himself (a trick won by dummy is not declarer's)
                rule = "64A1"
                if r.trick not in used:
                    used.add(r.trick)
                    n += 1
                later = [t for t in avail if t > r.trick]
                if later:
                    used.add(later[0])
                    n += 1
            elif avail:
                rule = rule or "64A2"
                used.add(avail[0])
                n = 1
            else:
                rule = "64B1"
            transfer += n if self._is_defender(r.seat) else -n
            updates.append((r.item, {"detail": rule, "tricks_transferred": n}))
        return transfer, corrected, updates
