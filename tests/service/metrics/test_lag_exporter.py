"""kafka-lag-exporter-compatible families on literal observations (see builders for the scenario)."""

from __future__ import annotations

from prometheus_client.registry import CollectorRegistry

from service.metrics import Granularity, MetricsOptions, ScrapeInputs, build_registry
from tests.service.metrics import builders as b
from tests.service.metrics.scrape import Labels, family_names, labels, samples


def _registry(
    store: b.FakeLogEndTimes | None = None, granularity: Granularity = "partition"
) -> CollectorRegistry:
    inputs = ScrapeInputs(
        clusters=[b.cluster_inputs()], log_end_times=store or b.FakeLogEndTimes(b.STORE_TIMES)
    )
    options = MetricsOptions(frozenset({"kafka_lag_exporter"}), granularity)  # this set only
    return build_registry(lambda: inputs, clock=lambda: b.NOW, options=options)


def _gtp(group: str, topic: str, partition: int, member: tuple[str, str, str] | None = None) -> Labels:
    host, consumer, client = member or ("unknown", "unknown", "unknown")
    return labels(
        cluster_name="c1",
        group=group,
        topic=topic,
        partition=str(partition),
        member_host=host,
        consumer_id=consumer,
        client_id=client,
    )


M1 = ("/10.0.0.1", "m1", "c-1")


def test_lag_exporter_group_offset_member_labels_or_unknown() -> None:
    assert samples(_registry(), "kafka_consumergroup_group_offset") == {
        _gtp("billing", "orders", 0, M1): 90,
        _gtp("billing", "orders", 1): 55,
        _gtp("audit", "orders", 0): 100,
        _gtp("audit", "gone", 0): 5,
    }


def test_lag_exporter_group_lag_negative_kept_unknown_absent() -> None:
    assert samples(_registry(), "kafka_consumergroup_group_lag") == {
        _gtp("billing", "orders", 0, M1): 10,
        _gtp("billing", "orders", 1): -5,
        _gtp("audit", "orders", 0): 0,
    }


def test_lag_exporter_lag_seconds_from_store_zero_lag_zero_rest_absent() -> None:
    r = _registry()
    assert samples(r, "kafka_consumergroup_group_lag_seconds") == {
        _gtp("billing", "orders", 0, M1): 30.0,
        _gtp("audit", "orders", 0): 0.0,
    }
    assert samples(r, "kafka_consumergroup_group_max_lag_seconds") == {
        labels(cluster_name="c1", group="billing"): 30.0,
        labels(cluster_name="c1", group="audit"): 0.0,
    }


def test_lag_exporter_store_without_history_lag_seconds_absent_not_nan() -> None:
    r = _registry(b.FakeLogEndTimes({}))
    assert samples(r, "kafka_consumergroup_group_lag_seconds") == {_gtp("audit", "orders", 0): 0.0}
    assert samples(r, "kafka_consumergroup_group_max_lag_seconds") == {
        labels(cluster_name="c1", group="audit"): 0.0
    }


def test_lag_exporter_group_aggregates_exact_values() -> None:
    r = _registry()
    assert samples(r, "kafka_consumergroup_group_max_lag") == {
        labels(cluster_name="c1", group="billing"): 10,
        labels(cluster_name="c1", group="audit"): 0,
    }
    assert samples(r, "kafka_consumergroup_group_sum_lag") == {
        labels(cluster_name="c1", group="billing"): 5,
        labels(cluster_name="c1", group="audit"): 0,
    }
    assert samples(r, "kafka_consumergroup_group_topic_sum_lag") == {
        labels(cluster_name="c1", group="billing", topic="orders"): 5,
        labels(cluster_name="c1", group="audit", topic="orders"): 0,
    }


def test_lag_exporter_partition_offsets_exact_values() -> None:
    r = _registry()
    tp = lambda t, p: labels(cluster_name="c1", topic=t, partition=str(p))  # noqa: E731
    assert samples(r, "kafka_partition_latest_offset") == {
        tp("orders", 0): 100,
        tp("orders", 1): 50,
        tp("__consumer_offsets", 0): 7,
    }
    assert samples(r, "kafka_partition_earliest_offset") == {
        tp("orders", 0): 10,
        tp("orders", 1): 0,
        tp("__consumer_offsets", 0): 0,
    }


PER_PARTITION_NAMES = {
    "kafka_consumergroup_group_offset",
    "kafka_consumergroup_group_lag",
    "kafka_consumergroup_group_lag_seconds",
    "kafka_partition_latest_offset",
    "kafka_partition_earliest_offset",
}
GROUP_NAMES = {
    "kafka_consumergroup_group_max_lag",
    "kafka_consumergroup_group_max_lag_seconds",
    "kafka_consumergroup_group_sum_lag",
}


def _lag_exporter_names(granularity: Granularity) -> set[str]:
    return {n for n in family_names(_registry(granularity=granularity)) if n.startswith("kafka_")}


def test_lag_exporter_topic_granularity_group_and_topic_aggregates_only() -> None:
    assert _lag_exporter_names("topic") == GROUP_NAMES | {"kafka_consumergroup_group_topic_sum_lag"}
    r = _registry(granularity="topic")
    assert samples(r, "kafka_consumergroup_group_topic_sum_lag") == {
        labels(cluster_name="c1", group="billing", topic="orders"): 5,
        labels(cluster_name="c1", group="audit", topic="orders"): 0,
    }


def test_lag_exporter_group_granularity_group_aggregates_only_exact() -> None:
    assert _lag_exporter_names("group") == GROUP_NAMES
    r, fine = _registry(granularity="group"), _registry()
    assert samples(r, "kafka_consumergroup_group_max_lag_seconds") == {
        labels(cluster_name="c1", group="billing"): 30.0,
        labels(cluster_name="c1", group="audit"): 0.0,
    }
    for name in GROUP_NAMES:
        assert samples(r, name) == samples(fine, name)


def test_lag_exporter_partition_granularity_every_family() -> None:
    assert _lag_exporter_names("partition") == PER_PARTITION_NAMES | GROUP_NAMES | {
        "kafka_consumergroup_group_topic_sum_lag"
    }
