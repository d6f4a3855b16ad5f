"""offsetguard's own partition and group families on literal observations."""

from __future__ import annotations

from dataclasses import replace

import pytest
from prometheus_client.registry import CollectorRegistry

from collectors.errors import StoreError
from service.metrics import ClusterInputs, Granularity, MetricsOptions, ScrapeInputs, build_registry
from tests.service.metrics import builders as b
from tests.service.metrics.scrape import Labels, family_names, labels, samples


def _registry(
    inputs: ScrapeInputs | None = None, granularity: Granularity = "partition"
) -> CollectorRegistry:
    fixed = inputs or ScrapeInputs(
        clusters=[b.cluster_inputs()], log_end_times=b.FakeLogEndTimes(b.STORE_TIMES)
    )
    options = MetricsOptions(granularity=granularity)
    return build_registry(lambda: fixed, clock=lambda: b.NOW, options=options)


def _gtp(group: str, topic: str, partition: int) -> Labels:
    return labels(cluster="c1", group=group, topic=topic, partition=str(partition))


def _tp(topic: str, partition: int) -> Labels:
    return labels(cluster="c1", topic=topic, partition=str(partition))


def test_own_lag_messages_negative_kept_uncommitted_absent() -> None:
    assert samples(_registry(), "offsetguard_group_lag_messages") == {
        _gtp("billing", "orders", 0): 10,
        _gtp("billing", "orders", 1): -5,
        _gtp("audit", "orders", 0): 0,
    }


def test_own_lag_seconds_now_minus_crossing_of_committed_plus_one() -> None:
    store = b.FakeLogEndTimes(b.STORE_TIMES)
    r = _registry(ScrapeInputs(clusters=[b.cluster_inputs()], log_end_times=store))
    assert samples(r, "offsetguard_group_lag_seconds") == {
        _gtp("billing", "orders", 0): 30.0,
        _gtp("audit", "orders", 0): 0.0,
    }
    # one batched lookup per cluster and scrape, only for the lagging partition (committed 90 -> 91)
    assert store.calls == [("c1", {("orders", 0, 91)})]


def test_own_lag_seconds_store_error_absent_scrape_survives() -> None:
    class Broken:
        def log_end_reached_at_many(self, cluster: str, wanted: object) -> dict[tuple[str, int, int], float]:
            raise StoreError("disk gone", cluster=cluster)

    r = _registry(ScrapeInputs(clusters=[b.cluster_inputs()], log_end_times=Broken()))
    assert samples(r, "offsetguard_group_lag_seconds") == {_gtp("audit", "orders", 0): 0.0}
    assert samples(r, "offsetguard_group_lag_messages")[_gtp("billing", "orders", 0)] == 10


def test_own_committed_offset_every_commit_exactly() -> None:
    assert samples(_registry(), "offsetguard_group_committed_offset") == {
        _gtp("billing", "orders", 0): 90,
        _gtp("billing", "orders", 1): 55,
        _gtp("audit", "orders", 0): 100,
        _gtp("audit", "gone", 0): 5,
    }


def test_own_partition_log_range_and_epoch_exact_values() -> None:
    r = _registry()
    co = "__consumer_offsets"
    assert samples(r, "offsetguard_partition_log_start_offset") == {
        _tp("orders", 0): 10,
        _tp("orders", 1): 0,
        _tp(co, 0): 0,
    }
    assert samples(r, "offsetguard_partition_log_end_offset") == {
        _tp("orders", 0): 100,
        _tp("orders", 1): 50,
        _tp(co, 0): 7,
    }
    # metadata's epoch (5) wins over the offsets observation's (4)
    assert samples(r, "offsetguard_partition_leader_epoch") == {
        _tp("orders", 0): 5,
        _tp("orders", 1): 7,
        _tp(co, 0): 0,
    }


def test_own_observation_timestamps_per_kind() -> None:
    assert samples(_registry(), "offsetguard_observation_timestamp_seconds") == {
        labels(cluster="c1", observation="metadata"): b.NOW - 3,
        labels(cluster="c1", observation="offsets"): b.NOW - 2,
        labels(cluster="c1", observation="groups"): b.NOW - 1,
        labels(cluster="c1", observation="committed"): b.NOW - 1,
    }


def test_own_no_offsets_observation_lag_absent_committed_kept() -> None:
    inputs = replace(b.cluster_inputs(), offsets=None)
    r = _registry(ScrapeInputs(clusters=[inputs]))
    assert samples(r, "offsetguard_group_lag_messages") == {}
    assert samples(r, "offsetguard_group_lag_seconds") == {}
    assert len(samples(r, "offsetguard_group_committed_offset")) == 4


def test_own_duplicate_commit_in_observation_one_series_first_wins() -> None:
    base = b.committed()
    dup = replace(base, offsets=(*base.offsets, replace(base.offsets[0], offset=1)))
    r = _registry(ScrapeInputs(clusters=[replace(b.cluster_inputs(), committed=dup)]))
    assert samples(r, "offsetguard_group_committed_offset")[_gtp("billing", "orders", 0)] == 90


def test_own_cluster_not_observed_yet_no_samples() -> None:
    r = _registry(ScrapeInputs(clusters=[ClusterInputs("c1")]))
    for name in (
        "offsetguard_group_committed_offset",
        "offsetguard_partition_log_end_offset",
        "kafka_brokers",
    ):
        assert samples(r, name) == {}


def test_own_topic_granularity_group_families_summed_per_group_and_topic() -> None:
    r = _registry(granularity="topic")
    billing, audit = (
        labels(cluster="c1", group="billing", topic="orders"),
        labels(cluster="c1", group="audit", topic="orders"),
    )
    gone = labels(cluster="c1", group="audit", topic="gone")
    assert samples(r, "offsetguard_group_committed_offset") == {billing: 145, audit: 100, gone: 5}
    # billing: 10 + (-5); audit/gone has no known lag, so no series (never 0 for unknown)
    assert samples(r, "offsetguard_group_lag_messages") == {billing: 5, audit: 0}
    # the oldest unconsumed message: billing orders/0's 30 s (orders/1, beyond the log end, has none)
    assert samples(r, "offsetguard_group_lag_seconds") == {billing: 30.0, audit: 0.0}


def test_own_group_granularity_group_families_per_group() -> None:
    r = _registry(granularity="group")
    billing, audit = labels(cluster="c1", group="billing"), labels(cluster="c1", group="audit")
    assert samples(r, "offsetguard_group_committed_offset") == {billing: 145, audit: 105}
    assert samples(r, "offsetguard_group_lag_messages") == {billing: 5, audit: 0}
    assert samples(r, "offsetguard_group_lag_seconds") == {billing: 30.0, audit: 0.0}


@pytest.mark.parametrize("granularity", ["topic", "group"])
def test_own_coarse_granularity_log_offsets_summed_per_topic_epoch_dropped(granularity: Granularity) -> None:
    r = _registry(granularity=granularity)
    orders, co = labels(cluster="c1", topic="orders"), labels(cluster="c1", topic="__consumer_offsets")
    assert samples(r, "offsetguard_partition_log_start_offset") == {orders: 10, co: 0}
    assert samples(r, "offsetguard_partition_log_end_offset") == {orders: 150, co: 7}
    assert "offsetguard_partition_leader_epoch" not in family_names(r)
    assert len(samples(r, "offsetguard_observation_timestamp_seconds")) == 4  # health: always there


def test_own_topic_granularity_help_says_how_values_aggregate() -> None:
    helps = {f.name: f.documentation for f in _registry(granularity="topic").collect()}
    assert helps["offsetguard_group_lag_messages"].startswith("Sum over the group's partitions of the topic")
    assert "(max;" in helps["offsetguard_group_lag_seconds"]


def test_own_partition_families_bytes_as_written_row_by_row_from_the_view() -> None:
    """The label blocks written once per row give the bytes a FastGauge per family writes from the view's
    GroupPartition rows: odd names escaped, duplicates, unknown ranges, negative, zero and unknown-age lags,
    two clusters."""
    from prometheus_client.exposition import generate_latest

    from service.metrics.fast import FastGauge, encode
    from service.metrics.own import GTP, TP, _per_partition
    from service.metrics.view import cluster_views

    base = b.cluster_inputs()
    odd = 'we"ird\\grp\nx'
    extra = (
        replace(base.committed.offsets[0], group=odd, offset=3),  # type: ignore[union-attr]
        replace(base.committed.offsets[0], group=odd, offset=4),  # a duplicate: the first wins
        replace(base.committed.offsets[0], group="late", offset=95),  # lag 5, its age unknown
    )
    committed = replace(base.committed, offsets=(*base.committed.offsets, *extra))  # type: ignore[arg-type]
    store = b.FakeLogEndTimes({**b.STORE_TIMES, ("orders", 0, 4): b.NOW - 7.25})
    clusters = [replace(base, committed=committed), replace(base, cluster='c"2', committed=committed)]
    views = list(cluster_views(ScrapeInputs(clusters=clusters, log_end_times=store), b.NOW))

    built = list(_per_partition(views))[:5]  # lag, seconds, committed, log start, log end

    def reference() -> list[FastGauge]:
        lag, seconds, committed, start, end = (
            FastGauge(f.name, f.documentation, GTP if n < 3 else TP) for n, f in enumerate(built)
        )
        for view in views:
            for r in view.rows:
                labels = [view.cluster, r.group, r.topic, str(r.partition)]
                committed.add_metric(labels, r.committed)
                if r.lag is not None:
                    lag.add_metric(labels, r.lag)
                if r.seconds is not None:
                    seconds.add_metric(labels, r.seconds)
            for o in view.offsets.partitions:  # type: ignore[union-attr]
                start.add_metric([view.cluster, o.topic, str(o.partition)], o.log_start)
                end.add_metric([view.cluster, o.topic, str(o.partition)], o.log_end)
        return [lag, seconds, committed, start, end]

    class Families:
        def __init__(self, families: list) -> None:  # type: ignore[type-arg]
            self.families = families

        def collect(self) -> list:  # type: ignore[type-arg]
            return self.families

    written = encode(Families(built), generate_latest, openmetrics=False)
    assert written == encode(Families(reference()), generate_latest, openmetrics=False)
    assert written.count(b'group="we\\"ird\\\\grp\\nx"') == 3 * 2  # committed, lag, age; both clusters
    assert b'offsetguard_group_lag_seconds{cluster="c1",group="late"' not in written
    late = b'{cluster="c\\"2",group="late",partition="0",topic="orders"} 95.0'
    assert b"offsetguard_group_committed_offset" + late in written
