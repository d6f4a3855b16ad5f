"""``DetectionState.recreated``: set when a topic is seen deleted or re-created, kept small."""

from alerts.recreation import MAX_UNSEEN, pruned
from alerts.state import (
    CommitKey,
    CommitPoint,
    DetectionState,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    Recreation,
)
from tests.alerts.builders import T, commit, inputs, metadata, offsets, run

ONE = {(T, 0): (1, 0, (1,))}
P0 = PartitionKey(T, 0)


def _recreated() -> DetectionState:
    """t (id A) 0-50 with g at 50; then t under id B, empty, observed at 20."""
    s = run(
        DetectionState(),
        inputs(
            metadata=metadata(10, ONE, topic_id="A"),
            offsets=offsets(10, {(T, 0): (0, 50)}),
            commit_events=(commit(50, 10, 1),),
            tail_live=True,
        ),
        10,
    )
    return run(s, inputs(metadata=metadata(20, ONE, topic_id="B"), offsets=offsets(20, {(T, 0): (0, 0)})), 20)


def test_advance_topic_id_changed_recreated_with_both_ids_and_first_seen() -> None:
    assert _recreated().recreated == {P0: Recreation("A", "B", 20, 20)}


def test_advance_recreated_group_commits_back_inside_new_log_dropped() -> None:
    s = _recreated()
    new = metadata(20, ONE, topic_id="B")
    s = run(s, inputs(metadata=new, offsets=offsets(30, {(T, 0): (0, 0)})), 30)
    assert P0 in s.recreated  # g's 50 still beyond the new end: a stale commit may be judged
    s = run(
        s, inputs(metadata=new, offsets=offsets(40, {(T, 0): (0, 10)}), commit_events=(commit(5, 39, 2),)), 40
    )
    s = run(s, inputs(commit_events=(commit(5, 41, 3),), tail_live=True), 41)
    assert s.recreated == {}


def test_advance_recreated_no_commit_on_new_topic_kept() -> None:
    s = _recreated()
    s = run(s, inputs(commit_events=(commit(None, 21, 2),), tail_live=True), 21)  # the tombstone
    s = run(s, inputs(metadata=metadata(30, ONE, topic_id="B"), offsets=offsets(30, {(T, 0): (0, 0)})), 30)
    assert s.recreated == {P0: Recreation("A", "B", 20, 20)}  # the stale commit may still come


def test_advance_recreated_topic_deleted_again_unseen_entry_takes_its_place() -> None:
    gone = metadata(30, {("other", 0): (1, 0, (1,))}, topic_id="X")
    s = run(_recreated(), inputs(metadata=gone), 30)
    assert s.recreated == {P0: Recreation("B", None, 30, None)}


def test_pruned_unseen_older_than_retention_dropped() -> None:
    entries = {P0: Recreation("A", None, 100), PartitionKey(T, 1): Recreation("A", None, 200)}
    assert pruned(entries, inputs(), {}, PartitionsSeen(), None, 250, 100) == {
        PartitionKey(T, 1): Recreation("A", None, 200)
    }


def test_pruned_unseen_beyond_cap_oldest_dropped() -> None:
    entries = {PartitionKey(T, p): Recreation("A", None, float(p)) for p in range(MAX_UNSEEN + 2)}
    kept = pruned(entries, inputs(), {}, PartitionsSeen(), None, MAX_UNSEEN + 2, 10**9)
    assert len(kept) == MAX_UNSEEN and PartitionKey(T, 0) not in kept and PartitionKey(T, 2) in kept


def test_pruned_seen_commit_beyond_range_from_before_seen_kept() -> None:
    """A range observed before the new topic was seen says nothing about it: the entry stays."""
    entries = {P0: Recreation("A", "B", 20, 20)}
    parts = {P0: PartitionPoint(0, 100, topic_id="A")}
    commits = {CommitKey("g", T, 0): CommitPoint(50, None, 10, 10, "tail")}
    assert pruned(entries, inputs(), parts, PartitionsSeen(15), commits, 30, 100) == entries
    # the same range observed since the new topic was seen: every group inside, the entry goes
    assert pruned(entries, inputs(), parts, PartitionsSeen(25), commits, 30, 100) == {}
