"""The display rows rendered once and finished with their numbers (controller/
display_text.py ``_ui_numbers``) are the rows the general path renders, in every language,
for board numbers of every length and every trick count."""

from __future__ import annotations

import pytest

from controller.indicators.display_text import LANGUAGES, _ui, _ui_numbers
from controller.laws.cards import Call, Contract, Seat, Vulnerability


def test_board_rows_finished_with_the_number_are_the_rendered_ones() -> None:
    for lang in LANGUAGES:
        for number in (1, 9, 10, 99, 100, 1234, 123456789012):
            for dealer in Seat:
                for vul in Vulnerability:
                    assert _ui_numbers("board_info", lang, (("dealer", dealer), ("vul", vul)),
                                       n=number) == \
                        _ui("board_info", lang, n=number, dealer=dealer, vul=vul)


def test_board_end_rows_finished_with_the_number_are_the_rendered_ones() -> None:
    for lang in LANGUAGES:
        for key in ("board_complete", "return_cards"):
            for number in (1, 9, 10, 99, 100, 1234, 123456789012, 10**30):
                assert _ui_numbers(key, lang, (), n=number) == _ui(key, lang, n=number)


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


@pytest.mark.slow
def test_a_tables_renderer_gives_the_rows_rendered_from_scratch() -> None:
    """``DisplayRenderer`` keeps the board and second rows of the last key: over random
    boards with seeded irregular inputs (alerts shown, undo, claims), every key it is
    given renders as ``render_display`` renders it alone, in each set of languages."""
    import random

    from controller.boards.generate import random_board
    from controller.engine import Engine
    from controller.formats.events import record_events
    from controller.indicators.display_text import DisplayRenderer, display_key, render_display
    from tests.replay_golden import _junk

    rng = random.Random(21)
    for languages in (LANGUAGES, ("zh",), ("vi", "en")):
        engine = Engine(languages=languages)
        renderer = DisplayRenderer(languages)
        seqs = {"pi": 0, "director": 0}
        keys = 0
        for number in range(1, 4):
            for event in record_events(random_board(rng, number).record, src="pi"):
                for item in ([_junk(rng, "pi", 0)] if rng.random() < 0.2 else []) + [event]:
                    seqs[item["src"]] += 1
                    item = dict(item, seq=seqs[item["src"]])
                    engine.handle("bridge/1/" + ("ruling" if "ruling" in item else "event"),
                                  item)
                    ts = engine._tables["1"]
                    key = display_key(ts.table.board, engine.payloads.shown(ts))
                    assert renderer.render(key) == render_display(key, languages)
                    keys += 1
        assert keys > 150


def test_the_last_calls_that_fit_are_those_the_joined_row_fits() -> None:
    """``_calls`` counts the joined calls' columns from each call's: the calls kept are
    those whose joined text, counted whole, fits (the newest kept), in every language."""
    import random

    from controller.indicators.display_text import WIDTH, _calls, columns
    from controller.laws.cards import ALL_CALLS
    from controller.laws.messages import call_text

    rng = random.Random(5)
    texts = [str(call) for call in ALL_CALLS]
    for _ in range(400):
        calls = tuple(rng.choice(texts) for _ in range(rng.randint(0, 8)))
        for lang in LANGUAGES:
            shown = [call_text(Call.parse(c), lang, short=True) for c in calls]
            while shown and columns(" ".join(shown)) > WIDTH:
                shown.pop(0)
            assert _calls(calls, lang) == " ".join(shown)


def test_a_renderer_finishes_each_contracts_rows_with_its_tricks() -> None:
    """The contract and tricks row kept per contract and declarer: a new contract, an
    equal contract that is another object, the declarer changed under the same contract
    (Law 54A), tricks of one and two digits, a passed-out board, and back to the auction:
    every key renders as ``render_display`` renders it alone."""
    from controller.indicators.display_text import DisplayKey, DisplayRenderer, render_display

    renderer = DisplayRenderer()
    head = (7, Seat.S, Vulnerability.ALL)
    seconds: list[tuple[object, ...]] = []
    doubled = Contract.parse("4HX")
    for contract, declarer in ((doubled, Seat.N), (Contract.parse("4HX"), Seat.N),
                               (doubled, Seat.N), (doubled, Seat.S),
                               (Contract.parse("7NTXX"), Seat.W), (Contract.parse("1C"), Seat.E)):
        for ns, ew in ((0, 0), (1, 0), (9, 1), (10, 2), (12, 1), (3, 10), (0, 13)):
            seconds.append((contract, declarer, (ns, ew)))
        seconds.append((contract, declarer, None))
    seconds += [(Contract.parse("Pass"), None, (0, 0)), (("1C", "Pass"),), ((),)]
    for number, second in enumerate(seconds, 1):
        for third in (("turn", Seat(number % 4)), ("return_cards", number), ("", None)):
            for fourth in ((), (-100,)):
                key: DisplayKey = (head, (second, third, fourth), None)
                assert renderer.render(key) == render_display(key), key
