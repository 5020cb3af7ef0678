"""``bridge-table demo [--lang en|vi|zh] [--speed X]``: a whole board on a simulated table.

Everything is real but the cards: a private mosquitto on a free loopback port, the rules
daemon (``controller.daemon``), the firmware bridge (``hw_configs/sim.toml`` pointed at that
broker) reading virtual reader firmwares on pseudo-terminals through the real serial path,
and the simulated table placing and lifting the tags. The board is
``controller/data/demo.pbn``; on the way the demo makes a defender revoke (he ruffs while
holding the suit led), the controller flags it, it gets established when the offending side
plays to the next trick, and Law 64 transfers tricks when play ends.

On a terminal the table is drawn live (hands, auction, tricks, each seat's LEDs, the
table display's text, the alerts as they open and change); otherwise (``not isatty``) it
prints plain lines. It ends with the result, the score and the board's PBN.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import importlib.resources
import json
import logging
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import aiomqtt
import msgspec

from controller import wire
from controller.daemon import BrokerSettings, ControllerDaemon, build_engine, cancel_until_done
from controller.display_text import columns
from controller.formats.pbn import record_to_pbn
from controller.journal import Journal
from controller.laws.cards import Call, Card, Contract, Seat, Suit, Vulnerability
from controller.laws.irregularities import Status
from controller.laws.messages import (
    call_text,
    card_text,
    contract_text,
    phase_name,
    seat_name,
    status_name,
    suit_name,
    vulnerability_name,
)
from controller.laws.record import BoardRecord, DealInfo
from controller.mosquitto import Mosquitto, MosquittoError

__all__ = ["DemoPlan", "plan_board", "load_board", "bridge_config_dict", "TableView", "main"]

log = logging.getLogger("bridge_table.demo")

TABLE = "1"
LANGS = ("en", "vi", "zh")
REPO_ROOT = Path(__file__).resolve().parent.parent
_AUTO_SUITS = (Suit.C, Suit.D, Suit.H, Suit.S)


class DemoError(Exception):
    """The demo cannot run (no mosquitto, broken board file...)."""


# -- the board and the revoke ----------------------------------------------------------------
@dataclass(frozen=True)
class DemoPlan:
    """What the simulated players do: the board's play with one revoke injected."""

    record: BoardRecord
    play: tuple[tuple[Seat, Card], ...]
    revoke: tuple[int, Seat, Card, Suit] | None  # trick, offender, card played, suit led

    def events(self) -> list[dict[str, Any]]:
        """The board as wire-contract tag events (without ``src``/``seq``/``ts``/``uid``:
        the bridge adds them from what its readers see)."""
        rec = self.record
        assert rec.deal is not None
        deck = str(rec.board)
        out: list[dict[str, Any]] = [
            {"type": "tag", "zone": "board", "action": "present", "board": rec.board}]

        def tray(seat: Seat, card: Card, action: str) -> dict[str, Any]:
            return {"type": "tag", "zone": "tray", "seat": str(seat), "action": action,
                    "card": str(card), "deck": deck}

        hands = {s: sorted(rec.deal[s], key=lambda c: (-int(c.suit), -int(c.rank)))
                 for s in Seat}
        for s in Seat:  # each player counts the hand on the tray ...
            out += [tray(s, c, "present") for c in hands[s]]
        for s in Seat:  # ... and picks it up
            out += [tray(s, c, "removed") for c in hands[s]]
        for entry in rec.auction:
            if not entry.cancelled:
                out.append({"type": "tag", "zone": "bid", "seat": str(entry.seat),
                            "action": "present", "call": str(entry.call)})
        out += [tray(s, c, "present") for s, c in self.play]
        if len(self.play) == 52:
            for s in Seat:  # the hands go back into the board
                out += [tray(s, c, "removed") for c in hands[s]]
        return out


def load_board(path: Path | None = None) -> BoardRecord:
    from controller.formats.pbn import game_to_record, read_pbn

    try:
        if path is None:
            text = importlib.resources.files("controller").joinpath("data/demo.pbn").read_text(
                encoding="utf-8")
        else:
            text = Path(path).read_text(encoding="utf-8")
    except OSError as e:
        raise DemoError(f"cannot read board file {path}: {e.strerror}") from e
    except UnicodeDecodeError as e:
        raise DemoError(f"{path} is not a PBN file (not UTF-8 text: byte {e.start} is "
                        f"0x{e.object[e.start]:02x})") from None
    pbn = read_pbn(text)
    if not pbn.games:
        raise DemoError(f"no board in {path or 'demo.pbn'}: {pbn.errors}")
    try:
        record = game_to_record(pbn.games[0])
    except ValueError as e:  # ParseError and the record's own checks
        raise DemoError(f"{path or 'demo.pbn'}: the first board cannot be read: {e}") from None
    if record.deal is None or record.declarer is None or record.contract is None:
        raise DemoError("the demo board needs a deal, a contract and a declarer")
    return record


def _winner(trick: Sequence[tuple[Seat, Card]], trump: Suit | None) -> Seat:
    led = trick[0][1].suit
    return max(trick, key=lambda sc: (2 if sc[1].suit is trump else 1 if sc[1].suit is led
                                      else 0, int(sc[1].rank)))[0]


def _auto(hand: set[Card], led: Suit | None) -> Card:
    """laws.md AUTO: the lowest card of the suit led, else the lowest card (clubs first)."""
    follow = sorted((c for c in hand if c.suit is led), key=lambda c: c.rank)
    return follow[0] if follow else min(hand, key=lambda c: (_AUTO_SUITS.index(c.suit), c.rank))


def _revoker(followers: Sequence[Seat], led: Suit, hands: dict[Seat, set[Card]],
             defenders: set[Seat]) -> Seat | None:
    """The last defender to play who holds the suit led and another card to play instead."""
    for seat in reversed(followers):
        if seat in defenders and any(c.suit is led for c in hands[seat]) and any(
                c.suit is not led for c in hands[seat]):
            return seat
    return None


def plan_board(record: BoardRecord, *, revoke_trick: int | None = 6) -> DemoPlan:
    """The record's play, with a defender revoking on ``revoke_trick`` or the first trick
    after it where one can (up to trick 11, so that it gets established; None: no revoke).

    The revoke: the last defender to play to that trick who holds the suit led and a trump
    ruffs with his lowest trump (or, at notrump, discards his lowest other card). From the
    revoke on, play is finished with laws.md's AUTO rule (follow with the lowest card,
    else the lowest card, clubs first), since the hands no longer match the record.
    """
    assert record.deal is not None and record.declarer is not None
    assert record.contract is not None and record.contract.bid is not None
    trump = record.contract.bid.denomination.trump
    hands = {s: set(record.deal[s]) for s in Seat}
    recorded = [sc for t in record.tricks for sc in t.cards]
    play: list[tuple[Seat, Card]] = []
    revoke: tuple[int, Seat, Card, Suit] | None = None
    leader = record.declarer.lho
    defenders = {record.declarer.lho, record.declarer.rho}
    for number in range(1, 14):
        trick: list[tuple[Seat, Card]] = []
        order = [leader.rotated(i) for i in range(4)]
        offender: Seat | None = None
        for position, seat in enumerate(order):
            if position == 1 and revoke is None and revoke_trick is not None and \
                    revoke_trick <= number <= 11:
                offender = _revoker(order[1:], trick[0][1].suit, hands, defenders)
            if revoke is None and len(play) < len(recorded) and seat is not offender:
                card = recorded[len(play)][1]
                if card not in hands[seat]:
                    raise DemoError(f"the board's play is not consistent at trick {number}")
            elif seat is offender:
                led = trick[0][1].suit
                ruffs = sorted((c for c in hands[seat] if c.suit is trump), key=lambda c: c.rank)
                others = sorted((c for c in hands[seat] if c.suit is not led),
                                key=lambda c: (_AUTO_SUITS.index(c.suit), c.rank))
                card = ruffs[0] if ruffs and led is not trump else others[0]
                revoke = (number, seat, card, led)
            else:
                card = _auto(hands[seat], trick[0][1].suit if trick else None)
            hands[seat].discard(card)
            trick.append((seat, card))
            play.append((seat, card))
        leader = _winner(trick, trump)
    return DemoPlan(record=record, play=tuple(play), revoke=revoke)


# -- what the terminal shows -----------------------------------------------------------------
# Every word the demo prints, in each language: with --lang vi or zh no English is left but
# card and call symbols, the seat letters N E S W and the PBN record at the end (a file
# format, its tag names fixed). Seats in sentences are named in full (laws/messages.py).
_LABELS: dict[str, dict[str, str]] = {
    "en": {"board": "Board", "dealer": "dealer", "vul": "vul", "auction": "Auction",
           "trick": "Trick", "tricks": "Tricks", "display": "Table display", "alerts": "Alerts",
           "none": "none", "result": "Result", "score": "Score", "turn": "turn",
           "alert": "alert", "by": "by", "played": "as played", "waiting": "waiting",
           "title": "bridge-table demo", "board_n": "Board {n}", "trick_n": "Trick {n}",
           "board_line": "Board {n}, dealer {dealer}, {vul}",
           "result_line": "Board {board}: {contract} by {declarer}, {tricks} tricks "
                          "(as played {played}), Score NS {score}",
           "plan": "board {board}: {contract} by {declarer}; {revoke}",
           "revoke": "{seat} will revoke on trick {trick} ({card} on a {suit} lead)",
           "no_revoke": "no revoke", "passed_out": "passed out", "no_result": "no result",
           "not_found": "{path} not found: publishing the events directly",
           "no_readers": "the bridge did not open every simulated reader",
           "skipped": "the simulated table skipped {what}",
           "not_reported": "the bridge did not report {what}"},
    "vi": {"board": "Ván", "dealer": "người chia bài", "vul": "tình trạng",
           "auction": "Rao giá", "trick": "Nước", "tricks": "Số nước",
           "display": "Màn hình bàn", "alerts": "Báo lỗi", "none": "không có",
           "result": "Kết quả", "score": "Điểm", "turn": "lượt", "alert": "báo lỗi",
           "by": "của", "played": "khi chơi", "waiting": "đang chờ",
           "title": "bridge-table: trình diễn", "board_n": "Ván {n}", "trick_n": "Nước {n}",
           "board_line": "Ván {n}, người chia bài {dealer}, {vul}",
           "result_line": "Ván {board}: {contract} của {declarer}, {tricks} nước "
                          "(khi chơi {played}), điểm NS {score}",
           "plan": "ván {board}: {contract} của {declarer}; {revoke}",
           "revoke": "{seat} sẽ đánh sai ở nước {trick} ({card} khi cái {suit})",
           "no_revoke": "không có lỗi đánh sai", "passed_out": "bốn nín",
           "no_result": "không có kết quả",
           "not_found": "không thấy {path}: gửi thẳng các sự kiện",
           "no_readers": "cầu nối chưa mở hết các đầu đọc mô phỏng",
           "skipped": "bàn mô phỏng bỏ qua {what}",
           "not_reported": "cầu nối không báo {what}"},
    "zh": {"board": "牌套", "dealer": "发牌人", "vul": "局况", "auction": "竞叫",
           "trick": "墩", "tricks": "墩数", "display": "桌面显示", "alerts": "违规",
           "none": "无", "result": "结果", "score": "得分", "turn": "轮到",
           "alert": "违规", "by": "庄家", "played": "实打", "waiting": "等待",
           "title": "bridge-table 演示", "board_n": "第{n}副", "trick_n": "第{n}墩",
           "board_line": "第{n}副，发牌人{dealer}，局况{vul}",
           "result_line": "第{board}副：{contract} 庄家{declarer}，{tricks}墩（实打{played}墩），"
                          "得分 NS {score}",
           "plan": "第{board}副：{contract} 庄家{declarer}；{revoke}",
           "revoke": "{seat}将在第{trick}墩藏牌（{suit}引牌时出{card}）",
           "no_revoke": "无藏牌", "passed_out": "四家不叫", "no_result": "没有结果",
           "not_found": "找不到{path}：直接发布事件",
           "no_readers": "桥接程序未能打开所有模拟读卡器",
           "skipped": "模拟牌桌跳过了{what}",
           "not_reported": "桥接程序未报告{what}"},
}
# The tags of the plain lines ("[alert] ..."); [pbn] is the format's name.
_TAGS: dict[str, dict[str, str]] = {
    "en": {},
    "vi": {"demo": "trình diễn", "board": "ván", "call": "giá", "card": "bài", "table": "bàn",
           "alert": "báo lỗi", "error": "lỗi", "result": "kết quả", "score": "điểm"},
    "zh": {"demo": "演示", "board": "牌套", "call": "叫牌", "card": "出牌", "table": "牌桌",
           "alert": "违规", "error": "错误", "result": "结果", "score": "得分"},
}


def _tag(tag: str, lang: str) -> str:
    return _TAGS.get(lang, {}).get(tag, tag)


def _local(text: object, lang: str, parse: Callable[[str], Any],
           render: Callable[[Any, str], str]) -> str:
    """A value as the wire writes it (``E``, ``HT``, ``Pass``), said in the language; shown
    as given when it is not what it should be."""
    try:
        return render(parse(str(text)), lang)
    except ValueError:
        return str(text)


def _seat_name(seat: object, lang: str) -> str:
    return _local(seat, lang, Seat.parse, seat_name)


def _call_name(call: object, lang: str) -> str:
    return _local(call, lang, Call.parse, lambda c, lg: call_text(c, lg, short=True))


def _card_name(card: object, lang: str) -> str:
    return _local(card, lang, Card.parse, card_text)


def _contract_name(contract: object, lang: str) -> str:
    """``4H``; a passed-out board said in words."""
    return _local(contract, lang, Contract.parse,
                  lambda c, lg: contract_text(c, lg, short=True))


def _vul_name(vul: object, lang: str) -> str:
    return _local(vul, lang, Vulnerability.parse, vulnerability_name)


def _phase_name(phase: object, lang: str) -> str:
    return phase_name(str(phase), lang)


@dataclass
class TableView:
    """The table as the controller's messages describe it, drawn on a terminal or as lines."""

    lang: str
    hands: dict[str, list[Card]]
    names: dict[str, str]
    out: IO[str]
    live: bool
    state: dict[str, Any] = field(default_factory=dict)
    indicator: dict[str, Any] = field(default_factory=dict)
    alerts: dict[int, dict[str, Any]] = field(default_factory=dict)
    result: dict[str, Any] | None = None
    tricks: list[list[tuple[str, str]]] = field(default_factory=list)
    #: the bridge's real outputs when it runs: (MockFactory, GpioConfig, TerminalDisplay)
    hardware: Any = None
    events_seen: int = 0
    event_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _last_lines: tuple[str, ...] = ()
    _last_draw: float = 0.0

    @property
    def t(self) -> dict[str, str]:
        return _LABELS.get(self.lang, _LABELS["en"])

    # -- messages in ----------------------------------------------------------------------
    def on_message(self, kind: str, payload: Any) -> None:
        if not isinstance(payload, dict):
            return
        if kind == "event":
            self.events_seen += 1
            self.event_arrived.set()
            return
        if kind == "state":
            self.state = payload
        elif kind == "indicator":
            before = self.indicator
            self.indicator = payload
            if not self.live and self._indicator_summary(before) != \
                    self._indicator_summary(payload):
                self._line("table", self._indicator_summary(payload))
        elif kind == "alert":
            self.alerts[int(payload.get("id", 0))] = payload
            if not self.live:
                self._line("alert", self._alert_text(payload))
        elif kind == "result":
            self.result = payload
        elif kind == "feed":
            self._feed(payload)
        elif kind == "error" and not self.live:
            self._line("error", json.dumps(payload, ensure_ascii=False))
        if self.live:
            self.draw()

    def _feed(self, p: dict[str, Any]) -> None:
        if p.get("kind") == "card" and p.get("seat") and p.get("card"):
            seat, card = str(p["seat"]), str(p["card"])
            with contextlib.suppress(ValueError):
                self.hands[seat].remove(Card.parse(card))
            number = int(p.get("trick") or len(self.tricks) + 1)
            while len(self.tricks) < number:
                self.tricks.append([])
            self.tricks[number - 1].append((seat, card))
            if not self.live:
                self._line("card", f"{self.t['trick_n'].format(n=number)}: "
                                   f"{_seat_name(seat, self.lang)} {_card_name(card, self.lang)}")
        elif p.get("kind") == "call" and not self.live:
            self._line("call", f"{_seat_name(str(p.get('seat')), self.lang)} "
                               f"{_call_name(str(p.get('call')), self.lang)}")
        elif p.get("kind") == "board" and not self.live:
            self._line("board", self.t["board_line"].format(
                n=p.get("board"), dealer=_seat_name(str(p.get("dealer")), self.lang),
                vul=_vul_name(p.get("vul"), self.lang)))

    def note(self, text: str) -> None:
        if not self.live:
            self._line("demo", text)
        else:
            log.warning("%s", text)

    def _line(self, tag: str, text: str) -> None:
        print(f"[{_tag(tag, self.lang)}] {text}", file=self.out, flush=True)

    def _alert_text(self, a: dict[str, Any]) -> str:
        text = a.get("text") or {}
        msg = text.get(self.lang) or text.get("en") or ""
        if self.lang == "en":
            where = f" {self.t['trick']} {a['trick']}" if a.get("trick") else ""
            seat = f" {_seat_name(a['seat'], self.lang)}" if a.get("seat") else ""
            return (f"#{a.get('id')} {a.get('code')} (Law {a.get('law')}){seat}{where}: "
                    f"{a.get('status')} - {msg}")
        # the code is the wire's English name: the text says what it is, with the Law
        try:
            status = status_name(Status(str(a.get("status"))), self.lang)
        except ValueError:
            status = str(a.get("status"))
        return f"#{a.get('id')} {status}{'：' if self.lang == 'zh' else ': '}{msg}"

    def _indicator_summary(self, ind: dict[str, Any]) -> str:
        seats = ind.get("seats") or {}
        marks = []
        for s in "NESW":
            st = seats.get(s) or {}
            flags = [self.t["turn"]] if st.get("turn") else []
            if st.get("alert"):
                flags.append(self.t["alert"].upper())
            marks.append(f"{s}:{'+'.join(flags) or '-'}")
        lines = (ind.get("display") or {}).get(self.lang) or []
        return " ".join(marks) + (" | " + " / ".join(str(x) for x in lines) if lines else "")

    # -- drawing --------------------------------------------------------------------------
    def _hand(self, seat: str) -> str:
        cards = self.hands.get(seat, [])
        parts = []
        for suit in (Suit.S, Suit.H, Suit.D, Suit.C):
            ranks = "".join(c.rank.char for c in sorted(cards, reverse=True) if c.suit is suit)
            parts.append(f"{suit.symbol}{ranks or '-'}")
        return " ".join(parts)

    def _led_states(self, seat: str) -> tuple[bool, bool]:
        """(turn, alert): read from the bridge's GPIO pins when it runs, else the indicator."""
        if self.hardware is not None:
            factory, gpio, _ = self.hardware
            seat_cfg = gpio.seats.get(seat)
            if seat_cfg is not None:
                def lit(pin: int | None) -> bool:
                    return bool(pin is not None and factory.pin(pin).state)
                return lit(seat_cfg.turn_led), lit(seat_cfg.alert_led)
        st = ((self.indicator.get("seats") or {}).get(seat)) or {}
        return bool(st.get("turn")), bool(st.get("alert"))

    def _leds(self, seat: str) -> str:
        turn, alert = self._led_states(seat)
        return ("\x1b[32m●\x1b[0m" if turn else "○") + ("\x1b[31m●\x1b[0m" if alert else "○")

    def _display_lines(self) -> list[str]:
        if self.hardware is not None:  # what the bridge's display shows, fitted to 20x4
            return [str(x) for x in self.hardware[2].lines]
        return [str(x) for x in (self.indicator.get("display") or {}).get(self.lang) or []]

    def lines(self) -> list[str]:
        t, st = self.t, self.state
        dealer = _seat_name(str(st["dealer"]), self.lang) if st.get("dealer") else "-"
        vul = _vul_name(st["vul"], self.lang) if st.get("vul") else "-"
        phase = _phase_name(st["phase"], self.lang) if st.get("phase") else t["waiting"]
        head = (f"{t['title']} · {t['board_n'].format(n=st.get('board') or '-')} · {t['dealer']} "
                f"{dealer} · {t['vul']} {vul} · {phase}")
        out = [head, ""]

        def seat_line(s: str) -> str:
            return f"{self._leds(s)} {_seat_name(s, self.lang)} ({self.names.get(s, '')})"
        pad = " " * 24
        out += [pad + seat_line("N"), pad + self._hand("N"), ""]
        def left(text: str) -> str:  # padded to 48 columns (a CJK seat name takes two)
            return text + " " * max(0, 48 - columns(text))
        out += [left(seat_line("W")) + seat_line("E"),
                left(self._hand("W")) + self._hand("E"), ""]
        out += [pad + seat_line("S"), pad + self._hand("S"), ""]
        auction = st.get("auction") or []
        out.append(f"{t['auction']}: " + " ".join(f"{s}:{_call_name(str(c), self.lang)}"
                                                  for s, c in auction))
        if st.get("contract"):
            out.append(f"  {_contract_name(st.get('contract'), self.lang)} {t['by']} "
                       f"{_seat_name(str(st.get('declarer')), self.lang)}")
        tricks = st.get("tricks") or {}
        out.append(f"{t['tricks']}: NS {tricks.get('NS', 0)}  EW {tricks.get('EW', 0)}")
        for i, trick in enumerate(self.tricks[-3:], start=max(1, len(self.tricks) - 2)):
            out.append(f"  {t['trick_n'].format(n=i)}: "
                       + " ".join(f"{s}:{_card_name(c, self.lang)}" for s, c in trick))
        out.append("")
        display = self._display_lines()
        out.append(f"{t['display']}:")
        width = max([20] + [columns(x) for x in display])
        out.append("  +" + "-" * width + "+")
        out += [f"  |{x}{' ' * (width - columns(x))}|" for x in display] or \
            [f"  |{' ' * width}|"]
        out.append("  +" + "-" * width + "+")
        out.append(f"{t['alerts']}:" + ("" if self.alerts else f" {t['none']}"))
        out += ["  " + self._alert_text(a) for a in self.alerts.values()]
        if self.result:
            out += ["", f"{t['result']}: {result_line(self.result, self.lang)}"]
        return out

    def draw(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_draw < 0.05:
            return
        lines = tuple(self.lines())
        if lines == self._last_lines and not force:
            return
        self._last_lines, self._last_draw = lines, now
        self.out.write("\x1b[H\x1b[2J" + "\n".join(lines) + "\n")
        self.out.flush()


def result_line(result: dict[str, Any], lang: str = "en") -> str:
    t = _LABELS.get(lang, _LABELS["en"])
    if result.get("contract") in (None, "Pass"):
        return f"{t['board_n'].format(n=result.get('board'))}: {t['passed_out']}, NS 0"
    score = int(result.get("score_ns") or 0)
    # English keeps the declarer's letter ("4H by S"); the other languages name the seat
    declarer = str(result.get("declarer")) if lang == "en" else \
        _seat_name(str(result.get("declarer")), lang)
    return t["result_line"].format(board=result.get("board"), contract=result.get("contract"),
                                   declarer=declarer, tricks=result.get("tricks"),
                                   played=result.get("tricks_played"), score=f"{score:+d}")


# -- the simulated table -----------------------------------------------------------------------
def bridge_config_dict(sim_toml: Path, *, broker_url: str, spool: Path,
                       lang: str) -> dict[str, Any]:
    """``hw_configs/sim.toml`` pointed at the demo's broker and spool, in ``lang``; its
    readers stay ``sim://`` (the simulated table's virtual firmwares, read through the real
    serial path) and its registry ``tags-sim.toml``."""
    import tomllib

    data = tomllib.loads(sim_toml.read_text(encoding="utf-8"))
    data["broker"]["url"] = broker_url
    data["table"]["language"] = lang
    data["spool"]["path"] = str(spool)
    return data


# -- running the parts -----------------------------------------------------------------------
async def _watch(url: BrokerSettings, view: TableView, done: asyncio.Event,
                 ready: asyncio.Event) -> None:
    async with aiomqtt.Client(url.host, url.port) as client:
        await client.subscribe(wire.topic(TABLE, "#"), qos=1)
        ready.set()
        async for m in client.messages:
            kind = m.topic.value.rsplit("/", 1)[-1]
            raw = m.payload if isinstance(m.payload, bytes | bytearray) else \
                str(m.payload).encode()
            try:
                payload = json.loads(raw)
            except ValueError:
                continue
            view.on_message(kind, payload)
            if kind == "result" and isinstance(payload, dict):
                done.set()


def _delay(event: dict[str, Any], speed: float) -> float:
    """Seconds before an event, at speed 1: scans are quick sweeps, calls and cards are not."""
    if event["zone"] == "bid":
        base = 0.8
    elif event["zone"] == "board":
        base = 0.5
    elif event["action"] == "removed":
        base = 0.01
    elif event["zone"] == "tray" and "card" in event:
        base = 0.03 if event.get("_scan") else 0.5
    else:
        base = 0.1
    return base / max(speed, 0.01)


async def _play_direct(url: BrokerSettings, events: Iterable[dict[str, Any]],
                       speed: float) -> None:
    """Without the simulated table: publish the events as a bridge would."""
    async with aiomqtt.Client(url.host, url.port) as client:
        for seq, event in enumerate(events, start=1):
            await asyncio.sleep(_delay(event, speed))
            body = {k: v for k, v in event.items() if not k.startswith("_")}
            body.update(v=wire.VERSION, src="demo-direct", seq=seq, ts=round(time.time(), 3),
                        uid=f"{seq:08X}")
            event = msgspec.convert(body, wire.Event)  # as a bridge encodes it
            await client.publish(wire.topic(TABLE, "event"), wire.encode(event), qos=1)


def _mark_scans(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Tag the hand-scan events so that they go fast."""
    first_call = next((i for i, e in enumerate(events) if e["zone"] == "bid"), len(events))
    return [dict(e, _scan=True) if i < first_call else e for i, e in enumerate(events)]


def _plan_text(plan: DemoPlan, lang: str) -> str:
    """What the simulated players will do, said in the language."""
    t = _LABELS.get(lang, _LABELS["en"])
    rec = plan.record
    if plan.revoke:
        trick, seat, card, suit = plan.revoke
        revoke = t["revoke"].format(
            seat=str(seat) if lang == "en" else _seat_name(str(seat), lang), trick=trick,
            card=str(card) if lang == "en" else _card_name(str(card), lang),
            suit=suit.name if lang == "en" else suit_name(suit, lang))
    else:
        revoke = t["no_revoke"]
    declarer = str(rec.declarer) if lang == "en" else _seat_name(str(rec.declarer), lang)
    return t["plan"].format(board=rec.board, contract=rec.contract, declarer=declarer,
                            revoke=revoke)


async def run_demo(*, lang: str = "en", speed: float = 1.0, out: IO[str] = sys.stdout,
                   live: bool | None = None, board_file: Path | None = None,
                   revoke_trick: int | None = 6, timeout: float = 300.0) -> int:
    record = load_board(board_file)
    plan = plan_board(record, revoke_trick=revoke_trick)
    events = _mark_scans(plan.events())
    assert record.deal is not None
    live = out.isatty() if live is None else live
    names = {"N": record.tags.get("North", ""), "E": record.tags.get("East", ""),
             "S": record.tags.get("South", ""), "W": record.tags.get("West", "")}
    view = TableView(lang=lang, hands={str(s): sorted(record.deal[s]) for s in Seat},
                     names=names, out=out, live=live)
    if not live:
        print(f"[{_tag('demo', lang)}] {_plan_text(plan, lang)}", file=out, flush=True)
    workdir = Path(tempfile.mkdtemp(prefix="bridge-table-demo-"))
    try:
        with Mosquitto(workdir / "broker", persistence=False) as broker:
            settings = BrokerSettings.from_url(broker.url)
            # the deals file of the session: the controller checks the hand scans with it
            engine = build_engine(deals={record.board: DealInfo(
                record.board, record.dealer, record.vulnerability, record.deal)})
            daemon = ControllerDaemon(broker=settings, engine=engine,
                                      journal=Journal(workdir / "journal.sqlite", sync="normal"),
                                      status_interval=3600, info={"demo": True})
            stop = asyncio.Event()
            done = asyncio.Event()
            watching = asyncio.Event()
            tasks = [asyncio.create_task(daemon.run(stop), name="controller"),
                     asyncio.create_task(_watch(settings, view, done, watching), name="watch")]
            try:
                await asyncio.wait_for(daemon.ready.wait(), 20)
                await asyncio.wait_for(watching.wait(), 20)
                player = asyncio.create_task(
                    _play_through_table(settings, workdir, events, speed, view, lang,
                                        finished=stop))
                tasks.append(player)
                await asyncio.wait_for(done.wait(), timeout)
                await asyncio.sleep(0.3)  # the last state and indicator
            finally:
                stop.set()
                # the controller and the player end on ``stop``; the watcher is cancelled
                await _end_tasks([tasks[1]], [tasks[0], *tasks[2:]])
                if daemon.journal is not None:
                    daemon.journal.close()
            if live:
                view.draw(force=True)
            _print_end(view, engine, lang, out, record)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


async def _end_tasks(cancel: Sequence[asyncio.Task[Any]], stopping: Sequence[asyncio.Task[Any]],
                     grace: float = 15.0) -> None:
    """End the demo's tasks for sure: ``cancel`` cancelled; ``stopping`` (the controller and
    the player, told by the stop event) given ``grace`` seconds, then cancelled too.

    A single ``cancel()`` is not enough on Python 3.11: a cancellation that arrives while
    ``asyncio.wait_for`` is finishing (the player's wait for the bridge's report, aiomqtt's
    disconnect) is swallowed, the task runs on and awaiting it never returns: the demo hung
    after the result about one run in six. The parts that can stop by themselves are told
    to (no cancel to lose); the rest are cancelled until done (``cancel_until_done``).
    """
    for task in cancel:
        with contextlib.suppress(Exception):
            await cancel_until_done(task)
    if stopping:
        await asyncio.wait(stopping, timeout=grace)  # asyncio.wait never swallows a cancel
    for task in stopping:
        with contextlib.suppress(Exception):
            await cancel_until_done(task)


async def _play_through_table(settings: BrokerSettings, workdir: Path,
                              events: list[dict[str, Any]], speed: float, view: TableView,
                              lang: str, finished: asyncio.Event | None = None) -> None:
    """The firmware bridge on ``hw_configs/sim.toml`` reading the simulated table
    (``firmware_bridge.sim.table.SimTable``); falls back to publishing the events directly
    when the repository's ``hw_configs/sim.toml`` is not there."""
    import io

    from gpiozero.pins.mock import MockFactory  # type: ignore[import-untyped]

    from firmware_bridge.bridge import Bridge
    from firmware_bridge.config import config_from_dict
    from firmware_bridge.display import TerminalDisplay
    from firmware_bridge.sim.table import SimTable

    sim_toml = REPO_ROOT / "hw_configs" / "sim.toml"
    if not sim_toml.exists():
        view.note(view.t["not_found"].format(path=sim_toml))
        await _play_direct(settings, events, speed)
        return
    async with SimTable.from_config(sim_toml, link_dir=workdir / "readers") as table:
        data = bridge_config_dict(sim_toml, broker_url=settings.url,
                                  spool=workdir / "spool.sqlite", lang=lang)
        config = config_from_dict(data, sim_toml.resolve())
        factory = MockFactory()
        display = TerminalDisplay(config.display.cols, config.display.rows,
                                  stream=io.StringIO(), title=f"table {config.table.id}")
        bridge = Bridge(config, pin_factory=factory, display=display)
        stop = asyncio.Event()
        running = asyncio.create_task(bridge.run(stop), name="bridge")
        try:
            if not await table.wait_hosts(20):
                view.note(view.t["no_readers"])
            view.hardware = (factory, config.gpio, display)
            finished = finished or asyncio.Event()
            for event in events:
                if finished.is_set():
                    break
                await asyncio.sleep(_delay(event, speed))
                seen = view.events_seen
                report = await table.play([{k: v for k, v in event.items()
                                            if not k.startswith("_")}])
                for problem in report.skipped:
                    view.note(view.t["skipped"].format(what=problem))
                # one tag at a time, as hands do: the next waits until the bridge said this one
                deadline = time.monotonic() + 10
                while view.events_seen <= seen and time.monotonic() < deadline \
                        and not finished.is_set():
                    view.event_arrived.clear()
                    await _wait_event(view.event_arrived, 1.0)
                if view.events_seen <= seen and not finished.is_set():
                    view.note(view.t["not_reported"].format(what=event))
            await finished.wait()  # keep the bridge (LEDs, display) until the end
        finally:
            stop.set()
            await asyncio.wait({running}, timeout=10)  # asyncio.wait never swallows a cancel
            with contextlib.suppress(Exception):
                await cancel_until_done(running)


async def _wait_event(event: asyncio.Event, timeout: float) -> None:
    """``event.wait()`` for at most ``timeout`` seconds, through ``asyncio.wait`` (which,
    unlike 3.11's ``wait_for``, never swallows a cancellation)."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter}, timeout=timeout)
    finally:
        waiter.cancel()


def _print_end(view: TableView, engine: Any, lang: str, out: IO[str],
               original: BoardRecord) -> None:
    result = view.result
    if result is None:
        print(f"[{_tag('demo', lang)}] {view.t['no_result']}", file=out)
        return
    print(f"[{_tag('result', lang)}] {result_line(result, lang)}", file=out)
    print(f"[{_tag('score', lang)}] NS {int(result.get('score_ns') or 0):+d}", file=out)
    record = engine.record(TABLE)
    if record is not None:
        # the event, site and players are the board file's; the rest is what was played
        tags = {**original.tags, **{k: v for k, v in record.tags.items() if v}}
        record = dataclasses.replace(record, tags=tags)
        print("[pbn]", file=out)
        print(record_to_pbn(record), file=out)
    out.flush()


def _speed(text: str) -> float:
    """A play speed: a finite number above 0 (0 would never play a card)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, not {text}")
    return value


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="bridge-table demo", description=__doc__.split("\n")[0])
    ap.add_argument("--lang", choices=LANGS, default=os.environ.get("BRIDGE_TABLE_LANG", "en"))
    ap.add_argument("--speed", type=_speed, default=1.0,
                    help="play speed (2 = twice as fast; the board takes ~40 s at 1)")
    ap.add_argument("--board", type=Path, help="another PBN board with full play")
    ap.add_argument("--no-revoke", action="store_true", help="play the board as recorded")
    ap.add_argument("--revoke-trick", type=int, default=6)
    ap.add_argument("--plain", action="store_true", help="plain lines even on a terminal")
    ap.add_argument("--log-level", default="WARNING")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=getattr(logging, args.log_level.upper(), logging.WARNING),
                        format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return asyncio.run(run_demo(lang=args.lang, speed=args.speed,
                                    live=False if args.plain else None,
                                    board_file=args.board,
                                    revoke_trick=None if args.no_revoke else args.revoke_trick))
    except (DemoError, MosquittoError) as e:
        print(f"bridge-table demo: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())

