"""KIP-848 consumer-group values (types 3–8 and 16), flexible from v0 (ConsumerGroup*Value.json).

Only version 0 exists in Kafka 4.1; :data:`VALUE_DECODERS` maps a record type to the decoder of that
version, and the dispatcher turns any other version into an UnknownRecord.
"""

from __future__ import annotations

from collections.abc import Callable

from collectors.codec.consumer_group_records import (
    ClassicMemberMetadata,
    ClassicProtocol,
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRecord,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    PartitionRacks,
    TopicIdPartitions,
    TopicMetadata,
)
from collectors.codec.record_types import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_METADATA,
    CONSUMER_GROUP_PARTITION_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA,
)
from collectors.codec.wire import INT64, Reader

# The decoder sees the group id, the key's second string (member id or regex, else None), the version
# and a Reader positioned after the version.
ValueDecoder = Callable[[str, str | None, int, Reader], ConsumerGroupRecord]


def _topic_id_partitions(r: Reader) -> tuple[TopicIdPartitions, ...]:
    items = []
    for _ in range(r.array_length(17)):
        topic_id = r.uuid()
        partitions = r.int32_array()
        r.skip_tagged_fields()
        items.append(TopicIdPartitions(topic_id, partitions))
    return tuple(items)


def group_metadata(group: str, _: str | None, version: int, r: Reader) -> ConsumerGroupMetadata:
    """Type 3: Epoch, then MetadataHash as tag 0."""
    epoch = r.int32()
    tags = r.tagged_fields()
    metadata_hash = 0
    if 0 in tags:
        if len(tags[0]) != 8:
            raise r.error(f"MetadataHash tag of {len(tags[0])} bytes, expected 8")
        (metadata_hash,) = INT64.unpack(tags[0])
    return ConsumerGroupMetadata(group, version, epoch, metadata_hash)


def partition_metadata(group: str, _: str | None, version: int, r: Reader) -> ConsumerGroupPartitionMetadata:
    """Type 4: per topic TopicId, TopicName, NumPartitions, PartitionMetadata (partition → racks)."""
    topics = []
    for _i in range(r.array_length(19)):
        topic_id = r.uuid()
        name = r.string()
        num_partitions = r.int32()
        racks = []
        for _j in range(r.array_length(6)):
            partition = r.int32()
            racks.append(PartitionRacks(partition, r.string_array()))
            r.skip_tagged_fields()
        r.skip_tagged_fields()
        topics.append(TopicMetadata(topic_id, name, num_partitions, tuple(racks)))
    r.skip_tagged_fields()
    return ConsumerGroupPartitionMetadata(group, version, tuple(topics))


def _classic_member_metadata(payload: bytes) -> ClassicMemberMetadata | None:
    r = Reader(payload, flexible=True, part="ClassicMemberMetadata tag")
    # A nullable struct inside a tag starts with an unsigned varint: 0 null, otherwise present.
    if r.uvarint() == 0:
        return None
    session_timeout_ms = r.int32()
    protocols = []
    for _ in range(r.array_length(3)):
        name = r.string()
        metadata = r.bytes_()
        r.skip_tagged_fields()
        protocols.append(ClassicProtocol(name, metadata))
    r.skip_tagged_fields()
    return ClassicMemberMetadata(session_timeout_ms, tuple(protocols))


def member_metadata(
    group: str, member_id: str | None, version: int, r: Reader
) -> ConsumerGroupMemberMetadata:
    """Type 5: client identity, subscription, assignor; ClassicMemberMetadata as tag 0."""
    instance_id = r.nullable_string()
    rack_id = r.nullable_string()
    client_id = r.string()
    client_host = r.string()
    topic_names = r.string_array()
    topic_regex = r.nullable_string()
    rebalance_timeout_ms = r.int32()
    server_assignor = r.nullable_string()
    tags = r.tagged_fields()
    classic = _classic_member_metadata(tags[0]) if 0 in tags else None
    return ConsumerGroupMemberMetadata(
        group=group,
        member_id=member_id or "",
        version=version,
        instance_id=instance_id,
        rack_id=rack_id,
        client_id=client_id,
        client_host=client_host,
        subscribed_topic_names=topic_names,
        subscribed_topic_regex=topic_regex,
        rebalance_timeout_ms=rebalance_timeout_ms,
        server_assignor=server_assignor,
        classic_member_metadata=classic,
    )


def target_assignment_metadata(
    group: str, _: str | None, version: int, r: Reader
) -> ConsumerGroupTargetAssignmentMetadata:
    """Type 6: AssignmentEpoch."""
    epoch = r.int32()
    r.skip_tagged_fields()
    return ConsumerGroupTargetAssignmentMetadata(group, version, epoch)


def target_assignment_member(
    group: str, member_id: str | None, version: int, r: Reader
) -> ConsumerGroupTargetAssignmentMember:
    """Type 7: TopicPartitions (topic id → partitions)."""
    partitions = _topic_id_partitions(r)
    r.skip_tagged_fields()
    return ConsumerGroupTargetAssignmentMember(group, member_id or "", version, partitions)


def current_member_assignment(
    group: str, member_id: str | None, version: int, r: Reader
) -> ConsumerGroupCurrentMemberAssignment:
    """Type 8: MemberEpoch, PreviousMemberEpoch, State, AssignedPartitions, PartitionsPendingRevocation."""
    member_epoch = r.int32()
    previous_member_epoch = r.int32()
    state = r.int8()
    assigned = _topic_id_partitions(r)
    pending = _topic_id_partitions(r)
    r.skip_tagged_fields()
    return ConsumerGroupCurrentMemberAssignment(
        group, member_id or "", version, member_epoch, previous_member_epoch, state, assigned, pending
    )


def regular_expression(
    group: str, regex: str | None, version: int, r: Reader
) -> ConsumerGroupRegularExpression:
    """Type 16: Topics, Version, Timestamp."""
    topics = r.string_array()
    regex_version = r.int64()
    timestamp = r.int64()
    r.skip_tagged_fields()
    return ConsumerGroupRegularExpression(group, regex or "", version, topics, regex_version, timestamp)


# Record type → (known value version, decoder).
VALUE_DECODERS: dict[int, tuple[int, ValueDecoder]] = {
    CONSUMER_GROUP_METADATA: (0, group_metadata),
    CONSUMER_GROUP_PARTITION_METADATA: (0, partition_metadata),
    CONSUMER_GROUP_MEMBER_METADATA: (0, member_metadata),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA: (0, target_assignment_metadata),
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER: (0, target_assignment_member),
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT: (0, current_member_assignment),
    CONSUMER_GROUP_REGULAR_EXPRESSION: (0, regular_expression),
}
