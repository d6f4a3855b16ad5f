"""store.alert_rows: the JSON of an alert's magnitude, total, evidence and transition details."""

from __future__ import annotations

import json
import math
from types import MappingProxyType

import pytest

from store import alert_rows


def _documented(value: object) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@pytest.mark.parametrize(
    "value",
    [
        {},
        {"lag_messages": 12345, "lag_seconds": 900.5},
        {"members": ("a", "b"), "committed": 10, "log_end": None, "clean": True},
        {"z": {"y": [1, 2.0, -0.0, 1e300], "x": 'é\u2028"q"\n'}, "a": [{"k": 1}, []]},
        {"nan": math.nan, "inf": math.inf, "big": 2**70},
    ],
)
def test_json_is_compact_sorted_and_the_documented_encoders(value: dict[str, object]) -> None:
    assert alert_rows._json(value) == _documented(value)
    assert json.loads(alert_rows._json(value).replace("NaN", "null").replace("Infinity", "null")) is not None


def test_json_takes_any_mapping_and_rejects_what_json_cannot_hold() -> None:
    assert alert_rows._json(MappingProxyType({"b": 1, "a": 2})) == '{"a":2,"b":1}'
    with pytest.raises(TypeError):
        alert_rows._json({"when": object()})
    with pytest.raises(TypeError):
        alert_rows._json({"set": {1, 2}})
