from alerts.lag_alerts import detect_lag, reached_at
from alerts.model import CONSUMER_STALLED, LAG_HIGH
from alerts.state import DetectionState, RangeSample
from alerts.thresholds import Limits, Override, Thresholds
from tests.alerts.builders import TH, T, committed, inputs, kinds, offsets, run

G = ("g", T, 0)


def _history(points: list[tuple[float, int, int]]) -> DetectionState:
    s = DetectionState()
    for at, end, c in points:
        s = run(s, inputs(offsets=offsets(at, {(T, 0): (0, end)}), committed=committed(at, {G: c})), at)
    return s


def test_reached_at_first_sample_after_last_below() -> None:
    h = [RangeSample(0, 0, 10), RangeSample(10, 0, 5), RangeSample(20, 0, 30), RangeSample(30, 0, 40)]
    assert reached_at(h, 20) == 20
    assert reached_at(h, 1) is None  # never below in the history: unknown


def test_detect_lag_messages_over_limit_lag_high_with_lag_seconds_from_clock() -> None:
    inp = inputs(
        offsets=offsets(100, {(T, 0): (0, 20_000)}),
        committed=committed(100, {G: 5_000}),
        log_end_reached_at=lambda t, p, o: 40.0 if (t, p, o) == (T, 0, 5_001) else None,
    )
    [f] = detect_lag(DetectionState(), inp, 100, TH)
    assert (f.kind, f.severity) == (LAG_HIGH, "warning")
    assert f.magnitude == {"lag": 15_000, "lag_seconds": 60.0}


def test_detect_lag_seconds_over_limit_from_history_lag_high() -> None:
    s = _history([(0, 100, 100), (10, 150, 100)])
    th = Thresholds(default=Limits(lag_messages=None, lag_seconds=500, stall_seconds=None))
    [f] = detect_lag(
        s, inputs(offsets=offsets(700, {(T, 0): (0, 160)}), committed=committed(700, {G: 100})), 700, th
    )
    assert f.magnitude == {"lag": 60, "lag_seconds": 690.0}


def test_detect_lag_unknown_seconds_reported_none_not_zero() -> None:
    th = Thresholds(default=Limits(lag_messages=10, stall_seconds=None))
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 500)}), committed=committed(10, {G: 100}))
    [f] = detect_lag(DetectionState(), inp, 10, th)
    assert f.magnitude["lag_seconds"] is None


def test_detect_lag_negative_lag_kept_no_lag_high() -> None:
    th = Thresholds(default=Limits(lag_messages=1, lag_seconds=1))
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), committed=committed(10, {G: 150}))
    assert detect_lag(DetectionState(), inp, 10, th) == ()


def test_detect_lag_group_override_disables_lag_high() -> None:
    th = Thresholds(groups={"g": Override(lag_messages=None, lag_seconds=None)})
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 50_000)}), committed=committed(10, {G: 0}))
    assert LAG_HIGH not in kinds(detect_lag(DetectionState(), inp, 10, th))


def test_detect_lag_committed_unmoved_with_lag_stalled() -> None:
    s = _history([(0, 100, 90), (500, 100, 90)])
    th = Thresholds(default=Limits(lag_messages=None, lag_seconds=None, stall_seconds=900))
    inp = inputs(offsets=offsets(1000, {(T, 0): (0, 120)}), committed=committed(1000, {G: 90}))
    [f] = detect_lag(s, inp, 1000, th)
    assert (f.kind, f.severity, f.magnitude["lag"]) == (CONSUMER_STALLED, "warning", 30)
    assert f.evidence["stalled_seconds"] == 1000


def test_detect_lag_zero_lag_never_stalled() -> None:
    s = _history([(0, 100, 100), (500, 100, 100)])
    inp = inputs(offsets=offsets(5000, {(T, 0): (0, 100)}), committed=committed(5000, {G: 100}))
    assert detect_lag(s, inp, 5000, TH) == ()


def test_detect_lag_idle_consumer_just_got_new_message_not_stalled() -> None:
    s = _history([(0, 100, 100), (4000, 100, 100)])
    inp = inputs(offsets=offsets(4010, {(T, 0): (0, 101)}), committed=committed(4010, {G: 100}))
    assert CONSUMER_STALLED not in kinds(detect_lag(s, inp, 4010, TH))
