"""docs/laws.md names, for each code of its "Every code" table, the function that applies the
Law (``module:function``): every name it gives must exist, so that the page cannot rot when
the code moves."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from shared_data import absent, shared_root

LAWS_MD = Path(__file__).resolve().parents[1] / "docs" / "laws.md"
#: ``controller.laws.auction:Auction._law27_insufficient_bid``
FUNCTION = re.compile(r"`((?:controller|firmware_bridge)(?:\.\w+)+):([\w.]+)`")


def _code_rows() -> list[str]:
    text = LAWS_MD.read_text(encoding="utf-8")
    rows: list[str] = []
    for line in text[text.index("| Code | Law 2007 / 2017 |"):].splitlines()[2:]:
        if not line.startswith("| "):
            break
        rows.append(line)
    return rows


def _resolve(module: str, qualname: str) -> object:
    found: object = importlib.import_module(module)
    for part in qualname.split("."):
        found = getattr(found, part)
    return found


def test_every_code_names_the_function_that_applies_it() -> None:
    rows = _code_rows()
    assert len(rows) > 20
    bare = [row.split(" | ")[0] for row in rows if not FUNCTION.search(row.split(" | ")[-1])]
    assert bare == []


def test_every_function_docs_laws_md_names_exists() -> None:
    names = FUNCTION.findall(LAWS_MD.read_text(encoding="utf-8"))
    assert len(names) > 20
    missing = []
    for module, qualname in names:
        try:
            found = _resolve(module, qualname)
        except (ImportError, AttributeError):
            missing.append(f"{module}:{qualname}")
            continue
        if not callable(found):
            missing.append(f"{module}:{qualname} (not a function)")
    assert missing == [], "docs/laws.md names functions that do not exist"


def test_a_name_that_is_gone_would_be_seen() -> None:
    assert callable(_resolve("controller.laws.auction", "Auction._law27_insufficient_bid"))
    try:
        _resolve("controller.laws.auction", "Auction._law27_gone")
    except AttributeError:
        return
    raise AssertionError("a missing method resolved")


PARAPHRASE = LAWS_MD.parent / "laws-paraphrase.md"


def _paraphrase_body(text: str) -> str:
    """docs/laws-paraphrase.md less its opening comment (where the copy comes from)."""
    assert text.startswith("<!--"), "docs/laws-paraphrase.md opens with where it comes from"
    return text[text.index("-->") + len("-->"):].lstrip("\n")


def test_the_paraphrase_in_the_house_is_the_spec() -> None:
    """docs/laws.md cites docs/laws-paraphrase.md, the copy a clone has of the steering spec's
    laws.md: where ../shared is present the two must be equal (a spec change is copied in)."""
    spec = shared_root() / "spec" / "laws.md"
    if not spec.is_file():
        absent(f"the Laws paraphrase of the spec is not here: {spec} is absent (a user's "
                "clone has no ../shared)")
    ours = _paraphrase_body(PARAPHRASE.read_text(encoding="utf-8"))
    assert ours == spec.read_text(encoding="utf-8"), \
        "docs/laws-paraphrase.md differs from ../shared/spec/laws.md: copy the spec in"


def test_the_paraphrase_has_the_worked_scenarios() -> None:
    text = _paraphrase_body(PARAPHRASE.read_text(encoding="utf-8"))
    assert text.startswith("# The Laws as the controller applies them")
    assert "## 7. Test vectors" in text
    assert "](laws-paraphrase.md)" in LAWS_MD.read_text(encoding="utf-8")
