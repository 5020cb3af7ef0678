"""What the table says, in English, Vietnamese and Chinese.

Alert texts for every irregularity ``Code`` (the contract's alert ``text`` object) and the
short strings the table display needs. Terms follow docs/glossary.md, i.e. the words of the
Vietnamese and Chinese editions of the Laws, so a message reads like the book the director
holds.

Templates use ``{name}`` placeholders and optional segments in square brackets: a segment
``[, trick {trick}]`` is kept only when every placeholder inside it has a value, so a
message never shows an empty slot when the core did not know (say) the trick.

Pure: standard library only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from .cards import Call, CallKind, Card, Contract, Denomination, Rank, Seat, Suit, Vulnerability
from .irregularities import Code, Irregularity, Status

__all__ = [
    "LANGUAGES", "alert_texts", "alert_text", "ui_text", "UI_KEYS", "seat_name", "suit_name",
    "denomination_name", "card_text", "call_text", "contract_text", "vulnerability_name",
    "phase_name", "law_citation", "DETAILS", "MessageError", "AlertParts", "alert_parts",
    "ui_variants", "status_name",
]

LANGUAGES: Final = ("en", "vi", "zh")


class MessageError(KeyError):
    """A display key or language the module has no text for (a programming error)."""


# --- names -------------------------------------------------------------------------------

_SEATS: Final[dict[str, tuple[str, str, str, str]]] = {
    "en": ("North", "East", "South", "West"),
    "vi": ("Bắc", "Đông", "Nam", "Tây"),
    "zh": ("北", "东", "南", "西"),
}
# One-letter seats on a display are N E S W in English and Vietnamese, as cards, PBN and
# LIN write them (the glossary: Vietnamese initials clash, N is Nam; an HD44780 shows Đ as
# D). Chinese has a one-character name for each seat, which every display that can show
# Chinese shows ("轮到N出牌" mixed scripts; a display without CJK falls back to English).
_SEATS_SHORT: Final[dict[str, tuple[str, str, str, str]]] = {
    "en": ("N", "E", "S", "W"),
    "vi": ("N", "E", "S", "W"),
    "zh": ("北", "东", "南", "西"),
}
# indexed by Suit (C D H S)
_SUITS: Final[dict[str, tuple[str, str, str, str]]] = {
    "en": ("clubs", "diamonds", "hearts", "spades"),
    "vi": ("nhép", "rô", "cơ", "bích"),
    "zh": ("梅花", "方块", "红心", "黑桃"),
}
_NOTRUMP: Final[dict[str, str]] = {"en": "notrump", "vi": "không chủ", "zh": "无将"}
_NT_SHORT: Final[dict[str, str]] = {"en": "NT", "vi": "KC", "zh": "无将"}
_PASS: Final[dict[str, str]] = {"en": "Pass", "vi": "nín", "zh": "不叫"}
_DOUBLE: Final[dict[str, str]] = {"en": "Double", "vi": "cont'ra", "zh": "加倍"}
_REDOUBLE: Final[dict[str, str]] = {"en": "Redouble", "vi": "recont'ra", "zh": "再加倍"}
_PASSED_OUT: Final[dict[str, str]] = {"en": "passed out", "vi": "bốn nín", "zh": "四家不叫"}
_VUL: Final[dict[str, dict[Vulnerability, str]]] = {
    "en": {Vulnerability.NONE: "None vulnerable", Vulnerability.NS: "NS vulnerable",
           Vulnerability.EW: "EW vulnerable", Vulnerability.ALL: "Both vulnerable"},
    "vi": {Vulnerability.NONE: "không bên nào trong vùng", Vulnerability.NS: "Bắc-Nam trong vùng",
           Vulnerability.EW: "Đông-Tây trong vùng", Vulnerability.ALL: "cả hai bên trong vùng"},
    "zh": {Vulnerability.NONE: "双无", Vulnerability.NS: "南北有局",
           Vulnerability.EW: "东西有局", Vulnerability.ALL: "双有"},
}
# The table's phases (controller/laws/table.py Phase, and older names). The 1997 Chinese
# Laws have no clarification period: the time between the auction and the opening lead is
# said as "waiting for the opening lead".
_PHASES: Final[dict[str, dict[str, str]]] = {
    "en": {"idle": "waiting for a board", "board": "board in", "scan": "hand scan",
           "auction": "auction", "clarification": "clarification period", "play": "play",
           "review": "end of play", "complete": "board complete", "passed_out": "passed out",
           "waiting": "waiting for a board", "scanning": "hand scan", "lead": "opening lead"},
    "vi": {"idle": "chờ hộp bài", "board": "đã có hộp", "scan": "quét bài",
           "auction": "rao giá", "clarification": "giai đoạn giải thích", "play": "đánh bài",
           "review": "kết thúc đánh bài", "complete": "ván đã xong", "passed_out": "bốn nín",
           "waiting": "chờ hộp bài", "scanning": "quét bài", "lead": "chờ cây cái đầu tiên"},
    "zh": {"idle": "等待牌套", "board": "牌套就位", "scan": "扫描手牌",
           "auction": "竞叫", "clarification": "等待首引", "play": "打牌",
           "review": "打牌结束", "complete": "本副牌结束", "passed_out": "四家不叫",
           "waiting": "等待牌套", "scanning": "扫描手牌", "lead": "等待首引"},
}


def _lang(lang: str) -> str:
    if lang not in LANGUAGES:
        raise MessageError(f"no texts in language {lang!r}; have {LANGUAGES}")
    return lang


def seat_name(seat: Seat, lang: str, *, short: bool = False) -> str:
    return (_SEATS_SHORT if short else _SEATS)[_lang(lang)][seat]


def suit_name(suit: Suit, lang: str) -> str:
    return _SUITS[_lang(lang)][suit]


def denomination_name(denomination: Denomination, lang: str) -> str:
    if denomination is Denomination.NT:
        return _NOTRUMP[_lang(lang)]
    return _SUITS[_lang(lang)][int(denomination)]


def card_text(card: Card, lang: str, *, short: bool = False) -> str:
    """``♥10``; ``short`` gives the wire form ``HT`` (plain ASCII for a character LCD)."""
    _lang(lang)
    if short:
        return str(card)
    rank = "10" if card.rank is Rank.TEN else card.rank.char
    return card.suit.symbol + rank


def call_text(call: Call, lang: str, *, short: bool = False) -> str:
    """``1♥``, ``3NT``, ``Pass``/``nín``/``不叫``; ``short`` keeps PBN letters (``1H``, ``X``)."""
    lang = _lang(lang)
    if call.bid is not None:
        denom = call.bid.denomination
        if short:
            return str(call.bid)
        if denom is Denomination.NT:
            return f"{call.bid.level}{_NT_SHORT[lang]}"
        return f"{call.bid.level}{Suit(int(denom)).symbol}"
    if short and call.kind is not CallKind.PASS:
        return str(call)
    return {CallKind.PASS: _PASS, CallKind.DOUBLE: _DOUBLE,
            CallKind.REDOUBLE: _REDOUBLE}[call.kind][lang]


def contract_text(contract: Contract, lang: str, *, short: bool = False) -> str:
    lang = _lang(lang)
    if contract.bid is None:
        return _PASSED_OUT[lang] if not short or lang != "en" else "Pass"
    return call_text(Call.make_bid(contract.bid.level, contract.bid.denomination), lang,
                     short=short) + contract.doubling.suffix


def vulnerability_name(vul: Vulnerability, lang: str) -> str:
    return _VUL[_lang(lang)][vul]


def phase_name(phase: str, lang: str) -> str:
    """A table phase by the name the table uses; an unknown phase shows as given."""
    return _PHASES[_lang(lang)].get(phase, phase)


def law_citation(law: str, lang: str, *, short: bool = False) -> str:
    """``Law 27A1`` / ``Điều 27A1`` / ``第27A1条``; short: ``L27A1``."""
    lang = _lang(lang)
    if short and lang == "en":
        return f"L{law}"
    return {"en": f"Law {law}", "vi": f"Điều {law}", "zh": f"第{law}条"}[lang]


# --- alert texts -------------------------------------------------------------------------

# Per code: (en, vi, zh) of the irregularity itself. Placeholders: seat, partner,
# other_seat, card, call, trick, board, count, tricks.
_BASE: Final[dict[Code, tuple[str, str, str]]] = {
    Code.WRONG_BOARD: (
        "Wrong board[ {board}]",
        "Sai hộp[ (ván {board})]",
        "错误的牌套[（第{board}副）]",
    ),
    Code.FOULED_BOARD: (
        "Fouled board[ {board}]: [{seat}'s ]hand differs[ at table {other_table}][ ({cards})]",
        "Ván[ {board}] bị xáo trộn: [tay {seat} ]khác[ ở bàn {other_table}][ ({cards})]",
        "[第{board}副]牌套错乱：[{seat}的]手牌[与第{other_table}桌]不同[（{cards}）]",
    ),
    Code.CARDS_FROM_WRONG_BOARD: (
        "[{seat} ]holds cards from another board",
        "[{seat} ]cầm bài của hộp khác",
        "[{seat}]拿了其他牌套的牌",
    ),
    Code.HAND_COUNT: (
        "[{seat}: ]count your cards[ ({count} scanned, 13 needed)]",
        "[{seat}: ]đếm lại bài[ ({count} cây, phải có 13)]",
        "[{seat}：]请清点手牌[（{count}张，应为13张）]",
    ),
    Code.MISSING_CARD: (
        "Missing card[ {card}][ from {seat}'s hand]",
        "Thiếu cây bài[ {card}][ trong tay {seat}]",
        "缺少牌张[{card}][（{seat}）]",
    ),
    Code.INCORRECT_CARD_COUNT: (
        "Incorrect number of cards[: {seat} has {count}]",
        "Số cây bài không đúng[: {seat} có {count} cây]",
        "牌张数目不正确[：{seat}有{count}张]",
    ),
    Code.UNKNOWN_TAG: (
        "A card not of this pack[ at {seat}]: remove it",
        "Cây bài không thuộc bộ bài này[ ở {seat}]: bỏ ra",
        "不属于本副牌的牌张[（{seat}）]：请拿走",
    ),
    Code.CARD_FROM_OTHER_BOARD: (
        "A card of another board's pack[ at {seat}][ ({card}, pack {deck})]: it is not "
        "played; take it away, the director checks both boards",
        "Cây bài của hộp khác[ ở {seat}][ ({card}, bộ {deck})]: không được tính "
        "là đã đánh; bỏ ra, trọng tài kiểm tra cả hai hộp",
        "其他牌套的牌张[（{seat}）][（{card}，第{deck}副）]：不算打出；请拿走，由裁判检查两副牌",
    ),
    Code.CALL_OUT_OF_ROTATION: (
        "Call out of rotation[ by {seat}][ ({call})]",
        "Rao giá sai lượt[ của {seat}][ ({call})]",
        "[{seat}]越序叫牌[（{call}）]",
    ),
    Code.INSUFFICIENT_BID: (
        "Insufficient bid[ by {seat}][ ({call})]",
        "GCN không đủ[ của {seat}][ ({call})]",
        "[{seat}]不足叫牌[（{call}）]",
    ),
    Code.INADMISSIBLE_DOUBLE: (
        "Inadmissible double[ by {seat}]",
        "Cont'ra không hợp lệ[ của {seat}]",
        "[{seat}]不合规定的加倍",
    ),
    Code.INADMISSIBLE_REDOUBLE: (
        "Inadmissible redouble[ by {seat}]",
        "Recont'ra không hợp lệ[ của {seat}]",
        "[{seat}]不合规定的再加倍",
    ),
    Code.CALL_BY_PLAYER_REQUIRED_TO_PASS: (
        "[{seat} ]must pass but called[ {call}]",
        "[{seat} ]buộc phải nín nhưng đã rao giá[ {call}]",
        "[{seat}]必须不叫，却叫了[{call}]",
    ),
    Code.BID_ABOVE_SEVEN: (
        "Bid above the level of seven[ by {seat}][ ({call})]",
        "GCN trên bậc bảy[ của {seat}][ ({call})]",
        "[{seat}]叫牌超过七阶[（{call}）]",
    ),
    Code.CALL_AFTER_AUCTION_CLOSED: (
        "Call after the auction closed[ by {seat}][ ({call})]",
        "Rao giá sau khi kết thúc rao giá[ của {seat}][ ({call})]",
        "[{seat}]在竞叫结束后叫牌[（{call}）]",
    ),
    Code.CHANGE_OF_CALL: (
        "Change of call[ by {seat}][ ({call})]",
        "Thay đổi giá[ của {seat}][ ({call})]",
        "[{seat}]更改叫牌[（{call}）]",
    ),
    Code.CARD_EXPOSED_DURING_AUCTION: (
        "Card exposed during the auction[ by {seat}][: {card}]",
        "Cây bài[ của {seat}] bị lộ trong rao giá[: {card}]",
        "[{seat}]在竞叫中暴露的牌张[：{card}]",
    ),
    Code.OPENING_LEAD_OUT_OF_TURN: (
        "Opening lead out of turn[ by {seat}][ ({card})]",
        "Đánh cây cái đầu tiên sai lượt[ của {seat}][ ({card})]",
        "[{seat}]越序首引[（{card}）]",
    ),
    Code.LEAD_OUT_OF_TURN: (
        "Lead out of turn[ by {seat}][ ({card})][, trick {trick}]",
        "Đánh cái sai lượt[ của {seat}][ ({card})][, nước {trick}]",
        "[{seat}]越序引牌[（{card}）][，第{trick}墩]",
    ),
    Code.PREMATURE_PLAY: (
        "Premature play[ by {seat}][ ({card})][, trick {trick}]",
        "Đánh bài trước lượt[ của {seat}][ ({card})][, nước {trick}]",
        "[{seat}]过早出牌[（{card}）][，第{trick}墩]",
    ),
    Code.PENALTY_CARD_NOT_PLAYED: (
        "[{seat} ]did not play the penalty card[ {card}]",
        "[{seat} ]không đánh cây phạt[ {card}]",
        "[{seat}]未打出罚张[{card}]",
    ),
    Code.REVOKE: (
        "Revoke[ by {seat}][, trick {trick}]",
        "Lỗi đánh sai[ của {seat}][, nước {trick}]",
        "[{seat}]藏牌[，第{trick}墩]",
    ),
    Code.FIFTH_CARD: (
        "Fifth card in a trick[ by {seat}][ ({card})]",
        "Cây bài thứ năm trong một nước[ của {seat}][ ({card})]",
        "[{seat}]一墩中的第五张牌[（{card}）]",
    ),
    Code.EXTRA_CARD_SAME_TRICK: (
        "[{seat} ]played a second card[ ({card})][ to trick {trick}]",
        "[{seat} ]đánh cây thứ hai[ ({card})][ vào nước {trick}]",
        "[{seat}][在第{trick}墩]出了第二张牌[（{card}）]",
    ),
    Code.DEFECTIVE_TRICK: (
        "Defective trick[ {trick}][: {seat} did not play to it]",
        "Nước bài bị lỗi[ (nước {trick})][: {seat} không đánh vào nước này]",
        "有缺陷的牌墩[（第{trick}墩）][：{seat}未出牌]",
    ),
    Code.CARD_NOT_IN_HAND: (
        "[{seat} ]played a card not in that hand[ ({card})]",
        "[{seat} ]đánh cây không có trên tay[ ({card})]",
        "[{seat}]打出不在其手中的牌[（{card}）]",
    ),
    Code.CARD_WITHDRAWN: (
        "[{seat} ]withdrew a played card[ ({card})]",
        "[{seat} ]rút lại cây bài đã đánh[ ({card})]",
        "[{seat}]收回已打出的牌[（{card}）]",
    ),
}

# Overrides of the base text for one status (the glossary's "established revoke").
_BASE_BY_STATUS: Final[dict[tuple[Code, Status], tuple[str, str, str]]] = {
    (Code.REVOKE, Status.ESTABLISHED): (
        "Established revoke[ by {seat}][, trick {trick}]",
        "Lỗi đánh sai được xác định[ của {seat}][, nước {trick}]",
        "[{seat}]藏牌成立[，第{trick}墩]",
    ),
}

# Names for the display, each at most 20 columns (a CJK character takes two; 18 leaves room
# for the seat): the display gives an alert a row of its own for the name and the seat, the
# citation and the status another (controller/indicators/display_text.py). Each names the offence as
# a player reads it at the table: "sai luật" (against the Laws, 44 in the Vietnamese Laws)
# rather than the rule book's "trái lệ"; the call made when the player had to pass, not the
# duty to pass; the penalty card not played, not "not yet played"; a revoke as the wrong
# suit played (43B2b's "lỗi đánh sai chất").
_SHORT: Final[dict[Code, tuple[str, str, str]]] = {
    Code.WRONG_BOARD: ("Wrong board", "Sai hộp", "错误的牌套"),
    Code.CARDS_FROM_WRONG_BOARD: ("Cards: other board", "Bài của hộp khác", "其他牌套的牌"),
    Code.FOULED_BOARD: ("Fouled board", "Ván bị xáo trộn", "牌套错乱"),
    Code.HAND_COUNT: ("Count your cards", "Đếm lại bài", "请清点手牌"),
    Code.MISSING_CARD: ("Missing card", "Thiếu cây bài", "缺少牌张"),
    Code.INCORRECT_CARD_COUNT: ("Wrong card count", "Sai số cây bài", "牌张数目不正确"),
    Code.UNKNOWN_TAG: ("Card not of the pack", "Bài không thuộc bộ", "非本副牌的牌张"),
    Code.CARD_FROM_OTHER_BOARD: ("Other board's card", "Cây của hộp khác", "别副牌套的牌"),
    Code.CALL_OUT_OF_ROTATION: ("Call out of rotation", "Rao giá sai lượt", "越序叫牌"),
    Code.INSUFFICIENT_BID: ("Insufficient bid", "GCN không đủ", "不足叫牌"),
    Code.INADMISSIBLE_DOUBLE: ("Inadmissible double", "Cont'ra sai luật", "不合规定的加倍"),
    Code.INADMISSIBLE_REDOUBLE: ("Inadmissible XX", "Recont'ra sai luật", "不合规定的再加倍"),
    Code.CALL_BY_PLAYER_REQUIRED_TO_PASS: ("Called, must pass", "Rao khi phải nín",
                                           "必须不叫却叫牌"),
    Code.BID_ABOVE_SEVEN: ("Bid above seven", "GCN trên bậc bảy", "叫牌超过七阶"),
    Code.CALL_AFTER_AUCTION_CLOSED: ("Call after auction", "Giá sau rao giá", "竞叫结束后叫牌"),
    Code.CHANGE_OF_CALL: ("Change of call", "Thay đổi giá", "更改叫牌"),
    Code.CARD_EXPOSED_DURING_AUCTION: ("Card exposed", "Cây bài bị lộ", "暴露的牌张"),
    Code.OPENING_LEAD_OUT_OF_TURN: ("Lead out of turn", "Đánh cái sai lượt", "越序首引"),
    Code.LEAD_OUT_OF_TURN: ("Lead out of turn", "Đánh cái sai lượt", "越序引牌"),
    Code.PREMATURE_PLAY: ("Premature play", "Đánh trước lượt", "过早出牌"),
    Code.PENALTY_CARD_NOT_PLAYED: ("Penalty card", "Không đánh cây phạt", "未打出罚张"),
    Code.REVOKE: ("Revoke", "Lỗi đánh sai chất", "藏牌"),
    Code.FIFTH_CARD: ("Fifth card", "Cây bài thứ năm", "第五张牌"),
    Code.EXTRA_CARD_SAME_TRICK: ("Second card to trick", "Đánh cây thứ hai", "同墩出第二张牌"),
    Code.DEFECTIVE_TRICK: ("Defective trick", "Nước bài bị lỗi", "有缺陷的牌墩"),
    Code.CARD_NOT_IN_HAND: ("Card not in hand", "Không có cây này", "非手中的牌"),
    Code.CARD_WITHDRAWN: ("Card withdrawn", "Rút lại cây bài", "收回已出的牌"),
}

_STATUS: Final[dict[Status, tuple[str, str, str]]] = {
    Status.OPEN: ("", "", ""),
    Status.ESTABLISHED: ("established", "được xác định", "已成立"),
    Status.CORRECTED: ("corrected", "đã sửa", "已纠正"),
    Status.RESOLVED: ("resolved", "đã giải quyết", "已解决"),
}
def status_name(status: Status, lang: str) -> str:
    """An alert's status as a word: ``open``, ``established`` ..."""
    return _STATUS_SHORT[status][_index(lang)][0]


# Ways to say the status on a display row, longest first; the display takes the first that
# fits (with the fullest citation of the Law that leaves room for one).
_STATUS_SHORT: Final[dict[Status, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {
    Status.OPEN: (("open",), ("chưa xử lý",), ("待处理",)),
    Status.ESTABLISHED: (("established",), ("được xác định", "đã xác định"), ("已成立",)),
    Status.CORRECTED: (("corrected",), ("đã sửa",), ("已纠正",)),
    Status.RESOLVED: (("resolved",), ("đã giải quyết", "đã xong"), ("已解决",)),
}

#: Outcome phrases by ``Irregularity.detail``. The auction and play modules set ``detail``
#: to one of these keys (docs/laws.md lists which); an unknown detail adds no phrase.
DETAILS: Final[dict[str, tuple[str, str, str]]] = {
    "accepted": (
        "accepted: it stands",
        "được chấp nhận: giữ nguyên giá trị",
        "已被接受：有效",
    ),
    "rejected": (
        "not accepted: the rectification applies",
        "không được chấp nhận: áp dụng biện pháp khắc phục",
        "不接受：按规定纠正",
    ),
    "cancelled": ("cancelled", "bị hủy", "已取消"),
    "cancelled_later": (
        "cancelled with every later call; the turn goes back to the player due",
        "bị hủy cùng mọi giá sau đó; lượt trở lại người chơi đúng lượt",
        "该叫牌及其后所有叫牌取消，轮回到依序该叫牌的赛员",
    ),
    "repeated": (
        "the call is repeated: no further rectification",
        "giá được lặp lại: không có biện pháp khắc phục nào khác",
        "重复原叫：不再纠正",
    ),
    "lowest_sufficient": (
        "replaced by the lowest sufficient bid in the same denomination: no rectification",
        "thay bằng GCN đủ thấp nhất cùng chất (hoặc cùng không chủ): không có biện pháp "
        "khắc phục",
        "更正为同一定约名目的最低的足够叫牌：不予纠正",
    ),
    "comparable": (
        "comparable call: no further rectification",
        "giá tương đương: không có biện pháp khắc phục nào khác",
        "可比叫牌：不再纠正",
    ),
    "not_comparable": (
        "not a comparable call[: {partner} must pass for the rest of the auction]",
        "không phải giá tương đương[: {partner} buộc phải nín đến hết rao giá]",
        "非可比叫牌[：{partner}在其余竞叫中必须不叫]",
    ),
    "pass_next": (
        "[{partner} ]must pass at the next turn",
        "[{partner} ]buộc phải nín ở lượt rao giá gần nhất",
        "[{partner}]下一轮必须不叫",
    ),
    "pass_all": (
        "[{partner} ]must pass for the rest of the auction",
        "[{partner} ]buộc phải nín đến hết rao giá",
        "[{partner}]在其余竞叫中必须不叫",
    ),
    "substituted_pass": (
        "a pass is substituted; both players of the side must pass for the rest of the auction",
        "thay bằng giá nín; cả hai người chơi bên vi phạm buộc phải nín đến hết rao giá",
        "以不叫替代；违规方两人在其余竞叫中必须不叫",
    ),
    "honour": (
        "an honour[: {partner} must pass at the next turn][; a penalty card if {seat} defends]",
        "cây nhân tố[: {partner} buộc phải nín ở lượt rao giá gần nhất][; thành cây phạt "
        "nếu {seat} trở thành ĐTPN]",
        "大牌[：{partner}下一轮必须不叫][；若{seat}成为防家则为罚张]",
    ),
    "low": (
        "a single card below an honour: no rectification[ unless {seat} defends]",
        "một cây không phải nhân tố: không có biện pháp khắc phục[ trừ khi {seat} trở thành "
        "ĐTPN]",
        "单张小牌：[除非{seat}成为防家，否则]不予纠正",
    ),
    "premature_lead": (
        "a premature lead[: {partner} must pass at the next turn]",
        "cây dùng để đánh cái sớm[: {partner} buộc phải nín ở lượt rao giá gần nhất]",
        "过早引牌[：{partner}下一轮必须不叫]",
    ),
    "two_or_more": (
        "two or more cards[: {partner} must pass at the next turn]",
        "lộ từ hai cây trở lên[: {partner} buộc phải nín ở lượt rao giá gần nhất]",
        "暴露两张或以上[：{partner}下一轮必须不叫]",
    ),
    "returned": (
        "the card goes back to the hand, no rectification",
        "cây bài được đưa trở lại tay, không có biện pháp khắc phục",
        "该牌收回手中，不予纠正",
    ),
    "penalty_card": (
        "[{card} ]is a penalty card",
        "[{card} ]là cây phạt",
        "[{card}]成为罚张",
    ),
    "major_penalty_card": (
        "[{card} ]is a major penalty card",
        "[{card} ]là cây phạt nặng",
        "[{card}]成为大罚张",
    ),
    "minor_penalty_card": (
        "[{card} ]is a minor penalty card",
        "[{card} ]là cây phạt nhẹ",
        "[{card}]成为小罚张",
    ),
    "lead_restriction": (
        "declarer may restrict[ {partner}'s] lead",
        "ĐTTC có thể hạn chế cây cái[ của {partner}]",
        "庄家可以对[{partner}的]引牌加以限制",
    ),
    "must_correct": (
        "it must be corrected",
        "phải sửa lại",
        "必须纠正",
    ),
    "64A1": (
        "[{tricks_transferred_n} ]transferred to the non-offending side (64A1)",
        "[{tricks_transferred_n} ]chuyển cho bên không vi phạm (64A1)",
        "[{tricks_transferred_n}]转给非违规方（64A1）",
    ),
    "64A2": (
        "[{tricks_transferred_n} ]transferred to the non-offending side (64A2)",
        "[{tricks_transferred_n} ]chuyển cho bên không vi phạm (64A2)",
        "[{tricks_transferred_n}]转给非违规方（64A2）",
    ),
    "no_transfer": (
        "no trick transferred[ ({rule})]; the director may adjust (64C)",
        "không chuyển nước nào[ ({rule})]; trọng tài có thể xử kết quả đền bù (64C)",
        "不转移赢墩[（{rule}）]；裁判可以调整（64C）",
    ),
    "62D": (
        "revoke on trick 12: it must be corrected before the hands go back into the board; "
        "no trick transferred",
        "lỗi đánh sai ở nước thứ mười hai: phải sửa trước khi bài trở lại hộp; không chuyển nước",
        "第12墩藏牌：须在牌放回牌套前纠正；不转移赢墩",
    ),
    "67B1": (
        "a card is added to the trick; it counts as a revoke[: {tricks_transferred_n} "
        "transferred]",
        "thêm một cây vào nước bài; tính là lỗi đánh sai[: chuyển {tricks_transferred_n}]",
        "补一张牌到该墩；按藏牌处理[：转移{tricks_transferred_n}]",
    ),
    "lead": (
        "ruled a lead",
        "trọng tài xác định đây là cây cái",
        "裁判裁定为引牌",
    ),
    "found": ("the card is found", "đã tìm thấy cây bài", "已找到该牌"),
    "cleared": ("cleared by the director", "trọng tài đã xử lý xong", "裁判已处理"),
    "swapped": ("boards swapped", "đã đổi hộp", "已换牌套"),
    "adjusted": (
        "the director adjusts[: declarer {tricks} tricks]",
        "trọng tài điều chỉnh[: ĐTTC {tricks} nước]",
        "裁判调整[：庄家{tricks}墩]",
    ),
    "freeze": (
        "play stops: call the director",
        "dừng đánh bài: gọi trọng tài",
        "停止打牌：召请裁判",
    ),
    # the keys below are the ones controller/laws/auction.py, play.py and table.py set
    "pending": (
        "waiting for the next call or the director",
        "chờ giá tiếp theo hoặc trọng tài",
        "等待下一个叫牌或裁判",
    ),
    # 1.6: where the Laws give the director the choice (45E, 53B, 32 or 36)
    "director_choice": (
        "the director chooses which Law applies",
        "trọng tài chọn điều luật áp dụng",
        "由裁判选择适用的条款",
    ),
    "while_pending": (
        "made while another irregularity was still open",
        "xảy ra khi một vi phạm khác chưa được giải quyết",
        "发生在另一违规尚未处理之时",
    ),
    "replaced": (
        "replaced[ by {replacement}]",
        "được thay[ bằng {replacement}]",
        "已替换[为{replacement}]",
    ),
    "awaiting_comparable": (
        "the director decides whether[ {replacement}] is a comparable call",
        "trọng tài quyết định[ {replacement}] có phải giá tương đương không",
        "由裁判决定[{replacement}]是否为可比叫牌",
    ),
    "rho_acted": (
        "the right-hand opponent called over it",
        "ĐTBP đã rao giá sau đó",
        "上家已在其后叫牌",
    ),
    "same_denomination": (
        "the offender bid the same denomination again",
        "người vi phạm rao lại cùng chất (hoặc cùng không chủ)",
        "违规者再次叫出同一定约名目",
    ),
    "other_call": (
        "the offender made a different call",
        "người vi phạm rao một giá khác",
        "违规者作出了不同的叫牌",
    ),
    "reverted": (
        "the auction goes back[ to {reverted_to}]",
        "phần rao giá trở lại[ lượt {reverted_to}]",
        "竞叫退回[到{reverted_to}]",
    ),
    "auction_ended": (
        "the auction has ended",
        "rao giá đã kết thúc",
        "竞叫已结束",
    ),
    "simultaneous": (
        "made with the proper play: deemed subsequent to it, no penalty (58A)",
        "đánh cùng lúc với lượt đánh đúng: coi như đánh sau, không phạt (58A)",
        "与正当出牌同时：视为在其之后，不罚（58A）",
    ),
    "unintended": (
        "an unintended call: the intended call stands (25A)",
        "giá không chủ định: giá chủ định có giá trị (25A)",
        "疏忽的叫牌：后一叫牌成立（25A）",
    ),
    "declaring_side": (
        "a card of the declaring side: no penalty card",
        "cây bài của bên ĐTTC: không phải cây phạt",
        "庄家方的牌：不成为罚张",
    ),
    "declarer": (
        "declarer's card: no rectification",
        "cây bài của ĐTTC: không có biện pháp khắc phục",
        "庄家的牌：不予纠正",
    ),
    "57D": (
        "treated as played at the proper turn (57D)",
        "được coi là đánh đúng lượt (57D)",
        "视为在正确轮次打出（57D）",
    ),
    "no_rectification": (
        "no rectification",
        "không có biện pháp khắc phục",
        "不予纠正",
    ),
    "67A": (
        "corrected before both sides played to the next trick (67A)",
        "đã sửa trước khi cả hai bên đánh ở nước kế tiếp (67A)",
        "在双方出牌到下一墩之前已纠正（67A）",
    ),
    "61A": (
        "not playing a card a rectification requires is a revoke (61A)",
        "không đánh cây bài theo biện pháp khắc phục là lỗi đánh sai (61A)",
        "未按纠正要求出牌即为藏牌（61A）",
    ),
    "62C3": (
        "both sides revoked on the same trick (62C3)",
        "cả hai bên đánh sai trong cùng một nước (62C3)",
        "双方在同一墩藏牌（62C3）",
    ),
    "stays_played": ("the card stays played", "cây bài vẫn được tính là đã đánh", "该牌视为已打出"),
    "corrected": ("corrected", "đã sửa", "已纠正"),
    "refused": (
        "not accepted: the rectification applies",
        "không được chấp nhận: áp dụng biện pháp khắc phục",
        "不接受：按规定纠正",
    ),
    "not_scheduled": (
        "not scheduled at this table for the round",
        "không thuộc lịch của bàn này ở vòng đấu này",
        "不在本桌本轮的安排中",
    ),
    "already_played": (
        "already played by one of these players",
        "một trong các người chơi này đã chơi ván này",
        "本桌有牌手已打过此牌",
    ),
    "other_board_read": (
        "[board {other_board} ]read on the board reader",
        "[hộp {other_board} ]được đọc trên đầu đọc hộp",
        "[牌套{other_board}]被读入",
    ),
    "removed": ("the card was taken away", "cây bài đã được bỏ ra", "该牌已拿走"),
    "two_hands": (
        "the card is in two hands[ ({other_seat})]",
        "cây bài nằm trong hai tay bài[ ({other_seat})]",
        "同一张牌在两手牌中[（{other_seat}）]",
    ),
    "rotated": (
        "the hands are in the wrong seats (board turned)",
        "các tay bài bị đặt sai hướng (hộp bị xoay)",
        "各手牌位置错误（牌套方向放错）",
    ),
    "mismatch": (
        "the hand differs from the recorded deal",
        "tay bài khác với ván bài đã ghi",
        "手牌与记录的牌例不符",
    ),
    "over_under": (
        "one hand has too many cards, another too few",
        "một tay thừa bài, một tay thiếu bài",
        "一手牌多、另一手牌少",
    ),
    "unscanned": (
        "the hand was not scanned before the call",
        "tay bài chưa được quét trước khi rao giá",
        "叫牌前未扫描手牌",
    ),
    "count": (
        "the seat is locked until it holds 13 cards",
        "chỗ ngồi bị khóa cho đến khi đủ 13 cây",
        "该座位锁定，直到持有13张牌",
    ),
    "board_replaced": ("the board was replaced", "hộp bài đã được thay", "牌套已更换"),
    "undone": ("struck from the record (undo)", "đã xóa khỏi biên bản (hủy)", "已从记录中撤销"),
}

#: A detail said differently while the irregularity is still open.
DETAILS_OPEN: Final[dict[str, tuple[str, str, str]]] = {
    "67A": (
        "it can still be put right: the offender adds a card (67A)",
        "vẫn có thể sửa: người vi phạm đánh bù một cây (67A)",
        "仍可纠正：违规者补出一张牌（67A）",
    ),
    "corrected": ("it must be corrected", "phải sửa lại", "必须纠正"),
}

# Said of an open irregularity that has no outcome yet.
_DIRECTOR: Final = ("call the director", "gọi trọng tài", "召请裁判")

_SEGMENT: Final = re.compile(r"\[([^\[\]]*)\]")
_FIELD: Final = re.compile(r"\{(\w+)\}")


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Fill ``{name}``s; drop ``[...]`` segments with a placeholder that has no value."""

    def segment(match: re.Match[str]) -> str:
        body = match.group(1)
        if all(values.get(name) for name in _FIELD.findall(body)):
            return body
        return ""

    text = _SEGMENT.sub(segment, template)
    # Placeholders outside segments are required; a missing one reads as "?" rather than
    # crashing the alert path.
    return _FIELD.sub(lambda m: values.get(m.group(1)) or "?", text)


def _index(lang: str) -> int:
    return LANGUAGES.index(_lang(lang))


def _values(irr: Irregularity, lang: str, short: bool) -> dict[str, str]:
    values: dict[str, str] = {}
    if irr.seat is not None:
        values["seat"] = seat_name(irr.seat, lang, short=short)
        values["partner"] = seat_name(irr.seat.partner, lang, short=short)
    if irr.card is not None:
        values["card"] = card_text(irr.card, lang, short=short)
    if irr.call is not None:
        values["call"] = call_text(irr.call, lang, short=short)
    if irr.trick is not None:
        values["trick"] = str(irr.trick)
    for key, value in irr.params:
        values[key] = _localise(_typed(key, value), lang, short)
    values["law"] = irr.law
    moved = irr.param("tricks_transferred")
    if isinstance(moved, int):
        values["tricks_transferred_n"] = {
            "en": f"{moved} trick" + ("" if moved == 1 else "s"),
            "vi": f"{moved} nước", "zh": f"{moved}墩"}[lang]
    return values


# Params the core passes as text (``replacement="2S"``): named here so they read as calls,
# cards or seats in each language.
_CALL_PARAMS: Final = frozenset({"replacement", "original", "last_bid", "call"})
_CARD_PARAMS: Final = frozenset({"card", "cards"})
_SEAT_PARAMS: Final = frozenset({"other_seat", "due", "reverted_to", "seat", "offender"})


def _typed(key: str, value: object) -> object:
    if not isinstance(value, str):
        return value
    try:
        if key in _CALL_PARAMS:
            return Call.parse(value)
        if key in _CARD_PARAMS and " " not in value.strip():
            return Card.parse(value)
        if key in _SEAT_PARAMS:
            return Seat.parse(value)
    except ValueError:
        pass    # not what the name promised: shown as given
    return value


def _localise(value: object, lang: str, short: bool) -> str:
    if isinstance(value, Seat):
        return seat_name(value, lang, short=short)
    if isinstance(value, Card):
        return card_text(value, lang, short=short)
    if isinstance(value, Call):
        return call_text(value, lang, short=short)
    if isinstance(value, Contract):
        return contract_text(value, lang, short=short)
    if isinstance(value, Vulnerability):
        return vulnerability_name(value, lang)
    if isinstance(value, Suit):
        return suit_name(value, lang)
    if isinstance(value, str) and len(value) == 1 and value in "NESW":
        return seat_name(Seat.parse(value), lang, short=short)
    if isinstance(value, (list, tuple, frozenset, set)):
        items = sorted(value) if isinstance(value, (frozenset, set)) else list(value)
        return " ".join(_localise(v, lang, short) for v in items)
    if value is None:
        return ""
    return str(value)


def _detail_keys(detail: str) -> list[str]:
    """``detail`` may name several variants at once: ``"honour,pass_next"``."""
    keys = [k.strip() for k in re.split(r"[,+ ]", detail) if k.strip()]
    out: list[str] = []
    for key in keys:
        if key.startswith("64B") and "64B" not in out:
            out.append("no_transfer")
        elif key in DETAILS and key not in out:
            out.append(key)
    return out


def _phrase(key: str, status: Status) -> tuple[str, str, str]:
    if status is Status.OPEN and key in DETAILS_OPEN:
        return DETAILS_OPEN[key]
    return DETAILS[key]


def alert_text(irr: Irregularity, lang: str, *, short: bool = False) -> str:
    """One language's text for an irregularity as it stands (code, status, detail, params)."""
    i = _index(lang)
    values = _values(irr, lang, short)
    for key in re.split(r"[,+ ]", irr.detail):
        if key.startswith("64B"):
            values.setdefault("rule", key)
    if short:
        parts = alert_parts(irr, lang)
        return " ".join(p for p in (parts.cites[0], parts.name, parts.seat, parts.statuses[0])
                        if p)
    cite = law_citation(irr.law, lang)
    base_template = _BASE_BY_STATUS.get((irr.code, irr.status), _BASE[irr.code])[i]
    text = _fill(base_template, values)
    text = text[:1].upper() + text[1:]
    phrases = [_fill(_phrase(key, irr.status)[i], values) for key in _detail_keys(irr.detail)]
    status = _STATUS[irr.status][i]
    # The status word is said only when no outcome phrase says more ("accepted", "64A1").
    if status and not phrases and (irr.code, irr.status) not in _BASE_BY_STATUS:
        phrases.append(status)
    if irr.status is Status.OPEN and not phrases:
        phrases.append(_DIRECTOR[i])
    sep = {"en": ": ", "vi": ": ", "zh": "："}[lang]
    joiner = {"en": "; ", "vi": "; ", "zh": "；"}[lang]
    end = {"en": ".", "vi": ".", "zh": "。"}[lang]
    body = text + (joiner + joiner.join(phrases) if phrases else "")
    return cite + sep + body + end


@dataclass(frozen=True)
class AlertParts:
    """An alert's pieces for a display, each with its shorter forms (longest first)."""

    cites: tuple[str, ...]      # "Điều 27", then shorter: "L27" in English, the bare "27"
    name: str                   # "GCN không đủ": at most 20 columns
    seat: str                   # "E" ("" when the irregularity names no seat)
    statuses: tuple[str, ...]   # "được xác định", then "đã xác định"


def _short_name(code: Code, i: int) -> str:
    """The display name; a code with none yet shows its text without the optional parts."""
    if code in _SHORT:
        return _SHORT[code][i]
    text = _fill(_BASE[code][i], {})
    return text[:1].upper() + text[1:]


def alert_parts(irr: Irregularity, lang: str) -> AlertParts:
    """The display's pieces of an alert: the Law, the short name, the seat letter and the
    status, for controller/indicators/display_text.py to lay out on the rows it has."""
    i = _index(lang)
    cites = (law_citation(irr.law, lang), law_citation(irr.law, lang, short=True), irr.law)
    return AlertParts(
        cites=tuple(dict.fromkeys(cites)),
        name=_short_name(irr.code, i),
        seat=seat_name(irr.seat, lang, short=True) if irr.seat is not None else "",
        statuses=_STATUS_SHORT[irr.status][i],
    )


def alert_texts(irr: Irregularity, *, short: bool = False) -> dict[str, str]:
    """The contract's alert ``text`` object: ``{"en": ..., "vi": ..., "zh": ...}``."""
    return {lang: alert_text(irr, lang, short=short) for lang in LANGUAGES}


# --- display strings ---------------------------------------------------------------------

# key -> (en, vi, zh): sentences, with full seat names.
_UI: Final[dict[str, tuple[str, str, str]]] = {
    "your_turn": ("Your turn", "Đến lượt bạn", "轮到你"),
    "turn": ("{seat} to play", "Lượt {seat} đánh bài", "轮到{seat}出牌"),
    "call_turn": ("{seat} to call", "Lượt {seat} rao giá", "轮到{seat}叫牌"),
    "auction": ("Auction", "Rao giá", "竞叫"),
    "play": ("Play", "Đánh bài", "打牌"),
    "board": ("Board {n}", "Ván {n}", "第{n}副"),
    "board_info": ("Board {n}: {dealer} deals, {vul}", "Ván {n}: {dealer} chia bài, {vul}",
                   "第{n}副 {dealer}发牌 {vul}"),
    "dealer": ("Dealer {seat}", "Người chia bài {seat}", "发牌人{seat}"),
    "vulnerability": ("{vul}", "Tình trạng: {vul}", "局况：{vul}"),
    "contract": ("Contract {contract} by {seat}", "Hiệp ước {contract} của {seat}",
                 "定约{contract} 庄家{seat}"),
    "contract_tricks": ("{contract} by {seat}: NS {ns}, EW {ew}",
                        "{contract} của {seat}: Bắc-Nam {ns}, Đông-Tây {ew}",
                        "{contract} 庄家{seat} 南北{ns} 东西{ew}"),
    "passed_out": ("Passed out", "Bốn nín", "四家不叫"),
    "lead": ("Opening lead: {seat}", "Cây cái đầu tiên: {seat}", "首引：{seat}"),
    "lead_face_down": ("{seat}: lead face down", "{seat}: đánh cái úp", "{seat}：首引牌面朝下"),
    "dummy": ("Dummy {seat}", "Mor {seat}", "明手{seat}"),
    "declarer": ("Declarer {seat}", "ĐTTC {seat}", "庄家{seat}"),
    "trick": ("Trick {n}", "Nước {n}", "第{n}墩"),
    "tricks": ("NS {ns} EW {ew}", "Bắc-Nam {ns} Đông-Tây {ew}", "南北{ns} 东西{ew}"),
    "result": ("{contract} by {seat}, {tricks} tricks", "{contract} của {seat}, {tricks} nước",
               "{contract} 庄家{seat} {tricks}墩"),
    "score": ("NS {score}", "Bắc-Nam {score}", "南北{score}"),
    "board_complete": ("Board {n} complete", "Ván {n} đã xong", "第{n}副结束"),
    "return_cards": ("Cards back in the board", "Đưa bài trở lại hộp", "请将牌放回牌套"),
    "scan_hand": ("{seat}: scan your hand", "{seat}: quét bài", "{seat}：请扫描手牌"),
    "count_cards": ("Count your cards", "Đếm lại bài", "请清点手牌"),
    "waiting_board": ("Insert the board", "Đặt hộp bài vào", "请放入牌套"),
    "wrong_board": ("Wrong board", "Sai hộp", "错误的牌套"),
    "director_called": ("Director called", "Đã gọi trọng tài", "已召请裁判"),
    "call_director": ("Call the director", "Gọi trọng tài", "召请裁判"),
    "wait_director": ("Wait for the director", "Chờ trọng tài", "请等待裁判"),
    "must_pass": ("{seat} must pass", "{seat} buộc phải nín", "{seat}必须不叫"),
    "penalty_card": ("Penalty card {card}", "Cây phạt {card}", "罚张{card}"),
    "claim": ("Claim", "Tuyên bố số nước", "摊牌"),
    "undo": ("Undo", "Hủy thao tác", "撤销"),
    "next_board": ("Next board", "Ván tiếp theo", "下一副"),
    "phase": ("{phase}", "{phase}", "{phase}"),
    # the shoe-style read (docs/sensing.md): the seats whose 13 cards are not all read yet,
    # and one seat's count
    "pass_hands": ("To pass the hand: {seats}", "Chưa quét bài: {seats}", "请过牌：{seats}"),
    "hand_count": ("{seat} {count}", "{seat} {count}", "{seat}{count}"),
    "seat": ("{seat}", "{seat}", "{seat}"),
    # a second tag laid on an antenna before the first left (a collision)
    "slide_call_off": ("{seat}: slide your last call off the spot",
                       "{seat}: kéo thẻ rao trước ra khỏi ô",
                       "{seat}：请把上一张叫牌移出叫牌区"),
    "slide_card_off": ("{seat}: slide your last card off the spot",
                       "{seat}: kéo lá bài trước ra khỏi ô",
                       "{seat}：请把上一张牌移出出牌区"),
}

# Display forms, one row each: seats as N E S W, cards and calls as PBN writes them. Each
# language lists its forms longest first; controller/indicators/display_text.py takes the first that
# fits the row (20 columns, a CJK character taking two). A key not here shows its _UI text.
_UI_SHORT: Final[dict[str, tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]]] = {
    "turn": (("{seat} to play",), ("Lượt {seat} đánh bài", "Lượt {seat} đánh"),
             ("轮到{seat}出牌",)),
    "board_info": (
        ("Board {n} Dlr {dealer} {vul}", "Bd {n} Dlr {dealer} {vul}",
         "Bd {n} {dealer} {vul_min}"),
        ("Ván {n} {dealer} chia, {vul}", "Ván {n} {dealer} chia {vul_min}",
         "#{n} {dealer} chia {vul_min}", "#{n} {dealer} {vul_min}", "{n} {dealer} {vul_min}"),
        ("第{n}副 {dealer}发牌 {vul}", "{n}副 {dealer}发牌 {vul}", "第{n}副 {dealer} {vul_min}",
         "{n} {dealer} {vul_min}"),
    ),
    "vulnerability": (("{vul}",), ("{vul}", "{vul_min}"), ("局况{vul}", "{vul}")),
    "contract": (("{contract} {seat}",), ("{contract} {seat}",), ("{contract} {seat}",)),
    "contract_tricks": (
        ("{contract} {seat} NS {ns} EW {ew}", "{contract} {seat} NS{ns} EW{ew}"),
        ("{contract} {seat} NS {ns} EW {ew}", "{contract} {seat} NS{ns} EW{ew}"),
        ("{contract} {seat} 南北{ns} 东西{ew}", "{contract}{seat} 南北{ns}东西{ew}",
         "{contract} {seat} NS{ns} EW{ew}"),
    ),
    "lead": (("Opening lead: {seat}", "Lead: {seat}"),
             ("Cây cái đầu tiên: {seat}", "Cái đầu: {seat}"), ("首引：{seat}",)),
    "lead_face_down": (("{seat} lead face down", "{seat} lead face dn"),
                       ("{seat}: đánh cái úp",), ("{seat}：首引牌面朝下", "{seat}首引扣牌")),
    "tricks": (("NS {ns} EW {ew}",), ("NS {ns} EW {ew}",), ("南北{ns} 东西{ew}",)),
    "result": (("{contract} {seat} {tricks} tricks", "{contract} {seat} {tricks}"),
               ("{contract} {seat} {tricks} nước",), ("{contract} {seat} {tricks}墩",)),
    "score": (("NS {score}",), ("NS {score}",), ("南北{score}",)),
    "board_complete": (("Board {n} complete", "Bd {n} done"), ("Ván {n} đã xong",),
                       ("第{n}副结束",)),
    "return_cards": (("Cards back in board", "Cards to the board"),
                     ("Đưa bài trở lại hộp", "Bài vào hộp"), ("请将牌放回牌套",)),
    "scan_hand": (("{seat}: scan your hand", "{seat}: scan hand"), ("{seat}: quét bài",),
                  ("{seat}：请扫描手牌",)),
    "wait_director": (("Wait for director",), ("Chờ trọng tài",), ("请等待裁判",)),
    "dealer": (("Dealer {seat}",), ("Người chia bài {seat}",), ("发牌人{seat}",)),
    "declarer": (("Declarer {seat}",), ("ĐTTC {seat}",), ("庄家{seat}",)),
    "pass_hands": (("To pass hand: {seats}", "Pass hand: {seats}", "Read: {seats}"),
                   ("Chưa quét: {seats}", "Quét: {seats}"), ("请过牌：{seats}", "过牌{seats}")),
    "slide_call_off": (("{seat}: slide last call", "{seat} slide call off"),
                       ("{seat}: kéo thẻ rao ra", "{seat} kéo thẻ ra"),
                       ("{seat}：移开上张叫牌", "{seat}移开叫牌")),
    "slide_card_off": (("{seat}: slide last card", "{seat} slide card off"),
                       ("{seat}: kéo lá bài ra", "{seat} kéo bài ra"),
                       ("{seat}：移开上张牌", "{seat}移开牌")),
}
# Vulnerability on a display row: ``vul``, and ``vul_min`` where even that is too long.
_VUL_SHORT: Final[dict[str, dict[Vulnerability, str]]] = {
    "en": {Vulnerability.NONE: "None vul", Vulnerability.NS: "NS vul",
           Vulnerability.EW: "EW vul", Vulnerability.ALL: "All vul"},
    "vi": {Vulnerability.NONE: "không ai trong vùng", Vulnerability.NS: "NS trong vùng",
           Vulnerability.EW: "EW trong vùng", Vulnerability.ALL: "cả hai trong vùng"},
    "zh": _VUL["zh"],
}
_VUL_MIN: Final[dict[str, dict[Vulnerability, str]]] = {
    "en": {Vulnerability.NONE: "None", Vulnerability.NS: "NS", Vulnerability.EW: "EW",
           Vulnerability.ALL: "All"},
    "vi": {Vulnerability.NONE: "đều ngoài vùng", Vulnerability.NS: "NS trong vùng",
           Vulnerability.EW: "EW trong vùng", Vulnerability.ALL: "đều trong vùng"},
    "zh": {Vulnerability.NONE: "双无", Vulnerability.NS: "南北有局",
           Vulnerability.EW: "东西有局", Vulnerability.ALL: "双有"},
}

#: Every display key ``ui_text`` knows.
UI_KEYS: Final = frozenset(_UI)


def _ui_values(lang: str, short: bool, values: Mapping[str, object]) -> dict[str, str]:
    rendered: dict[str, str] = {}
    for name, value in values.items():
        if name == "phase" and isinstance(value, str):
            rendered[name] = phase_name(value, lang)
        elif short and isinstance(value, Vulnerability):
            rendered[name] = _VUL_SHORT[lang][value]
            rendered[f"{name}_min"] = _VUL_MIN[lang][value]
        else:
            rendered[name] = _localise(value, lang, short)
    return rendered


def ui_variants(key: str, lang: str, **values: object) -> list[str]:
    """A display row's forms, longest first (``ui_text(..., short=True)`` is the first)."""
    i = _index(lang)
    if key not in _UI:
        raise MessageError(f"no display text {key!r}")
    templates = _UI_SHORT[key][i] if key in _UI_SHORT else (_UI[key][i],)
    rendered = _ui_values(lang, True, values)
    return [_fill(t, rendered) for t in templates]


def ui_text(key: str, lang: str, *, short: bool = False, **values: object) -> str:
    """A display string: ``ui_text("contract", "en", contract=c, seat=Seat.S)``.

    Values may be core values (Seat, Card, Call, Contract, Vulnerability) and are named in
    the language. ``short=True`` gives the form meant for one display row: seats as N E S W,
    cards and calls in PBN letters (plain ASCII in English).
    """
    if short:
        return ui_variants(key, lang, **values)[0]
    i = _index(lang)
    try:
        template = _UI[key][i]
    except KeyError:
        raise MessageError(f"no display text {key!r}") from None
    return _fill(template, _ui_values(lang, False, values))
