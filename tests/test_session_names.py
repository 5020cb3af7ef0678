"""Names read from the session and schedule files (controller/session/names.py): no bidi
control reaches the console, the relay or the LIN and PBN exports."""

from __future__ import annotations

import io
import tomllib
from pathlib import Path

from controller.session import load_session
from controller.session.export import Published, export
from controller.session.names import BIDI_CONTROLS, clean_name
from controller.session.schedule import parse_movement

#: a right-to-left override, an isolate and a mark, and a newline that would break a line
HOSTILE = "Ann\u202e relcrA\u2066\u200f\nAnn"

SESSION = """
[session]
event = "Club\u202e Pairs"
venue = "River\u2067side"
date = 2026-11-30
[movement]
type = "mitchell"
tables = 1
boards_per_round = 1
[pairs]
1 = {{ name = "The\u202dWinners", players = ["{hostile}", "Bob Baker"] }}
2 = ["Cy\u061c Cole", "Di Dunn"]
"""


def test_a_name_drops_bidi_controls_and_breaks_no_line() -> None:
    assert clean_name(HOSTILE) == "Ann relcrA Ann"
    assert clean_name("Nguyễn Văn An") == "Nguyễn Văn An"   # letters of any script stay
    assert clean_name("李\u200d明") == "李\u200d明"          # a joiner is not a bidi control
    assert all(clean_name(f"a{c}b") == "ab" for c in BIDI_CONTROLS)


def test_the_session_files_names_are_clean(tmp_path: Path) -> None:
    path = tmp_path / "session.toml"
    path.write_text(SESSION.format(hostile=HOSTILE.replace("\n", "\\n")), encoding="utf-8")
    session = load_session(path)
    assert (session.event, session.venue) == ("Club Pairs", "Riverside")
    assert session.pairs[1].name == "TheWinners"
    assert session.pairs[1].players == ("Ann relcrA Ann", "Bob Baker")
    assert session.pairs[2].players == ("Cy Cole", "Di Dunn")
    # the exports show the names as read
    published = {("1", 1): Published("1", 1, result={
        "table": "1", "board": 1, "contract": "3NT", "declarer": "S", "dealer": "N",
        "vul": "None", "tricks": 9,
        "score_ns": 400})}
    written = export(session, published, tmp_path / "out", ["pbn", "lin"], io.StringIO())
    texts = {p.suffix: p.read_text(encoding="utf-8") for p in written}
    assert {".pbn", ".lin"} <= set(texts)
    assert '[Event "Club Pairs"]' in texts[".pbn"] and "Ann relcrA Ann" in texts[".pbn"]
    assert "Ann relcrA Ann" in texts[".lin"]
    for text in texts.values():
        assert not BIDI_CONTROLS & set(text)


def test_the_schedules_names_are_clean() -> None:
    data = tomllib.loads('[session]\nid = "s"\nevent = "Club\\u202e Pairs"\n'
                        '[pairs]\n1 = "Ann\\u2066 Archer"\n'
                        '[tables]\n"1" = "1-2"\n')
    scheduled = parse_movement(data, "schedule.toml")
    assert scheduled.event == "Club Pairs"
    assert dict(scheduled.pairs) == {"1": "Ann Archer"}
