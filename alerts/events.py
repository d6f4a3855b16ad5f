"""Detector inputs from decoded ``__consumer_offsets`` records (the live tail's output), located by the
``__consumer_offsets`` partition and offset they were read from and the record timestamp (ms)."""

from __future__ import annotations

from alerts.model import CommitEvent, GroupEvent
from collectors.codec.consumer_group_records import ConsumerGroupMetadata
from collectors.codec.record_types import CONSUMER_GROUP_METADATA, GROUP_METADATA
from collectors.codec.records import (
    GroupMetadata,
    GroupTombstone,
    OffsetCommit,
    OffsetCommitTombstone,
    Record,
)

GROUP_METADATA_TYPES = (GROUP_METADATA, CONSUMER_GROUP_METADATA)


def to_event(
    cluster: str, source_partition: int, source_offset: int, timestamp: int, record: Record
) -> CommitEvent | GroupEvent | None:
    """The detector event for ``record``, or None for records detection does not use."""
    if isinstance(record, OffsetCommit):
        return CommitEvent(
            cluster,
            record.group,
            record.topic,
            record.partition,
            record.offset,
            record.leader_epoch,
            record.commit_timestamp,
            source_partition,
            source_offset,
            expire_timestamp=record.expire_timestamp,
        )
    if isinstance(record, OffsetCommitTombstone):
        return CommitEvent(
            cluster,
            record.group,
            record.topic,
            record.partition,
            None,
            None,
            timestamp,
            source_partition,
            source_offset,
        )
    if isinstance(record, GroupMetadata):
        return GroupEvent(
            cluster,
            record.group,
            "Stable" if record.members else "Empty",
            record.generation,
            record.protocol_type,
            record.current_state_timestamp if record.current_state_timestamp is not None else timestamp,
            source_partition,
            source_offset,
            tuple(m.member_id for m in record.members),
            _subscribed_topics(record),
        )
    if isinstance(record, ConsumerGroupMetadata):
        return GroupEvent(
            cluster, record.group, None, record.epoch, "consumer", timestamp, source_partition, source_offset
        )
    if isinstance(record, GroupTombstone) and record.record_type in GROUP_METADATA_TYPES:
        return GroupEvent(
            cluster, record.group, "Dead", None, None, timestamp, source_partition, source_offset, (), ()
        )
    return None


def _subscribed_topics(record: GroupMetadata) -> tuple[str, ...] | None:
    """Topics the members subscribe to or are assigned; None unless every member's subscription decoded
    (another protocol type, or bytes a non-Java client wrote in its own format)."""
    topics: set[str] = set()
    for m in record.members:
        if m.consumer_subscription is None:
            return None
        topics.update(m.consumer_subscription.topics)
        if m.consumer_assignment is not None:
            topics.update(tp.topic for tp in m.consumer_assignment.partitions)
    return tuple(sorted(topics))
