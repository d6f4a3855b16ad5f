from alerts.cluster_health import (
    detect_cleaner_stalled,
    detect_collector_failures,
    detect_out_of_range_fetches,
)
from alerts.counters import (
    CLEANER_DEAD_THREADS,
    CLEANER_DIRTY_PERCENT,
    CLEANER_SINCE_LAST_RUN,
    CLEANER_UNCLEANABLE,
    FETCH_ERRORS,
)
from alerts.model import (
    COLLECTOR_FAILURE,
    OFFSETS_TOPIC_CLEANER_STALLED,
    OUT_OF_RANGE_FETCHES,
    CollectorStatus,
    CommitEvent,
)
from alerts.state import CycleInputs, DetectionState
from collectors.model import Failure, OffsetsObservation
from tests.alerts.builders import TH, C, T, commit, committed, inputs, metrics, offsets, run

OOR = {"request": "Fetch", "error": "OFFSET_OUT_OF_RANGE"}


def test_detect_cleaner_stalled_no_run_while_dirty_critical() -> None:
    m = metrics(
        0, {1: {CLEANER_SINCE_LAST_RUN: 7_200_000, CLEANER_DIRTY_PERCENT: 80}, 2: {CLEANER_SINCE_LAST_RUN: 1}}
    )
    [f] = detect_cleaner_stalled(DetectionState(), inputs(metrics=m), 0, TH)
    assert (f.kind, f.severity, f.topic) == (OFFSETS_TOPIC_CLEANER_STALLED, "critical", "__consumer_offsets")
    assert f.evidence["problems"] == ("broker 1: no run for 7200 s at 80% dirty",)


def test_detect_cleaner_stalled_long_idle_but_clean_nothing() -> None:
    m = metrics(0, {1: {CLEANER_SINCE_LAST_RUN: 7_200_000, CLEANER_DIRTY_PERCENT: 10}})
    assert detect_cleaner_stalled(DetectionState(), inputs(metrics=m), 0, TH) == ()


def test_detect_cleaner_stalled_uncleanable_partitions_warning() -> None:
    m = metrics(0, {1: {CLEANER_UNCLEANABLE: 2, CLEANER_DEAD_THREADS: 0}})
    [f] = detect_cleaner_stalled(DetectionState(), inputs(metrics=m), 0, TH)
    assert f.severity == "warning"


def test_detect_cleaner_stalled_dead_thread_critical() -> None:
    m = metrics(0, {3: {CLEANER_DEAD_THREADS: 1}})
    [f] = detect_cleaner_stalled(DetectionState(), inputs(metrics=m), 0, TH)
    assert f.severity == "critical" and f.evidence["problems"] == ("broker 3: 1 dead cleaner threads",)


def _baseline() -> DetectionState:
    return run(
        DetectionState(),
        inputs(
            metrics=metrics(0, {1: {FETCH_ERRORS: 4}, 2: {FETCH_ERRORS: 0}}, OOR),
            offsets=offsets(0, {(T, 0): (100, 200)}),
            committed=committed(0, {("g", T, 0): 150, ("h", T, 0): 50}),
        ),
        0,
    )


def test_detect_out_of_range_fetches_counter_rose_counts_and_groups_outside() -> None:
    inp = inputs(
        metrics=metrics(10, {1: {FETCH_ERRORS: 7}, 2: {FETCH_ERRORS: 1}}, OOR),
        offsets=offsets(10, {(T, 0): (100, 200)}),
    )
    [f] = detect_out_of_range_fetches(_baseline(), inp, 10, TH)
    assert (f.kind, f.severity, f.magnitude["fetch_errors"]) == (OUT_OF_RANGE_FETCHES, "warning", 4)
    assert f.evidence["errors_by_broker"] == ("1=3", "2=1")
    assert f.evidence["committed_outside_range"] == ("h t[0]=50 (100..200)",)


def _fetch_errors_with(commits: tuple[CommitEvent, ...], range_at: float) -> CycleInputs:
    """Fetch errors rose; g committed on the tail (``commits``), t[0]'s range 100..200 sampled at
    ``range_at``; the baseline's h (50, below the log start) is tombstoned: g's offset alone is judged."""
    return inputs(
        metrics=metrics(10, {1: {FETCH_ERRORS: 7}}, OOR),
        offsets=offsets(range_at, {(T, 0): (100, 200)}),
        commit_events=(*commits, commit(None, 1, 90, group="h")),
        tail_live=True,
    )


def test_detect_out_of_range_fetches_commit_past_an_older_log_end_sample_not_outside_info() -> None:
    # a consumer at the head commits 203 after the range was sampled at 200: ahead of the sample, not of
    # the log; and nothing else is outside, so the errors alone (a follower, a seek) do not page
    [f] = detect_out_of_range_fetches(_baseline(), _fetch_errors_with((commit(203, 9, 91),), 8), 10, TH)
    assert (f.severity, f.evidence["committed_outside_range"]) == ("info", ())


def test_detect_out_of_range_fetches_commit_past_a_newer_log_end_sample_outside_warning() -> None:
    [f] = detect_out_of_range_fetches(_baseline(), _fetch_errors_with((commit(203, 7, 91),), 8), 10, TH)
    assert (f.severity, f.evidence["committed_outside_range"]) == ("warning", ("g t[0]=203 (100..200)",))


def test_detect_out_of_range_fetches_commit_below_an_older_log_start_sample_outside_warning() -> None:
    # the log start only grows: below it at the sample, below it at the commit
    [f] = detect_out_of_range_fetches(_baseline(), _fetch_errors_with((commit(60, 9, 91),), 8), 10, TH)
    assert (f.severity, f.evidence["committed_outside_range"]) == ("warning", ("g t[0]=60 (100..200)",))


def test_detect_out_of_range_fetches_counter_flat_nothing() -> None:
    inp = inputs(metrics=metrics(10, {1: {FETCH_ERRORS: 4}}, OOR))
    assert detect_out_of_range_fetches(_baseline(), inp, 10, TH) == ()


def test_detect_out_of_range_fetches_other_error_label_ignored() -> None:
    inp = inputs(metrics=metrics(10, {1: {FETCH_ERRORS: 99}}, {"request": "Fetch", "error": "NOT_LEADER"}))
    assert detect_out_of_range_fetches(_baseline(), inp, 10, TH) == ()


def test_detect_collector_failures_collector_down_critical_since() -> None:
    st = (
        CollectorStatus("offsets", False, 40.0, "KafkaTimeout", "no answer"),
        CollectorStatus("groups", True),
    )
    [f] = detect_collector_failures(DetectionState(), inputs(collectors=st), 100, TH)
    assert (f.kind, f.severity) == (COLLECTOR_FAILURE, "critical")
    assert f.magnitude["seconds_failing"] == 60 and f.evidence["collectors"] == ("offsets",)


def test_detect_collector_failures_partial_failure_warning() -> None:
    obs = OffsetsObservation(C, 0, (), (Failure("partition", "t/3", "LeaderNotAvailable", "x"),))
    [f] = detect_collector_failures(DetectionState(), inputs(offsets=obs), 0, TH)
    assert f.severity == "warning"
    assert f.evidence["partial"] == ("OffsetsObservation: partition t/3 LeaderNotAvailable",)


def test_detect_collector_failures_all_healthy_nothing() -> None:
    assert (
        detect_collector_failures(DetectionState(), inputs(collectors=(CollectorStatus("x", True),)), 0, TH)
        == ()
    )
