"""The display rows rendered once and finished with their numbers (controller/
display_text.py ``_ui_numbers``) are the rows the general path renders, in every language,
for board numbers of every length and every trick count."""

from __future__ import annotations

from controller.display_text import LANGUAGES, _ui, _ui_numbers
from controller.laws.cards import Contract, Seat, Vulnerability


def test_board_rows_finished_with_the_number_are_the_rendered_ones() -> None:
    for lang in LANGUAGES:
        for number in (1, 9, 10, 99, 100, 1234, 123456789012):
            for dealer in Seat:
                for vul in Vulnerability:
                    assert _ui_numbers("board_info", lang, (("dealer", dealer), ("vul", vul)),
                                       n=number) == \
                        _ui("board_info", lang, n=number, dealer=dealer, vul=vul)


def test_contract_rows_finished_with_the_tricks_are_the_rendered_ones() -> None:
    for lang in LANGUAGES:
        for text in ("1C", "3NT", "4HX", "7NTXX", "6SX"):
            contract = Contract.parse(text)
            for seat in Seat:
                for ns in range(14):
                    for ew in range(14 - ns):
                        assert _ui_numbers("contract_tricks", lang,
                                           (("contract", contract), ("seat", seat)),
                                           ns=ns, ew=ew) == \
                            _ui("contract_tricks", lang, contract=contract, seat=seat,
                                ns=ns, ew=ew)
