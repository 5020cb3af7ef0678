"""Which rulings the console offers for each alert code: ONE table, checked against
``docs/laws.md`` by ``tests/test_console_options.py``.

Each option is a ruling of the wire contract (``bridge/{t}/ruling``) with the Law it
applies, the fixed fields it sends (``option``) and the fields the director fills in
(``tricks``, ``suit``, ``seat``, ``card``, ``board``). The one-line explanation is the
kind's sentence (``EXPLAIN``) with that Law, in en/vi/zh.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind

__all__ = ["Option", "OPTIONS", "TABLE_OPTIONS", "EXPLAIN", "DESTRUCTIVE", "options_for",
           "offered_for", "choices_of", "as_json"]


@dataclass(frozen=True)
class Option:
    kind: RulingKind
    law: str
    fixed: dict[str, str] = field(default_factory=dict)   # sent as is, e.g. option=highest
    inputs: tuple[str, ...] = ()                           # filled in by the director
    #: the table's phases (``state.phase``) the ruling can act in; empty: any
    phases: tuple[str, ...] = ()
    #: the director's choice this option is (1.6: an alert waiting for the director lists
    #: its ``params.choices``): offered only when the alert lists it; "" for a ruling
    #: offered on an alert that lists no choices
    choice: str = ""

    @property
    def key(self) -> str:
        """The explanation's key: the kind, or kind:option for a variant."""
        variant = self.fixed.get("option")
        return f"{self.kind}:{variant}" if variant else str(self.kind)


K = RulingKind
#: rulings that take away what the table did (a reading, the play, the tricks, the board):
#: the page asks the director to confirm, the server refuses them unconfirmed, and the
#: ruling log keeps how to reverse them
DESTRUCTIVE: frozenset[RulingKind] = frozenset({K.UNDO, K.CLAIM, K.ADJUST, K.BOARD})
_CLEAR_TABLE = Option(K.CLEAR, "81C")   # the director closes it with no further action
_LAW_36_OR_32 = (Option(K.OPTION, "36B", fixed={"option": "36"}, choice="36"),
                 Option(K.OPTION, "32", fixed={"option": "32"}, choice="32"))

OPTIONS: dict[Code, tuple[Option, ...]] = {
    Code.WRONG_BOARD: (Option(K.BOARD, "15", inputs=("board",)), _CLEAR_TABLE),
    Code.CARDS_FROM_WRONG_BOARD: (Option(K.ADJUST, "15", inputs=("tricks",)), _CLEAR_TABLE),
    Code.HAND_COUNT: (_CLEAR_TABLE,),
    Code.MISSING_CARD: (_CLEAR_TABLE,),
    Code.INCORRECT_CARD_COUNT: (Option(K.ADJUST, "13", inputs=("tricks",)), _CLEAR_TABLE),
    Code.UNKNOWN_TAG: (Option(K.UNDO, "13"), _CLEAR_TABLE),
    # the card is never taken as the seat's: resolved when its tag is taken away (13C)
    Code.CARD_FROM_OTHER_BOARD: (_CLEAR_TABLE,),
    Code.CALL_OUT_OF_ROTATION: (
        Option(K.ACCEPT, "29A"), Option(K.REJECT, "29B"),
        Option(K.COMPARABLE, "23"), Option(K.NOT_COMPARABLE, "23"), _CLEAR_TABLE),
    Code.INSUFFICIENT_BID: (
        Option(K.ACCEPT, "27A1"), Option(K.REJECT, "27B"),
        Option(K.COMPARABLE, "27B1b"), Option(K.NOT_COMPARABLE, "27B1b"), _CLEAR_TABLE),
    # never acceptable (35A): no accept. Out of rotation (1.6): Law 36 or Law 32 first
    Code.INADMISSIBLE_DOUBLE: (Option(K.REJECT, "36B"), *_LAW_36_OR_32, _CLEAR_TABLE),
    Code.INADMISSIBLE_REDOUBLE: (Option(K.REJECT, "36B"), *_LAW_36_OR_32, _CLEAR_TABLE),
    Code.CALL_BY_PLAYER_REQUIRED_TO_PASS: (
        Option(K.ACCEPT, "37A"), Option(K.REJECT, "37B"), _CLEAR_TABLE),
    Code.BID_ABOVE_SEVEN: (_CLEAR_TABLE,),
    Code.CALL_AFTER_AUCTION_CLOSED: (_CLEAR_TABLE,),
    Code.CHANGE_OF_CALL: (
        Option(K.UNINTENDED, "25A"), Option(K.ACCEPT, "25B"),
        Option(K.REJECT, "25B"), _CLEAR_TABLE),
    Code.CARD_EXPOSED_DURING_AUCTION: (Option(K.LEAD, "24"), _CLEAR_TABLE),
    Code.OPENING_LEAD_OUT_OF_TURN: (
        Option(K.ACCEPT, "54B"), Option(K.ACCEPT, "54A", fixed={"option": "54A"}),
        Option(K.REJECT, "54D"), _CLEAR_TABLE),
    # 1.6: 2017 53B, a defender's card led in error, the proper lead followed
    Code.LEAD_OUT_OF_TURN: (Option(K.ACCEPT, "53A"), Option(K.REJECT, "55"),
                            Option(K.OPTION, "53B", fixed={"option": "withdraw"},
                                   choice="withdraw"),
                            Option(K.OPTION, "56", fixed={"option": "penalty_card"},
                                   choice="penalty_card"),
                            _CLEAR_TABLE),
    Code.PREMATURE_PLAY: (
        Option(K.OPTION, "57A", fixed={"option": "highest"}),
        Option(K.OPTION, "57A", fixed={"option": "lowest"}),
        Option(K.OPTION, "57A", fixed={"option": "must_lead"}, inputs=("suit",)),
        Option(K.OPTION, "57A", fixed={"option": "must_not_lead"}, inputs=("suit",)),
        _CLEAR_TABLE),
    Code.PENALTY_CARD_NOT_PLAYED: (
        Option(K.ACCEPT, "52B"), Option(K.REJECT, "52B"),
        Option(K.OPTION, "50D2", fixed={"option": "must_lead"}, inputs=("suit",)),
        Option(K.OPTION, "50D2", fixed={"option": "must_not_lead"}, inputs=("suit",)),
        _CLEAR_TABLE),
    Code.REVOKE: (Option(K.ADJUST, "64C", inputs=("tricks",)), Option(K.CLEAR, "64B")),
    # 1.6: a defender's card: penalty card (45E1) or a lead (53, 56); once the proper lead
    # followed, deemed led and withdrawn (2017 53B; 2007 53C)
    Code.FIFTH_CARD: (Option(K.OPTION, "45E1", fixed={"option": "penalty_card"},
                             choice="penalty_card"),
                      Option(K.LEAD, "45E", choice="lead"),
                      Option(K.OPTION, "53B", fixed={"option": "withdraw"}, choice="withdraw"),
                      _CLEAR_TABLE),
    Code.EXTRA_CARD_SAME_TRICK: (Option(K.UNDO, "58B"), _CLEAR_TABLE),
    Code.DEFECTIVE_TRICK: (Option(K.ACCEPT, "67B", inputs=("seat", "card")), _CLEAR_TABLE),
    Code.CARD_NOT_IN_HAND: (Option(K.UNDO, "14"), Option(K.ADJUST, "13", inputs=("tricks",)),
                            _CLEAR_TABLE),
    Code.CARD_WITHDRAWN: (Option(K.UNDO, "47"), _CLEAR_TABLE),
    Code.FOULED_BOARD: (Option(K.ADJUST, "87", inputs=("tricks",)), _CLEAR_TABLE),
}

#: rulings about the whole table rather than one alert
#: the rulings on the whole table; adjust and claim act on the play (the Laws core has one
#: from the end of the auction), a claim only while it goes on
TABLE_OPTIONS: tuple[Option, ...] = (
    Option(K.UNDO, "7"),
    Option(K.CLAIM, "68", inputs=("tricks",), phases=("lead", "play")),
    Option(K.ADJUST, "12", inputs=("tricks",), phases=("lead", "play", "complete")),
    Option(K.BOARD, "15", inputs=("board",)),
)

#: one line per ruling (and variant), ``{law}`` filled in; en / vi / zh
EXPLAIN: dict[str, dict[str, str]] = {
    "accept": {"en": "Accept: the irregular call or play stands (Law {law}).",
               "vi": "Chấp nhận: giá hoặc quân bài vi phạm giữ nguyên (Điều {law}).",
               "zh": "接受：违规叫品或打出的牌有效（第{law}条）。"},
    "unintended": {
        "en": "Unintended call: the intended call replaces it until partner calls (Law {law}).",
        "vi": "Giá lỡ tay: giá dự định thay thế, khi đồng đội chưa rao (Điều {law}).",
        "zh": "疏忽的叫牌：同伴叫牌前以本意叫品替换（第{law}条）。"},
    "accept:54A": {
        "en": "Declarer spreads his hand: partner becomes declarer (Law {law}).",
        "vi": "ĐTTC trải bài: đồng đội thành ĐTTC (Điều {law}).",
        "zh": "庄家摊牌：同伴成为庄家（第{law}条）。"},
    "reject": {"en": "Reject: cancelled, the Laws' rectification applies (Law {law}).",
               "vi": "Bác bỏ: bị hủy, áp dụng biện pháp khắc phục (Điều {law}).",
               "zh": "拒绝：取消，按规则纠正（第{law}条）。"},
    "undo": {"en": "Undo: the last reading was a misread and is struck (Law {law}).",
             "vi": "Hoàn tác: lần đọc cuối bị đọc nhầm và bị xóa (Điều {law}).",
             "zh": "撤销：最后一次读取为误读，予以删除（第{law}条）。"},
    "adjust": {"en": "Adjust: set declarer's tricks (Law {law}).",
               "vi": "Điều chỉnh: ấn định số nước của ĐTTC (Điều {law}).",
               "zh": "调整：裁定庄家墩数（第{law}条）。"},
    "claim": {"en": "Claim agreed: declarer's tricks of those remaining, play ends (Law {law}).",
              "vi": "Đồng ý tuyên bố: số nước còn lại của ĐTTC, kết thúc (Điều {law}).",
              "zh": "摊牌同意：庄家所得剩余墩数，打牌结束（第{law}条）。"},
    "comparable": {"en": "Comparable call: no further rectification (Law {law}).",
                   "vi": "Giá tương đương: không khắc phục thêm (Điều {law}).",
                   "zh": "可比叫品：不再纠正（第{law}条）。"},
    "not_comparable": {"en": "Not comparable: partner must pass (Law {law}).",
                       "vi": "Không tương đương: đồng đội phải nín (Điều {law}).",
                       "zh": "不可比：同伴必须不叫（第{law}条）。"},
    "lead": {"en": "It was a lead: the lead rules apply (Law {law}).",
             "vi": "Đó là lá dẫn: áp dụng luật dẫn bài (Điều {law}).",
             "zh": "视为出牌：按首攻规则处理（第{law}条）。"},
    "option:highest": {"en": "Declarer's option: partner plays his highest card (Law {law}).",
                       "vi": "Lựa chọn của ĐTTC: đồng đội đánh quân cao nhất (Điều {law}).",
                       "zh": "庄家选择：同伴出最大的牌（第{law}条）。"},
    "option:lowest": {"en": "Declarer's option: partner plays his lowest card (Law {law}).",
                      "vi": "Lựa chọn của ĐTTC: đồng đội đánh quân thấp nhất (Điều {law}).",
                      "zh": "庄家选择：同伴出最小的牌（第{law}条）。"},
    "option:must_lead": {"en": "Declarer's option: a suit partner must lead (Law {law}).",
                         "vi": "Lựa chọn của ĐTTC: chất đồng đội phải dẫn (Điều {law}).",
                         "zh": "庄家选择：同伴必须首攻的花色（第{law}条）。"},
    "option:must_not_lead": {
        "en": "Declarer's option: a suit partner must not lead (Law {law}).",
        "vi": "Lựa chọn của ĐTTC: chất đồng đội không được dẫn (Điều {law}).",
        "zh": "庄家选择：同伴不得首攻的花色（第{law}条）。"},
    "option:penalty_card": {
        "en": "The card is a penalty card (Law {law}).",
        "vi": "Quân bài là cây phạt (Điều {law}).",
        "zh": "该牌成为罚张（第{law}条）。"},
    "option:withdraw": {
        "en": "The proper lead stands: the card led in error goes back (Law {law}).",
        "vi": "Lá dẫn đúng giữ nguyên: quân dẫn nhầm được rút lại (Điều {law}).",
        "zh": "正确的首攻有效：错出的牌收回（第{law}条）。"},
    "option:36": {
        "en": "Law 36 first: cancelled, partner must pass throughout (Law {law}).",
        "vi": "Áp dụng Điều 36 trước: bị hủy, đồng đội phải nín suốt (Điều {law}).",
        "zh": "先适用第36条：取消，同伴必须始终不叫（第{law}条）。"},
    "option:32": {
        "en": "Law 32 first: the call out of rotation is rectified (Law {law}).",
        "vi": "Áp dụng Điều 32 trước: khắc phục giá rao sai lượt (Điều {law}).",
        "zh": "先适用第32条：按越序叫牌纠正（第{law}条）。"},
    "board": {"en": "Set the board on the table (Law {law}).",
              "vi": "Đặt ván bài cho bàn (Điều {law}).",
              "zh": "设定本桌的牌（第{law}条）。"},
    "clear": {"en": "Clear: close the alert, no further action (Law {law}).",
              "vi": "Đóng: kết thúc cảnh báo, không xử lý thêm (Điều {law}).",
              "zh": "清除：关闭警报，不再处理（第{law}条）。"},
}

#: the button's own label
BUTTON: dict[str, dict[str, str]] = {
    "accept": {"en": "Accept", "vi": "Chấp nhận", "zh": "接受"},
    "unintended": {"en": "Unintended", "vi": "Lỡ tay", "zh": "疏忽的叫牌"},
    "accept:54A": {"en": "Declarer spreads", "vi": "ĐTTC trải bài", "zh": "庄家摊牌"},
    "reject": {"en": "Reject", "vi": "Bác bỏ", "zh": "拒绝"},
    "undo": {"en": "Undo", "vi": "Hoàn tác", "zh": "撤销"},
    "adjust": {"en": "Adjust", "vi": "Điều chỉnh", "zh": "调整"},
    "claim": {"en": "Claim", "vi": "Tuyên bố", "zh": "摊牌"},
    "comparable": {"en": "Comparable", "vi": "Tương đương", "zh": "可比"},
    "not_comparable": {"en": "Not comparable", "vi": "Không tương đương", "zh": "不可比"},
    "lead": {"en": "It was a lead", "vi": "Là lá dẫn", "zh": "视为出牌"},
    "option:highest": {"en": "Highest", "vi": "Cao nhất", "zh": "最大"},
    "option:lowest": {"en": "Lowest", "vi": "Thấp nhất", "zh": "最小"},
    "option:must_lead": {"en": "Must lead", "vi": "Phải dẫn", "zh": "必须首攻"},
    "option:must_not_lead": {"en": "Must not lead", "vi": "Không được dẫn", "zh": "不得首攻"},
    "option:penalty_card": {"en": "Penalty card", "vi": "Cây phạt", "zh": "罚张"},
    "option:withdraw": {"en": "Withdrawn", "vi": "Rút lại", "zh": "收回"},
    "option:36": {"en": "Law 36 first", "vi": "Điều 36 trước", "zh": "先第36条"},
    "option:32": {"en": "Law 32 first", "vi": "Điều 32 trước", "zh": "先第32条"},
    "board": {"en": "Set board", "vi": "Đặt ván", "zh": "设定牌"},
    "clear": {"en": "Clear", "vi": "Đóng", "zh": "清除"},
}


def options_for(code: str) -> tuple[Option, ...]:
    """The rulings offered for an alert code; an unknown code gets only ``clear``."""
    try:
        return OPTIONS[Code(code)]
    except ValueError:
        return (_CLEAR_TABLE,)


def choices_of(params: Any) -> tuple[str, ...] | None:
    """An alert's ``params.choices`` (``"penalty_card,lead"``, or a list); None when the
    alert lists none."""
    raw = params.get("choices") if isinstance(params, Mapping) else None
    if isinstance(raw, str):
        return tuple(c.strip() for c in raw.split(",") if c.strip())
    if isinstance(raw, list):
        return tuple(c for c in raw if isinstance(c, str))
    return None


def offered_for(code: str, params: Any) -> tuple[Option, ...]:
    """The rulings offered on one alert: of its code's options, those of the director's
    choices the alert lists (``params.choices``, and only them: the alert waits for one
    of them), else those that are no such choice. An alert listing only choices this
    table does not know gets ``clear``. The page filters the same way (console.js,
    ``offeredFor``)."""
    opts = options_for(code)
    choices = choices_of(params)
    if choices is None:
        return tuple(o for o in opts if not o.choice)
    return tuple(o for o in opts if o.choice and o.choice in choices) or (_CLEAR_TABLE,)


def _option_json(opt: Option) -> dict[str, Any]:
    return {"ruling": str(opt.kind), "law": opt.law, "fixed": opt.fixed,
            "inputs": list(opt.inputs), "key": opt.key, "choice": opt.choice,
            "confirm": opt.kind in DESTRUCTIVE, "phases": list(opt.phases),
            "label": BUTTON[opt.key],
            "explain": {lang: text.format(law=opt.law) for lang, text in
                        EXPLAIN[opt.key].items()}}


def as_json() -> dict[str, Any]:
    """Everything the page needs to draw the buttons."""
    return {"codes": {str(code): [_option_json(o) for o in opts]
                      for code, opts in OPTIONS.items()},
            "default": [_option_json(_CLEAR_TABLE)],
            "table": [_option_json(o) for o in TABLE_OPTIONS]}
