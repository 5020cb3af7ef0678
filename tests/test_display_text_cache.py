"""The display rows rendered once and finished with their numbers (controller/
display_text.py ``_ui_numbers``) are the rows the general path renders, in every language,
for board numbers of every length and every trick count."""

from __future__ import annotations

from controller.indicators.display_text import LANGUAGES, _ui, _ui_numbers
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
                    key = display_key(ts.table.board, engine._shown(ts))
                    assert renderer.render(key) == render_display(key, languages)
                    keys += 1
        assert keys > 150
