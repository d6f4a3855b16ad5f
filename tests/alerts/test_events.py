from alerts.events import to_event
from alerts.model import CommitEvent, GroupEvent
from collectors.codec.consumer_group_records import ConsumerGroupMetadata
from collectors.codec.records import (
    GroupMetadata,
    GroupTombstone,
    OffsetCommit,
    OffsetCommitTombstone,
    UnknownRecord,
)


def test_to_event_offset_commit_keeps_offset_epoch_timestamps_and_source() -> None:
    rec = OffsetCommit(1, "g", "t", 3, 3, 42, 7, "", 1_000, 9_000, None)
    assert to_event("c", 5, 99, 1_001, rec) == CommitEvent(
        "c", "g", "t", 3, 42, 7, 1_000, 5, 99, expire_timestamp=9_000
    )


def test_to_event_offset_tombstone_offset_none_record_timestamp() -> None:
    ev = to_event("c", 5, 100, 2_000, OffsetCommitTombstone(1, "g", "t", 3))
    assert isinstance(ev, CommitEvent) and (ev.offset, ev.commit_timestamp) == (None, 2_000)


def test_to_event_classic_group_without_members_empty_since_state_timestamp() -> None:
    rec = GroupMetadata("g", 3, "consumer", 8, None, None, 1_500, ())
    assert to_event("c", 5, 1, 2_000, rec) == GroupEvent("c", "g", "Empty", 8, "consumer", 1_500, 5, 1)


def test_to_event_group_tombstone_dead_and_member_tombstone_ignored() -> None:
    ev = to_event("c", 5, 1, 2_000, GroupTombstone(2, "g"))
    assert isinstance(ev, GroupEvent) and ev.state == "Dead"
    assert to_event("c", 5, 2, 2_000, GroupTombstone(5, "g", member_id="m")) is None


def test_to_event_kip848_group_epoch_state_unknown() -> None:
    ev = to_event("c", 5, 1, 2_000, ConsumerGroupMetadata("g", 0, 12, 0))
    assert isinstance(ev, GroupEvent) and (ev.state, ev.generation) == (None, 12)


def test_to_event_unknown_record_none() -> None:
    assert to_event("c", 0, 0, 0, UnknownRecord(99, 0, b"", None)) is None
