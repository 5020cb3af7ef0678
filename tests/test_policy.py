from __future__ import annotations

from pathlib import Path

import pytest

from controller.indicators.policy import DEFAULT_POLICY, IndicatorPolicy, PolicyError, Visibility
from controller.laws.irregularities import DIRECTOR_ONLY, Code


def test_contract_default_shows_auction_codes_at_once_and_revoke_after_play() -> None:
    for code in Code:
        at_once = DEFAULT_POLICY.shows_at_table(code, play_over=False)
        after = DEFAULT_POLICY.shows_at_table(code, play_over=True)
        assert after is True
        assert at_once is (code not in DIRECTOR_ONLY)


def test_file_overrides_one_code_and_keeps_the_others(tmp_path: Path) -> None:
    f = tmp_path / "policy.toml"
    f.write_text('[indicator]\ndefault = "table"\n[indicator.codes]\n'
                 'revoke = "table"\nUNKNOWN_TAG = "director"\n')
    policy = IndicatorPolicy.load(f)
    assert policy.visibility(Code.REVOKE) is Visibility.TABLE
    assert policy.visibility(Code.DEFECTIVE_TRICK) is Visibility.AFTER_PLAY
    assert not policy.shows_at_table("UNKNOWN_TAG", play_over=True)
    assert IndicatorPolicy.from_mapping(policy.to_mapping()) == policy


def test_unknown_code_in_an_alert_follows_the_default() -> None:
    policy = IndicatorPolicy(default=Visibility.DIRECTOR)
    assert not policy.shows_at_table("SOMETHING_NEW", play_over=True)


@pytest.mark.parametrize("text", [
    '[indicator.codes]\nNOT_A_CODE = "table"\n',
    '[indicator.codes]\nREVOKE = "sometimes"\n',
    '[indicator]\ncolour = "red"\n',
    "[indicator\n",
])
def test_broken_policy_files_give_a_clear_error(tmp_path: Path, text: str) -> None:
    f = tmp_path / "policy.toml"
    f.write_text(text)
    with pytest.raises(PolicyError):
        IndicatorPolicy.load(f)


def test_missing_policy_file_is_a_policy_error(tmp_path: Path) -> None:
    with pytest.raises(PolicyError, match="cannot read"):
        IndicatorPolicy.load(tmp_path / "absent.toml")


def test_play_over_can_be_given_by_position_or_keyword() -> None:
    assert DEFAULT_POLICY.shows_at_table(Code.REVOKE, True)
    assert DEFAULT_POLICY.shows_at_table(Code.REVOKE, play_ended=True)
    assert not DEFAULT_POLICY.shows_at_table(Code.REVOKE, False)
