from alerts.events import to_event
from alerts.model import CommitEvent, GroupEvent
from collectors.codec.consumer_group_records import ConsumerGroupMetadata
from collectors.codec.records import (
    ConsumerAssignment,
    ConsumerSubscription,
    GroupMetadata,
    GroupTombstone,
    MemberMetadata,
    OffsetCommit,
    OffsetCommitTombstone,
    TopicPartitions,
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
    assert to_event("c", 5, 1, 2_000, rec) == GroupEvent(
        "c", "g", "Empty", 8, "consumer", 1_500, 5, 1, (), ()
    )


def test_to_event_group_tombstone_dead_and_member_tombstone_ignored() -> None:
    ev = to_event("c", 5, 1, 2_000, GroupTombstone(2, "g"))
    assert isinstance(ev, GroupEvent) and ev.state == "Dead"
    assert to_event("c", 5, 2, 2_000, GroupTombstone(5, "g", member_id="m")) is None


def test_to_event_kip848_group_epoch_state_unknown() -> None:
    ev = to_event("c", 5, 1, 2_000, ConsumerGroupMetadata("g", 0, 12, 0))
    assert isinstance(ev, GroupEvent) and (ev.state, ev.generation) == (None, 12)


def test_to_event_unknown_record_none() -> None:
    assert to_event("c", 0, 0, 0, UnknownRecord(99, 0, b"", None)) is None


def _member(topics: tuple[str, ...] | None, assigned: tuple[str, ...] = ()) -> MemberMetadata:
    sub = ConsumerSubscription(1, topics, None, (), None, None) if topics is not None else None
    assignment = ConsumerAssignment(1, tuple(TopicPartitions(t, (0,)) for t in assigned), None)
    return MemberMetadata("m", None, "c", "h", 1, 1, b"x", b"y", sub, assignment)


def test_to_event_classic_group_members_subscribed_and_assigned_topics() -> None:
    rec = GroupMetadata(
        "g", 3, "consumer", 8, "range", "m", 1_500, (_member(("b",), ("a",)), _member(("c",)))
    )
    ev = to_event("c", 5, 1, 2_000, rec)
    assert isinstance(ev, GroupEvent) and (ev.state, ev.topics) == ("Stable", ("a", "b", "c"))


def test_to_event_classic_group_undecodable_subscription_topics_unknown() -> None:
    rec = GroupMetadata("g", 3, "consumer", 8, "range", "m", 1_500, (_member(("b",)), _member(None)))
    ev = to_event("c", 5, 1, 2_000, rec)
    assert isinstance(ev, GroupEvent) and ev.topics is None


def test_to_event_empty_and_dead_groups_no_topics() -> None:
    empty = to_event("c", 5, 1, 2_000, GroupMetadata("g", 3, "consumer", 8, None, None, 1_500, ()))
    dead = to_event("c", 5, 2, 2_000, GroupTombstone(2, "g"))
    assert isinstance(empty, GroupEvent) and isinstance(dead, GroupEvent)
    assert empty.topics == dead.topics == ()
