from alerts.log_range import detect_committed_outside_log
from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END
from alerts.state import DetectionState
from tests.alerts.builders import TH, T, commit, committed, groups, inputs, offsets

G = ("g", T, 0)


def test_detect_committed_outside_log_below_start_critical_messages_lost() -> None:
    inp = inputs(
        offsets=offsets(10, {(T, 0): (250, 900)}),
        committed=committed(10, {G: 100}),
        groups=groups(10, {"g": "Stable"}),
    )
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert (f.kind, f.severity, f.magnitude["messages_lost"]) == (COMMITTED_BELOW_LOG_START, "critical", 150)
    assert (f.evidence["log_start"], f.evidence["committed"]) == (250, 100)


def test_detect_committed_outside_log_below_start_empty_group_warning() -> None:
    inp = inputs(
        offsets=offsets(10, {(T, 0): (250, 900)}),
        committed=committed(10, {G: 100}),
        groups=groups(10, {"g": "Empty"}),
    )
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert f.severity == "warning"


def test_detect_committed_outside_log_beyond_end_critical_beyond_count() -> None:
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), committed=committed(9, {G: 150}))
    [f] = detect_committed_outside_log(DetectionState(), inp, 10, TH)
    assert (f.kind, f.severity, f.magnitude["beyond"]) == (COMMITTED_BEYOND_LOG_END, "critical", 50)


def test_detect_committed_outside_log_equal_to_log_end_not_beyond() -> None:
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), committed=committed(9, {G: 100}))
    assert detect_committed_outside_log(DetectionState(), inp, 10, TH) == ()


def test_detect_committed_outside_log_commit_newer_than_range_not_compared() -> None:
    # The tail saw a commit made after the log range was observed; the log has grown since.
    inp = inputs(offsets=offsets(10, {(T, 0): (0, 100)}), commit_events=(commit(130, 11, 1),), tail_live=True)
    assert detect_committed_outside_log(DetectionState(), inp, 12, TH) == ()


def test_detect_committed_outside_log_unknown_range_nothing() -> None:
    inp = inputs(offsets=offsets(10, {(T, 1): (0, 10)}), committed=committed(9, {G: 150}))
    assert detect_committed_outside_log(DetectionState(), inp, 10, TH) == ()


def test_detect_committed_outside_log_beyond_end_recommitted_after_observation_still_reported() -> None:
    from alerts.state import DetectionState as State
    from tests.alerts.builders import run

    prev = run(
        State(),
        inputs(offsets=offsets(10, {(T, 0): (0, 150)}), commit_events=(commit(150, 10, 1),), tail_live=True),
        10,
    )
    inp = inputs(offsets=offsets(20, {(T, 0): (0, 100)}), commit_events=(commit(150, 25, 2),), tail_live=True)
    [f] = detect_committed_outside_log(prev, inp, 26, TH)
    assert (f.kind, f.magnitude["beyond"]) == (COMMITTED_BEYOND_LOG_END, 50)
