"""controller/web/i18n.py: every label the console's page asks for, in en, vi and zh."""

from __future__ import annotations

import re
from pathlib import Path

from controller.web.console.store import APPEALS
from controller.web.i18n import LABELS, LANGS

JS = Path(__file__).resolve().parents[1] / "controller" / "web" / "console" / "static" / \
    "console.js"


def test_every_label_the_console_page_uses_is_there_in_every_language() -> None:
    text = JS.read_text(encoding="utf-8")
    used = set(re.findall(r'\bt\("([a-z_]+)"\)', text))
    # labels made from a prefix and a value the page knows
    used |= {f"score_{f}" for f in ("board", "kind", "ns", "ew", "score_ns", "split_ns",
                                    "split_ew")}
    used |= {f"appeal_{a}" for a in APPEALS}
    used |= {"applied", "refused", "no_change", "late", "slow", "facts", "note"}
    assert used, "no t(...) call found: the pattern is out of date"
    missing = sorted(k for k in used if k not in LABELS)
    assert missing == []
    for key, texts in LABELS.items():
        assert set(texts) == set(LANGS), key
        assert all(texts[lang].strip() for lang in LANGS), key
