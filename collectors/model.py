"""Frozen observations the collectors produce.

Every top-level observation is stamped with the cluster name and the wall-clock time (epoch seconds)
at which it was taken, and lists what could *not* be observed (``failures``) so a partial cycle is
explicit rather than silently short. Detectors consume these; nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from operator import attrgetter
from typing import NamedTuple

from collectors.fast_init import fast_init

OFFSETS_TOPIC = "__consumer_offsets"
NOT_AUTHORIZED = "not authorized"  # Failure.reason of a KafkaAuthError (collectors.errors)


class TopicPartition(NamedTuple):
    topic: str
    partition: int


@dataclass(frozen=True, slots=True)
class Failure:
    """Something a collector could not observe this cycle, and why."""

    scope: str  # "broker", "partition", "group", "topic", "url"
    key: str  # e.g. "2", "orders/3", "billing-consumer", "http://..."
    error: str  # the typed error's class name
    message: str

    @property
    def reason(self) -> str:
        """Why it could not be observed: an ACL's refusal reads "not authorized", else the error type."""
        return NOT_AUTHORIZED if self.error == "KafkaAuthError" else self.error

    @property
    def entry(self) -> str:
        """``scope:key: reason``, as ``/readyz`` and the logs list it."""
        return f"{self.scope}:{self.key}: {self.reason}"


# ---------------------------------------------------------------- cluster metadata


@dataclass(frozen=True, slots=True)
class Broker:
    node_id: int
    host: str
    port: int
    rack: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int | None  # None when the partition is offline (leader -1)
    leader_epoch: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()
    error: str | None = None  # e.g. "LEADER_NOT_AVAILABLE"


@dataclass(frozen=True, slots=True)
class TopicInfo:
    name: str
    internal: bool
    partitions: tuple[PartitionInfo, ...]
    topic_id: str | None = None

    @property
    def replication_factor(self) -> int:
        return max((len(p.replicas) for p in self.partitions), default=0)


@dataclass(frozen=True, slots=True)
class ClusterMetadata:
    cluster: str
    observed_at: float
    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[Broker, ...]
    topics: tuple[TopicInfo, ...]
    failures: tuple[Failure, ...] = ()
    excluded_topics: int = 0  # topics the cluster's scope leaves out (collectors.scope), not listed here

    def topic(self, name: str) -> TopicInfo | None:
        return next((t for t in self.topics if t.name == name), None)

    @property
    def offsets_topic_partitions(self) -> int | None:
        """The real partition count of ``__consumer_offsets`` (None until the topic exists)."""
        info = self.topic(OFFSETS_TOPIC)
        return len(info.partitions) if info else None

    def partitions(self) -> tuple[PartitionInfo, ...]:
        return tuple(p for t in self.topics for p in t.partitions)


# ---------------------------------------------------------------- partition offsets


@fast_init
@dataclass(frozen=True, slots=True)
class PartitionOffsets:
    topic: str
    partition: int
    log_start: int
    log_end: int  # the high watermark: what a read_uncommitted consumer can reach
    leader: int | None = None
    leader_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class OffsetsObservation:
    cluster: str
    observed_at: float
    partitions: tuple[PartitionOffsets, ...]
    failures: tuple[Failure, ...] = ()

    def log_ends(self) -> dict[tuple[str, int], int]:
        """Each partition's log end by ``(topic, partition)``, built in C (the last of duplicates wins)."""
        parts = self.partitions
        return dict(zip(map(_PARTITION, parts), map(_LOG_END, parts), strict=True))


_PARTITION = attrgetter("topic", "partition")
_LOG_END = attrgetter("log_end")


# ---------------------------------------------------------------- groups


@dataclass(frozen=True, slots=True)
class GroupMember:
    member_id: str
    client_id: str
    host: str
    instance_id: str | None = None
    assignment: tuple[TopicPartition, ...] = ()
    member_epoch: int | None = None  # KIP-848 consumer groups only


@dataclass(frozen=True, slots=True)
class GroupInfo:
    group_id: str
    group_type: str  # "classic", "consumer", "share", "streams" or "unknown"
    state: str  # "Stable", "Empty", "PreparingRebalance", ... as the broker reports it
    protocol_type: str  # "consumer" for consumer groups, "" for standalone/simple groups
    protocol: str  # assignor ("range", "uniform", ...)
    members: tuple[GroupMember, ...] = ()
    coordinator: int | None = None
    group_epoch: int | None = None  # classic: generation id; consumer: group epoch


@dataclass(frozen=True, slots=True)
class GroupsObservation:
    cluster: str
    observed_at: float
    groups: tuple[GroupInfo, ...]
    failures: tuple[Failure, ...] = ()
    excluded: int = 0  # groups the cluster's scope leaves out (collectors.scope): listed, not described


# ---------------------------------------------------------------- committed offsets


@fast_init
@dataclass(frozen=True, slots=True)
class CommittedOffset:
    group: str
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class CommittedObservation:
    cluster: str
    observed_at: float
    offsets: tuple[CommittedOffset, ...]
    groups: tuple[str, ...]  # every group whose offsets were fetched (a group may have none)
    failures: tuple[Failure, ...] = ()
    # True: not asked of Kafka but what the live tail had delivered when it was taken
    # (collectors.tail_committed): a record appended before ``observed_at`` may not be in it yet, so it
    # cannot tell that a key a tombstone removed was committed again (the tail will tell that itself)
    from_tail: bool = False
    # True: taken while the live tail delivered every commit, from before it was sent until it was answered
    # (a view's observation always is). It cannot know a commit the tail had not: it only seeds, even when
    # judged after the tail stopped or failed (a poll answered before a commit became fetchable would
    # otherwise stand as the newer value: a rewind nobody made).
    under_tail: bool = False
    # The (group, topic, partition) of every offset when its source keeps them as one set: the same object
    # for as long as no key came or went (the tail-fed view's), so a reader that looked them up once can
    # tell without a walk that the key set has not changed since. None: not kept (walk ``offsets``).
    keys: frozenset[tuple[str, str, int]] | None = field(default=None, compare=False, repr=False)

    def unseen_topics(self) -> frozenset[str]:
        """Topics whose offsets this poll could not see (an ACL hides them): not seen, never deleted."""
        return frozenset(f.key for f in self.failures if f.scope == "topic")

    def keyed_offsets(self) -> Iterator[tuple[tuple[str, str, int], int]]:
        """``((group, topic, partition), offset)`` of each committed offset, in order."""
        return zip(map(_COMMIT_KEY, self.offsets), map(_OFFSET, self.offsets), strict=True)


_COMMIT_KEY = attrgetter("group", "topic", "partition")
_OFFSET = attrgetter("offset")


# ---------------------------------------------------------------- topic configuration


@dataclass(frozen=True, slots=True)
class TopicConfig:
    """The settings of one topic that decide whether committed offsets stay safe (defaults resolved)."""

    topic: str
    retention_ms: int | None  # None = unlimited (-1)
    retention_bytes: int | None  # None = unlimited (-1)
    cleanup_policy: tuple[str, ...]
    unclean_leader_election_enable: bool
    min_insync_replicas: int
    replication_factor: int
    segment_ms: int | None = None
    sources: tuple[tuple[str, str], ...] = ()  # (config name, source) e.g. ("retention.ms", "DEFAULT_CONFIG")


@dataclass(frozen=True, slots=True)
class ConfigsObservation:
    cluster: str
    observed_at: float
    topics: tuple[TopicConfig, ...]
    broker: tuple[tuple[str, str], ...] = ()  # offset-safety relevant broker settings
    failures: tuple[Failure, ...] = ()
    broker_sources: tuple[tuple[str, str], ...] = ()  # (broker config name, source), like TopicConfig.sources
    broker_id: int | None = None  # the broker whose settings ``broker`` lists


# ---------------------------------------------------------------- broker metrics


@dataclass(frozen=True, slots=True)
class MetricSample:
    name: str
    labels: tuple[tuple[str, str], ...]
    value: float


@dataclass(frozen=True, slots=True)
class BrokerMetrics:
    url: str
    broker_id: int | None
    samples: tuple[MetricSample, ...]

    def value(self, name: str, **labels: str) -> float | None:
        """Sum of the samples called ``name`` whose labels include ``labels`` (None if there is none)."""
        want = set(labels.items())
        found = [s.value for s in self.samples if s.name == name and want <= set(s.labels)]
        return sum(found) if found else None


@dataclass(frozen=True, slots=True)
class MetricsObservation:
    cluster: str
    observed_at: float
    brokers: tuple[BrokerMetrics, ...]
    failures: tuple[Failure, ...] = field(default=())
