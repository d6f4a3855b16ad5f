from collections.abc import Callable
from dataclasses import replace

import pytest

from alerts.model import RETENTION_RISK
from alerts.retention import detect_retention_risk, jitter, rate
from alerts.state import CycleInputs, DetectionState
from tests.alerts.builders import TH, T, committed, inputs, offsets, run

G = ("g", T, 0)


def _cycles(points: list[tuple[float, int, int]], end: int = 100_000) -> DetectionState:
    s = DetectionState()
    for at, start, c in points:
        s = run(s, inputs(offsets=offsets(at, {(T, 0): (start, end)}), committed=committed(at, {G: c})), at)
    return s


def test_rate_needs_two_points_a_minute_apart() -> None:
    assert rate([(0, 0), (30, 100)], 30, 3600) is None
    assert rate([(0, 0), (100, 500)], 100, 3600) == 5.0
    assert rate([(0, 0), (5000, 10), (5100, 510)], 5100, 3600) == 5.0


def test_rate_min_span_shorter_judges_a_shorter_history() -> None:
    assert rate([(0, 0), (30, 90)], 30, 3600, min_span=20) == 3.0
    assert rate([(0, 0), (10, 90)], 10, 3600, min_span=20) is None


def test_detect_retention_risk_rate_min_span_seconds_from_thresholds() -> None:
    s = _cycles([(0, 0, 5_000), (10, 100, 5_000), (20, 200, 5_000)])
    inp = inputs(offsets=offsets(30, {(T, 0): (300, 100_000)}), committed=committed(30, {G: 5_000}))
    assert detect_retention_risk(s, inp, 30, TH) == ()  # under a minute of history: no rate
    [f] = detect_retention_risk(s, inp, 30, replace(TH, rate_min_span_seconds=20.0))
    assert f.magnitude["seconds_to_loss"] == pytest.approx(470.0)


def test_detect_retention_risk_start_catching_stalled_group_warning_time_to_loss() -> None:
    s = _cycles([(0, 0, 5_000), (100, 1_000, 5_000)])
    inp = inputs(offsets=offsets(200, {(T, 0): (2_000, 100_000)}), committed=committed(200, {G: 5_000}))
    [f] = detect_retention_risk(s, inp, 200, TH)
    assert (f.kind, f.severity) == (RETENTION_RISK, "warning")
    assert f.magnitude["seconds_to_loss"] == 300.0
    assert f.evidence["log_start_rate_per_s"] == 10.0 and f.evidence["consume_rate_per_s"] == 0.0


def test_detect_retention_risk_group_faster_than_retention_nothing() -> None:
    s = _cycles([(0, 0, 5_000), (100, 1_000, 7_000)])
    inp = inputs(offsets=offsets(200, {(T, 0): (2_000, 100_000)}), committed=committed(200, {G: 9_000}))
    assert detect_retention_risk(s, inp, 200, TH) == ()


def test_detect_retention_risk_loss_beyond_horizon_nothing() -> None:
    s = _cycles([(0, 0, 90_000), (100, 10, 90_000)])
    inp = inputs(offsets=offsets(200, {(T, 0): (20, 100_000)}), committed=committed(200, {G: 90_000}))
    assert detect_retention_risk(s, inp, 200, TH) == ()


def test_rate_run_of_equal_samples_holds_from_the_window_start() -> None:
    # samples 0..3000 all said 100 (a history keeps that run as its first and last sample)
    dense = [(float(t), 100) for t in range(0, 3001, 5)] + [(4000.0, 460)]
    sparse = [(0.0, 100), (3000.0, 100), (4000.0, 460)]
    assert rate(sparse, 4000, 3600) == rate(dense, 4000, 3600) == 0.1


def test_detect_retention_risk_after_a_rewind_no_forecast_from_the_negative_rate() -> None:
    # retention moves the log start 10/s; the group rewinds 5_000 -> 3_000 at 150 (a replay, not a loss)
    s = _cycles([(0, 0, 5_000), (100, 1_000, 5_000), (150, 1_500, 3_000)])
    inp = inputs(offsets=offsets(200, {(T, 0): (2_000, 5_100)}), committed=committed(200, {G: 3_000}))
    assert detect_retention_risk(s, inp, 200, TH) == ()  # 50 s since the rewind: too little to project


def test_detect_retention_risk_at_risk_never_more_than_the_log_holds_past_the_commit() -> None:
    s = _cycles([(0, 0, 5_000), (100, 1_000, 5_000)], end=5_100)
    inp = inputs(offsets=offsets(200, {(T, 0): (2_000, 5_100)}), committed=committed(200, {G: 5_000}))
    [f] = detect_retention_risk(s, inp, 200, TH)
    assert f.magnitude["messages_at_risk"] == 100  # the projection says more; the log holds 100 unread


def test_detect_retention_risk_nothing_unread_nothing_at_risk() -> None:
    # retention deletes up to what the caught-up group has read: no forecast of a loss of nothing
    s = _cycles([(0, 0, 5_000), (100, 1_000, 5_000)], end=5_000)
    inp = inputs(offsets=offsets(200, {(T, 0): (2_000, 5_000)}), committed=committed(200, {G: 5_000}))
    assert detect_retention_risk(s, inp, 200, TH) == ()


def test_jitter_largest_step_over_the_span() -> None:
    stairs = [(0.0, 0), (20.0, 0), (25.0, 40), (45.0, 40), (50.0, 80), (100.0, 80)]
    assert jitter(stairs, 100, 3600) == 0.4  # a 40 step over 100 s
    assert jitter(stairs[:2], 20, 3600) == 0.0  # too short to be a rate


def _segment_steps(committed_at: Callable[[int, int], int], until: int) -> tuple[DetectionState, CycleInputs]:
    """Retention deleting a 40-message segment every 20 s (the first step 5 s in), 2 messages/s
    produced, polled every 5 s; the state up to ``until`` and that cycle's inputs."""
    s, inp = DetectionState(), inputs()
    for at in range(0, until + 1, 5):
        start, end = 40 * ((at + 15) // 20), 1_000 + 2 * at
        o = offsets(at, {(T, 0): (start, end)})
        inp = inputs(offsets=o, committed=committed(at, {G: committed_at(at, end)}))
        if at < until:
            s = run(s, inp, at)
    return s, inp


def test_detect_retention_risk_group_keeping_up_with_a_stepping_log_start_nothing() -> None:
    # over 0..65 s the log start went 0 -> 160 (2.46/s: four steps in 65 s) while the group consumed its
    # 2/s; a step of the log start alone makes up the difference: no forecast
    s, inp = _segment_steps(lambda at, end: end - 2, 65)
    assert detect_retention_risk(s, inp, 65, TH) == ()


def test_detect_retention_risk_stalled_group_on_a_stepping_log_start_warning() -> None:
    s, inp = _segment_steps(lambda at, end: 1_000, 65)
    [f] = detect_retention_risk(s, inp, 65, TH)
    assert f.evidence["consume_rate_per_s"] == 0.0 and f.magnitude["seconds_to_loss"] < 6 * 3600
