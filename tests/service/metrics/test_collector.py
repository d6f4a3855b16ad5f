"""Which family sets the collector exposes: the settings' selection, health and alert families always."""

from __future__ import annotations

import pytest
from prometheus_client.registry import CollectorRegistry

from collectors.tail_model import TailFigures
from service.metrics import (
    FAMILY_SETS,
    FamilySet,
    Granularity,
    MetricsOptions,
    ScrapeInputs,
    build_registry,
    render,
)
from service.scheduler import CollectorStatus
from tests.service.metrics import builders as b
from tests.service.metrics.scrape import family_names

# Families are named without _total for counters (prometheus_client adds it to the samples).
HEALTH = {
    "offsetguard_observation_timestamp_seconds",
    "offsetguard_cluster_brokers",
    "offsetguard_topic_under_replicated_partitions",
    *(
        f"offsetguard_collector_{n}"
        for n in ("runs", "failures", "last_duration_seconds", "last_success_timestamp_seconds", "stale")
    ),
    *(
        f"offsetguard_tail_{n}"
        for n in ("records_per_second", "lag_records", "caught_up", "records", "unknown_records")
    ),
    "offsetguard_tail_decode_errors",
    "offsetguard_tail_fetch_errors",
    "offsetguard_detection_evaluations",
    "offsetguard_alerts_firing",
    "offsetguard_incidents",
    *(f"offsetguard_messages_{n}" for n in ("replayed", "skipped", "lost")),
}
MARKERS: dict[FamilySet, str] = {
    "offsetguard": "offsetguard_group_lag_messages",
    "kafka_exporter": "kafka_consumergroup_lag_sum",
    "kafka_lag_exporter": "kafka_consumergroup_group_max_lag",
}


def _inputs() -> ScrapeInputs:
    tail = TailFigures("c1", "running", True, 2, 50, 45, 2.5, {0: 2}, 4, 1, 0, None, None)
    return ScrapeInputs(
        clusters=[b.cluster_inputs()],
        statuses=[CollectorStatus("offsets", "c1", 10.0, runs=5, failures=1, last_success_at=b.NOW - 5)],
        tails=[tail],
        alerts=b.FakeAlerts(),
        log_end_times=b.FakeLogEndTimes(b.STORE_TIMES),
    )


def _registry(options: MetricsOptions | None = None) -> CollectorRegistry:
    inputs = _inputs()
    return build_registry(lambda: inputs, clock=lambda: b.NOW, options=options)


@pytest.mark.parametrize("chosen", FAMILY_SETS)
def test_collector_one_family_set_only_its_families_and_health(chosen: FamilySet) -> None:
    names = family_names(_registry(MetricsOptions(frozenset({chosen}))))
    assert names >= HEALTH
    assert {s for s, marker in MARKERS.items() if marker in names} == {chosen}
    if chosen != "offsetguard":
        assert not {n for n in names if n.startswith("offsetguard_group_") or "_partition_log_" in n}


def test_collector_no_family_set_health_and_alerts_only() -> None:
    assert family_names(_registry(MetricsOptions(frozenset()))) == HEALTH


@pytest.mark.parametrize("granularity", ["topic", "group"])
def test_collector_coarse_granularity_no_partition_label_health_kept(granularity: Granularity) -> None:
    registry = _registry(MetricsOptions(granularity=granularity))
    body = render(registry).body.decode()
    assert 'partition="' not in body.replace('offsetguard_tail_lag_records{cluster="c1",partition="0"}', "")
    assert family_names(registry) >= HEALTH


def test_collector_default_options_every_family_set_per_partition() -> None:
    explicit = MetricsOptions(frozenset(FAMILY_SETS), "partition")
    assert render(_registry()).body == render(_registry(explicit)).body
    assert set(MARKERS.values()) <= family_names(_registry())
