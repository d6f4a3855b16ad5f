"""kafka_exporter-compatible families on literal observations (see builders for the scenario)."""

from __future__ import annotations

import dataclasses

import pytest
from prometheus_client.registry import CollectorRegistry

from collectors.model import PartitionInfo
from service.metrics import ClusterInputs, Granularity, MetricsOptions, ScrapeInputs, build_registry
from tests.service.metrics import builders as b
from tests.service.metrics.scrape import family_names, labels, samples


def _registry(
    granularity: Granularity = "partition", cluster: ClusterInputs | None = None
) -> CollectorRegistry:
    inputs = ScrapeInputs(
        clusters=[cluster or b.cluster_inputs()], log_end_times=b.FakeLogEndTimes(b.STORE_TIMES)
    )
    options = MetricsOptions(frozenset({"kafka_exporter"}), granularity)  # this set only
    return build_registry(lambda: inputs, clock=lambda: b.NOW, options=options)


def _tp(topic: str, partition: int) -> frozenset[tuple[str, str]]:
    return labels(cluster="c1", topic=topic, partition=str(partition))


def _gtp(group: str, topic: str, partition: int) -> frozenset[tuple[str, str]]:
    return labels(cluster="c1", consumergroup=group, topic=topic, partition=str(partition))


def test_kafka_exporter_cluster_and_topics_exact_values() -> None:
    r = _registry()
    assert samples(r, "kafka_brokers") == {labels(cluster="c1"): 3}
    assert samples(r, "kafka_topic_partitions") == {
        labels(cluster="c1", topic="orders"): 2,
        labels(cluster="c1", topic="__consumer_offsets"): 1,
    }
    co = "__consumer_offsets"
    assert samples(r, "kafka_topic_partition_current_offset") == {
        _tp("orders", 0): 100,
        _tp("orders", 1): 50,
        _tp(co, 0): 7,
    }
    assert samples(r, "kafka_topic_partition_oldest_offset") == {
        _tp("orders", 0): 10,
        _tp("orders", 1): 0,
        _tp(co, 0): 0,
    }
    assert samples(r, "kafka_topic_partition_replicas") == {
        _tp("orders", 0): 2,
        _tp("orders", 1): 2,
        _tp(co, 0): 1,
    }
    assert samples(r, "kafka_topic_partition_in_sync_replica") == {
        _tp("orders", 0): 2,
        _tp("orders", 1): 1,
        _tp(co, 0): 1,
    }
    assert samples(r, "kafka_topic_partition_under_replicated_partition") == {
        _tp("orders", 0): 0,
        _tp("orders", 1): 1,
        _tp(co, 0): 0,
    }


def test_kafka_exporter_offline_partition_no_leader_series() -> None:
    assert samples(_registry(), "kafka_topic_partition_leader") == {
        _tp("orders", 0): 1,
        _tp("__consumer_offsets", 0): 1,
    }


def test_kafka_exporter_broker_info_one_per_broker_with_address() -> None:
    assert samples(_registry(), "kafka_broker_info") == {
        labels(cluster="c1", id=str(n), address=f"h{n}:9092"): 1 for n in (1, 2, 3)
    }


def test_kafka_exporter_leader_is_preferred_first_replica_only() -> None:
    # orders/2 is led by its second replica (a leader moved off the preferred one); orders/1 is offline
    moved = PartitionInfo("orders", 2, 2, 3, (1, 2), (1, 2))
    inputs = b.cluster_inputs()
    assert inputs.metadata is not None
    orders, offsets_topic = inputs.metadata.topics
    topics = (dataclasses.replace(orders, partitions=(*orders.partitions, moved)), offsets_topic)
    cluster = dataclasses.replace(inputs, metadata=dataclasses.replace(inputs.metadata, topics=topics))
    assert samples(_registry(cluster=cluster), "kafka_topic_partition_leader_is_preferred") == {
        _tp("orders", 0): 1,
        _tp("orders", 1): 0,
        _tp("orders", 2): 0,
        _tp("__consumer_offsets", 0): 1,
    }


@pytest.mark.parametrize("granularity", ["partition", "topic", "group"])
def test_kafka_exporter_build_info_one_series_without_cluster(granularity: Granularity) -> None:
    ((key, value),) = samples(_registry(granularity), "kafka_exporter_build_info").items()
    assert value == 1
    found = dict(key)
    assert set(found) == {"version", "revision", "branch", "goversion", "goos", "goarch", "tags"}
    assert found["version"] not in ("", "unknown")  # offsetguard's own version
    assert found["goos"] == "linux"


def test_kafka_exporter_consumergroup_offsets_and_sums_exact_values() -> None:
    r = _registry()
    assert samples(r, "kafka_consumergroup_current_offset") == {
        _gtp("billing", "orders", 0): 90,
        _gtp("billing", "orders", 1): 55,
        _gtp("audit", "orders", 0): 100,
        _gtp("audit", "gone", 0): 5,
    }
    assert samples(r, "kafka_consumergroup_current_offset_sum") == {
        labels(cluster="c1", consumergroup="billing", topic="orders"): 145,
        labels(cluster="c1", consumergroup="audit", topic="orders"): 100,
        labels(cluster="c1", consumergroup="audit", topic="gone"): 5,
    }


def test_kafka_exporter_lag_negative_kept_unknown_and_uncommitted_absent() -> None:
    r = _registry()
    # audit/orders/1 has no commit and audit/gone/0 has no log range: neither has a series (never -1).
    assert samples(r, "kafka_consumergroup_lag") == {
        _gtp("billing", "orders", 0): 10,
        _gtp("billing", "orders", 1): -5,
        _gtp("audit", "orders", 0): 0,
    }
    assert samples(r, "kafka_consumergroup_lag_sum") == {
        labels(cluster="c1", consumergroup="billing", topic="orders"): 5,
        labels(cluster="c1", consumergroup="audit", topic="orders"): 0,
    }


def test_kafka_exporter_members_every_described_group() -> None:
    assert samples(_registry(), "kafka_consumergroup_members") == {
        labels(cluster="c1", consumergroup="billing"): 1,
        labels(cluster="c1", consumergroup="audit"): 0,
        labels(cluster="c1", consumergroup="idle"): 0,
    }


PER_PARTITION_NAMES = {
    "kafka_topic_partition_current_offset",
    "kafka_topic_partition_oldest_offset",
    "kafka_topic_partition_leader",
    "kafka_topic_partition_leader_is_preferred",
    "kafka_topic_partition_replicas",
    "kafka_topic_partition_in_sync_replica",
    "kafka_topic_partition_under_replicated_partition",
    "kafka_consumergroup_current_offset",
    "kafka_consumergroup_lag",
}


@pytest.mark.parametrize("granularity", ["topic", "group"])
def test_kafka_exporter_coarse_granularity_per_partition_families_left_out(granularity: Granularity) -> None:
    names = {n for n in family_names(_registry(granularity)) if n.startswith("kafka_")}
    # kafka_exporter's own labels stay: no family is relabelled, the per-partition ones go
    assert names == {
        "kafka_brokers",
        "kafka_broker_info",
        "kafka_exporter_build_info",
        "kafka_topic_partitions",
        "kafka_consumergroup_current_offset_sum",
        "kafka_consumergroup_lag_sum",
        "kafka_consumergroup_members",
    }
    assert not names & PER_PARTITION_NAMES


@pytest.mark.parametrize("granularity", ["topic", "group"])
def test_kafka_exporter_coarse_granularity_sums_as_at_partition(granularity: Granularity) -> None:
    coarse, fine = _registry(granularity), _registry()
    for name in ("kafka_consumergroup_current_offset_sum", "kafka_consumergroup_lag_sum"):
        assert samples(coarse, name) == samples(fine, name)
        assert samples(coarse, name)
    assert samples(coarse, "kafka_consumergroup_members") == samples(fine, "kafka_consumergroup_members")


def test_kafka_exporter_partition_granularity_every_family() -> None:
    assert family_names(_registry()) >= PER_PARTITION_NAMES
