"""Lag in seconds as defined in service.metrics.view, on literal lags."""

from __future__ import annotations

from alerts.lag import PartitionLag
from service.metrics.view import lag_seconds, wanted_offsets


def _lag(committed: int, log_end: int | None) -> PartitionLag:
    lag = None if log_end is None else log_end - committed
    return PartitionLag("g", "t", 0, committed, None, 0, log_end, lag)


def test_lag_seconds_lagging_now_minus_crossing() -> None:
    assert lag_seconds(_lag(90, 100), {("t", 0, 91): 940.0}, now=1000.0) == 60.0


def test_lag_seconds_zero_lag_zero_without_lookup() -> None:
    assert lag_seconds(_lag(100, 100), {}, now=1000.0) == 0.0


def test_lag_seconds_negative_lag_absent() -> None:
    assert lag_seconds(_lag(120, 100), {("t", 0, 121): 900.0}, now=1000.0) is None


def test_lag_seconds_unknown_range_or_crossing_absent() -> None:
    assert lag_seconds(_lag(90, None), {("t", 0, 91): 900.0}, now=1000.0) is None
    assert lag_seconds(_lag(90, 100), {}, now=1000.0) is None


def test_lag_seconds_crossing_after_now_clamped_to_zero() -> None:
    assert lag_seconds(_lag(90, 100), {("t", 0, 91): 1005.0}, now=1000.0) == 0.0


def test_wanted_offsets_only_lagging_rows_committed_plus_one() -> None:
    rows = [_lag(90, 100), _lag(100, 100), _lag(120, 100), _lag(5, None)]
    assert wanted_offsets(rows) == {("t", 0, 91)}
