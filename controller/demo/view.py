"""The demo's terminal view: the table as the controller's messages describe it.

Drawn live on a terminal (hands, auction, tricks, each seat's LEDs, the table display's
text, the alerts) or, when the output is not a terminal, as plain tagged lines; every
word in the chosen language (``LANGS``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from controller.demo.plan import DemoPlan
from controller.formats.pbn import record_to_pbn
from controller.indicators.display_text import columns
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
    ui_text,
    vulnerability_name,
)
from controller.laws.record import BoardRecord

if TYPE_CHECKING:  # the bridge's parts are loaded only when the demo runs them
    from firmware_bridge.config import GpioConfig
    from firmware_bridge.display import TerminalDisplay

__all__ = ["LANGS", "TableView", "plan_text", "print_end", "result_line"]

log = logging.getLogger("bridge_table.demo")

LANGS = ("en", "vi", "zh")

# Every word the demo prints, in each language, but those the display messages already say
# (``ui_text``: "Board {n}", "Trick {n}", NS's score and tricks): with --lang vi or zh no
# English is left but card and call symbols, Law numbers, the table display's rows (seat
# letters N E S W) and the PBN record at the end (a file format, its tag names fixed).
# Seats are named in full (laws/messages.py), or by their letters in English lists.
_LABELS: dict[str, dict[str, str]] = {
    "en": {"board": "Board", "dealer": "dealer", "vul": "vul", "auction": "Auction",
           "trick": "Trick", "tricks": "Tricks", "display": "Table display", "alerts": "Alerts",
           "none": "none", "result": "Result", "score": "Score", "turn": "turn",
           "alert": "alert", "by": "by", "played": "as played", "waiting": "waiting",
           "title": "bridge-table demo",
           "colon": ": ", "comma": ", ",
           "board_line": "Board {n}, dealer {dealer}, {vul}",
           "result_line": "Board {board}: {contract} by {declarer}, {tricks} tricks "
                          "(as played {played}), Score {score}",
           "plan": "board {board}: {contract} by {declarer}; {revoke}",
           "revoke": "{seat} will revoke on trick {trick} ({card} on a lead in {suit})",
           "no_revoke": "no revoke", "passed_out": "passed out", "no_result": "no result",
           "direct": "--direct: the events published as a bridge would, without the "
                     "simulated table's readers",
           "no_readers": "the bridge did not open every simulated reader",
           "skipped": "the simulated table skipped {what}",
           "not_reported": "the bridge did not report {what}",
           "no_leds": "the seat lights are drawn on the screen (real LEDs need {hint})"},
    "vi": {"board": "Ván", "dealer": "người chia bài", "vul": "tình trạng",
           "auction": "Rao giá", "trick": "Nước", "tricks": "Số nước",
           "display": "Màn hình bàn", "alerts": "Báo lỗi", "none": "không có",
           "result": "Kết quả", "score": "Điểm", "turn": "lượt", "alert": "báo lỗi",
           "by": "của", "played": "khi chơi", "waiting": "đang chờ",
           "title": "bridge-table: trình diễn",
           "colon": ": ", "comma": ", ",
           "board_line": "Ván {n}, người chia bài {dealer}, {vul}",
           "result_line": "Ván {board}: {contract} của {declarer}, {tricks} nước "
                          "(khi chơi {played}), điểm {score}",
           "plan": "ván {board}: {contract} của {declarer}; {revoke}",
           "revoke": "{seat} sẽ đánh sai ở nước {trick} ({card} khi cái {suit})",
           "no_revoke": "không có lỗi đánh sai", "passed_out": "bốn nín",
           "no_result": "không có kết quả",
           "direct": "--direct: gửi thẳng các sự kiện như cầu nối, không qua các đầu đọc "
                     "của bàn mô phỏng",
           "no_readers": "cầu nối chưa mở hết các đầu đọc mô phỏng",
           "skipped": "bàn mô phỏng bỏ qua {what}",
           "not_reported": "cầu nối không báo {what}",
           "no_leds": "đèn của mỗi ghế được vẽ trên màn hình (đèn thật cần {hint})"},
    "zh": {"board": "牌套", "dealer": "发牌人", "vul": "局况", "auction": "竞叫",
           "trick": "墩", "tricks": "墩数", "display": "桌面显示", "alerts": "违规",
           "none": "无", "result": "结果", "score": "得分", "turn": "轮到",
           "alert": "违规", "by": "庄家", "played": "实打", "waiting": "等待",
           "title": "bridge-table 演示", "colon": "：",
           "comma": "，",
           "board_line": "第{n}副，发牌人{dealer}，局况{vul}",
           "result_line": "第{board}副：{contract} 庄家{declarer}，{tricks}墩（实打{played}墩），"
                          "得分 {score}",
           "plan": "第{board}副：{contract} 庄家{declarer}；{revoke}",
           "revoke": "{seat}将在第{trick}墩藏牌（{suit}引牌时出{card}）",
           "no_revoke": "无藏牌", "passed_out": "四家不叫", "no_result": "没有结果",
           "direct": "--direct：像桥接程序一样直接发布事件，不经过模拟牌桌的读卡器",
           "no_readers": "桥接程序未能打开所有模拟读卡器",
           "skipped": "模拟牌桌跳过了{what}",
           "not_reported": "桥接程序未报告{what}",
           "no_leds": "座位指示灯显示在屏幕上（真实指示灯需要 {hint}）"},
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


def _seat_mark(seat: object, lang: str) -> str:
    """A seat in a compact list (LEDs, auction, tricks): English keeps its letters N E S W;
    Vietnamese and Chinese name the seat (their letters would be English's: N is Nam,
    South, in Vietnamese; the glossary keeps the letters for 20-column displays)."""
    return str(seat) if lang == "en" else _seat_name(seat, lang)


def _score_text(score: int, lang: str) -> str:
    """North-South's score as the display messages say it (``NS +650``, ``Bắc-Nam +650``)."""
    return ui_text("score", lang, score=f"{score:+d}")


def _tricks_text(tricks: dict[str, Any], lang: str) -> str:
    return ui_text("tricks", lang, ns=tricks.get("NS", 0), ew=tricks.get("EW", 0))


def event_text(event: dict[str, Any], lang: str) -> str:
    """A sensor event as the table sees it: the seat and its card or call, or the board."""
    if event.get("board") is not None:
        return ui_text("board", lang, n=event["board"])
    what = _card_name(event["card"], lang) if event.get("card") else \
        _call_name(event.get("call"), lang)
    return f"{_seat_name(event.get('seat'), lang)} {what}"



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
    hardware: tuple[Any, GpioConfig, TerminalDisplay] | None = None
    events_seen: int = 0
    event_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _last_lines: tuple[str, ...] = ()
    _last_draw: float = 0.0
    #: plain alert lines held until the card or call that caused them is printed (the
    #: controller publishes an event's alert before its feed item)
    _held_alerts: list[str] = field(default_factory=list)

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
        if kind in ("state", "indicator", "result"):
            self.release_alerts()
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
                self._held_alerts.append(self._alert_text(payload))
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
                self._line("card", f"{ui_text('trick', self.lang, n=number)}{self.t['colon']}"
                                   f"{_seat_name(seat, self.lang)} {_card_name(card, self.lang)}")
        elif p.get("kind") == "call" and not self.live:
            self._line("call", f"{_seat_name(str(p.get('seat')), self.lang)} "
                               f"{_call_name(str(p.get('call')), self.lang)}")
        elif p.get("kind") == "board" and not self.live:
            self._line("board", self.t["board_line"].format(
                n=p.get("board"), dealer=_seat_name(str(p.get("dealer")), self.lang),
                vul=_vul_name(p.get("vul"), self.lang)))
        self.release_alerts()

    def release_alerts(self) -> None:
        """Print the alert lines held for the card or call that caused them."""
        held, self._held_alerts = self._held_alerts, []
        for text in held:
            self._line("alert", text)

    def plan(self, plan: DemoPlan) -> None:
        """What the simulated players will do, as the first plain line."""
        if not self.live:
            self._line("demo", plan_text(plan, self.lang))

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
        return f"#{a.get('id')} {status}{self.t['colon']}{msg}"

    def _indicator_summary(self, ind: dict[str, Any]) -> str:
        seats = ind.get("seats") or {}
        marks = []
        for s in "NESW":
            st = seats.get(s) or {}
            flags = [self.t["turn"]] if st.get("turn") else []
            if st.get("alert"):
                flags.append(self.t["alert"].upper())
            marks.append(f"{_seat_mark(s, self.lang)}:{'+'.join(flags) or '-'}")
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
        board = ui_text("board", self.lang, n=st.get("board") or "-")
        head = f"{t['title']} · {board} · {t['dealer']} {dealer} · {t['vul']} {vul} · {phase}"
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
        out.append(f"{t['auction']}{t['colon']}" + " ".join(
            f"{_seat_mark(s, self.lang)}:{_call_name(str(c), self.lang)}" for s, c in auction))
        if st.get("contract"):
            out.append(f"  {_contract_name(st.get('contract'), self.lang)} {t['by']} "
                       f"{_seat_name(str(st.get('declarer')), self.lang)}")
        tricks = st.get("tricks") or {}
        out.append(f"{t['tricks']}{t['colon']}{_tricks_text(tricks, self.lang)}")
        for i, trick in enumerate(self.tricks[-3:], start=max(1, len(self.tricks) - 2)):
            out.append(f"  {ui_text('trick', self.lang, n=i)}{t['colon']}" + " ".join(
                f"{_seat_mark(s, self.lang)}:{_card_name(c, self.lang)}" for s, c in trick))
        out.append("")
        display = self._display_lines()
        out.append(f"{t['display']}{t['colon'].rstrip()}")
        width = max([20] + [columns(x) for x in display])
        out.append("  +" + "-" * width + "+")
        out += [f"  |{x}{' ' * (width - columns(x))}|" for x in display] or \
            [f"  |{' ' * width}|"]
        out.append("  +" + "-" * width + "+")
        out.append(f"{t['alerts']}{t['colon'].rstrip()}" if self.alerts
                   else f"{t['alerts']}{t['colon']}{t['none']}")
        out += ["  " + self._alert_text(a) for a in self.alerts.values()]
        if self.result:
            out += ["", f"{t['result']}{t['colon']}{result_line(self.result, self.lang)}"]
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
        return (f"{ui_text('board', lang, n=result.get('board'))}{t['colon']}{t['passed_out']}"
                f"{t['comma']}{ui_text('score', lang, score=0)}")
    score = _score_text(int(result.get("score_ns") or 0), lang)
    # English keeps the declarer's letter ("4H by S"); the other languages name the seat
    declarer = str(result.get("declarer")) if lang == "en" else \
        _seat_name(str(result.get("declarer")), lang)
    return t["result_line"].format(board=result.get("board"), contract=result.get("contract"),
                                   declarer=declarer, tricks=result.get("tricks"),
                                   played=result.get("tricks_played"), score=score)



def plan_text(plan: DemoPlan, lang: str) -> str:
    """What the simulated players will do, said in the language."""
    t = _LABELS.get(lang, _LABELS["en"])
    rec = plan.record
    if plan.revoke:
        trick, seat, card, suit = plan.revoke
        # the card and the seat as the [card] lines say them (♥9, East), in every language
        revoke = t["revoke"].format(seat=_seat_name(str(seat), lang), trick=trick,
                                    card=_card_name(str(card), lang),
                                    suit=suit_name(suit, lang))
    else:
        revoke = t["no_revoke"]
    return t["plan"].format(board=rec.board, contract=rec.contract,
                            declarer=_seat_name(str(rec.declarer), lang), revoke=revoke)




def print_end(view: TableView, record: BoardRecord | None, out: IO[str]) -> None:
    """The result, the score and the board's PBN (``record``, as played) after the board."""
    view.release_alerts()
    lang, result = view.lang, view.result
    if result is None:
        print(f"[{_tag('demo', lang)}] {view.t['no_result']}", file=out)
        return
    print(f"[{_tag('result', lang)}] {result_line(result, lang)}", file=out)
    print(f"[{_tag('score', lang)}] {_score_text(int(result.get('score_ns') or 0), lang)}",
          file=out)
    if record is not None:
        print("[pbn]", file=out)
        print(record_to_pbn(record), file=out)
    out.flush()
