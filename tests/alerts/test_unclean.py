from alerts.counters import UNCLEAN_ELECTIONS
from alerts.model import UNCLEAN_LEADER_ELECTION, CollectorStatus
from alerts.state import DetectionState
from alerts.unclean import METRICS_COLLECTOR, detect_unclean_elections
from collectors.broker_metrics import BrokerMetricsCollector
from tests.alerts.builders import TH, T, committed, inputs, metadata, metrics, offsets, run


def _before(elections: float = 0) -> DetectionState:
    return run(
        DetectionState(),
        inputs(
            metadata=metadata(10, {(T, 0): (1, 4, (1, 2)), (T, 1): (2, 7, (2, 3))}),
            offsets=offsets(10, {(T, 0): (0, 150), (T, 1): (0, 10)}),
            committed=committed(10, {("g", T, 0): 140}),
            metrics=metrics(10, {1: {UNCLEAN_ELECTIONS: elections}}),
        ),
        10,
    )


def test_detect_unclean_elections_leader_outside_previous_isr_metrics_down_warning_with_groups() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))}),
        collectors=(CollectorStatus("broker_metrics", ok=False, failing_since=12),),
    )
    [f] = detect_unclean_elections(_before(), inp, 20, TH)
    assert (f.kind, f.severity, f.topic, f.partition) == (UNCLEAN_LEADER_ELECTION, "warning", T, 0)
    assert f.evidence["groups"] == ("g",)
    assert (f.evidence["old_isr"], f.evidence["new_leader"]) == ((1, 2), 3)


def test_detect_unclean_elections_leader_outside_isr_counter_observed_flat_info() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3, 1, 2)), (T, 1): (2, 7, (2, 3))}),
        metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 0}}),
    )
    [f] = detect_unclean_elections(_before(), inp, 20, TH)
    assert (f.severity, f.cause, f.partition) == ("info", "isr_change_between_polls", 0)
    assert f.evidence["unclean_counter_flat"] is True


def test_detect_unclean_elections_outsider_between_scrapes_counter_watched_info() -> None:
    # metadata fresh this cycle, the metrics scrape not: the baseline stands, a rise would come next scrape
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3, 1, 2)), (T, 1): (2, 7, (2, 3))}),
        collectors=(CollectorStatus("broker_metrics", ok=True),),
    )
    [f] = detect_unclean_elections(_before(), inp, 20, TH)
    assert (f.severity, f.cause) == ("info", "isr_change_between_polls")


def test_detect_unclean_elections_scrape_without_the_counter_briefly_info_long_warning() -> None:
    meta = metadata(20, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))})
    missed = metrics(20, {2: {UNCLEAN_ELECTIONS + "_other": 0}})  # the controller's scrape is missing
    [f] = detect_unclean_elections(_before(), inputs(metadata=meta, metrics=missed), 20, TH)
    assert f.severity == "info"  # seen at 10: a controller restarting is no reason to page
    [g] = detect_unclean_elections(_before(), inputs(metadata=meta, metrics=missed), 10 + 301, TH)
    assert g.severity == "warning"  # not seen for longer than COUNTER_FRESH_SECONDS


def test_detect_unclean_elections_counter_without_baseline_outsider_still_warning() -> None:
    before = run(
        DetectionState(),
        inputs(metadata=metadata(10, {(T, 0): (1, 4, (1, 2))})),
        10,
    )
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3,))}),
        metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 0}}),
    )
    [f] = detect_unclean_elections(before, inp, 20, TH)
    assert (f.severity, f.evidence["unclean_counter_flat"]) == ("warning", False)


def test_detect_unclean_elections_counter_rose_partition_critical_plus_cluster_finding() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))}),
        metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 1}}),
    )
    part, cluster = detect_unclean_elections(_before(), inp, 20, TH)
    assert (part.severity, part.partition) == ("critical", 0)
    assert (cluster.severity, cluster.topic, cluster.magnitude["elections"]) == ("critical", None, 1)
    assert cluster.evidence["partitions"] == ("t[0]",) and cluster.evidence["groups"] == ("g",)


def test_detect_unclean_elections_leader_outside_isr_and_log_end_back_critical() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))}),
        offsets=offsets(20, {(T, 0): (0, 100), (T, 1): (0, 10)}),
    )
    [f] = detect_unclean_elections(_before(), inp, 20, TH)
    assert f.severity == "critical" and f.evidence["log_end_went_back"] is True


def test_detect_unclean_elections_preferred_leader_from_isr_nothing() -> None:
    inp = inputs(
        metadata=metadata(20, {(T, 0): (2, 5, (1, 2)), (T, 1): (3, 8, (2, 3))}),
        metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 0}}),
    )
    assert detect_unclean_elections(_before(), inp, 20, TH) == ()


def test_detect_unclean_elections_counter_rose_no_partition_identified_cluster_finding() -> None:
    inp = inputs(metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 3}}))
    [f] = detect_unclean_elections(_before(1), inp, 20, TH)
    assert (f.partition, f.magnitude["elections"], f.magnitude["partitions_affected"]) == (None, 2, 0)


def test_detect_unclean_elections_first_scrape_no_baseline_nothing() -> None:
    inp = inputs(metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 5}}))
    assert detect_unclean_elections(DetectionState(), inp, 20, TH) == ()


def test_detect_unclean_elections_counter_reset_by_restart_counts_new_value() -> None:
    inp = inputs(metrics=metrics(20, {1: {UNCLEAN_ELECTIONS: 2}}))
    [f] = detect_unclean_elections(_before(7), inp, 20, TH)
    assert f.magnitude["elections"] == 2


def _offline(previous: DetectionState, at: float) -> DetectionState:
    """A metadata poll (and a failed offsets poll) while t[0] has no leader and an empty ISR (ELR)."""
    return run(previous, inputs(metadata=metadata(at, {(T, 0): (None, 5, ()), (T, 1): (2, 7, (2, 3))})), at)


def test_detect_unclean_elections_offline_spell_then_outsider_leads_critical_partition() -> None:
    inp = inputs(
        metadata=metadata(30, {(T, 0): (3, 6, (3,)), (T, 1): (2, 7, (2, 3))}),
        offsets=offsets(30, {(T, 0): (0, 100), (T, 1): (0, 10)}),
        metrics=metrics(30, {1: {UNCLEAN_ELECTIONS: 1}}),
    )
    part, cluster = detect_unclean_elections(_offline(_before(), 20), inp, 30, TH)
    assert (part.severity, part.topic, part.partition) == ("critical", T, 0)
    assert (part.evidence["old_leader"], part.evidence["old_isr"], part.evidence["new_leader"]) == (
        1,
        (1, 2),
        3,
    )
    assert cluster.evidence["partitions"] == ("t[0]",)


def test_detect_unclean_elections_offline_spell_then_isr_member_leads_nothing() -> None:
    inp = inputs(metadata=metadata(30, {(T, 0): (2, 6, (2,)), (T, 1): (2, 7, (2, 3))}))
    assert detect_unclean_elections(_offline(_before(), 20), inp, 30, TH) == ()


def test_detect_unclean_elections_leader_seen_before_log_end_reported_again_critical_same_occurrence() -> (
    None
):
    from service.detection.lifecycle import occurrence_identity

    meta_only = inputs(metadata=metadata(20, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))}))
    prev = _before()
    [first] = detect_unclean_elections(prev, meta_only, 20, TH)
    prev = run(prev, meta_only, 20)
    with_range = inputs(
        metadata=metadata(21, {(T, 0): (3, 5, (3,)), (T, 1): (2, 7, (2, 3))}),
        offsets=offsets(21, {(T, 0): (0, 100), (T, 1): (0, 10)}),
    )
    [second] = detect_unclean_elections(prev, with_range, 21, TH)
    assert (first.severity, second.severity) == (
        "info",
        "critical",
    )  # counter watched and flat, then the log end went back
    assert second.evidence["old_isr"] == (1, 2) and second.evidence["log_end_went_back"] is True
    assert occurrence_identity(first) == occurrence_identity(second)


def test_metrics_collector_name_matches_the_collector() -> None:
    assert BrokerMetricsCollector.name == METRICS_COLLECTOR
