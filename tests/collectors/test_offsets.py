"""OffsetsCollector over a fake seam: grouping by leader, concurrency and partial failure."""

from __future__ import annotations

import threading

from collectors.errors import KafkaResponseError
from collectors.model import ClusterMetadata, PartitionOffsets, TopicPartition
from collectors.offsets import OffsetsCollector
from collectors.seam import OffsetRange
from tests.collectors.fakes import CLUSTER, FakeSeam, metadata, partition, source

TP = TopicPartition
META = metadata(
    [1, 2, 3],
    {
        "a": [partition("a", 0, 1, epoch=3), partition("a", 1, 2), partition("a", 2, 3)],
        "b": [partition("b", 0, 1), partition("b", 1, None)],
    },
)
RANGES = {
    TP("a", 0): OffsetRange(5, 100, 7),
    TP("a", 1): OffsetRange(0, 10, None),
    TP("a", 2): OffsetRange(2, 2, 1),
    TP("b", 0): OffsetRange(0, 50, 0),
}


async def test_offsets_all_leaders_up_every_led_partition_reported() -> None:
    seam = FakeSeam(offsets=dict(RANGES))

    observed = await OffsetsCollector(seam, CLUSTER, source(META), clock=lambda: 9.0).collect()

    assert observed.observed_at == 9.0
    assert observed.partitions == (
        PartitionOffsets("a", 0, 5, 100, leader=1, leader_epoch=7),
        PartitionOffsets("a", 1, 0, 10, leader=2, leader_epoch=0),  # epoch from metadata when none returned
        PartitionOffsets("a", 2, 2, 2, leader=3, leader_epoch=1),
        PartitionOffsets("b", 0, 0, 50, leader=1, leader_epoch=0),
    )
    assert [(f.scope, f.key, f.error) for f in observed.failures] == [("partition", "b/1", "NoLeader")]


async def test_offsets_one_request_per_leader_with_its_partitions() -> None:
    seam = FakeSeam(offsets=dict(RANGES))

    await OffsetsCollector(seam, CLUSTER, source(META)).collect()

    asked = sorted((c[1], c[2]) for c in seam.calls if c[0] == "list_offsets")
    assert asked == [(1, (TP("a", 0), TP("b", 0))), (2, (TP("a", 1),)), (3, (TP("a", 2),))]


async def test_offsets_leader_down_its_partitions_failures_others_present() -> None:
    seam = FakeSeam(offsets=dict(RANGES), down={1})

    observed = await OffsetsCollector(seam, CLUSTER, source(META)).collect()

    assert [(o.topic, o.partition) for o in observed.partitions] == [("a", 1), ("a", 2)]
    lost = {(f.scope, f.key): f.error for f in observed.failures}
    assert lost == {
        ("broker", "1"): "KafkaUnavailableError",
        ("partition", "a/0"): "KafkaUnavailableError",
        ("partition", "b/0"): "KafkaUnavailableError",
        ("partition", "b/1"): "NoLeader",
    }


async def test_offsets_partition_error_fails_only_that_partition() -> None:
    err = KafkaResponseError(
        "broker answered NOT_LEADER_OR_FOLLOWER",
        error_code=6,
        error_name="NOT_LEADER_OR_FOLLOWER",
        cluster=CLUSTER,
    )
    seam = FakeSeam(offsets=dict(RANGES), partition_errors={TP("a", 0): err})

    observed = await OffsetsCollector(seam, CLUSTER, source(META)).collect()

    assert [(o.topic, o.partition) for o in observed.partitions] == [("a", 1), ("a", 2), ("b", 0)]
    assert ("partition", "a/0", "KafkaResponseError") in {
        (f.scope, f.key, f.error) for f in observed.failures
    }


async def test_offsets_leaders_asked_concurrently_not_one_after_another() -> None:
    # Each list_offsets call waits until all three leaders are being asked; sequential calls would break it.
    seam = FakeSeam(offsets=dict(RANGES), barrier=threading.Barrier(3))

    observed = await OffsetsCollector(seam, CLUSTER, source(META)).collect()

    assert len(observed.partitions) == 4
    assert [f.key for f in observed.failures] == ["b/1"]


async def test_offsets_unchanged_partition_is_the_same_object_changed_one_new() -> None:
    seam = FakeSeam(offsets=dict(RANGES))
    collector = OffsetsCollector(seam, CLUSTER, source(META))
    first = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}

    seam.offsets[TP("a", 0)] = OffsetRange(5, 101, 7)  # a new message
    seam.offsets[TP("a", 2)] = OffsetRange(2, 2, 2)  # a new leader epoch, same range
    second = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}

    assert second[("a", 1)] is first[("a", 1)] and second[("b", 0)] is first[("b", 0)]
    assert second[("a", 0)] == PartitionOffsets("a", 0, 5, 101, leader=1, leader_epoch=7)
    assert second[("a", 2)] == PartitionOffsets("a", 2, 2, 2, leader=3, leader_epoch=2)

    seam.offsets[TP("a", 1)] = OffsetRange(3, 10, None)  # retention moved the log start
    third = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}
    assert third[("a", 1)] == PartitionOffsets("a", 1, 3, 10, leader=2, leader_epoch=0)
    assert third[("a", 0)] is second[("a", 0)]


async def test_offsets_changes_while_a_leader_was_down_or_a_partition_failed_seen_once_it_answers() -> None:
    """Between two complete answers of a leader, only the partitions answered with another range object
    are looked at (the seam answers an unchanged one with the same object): a change made while the
    leader was down, or while one of its partitions failed, is compared with its last complete answer,
    not lost."""
    seam = FakeSeam(offsets=dict(RANGES))
    collector = OffsetsCollector(seam, CLUSTER, source(META))
    first = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}
    seam.down = {1}
    seam.offsets[TP("a", 0)] = OffsetRange(5, 120, 7)  # while leader 1 is down
    assert ("a", 0) not in {(o.topic, o.partition) for o in (await collector.collect()).partitions}
    seam.down = set()
    back = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}
    assert back[("a", 0)] == PartitionOffsets("a", 0, 5, 120, leader=1, leader_epoch=7)
    assert back[("b", 0)] is first[("b", 0)] and back[("a", 1)] is first[("a", 1)]

    seam.partition_errors[TP("b", 0)] = KafkaResponseError(
        "not the leader", error_code=6, error_name="NOT_LEADER_OR_FOLLOWER", cluster=CLUSTER
    )
    seam.offsets[TP("b", 0)] = OffsetRange(0, 70, 0)  # while b/0 fails
    await collector.collect()
    del seam.partition_errors[TP("b", 0)]
    again = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}
    assert again[("b", 0)] == PartitionOffsets("b", 0, 0, 70, leader=1, leader_epoch=0)
    assert again[("a", 0)] is back[("a", 0)]


async def test_offsets_partition_led_elsewhere_is_a_new_object_a_broker_leading_nothing_forgotten() -> None:
    seam = FakeSeam(offsets=dict(RANGES))
    moved = metadata([1, 2, 3], {"a": [partition("a", 0, 1, epoch=3)], "b": [partition("b", 0, 2)]})
    metas = iter([META, moved])

    async def changing() -> ClusterMetadata:
        return next(metas)

    collector = OffsetsCollector(seam, CLUSTER, changing)
    [before] = [o for o in (await collector.collect()).partitions if (o.topic, o.partition) == ("b", 0)]
    [after] = [o for o in (await collector.collect()).partitions if (o.topic, o.partition) == ("b", 0)]
    assert before.leader == 1 and after == PartitionOffsets("b", 0, 0, 50, leader=2, leader_epoch=0)
    # broker 3 led a/2 and leads nothing now: what it was asked is not kept for it
    assert sorted(collector._asked) == [1, 2] and sorted(collector._last) == [1, 2]


async def test_offsets_topics_out_of_scope_never_asked() -> None:
    from collectors.scope import Scope
    from collectors.settings import NameFilter

    meta = metadata(
        [1], {"__consumer_offsets": [partition("__consumer_offsets", 0, 1)], "a": [partition("a", 0, 1)]}
    )
    seam = FakeSeam(
        offsets={TP("a", 0): OffsetRange(0, 5, 0), TP("__consumer_offsets", 0): OffsetRange(0, 9, 0)}
    )
    scope = Scope.from_patterns(topics=NameFilter(exclude=["__.*"]))

    observed = await OffsetsCollector(seam, CLUSTER, source(meta), scope=scope).collect()

    assert [p.topic for p in observed.partitions] == ["a"]
    assert seam.calls == [("list_offsets", 1, (TP("a", 0),))]


async def test_offsets_partition_failing_then_answered_again_sorted_and_rebuilt() -> None:
    err = KafkaResponseError("broker answered UNKNOWN", error_code=-1, error_name="UNKNOWN", cluster=CLUSTER)
    seam = FakeSeam(offsets=dict(RANGES))
    collector = OffsetsCollector(seam, CLUSTER, source(META))
    first = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}

    seam.partition_errors = {TP("a", 0): err}  # the same metadata object: the same plan, one answer missing
    failing = await collector.collect()
    assert [(o.topic, o.partition) for o in failing.partitions] == [("a", 1), ("a", 2), ("b", 0)]
    assert failing.partitions[2] is first[("b", 0)]

    seam.partition_errors = {}
    again = await collector.collect()
    assert [(o.topic, o.partition) for o in again.partitions] == [("a", 0), ("a", 1), ("a", 2), ("b", 0)]
    assert again.partitions[0] == first[("a", 0)] and again.partitions[0] is not first[("a", 0)]
    assert again.partitions[3] is first[("b", 0)] and [f.key for f in again.failures] == ["b/1"]


async def test_offsets_new_metadata_with_a_partition_added_keeps_the_unchanged_objects() -> None:
    seam = FakeSeam(offsets={**RANGES, TP("c", 0): OffsetRange(0, 4, 0)})
    grown = metadata(
        [1, 2, 3],
        {
            "a": [partition("a", 0, 1, epoch=3), partition("a", 1, 2), partition("a", 2, 3)],
            "b": [partition("b", 0, 1), partition("b", 1, None)],
            "c": [partition("c", 0, 1)],  # leader 1 is asked for one partition more
        },
    )
    metas = iter([META, grown])

    async def changing() -> ClusterMetadata:
        return next(metas)

    collector = OffsetsCollector(seam, CLUSTER, changing)
    first = {(o.topic, o.partition): o for o in (await collector.collect()).partitions}
    second = (await collector.collect()).partitions

    assert [(o.topic, o.partition) for o in second] == [("a", 0), ("a", 1), ("a", 2), ("b", 0), ("c", 0)]
    assert all(o is first[(o.topic, o.partition)] for o in second[:4])
    assert second[4] == PartitionOffsets("c", 0, 0, 4, leader=1, leader_epoch=0)
