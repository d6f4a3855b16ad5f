from dataclasses import FrozenInstanceError, replace

import pytest

from store.alert_records import Alert, changed


def _alert() -> Alert:
    return Alert(
        id="al-1",
        kind="lag_high",
        severity="warning",
        status="firing",
        cluster="c",
        group="g",
        topic="t",
        partition=0,
        started_at=1.0,
        updated_at=2.0,
        summary="lag 5",
        cause=None,
        magnitude={"lag": 5},
        magnitude_total={"lag": 5},
        evidence={"log_end": 5},
        occurrence="{}",
        occurrences=1,
        seq=7,
    )


def test_changed_equals_replace_and_leaves_the_original_alone() -> None:
    a = _alert()
    b = changed(a, updated_at=9.0, summary="lag 6", magnitude={"lag": 6})
    assert b == replace(a, updated_at=9.0, summary="lag 6", magnitude={"lag": 6})
    assert (a.updated_at, a.summary, a.magnitude) == (2.0, "lag 5", {"lag": 5})
    assert b is not a and changed(a) == a
    assert not hasattr(Alert, "__post_init__")  # changed() skips __init__: there must be nothing to skip


def test_changed_unknown_field_raises_and_the_copy_stays_frozen() -> None:
    a = _alert()
    with pytest.raises(TypeError, match="nope"):
        changed(a, nope=1)
    with pytest.raises(FrozenInstanceError):
        changed(a, summary="x").summary = "y"  # type: ignore[misc]
