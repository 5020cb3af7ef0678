"""The broadcast relay's logic between the broker and the release gate (no broker in it).

The relay takes what the controllers publish under ``{root}/+/feed``, ``alert``, ``result``
and ``state`` and the controller's status, holds it in the gate (``gate.py``) and its store
(``store.py``), and plans what the gate releases on ``{public}/{t}/feed``, ``alert`` and
``result`` (retained), with the session id added, plus a retained view of each released
board (``{public}/{t}/board/{b}``, ``{public}/{t}/snapshot``: ``view.py``), what each table
plays now (``{public}/{t}/now``: board and contract, no card) and the operator's commentary
(``{public}/commentary``); with an ``out`` folder, a live LIN and PBN file per table as
boards are released. ``mqtt.py`` runs it on a broker. Exactly once: see ``Relay``.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller import wire
from controller.broadcast.gate import Gate, Item
from controller.broadcast.outgoing import Refusals
from controller.broadcast.store import HeldStore
from controller.broadcast.view import apply_item, new_view, write_table_files

__all__ = ["Publish", "Relay"]

log = logging.getLogger("bridge_table.broadcast")


def _digest(table: str, kind: str, payload: Mapping[str, Any]) -> str:
    """One controller message, for dropping a redelivered copy (QoS 1 is at least once)."""
    text = json.dumps([table, kind, payload], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Publish:
    """One message to publish; ``item`` (a released item) or ``view`` (a board's view,
    ``(table, board)``) is what to mark once the broker has acknowledged it."""

    topic: str
    payload: dict[str, Any]
    retain: bool
    item: Item | None = None
    view: tuple[str, int] | None = None


class Relay:
    """The relay's logic between the broker and the gate (testable without a broker).

    Exactly once: an item leaves the store only once the broker has acknowledged its
    public copy (``commit``), and a board's view is marked published only once its own
    publication was acknowledged (``view_published``): a relay killed anywhere publishes,
    once restarted, what it had not, and what was published is not published again (but
    for a copy whose acknowledgement was on its way at the moment of the kill)."""

    def __init__(self, gate: Gate, *, root: str = "bridge", public: str = "public",
                 store: HeldStore | None = None,
                 info: Mapping[tuple[str, int], Mapping[str, Any]] | None = None,
                 deals: Mapping[int, str] | None = None, out: Path | None = None,
                 session_info: Mapping[str, Any] | None = None,
                 now_contract: bool = False) -> None:
        self.gate, self.root, self.public, self.store = gate, root, public, store
        self.session = gate.policy.session_id
        self.info = info or {}           # (table, board) -> view fields (round, pairs...)
        self.deals = deals or {}
        self.out = out
        self.session_info = dict(session_info or {})
        #: the operator of a secured venue opted in to a held board's contract and
        #: declarer on ``now`` (``--now-contract``); by default they wait for its release
        self.now_contract = now_contract
        self.views: dict[tuple[str, int], dict[str, Any]] = {}
        self.reported: set[Any] = set()
        self.digests: set[str] = set()
        #: views changed by released items, not yet published (in order of change)
        self.dirty: dict[tuple[str, int], None] = {}
        #: per table, the board whose item was released last (its ``snapshot``)
        self.latest: dict[str, int] = {}
        self.files_due: set[str] = set()
        #: what each table plays now (board, phase, contract; never a card): the last sent
        #: and the ones to send (``public/{t}/now``)
        self.now_sent: dict[str, dict[str, Any]] = {}
        self.now_due: dict[str, dict[str, Any]] = {}
        self.comment_sent: tuple[float, str] | None = None
        #: the payloads refused for not decoding as their wire Structs (``outgoing.py``)
        self.refusals = Refusals()
        self.refusals_saved = 0   # the count last written to the store
        if store is not None:
            self.views = store.load(gate)
            self.digests = store.digests(self.session)
            for key in store.unpublished(self.session):
                if key in self.views:
                    self.dirty[key] = None
                    self.latest[key[0]] = key[1]

    def take(self, topic: str, payload: Any, retained: bool, now: float) -> None:
        """One message of the controller's, stored before it is acknowledged."""
        parts = topic.split("/")
        if len(parts) < 3 or parts[0] != self.root or not isinstance(payload, dict):
            return
        if parts[1] == "controller":
            if len(parts) == 3 and parts[2] == "status":
                self.gate.controller_status(None, payload, now)
            elif len(parts) == 4 and parts[3] == "status":
                self.gate.controller_status(parts[2], payload, now)
            self._saved()
            return
        if len(parts) != 3:
            return
        table, kind = parts[1], parts[2]
        added: list[Item] = []
        digests: list[str] = []
        if kind == "state":
            self.gate.state(table, payload, retained=retained, now=now)
            self._now_playing(table, payload, now)
        elif kind in ("feed", "alert", "result"):
            fresh = not retained or (kind == "result" and "session" in payload)
            other = payload.get("session")
            if fresh and isinstance(other, str) and other and other != self.session:
                # another session's: kept in the store under its own id, never published
                # by this relay; a relay restarted for that session (same store) has it
                self.gate.ours(table, payload)   # reported
                if self.store is not None:
                    self.store.keep_other(other, table, kind, payload, now,
                                          _digest(table, kind, payload))
            elif fresh and self.gate.ours(table, payload):
                if not self._publishable(table, kind, payload):
                    self._saved()   # what no page may show is never held, nor released
                    return
                digest = _digest(table, kind, payload)
                if digest not in self.digests:   # not a redelivered copy
                    self.digests.add(digest)
                    digests.append(digest)
                    added.append(self.gate.offer(table, kind, payload, now))
                    board = payload.get("board")
                    if kind == "feed" and isinstance(board, int) and \
                            not isinstance(board, bool):
                        self.gate.seen(table, board)
            if kind == "result":
                self.gate.result(table, payload, now=now)
        self._saved(added, digests)

    def _publishable(self, table: str, kind: str, payload: Mapping[str, Any]) -> bool:
        """Whether the public copy of this ``feed``, ``alert`` or ``result`` decodes as its
        wire Struct (``outgoing.py``); refused and reported if not."""
        return self.refusals.check(f"{self.public}/{table}/{kind}", kind,
                                   {**payload, "session": self.session})

    def _now_playing(self, table: str, state: Mapping[str, Any], at: float) -> None:
        """``public/{t}/now``: the board a table plays, from a state of this session; no
        call, card or hand. Its contract and declarer only once the board is released at
        that table (the gate's rule: with ``--release round``, once every table has played
        it), or when the operator opted in (``now_contract``): a held board's contract
        on a phone in the room is unauthorised information to a player who has it still
        to play (Law 16)."""
        mv = self.gate.policy.movement
        if state.get("table") != table or state.get("session") != self.session or (
                mv is not None and table not in {t for r in mv.rounds for t in r.tables}):
            return
        board = state.get("board")
        shown = self.now_contract or self._released(table, board, at)
        now = {"v": wire.VERSION, "session": self.session, "table": table,
               "board": board, "phase": state.get("phase"),
               "contract": state.get("contract") if shown else None,
               "declarer": state.get("declarer") if shown else None}
        if self.now_sent.get(table) != now and \
                self.refusals.check(f"{self.public}/{table}/now", "now", now):
            self.now_due[table] = now

    def _released(self, table: str, board: Any, at: float) -> bool:
        """Whether the gate would let an item of ``board`` at ``table`` out at ``at``."""
        if not isinstance(board, int) or isinstance(board, bool):
            return False
        when = self.gate.release_time(Item(-1, table, "state", board, {}, at))
        return when is not None and when <= at

    def now_messages(self) -> list[Publish]:
        out = [Publish(f"{self.public}/{t}/now", p, True) for t, p in self.now_due.items()]
        self.now_sent.update(self.now_due)
        self.now_due = {}
        return out

    def comment_message(self) -> Publish | None:
        """The operator's latest commentary line (``broadcast comment``), once."""
        latest = self.store.commentary(self.session) if self.store is not None else None
        if latest is None or latest == self.comment_sent:
            return None
        self.comment_sent = latest
        payload = {"v": wire.VERSION, "session": self.session, "text": latest[1],
                   "at": latest[0]}
        topic = f"{self.public}/commentary"
        return Publish(topic, payload, True) if self.refusals.check(
            topic, "commentary", payload) else None

    def _saved(self, added: Sequence[Item] = (), digests: Sequence[str] = ()) -> None:
        if self.store is not None:
            self.store.save(self.gate, added, digests)
        else:
            self.gate.changes.clear()
        for key, report in self.gate.reports.items():
            if key not in self.reported:
                self.reported.add(key)
                where = f"table {report.table}" if report.board is None else \
                    f"table {report.table} board {report.board}"
                log.warning("held: %s: %s", where, report.reason)

    def plan(self, now: float) -> list[Publish]:
        """The items that may go out now, as messages; each leaves the store when
        ``commit``-ted (after the broker acknowledged it)."""
        out = []
        for item in self.gate.ready(now):
            topic = f"{self.public}/{item.table}/{item.kind}"
            payload = {**item.payload, "session": self.session}
            if self.refusals.check(topic, item.kind, payload):
                out.append(Publish(topic, payload, item.kind == "result", item=item))
            else:   # held before the check (a store of an older relay): dropped unseen
                self.gate.released(item)
                if self.store is not None:
                    self.store.released(self.session, item, None)
        return out

    def commit(self, item: Item) -> None:
        """``item``'s public copy was acknowledged: it leaves the gate and the store, and
        its board's view takes it in."""
        self.gate.released(item)
        view = None
        if item.board is not None:
            key = (item.table, item.board)
            view = self.views.get(key)
            if view is None:
                info = {**self.session_info, **self.info.get(key, {})}
                view = self.views[key] = new_view(self.session, item.table, item.board, info)
            apply_item(view, item.kind, item.payload, self.deals.get(item.board))
            self.dirty.pop(key, None)
            self.dirty[key] = None
            self.latest[item.table] = item.board
        if self.store is not None:
            self.store.released(self.session, item, view)

    def view_messages(self) -> list[Publish]:
        """The changed views (``public/{t}/board/{b}``) and snapshots of the tables whose
        latest board changed, to publish after the items."""
        out = []
        for key in list(self.dirty):
            table, board = key
            view = self.views[key]
            topic = f"{self.public}/{table}/board/{board}"
            if not self.refusals.check(topic, "board", view):
                self.dirty.pop(key, None)    # reported; not published, not tried again
                continue
            out.append(Publish(topic, view, True, view=key))
            if self.latest.get(table) == board:
                out.append(Publish(f"{self.public}/{table}/snapshot", view, True))
        return out

    def view_published(self, key: tuple[str, int]) -> None:
        self.dirty.pop(key, None)
        self.files_due.add(key[0])
        if self.store is not None:
            self.store.view_published(self.session, *key)

    def write_files(self) -> None:
        """The live LIN and PBN files of the tables whose views were published."""
        due, self.files_due = self.files_due, set()
        if self.out is None:
            return
        for table in sorted(due):
            try:
                write_table_files(self.out, table,
                                  [v for (t, _), v in self.views.items() if t == table])
            except Exception as exc:  # never stop the relay for a file
                log.warning("table %s: LIN/PBN not written: %s", table, exc)

    def release(self, now: float) -> list[tuple[str, dict[str, Any], bool]]:
        """Everything to publish now, marked published at once (no broker to wait for):
        (topic, payload, retain)."""
        out: list[tuple[str, dict[str, Any], bool]] = []
        for p in self.plan(now):
            assert p.item is not None
            out.append((p.topic, p.payload, p.retain))
            self.commit(p.item)
        for p in self.view_messages():
            out.append((p.topic, p.payload, p.retain))
            if p.view is not None:
                self.view_published(p.view)
        self.write_files()
        out += [(p.topic, p.payload, p.retain) for p in self.now_messages()]
        self.save_status()
        return out

    def save_status(self) -> None:
        """What ``broadcast status`` reads of the running relay: what each held board waits
        for, and the payloads refused (when more were)."""
        if self.store is None:
            return
        self.store.save_waiting(self.gate)
        if self.refusals.count != self.refusals_saved:
            self.store.save_refusals(self.session, self.refusals.status())
            self.refusals_saved = self.refusals.count

    def session_payload(self) -> dict[str, Any]:
        mv = self.gate.policy.movement
        tables = sorted({t for r in mv.rounds for t in r.tables}) if mv is not None else []
        return {"v": wire.VERSION, "session": self.session, "tables": tables, **self.session_info}
