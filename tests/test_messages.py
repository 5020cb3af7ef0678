"""Alert and display texts in English, Vietnamese and Chinese."""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import pytest
from shared_data import absent, shared_root

from controller.indicators.display_text import columns
from controller.laws.cards import Call, Card, Contract, Seat, Suit, Vulnerability
from controller.laws.irregularities import DEFAULT_LAW, Code, Irregularity, Status
from controller.laws.messages import (
    DETAILS,
    DETAILS_OPEN,
    LANGUAGES,
    UI_KEYS,
    MessageError,
    alert_parts,
    alert_text,
    alert_texts,
    call_text,
    card_text,
    contract_text,
    law_citation,
    seat_name,
    status_name,
    suit_name,
    ui_text,
    ui_variants,
    vulnerability_name,
)

_PLACEHOLDER = re.compile(r"[{}\[\]]")


def _full(code: Code, status: Status, detail: str = "", law: str | None = None) -> Irregularity:
    return Irregularity(
        id=7, code=code, law=law or DEFAULT_LAW[code], status=status, seat=Seat.E, trick=6,
        card=Card.parse("HJ"), call=Call.parse("1H"), detail=detail,
        params=(("board", 15), ("count", 12), ("other_board", 16), ("other_seat", "N"),
                ("replacement", "1S"), ("reverted_to", "S"), ("tricks", 9),
                ("tricks_transferred", 2)),
    )


def _bare(code: Code, status: Status) -> Irregularity:
    return Irregularity(id=1, code=code, law=DEFAULT_LAW[code], status=status)


@pytest.mark.parametrize("code", list(Code))
@pytest.mark.parametrize("status", list(Status))
def test_every_code_and_status_renders_in_every_language(code: Code, status: Status) -> None:
    for irr in (_full(code, status), _bare(code, status)):
        for short in (False, True):
            texts = alert_texts(irr, short=short)
            assert set(texts) == set(LANGUAGES)
            for lang, text in texts.items():
                assert text.strip(), (code, status, lang)
                assert irr.law in text, (code, status, lang, text)
                # no template syntax or unfilled slot leaks out
                assert not _PLACEHOLDER.search(text), text
                assert "?" not in text, text
                assert "None" not in text, text


@pytest.mark.parametrize("code", list(Code))
def test_full_text_names_the_seat_and_short_text_fits_the_display(code: Code) -> None:
    irr = _full(code, Status.OPEN)
    if code is not Code.WRONG_BOARD:     # a board, not a player, is wrong
        assert "East" in alert_text(irr, "en")
        assert "Đông" in alert_text(irr, "vi")
        assert "东" in alert_text(irr, "zh")
    short = alert_text(irr, "en", short=True)
    assert len(short) <= 40, short          # two lines of a 20x4 LCD
    assert short.isascii(), short


def test_the_three_languages_differ_for_every_code() -> None:
    for code in Code:
        texts = alert_texts(_full(code, Status.OPEN))
        assert len(set(texts.values())) == 3, code


@pytest.mark.parametrize("detail", sorted(DETAILS))
def test_every_detail_renders_with_and_without_values(detail: str) -> None:
    for code in (Code.REVOKE, Code.INSUFFICIENT_BID, Code.CARD_EXPOSED_DURING_AUCTION):
        for irr in (_full(code, Status.RESOLVED, detail),
                    Irregularity(id=2, code=code, law="64A1", detail=detail)):
            for lang in LANGUAGES:
                text = alert_text(irr, lang)
                assert not _PLACEHOLDER.search(text), text
                assert "?" not in text, text


def test_variants_follow_status_detail_and_params() -> None:
    open_ = _full(Code.INSUFFICIENT_BID, Status.OPEN)
    accepted = _full(Code.INSUFFICIENT_BID, Status.RESOLVED, "accepted", law="27A1")
    assert "accepted" in alert_text(accepted, "en")
    assert "accepted" not in alert_text(open_, "en")
    assert "director" in alert_text(open_, "en")
    assert "Law 27A1" in alert_text(accepted, "en")
    assert "第27A1条" in alert_text(accepted, "zh")
    assert "Điều 27A1" in alert_text(accepted, "vi")

    revoke = _full(Code.REVOKE, Status.ESTABLISHED, "64A1", law="64A1")
    en = alert_text(revoke, "en")
    assert "Established revoke" in en and "2 trick" in en and "trick 6" in en
    assert "藏牌成立" in alert_text(revoke, "zh")
    assert "được xác định" in alert_text(revoke, "vi")

    no_transfer = _full(Code.REVOKE, Status.ESTABLISHED, "64B2")
    assert "no trick transferred (64B2)" in alert_text(no_transfer, "en")

    honour = _full(Code.CARD_EXPOSED_DURING_AUCTION, Status.ESTABLISHED, "honour")
    en = alert_text(honour, "en")
    assert "West must pass" in en and "♥J" in en
    assert "西下一轮必须不叫" in alert_text(honour, "zh")


@pytest.mark.parametrize("detail", sorted(DETAILS_OPEN))
def test_every_open_detail_renders_in_every_language(detail: str) -> None:
    irr = _full(Code.DEFECTIVE_TRICK, Status.OPEN, detail)
    texts = alert_texts(irr)
    for lang, text in texts.items():
        assert DETAILS_OPEN[detail][LANGUAGES.index(lang)].split("(")[0].strip() in text
        assert not _PLACEHOLDER.search(text), text
    assert "can still be put right" in texts["en"] or "must be corrected" in texts["en"]


def test_unknown_detail_is_ignored_not_fatal() -> None:
    irr = _full(Code.FIFTH_CARD, Status.RESOLVED, "something-new")
    assert alert_text(irr, "en").startswith("Law 45E: ")


def test_names() -> None:
    assert [seat_name(s, "vi") for s in Seat] == ["Bắc", "Đông", "Nam", "Tây"]
    assert [seat_name(s, "zh") for s in Seat] == ["北", "东", "南", "西"]
    assert suit_name(Suit.S, "zh") == "黑桃"
    assert card_text(Card.parse("HT"), "en") == "♥10"
    assert card_text(Card.parse("HT"), "en", short=True) == "HT"
    assert call_text(Call.parse("Pass"), "vi") == "nín"
    assert call_text(Call.parse("X"), "zh") == "加倍"
    assert call_text(Call.parse("3NT"), "en") == "3NT"
    assert call_text(Call.parse("3NT"), "zh") == "3无将"
    assert contract_text(Contract.parse("4SXX"), "en") == "4♠XX"
    assert contract_text(Contract.parse("Pass"), "zh") == "四家不叫"
    assert vulnerability_name(Vulnerability.EW, "zh") == "东西有局"
    assert law_citation("64A1", "en", short=True) == "L64A1"
    with pytest.raises(MessageError):
        seat_name(Seat.N, "fr")


VALUES: dict[str, object] = {
    "n": 16, "seat": Seat.W, "dealer": Seat.W, "vul": Vulnerability.ALL,
    "contract": Contract.parse("7NTXX"), "tricks": 13, "ns": 10, "ew": 3, "score": -2980,
    "card": Card.parse("ST"), "phase": "clarification",
}


@pytest.mark.parametrize("key", sorted(UI_KEYS))
def test_every_display_key_in_every_language(key: str) -> None:
    for lang in LANGUAGES:
        long = ui_text(key, lang, **VALUES)
        short = ui_text(key, lang, short=True, **VALUES)
        for text in (long, short):
            assert text.strip() and not _PLACEHOLDER.search(text), (key, lang, text)
        forms = ui_variants(key, lang, **VALUES)
        assert forms[0] == short
        # the shortest form fits a 20-column row (the display takes the first that fits)
        assert columns(forms[-1]) <= 20, (key, lang, forms)
        if lang == "en":
            assert all(form.isascii() for form in forms), forms


def test_display_values_are_localised() -> None:
    assert ui_text("contract", "en", contract=Contract.parse("4S"), seat=Seat.S) == \
        "Contract 4♠ by South"
    assert ui_text("contract", "en", short=True, contract=Contract.parse("4S"),
                   seat=Seat.S) == "4S S"
    assert ui_text("board_complete", "zh", n=3) == "第3副结束"
    assert ui_text("phase", "vi", phase="auction") == "rao giá"
    assert ui_text("your_turn", "vi") == "Đến lượt bạn"
    with pytest.raises(MessageError):
        ui_text("no-such-key", "en")


def test_text_params_read_as_calls_cards_and_seats() -> None:
    irr = Irregularity(id=3, code=Code.CHANGE_OF_CALL, law="25B", status=Status.RESOLVED,
                       seat=Seat.S, call=Call.parse("1S"), detail="replaced",
                       params=(("replacement", "2NT"),))
    assert alert_text(irr, "en").endswith("replaced by 2NT.")
    assert "2无将" in alert_text(irr, "zh")
    moved = Irregularity(id=4, code=Code.INADMISSIBLE_DOUBLE, law="36A", seat=Seat.S,
                         detail="reverted", params=(("reverted_to", "S"),))
    assert "goes back to South" in alert_text(moved, "en")
    assert "Nam" in alert_text(moved, "vi")
    # a value that is not what its name promises is shown as given, never a crash
    odd = Irregularity(id=5, code=Code.CHANGE_OF_CALL, law="25", detail="replaced",
                       params=(("replacement", "a pink card"),))
    assert "a pink card" in alert_text(odd, "en")


def test_tricks_transferred_counts_read_naturally() -> None:
    def revoke(moved: int) -> Irregularity:
        return Irregularity(id=9, code=Code.REVOKE, law="63A1", status=Status.ESTABLISHED,
                            seat=Seat.S, trick=4, detail="64A2",
                            params=(("tricks_transferred", moved),))
    assert "1 trick transferred" in alert_text(revoke(1), "en")
    assert "2 tricks transferred" in alert_text(revoke(2), "en")
    assert "1墩转给非违规方" in alert_text(revoke(1), "zh")


def test_a_detail_reads_differently_while_open() -> None:
    pending = Irregularity(id=1, code=Code.DEFECTIVE_TRICK, law="67A", seat=Seat.S, trick=6,
                           detail="67A")
    done = dataclasses.replace(pending, status=Status.CORRECTED)
    assert "can still be put right" in alert_text(pending, "en")
    assert "corrected before both sides" in alert_text(done, "en")


# -- the Laws' own words (the translated Laws' vocabulary, docs/glossary.md) ---------------

TERMS_FILE = Path(__file__).parent / "data" / "glossary-terms.tsv"


def _terms() -> list[tuple[str, str, str]]:
    rows = [line.split("\t") for line in TERMS_FILE.read_text(encoding="utf-8").splitlines()
            if line and not line.startswith("#")]
    return [(row[0], row[1], row[2]) for row in rows]


@functools.cache
def _all_texts(lang: str) -> list[str]:
    """Every text of the language: alerts of every code and status with every detail,
    and every display string, rendered."""
    out: list[str] = []
    for code in Code:
        for status in Status:
            out.append(alert_text(_full(code, status), lang))
            out.append(alert_text(_full(code, status), lang, short=True))
            for detail in DETAILS:
                out.append(alert_text(_full(code, status, detail), lang))
    for key in UI_KEYS:
        out.append(ui_text(key, lang, **VALUES))
        out += ui_variants(key, lang, **VALUES)
    return out


DOCS_GLOSSARY = Path(__file__).parent.parent / "docs" / "glossary.md"


def _glossary_rows(path: Path) -> dict[str, str]:
    return {line.split("|")[1].strip(): line for line in
            path.read_text(encoding="utf-8").splitlines() if line.startswith("| ")}


def test_the_docs_glossary_is_the_shared_one() -> None:
    """docs/glossary.md is a copy of the shared spec's, so a clone has it: same table, same
    notes after it."""
    glossary = shared_root() / "spec" / "glossary.md"
    if not glossary.is_file():
        absent(f"the glossary is not here: {glossary} is absent (a user's clone has no "
               "../shared)")
    shared = glossary.read_text(encoding="utf-8")
    copied = DOCS_GLOSSARY.read_text(encoding="utf-8")
    assert _glossary_rows(DOCS_GLOSSARY) == _glossary_rows(glossary)
    assert shared[shared.index("| English"):] == copied[copied.index("| English"):]


def test_the_copied_terms_are_the_glossarys() -> None:
    rows = _glossary_rows(DOCS_GLOSSARY)
    for english, lang, term in _terms():
        assert english in rows, english
        assert term in rows[english], (english, lang, term)


@pytest.mark.parametrize(("english", "lang", "term"), _terms())
def test_the_messages_use_the_glossarys_term(english: str, lang: str, term: str) -> None:
    assert any(term.lower() in text.lower() for text in _all_texts(lang)), (english, term)


def test_words_the_seeds_do_not_use_are_gone() -> None:
    vi = "\n".join(_all_texts("vi"))
    zh = "\n".join(_all_texts("zh"))
    for gone in ("cây phạt lớn", "cây phạt nhỏ", "(chất)", "Giá không đủ", "Sai ván",
                 "Bài không có", "x.định", "ván khác", "vào ván", "Tình trạng không ai",
                 " là ĐTPN", "không chấp nhận"):
        assert gone not in vi, gone
    for gone in ("违例", "提前首引", "提前出牌", "无意的叫牌", "请叫裁判", "已叫裁判", "澄清期",
                 "应叫者", "他副牌张", "同一花色最低", "错误的牌套7", "牌套错乱7"):
        assert gone not in zh, gone


def test_grammar_and_sense() -> None:
    def render(code: Code, lang: str, **kw: object) -> str:
        irr = Irregularity(id=1, code=code, law=DEFAULT_LAW[code], seat=Seat.S,
                           params=tuple(kw.items()))
        return alert_text(irr, lang)

    assert "Ván 7 bị xáo trộn" in render(Code.FOULED_BOARD, "vi", board=7)
    assert "第7副牌套错乱" in render(Code.FOULED_BOARD, "zh", board=7)
    assert "（第7副）" in render(Code.WRONG_BOARD, "zh", board=7)
    exposed = Irregularity(id=1, code=Code.CARD_EXPOSED_DURING_AUCTION, law="24",
                           seat=Seat.S, card=Card.parse("SK"))
    assert "Cây bài của Nam bị lộ trong rao giá" in alert_text(exposed, "vi")
    assert "trở thành ĐTPN" in alert_text(
        dataclasses.replace(exposed, detail="honour", status=Status.RESOLVED), "vi")
    rejected = _full(Code.CHANGE_OF_CALL, Status.RESOLVED, "rejected")
    assert "không được chấp nhận" in alert_text(rejected, "vi")
    lowest = _full(Code.INSUFFICIENT_BID, Status.RESOLVED, "lowest_sufficient")
    assert "同一定约名目的最低的足够叫牌" in alert_text(lowest, "zh")
    assert "không chủ" in alert_text(lowest, "vi")
    schedule = _full(Code.WRONG_BOARD, Status.OPEN, "not_scheduled")
    assert "ở vòng đấu này" in alert_text(schedule, "vi")
    # vulnerability has a word for vulnerable; a board's number is the board's
    for vul in Vulnerability:
        assert "vùng" in vulnerability_name(vul, "vi")
        assert "vùng" in ui_text("board_info", "vi", n=7, dealer=Seat.S, vul=vul)
    assert ui_text("board_info", "vi", n=7, dealer=Seat.S, vul=Vulnerability.NONE) == \
        "Ván 7: Nam chia bài, không bên nào trong vùng"
    # a passed-out board's short contract is said in the language
    passed = Contract.parse("Pass")
    assert [contract_text(passed, lang, short=True) for lang in LANGUAGES] == \
        ["Pass", "bốn nín", "四家不叫"]


def test_seats_on_a_display_are_NESW_or_chinese_and_names_in_sentences() -> None:
    # N E S W in English and Vietnamese (Vietnamese initials clash: N is Nam); Chinese has
    # a one-character name for each seat, and "轮到N出牌" mixed the scripts
    for lang in ("en", "vi"):
        assert [seat_name(s, lang, short=True) for s in Seat] == ["N", "E", "S", "W"]
    assert [seat_name(s, "zh", short=True) for s in Seat] == ["北", "东", "南", "西"]
    assert ui_text("turn", "vi", short=True, seat=Seat.S) == "Lượt S đánh bài"
    assert ui_text("turn", "vi", seat=Seat.S) == "Lượt Nam đánh bài"
    assert ui_text("turn", "zh", short=True, seat=Seat.N) == "轮到北出牌"
    assert ui_text("contract_tricks", "zh", short=True, contract=Contract.parse("4H"),
                   seat=Seat.E, ns=3, ew=2) == "4H 东 南北3 东西2"


def test_the_open_status_and_the_others_have_names() -> None:
    assert [status_name(s, "zh") for s in Status] == ["待处理", "已成立", "已纠正", "已解决"]


def test_a_code_without_a_display_name_shows_its_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.laws import messages
    monkeypatch.delitem(messages._SHORT, Code.FIFTH_CARD)
    irr = Irregularity(id=1, code=Code.FIFTH_CARD, law="45E", seat=Seat.N)
    assert alert_parts(irr, "en").name == "Fifth card in a trick"
    assert alert_parts(irr, "zh").name == "一墩中的第五张牌"
