"""Our decoded records rendered the way Kafka 4.1's ``CoordinatorRecordJsonConverters`` print them.

Every field name is mapped explicitly from our dataclass to Kafka's JSON name (the schemas' field
names in camelCase, from ``common/message/*Key.json``/``*Value.json`` in kafka-group-coordinator), with
Kafka's version rules: a field appears only in the versions it exists in, a tagged field only when it
differs from its default (except nullable structs, which are always printed). Comparing whole dicts
means a field Kafka prints that we do not decode (or decode differently) fails the comparison.
"""

from __future__ import annotations

import base64
from typing import Any

from collectors.codec import (
    ConsumerAssignment,
    ConsumerGroupCurrentMemberAssignment,
    ConsumerGroupMemberMetadata,
    ConsumerGroupMetadata,
    ConsumerGroupPartitionMetadata,
    ConsumerGroupRegularExpression,
    ConsumerGroupTargetAssignmentMember,
    ConsumerGroupTargetAssignmentMetadata,
    ConsumerSubscription,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
    ShareGroupRecord,
    StreamsGroupRecord,
    TopicIdPartitions,
    TopicPartitions,
    UnknownRecord,
)
from collectors.codec.record_types import (
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    GROUP_METADATA,
)

Json = dict[str, Any]
_MEMBER_KEYED = frozenset(
    {
        CONSUMER_GROUP_MEMBER_METADATA,
        CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
        CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    }
)


def b64(data: bytes | None) -> str | None:
    """Jackson's rendering of ``bytes`` fields."""
    return None if data is None else base64.b64encode(data).decode()


def key_json(record: Record) -> Json:
    """``{"type": ..., "data": {...}}`` of the key."""
    if isinstance(record, ShareGroupRecord | StreamsGroupRecord | UnknownRecord):
        raise AssertionError(f"no Kafka JSON rendering for {record!r}")
    kind = record.record_type
    if isinstance(record, OffsetCommit | OffsetCommitTombstone):
        data: Json = {"group": record.group, "topic": record.topic, "partition": record.partition}
    elif kind == GROUP_METADATA:
        data = {"group": record.group}
    elif kind == CONSUMER_GROUP_REGULAR_EXPRESSION:
        data = {"groupId": record.group, "regularExpression": getattr(record, "regular_expression", None)}
    elif kind in _MEMBER_KEYED:
        data = {"groupId": record.group, "memberId": getattr(record, "member_id", None)}
    else:
        data = {"groupId": record.group}
    return {"type": kind, "data": data}


def value_json(record: Record, *, decode_consumer_protocol: bool) -> Json | None:
    """``{"version": ..., "data": {...}}`` of the value, None for a tombstone.

    ``decode_consumer_protocol``: DumpLogSegments prints a ``consumer`` group's member subscription and
    assignment decoded; the console formatters print them as base64 bytes.
    """
    if isinstance(record, OffsetCommitTombstone | GroupTombstone):
        return None
    if isinstance(record, OffsetCommit):
        data = _offset_commit(record)
    elif isinstance(record, GroupMetadata):
        data = _group_metadata(record, decode_consumer_protocol)
    elif isinstance(record, ConsumerGroupMetadata):
        data = {"epoch": record.epoch}
        if record.metadata_hash != 0:
            data["metadataHash"] = record.metadata_hash
    elif isinstance(record, ConsumerGroupPartitionMetadata):
        data = {
            "topics": [
                {
                    "topicId": t.topic_id,
                    "topicName": t.topic_name,
                    "numPartitions": t.num_partitions,
                    "partitionMetadata": [
                        {"partition": p.partition, "racks": list(p.racks)} for p in t.partition_metadata
                    ],
                }
                for t in record.topics
            ]
        }
    elif isinstance(record, ConsumerGroupMemberMetadata):
        data = _member_metadata(record)
    elif isinstance(record, ConsumerGroupTargetAssignmentMetadata):
        data = {"assignmentEpoch": record.assignment_epoch}
    elif isinstance(record, ConsumerGroupTargetAssignmentMember):
        data = {"topicPartitions": _topic_ids(record.partitions)}
    elif isinstance(record, ConsumerGroupCurrentMemberAssignment):
        data = {
            "memberEpoch": record.member_epoch,
            "previousMemberEpoch": record.previous_member_epoch,
            "state": record.state,
            "assignedPartitions": _topic_ids(record.assigned_partitions),
            "partitionsPendingRevocation": _topic_ids(record.partitions_pending_revocation),
        }
    elif isinstance(record, ConsumerGroupRegularExpression):
        data = {"topics": list(record.topics), "version": record.regex_version, "timestamp": record.timestamp}
    else:
        raise AssertionError(f"no Kafka JSON rendering for {record!r}")
    return {"version": record.version, "data": data}


def _offset_commit(r: OffsetCommit) -> Json:
    data: Json = {"offset": r.offset}
    if r.version >= 3:
        data["leaderEpoch"] = -1 if r.leader_epoch is None else r.leader_epoch
    data["metadata"] = r.metadata
    data["commitTimestamp"] = r.commit_timestamp
    if r.version == 1:
        data["expireTimestamp"] = r.expire_timestamp
    if r.version >= 4 and r.topic_id is not None:  # tagged, printed only when set
        data["topicId"] = r.topic_id
    return data


def _group_metadata(r: GroupMetadata, decode_consumer_protocol: bool) -> Json:
    data: Json = {
        "protocolType": r.protocol_type,
        "generation": r.generation,
        "protocol": r.protocol,
        "leader": r.leader,
    }
    if r.version >= 2:
        data["currentStateTimestamp"] = -1 if r.current_state_timestamp is None else r.current_state_timestamp
    decoded = decode_consumer_protocol and r.protocol_type == "consumer"
    data["members"] = [_member(m, r.version, decoded) for m in r.members]
    return data


def _member(m: MemberMetadata, version: int, decoded: bool) -> Json:
    data: Json = {"memberId": m.member_id}
    if version >= 3:
        data["groupInstanceId"] = m.group_instance_id
    data["clientId"] = m.client_id
    data["clientHost"] = m.client_host
    if version >= 1:
        data["rebalanceTimeout"] = m.rebalance_timeout
    data["sessionTimeout"] = m.session_timeout
    sub, assignment = m.consumer_subscription, m.consumer_assignment
    data["subscription"] = _subscription(sub) if decoded and sub is not None else b64(m.subscription)
    data["assignment"] = _assignment(assignment) if decoded and assignment is not None else b64(m.assignment)
    return data


def _subscription(s: ConsumerSubscription) -> Json:
    data: Json = {"topics": list(s.topics), "userData": b64(s.user_data)}
    if s.version >= 1:
        data["ownedPartitions"] = _topic_names(s.owned_partitions)
    if s.version >= 2:
        data["generationId"] = s.generation_id
    if s.version >= 3:
        data["rackId"] = s.rack_id
    return data


def _assignment(a: ConsumerAssignment) -> Json:
    return {"assignedPartitions": _topic_names(a.partitions), "userData": b64(a.user_data)}


def _member_metadata(r: ConsumerGroupMemberMetadata) -> Json:
    classic = r.classic_member_metadata
    return {
        "instanceId": r.instance_id,
        "rackId": r.rack_id,
        "clientId": r.client_id,
        "clientHost": r.client_host,
        "subscribedTopicNames": list(r.subscribed_topic_names),
        "subscribedTopicRegex": r.subscribed_topic_regex,
        "rebalanceTimeoutMs": r.rebalance_timeout_ms,
        "serverAssignor": r.server_assignor,
        # A nullable struct in a tag: Kafka's converter prints it even when null.
        "classicMemberMetadata": None
        if classic is None
        else {
            "sessionTimeoutMs": classic.session_timeout_ms,
            "supportedProtocols": [
                {"name": p.name, "metadata": b64(p.metadata)} for p in classic.supported_protocols
            ],
        },
    }


def _topic_names(items: tuple[TopicPartitions, ...]) -> list[Json]:
    return [{"topic": t.topic, "partitions": list(t.partitions)} for t in items]


def _topic_ids(items: tuple[TopicIdPartitions, ...]) -> list[Json]:
    return [{"topicId": t.topic_id, "partitions": list(t.partitions)} for t in items]
