"""MetadataCollector over a fake seam."""

from __future__ import annotations

import asyncio
import threading

import pytest

from collectors.errors import KafkaUnavailableError
from collectors.metadata import MetadataCollector
from collectors.model import Failure
from collectors.seam import MetadataSnapshot
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


class HeldSeam(FakeSeam):
    """Its Metadata answers once ``release`` is set (or fails with ``meta`` None, as FakeSeam's does)."""

    release = threading.Event()

    def metadata(self) -> MetadataSnapshot:
        self.release.wait(5.0)
        return super().metadata()


async def _at_once(seam: HeldSeam, collector: MetadataCollector) -> list[object]:
    asked = [asyncio.ensure_future(c) for c in (collector.collect(), collector.latest(), collector.latest())]
    await asyncio.sleep(0.05)  # all three waiting on the request under way
    seam.release.set()
    return list(await asyncio.gather(*asked, return_exceptions=True))


async def test_metadata_collect_and_latest_at_once_share_one_request_a_later_collect_asks_again() -> None:
    seam = HeldSeam(meta=_seam().meta)
    seam.release = threading.Event()
    collector = MetadataCollector(seam, CLUSTER)

    first, second, third = await _at_once(seam, collector)

    assert first is second is third
    assert seam.calls.count(("metadata",)) == 1
    again = await collector.collect()
    assert again is not first
    assert seam.calls.count(("metadata",)) == 2


async def test_metadata_shared_request_failing_raises_for_every_caller_next_collect_asks_again() -> None:
    seam = HeldSeam(meta=None)
    seam.release = threading.Event()
    collector = MetadataCollector(seam, CLUSTER)

    answers = await _at_once(seam, collector)

    assert [type(a) for a in answers] == [KafkaUnavailableError] * 3
    assert seam.calls.count(("metadata",)) == 1
    seam.meta = _seam().meta
    assert (await collector.latest()).brokers == seam.meta.brokers
    assert seam.calls.count(("metadata",)) == 2


async def test_metadata_no_topic_changed_hands_the_last_topics_tuple_again() -> None:
    """The decoder hands an unchanged topic's TopicInfo again; every topic unchanged, the collector hands
    the last observation's very topics tuple (and its failures), so what is built of the partitions is
    known unchanged by an identity test. A topic changed: a new tuple, and its failures found anew."""
    seam = _seam()
    now = [100.0]
    collector = MetadataCollector(seam, CLUSTER, clock=lambda: now[0])
    first = await collector.collect()
    seam.meta = MetadataSnapshot(  # a new answer: new tuple, the same TopicInfo objects
        seam.meta.cluster_id, seam.meta.controller_id, seam.meta.brokers, tuple(seam.meta.topics)
    )
    now[0] = 130.0
    second = await collector.collect()
    assert second is not first and second.observed_at == 130.0
    assert second.topics is first.topics and second.failures is first.failures
    healed = partition("orders", 1, 2)
    orders = next(t for t in seam.meta.topics if t.name == "orders")
    seam.meta = MetadataSnapshot(
        seam.meta.cluster_id,
        seam.meta.controller_id,
        seam.meta.brokers,
        tuple(
            t if t is not orders else type(t)(t.name, t.internal, (t.partitions[0], healed), t.topic_id)
            for t in seam.meta.topics
        ),
    )
    third = await collector.collect()
    assert third.topics is not first.topics and third.failures == ()
    equal = MetadataSnapshot(  # equal topics, other objects (a fallback decode): a new tuple too
        seam.meta.cluster_id,
        seam.meta.controller_id,
        seam.meta.brokers,
        tuple(type(t)(t.name, t.internal, t.partitions, t.topic_id) for t in seam.meta.topics),
    )
    seam.meta = equal
    fourth = await collector.collect()
    assert fourth.topics == third.topics and fourth.topics is not third.topics
