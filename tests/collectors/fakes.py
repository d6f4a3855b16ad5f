"""An in-memory :class:`collectors.seam.KafkaSeam` returning literal data, and metadata builders.

Brokers listed in ``down`` raise :class:`KafkaUnavailableError` for every request sent to them, like a
stopped broker does through the real seam. ``calls`` records every request for assertions.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from collectors.errors import KafkaError, KafkaUnavailableError
from collectors.kafka.errors import response_error
from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedOffset,
    GroupInfo,
    PartitionInfo,
    TopicInfo,
    TopicPartition,
)
from collectors.seam import (
    ConfigValue,
    EpochEndResult,
    ListedGroup,
    MetadataSnapshot,
    MetadataSource,
    OffsetRange,
    OffsetsResult,
)

CLUSTER = "test"


def partition(
    topic: str, index: int, leader: int | None, epoch: int = 0, replicas: Sequence[int] = ()
) -> PartitionInfo:
    """A partition row; replicas default to the leader alone."""
    reps = tuple(replicas) or ((leader,) if leader is not None else ())
    return PartitionInfo(topic, index, leader, epoch, reps, reps if leader is not None else ())


def snapshot(brokers: Sequence[int], topics: dict[str, list[PartitionInfo]]) -> MetadataSnapshot:
    """A metadata snapshot with brokers on localhost ports 9000+id."""
    return MetadataSnapshot(
        cluster_id="cid",
        controller_id=brokers[0] if brokers else None,
        brokers=tuple(Broker(b, "127.0.0.1", 9000 + b) for b in brokers),
        topics=tuple(
            TopicInfo(name, name.startswith("__"), tuple(ps)) for name, ps in sorted(topics.items())
        ),
    )


def metadata(brokers: Sequence[int], topics: dict[str, list[PartitionInfo]]) -> ClusterMetadata:
    """The :class:`ClusterMetadata` a metadata source would hand to the other collectors."""
    snap = snapshot(brokers, topics)
    return ClusterMetadata(CLUSTER, 1.0, snap.cluster_id, snap.controller_id, snap.brokers, snap.topics)


def source(meta: ClusterMetadata) -> MetadataSource:
    """A metadata source (async callable) returning ``meta``."""

    async def get() -> ClusterMetadata:
        return meta

    return get


def down_error(broker: int) -> KafkaUnavailableError:
    return KafkaUnavailableError(f"broker {broker} is down", cluster=CLUSTER)


def unknown_topic(name: str) -> KafkaError:
    """What a broker answers for a topic asked by name that does not exist."""
    return response_error(3, cluster=CLUSTER, topic=name)


@dataclass
class FakeSeam:
    """Literal answers; see the module docstring."""

    meta: MetadataSnapshot | None = None
    offsets: dict[TopicPartition, OffsetRange] = field(default_factory=dict)
    partition_errors: dict[TopicPartition, KafkaError] = field(default_factory=dict)
    listed: dict[int, list[ListedGroup]] = field(default_factory=dict)
    described: dict[str, GroupInfo | KafkaError] = field(default_factory=dict)
    committed: dict[str, list[CommittedOffset]] = field(default_factory=dict)
    # errors a group gets only inside a many-group OffsetFetch (a per-group request then succeeds)
    batch_errors: dict[str, KafkaError] = field(default_factory=dict)
    # errors a group gets in every OffsetFetch
    group_errors: dict[str, KafkaError] = field(default_factory=dict)
    coordinators: dict[str, int | KafkaError] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, ConfigValue] | KafkaError] = field(default_factory=dict)
    broker_configs: dict[int, dict[str, ConfigValue]] = field(default_factory=dict)
    # OffsetForLeaderEpoch answers per (partition, requested epoch); unknown ones answer (-1, -1)
    epoch_ends: dict[tuple[TopicPartition, int], tuple[int, int] | KafkaError] = field(default_factory=dict)
    # Metadata by name: a topic listed here answers that error; one in ``meta`` answers None; others
    # UNKNOWN_TOPIC_OR_PARTITION (gone)
    named_topic_errors: dict[str, KafkaError] = field(default_factory=dict)
    down: set[int] = field(default_factory=set)
    barrier: threading.Barrier | None = None  # list_offsets waits here: proves leaders are asked together
    calls: list[tuple[Any, ...]] = field(default_factory=list)

    def _to(self, broker: int, call: tuple[Any, ...]) -> None:
        self.calls.append(call)
        if broker in self.down:
            raise down_error(broker)

    def metadata(self) -> MetadataSnapshot:
        self.calls.append(("metadata",))
        if self.meta is None:
            raise KafkaUnavailableError("no broker answered", cluster=CLUSTER)
        return self.meta

    def topic_errors(self, names: Sequence[str]) -> dict[str, KafkaError | None]:
        self.calls.append(("topic_errors", tuple(names)))
        if self.meta is None:
            raise KafkaUnavailableError("no broker answered", cluster=CLUSTER)
        present = {t.name for t in self.meta.topics}
        return {
            n: self.named_topic_errors.get(n) or (None if n in present else unknown_topic(n)) for n in names
        }

    def list_offsets(self, leader_id: int, partitions: Sequence[TopicPartition]) -> OffsetsResult:
        self._to(leader_id, ("list_offsets", leader_id, tuple(partitions)))
        if self.barrier is not None:
            self.barrier.wait(timeout=2)
        errors = {tp: self.partition_errors[tp] for tp in partitions if tp in self.partition_errors}
        ranges = {tp: self.offsets[tp] for tp in partitions if tp in self.offsets and tp not in errors}
        return ranges, errors

    def offsets_for_leader_epoch(
        self, leader_id: int, requests: Sequence[tuple[TopicPartition, int]]
    ) -> EpochEndResult:
        self._to(leader_id, ("offsets_for_leader_epoch", leader_id, tuple(requests)))
        return {tp: self.epoch_ends.get((tp, epoch), (-1, -1)) for tp, epoch in requests}

    def list_groups(self, broker_id: int) -> list[ListedGroup]:
        self._to(broker_id, ("list_groups", broker_id))
        return list(self.listed.get(broker_id, []))

    def find_coordinators(self, group_ids: Sequence[str]) -> dict[str, int | KafkaError]:
        self.calls.append(("find_coordinators", tuple(group_ids)))
        return {g: self.coordinators[g] for g in group_ids if g in self.coordinators}

    def _describe(
        self, kind: str, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        self._to(broker_id, (kind, broker_id, tuple(group_ids)))
        return {g: self.described[g] for g in group_ids if g in self.described}

    def describe_classic_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        return self._describe("describe_classic", broker_id, group_ids)

    def describe_consumer_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        return self._describe("describe_consumer", broker_id, group_ids)

    def fetch_offsets(
        self, coordinator_id: int, group_ids: Sequence[str]
    ) -> dict[str, list[CommittedOffset] | KafkaError]:
        self._to(coordinator_id, ("fetch_offsets", coordinator_id, tuple(group_ids)))
        result: dict[str, list[CommittedOffset] | KafkaError] = {}
        for g in group_ids:
            if g in self.group_errors:
                result[g] = self.group_errors[g]
            elif len(group_ids) > 1 and g in self.batch_errors:
                result[g] = self.batch_errors[g]
            else:
                result[g] = list(self.committed.get(g, []))
        return result

    def describe_topic_configs(
        self, topics: Sequence[str], keys: Sequence[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError]:
        self.calls.append(("describe_topic_configs", tuple(topics), tuple(keys)))
        return {t: self.topic_configs[t] for t in topics if t in self.topic_configs}

    def describe_broker_configs(self, broker_id: int, keys: Sequence[str]) -> dict[str, ConfigValue]:
        self._to(broker_id, ("describe_broker_configs", broker_id, tuple(keys)))
        return dict(self.broker_configs.get(broker_id, {}))

    def close(self) -> None:
        self.calls.append(("close",))
