"""service.detection.change_log: an evaluation's alert changes logged one by one up to a bound, the rest
summed up in one line (a fleet's burst must not write tens of thousands of lines)."""

from __future__ import annotations

import logging
from dataclasses import replace

import pytest

from service.detection.change_log import log_changes
from service.detection.lifecycle import LifecycleRules, plan
from store.alert_records import Alert
from tests.service.detection.builders import C, lag, rewind


def _fired(n: int) -> list[Alert]:
    findings = [rewind(at=1.0)] + [lag(group=f"g{i:04d}") for i in range(n - 1)]
    writes = plan({}, findings, frozenset(), {}, 100.0, LifecycleRules()).writes
    return [w.alert for w in writes]


def test_changes_beyond_the_bound_summed_by_transition_and_kind(caplog: pytest.LogCaptureFixture) -> None:
    fired = _fired(120)
    resolved = replace(fired[1], resolved_reason="clean")
    written = [(a, "fired") for a in fired] + [(fired[2], None), (resolved, "resolved")]
    with caplog.at_level(logging.INFO, logger="service.detection.loop"):
        log_changes(C, written, {"cluster": C}, limit=50)
    one_by_one = [r for r in caplog.records if getattr(r, "alert_id", None) is not None]
    assert [r.alert_id for r in one_by_one] == [a.id for a in fired[:50]]  # type: ignore[attr-defined]
    assert {r.levelname for r in one_by_one} == {"WARNING"} and one_by_one[0].kind == "offset_rewind"  # type: ignore[attr-defined]
    [summary] = [r for r in caplog.records if getattr(r, "alert_id", None) is None]
    assert summary.levelname == "WARNING" and summary.unlogged_changes == 71  # type: ignore[attr-defined]
    assert "71 more alert changes" in summary.getMessage()
    assert "70 lag_high fired, 1 lag_high resolved" in summary.getMessage()
    assert summary.cluster == C  # type: ignore[attr-defined]


def test_changes_within_the_bound_each_logged_and_no_summary(caplog: pytest.LogCaptureFixture) -> None:
    fired = _fired(3)
    resolved = replace(fired[0], resolved_reason="acknowledged")
    with caplog.at_level(logging.INFO, logger="service.detection.loop"):
        log_changes(C, [(fired[1], "fired"), (fired[2], None), (resolved, "resolved")], {"cluster": C})
    assert [(r.levelname, r.getMessage().split(" ")[2]) for r in caplog.records] == [
        ("WARNING", "fired"),
        ("INFO", "resolved"),
    ]
