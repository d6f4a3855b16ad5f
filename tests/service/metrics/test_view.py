"""The scrape's view of a cluster (service.metrics.view): lag rows, lag in seconds, members."""

from __future__ import annotations

from collectors.model import (
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionOffsets,
    TopicPartition,
)
from service.metrics.sources import ClusterInputs
from service.metrics.view import (
    GroupPartition,
    LagRow,
    assignments,
    cluster_view,
    lag_rows,
    lag_seconds,
    wanted_of,
    wanted_offsets,
)


def _row(committed: int, log_end: int | None) -> LagRow:
    return (("g", "t", 0), committed, None if log_end is None else log_end - committed)


def test_lag_seconds_lagging_now_minus_crossing() -> None:
    assert lag_seconds(_row(90, 100), {("t", 0, 91): 940.0}, now=1000.0) == 60.0


def test_lag_seconds_zero_lag_zero_without_lookup() -> None:
    assert lag_seconds(_row(100, 100), {}, now=1000.0) == 0.0


def test_lag_seconds_negative_lag_absent() -> None:
    assert lag_seconds(_row(120, 100), {("t", 0, 121): 900.0}, now=1000.0) is None


def test_lag_seconds_unknown_range_or_crossing_absent() -> None:
    assert lag_seconds(_row(90, None), {("t", 0, 91): 900.0}, now=1000.0) is None
    assert lag_seconds(_row(90, 100), {}, now=1000.0) is None


def test_lag_seconds_crossing_after_now_clamped_to_zero() -> None:
    assert lag_seconds(_row(90, 100), {("t", 0, 91): 1005.0}, now=1000.0) == 0.0


def test_wanted_offsets_only_lagging_rows_committed_plus_one() -> None:
    rows = [_row(90, 100), _row(100, 100), _row(120, 100), _row(5, None)]
    assert wanted_offsets(rows) == {("t", 0, 91)}


def _committed(*rows: tuple[str, str, int, int]) -> CommittedObservation:
    return CommittedObservation("c", 1.0, tuple(CommittedOffset(*r, None) for r in rows), ())


def test_lag_rows_first_of_duplicates_wins_and_unknown_range_has_no_lag() -> None:
    committed = _committed(("g", "t", 0, 5), ("g", "t", 0, 9), ("g", "u", 0, 3))
    offsets = OffsetsObservation("c", 1.0, (PartitionOffsets("t", 0, 0, 10),))
    assert sorted(lag_rows(committed, offsets)) == [(("g", "t", 0), 5, 5), (("g", "u", 0), 3, None)]
    assert lag_rows(None, offsets) == []
    assert sorted(lag_rows(committed, None)) == [(("g", "t", 0), 5, None), (("g", "u", 0), 3, None)]


def test_wanted_of_is_wanted_offsets_of_the_lag_rows() -> None:
    """Duplicates (the first wins), caught up, behind, beyond the log end, no range, -1 beside an empty
    log and beside no range."""
    committed = _committed(
        ("g", "t", 0, 5),
        ("g", "t", 0, 9),
        ("h", "t", 0, 10),
        ("g", "t", 1, 11),
        ("g", "t", 2, -1),
        ("g", "u", 0, 3),
        ("g", "u", 1, -1),
    )
    ranges = ((0, 10), (1, 10), (2, 0))
    offsets = OffsetsObservation("c", 1.0, tuple(PartitionOffsets("t", p, 0, end) for p, end in ranges))
    expected = wanted_offsets(lag_rows(committed, offsets))
    assert expected == {("t", 0, 6), ("t", 2, 0)}
    assert wanted_of(committed, offsets.log_ends()) == expected
    assert wanted_of(None, offsets.log_ends()) == set() == wanted_offsets(lag_rows(None, offsets))
    assert wanted_of(committed, {}) == set() == wanted_offsets(lag_rows(committed, None))


class _Times:
    def __init__(self, found: dict[tuple[str, int, int], float]) -> None:
        self.found = found
        self.asked: list[set[tuple[str, int, int]]] = []

    def log_end_reached_at_many(self, cluster: str, wanted: set[tuple[str, int, int]]) -> dict:
        self.asked.append(set(wanted))
        return {k: v for k, v in self.found.items() if k in wanted}


def test_cluster_view_rows_sorted_flat_with_seconds_members_apart() -> None:
    committed = _committed(("b", "t", 1, 40), ("a", "t", 0, 100), ("b", "t", 0, 70), ("a", "t", 1, 120))
    offsets = OffsetsObservation(
        "c", 1.0, (PartitionOffsets("t", 0, 0, 100), PartitionOffsets("t", 1, 0, 50))
    )
    member = GroupMember("m1", "client", "/10.0.0.1", assignment=(TopicPartition("t", 1),))
    groups = GroupsObservation(
        "c", 1.0, (GroupInfo("b", "classic", "Stable", "consumer", "range", (member,)),)
    )
    times = _Times({("t", 1, 41): 940.0, ("t", 0, 71): 990.0})
    view = cluster_view(ClusterInputs("c", None, offsets, groups, committed), times, now=1000.0)
    assert view.rows == (
        GroupPartition("a", "t", 0, 100, 0, 0.0),
        GroupPartition("a", "t", 1, 120, -70, None),  # beyond the log end: no seconds
        GroupPartition("b", "t", 0, 70, 30, 10.0),
        GroupPartition("b", "t", 1, 40, 10, 60.0),
    )
    assert times.asked == [{("t", 1, 41), ("t", 0, 71)}]  # one batched lookup, lagging rows only
    assert assignments(groups) == {("b", "t", 1): member}


def test_cluster_view_builds_group_partition_rows_only_when_read() -> None:
    committed = _committed(("a", "t", 0, 4))
    offsets = OffsetsObservation("c", 1.0, (PartitionOffsets("t", 0, 0, 10),))
    view = cluster_view(ClusterInputs("c", None, offsets, None, committed), _Times({}), now=1000.0)
    assert view.lags == [(("a", "t", 0), 4, 6)] and view.reached == {} and view.now == 1000.0
    assert view._rows is None  # the default families read the lag rows only
    assert view.rows == (GroupPartition("a", "t", 0, 4, 6, None),)
    assert view.rows is view.rows
