"""Collector, tail and alert families on literal statuses, figures and counts."""

from __future__ import annotations

from prometheus_client.registry import CollectorRegistry

from collectors.errors import StoreError
from collectors.tail_model import TailFigures
from service.metrics import ScrapeInputs, build_registry
from service.scheduler import CollectorStatus
from tests.service.metrics import builders as b
from tests.service.metrics.scrape import family_names, labels, samples


def _registry(inputs: ScrapeInputs) -> CollectorRegistry:
    return build_registry(lambda: inputs, clock=lambda: b.NOW)


def _statuses() -> list[CollectorStatus]:
    ok = CollectorStatus(
        "offsets", "c1", 5.0, runs=10, failures=1, last_success_at=b.NOW - 4, last_duration=0.25
    )
    old = CollectorStatus(
        "configs", "c1", 5.0, runs=3, failures=3, last_success_at=b.NOW - 100, last_duration=1.5
    )
    never = CollectorStatus("groups", "c1", 5.0, runs=2, failures=2)
    return [ok, old, never]


def test_collector_families_runs_failures_duration_staleness_exact() -> None:
    r = _registry(ScrapeInputs(statuses=_statuses(), stale_after_intervals=3.0))
    k = lambda name: labels(cluster="c1", collector=name)  # noqa: E731
    assert samples(r, "offsetguard_collector_runs_total") == {
        k("offsets"): 10,
        k("configs"): 3,
        k("groups"): 2,
    }
    assert samples(r, "offsetguard_collector_failures_total") == {
        k("offsets"): 1,
        k("configs"): 3,
        k("groups"): 2,
    }
    assert samples(r, "offsetguard_collector_last_duration_seconds") == {
        k("offsets"): 0.25,
        k("configs"): 1.5,
    }
    assert samples(r, "offsetguard_collector_last_success_timestamp_seconds") == {
        k("offsets"): b.NOW - 4,
        k("configs"): b.NOW - 100,
    }
    assert samples(r, "offsetguard_collector_stale") == {k("offsets"): 0, k("configs"): 1, k("groups"): 1}


def test_tail_families_rate_lag_per_partition_and_counts_exact() -> None:
    figures = TailFigures(
        cluster="c1",
        state="running",
        caught_up=True,
        partitions=2,
        records_total=500,
        events_total=480,
        records_per_second=12.5,
        lag={0: 3, 1: 0},
        unknown_records=15,
        decode_errors=5,
        fetch_errors=2,
        last_error=None,
        last_checkpoint_at=None,
    )
    r = _registry(ScrapeInputs(tails=[figures]))
    c1 = labels(cluster="c1")
    assert samples(r, "offsetguard_tail_records_per_second") == {c1: 12.5}
    assert samples(r, "offsetguard_tail_lag_records") == {
        labels(cluster="c1", partition="0"): 3,
        labels(cluster="c1", partition="1"): 0,
    }
    assert samples(r, "offsetguard_tail_caught_up") == {c1: 1}
    assert samples(r, "offsetguard_tail_records_total") == {c1: 500}
    assert samples(r, "offsetguard_tail_unknown_records_total") == {c1: 15}
    assert samples(r, "offsetguard_tail_decode_errors_total") == {c1: 5}
    assert samples(r, "offsetguard_tail_fetch_errors_total") == {c1: 2}


def test_detection_families_evaluations_per_cluster_exact() -> None:
    r = _registry(ScrapeInputs(evaluations=[("c1", 7), ("c2", 0)]))
    assert samples(r, "offsetguard_detection_evaluations_total") == {
        labels(cluster="c1"): 7,
        labels(cluster="c2"): 0,
    }


def test_reconcile_families_runs_and_differences_per_cluster_exact() -> None:
    r = _registry(ScrapeInputs(reconciles=[("c1", 5, 2), ("c2", 1, 0)]))
    assert samples(r, "offsetguard_reconcile_runs_total") == {
        labels(cluster="c1"): 5,
        labels(cluster="c2"): 1,
    }
    assert samples(r, "offsetguard_reconcile_differences_total") == {
        labels(cluster="c1"): 2,
        labels(cluster="c2"): 0,
    }


def test_reconcile_families_no_tail_fed_cluster_absent() -> None:
    names = family_names(_registry(ScrapeInputs(evaluations=[("c1", 1)])))
    assert "offsetguard_reconcile_runs" not in names
    assert "offsetguard_reconcile_differences" not in names


def test_alert_families_firing_incidents_magnitudes_exact() -> None:
    r = _registry(ScrapeInputs(alerts=b.FakeAlerts()))
    assert samples(r, "offsetguard_alerts_firing") == {
        labels(cluster="c1", kind="offset_rewind", severity="critical"): 2,
        labels(cluster="c1", kind="lag", severity="warning"): 1,
    }
    assert samples(r, "offsetguard_incidents_total") == {labels(cluster="c1", kind="offset_rewind"): 7}
    assert samples(r, "offsetguard_messages_replayed_total") == {labels(cluster="c1"): 1200}
    assert samples(r, "offsetguard_messages_lost_total") == {labels(cluster="c1"): 30}
    assert samples(r, "offsetguard_messages_skipped_total") == {}


def test_alert_families_no_alert_store_no_families() -> None:
    names = family_names(_registry(ScrapeInputs(alerts=None)))
    assert not {
        n
        for n in names
        if n.startswith(("offsetguard_alerts", "offsetguard_incidents", "offsetguard_messages"))
    }
    assert "offsetguard_collector_runs" in names  # the rest is still there


def test_alert_families_store_error_omitted_scrape_survives() -> None:
    r = _registry(ScrapeInputs(clusters=[b.cluster_inputs()], alerts=b.FakeAlerts(fail=StoreError("locked"))))
    assert samples(r, "offsetguard_alerts_firing") == {}
    assert samples(r, "kafka_brokers") == {labels(cluster="c1"): 3}


def test_alert_families_configured_cluster_counters_start_at_zero() -> None:
    from alerts.model import ALERT_KINDS
    from service.metrics.sources import ClusterInputs

    inputs = ScrapeInputs(clusters=[ClusterInputs(cluster="c2")], alerts=b.FakeAlerts())
    r = _registry(inputs)
    incidents = samples(r, "offsetguard_incidents_total")
    assert incidents[labels(cluster="c1", kind="offset_rewind")] == 7
    assert {k: v for k, v in incidents.items() if ("cluster", "c2") in k} == {
        labels(cluster="c2", kind=kind): 0 for kind in ALERT_KINDS
    }
    assert samples(r, "offsetguard_messages_skipped_total") == {labels(cluster="c2"): 0}
