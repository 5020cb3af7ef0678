"""The ``Engine``: every table whose messages reach it, one ``Table`` each; an input in
(controller/engine/intake.py), the table's ``Table`` applies it, the messages out
(controller/engine/render.py), with what each table keeps between inputs
(controller/engine/tables.py)."""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from controller import wire
from controller.engine.intake import (
    MAX_SOURCES,
    MAX_TABLES,
    REFUSALS_KEPT,
    Parsed,
    SeqTracker,
    ack_payload,
    carry_sources,
    parse_input,
    parse_topic,
    refusal,
    restore_sources,
    table_refused,
    tracker_of,
)
from controller.engine.outgoing import Outgoing
from controller.engine.render import Payloads, restated
from controller.engine.rounds import RoundSchedule
from controller.engine.tables import Carried, TableState
from controller.evidence.payload import claim_position, evidence_payload, note_tempo, press_payload
from controller.indicators.display_text import LANGUAGES
from controller.indicators.policy import IndicatorPolicy
from controller.laws.cards import Card, Rules, Seat
from controller.laws.dealcheck import FouledBoardDetector
from controller.laws.events import Button, ButtonEvent, TagEvent
from controller.laws.irregularities import Code
from controller.laws.record import BoardRecord, DealInfo
from controller.laws.rulings import Ruling, RulingKind
from controller.laws.table import Table, Update

log = logging.getLogger("bridge_table.engine")

__all__ = ["Engine"]

#: an update with nothing in it (``Table.apply`` of most cards and calls without a feed)
_NO_CHANGE = Update()


@lru_cache(maxsize=8 * MAX_TABLES)
def _topic_text(root: str, table: str, kind: str) -> str:
    """``wire.topic``, kept: the same few topics a table, one made for every message (its
    three arguments are all it is made from: the key is complete)."""
    return wire.topic(table, kind, root=root)


def _seen_at(table: Table) -> list[int]:
    """The boards a table has played, and the one on it now (``engine.rounds``)."""
    board = table.board
    return table.played if board is None else [*table.played, board.number]


class Engine:
    """Every table whose messages reach it; one ``Table`` per table id."""

    def __init__(
        self,
        *,
        root: str = "bridge",
        deals: Mapping[int, DealInfo] | None = None,
        rules: Rules = Rules.L2017,
        policy: IndicatorPolicy | None = None,
        schedule: Mapping[str, frozenset[int]] | None = None,
        rounds: Mapping[str, Sequence[frozenset[int]]] | None = None,
        kinds: frozenset[str] | None = None,
        max_tables: int = MAX_TABLES,
        max_sources: int = MAX_SOURCES,
        pairs_at: Callable[[str, int], tuple[int, int] | None] | None = None,
        languages: tuple[str, ...] = LANGUAGES,
    ) -> None:
        """``kinds`` limits the outputs built (``replay --topics``): every input is still
        applied, and ``snapshot``/``retained`` still give the full current state.
        ``max_tables`` bounds the tables, ``max_sources`` the sources (``src``) per table:
        an input past either is refused with an ``error``.
        ``rounds``: each table's boards per round it plays, in order (the session's
        movement): a board of a round behind the table, or two ahead, is WRONG_BOARD.
        ``pairs_at(table, board)``: the session's movement, naming the pairs (or teams) at
        the table in ``state`` and ``result`` (``ns``, ``ew``; wire contract 1.2).
        ``languages``: the languages of the indicator's ``display`` text (default all
        three, as the contract's listeners expect); a room that shows one language renders
        only that one."""
        if max_tables < 1 or max_sources < 1:
            raise ValueError("max_tables and max_sources must be at least 1")
        unknown = [lang for lang in languages if lang not in LANGUAGES]
        if unknown or not languages:
            raise ValueError(f"languages must be some of {', '.join(LANGUAGES)}, not "
                             f"{', '.join(unknown) or 'none'}")
        self.max_tables = max_tables
        self.max_sources = max_sources
        self.root = root
        self.deals: Mapping[int, DealInfo] = deals or {}
        self.rules = rules
        self.policy = policy or IndicatorPolicy()
        self.schedule = schedule or {}
        #: per table, its boards round by round (the session's movement): a board is then
        #: scheduled for the table's round or the next one only (``engine.rounds``)
        self.rounds = rounds or {}
        #: builds the payloads of the messages (controller/engine/render.py): the display
        #: in ``languages``, the pairs at each table from ``pairs_at``
        self.payloads = Payloads(tuple(dict.fromkeys(languages)), self.policy, pairs_at)
        self.fouled = FouledBoardDetector()
        every = frozenset({"state", "alert", "indicator", "result", "feed", "error",
                           "evidence"})
        self.kinds = every if kinds is None else frozenset(kinds) & every
        self._tables: dict[str, TableState] = {}
        #: topic -> (table, kind) of the event and ruling topics of valid table ids seen
        self._routes: dict[str, tuple[str, str]] = {}
        #: neither ``state`` nor ``indicator`` is built (replay --topics result,alert...)
        self._results_only = not ({"state", "indicator"} & self.kinds)
        self.stats: dict[str, int] = {
            "events": 0, "rulings": 0, "duplicates": 0, "malformed": 0,
            "ignored_topics": 0, "internal_errors": 0, "out_of_order": 0, "refused": 0,
        }
        #: the last refusal per source (``"{table}/{src}"`` -> why), for the daemon's status
        self.refusals: OrderedDict[str, str] = OrderedDict()
        #: (table, src) whose acknowledgement changed since ``acks_due`` was last called
        self._acks_dirty: set[tuple[str, str]] = set()
        #: inputs applied without building outputs (``rebuild``)
        self._quiet = False
        #: while deferring (``defer``): the tables whose ``state`` and ``indicator`` wait for
        #: ``flush`` (a dict: an ordered set); None: built and returned per input
        self._deferred: dict[str, None] | None = None
        #: the journal number of the input being handled (the daemon sets it): the board
        #: starts and Law 87 observations that ``controller.service.snapshot`` records carry it
        self.position = 0
        #: None: board starts not kept; else table -> (journal n, the values carried) of
        #: each board start since the daemon last took them (``controller.service.snapshot``
        #: stores them)
        self.board_starts: dict[str, tuple[int, Carried]] | None = None

    @property
    def session_id(self) -> str | None:
        """The session the controller runs (``--session``/``--schedule``): stamped on
        ``state``, ``result``, ``feed`` and ``alert`` (wire 1.8) so that a broadcast relay
        never takes one session's board for another's."""
        return self.payloads.session_id

    @session_id.setter
    def session_id(self, value: str | None) -> None:
        self.payloads.session_id = value

    # -- public ---------------------------------------------------------------------------
    @property
    def tables(self) -> list[str]:
        return sorted(self._tables)

    def snapshot(self, table: str) -> dict[str, Any]:
        ts = self._tables.get(table)
        if ts is None:
            return {}
        # built, not stored, when missing: only the thread that applies inputs writes
        # ts.state (the daemon's tests read snapshot() from another thread mid-batch)
        state = ts.state
        return state if state is not None else self.payloads.state(table, ts)

    def observed(self, table: str) -> list[tuple[int, int, Seat, frozenset[Card]]]:
        """The hands ``table`` showed the Law 87 fouled-board check, in order: (``position``
        when shown, board, seat, hand). A snapshot carries them (controller/service/snapshot.py);
        ``replay --jobs`` checks them across its processes (controller/replay/jobs.py)."""
        ts = self._tables.get(table)
        return list(ts.observed) if ts is not None else []

    def record(self, table: str) -> BoardRecord | None:
        """The current (or last) board of ``table`` as played, for PBN / LIN output."""
        ts = self._tables.get(table)
        return ts.table.record if ts is not None else None

    def retained(self) -> list[Outgoing]:
        out: list[Outgoing] = []
        for name in self.tables:
            ts = self._tables[name]
            out.append(Outgoing(self._topic(name, "state"), self.snapshot(name), True))
            if ts.indicator is None:
                key = self.payloads.indicator_key(ts)
                ts.indicator, ts.indicator_key = self.payloads.indicator(name, ts, key), key
            out.append(Outgoing(self._topic(name, "indicator"), ts.indicator, True))
            if ts.result is not None:
                out.append(Outgoing(self._topic(name, "result"), ts.result, True))
            if ts.evidence is not None:
                out.append(Outgoing(self._topic(name, "evidence"), ts.evidence, True))
        return out

    def rebuild(self, inputs: Iterable[tuple[str, bytes | str | Mapping[str, Any]]]) -> int:
        """Apply ``(topic, payload)`` inputs already published (a journal's, in order) as
        ``handle`` does, building no output: the tables, seqs, alerts, results and feed
        numbers end as after ``handle``; ``snapshot`` and ``retained`` give the current
        state; the next ``handle`` goes on from there. Returns how many were fed."""
        count = 0
        self._quiet = True
        try:
            for topic, payload in inputs:
                try:
                    self.handle(topic, payload)
                except Exception:  # a defect: the live path logs it; keep rebuilding
                    self.stats["internal_errors"] += 1
                count += 1
        finally:
            self._quiet = False
        if "indicator" in self.kinds:
            # the last indicator, as if it had been built all along: the next input
            # publishes one only if it changes (as ``handle`` alone would have)
            for name, ts in self._tables.items():
                if ts.indicator_key is None:
                    ts.indicator_key = self.payloads.indicator_key(ts)
                    ts.indicator = self.payloads.indicator(name, ts, ts.indicator_key)
        return count

    def defer(self) -> None:
        """Until ``flush``: ``handle`` builds no ``state`` nor ``indicator`` after an event
        (the daemon's batch, wire contract 1.4). Each is a retained snapshot that the next
        one supersedes, so a batch of one table's events (a round start's 53 scans) needs
        only its last. Everything else (``alert``, ``feed``, ``result``, ``evidence``,
        ``error``) is still returned by ``handle``, in order. After a ruling, and when a
        board's result changes, the state and indicator are built at once, as without
        deferring: the director's console waits for the state whose ``last`` is its
        ruling, and the broadcast gate for the state that shows a board over before its
        result."""
        if self._deferred is None:
            self._deferred = {}

    def flush(self) -> dict[str, list[Outgoing]]:
        """End ``defer``: each table changed since, with its ``state`` (``last``: the newest
        input applied) and its ``indicator`` if it changed, as ``handle`` would have built
        them after that input."""
        tables, self._deferred = self._deferred, None
        return {name: self._snapshots(name, self._tables[name]) for name in tables or ()}

    def settle(self, now: float | None = None) -> list[Outgoing]:
        """Read the cards lifted from play spots more than ``TURN_WINDOW`` ago as taken away
        (``Table.settle``, docs/sensing.md "A card turned"): the daemon calls it every few
        tenths of a second, so that a card lifted and held shows without waiting for the
        table's next event. ``now``: ``time.monotonic()`` (the default); each table's
        events' clock is read from it by the time its newest event arrived, so a reader
        whose clock is off (or a simulator replaying old times) is judged by elapsed time.
        A table with no card lifted costs one test."""
        if now is None:
            now = time.monotonic()
        out: list[Outgoing] = []
        for name, ts in self._tables.items():
            board = ts.table.board
            if board is None or not board.lifted or ts.clock is None:
                continue
            update = ts.table.settle(ts.clock[0] + now - ts.clock[1])
            if update.irregularities or update.feed or update.result_changed:
                out += self._publish(name, ts, update)
        return out

    def handle(self, topic: str, payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """Apply one message from ``{root}/{t}/event`` or ``{root}/{t}/ruling``."""
        route = self._routes.get(topic)
        if route is not None:
            # a topic of a table followed already (the common case): nothing to check
            table, kind = route
            ts = self._tables.get(table)
            if ts is not None:
                decoded = parse_input(kind, payload)
                if type(decoded) is wire.Malformed:
                    self._tally(table, "malformed")
                    return self._errors(table, kind, decoded.reason, payload)
                return self._sequenced(table, kind, ts, decoded, payload)  # type: ignore[arg-type]
        parsed = parse_topic(topic, self.root)
        if parsed is None or parsed.rest is not None or parsed.kind not in ("event", "ruling"):
            self.stats["ignored_topics"] += 1
            return []
        table, kind = parsed.table, parsed.kind
        problem = None if table in self._tables else table_refused(table)  # known: valid
        if problem is not None:
            self.stats["refused"] += 1
            # the error cannot go under an id that is not one: it goes to {root}/controller
            return self._errors("controller", kind, problem, payload, shown=table[:64])
        decoded = parse_input(kind, payload)
        if isinstance(decoded, wire.Malformed):
            self._tally(table, "malformed")
            return self._errors(table, kind, decoded.reason, payload)
        if table not in self._tables and len(self._tables) >= self.max_tables:
            self.stats["refused"] += 1
            return self._errors(table, kind, f"refused: the controller already follows "
                                f"{self.max_tables} tables (--max-tables)", payload)
        ts = self._table(table)
        if len(self._routes) < 4 * MAX_TABLES:   # a valid table's topic: checked once
            self._routes[topic] = (table, kind)
        return self._sequenced(table, kind, ts, decoded, payload)

    def _sequenced(self, table: str, kind: str, ts: TableState, decoded: Parsed,
                   payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """``handle`` for a followed table, the input decoded: its source and seq checked
        (1.2), then applied."""
        src, origin, seq, inp = decoded
        boot, acked = origin
        seqs = ts.seqs
        source = seqs.get(src)
        tracker = source.boots.get(boot) if source is not None else None
        if tracker is None:
            if source is None and len(seqs) >= self.max_sources:
                self._tally(table, "refused")
                return self._errors(table, kind, f"refused: table {table} already has "
                                    f"{self.max_sources} sources (--max-sources); src "
                                    f"{src[:64]!r} is one too many", payload)
            tracker = tracker_of(seqs, src, boot)
        if tracker is not None and acked is not None:
            tracker.fast_forward(acked)
        if tracker is None or seq != tracker.high + 1:  # else new: the next of its source
            verdict = "retired" if tracker is None else tracker.verdict(seq)
            if verdict == "duplicate":
                self._tally(table, "duplicates")
                self._acks_dirty.add((table, src))  # its ack may have been lost: say it again
                return []
            if tracker is None or verdict != "new":
                return self._refuse(table, kind, src, boot, seq, verdict, tracker, payload)
        tracker.add(seq)
        self._acks_dirty.add((table, src))
        key = "events" if kind == "event" else "rulings"
        self.stats[key] += 1   # _tally, inline: the table is followed
        counts = ts.counts
        counts[key] = counts.get(key, 0) + 1
        try:
            update = ts.table.apply(inp)
            board = ts.table.board
            if board is not None and board.lifted and type(inp) is TagEvent \
                    and inp.ts is not None:
                ts.clock = (inp.ts, time.monotonic())   # (read by settle)
            if update.refused:
                # 1.6: a ruling (an option) the table cannot apply changed nothing
                self._tally(table, "refused")
                return self._errors(table, kind, f"refused: {update.refused}", payload)
            ts.last = {"src": src, "seq": seq}
            if self._results_only:
                if (update.shown_unchanged or update == _NO_CHANGE) and type(inp) is TagEvent \
                        and not self._quiet and self._deferred is None:
                    # no alert, feed, result or evidence, no state or indicator built
                    ts.notes = ()
                    return []
            elif update.shown_unchanged:
                # nothing shown changed: no alert, feed, result or evidence; the state is
                # the last one with this input in ``last``
                return self._unchanged(table, ts, update)
            out = self._publish(table, ts, update, now=kind == "ruling") + \
                self._evidence(table, ts, update, inp)
            if update.board_started and self.board_starts is not None:
                self.board_starts[table] = (self.position, self._carried(table, ts, update))
            return out
        except Exception as exc:  # a defect, never a player's irregularity: keep serving
            self._tally(table, "internal_errors")
            try:
                update = ts.table.drop_last_input()
                out = self._publish(table, ts, update)
            except Exception:  # the board cannot even be rebuilt: report, state unchanged
                out = []
            return [self._error(table, kind, f"internal error, input not applied: "
                                f"{type(exc).__name__}: {exc}", payload), *out]

    def _tally(self, table: str, key: str) -> None:
        """Count in ``stats``, and in the table's own counts when it is followed (what its
        snapshot carries: ``controller.service.snapshot``)."""
        self.stats[key] += 1
        ts = self._tables.get(table)
        if ts is not None:
            ts.counts[key] = ts.counts.get(key, 0) + 1

    # -- sequence numbers and acknowledgements (1.2) -----------------------------------------
    def _refuse(self, table: str, kind: str, src: str, boot: str | None, seq: int,
                verdict: str, tracker: SeqTracker | None,
                payload: bytes | str | Mapping[str, Any]) -> list[Outgoing]:
        """An event not applied because of its seq: answered on ``error``, counted, and kept
        in ``refusals`` (the daemon's status), never dropped silently."""
        counter, why = refusal(src, boot, seq, verdict, tracker)
        self._tally(table, counter)
        key = f"{table}/{src}"
        self.refusals[key] = why
        self.refusals.move_to_end(key)
        while len(self.refusals) > REFUSALS_KEPT:
            self.refusals.popitem(last=False)
        return self._errors(table, kind, why, payload)

    def _ack(self, table: str, src: str) -> Outgoing | None:
        ts = self._tables.get(table)
        payload = ack_payload(src, ts.seqs.get(src) if ts is not None else None)
        if payload is None:
            return None
        return Outgoing(wire.ack_topic(table, src, root=self.root), payload, retain=True)

    def acks_due(self) -> list[Outgoing]:
        """The acknowledgements (``{root}/{t}/ack/{src}``, retained) of every source that
        sent something since the last call: the daemon publishes them once the events are
        journaled and applied. Not part of ``handle``'s outputs, so replay is unchanged."""
        out = [ack for table, src in sorted(self._acks_dirty)
               if (ack := self._ack(table, src)) is not None]
        self._acks_dirty.clear()
        return out

    def acks(self) -> list[Outgoing]:
        """Every source's acknowledgement (after a reconnect: the broker may have lost them)."""
        return [ack for table in self.tables for src in sorted(self._tables[table].seqs)
                if (ack := self._ack(table, src)) is not None]

    # -- building outputs -----------------------------------------------------------------
    def _topic(self, table: str, kind: str) -> str:
        return _topic_text(self.root, table, kind)

    def _table(self, name: str) -> TableState:
        ts = self._tables.get(name)
        if ts is None:
            schedule = self.schedule.get(name)
            if self.schedule and schedule is None:
                # a table the session's movement does not seat: nothing is scheduled there,
                # so each board it plays is WRONG_BOARD (Law 15), alerted at the table
                schedule = frozenset()
                log.warning("table %s is not in the session's movement (its tables: %s): "
                            "every board played there is alerted as not scheduled (Law 15)",
                            name[:64], ", ".join(sorted(self.schedule)))
            table = Table(name, rules=self.rules, deals=self.deals, schedule=schedule,
                          feed=bool({"feed", "evidence"} & self.kinds))
            by_round = self.rounds.get(name)
            if by_round:   # the movement's rounds: a board of the table's round or the next
                table.schedule = RoundSchedule(by_round, lambda: _seen_at(table))
            ts = TableState(table)
            self._tables[name] = ts
        return ts

    def _error(self, table: str, kind: str, message: str,
               payload: bytes | str | Mapping[str, Any], *, shown: str | None = None
               ) -> Outgoing:
        """An ``error`` on ``{root}/{table}/error``; ``shown`` the table id the payload
        names, when it is not ``table`` (a refused id, reported under ``controller``)."""
        return Outgoing(self._topic(table, "error"), wire.error_payload(
            table if shown is None else shown, kind, message, payload), retain=False)

    def _errors(self, table: str, kind: str, message: str,
                payload: bytes | str | Mapping[str, Any], *, shown: str | None = None
                ) -> list[Outgoing]:
        """``[_error(...)]`` when the kinds kept include ``error`` (replay ``--topics``),
        else nothing: how an input is refused."""
        return [self._error(table, kind, message, payload, shown=shown)] \
            if "error" in self.kinds else []

    def _publish(self, name: str, ts: TableState, update: Update, *, now: bool = False
                 ) -> list[Outgoing]:
        """The outputs of ``update``; ``now``: state and indicator even while deferring."""
        if self._quiet:
            return self._follow(name, ts, update)
        out: list[Outgoing] = []
        kinds = self.kinds
        table = ts.table
        board = table.board
        if update.board_started:
            ts.alerts = {}
        alerting = "alert" in kinds
        if alerting and update.previous:
            # the alerts of a board replaced before it was finished keep its number
            topic = self._topic(name, "alert")
            out += [Outgoing(topic, self.payloads.alert(name, update.previous_board, item),
                             False)
                    for item in update.previous]
        # the board as played, built once when its result changed (result, feed, fouled check)
        result_changed = update.result_changed
        record = table.record if result_changed else None
        irregularities = update.irregularities
        if irregularities:
            board_no = board.number if board is not None else None
            alerts = ts.alerts
            for item in irregularities:
                alerts[item.id] = item
                if item.code is Code.WRONG_BOARD and item.detail == "not_scheduled":
                    log.warning("table %s: board %s is not one the session's movement gives "
                                "this table: WRONG_BOARD alerted at the table (Law 15)",
                                name[:64], board_no)
                if alerting:
                    out.append(Outgoing(self._topic(name, "alert"),
                                        self.payloads.alert(name, board_no, item), False))
        feed = update.feed
        if feed:
            if "feed" in kinds:
                topic = self._topic(name, "feed")
                for feed_item in feed:
                    ts.feed_seq += 1  # the number the item's payload carries
                    out.append(Outgoing(topic, self.payloads.feed(name, ts, feed_item, record),
                                        False))
            else:
                ts.feed_seq += len(feed)
        ts.notes = update.notes
        deferred = self._deferred
        if deferred is None:
            out += self._snapshots(name, ts)
        elif now or result_changed:
            # a board's result goes out after the state that finished it (the broadcast
            # gate trusts a result only once a state shows its board over); that state
            # may be gone by the end of the batch if the next board starts in it
            deferred.pop(name, None)
            out += self._snapshots(name, ts)
        else:
            # ts.state stays the last one published until flush(): only the thread that
            # applies inputs writes it (a listener thread reading snapshot() mid-batch, as
            # the tests do, must not store a state that flush() has already replaced)
            deferred[name] = None
        if result_changed and board is not None:
            ts.result = self.payloads.result(name, record)
            if "result" in kinds:
                out.append(Outgoing(self._topic(name, "result"), ts.result, True))
            out += self._compare_tables(name, ts, record)
        return out

    def _unchanged(self, name: str, ts: TableState, update: Update) -> list[Outgoing]:
        """The outputs of an input that changed nothing shown (``Update.shown_unchanged``):
        the last state with the new ``last``, when that state is the one after the input
        before (published at once, no notes, the same session); else as ``_publish``."""
        state = ts.state
        if state is None or ts.notes or self._deferred is not None or self._quiet \
                or state.get("session") != (self.payloads.session_id or None):
            return self._publish(name, ts, update)
        # the indicator's key did not change: neither rebuilt nor published
        return [restated(self._topic(name, "state"), ts, state)]

    def _snapshots(self, name: str, ts: TableState) -> list[Outgoing]:
        """The table's ``state`` and, if it changed, its ``indicator`` (retained)."""
        out: list[Outgoing] = []
        kinds = self.kinds
        if "state" not in kinds and "indicator" not in kinds:
            # neither is published (replay --topics): nothing to decide, nothing to build
            ts.state = ts.indicator = ts.indicator_key = None
            return out
        board = ts.table.board
        # whose turn it is and the tricks won: computed once for state and indicator
        turn = board.turn if board is not None else None
        play = board.play if board is not None else None
        won = play.tricks_won if play is not None else None
        if "state" in kinds:
            out.append(self.payloads.state_message(self._topic(name, "state"), name, ts,
                                                   turn, won))
        else:
            ts.state = None  # built on demand by snapshot()
        if "indicator" in kinds:
            # publish what changed: an indicator whose inputs are those of the last one is
            # the last one, neither rebuilt nor published
            key = self.payloads.indicator_key(ts, turn, won)
            if key != ts.indicator_key:
                ts.indicator_key = key
                indicator = self.payloads.indicator(name, ts, key)
                if indicator != ts.indicator:
                    ts.indicator = indicator
                    out.append(Outgoing(self._topic(name, "indicator"), indicator, retain=True))
        else:
            ts.indicator = ts.indicator_key = None
        return out

    def _follow(self, name: str, ts: TableState, update: Update) -> list[Outgoing]:
        """``_publish`` without outputs (``rebuild``): what the next outputs depend on is
        kept (alerts, feed numbers, notes, result, the fouled-board check); state and
        indicator are built again when next asked for."""
        if update.board_started:
            ts.alerts = {}
        for item in update.irregularities:
            ts.alerts[item.id] = item
        ts.feed_seq += len(update.feed)
        ts.notes = update.notes
        ts.state = ts.indicator = ts.indicator_key = None
        board = ts.table.board
        if update.result_changed and board is not None:
            record = ts.table.record
            ts.result = self.payloads.result(name, record)
            self._compare_tables(name, ts, record)
        return []

    def _carried(self, name: str, ts: TableState, update: Update) -> Carried:
        """The values ``name`` carries across boards, just after its board-starting
        input (copies: the table goes on changing); taken after the outputs, so that a
        failed input leaves none."""
        board = ts.table.board
        assert board is not None  # a board just started
        return Carried(
            table=name, board=board.number, last=None if ts.last is None else dict(ts.last),
            played=tuple(ts.table.played), next_id=board.log.first_id,
            # the board-starting input's feed items are counted again when it is re-applied
            feed_seq=ts.feed_seq - len(update.feed),
            result=None if ts.result is None else dict(ts.result),
            sources=carry_sources(ts.seqs),
            observed=tuple(ts.observed), counts=dict(ts.counts))

    def restore(self, carried: Carried, kind: str, payload: bytes | str) -> str | None:
        """Follow ``carried.table`` again from the values it carried across boards, by
        applying its board-starting input (``kind``, ``payload``) without outputs. None when
        done, else why not (the engine is then as before: the table is not followed)."""
        name = carried.table
        if name in self._tables:
            return f"table {name} is already followed"
        if len(self._tables) >= self.max_tables:  # --max-tables lowered since
            return f"the controller already follows {self.max_tables} tables (--max-tables)"
        decoded = parse_input(kind, payload)
        if isinstance(decoded, wire.Malformed):
            return f"its input does not decode ({decoded.reason})"
        src, _, seq, inp = decoded
        if carried.last != {"src": src, "seq": seq}:
            return f"its input is not the one the values of table {name} were taken at"
        seqs = restore_sources(carried.sources)
        ts = self._table(name)
        try:
            ts.table.resume(list(carried.played), carried.next_id)
            ts.seqs, ts.feed_seq, ts.result = seqs, carried.feed_seq, carried.result
            ts.observed = list(carried.observed)
            update = ts.table.apply(inp)
            board = ts.table.board
            if not update.board_started or board is None or board.number != carried.board:
                raise ValueError(f"its input does not start board {carried.board}")
            self._follow(name, ts, update)
            self._evidence(name, ts, update, inp)
            ts.last = carried.last
            unknown = set(carried.counts) - set(self.stats)
            if unknown:
                raise ValueError(f"unknown counters {sorted(unknown)}")
            ts.counts = dict(carried.counts)
            for key, count in carried.counts.items():
                self.stats[key] += count
        except Exception as e:  # values that do not fit: that table is rebuilt in full
            del self._tables[name]
            return f"table {name} does not restore: {type(e).__name__}: {e}"
        return None

    def _evidence(self, name: str, ts: TableState, update: Update,
                  inp: TagEvent | ButtonEvent | Ruling) -> list[Outgoing]:
        """The director's evidence (controller/evidence/payload.py): published when the board
        starts or ends, when the auction ends, on a claim, and when a call or card crosses
        an absolute tempo threshold; never on the table's topics."""
        if "evidence" not in self.kinds:  # replay --topics without it: not even kept
            return []
        if type(inp) is TagEvent:   # nearly every input: neither a press nor a ruling
            pressed = ruling = False
            event_ts: float | None = inp.ts
        else:
            ruling = isinstance(inp, Ruling)
            pressed = isinstance(inp, ButtonEvent) and inp.button in (Button.DIRECTOR,
                                                                      Button.CLAIM)
            event_ts = inp.ts if isinstance(inp, TagEvent) else None
            if ruling or pressed:
                ts.tempo.director_at_table()   # the wait for a ruling is no one's tempo (73D1)
        changed = note_tempo(ts.tempo, update.feed, ts.table.board, event_ts, self.policy.tempo)
        if update.board_started:
            ts.claim = None
            ts.presses = []
        if pressed:
            # 1.14: the press for the director, published on the evidence topic; nothing
            # changes at the table until the director rules
            assert isinstance(inp, ButtonEvent)
            ts.presses = [*ts.presses, press_payload(inp, ts.last)]
            changed = True
        if ruling and isinstance(inp, Ruling) and inp.kind is RulingKind.CLAIM \
                and update.result_changed:
            # a claim the Laws core took (it ended the play); a refused one leaves no position
            ts.claim = claim_position(ts.table.record, inp.tricks)
            changed = True
        if not (changed or update.result_changed or update.board_started):
            return []
        ts.evidence = evidence_payload(name, ts.tempo, ts.table.board, ts.claim,
                                       self.policy.tempo, ts.presses)
        return [Outgoing(self._topic(name, "evidence"), ts.evidence, retain=True)]

    def _compare_tables(self, name: str, ts: TableState,
                        record: BoardRecord | None) -> list[Outgoing]:
        """Law 87: the hands this table saw (scanned, or revealed by play) against every
        other table's hands for the same board; a difference is a fouled board."""
        if record is None or record.deal is None:
            return []
        out: list[Outgoing] = []
        for seat in Seat:
            ts.observed.append((self.position, record.board, seat, record.deal[seat]))
            for conflict in self.fouled.observe(name, record.board, seat, record.deal[seat]):
                other = conflict.tables[0]
                cards = sorted(conflict.only_first | conflict.only_second)
                update = ts.table.flag(
                    Code.FOULED_BOARD, law="87", seat=seat, detail="hands_differ",
                    board=record.board, other_table=other,
                    cards=" ".join(str(c) for c in cards),
                    here=" ".join(str(c) for c in sorted(conflict.only_second)),
                    there=" ".join(str(c) for c in sorted(conflict.only_first)))
                out += self._publish(name, ts, update)
        return out
