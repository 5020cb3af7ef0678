"""CSV cells a spreadsheet shows as typed (controller/formats/csvcell.py)."""

from __future__ import annotations

import pytest

from controller.formats.csvcell import csv_cell


@pytest.mark.parametrize("text", ['=HYPERLINK("http://x","y")', "+cmd|' /C calc'!A0",
                                  "-2+3", "@SUM(A1)", "\tx", "\rx"])
def test_a_text_that_starts_a_formula_gets_a_quote(text: str) -> None:
    assert csv_cell(text) == "'" + text


def test_other_values_are_as_they_are() -> None:
    assert csv_cell("Ann - Bo") == "Ann - Bo"
    assert csv_cell(-110) == -110 and csv_cell(2.5) == 2.5
    assert csv_cell(None) == ""
