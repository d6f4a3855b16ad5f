"""Frozen records decoded from ``__consumer_offsets`` (one class per record kind).

``record_type`` is the int16 that prefixes every key; ``version`` is the int16 that prefixes every
value. Topic ids are Kafka's text form (URL-safe base64, 22 characters).
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.codec.consumer_group_records import (
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
)
from collectors.codec.record_types import GROUP_METADATA
from collectors.fast_init import fast_init

# ---------------------------------------------------------------- offset commits (types 0, 1)


@fast_init
@dataclass(frozen=True, slots=True)
class OffsetCommit:
    """A committed offset (OffsetCommitKey + OffsetCommitValue)."""

    record_type: int  # 0 legacy or 1
    group: str
    topic: str
    partition: int
    version: int
    offset: int
    leader_epoch: int | None  # None before v3 and for -1
    metadata: str
    commit_timestamp: int
    expire_timestamp: int | None  # v1 only
    topic_id: str | None  # tag 0 of v4+, written from Kafka 4.1


@fast_init
@dataclass(frozen=True, slots=True)
class OffsetCommitTombstone:
    """A deleted offset (expiry, OffsetDelete, DeleteGroups or topic deletion)."""

    record_type: int
    group: str
    topic: str
    partition: int


# ---------------------------------------------------------------- classic groups (type 2)


@dataclass(frozen=True, slots=True)
class TopicPartitions:
    """A topic name and partition numbers, as in the consumer embedded protocol."""

    topic: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerSubscription:
    """ConsumerProtocolSubscription (v0–v3) carried in a classic member's subscription bytes."""

    version: int
    topics: tuple[str, ...]
    user_data: bytes | None
    owned_partitions: tuple[TopicPartitions, ...]  # v1+
    generation_id: int | None  # v2+
    rack_id: str | None  # v3+


@dataclass(frozen=True, slots=True)
class ConsumerAssignment:
    """ConsumerProtocolAssignment carried in a classic member's assignment bytes."""

    version: int
    partitions: tuple[TopicPartitions, ...]
    user_data: bytes | None


@dataclass(frozen=True, slots=True)
class MemberMetadata:
    """One member of a classic group; the raw protocol bytes are always kept.

    For protocol type ``consumer`` the subscription and assignment are decoded; a failure leaves the
    decoded field ``None`` and explains itself in ``*_error`` rather than failing the record.
    """

    member_id: str
    group_instance_id: str | None  # v3+
    client_id: str
    client_host: str
    rebalance_timeout: int | None  # v1+
    session_timeout: int
    subscription: bytes
    assignment: bytes
    consumer_subscription: ConsumerSubscription | None = None
    consumer_assignment: ConsumerAssignment | None = None
    subscription_error: str | None = None
    assignment_error: str | None = None


@dataclass(frozen=True, slots=True)
class GroupMetadata:
    """A classic group's state (GroupMetadataValue v0–v4)."""

    group: str
    version: int
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int | None  # v2+, None for -1
    members: tuple[MemberMetadata, ...]
    record_type: int = GROUP_METADATA


# ---------------------------------------------------------------- share / streams groups, the rest


@dataclass(frozen=True, slots=True)
class ShareGroupRecord:
    """Types 9–15: key decoded, value kept raw (``value`` includes its int16 version)."""

    record_type: int
    group: str
    member_id: str | None
    version: int
    value: bytes


@dataclass(frozen=True, slots=True)
class StreamsGroupRecord:
    """Types 17–24: key decoded, value kept raw (``value`` includes its int16 version)."""

    record_type: int
    group: str
    member_id: str | None
    version: int
    value: bytes


@dataclass(frozen=True, slots=True)
class GroupTombstone:
    """A null value for a group-scoped key (types 2–24): that group state was deleted."""

    record_type: int
    group: str
    member_id: str | None = None
    regular_expression: str | None = None


@dataclass(frozen=True, slots=True)
class UnknownRecord:
    """A record type or value version this codec does not know; counted by the caller, never fatal."""

    record_type: int
    version: int | None  # None for tombstones
    key: bytes
    value: bytes | None


Record = (
    OffsetCommit
    | OffsetCommitTombstone
    | GroupMetadata
    | ConsumerGroupMetadata
    | ConsumerGroupPartitionMetadata
    | ConsumerGroupMemberMetadata
    | ConsumerGroupTargetAssignmentMetadata
    | ConsumerGroupTargetAssignmentMember
    | ConsumerGroupCurrentMemberAssignment
    | ConsumerGroupRegularExpression
    | ShareGroupRecord
    | StreamsGroupRecord
    | GroupTombstone
    | UnknownRecord
)
