"""Names read from the session and schedule files, as every page and export shows them.

A name goes to the console, the vugraph (through the relay), the LIN, PBN and USEBIO files
and the terminal: a bidi control in it reorders what follows everywhere it is shown, and a
control character breaks a line of a file. They are dropped where the name is read.
"""

from __future__ import annotations

import unicodedata
from typing import Final

__all__ = ["BIDI_CONTROLS", "clean_name"]

#: the bidirectional formatting characters (marks, embeddings, overrides, isolates): in a
#: name they reorder what follows on every page and file that shows it (a player named
#: "\u202eevlohs" reads "shovle"), so a name read from the session file drops them
BIDI_CONTROLS: Final = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                                 "\u2066\u2067\u2068\u2069")


def clean_name(text: str) -> str:
    """A player's, a team's, the event's or the venue's name as every page and export shows
    it: no bidi controls, other control characters (a newline, a tab) as one space."""
    kept = "".join(" " if unicodedata.category(c) == "Cc" else c
                   for c in text if c not in BIDI_CONTROLS)
    return " ".join(kept.split())
