"""Indicator policy: what the table itself shows (LEDs, display) for each irregularity code.

Every alert goes on ``{root}/{t}/alert`` whatever the policy says (the director's console
and the record read it). The policy only decides what the *table* shows on ``indicator``:

- ``table``: at once (the contract's default for auction irregularities and leads out
  of turn);
- ``after_play``: to the director alone until play ends, then on the table too (the
  contract's default for ``REVOKE`` and ``DEFECTIVE_TRICK``, which only players may draw
  attention to during play: Laws 9A2, 61B);
- ``director``: never on the table.

An event's regulations may change it (laws.md 4.1: "Table display is a setting for the
Regulating Authority"). Policy file (TOML), given to ``bridge-table controller --policy``::

    [indicator]
    default = "table"            # for every code not listed below
    [indicator.codes]
    REVOKE = "table"             # this event shows revokes at once
    DEFECTIVE_TRICK = "after_play"
    UNKNOWN_TAG = "director"

    [tempo]                      # the tempo evidence's thresholds (controller/evidence/tempo.py,
    pass_seconds = 6.0           # docs/tempo.md); keys not given keep their default

Pure: no I/O beyond ``IndicatorPolicy.load`` reading the file it is given.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from controller.evidence.tempo import DEFAULT_TEMPO, TempoPolicy, TempoPolicyError
from controller.laws.irregularities import DIRECTOR_ONLY, Code
from controller.tomlfile import read_toml

__all__ = ["Visibility", "IndicatorPolicy", "PolicyError", "DEFAULT_POLICY"]


class PolicyError(ValueError):
    """A policy file that cannot be read or names an unknown code or visibility."""


class Visibility(enum.StrEnum):
    TABLE = "table"
    AFTER_PLAY = "after_play"
    DIRECTOR = "director"

    @classmethod
    def parse(cls, text: str) -> Visibility:
        t = str(text).strip().lower().replace("-", "_")
        aliases = {"at_once": cls.TABLE, "now": cls.TABLE, "director_only": cls.DIRECTOR,
                   "never": cls.DIRECTOR}
        try:
            return aliases.get(t) or cls(t)
        except ValueError:
            choices = ", ".join(v.value for v in cls)
            raise PolicyError(f"not a visibility: {text!r} (one of {choices})") from None


def _contract_defaults() -> Mapping[Code, Visibility]:
    return MappingProxyType({code: Visibility.AFTER_PLAY for code in DIRECTOR_ONLY})


@dataclass(frozen=True)
class IndicatorPolicy:
    """Per-code visibility on the table; codes not listed get ``default``."""

    default: Visibility = Visibility.TABLE
    codes: Mapping[Code, Visibility] = field(default_factory=_contract_defaults)
    #: the policy file's ``[tempo]`` section (evidence for the director, never the table's)
    tempo: TempoPolicy = DEFAULT_TEMPO

    def visibility(self, code: Code | str) -> Visibility:
        try:
            return self.codes.get(Code(code), self.default)
        except ValueError:  # a code this version does not know: follow the default
            return self.default

    def shows_at_table(self, code: Code | str, play_over: bool | None = None, *,
                       play_ended: bool | None = None) -> bool:
        """Whether the table's LEDs and display show an irregularity of ``code`` now.

        ``play_over`` (or its keyword alias ``play_ended``): the board's play has ended.
        """
        play_over = bool(play_over if play_over is not None else play_ended)
        vis = self.visibility(code)
        if vis is Visibility.TABLE:
            return True
        if vis is Visibility.AFTER_PLAY:
            return play_over
        return False

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> IndicatorPolicy:
        """From a parsed policy file: ``{"indicator": {"default": .., "codes": {..}}}``.

        Codes given replace the contract's defaults one by one; codes not given keep them.
        """
        tempo_section = data.get("tempo", {})
        if not isinstance(tempo_section, Mapping):
            raise PolicyError("[tempo] must be a table")
        try:
            tempo = TempoPolicy.from_mapping(tempo_section)
        except TempoPolicyError as e:
            raise PolicyError(str(e)) from None
        section = data.get("indicator", {} if "tempo" in data else data)
        if not isinstance(section, Mapping):
            raise PolicyError("[indicator] must be a table")
        unknown_keys = set(section) - {"default", "codes"}
        if unknown_keys:
            raise PolicyError(f"unknown keys in [indicator]: {sorted(unknown_keys)}")
        default = Visibility.parse(section.get("default", Visibility.TABLE.value))
        codes: dict[Code, Visibility] = dict(_contract_defaults())
        given = section.get("codes", {})
        if not isinstance(given, Mapping):
            raise PolicyError("[indicator.codes] must be a table of CODE = visibility")
        for name, vis in given.items():
            try:
                code = Code(str(name).strip().upper())
            except ValueError:
                raise PolicyError(f"unknown irregularity code in policy: {name!r}") from None
            codes[code] = Visibility.parse(vis)
        return cls(default=default, codes=MappingProxyType(codes), tempo=tempo)

    @classmethod
    def load(cls, path: str | Path) -> IndicatorPolicy:
        return cls.from_mapping(read_toml(path, PolicyError, "a valid TOML policy file"))

    def to_mapping(self) -> dict[str, Any]:
        """The policy as a policy file would write it (for logs and the status topic)."""
        return {"indicator": {"default": self.default.value,
                              "codes": {str(c): v.value for c, v in sorted(self.codes.items())}},
                "tempo": self.tempo.to_mapping()}


#: The contract's policy: everything at once except REVOKE and DEFECTIVE_TRICK (after play).
DEFAULT_POLICY = IndicatorPolicy()
