"""Rows folded to topic and group granularity: sums of lag and committed offsets, max of lag seconds."""

from __future__ import annotations

from collectors.model import PartitionOffsets
from service.metrics.aggregate import GroupTotals, LogTotals, group_totals, topic_log_totals
from service.metrics.view import GroupPartition


def _row(
    group: str, topic: str, partition: int, committed: int, lag: int | None, seconds: float | None
) -> GroupPartition:
    return GroupPartition(group, topic, partition, committed, lag, seconds)


ROWS = [
    _row("g1", "a", 0, 100, 10, 40.0),
    _row("g1", "a", 1, 200, 30, 15.0),
    _row("g1", "a", 2, 50, -5, None),  # committed beyond the log end: counts in the sum, no seconds
    _row("g1", "b", 0, 7, None, None),  # log range unknown
    _row("g2", "a", 0, 90, 0, 0.0),
]


def test_group_totals_topic_sums_lag_and_committed_max_seconds() -> None:
    assert group_totals(ROWS, "topic") == {
        ("g1", "a"): GroupTotals(committed=350, lag=35, seconds=40.0),
        ("g1", "b"): GroupTotals(committed=7, lag=None, seconds=None),
        ("g2", "a"): GroupTotals(committed=90, lag=0, seconds=0.0),
    }


def test_group_totals_group_spans_topics_unknown_lags_left_out() -> None:
    assert group_totals(ROWS, "group") == {
        ("g1",): GroupTotals(committed=357, lag=35, seconds=40.0),
        ("g2",): GroupTotals(committed=90, lag=0, seconds=0.0),
    }


def test_group_totals_first_seen_order() -> None:
    assert list(group_totals(reversed(ROWS), "topic")) == [("g2", "a"), ("g1", "b"), ("g1", "a")]


def test_group_totals_partition_one_key_per_row() -> None:
    totals = group_totals(ROWS, "partition")
    assert totals[("g1", "a", "2")] == GroupTotals(committed=50, lag=-5, seconds=None)
    assert len(totals) == len(ROWS)


def test_topic_log_totals_sums_per_topic() -> None:
    parts = [
        PartitionOffsets("a", 0, 10, 100),
        PartitionOffsets("a", 1, 0, 50),
        PartitionOffsets("b", 0, 3, 4),
    ]
    assert topic_log_totals(parts) == {"a": LogTotals(10, 150), "b": LogTotals(3, 4)}
