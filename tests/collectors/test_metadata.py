"""MetadataCollector over a fake seam."""

from __future__ import annotations

import pytest

from collectors.errors import KafkaUnavailableError
from collectors.metadata import MetadataCollector
from collectors.model import Failure
from tests.collectors.fakes import CLUSTER, FakeSeam, partition, snapshot


def _seam() -> FakeSeam:
    return FakeSeam(
        meta=snapshot(
            [1, 2],
            {
                "__consumer_offsets": [partition("__consumer_offsets", i, 1 + i % 2) for i in range(3)],
                "orders": [partition("orders", 0, 1, epoch=4, replicas=(1, 2)), partition("orders", 1, None)],
            },
        )
    )


async def test_metadata_collect_stamps_cluster_time_and_keeps_partitions() -> None:
    observed = await MetadataCollector(_seam(), CLUSTER, clock=lambda: 42.0).collect()

    assert (observed.cluster, observed.observed_at, observed.cluster_id, observed.controller_id) == (
        CLUSTER,
        42.0,
        "cid",
        1,
    )
    assert [b.node_id for b in observed.brokers] == [1, 2]
    assert observed.offsets_topic_partitions == 3
    orders = observed.topic("orders")
    assert orders is not None and orders.partitions[0].leader_epoch == 4
    assert orders.replication_factor == 2


async def test_metadata_partition_without_leader_listed_as_failure() -> None:
    observed = await MetadataCollector(_seam(), CLUSTER).collect()

    assert [(f.scope, f.key) for f in observed.failures] == [("partition", "orders/1")]
    assert isinstance(observed.failures[0], Failure)


async def test_metadata_no_broker_answers_raises_typed_error() -> None:
    with pytest.raises(KafkaUnavailableError):
        await MetadataCollector(FakeSeam(meta=None), CLUSTER).collect()


async def test_metadata_latest_recent_observation_reused_old_one_refreshed() -> None:
    seam = _seam()
    now = [100.0]
    collector = MetadataCollector(seam, CLUSTER, clock=lambda: now[0])

    first = await collector.latest(max_age_s=5)
    now[0] = 104.0
    again = await collector.latest(max_age_s=5)
    now[0] = 106.0
    fresh = await collector.latest(max_age_s=5)

    assert again is first
    assert fresh is not first and fresh.observed_at == 106.0
    assert seam.calls.count(("metadata",)) == 2


async def test_metadata_topics_out_of_scope_left_out_and_counted_offsets_topic_kept() -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    seam = _seam()
    scope = Scope.from_patterns(topics=NameFilter(exclude=["__.*", "ord.*"]))

    observed = await MetadataCollector(seam, CLUSTER, scope=scope).collect()

    assert [t.name for t in observed.topics] == ["__consumer_offsets"]  # the offsets' own home stays
    assert observed.excluded_topics == 1
    assert observed.failures == ()  # the leaderless partition of an excluded topic is nobody's concern
