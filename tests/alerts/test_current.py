"""current_partitions: this cycle's log ranges joined with the metadata's leaders, epochs, ISR, topic ids."""

from dataclasses import FrozenInstanceError, fields, replace

import pytest

from alerts.current import current_partitions, observed_at, ranged_partitions, shifted_partitions
from alerts.drafts import PartitionPointDraft
from alerts.state import CycleInputs, DetectionState, PartitionKey, PartitionPoint, Ranged
from collectors.model import (
    Broker,
    ClusterMetadata,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
)

C = "prod"


def _meta(at: float, leader: int = 1, epoch: int = 4) -> ClusterMetadata:
    orders = TopicInfo(
        "orders",
        False,
        (
            PartitionInfo("orders", 0, leader, epoch, (1, 2, 3), (1, 2)),
            PartitionInfo("orders", 1, 2, 7, (1, 2, 3), (2, 3)),
        ),
        "id-orders",
    )
    return ClusterMetadata(C, at, "cid", 1, (Broker(1, "b1", 9092),), (orders,))


def _offsets(at: float, *rows: PartitionOffsets) -> OffsetsObservation:
    return OffsetsObservation(C, at, rows)


def test_ranges_take_leader_epoch_isr_and_topic_id_from_metadata() -> None:
    meta = _meta(90.0)
    offs = _offsets(
        100.0,
        PartitionOffsets("orders", 0, 5, 50, leader=9, leader_epoch=9),  # metadata wins
        PartitionOffsets("orders", 2, 0, 10, leader=3, leader_epoch=2),  # not in the metadata yet
        PartitionOffsets("payments", 0, 0, 7, leader=2, leader_epoch=1),  # topic unknown to it
    )
    inputs = CycleInputs(C, metadata=meta, offsets=offs)
    got = current_partitions(inputs)
    assert got == {
        PartitionKey("orders", 0): PartitionPoint(5, 50, 1, 4, (1, 2), "id-orders"),
        PartitionKey("orders", 2): PartitionPoint(0, 10, 3, 2, None, "id-orders"),
        PartitionKey("payments", 0): PartitionPoint(0, 7, 2, 1, None, None),
        # in the metadata, not in the offsets observation: no range, observed with the metadata
        PartitionKey("orders", 1): PartitionPoint(None, None, 2, 7, (2, 3), "id-orders"),
    }
    ranged = ranged_partitions(inputs)
    assert {k: observed_at(inputs, ranged, k) for k in got} == {
        PartitionKey("orders", 0): 100.0,
        PartitionKey("orders", 2): 100.0,
        PartitionKey("payments", 0): 100.0,
        PartitionKey("orders", 1): 90.0,
    }
    assert list(got)[:3] == [
        PartitionKey("orders", 0),
        PartitionKey("orders", 2),
        PartitionKey("payments", 0),
    ]


def test_without_metadata_the_offsets_own_leaders_and_no_isr() -> None:
    offs = _offsets(100.0, PartitionOffsets("orders", 0, 5, 50, leader=9, leader_epoch=9))
    assert current_partitions(CycleInputs(C, offsets=offs)) == {
        PartitionKey("orders", 0): PartitionPoint(5, 50, 9, 9, None, None)
    }


def test_one_metadata_over_several_cycles_and_a_new_one_replacing_it() -> None:
    meta = _meta(90.0)
    row = PartitionOffsets("orders", 0, 5, 50)
    for at in (100.0, 105.0):  # the metadata stays the latest for its interval
        got = current_partitions(CycleInputs(C, metadata=meta, offsets=_offsets(at, row)))
        assert got[PartitionKey("orders", 0)] == PartitionPoint(5, 50, 1, 4, (1, 2), "id-orders")
    moved = _meta(110.0, leader=3, epoch=5)  # a new observation: a leader change
    got = current_partitions(CycleInputs(C, metadata=moved, offsets=_offsets(115.0, row)))
    assert got[PartitionKey("orders", 0)] == PartitionPoint(5, 50, 3, 5, (1, 2), "id-orders")


def test_ranged_partitions_points_are_frozen_partition_points_like_any_other() -> None:
    """Built as drafts (PartitionPointDraft) then given their class: nothing tells them apart."""
    offs = _offsets(100.0, PartitionOffsets("orders", 0, 5, 50), PartitionOffsets("payments", 0, 0, 7, 2, 1))
    for point, built in zip(
        ranged_partitions(CycleInputs(C, metadata=_meta(90.0), offsets=offs)).values(),
        (PartitionPoint(5, 50, 1, 4, (1, 2), "id-orders"), PartitionPoint(0, 7, 2, 1)),
        strict=True,
    ):
        assert type(point) is PartitionPoint and point == built and hash(point) == hash(built)
        assert repr(point) == repr(built) and replace(point, log_end=1) == replace(built, log_end=1)
        with pytest.raises(FrozenInstanceError):
            point.log_end = 0  # type: ignore[misc]


def test_ranged_partitions_keep_the_last_observation_s_points_where_its_partitions_did_not_move() -> None:
    """An offsets row handed as the very object again (the collector's unchanged partition) keeps its
    point of the last observation folded in; only the others are built."""
    meta = _meta(90.0)
    rows = [
        PartitionOffsets("orders", 0, 5, 50),
        PartitionOffsets("orders", 1, 0, 7),
        PartitionOffsets("orders", 2, 0, 9),
    ]
    first = CycleInputs(C, metadata=meta, offsets=_offsets(100.0, *rows))
    points = ranged_partitions(first)
    last = Ranged(first.offsets.partitions, meta, points, None)  # type: ignore[union-attr]
    # nothing moved: the very mapping
    assert ranged_partitions(CycleInputs(C, metadata=meta, offsets=_offsets(105.0, *rows)), last) is points
    # one moved: the others' very points, the moved one built of its new row
    moved = [rows[0], PartitionOffsets("orders", 1, 0, 8), rows[2]]
    again = CycleInputs(C, metadata=meta, offsets=_offsets(110.0, *moved))
    got = ranged_partitions(again, last)
    assert got == ranged_partitions(again) and list(got) == list(points)
    assert [got[k] is points[k] for k in points] == [True, False, True]
    assert got[PartitionKey("orders", 1)].log_end == 8
    # another partition at a moved one's place, or other metadata: built afresh, as without ``last``
    swapped = CycleInputs(
        C, metadata=meta, offsets=_offsets(115.0, rows[0], PartitionOffsets("orders", 3, 0, 1), rows[2])
    )
    assert ranged_partitions(swapped, last) == ranged_partitions(swapped)
    twice = CycleInputs(
        C, metadata=meta, offsets=_offsets(115.0, rows[0], rows[0], PartitionOffsets("orders", 0, 5, 51))
    )
    assert ranged_partitions(twice, last) == ranged_partitions(twice)  # one partition in two places
    assert list(ranged_partitions(swapped, last)) == list(ranged_partitions(swapped))
    other = CycleInputs(C, metadata=_meta(111.0, leader=3, epoch=5), offsets=_offsets(120.0, *rows))
    got = ranged_partitions(other, last)
    assert got == ranged_partitions(other) and got[PartitionKey("orders", 0)].leader == 3


def test_partition_point_draft_has_the_points_fields() -> None:
    def described(cls: type) -> list[tuple[str, object, object]]:
        return [(f.name, f.type, f.default) for f in fields(cls)]

    assert described(PartitionPointDraft) == described(PartitionPoint)
    assert PartitionPointDraft.__slots__ == PartitionPoint.__slots__


def test_shifted_partitions_leader_moved_or_log_end_back_only() -> None:
    def point(end: int | None, leader: int | None) -> PartitionPoint:
        return PartitionPoint(0, end, leader, 0, (1, 2), "id")

    keys = [PartitionKey("t", p) for p in range(7)]
    previous = DetectionState(
        partitions={
            keys[0]: point(50, 1),  # unchanged
            keys[1]: point(50, 1),  # grew
            keys[2]: point(50, 1),  # went back
            keys[3]: point(50, 1),  # new leader
            keys[4]: point(50, 1),  # went offline
            keys[5]: point(None, 1),  # no range before
        }
    )
    current = {
        keys[0]: point(50, 1),
        keys[1]: point(60, 1),
        keys[2]: point(40, 1),
        keys[3]: point(50, 2),
        keys[4]: point(50, None),
        keys[5]: point(10, 1),
        keys[6]: point(0, 1),  # new partition
    }
    assert shifted_partitions(previous, current) == {keys[2], keys[3], keys[4]}
