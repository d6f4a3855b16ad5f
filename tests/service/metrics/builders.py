"""Literal observations of one cluster ``c1`` and fakes of the metrics' sources, shared by the tests.

Cluster ``c1``: brokers 1-3; ``orders`` has partitions 0 (log 10..100, leader 1, epoch 5, fully in sync)
and 1 (log 0..50, offline, epoch 7, under-replicated); ``__consumer_offsets`` has one partition.
Committed: billing orders/0 = 90 (lag 10), billing orders/1 = 55 (lag -5: beyond the log end), audit
orders/0 = 100 (lag 0), audit gone/0 = 5 (no log range: lag unknown). audit has no commit on orders/1.
billing's member m1 holds orders/0; audit and idle have no members; idle has no commits at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
    TopicPartition,
)
from service.metrics.sources import ClusterInputs

NOW = 1_000_000.0
CLUSTER = "c1"


def metadata() -> ClusterMetadata:
    return ClusterMetadata(
        cluster=CLUSTER,
        observed_at=NOW - 3,
        cluster_id="abc",
        controller_id=1,
        brokers=(Broker(1, "h1", 9092), Broker(2, "h2", 9092), Broker(3, "h3", 9092)),
        topics=(
            TopicInfo(
                "orders",
                False,
                (
                    PartitionInfo("orders", 0, 1, 5, (1, 2), (1, 2)),
                    PartitionInfo("orders", 1, None, 7, (2, 3), (3,)),
                ),
            ),
            TopicInfo(
                "__consumer_offsets", True, (PartitionInfo("__consumer_offsets", 0, 1, 0, (1,), (1,)),)
            ),
        ),
    )


def offsets() -> OffsetsObservation:
    return OffsetsObservation(
        cluster=CLUSTER,
        observed_at=NOW - 2,
        partitions=(
            PartitionOffsets("orders", 0, 10, 100, leader=1, leader_epoch=4),
            PartitionOffsets("orders", 1, 0, 50),
            PartitionOffsets("__consumer_offsets", 0, 0, 7),
        ),
    )


def groups() -> GroupsObservation:
    member = GroupMember("m1", "c-1", "/10.0.0.1", assignment=(TopicPartition("orders", 0),))
    return GroupsObservation(
        cluster=CLUSTER,
        observed_at=NOW - 1,
        groups=(
            GroupInfo("billing", "classic", "Stable", "consumer", "range", (member,)),
            GroupInfo("audit", "classic", "Empty", "consumer", ""),
            GroupInfo("idle", "classic", "Empty", "consumer", ""),
        ),
    )


def committed() -> CommittedObservation:
    return CommittedObservation(
        cluster=CLUSTER,
        observed_at=NOW - 1,
        offsets=(
            CommittedOffset("billing", "orders", 0, 90, None),
            CommittedOffset("billing", "orders", 1, 55, None),
            CommittedOffset("audit", "orders", 0, 100, None),
            CommittedOffset("audit", "gone", 0, 5, None),
        ),
        groups=("billing", "audit", "idle"),
    )


def cluster_inputs() -> ClusterInputs:
    return ClusterInputs(CLUSTER, metadata(), offsets(), groups(), committed())


class FakeLogEndTimes:
    """Answers from a literal table; records what it was asked."""

    def __init__(self, reached: Mapping[tuple[str, int, int], float]) -> None:
        self.reached = dict(reached)
        self.calls: list[tuple[str, set[tuple[str, int, int]]]] = []

    def log_end_reached_at_many(
        self, cluster: str, wanted: Iterable[tuple[str, int, int]]
    ) -> dict[tuple[str, int, int], float]:
        asked = set(wanted)
        self.calls.append((cluster, asked))
        return {k: v for k, v in self.reached.items() if k in asked}


# billing orders/0 (committed 90): the log end first reached 91 thirty seconds before NOW
STORE_TIMES = {("orders", 0, 91): NOW - 30}


class FakeAlerts:
    """An alert store's counts, literally."""

    def __init__(self, fail: Exception | None = None) -> None:
        self.fail = fail

    def firing_counts(self) -> dict[tuple[str, str, str], int]:
        if self.fail:
            raise self.fail
        return {("offset_rewind", "critical", CLUSTER): 2, ("lag", "warning", CLUSTER): 1}

    def incident_totals(self) -> dict[tuple[str, str], int]:
        return {("offset_rewind", CLUSTER): 7}

    def magnitude_totals(self) -> dict[tuple[str, str], int]:
        return {("replayed", CLUSTER): 1200, ("lost", CLUSTER): 30, ("other", CLUSTER): 1}
