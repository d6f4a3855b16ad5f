"""Classic groups: GroupMetadataValue v0–v4+ and the consumer embedded protocol inside it.

GroupMetadataValue (GroupMetadataValue.json): protocolType, generation, protocol, leader,
currentStateTimestamp (v2+), members; each member: memberId, groupInstanceId (v3+), clientId,
clientHost, rebalanceTimeout (v1+), sessionTimeout, subscription, assignment. v4 is flexible and, per
KIP-915, later versions only add tags, so any version >= 4 is read as v4.

For protocol type ``consumer`` the member bytes are ConsumerProtocolSubscription/Assignment: int16
version then a non-flexible message (clients' ConsumerProtocol*.json). Like Kafka's ConsumerProtocol,
a version above the highest known (3) is read as 3.
"""

from __future__ import annotations

from collectors.codec.records import (
    ConsumerAssignment,
    ConsumerSubscription,
    GroupMetadata,
    MemberMetadata,
    TopicPartitions,
)
from collectors.codec.wire import Reader, WireError

CONSUMER_PROTOCOL_TYPE = "consumer"
_CONSUMER_PROTOCOL_MAX_VERSION = 3


def decode_group_metadata(group: str, version: int, value: bytes) -> GroupMetadata:
    """A classic group's value; ``version`` >= 0 was read from the first two bytes."""
    r = Reader(value, 2, flexible=version >= 4)
    protocol_type = r.string()
    generation = r.int32()
    protocol = r.nullable_string()
    leader = r.nullable_string()
    current_state_timestamp = r.int64() if version >= 2 else None
    if current_state_timestamp == -1:
        current_state_timestamp = None
    consumer = protocol_type == CONSUMER_PROTOCOL_TYPE
    members = tuple(_member(r, version, consumer) for _ in range(r.array_length()))
    r.skip_tagged_fields()
    return GroupMetadata(
        group=group,
        version=version,
        protocol_type=protocol_type,
        generation=generation,
        protocol=protocol,
        leader=leader,
        current_state_timestamp=current_state_timestamp,
        members=members,
    )


def _member(r: Reader, version: int, consumer: bool) -> MemberMetadata:
    member_id = r.string()
    group_instance_id = r.nullable_string() if version >= 3 else None
    client_id = r.string()
    client_host = r.string()
    rebalance_timeout = r.int32() if version >= 1 else None
    session_timeout = r.int32()
    subscription = r.bytes_()
    assignment = r.bytes_()
    r.skip_tagged_fields()
    decoded_subscription = decoded_assignment = None
    subscription_error = assignment_error = None
    # Empty bytes are normal (a member mid-rebalance has no assignment yet): nothing to decode.
    if consumer and subscription:
        try:
            decoded_subscription = decode_subscription(subscription)
        except WireError as exc:
            subscription_error = str(exc)
    if consumer and assignment:
        try:
            decoded_assignment = decode_assignment(assignment)
        except WireError as exc:
            assignment_error = str(exc)
    return MemberMetadata(
        member_id=member_id,
        group_instance_id=group_instance_id,
        client_id=client_id,
        client_host=client_host,
        rebalance_timeout=rebalance_timeout,
        session_timeout=session_timeout,
        subscription=subscription,
        assignment=assignment,
        consumer_subscription=decoded_subscription,
        consumer_assignment=decoded_assignment,
        subscription_error=subscription_error,
        assignment_error=assignment_error,
    )


def _protocol_version(r: Reader) -> int:
    start = r.pos
    version = r.int16()
    if version < 0:
        raise r.error(f"negative consumer protocol version {version}", start)
    return version


def _topic_partitions(r: Reader) -> tuple[TopicPartitions, ...]:
    return tuple(TopicPartitions(r.string(), r.int32_array()) for _ in range(r.array_length()))


def decode_subscription(data: bytes) -> ConsumerSubscription:
    """ConsumerProtocolSubscription: topics, userData, ownedPartitions v1+, generationId v2+, rackId v3+."""
    r = Reader(data, part="subscription")
    version = _protocol_version(r)
    read_as = min(version, _CONSUMER_PROTOCOL_MAX_VERSION)
    topics = r.string_array()
    user_data = r.nullable_bytes()
    owned = _topic_partitions(r) if read_as >= 1 else ()
    generation_id = r.int32() if read_as >= 2 else None
    rack_id = r.nullable_string() if read_as >= 3 else None
    return ConsumerSubscription(version, topics, user_data, owned, generation_id, rack_id)


def decode_assignment(data: bytes) -> ConsumerAssignment:
    """ConsumerProtocolAssignment: assignedPartitions then userData (same layout v0–v3)."""
    r = Reader(data, part="assignment")
    version = _protocol_version(r)
    partitions = _topic_partitions(r)
    user_data = r.nullable_bytes()
    return ConsumerAssignment(version, partitions, user_data)
