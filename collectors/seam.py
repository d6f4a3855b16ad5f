"""The one door to Kafka: every request offsetguard makes goes through a :class:`KafkaSeam`.

The seam is deliberately dumb and synchronous: each method is one Kafka round trip (or one batch of them
to the same broker) and returns plain data. Collectors hold the orchestration — which broker to ask, what
to do when one is down, when to fall back — and call the seam through :func:`asyncio.to_thread`, so unit
tests hand in a plain fake object (``tests/collectors/fakes.py``) instead of patching a Kafka client.

Contract for every implementation:

* A failure of the whole call raises a :class:`collectors.errors.KafkaError` subclass (never a
  third-party exception); per-item failures (one partition, one group, one topic) are returned in the
  result as ``KafkaError`` values so the rest of the batch survives.
* Methods are safe to call from several threads at once.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import NamedTuple, Protocol

from collectors.errors import KafkaError, KafkaResponseError
from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedOffset,
    Failure,
    GroupInfo,
    TopicInfo,
    TopicPartition,
)
from collectors.scope import EVERYTHING, Scope

# How collectors that need partition leaders or broker ids get the latest cluster metadata: the scheduler
# hands in e.g. ``MetadataCollector.latest`` (cached, re-collected when old); tests hand in a literal.
MetadataSource = Callable[[], Awaitable[ClusterMetadata]]


class MetadataSnapshot(NamedTuple):
    """What one Metadata request tells about the cluster (not yet stamped with a cluster name or time)."""

    cluster_id: str | None
    controller_id: int | None
    brokers: tuple[Broker, ...]
    topics: tuple[TopicInfo, ...]


class OffsetRange(NamedTuple):
    """Log start (earliest) and log end (high watermark) of one partition, as its leader reported them."""

    log_start: int
    log_end: int
    leader_epoch: int | None


class ListedGroup(NamedTuple):
    """One row of a ListGroups response: a group the asked broker coordinates."""

    group_id: str
    group_type: str  # "classic", "consumer", "share", "streams"
    state: str
    protocol_type: str


class ConfigValue(NamedTuple):
    """One configuration entry; ``value`` is None when the broker hides it (sensitive) or has none."""

    value: str | None
    source: str  # e.g. "TOPIC_CONFIG", "STATIC_BROKER_CONFIG", "DEFAULT_CONFIG"


OffsetsResult = tuple[dict[TopicPartition, OffsetRange], dict[TopicPartition, KafkaError]]
# (leader_epoch, end_offset) per partition as the leader answered OffsetForLeaderEpoch, or its error.
EpochEndResult = dict[TopicPartition, tuple[int, int] | KafkaError]


class KafkaSeam(Protocol):
    """Blocking Kafka I/O used by the collectors. See the module docstring for the error contract."""

    def metadata(self) -> MetadataSnapshot:
        """Brokers, controller and every topic with partition leader, leader epoch, replicas, ISR."""
        ...

    def topic_errors(self, names: Sequence[str]) -> dict[str, KafkaError | None]:
        """Metadata of ``names`` by name: None for a topic that exists and may be described, else the
        error (a :class:`KafkaAuthError` for one an ACL hides, ``UNKNOWN_TOPIC_OR_PARTITION`` if gone)."""
        ...

    def list_offsets(self, leader_id: int, partitions: Sequence[TopicPartition]) -> OffsetsResult:
        """Earliest and latest (read_uncommitted) offsets of ``partitions``, all led by ``leader_id``."""
        ...

    def offsets_for_leader_epoch(
        self, leader_id: int, requests: Sequence[tuple[TopicPartition, int]]
    ) -> EpochEndResult:
        """KIP-320 OffsetForLeaderEpoch to ``leader_id``: ``(leader_epoch, end_offset)`` of each
        ``(partition, requested_epoch)`` (the largest epoch <= the requested one, -1/-1 if unknown)."""
        ...

    def list_groups(self, broker_id: int) -> list[ListedGroup]:
        """Every group whose coordinator is ``broker_id``."""
        ...

    def find_coordinators(self, group_ids: Sequence[str]) -> dict[str, int | KafkaError]:
        """The coordinator broker of each group (one batched FindCoordinator request)."""
        ...

    def describe_classic_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        """DescribeGroups of classic groups coordinated by ``broker_id``; assignments decoded."""
        ...

    def describe_consumer_groups(
        self, broker_id: int, group_ids: Sequence[str]
    ) -> dict[str, GroupInfo | KafkaError]:
        """KIP-848 ConsumerGroupDescribe of consumer groups coordinated by ``broker_id``."""
        ...

    def fetch_offsets(
        self, coordinator_id: int, group_ids: Sequence[str]
    ) -> dict[str, list[CommittedOffset] | KafkaError]:
        """Committed offsets of many groups in one OffsetFetch request; errors are per group."""
        ...

    def describe_topic_configs(
        self, topics: Sequence[str], keys: Sequence[str]
    ) -> dict[str, dict[str, ConfigValue] | KafkaError]:
        """The ``keys`` of each topic's effective configuration, defaults included with their source."""
        ...

    def describe_broker_configs(self, broker_id: int, keys: Sequence[str]) -> dict[str, ConfigValue]:
        """The ``keys`` of one broker's configuration, defaults included with their source."""
        ...

    def close(self) -> None:
        """Release connections; the seam must not be used afterwards."""
        ...


UNKNOWN_TOPIC = "UNKNOWN_TOPIC_OR_PARTITION"


def topic_gone(answer: KafkaError | None) -> bool:
    """A request about a topic answered UNKNOWN_TOPIC_OR_PARTITION: the topic no longer exists."""
    return isinstance(answer, KafkaResponseError) and answer.error_name == UNKNOWN_TOPIC


def failure(scope: str, key: str, error: KafkaError) -> Failure:
    """The :class:`Failure` entry recording ``error`` for one broker/partition/group/topic."""
    return Failure(scope=scope, key=key, error=type(error).__name__, message=str(error))


class SeamCollector:
    """Base of the collectors that ask the seam after looking at the latest cluster metadata; what they
    ask about and report is limited to ``scope`` (the metadata source hands them in-scope topics only)."""

    name: str

    def __init__(
        self,
        seam: KafkaSeam,
        cluster: str,
        metadata: MetadataSource,
        clock: Callable[[], float] = time.time,
        *,
        scope: Scope = EVERYTHING,
    ) -> None:
        self.cluster = cluster
        self._seam = seam
        self._metadata = metadata
        self._clock = clock
        self.scope = scope
