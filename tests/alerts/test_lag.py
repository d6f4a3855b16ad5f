from alerts.lag import partition_lags
from collectors.model import CommittedOffset, PartitionOffsets


def test_partition_lags_committed_inside_range_lag_is_end_minus_committed() -> None:
    [row] = partition_lags([CommittedOffset("g", "t", 0, 40, 3)], [PartitionOffsets("t", 0, 10, 100)])
    assert (row.lag, row.log_start, row.log_end, row.leader_epoch) == (60, 10, 100, 3)
    assert not row.below_log_start and not row.beyond_log_end


def test_partition_lags_committed_beyond_log_end_lag_stays_negative() -> None:
    [row] = partition_lags([CommittedOffset("g", "t", 0, 150, None)], [PartitionOffsets("t", 0, 0, 100)])
    assert row.lag == -50
    assert row.beyond_log_end


def test_partition_lags_committed_below_log_start_flagged() -> None:
    [row] = partition_lags([CommittedOffset("g", "t", 1, 5, None)], [PartitionOffsets("t", 1, 20, 30)])
    assert row.lag == 25
    assert row.below_log_start


def test_partition_lags_unknown_range_lag_is_none_not_zero() -> None:
    [row] = partition_lags([CommittedOffset("g", "t", 2, 5, None)], [PartitionOffsets("t", 0, 0, 30)])
    assert row.lag is None and row.log_end is None


def test_partition_lags_sorted_by_group_topic_partition() -> None:
    rows = partition_lags(
        [CommittedOffset("b", "t", 0, 1, None), CommittedOffset("a", "t", 1, 1, None)],
        [PartitionOffsets("t", 0, 0, 1), PartitionOffsets("t", 1, 0, 1)],
    )
    assert [(r.group, r.partition) for r in rows] == [("a", 1), ("b", 0)]
