"""Threshold override keys in the settings are regular expressions, refused at start when invalid."""

from __future__ import annotations

import pytest

from collectors.errors import ConfigError


def test_settings_threshold_override_key_invalid_regex_is_a_config_error() -> None:
    from service.settings import load_settings

    with pytest.raises(ConfigError) as err:
        load_settings(detection={"groups": {"batch-(": {"lag_messages": 5}}})
    assert err.value.field == "detection.groups"
    assert "'batch-(' is not a regular expression" in str(err.value)


def test_settings_threshold_override_patterns_kept_in_file_order() -> None:
    from service.settings import load_settings

    s = load_settings(detection={"groups": {"b.*": {"lag_messages": 5}, "billing": {"lag_messages": 6}}})
    assert s.detection.thresholds().limits("billing", None).lag_messages == 5
