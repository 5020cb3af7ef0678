"""The rulings the console offers for each alert code, checked against docs/laws.md.

docs/laws.md's "Every code" table is the reference: every code it lists has options, each
option's Law is one that the code's row cites (its number, or a range such as 61-64), and
the rulings that only some codes take (comparable, option, lead, board, accept/reject) are
offered only where the row speaks of them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from controller.laws.irregularities import Code
from controller.laws.rulings import RulingKind
from controller.web.console import options
from controller.web.console.options import BUTTON, EXPLAIN, OPTIONS, TABLE_OPTIONS

LAWS_MD = Path(__file__).parent.parent / "docs" / "laws.md"


def _rows() -> dict[str, str]:
    """code -> the whole row of docs/laws.md's "Every code" table."""
    rows: dict[str, str] = {}
    for line in LAWS_MD.read_text(encoding="utf-8").splitlines():
        if not line.startswith("| `"):
            continue
        first = line.split("|")[1]
        for code in re.findall(r"`([A-Z_]+)`", first):
            rows[code] = rows.get(code, "") + " " + line
    return rows


ROWS = _rows()


def _law_numbers(row: str) -> set[int]:
    """Every Law number a row cites, ranges (28-32) expanded."""
    numbers: set[int] = set()
    for a, b in re.findall(r"\b(\d{1,2})[A-Z]?\w*\s*-\s*(\d{1,2})\b", row):
        numbers.update(range(int(a), int(b) + 1))
    numbers.update(int(n) for n in re.findall(r"\b(\d{1,2})(?=[A-Z0-9a-z]*\b)", row))
    return numbers


def test_every_code_of_docs_laws_has_options() -> None:
    assert ROWS, "docs/laws.md has no code table"
    assert set(ROWS) == {str(c) for c in OPTIONS}
    assert set(OPTIONS) == set(Code)


def test_the_rulings_are_those_docs_laws_names() -> None:
    text = LAWS_MD.read_text(encoding="utf-8")
    sentence = text[text.index("the console sends"):text.index("A Law 26")]
    named = set(re.findall(r"`([a-z_]+)`", sentence))
    used = {str(o.kind) for opts in OPTIONS.values() for o in opts} | \
        {str(o.kind) for o in TABLE_OPTIONS}
    assert used == {str(k) for k in RulingKind}
    assert named <= used
    # docs/laws.md's sentence leaves out ``board`` (a table ruling): the contract's table has it
    contract = (LAWS_MD.parent / "wire-contract.md").read_text(encoding="utf-8")
    in_contract = set(re.findall(r"^\| `([a-z_]+)`", contract, re.M))
    assert used - named <= in_contract


@pytest.mark.parametrize("code", sorted(OPTIONS))
def test_each_option_cites_a_law_of_its_row(code: Code) -> None:
    row = ROWS[str(code)]
    cited = _law_numbers(row)
    for opt in OPTIONS[code]:
        if opt.kind is RulingKind.CLEAR and opt.law == "81C":
            continue   # the director's general power to close an alert (Law 81C)
        number = int(re.match(r"\d+", opt.law).group())  # type: ignore[union-attr]
        assert number in cited, f"{code} {opt.key}: Law {opt.law} is not in its row"


@pytest.mark.parametrize("code", sorted(OPTIONS))
def test_special_rulings_only_where_the_row_speaks_of_them(code: Code) -> None:
    row = ROWS[str(code)].lower()
    kinds = {o.kind for o in OPTIONS[code]}
    if kinds & {RulingKind.COMPARABLE, RulingKind.NOT_COMPARABLE}:
        assert "comparable" in row
    if RulingKind.OPTION in kinds:
        assert "option" in row
    if RulingKind.LEAD in kinds:
        assert "lead" in row
    if RulingKind.BOARD in kinds:
        assert "`board` ruling" in row
    for opt in OPTIONS[code]:
        if opt.kind is RulingKind.ACCEPT and "card" in opt.inputs:
            assert "card is added" in row     # the contract's accept with seat and card
        elif opt.kind in (RulingKind.ACCEPT, RulingKind.REJECT):
            assert re.search(r"accept|refus|reject|cancel", row)
    if "never acceptable" in row or "cannot be accepted" in row:
        assert RulingKind.ACCEPT not in kinds
    # every alert can be closed by the director
    assert RulingKind.CLEAR in kinds


def test_comparable_only_for_calls_replaced_or_out_of_rotation() -> None:
    with_comparable = {c for c, opts in OPTIONS.items()
                       if any(o.kind is RulingKind.COMPARABLE for o in opts)}
    assert with_comparable == {Code.CALL_OUT_OF_ROTATION, Code.INSUFFICIENT_BID}


def test_every_option_has_a_label_and_a_one_line_explanation_in_three_languages() -> None:
    data = options.as_json()
    for opts in [*data["codes"].values(), data["table"], data["default"]]:
        for opt in opts:
            for lang in ("en", "vi", "zh"):
                line = opt["explain"][lang]
                assert opt["law"] in line and "\n" not in line and "{" not in line
                assert opt["label"][lang]
    assert set(EXPLAIN) == set(BUTTON)


def test_an_unknown_code_gets_only_clear() -> None:
    assert [o.kind for o in options.options_for("NOT_A_CODE")] == [RulingKind.CLEAR]


def test_every_option_the_console_sends_is_one_the_engine_applies() -> None:
    """1.6: the engine refuses an option it does not apply (``error``); the console offers
    none of those (controller.laws.rulings.RULING_OPTIONS)."""
    from controller.laws.rulings import Ruling, option_problem

    for code, opts in OPTIONS.items():
        for opt in opts:
            if "option" in opt.fixed:
                ruling = Ruling(opt.kind, alert=1, option=opt.fixed["option"])
                assert option_problem(ruling, code) is None, (code, opt.key)


def _keys(code: str, params: object) -> list[str]:
    return [o.key for o in options.offered_for(code, params)]


def test_an_alert_waiting_for_the_directors_choice_gets_only_its_choices() -> None:
    """1.6's choices (docs/laws.md): 45E penalty card or a lead; then penalty card or
    withdrawn; 2017 53B; Law 36 or 32 first. Only what ``params.choices`` lists."""
    assert _keys("FIFTH_CARD", {"choices": "penalty_card,lead"}) == [
        "option:penalty_card", "lead"]
    assert _keys("FIFTH_CARD", {"choices": "penalty_card,withdraw", "proper_lead": True}) \
        == ["option:penalty_card", "option:withdraw"]
    assert _keys("LEAD_OUT_OF_TURN", {"choices": "penalty_card,withdraw"}) == [
        "option:withdraw", "option:penalty_card"]
    assert _keys("INADMISSIBLE_DOUBLE", {"choices": "36,32", "out_of_rotation": True}) == [
        "option:36", "option:32"]
    assert _keys("INADMISSIBLE_REDOUBLE", {"choices": ["32"]}) == ["option:32"]


def test_an_alert_without_choices_is_not_offered_them() -> None:
    """The choices are refused by the controller unless the alert waits for one (1.6)."""
    assert _keys("LEAD_OUT_OF_TURN", None) == ["accept", "reject", "clear"]
    assert _keys("LEAD_OUT_OF_TURN", {"suit": "D"}) == ["accept", "reject", "clear"]
    assert _keys("INADMISSIBLE_DOUBLE", {}) == ["reject", "clear"]
    assert _keys("REVOKE", None) == ["adjust", "clear"]


def test_choices_no_option_answers_leave_only_clear() -> None:
    assert _keys("FIFTH_CARD", {"choices": "something_new"}) == ["clear"]
    assert _keys("NOT_A_CODE", {"choices": "lead"}) == ["clear"]
    assert options.choices_of({"choices": 3}) is None
    assert options.choices_of("choices") is None
