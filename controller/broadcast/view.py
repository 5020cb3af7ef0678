"""What the public sees of a board once released: a view built from the released items,
and the LIN / PBN files written from it.

A view is a plain JSON object, retained on ``public/{t}/board/{b}`` (each board a table
has had released) and ``public/{t}/snapshot`` (the table's latest released board), so a
viewer that joins late has everything at once::

    {"v": 1, "session": "...", "event": "...", "table": "3", "board": 7, "round": 2,
     "dealer": "S", "vul": "All", "ns": "3", "ew": "10",
     "players": {"ns": "Ann - Bo", "ew": "Cy - Di"},
     "deal": "N:AK.. ... ... ...",          # the four hands, once the board is released
     "calls": [["S", "1NT", null], ["W", "X", 2]],   # seat, call, irregularity id or null
     "cards": [["W", "SK"], ...],            # in playing order
     "irregularities": [{alert payload}, ...],
     "claim": {"tricks": 9} | null,
     "result": {result payload} | null,
     "status": "playing" | "complete"}
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from controller import wire

__all__ = ["new_view", "apply_item", "view_record", "pair_seats", "write_table_files",
           "session_views"]


def new_view(session: str, table: str, board: int, info: Mapping[str, Any]) -> dict[str, Any]:
    view: dict[str, Any] = {
        "v": wire.VERSION, "session": session, "table": table, "board": board,
        "dealer": None, "vul": None, "deal": None, "calls": [], "cards": [],
        "irregularities": [], "claim": None, "result": None, "status": "playing",
    }
    view.update({k: v for k, v in info.items() if v is not None})
    return view


def apply_item(view: dict[str, Any], kind: str, payload: Mapping[str, Any],
               deal: str | None = None) -> None:
    """Fold one released ``feed``, ``alert`` or ``result`` message into ``view``."""
    if kind == "alert":
        irr = [i for i in view["irregularities"] if i.get("id") != payload.get("id")]
        irr.append({k: payload[k] for k in ("id", "code", "law", "seat", "trick", "status",
                                             "text", "card", "call", "detail")
                    if k in payload})
        view["irregularities"] = sorted(irr, key=lambda i: i.get("id") or 0)
        if payload.get("call") is not None:
            for entry in reversed(view["calls"]):
                if entry[0] == payload.get("seat") and entry[1] == payload.get("call"):
                    entry[2] = payload.get("id")
                    break
        return
    if kind == "result":
        view["result"] = {k: v for k, v in payload.items() if k not in ("v",)}
        view["status"] = "complete"
        view["dealer"] = payload.get("dealer", view["dealer"])
        view["vul"] = payload.get("vul", view["vul"])
        if payload.get("tricks") is not None and payload.get("tricks_played") is not None \
                and len(view["cards"]) < 52 and payload.get("contract") != "Pass":
            view["claim"] = {"tricks": payload["tricks"]}
        if deal and not view.get("deal"):
            view["deal"] = deal
        return
    k = payload.get("kind")
    if k == "board":
        view.update(dealer=payload.get("dealer"), vul=payload.get("vul"))
    elif k == "call":
        view["calls"].append([payload.get("seat"), payload.get("call"), None])
    elif k == "auction":
        view["calls"] = [[s, c, None] for s, c in payload.get("calls", [])]
    elif k == "card":
        view["cards"].append([payload.get("seat"), payload.get("card")])
    elif k == "play":
        view["cards"] = [list(x) for x in payload.get("cards", [])]
    elif k == "result":
        if payload.get("deal"):
            view["deal"] = payload["deal"]
        view["status"] = "complete"
    if deal and view["status"] == "complete" and not view.get("deal"):
        view["deal"] = deal


def view_record(view: Mapping[str, Any]) -> Any:
    """The board as a ``BoardRecord`` (for the LIN and PBN writers); None if incomplete."""
    from controller.laws.cards import Call, Card, Contract, Deal, Seat, Vulnerability
    from controller.laws.play import build_tricks
    from controller.laws.record import AuctionEntry, BoardRecord

    res = view.get("result")
    if not res or view.get("dealer") is None:
        return None
    dealer = Seat.parse(view["dealer"])
    # a passed-out board is a contract too: PBN's ``[Contract "Pass"]``, LIN's four passes
    contract = None if res.get("contract") is None else Contract.parse(res["contract"])
    declarer = Seat.parse(res["declarer"]) if res.get("declarer") else None
    plays = [(Seat.parse(s), Card.parse(c)) for s, c in view.get("cards", [])]
    trump = None
    if contract is not None and contract.bid is not None:
        trump = contract.bid.denomination.trump
    leader = declarer.lho if declarer is not None else dealer
    tricks = build_tricks(plays, leader, trump) if plays else ()
    names = {"ns": ("North", "South"), "ew": ("East", "West")}
    tags = {"Event": str(view.get("event") or "?"), "Site": str(view.get("site") or "?"),
            "Date": str(view.get("date") or "?").replace("-", "."),
            "Scoring": str(view.get("scoring") or "MP")}
    players = view.get("players") or {}
    for side, seats in names.items():
        for seat, name in zip(seats, pair_seats(players.get(side)), strict=True):
            if name:
                tags[seat] = name
    deal = Deal.from_pbn(view["deal"]) if view.get("deal") else None
    # a call the director was called for: its Law and text as the call's note (LIN ``an``)
    notes = {i.get("id"): ((i.get("text") or {}).get("en") or f"{i.get('code')} "
                           f"(Law {i.get('law')})")
             for i in view.get("irregularities", []) if i.get("id") is not None}
    return BoardRecord(
        board=int(view["board"]), dealer=dealer, vulnerability=Vulnerability.parse(view["vul"]),
        deal=deal, auction=tuple(AuctionEntry(Seat.parse(s), Call.parse(c),
                                              note=notes.get(irr, ""))
                                 for s, c, irr in view.get("calls", [])),
        contract=contract, declarer=declarer, tricks=tricks,
        tricks_played=res.get("tricks_played"), tricks_result=res.get("tricks"),
        score_ns=res.get("score_ns"), table=str(view.get("table", "")), tags=tags)


def pair_seats(name: Any) -> tuple[str, str]:
    """A pair's two players, each at their own seat (North and South, East and West):
    ``"Ann Lee - Bo Tran"`` is ``("Ann Lee", "Bo Tran")``; a name that is not two players
    (a team's, a pair's nickname) sits at the first seat only."""
    if not isinstance(name, str) or not name.strip():
        return ("", "")
    for sep in (" - ", " & ", " / "):
        parts = [p.strip() for p in name.split(sep)]
        if len(parts) == 2 and all(parts):
            return (parts[0], parts[1])
    return (name.strip(), "")


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as fp:
        fp.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def _lin_text(text: str) -> str:
    """``text`` as one field of a LIN line (no ``|`` ends the value, no ``,`` the field)."""
    return " ".join(text.replace("|", " ").replace(",", " ").split()) or "?"


def write_table_files(out: Path, table: str, views: Iterable[Mapping[str, Any]]) -> None:
    """``table-{t}.lin`` and ``table-{t}.pbn``: the table's released, complete boards."""
    from controller.formats.lin import record_to_lin
    from controller.formats.pbn import pbn_text

    records = [r for r in (view_record(v) for v in sorted(views, key=lambda v: v["board"]))
               if r is not None]
    out.mkdir(parents=True, exist_ok=True)
    lines = []
    for r in records:
        try:
            line = record_to_lin(r)
        except Exception:  # a play LIN cannot express (a lead out of turn): PBN only
            continue
        if "qx|" not in line:  # record_to_lin writes it for a board of a known table
            pn, _, rest = line.partition("md|")
            line = f"{pn}qx|o{r.board}|md|{rest}"
        if r.declarer is not None and r.tricks_result is not None and "mc|" not in line:
            line = line.rstrip("\n") + f"mc|{r.tricks_result}|\n"   # BBO writes it always
        lines.append(line)
    if lines:
        # LIN has no Site: BBO's vugraph line gives the event's name and, under it, a
        # second line of text (its "segment"), which carries the place; P/I/B the scoring
        # and the boards' range, no team names or carry-over (a table's own file)
        tags = records[0].tags
        scoring = {"IMP": "I", "Butler": "B"}.get(tags.get("Scoring", ""), "P")
        title = ",".join(_lin_text(tags.get(k, "?")) for k in ("Event", "Site"))
        lines.insert(0, f"vg|{title},{scoring},{records[0].board},{records[-1].board},"
                        f",0,,0|\n")
    _atomic_write(out / f"table-{table}.lin", "".join(lines))
    _atomic_write(out / f"table-{table}.pbn", pbn_text(records) if records else "")


def session_views(session: Any) -> tuple[dict[tuple[str, int], dict[str, Any]],
                                         dict[str, Any]]:
    """What the session gives each board's view: per (table, board) its round, pairs and
    players' names, and the session's own fields (event, site, date, scoring)."""
    info: dict[tuple[str, int], dict[str, Any]] = {}
    if session is None:
        return info, {}
    def name_of(number: Any) -> str | None:
        competitor = getattr(session, "competitor", None)
        if callable(competitor):   # the session file's Session: Competitor(players, name)
            try:
                c = competitor(int(number))
            except (TypeError, ValueError):
                return None
            players = " - ".join(getattr(c, "players", ()) or ())
            return players or getattr(c, "name", "") or None
        pairs = getattr(session, "pairs", None)
        if isinstance(pairs, Mapping):
            value = pairs.get(str(number), pairs.get(number))
            return value if isinstance(value, str) else None
        return None

    for rnd in session.movement.rounds:
        for table, tr in rnd.tables.items():
            ns, ew = getattr(tr, "ns", None), getattr(tr, "ew", None)
            for board in tr.boards:
                entry: dict[str, Any] = {"round": rnd.number}
                if ns is not None:
                    entry["ns"] = str(ns)
                if ew is not None:
                    entry["ew"] = str(ew)
                players = {side: n for side, n in (("ns", name_of(ns) if ns is not None
                                                        else None),
                                                       ("ew", name_of(ew) if ew is not None
                                                        else None)) if n}
                if players:
                    entry["players"] = players
                info[(str(table), board)] = entry
    # the file's Event, Site, Date and Scoring (PBN's tags; a session file names them)
    extra: dict[str, Any] = {}
    for key, names in (("event", ("event",)), ("site", ("site", "venue")),
                       ("date", ("date",))):
        # the session file names the place ``venue``: PBN's and LIN's Site
        value = next((v for v in (getattr(session, n, None) for n in names)
                      if isinstance(v, str) and v), None)
        if value is not None:
            extra[key] = value
    scoring = getattr(session, "scoring", None)
    kind = getattr(session.movement, "kind", None)
    extra["scoring"] = ({"matchpoints": "MP", "imps": "IMP", "butler": "Butler"}.get(
        scoring, scoring) if isinstance(scoring, str) and scoring else
        "IMP" if kind == "teams" else "MP")
    return info, extra
