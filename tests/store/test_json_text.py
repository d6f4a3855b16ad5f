"""store.json_text.sorted_compact_text: what json.dumps writes with sorted keys, compact separators and
``default=str`` (an alert's occurrence identity is compared as text with the stored one)."""

from __future__ import annotations

import datetime
import decimal
import json
import math
from types import MappingProxyType

import pytest

from store.json_text import sorted_compact_text


def _documented(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


class _Named:
    def __str__(self) -> str:
        return "named ü"


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"committed": 10, "log_end": None, "members": ("a", "b"), "clean": True},
        {"z": {"y": [1, 2.0, -0.0, 1e300], "x": 'é\u2028"q"\n'}, "a": [{"k": 1}, []]},
        {"nan": math.nan, "inf": math.inf, "big": 2**70},
        {"at": datetime.datetime(2026, 12, 2, 9, 0, tzinfo=datetime.UTC), "d": decimal.Decimal("1.50")},
        {"who": _Named(), "nested": {"set": frozenset({3}), "c": 1 + 2j}},
    ],
)
def test_text_is_the_documented_encoders_with_default_str(value: dict[str, object]) -> None:
    assert sorted_compact_text(value) == _documented(value)


def test_text_takes_any_mapping() -> None:
    assert sorted_compact_text(MappingProxyType({"b": 1, "a": _Named()})) == '{"a":"named \\u00fc","b":1}'
