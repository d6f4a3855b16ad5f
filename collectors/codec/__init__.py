"""Pure codec of ``__consumer_offsets`` records (no I/O).

:func:`decode` turns one record's key and value bytes into a frozen record: offset commits (types
0, 1), classic groups (2), KIP-848 consumer groups (3–8, 16), share (9–15) and streams (17–24) groups
with raw values, tombstones for null values, and :class:`UnknownRecord` for types or versions it does
not know. Truncated or corrupt bytes raise :class:`collectors.errors.DecodeError`; nothing else escapes.
"""

from __future__ import annotations

import struct

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
from collectors.codec.consumer_groups import VALUE_DECODERS
from collectors.codec.groups import decode_assignment, decode_group_metadata, decode_subscription
from collectors.codec.offsets import decode_commit, decode_key, decode_value
from collectors.codec.partition import java_string_hash, partition_for
from collectors.codec.record_types import (
    GROUP_METADATA,
    LEGACY_OFFSET_COMMIT,
    OFFSET_COMMIT,
    SHARE_GROUP_TYPES,
    STREAMS_GROUP_TYPES,
)
from collectors.codec.records import (
    ConsumerAssignment,
    ConsumerSubscription,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
    ShareGroupRecord,
    StreamsGroupRecord,
    TopicPartitions,
    UnknownRecord,
)
from collectors.codec.wire import Reader, WireError
from collectors.errors import DecodeError

__all__ = [
    "ClassicMemberMetadata",
    "ClassicProtocol",
    "ConsumerAssignment",
    "ConsumerGroupCurrentMemberAssignment",
    "ConsumerGroupMemberMetadata",
    "ConsumerGroupMetadata",
    "ConsumerGroupPartitionMetadata",
    "ConsumerGroupRecord",
    "ConsumerGroupRegularExpression",
    "ConsumerGroupTargetAssignmentMember",
    "ConsumerGroupTargetAssignmentMetadata",
    "ConsumerSubscription",
    "GroupMetadata",
    "GroupTombstone",
    "MemberMetadata",
    "OffsetCommit",
    "OffsetCommitTombstone",
    "PartitionRacks",
    "Record",
    "ShareGroupRecord",
    "StreamsGroupRecord",
    "TopicIdPartitions",
    "TopicMetadata",
    "TopicPartitions",
    "UnknownRecord",
    "decode",
    "decode_assignment",
    "decode_subscription",
    "java_string_hash",
    "partition_for",
]

_COMMIT_PREFIX = b"\x00\x01"
# Keys whose second string is a member id (types 5, 7, 8, 10, 13, 14, 19, 21, 22) or a regex (16).
_MEMBER_KEYED = frozenset({5, 7, 8, 10, 13, 14, 19, 21, 22})
_REGEX_KEYED = frozenset({16})
_GROUP_KEYED = frozenset(VALUE_DECODERS) | SHARE_GROUP_TYPES | STREAMS_GROUP_TYPES | {GROUP_METADATA}
# What corrupt input can make the stdlib raise; translated to DecodeError at this seam.
_CORRUPTION = (WireError, struct.error, IndexError, ValueError, OverflowError, TypeError)


def decode(
    key: bytes, value: bytes | None, *, offset: int | None = None, partition: int | None = None
) -> Record:
    """Decode one ``__consumer_offsets`` record; ``offset``/``partition`` only label errors.

    Raises DecodeError for truncated or corrupt bytes; unknown types and versions are UnknownRecord.
    """
    if key[:2] == _COMMIT_PREFIX and value is not None:
        try:
            fast = decode_commit(key, value)
        except Exception:
            fast = None
        if fast is not None:
            return fast
    try:
        return _decode(bytes(key), None if value is None else bytes(value))
    except _CORRUPTION as exc:
        raise DecodeError(
            f"corrupt __consumer_offsets record: {exc}", offset=offset, partition=partition
        ) from exc


def _decode(key: bytes, value: bytes | None) -> Record:
    k = Reader(key, part="key")
    record_type = k.int16()
    version = None if value is None else Reader(value).int16()

    if record_type in (LEGACY_OFFSET_COMMIT, OFFSET_COMMIT):
        group, topic, part = decode_key(k)
        if version is None or value is None:
            return OffsetCommitTombstone(record_type, group, topic, part)
        if version < 0:
            return UnknownRecord(record_type, version, key, value)
        return decode_value(record_type, group, topic, part, version, value)

    if record_type not in _GROUP_KEYED:
        return UnknownRecord(record_type, version, key, value)
    group = k.string()
    second = k.string() if record_type in _MEMBER_KEYED or record_type in _REGEX_KEYED else None
    if version is None or value is None:
        if record_type in _REGEX_KEYED:
            return GroupTombstone(record_type, group, regular_expression=second)
        return GroupTombstone(record_type, group, member_id=second)
    if record_type == GROUP_METADATA:
        if version < 0:
            return UnknownRecord(record_type, version, key, value)
        return decode_group_metadata(group, version, value)
    if record_type in SHARE_GROUP_TYPES:
        return ShareGroupRecord(record_type, group, second, version, value)
    if record_type in STREAMS_GROUP_TYPES:
        return StreamsGroupRecord(record_type, group, second, version, value)
    known_version, decoder = VALUE_DECODERS[record_type]
    if version != known_version:
        return UnknownRecord(record_type, version, key, value)
    return decoder(group, second, version, Reader(value, 2, flexible=True))
