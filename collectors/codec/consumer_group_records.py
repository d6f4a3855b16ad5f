"""Frozen records of KIP-848 consumer groups (record types 3–8 and 16), all flexible from v0."""

from __future__ import annotations

from dataclasses import dataclass

from collectors.codec.record_types import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_PARTITION_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
)


@dataclass(frozen=True, slots=True)
class TopicIdPartitions:
    """A topic id and partition numbers (KIP-848 assignments)."""

    topic_id: str
    partitions: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMetadata:
    """Type 3: the group epoch."""

    group: str
    version: int
    epoch: int
    metadata_hash: int  # tag 0, 0 when absent (added in 4.1, KIP-1101)
    record_type: int = CONSUMER_GROUP_METADATA


@dataclass(frozen=True, slots=True)
class PartitionRacks:
    """Racks of one partition (deprecated after 4.0, usually empty)."""

    partition: int
    racks: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TopicMetadata:
    """One subscribed topic in ConsumerGroupPartitionMetadataValue."""

    topic_id: str
    topic_name: str
    num_partitions: int
    partition_metadata: tuple[PartitionRacks, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupPartitionMetadata:
    """Type 4: metadata of the topics the group subscribes to."""

    group: str
    version: int
    topics: tuple[TopicMetadata, ...]
    record_type: int = CONSUMER_GROUP_PARTITION_METADATA


@dataclass(frozen=True, slots=True)
class ClassicProtocol:
    """A protocol a classic-protocol member of a consumer group supports."""

    name: str
    metadata: bytes


@dataclass(frozen=True, slots=True)
class ClassicMemberMetadata:
    """Tag 0 of ConsumerGroupMemberMetadataValue: present when the member speaks the classic protocol."""

    session_timeout_ms: int
    supported_protocols: tuple[ClassicProtocol, ...]


@dataclass(frozen=True, slots=True)
class ConsumerGroupMemberMetadata:
    """Type 5: a member's static metadata."""

    group: str
    member_id: str
    version: int
    instance_id: str | None
    rack_id: str | None
    client_id: str
    client_host: str
    subscribed_topic_names: tuple[str, ...]
    subscribed_topic_regex: str | None
    rebalance_timeout_ms: int
    server_assignor: str | None
    classic_member_metadata: ClassicMemberMetadata | None
    record_type: int = CONSUMER_GROUP_MEMBER_METADATA


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMetadata:
    """Type 6: the epoch of the target assignment."""

    group: str
    version: int
    assignment_epoch: int
    record_type: int = CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA


@dataclass(frozen=True, slots=True)
class ConsumerGroupTargetAssignmentMember:
    """Type 7: one member's target assignment."""

    group: str
    member_id: str
    version: int
    partitions: tuple[TopicIdPartitions, ...]
    record_type: int = CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER


@dataclass(frozen=True, slots=True)
class ConsumerGroupCurrentMemberAssignment:
    """Type 8: one member's current epochs and assignment."""

    group: str
    member_id: str
    version: int
    member_epoch: int
    previous_member_epoch: int
    state: int  # MemberState id
    assigned_partitions: tuple[TopicIdPartitions, ...]
    partitions_pending_revocation: tuple[TopicIdPartitions, ...]
    record_type: int = CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT


@dataclass(frozen=True, slots=True)
class ConsumerGroupRegularExpression:
    """Type 16: topics a subscription regular expression resolved to."""

    group: str
    regular_expression: str
    version: int
    topics: tuple[str, ...]
    regex_version: int  # the schema's ``Version`` field (metadata image version)
    timestamp: int
    record_type: int = CONSUMER_GROUP_REGULAR_EXPRESSION


ConsumerGroupRecord = (
    ConsumerGroupMetadata
    | ConsumerGroupPartitionMetadata
    | ConsumerGroupMemberMetadata
    | ConsumerGroupTargetAssignmentMetadata
    | ConsumerGroupTargetAssignmentMember
    | ConsumerGroupCurrentMemberAssignment
    | ConsumerGroupRegularExpression
)
