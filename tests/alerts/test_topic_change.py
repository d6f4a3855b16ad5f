"""alerts.topic_change.topic_changes: the fast answer (no topic can have changed) never hides a change."""

from __future__ import annotations

from alerts.state import CycleInputs, DetectionState, PartitionKey, PartitionPoint, PartitionsSeen
from alerts.topic_change import DELETED, RECREATED, topic_changes
from collectors.model import ClusterMetadata, Failure, PartitionInfo, TopicInfo

C = "c"


def _points(at: float, ids: dict[str, str | None], parts: int = 50) -> dict[PartitionKey, PartitionPoint]:
    return {
        PartitionKey(t, p): PartitionPoint(0, 10, 1, 0, (1,), topic_id)
        for t, topic_id in ids.items()
        for p in range(parts)
    }


def _state(at: float, ids: dict[str, str | None]) -> DetectionState:
    """Every partition of ``ids``' topics, observed at ``at``."""
    return DetectionState(partitions=_points(at, ids), seen=PartitionsSeen(at))


def _meta(at: float, ids: dict[str, str | None], *, failed: bool = False) -> ClusterMetadata:
    topics = tuple(
        TopicInfo(t, False, tuple(PartitionInfo(t, p, 1, 0, (1,), (1,)) for p in range(50)), topic_id)
        for t, topic_id in ids.items()
    )
    failures = (Failure("broker", "1", "KafkaError", "down"),) if failed else ()
    return ClusterMetadata(C, at, None, 1, (), topics, failures)


IDS: dict[str, str | None] = {f"t{i}": f"id-{i}" for i in range(20)}


def test_topic_changes_same_topics_and_ids_none() -> None:
    previous = _state(100.0, IDS)
    assert topic_changes(previous, CycleInputs(C, metadata=_meta(105.0, IDS)), _points(105.0, IDS)) == ()


def test_topic_changes_one_partition_under_new_id_among_many_recreated() -> None:
    previous = _state(100.0, IDS)
    current = _points(105.0, IDS)
    current[PartitionKey("t7", 31)] = PartitionPoint(0, 0, 1, 0, (1,), "id-new")
    (change,) = topic_changes(previous, CycleInputs(C), current)
    assert (change.topic, change.cause, change.old_id, change.new_id) == ("t7", RECREATED, "id-7", "id-new")
    assert len(change.last) == 50 and set(change.last_at.values()) == {100.0}


def test_topic_changes_topic_missing_from_complete_metadata_deleted() -> None:
    previous = _state(100.0, IDS)
    listed = {t: i for t, i in IDS.items() if t != "t13"}
    (change,) = topic_changes(previous, CycleInputs(C, metadata=_meta(105.0, listed)), _points(105.0, listed))
    assert (change.topic, change.cause, change.old_id) == ("t13", DELETED, "id-13")


def test_topic_changes_topic_missing_from_partial_metadata_none() -> None:
    previous = _state(100.0, IDS)
    listed = {t: i for t, i in IDS.items() if t != "t13"}
    inputs = CycleInputs(C, metadata=_meta(105.0, listed, failed=True))
    assert topic_changes(previous, inputs, _points(105.0, listed)) == ()


def test_topic_changes_ids_unknown_on_either_side_none() -> None:
    previous = DetectionState(partitions=_points(100.0, dict.fromkeys(IDS, None)))
    assert topic_changes(previous, CycleInputs(C), _points(105.0, IDS)) == ()
    previous = _state(100.0, IDS)
    assert topic_changes(previous, CycleInputs(C), _points(105.0, dict.fromkeys(IDS, None))) == ()


def test_topic_changes_nothing_observed_none() -> None:
    previous = _state(100.0, IDS)
    assert topic_changes(previous, CycleInputs(C), {}) == ()
