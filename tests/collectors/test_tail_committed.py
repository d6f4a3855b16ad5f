"""TailCommitted over literal tail events: commits set, tombstones remove, group records say which groups
exist, and a poll seeds and corrects the view except where the tail changed a key after a point."""

from __future__ import annotations

from collectors.codec.records import GroupMetadata, GroupTombstone, OffsetCommit, OffsetCommitTombstone
from collectors.model import CommittedObservation, CommittedOffset, Failure
from collectors.tail_committed import Difference, TailCommitted
from collectors.tail_model import TailEvent

C = "test"


def commit(
    group: str, topic: str, partition: int, offset: int, epoch: int | None = 3, meta: str = ""
) -> TailEvent:
    record = OffsetCommit(1, group, topic, partition, 3, offset, epoch, meta, 1_000, None, None)
    return TailEvent(C, 0, 0, 1_000, record)


def tombstone(group: str, topic: str, partition: int) -> TailEvent:
    return TailEvent(C, 0, 0, 2_000, OffsetCommitTombstone(1, group, topic, partition))


def group_record(group: str) -> TailEvent:
    return TailEvent(C, 0, 0, 1_000, GroupMetadata(group, 3, "consumer", 1, "range", None, None, ()))


def group_tombstone(group: str, member: str | None = None) -> TailEvent:
    return TailEvent(C, 0, 0, 3_000, GroupTombstone(2, group, member_id=member))


def co(group: str, topic: str, partition: int, offset: int, epoch: int | None = 3) -> CommittedOffset:
    return CommittedOffset(group, topic, partition, offset, epoch, "")


def poll(
    offsets: list[CommittedOffset], groups: tuple[str, ...], failures: tuple[Failure, ...] = ()
) -> CommittedObservation:
    return CommittedObservation(C, 1.0, tuple(offsets), groups, failures)


def test_tail_committed_commits_sorted_as_a_poll_lists_them() -> None:
    view = TailCommitted(C)
    view.apply(
        [commit("b", "t", 1, 5), commit("a", "t", 0, 7), commit("b", "s", 0, 2), commit("a", "t", 0, 8)]
    )

    obs = view.observation(9.0)

    assert (obs.cluster, obs.observed_at, obs.groups, obs.failures) == (C, 9.0, ("a", "b"), ())
    assert obs.offsets == (co("a", "t", 0, 8), co("b", "s", 0, 2), co("b", "t", 1, 5))


def test_tail_committed_tombstone_removes_offset_and_group_without_record() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 7), commit("a", "t", 1, 7), commit("b", "t", 0, 1)])
    view.apply([tombstone("a", "t", 1), tombstone("b", "t", 0), tombstone("c", "t", 0)])

    obs = view.observation(1.0)

    assert obs.offsets == (co("a", "t", 0, 7),)
    assert obs.groups == ("a",)  # b existed through its offsets only


def test_tail_committed_group_records_keep_group_listed_until_its_tombstone() -> None:
    view = TailCommitted(C)
    view.apply([group_record("g"), commit("g", "t", 0, 4), tombstone("g", "t", 0)])
    assert view.observation(1.0).groups == ("g",)  # an Empty group without offsets is still listed

    view.apply([group_tombstone("g", member="m-1")])  # one member's record: the group stays
    assert view.observation(2.0).groups == ("g",)
    view.apply([group_tombstone("g")])
    assert view.observation(3.0) == CommittedObservation(C, 3.0, (), (), from_tail=True, under_tail=True)


def test_tail_committed_unchanged_recommit_same_objects_no_rebuild() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 7), commit("b", "t", 0, 1)])
    first = view.observation(1.0)

    view.apply([commit("a", "t", 0, 7), commit("b", "t", 0, 1)])
    second = view.observation(2.0)
    view.apply([commit("b", "t", 0, 2)])
    third = view.observation(3.0)

    assert second.offsets is first.offsets  # nothing changed: the same tuple
    assert third.offsets[0] is first.offsets[0]  # a's offset untouched: the same object
    assert third.offsets[1] == co("b", "t", 0, 2)


def test_tail_committed_keys_one_set_while_no_key_comes_or_goes() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 7), commit("b", "t", 0, 1)])
    first = view.observation(1.0)
    view.apply([commit("a", "t", 0, 8)])  # a move: another tuple, the same keys
    moved = view.observation(2.0)
    view.apply([commit("b", "t", 1, 4)])  # a key came
    came = view.observation(3.0)
    view.apply([tombstone("a", "t", 0)])  # a key went
    went = view.observation(4.0)
    view.apply([commit("b", "t", 1, -1)])  # as a poll reports no offset: gone too
    none = view.observation(5.0)

    assert first.keys == {("a", "t", 0), ("b", "t", 0)}
    assert moved.offsets is not first.offsets and moved.keys is first.keys
    assert came.keys == {("a", "t", 0), ("b", "t", 0), ("b", "t", 1)}
    assert went.keys == {("b", "t", 0), ("b", "t", 1)} and none.keys == {("b", "t", 0)}
    for obs in (first, moved, came, went, none):
        assert obs.keys == {(o.group, o.topic, o.partition) for o in obs.offsets}
    # not kept with hidden topics (the offsets listed are not all those held)
    assert view.observation(6.0, frozenset({"t"})).keys is None


def test_tail_committed_negative_offset_and_epoch_as_a_poll_reports_them() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 7, epoch=-1), commit("a", "t", 1, 3)])
    view.apply([commit("a", "t", 1, -1)])  # OffsetFetch answers -1: no offset

    assert view.observation(1.0).offsets == (co("a", "t", 0, 7, None),)


def test_tail_committed_hidden_topics_left_out_with_their_failures() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "secret", 0, 7), commit("a", "t", 0, 1)])
    hidden = (Failure("topic", "secret", "KafkaAuthError", "x"),)

    obs = view.observation(1.0, frozenset({"secret"}), hidden)

    assert (obs.offsets, obs.failures, obs.unseen_topics()) == ((co("a", "t", 0, 1),), hidden, {"secret"})


def test_tail_committed_apply_poll_seeds_empty_view() -> None:
    view = TailCommitted(C)

    corrections = view.apply_poll(poll([co("a", "t", 0, 5), co("b", "t", 0, 6)], ("a", "b", "e")), since=0)

    assert [d.kind for d in corrections] == ["missed_commit", "missed_commit"]
    obs = view.observation(2.0)
    assert (obs.offsets, obs.groups) == ((co("a", "t", 0, 5), co("b", "t", 0, 6)), ("a", "b", "e"))


def test_tail_committed_apply_poll_corrects_each_kind_of_difference() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 5), commit("a", "t", 1, 9), commit("a", "t", 2, 1)])

    corrections = view.apply_poll(
        poll([co("a", "t", 0, 5), co("a", "t", 2, 4), co("a", "t", 3, 8)], ("a",)), 1
    )

    assert sorted((d.key, d.kind) for d in corrections) == [
        (("a", "t", 1), "missed_tombstone"),
        (("a", "t", 2), "differs"),
        (("a", "t", 3), "missed_commit"),
    ]
    assert view.observation(2.0).offsets == (co("a", "t", 0, 5), co("a", "t", 2, 4), co("a", "t", 3, 8))


def test_tail_committed_apply_poll_keys_changed_after_since_left_to_the_tail() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 5)])  # batch 1
    since = view.seq
    view.apply([commit("a", "t", 0, 6), commit("a", "t", 1, 2)])  # batch 2: after the point
    view.apply([tombstone("a", "t", 2)])

    corrections = view.apply_poll(poll([co("a", "t", 0, 5), co("a", "t", 2, 3)], ("a",)), since)

    assert corrections == []  # every key the poll disagrees on was told by the tail since
    assert view.observation(1.0).offsets == (co("a", "t", 0, 6), co("a", "t", 1, 2))


def test_tail_committed_apply_poll_unfetched_group_and_unseen_topic_untouched() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 5), commit("a", "secret", 0, 1), commit("f", "t", 0, 9)])
    hidden = (Failure("topic", "secret", "KafkaAuthError", "x"),)

    # "f" failed (not in groups), "secret" is hidden: neither is taken for deleted
    corrections = view.apply_poll(poll([co("a", "t", 0, 5)], ("a",), hidden), view.seq)

    assert corrections == []
    assert len(view.observation(1.0).offsets) == 3


def test_tail_committed_confirmed_drops_keys_the_tail_changed_since() -> None:
    view = TailCommitted(C)
    view.apply([commit("a", "t", 0, 5), commit("a", "t", 1, 5)])
    since = view.seq
    corrections = view.apply_poll(poll([co("a", "t", 0, 6), co("a", "t", 1, 7)], ("a",)), since)
    view.apply([commit("a", "t", 1, 7)])  # the commit the poll saw, delivered after it: not missed

    assert view.confirmed(corrections, since) == [
        Difference(("a", "t", 0), co("a", "t", 0, 5), co("a", "t", 0, 6))
    ]
    view.forget_before(view.seq)
    assert not view.changed_since(("a", "t", 1), since)
