"""Per-partition rows folded to a coarser granularity: what the ``topic`` and ``group`` levels export.

Lag and committed offsets are summed (a sum of committed offsets is a progress counter: its rate is the
group's consumption rate), lag in seconds takes the maximum (the oldest unconsumed message of the set).
A total covers only the partitions whose value is known, and is absent when none is, as a partition's
series would be. Negative lags (commits beyond the log end) count in sums, as in kafka_exporter's
``kafka_consumergroup_lag_sum``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from collectors.model import PartitionOffsets
from service.metrics.options import Granularity
from service.metrics.view import GroupPartition

GroupKey = tuple[str, ...]  # (group, topic) at topic granularity, (group,) at group granularity


@dataclass(slots=True)
class GroupTotals:
    committed: int = 0
    lag: int | None = None  # sum of the known lags
    seconds: float | None = None  # max of the known lags in seconds


@dataclass(slots=True)
class LogTotals:
    log_start: int = 0
    log_end: int = 0


def group_totals(rows: Iterable[GroupPartition], granularity: Granularity) -> dict[GroupKey, GroupTotals]:
    """Committed sum, lag sum and lag-seconds max per (group, topic) or per group, in first-seen order."""
    totals: dict[GroupKey, GroupTotals] = {}
    for row in rows:
        if granularity == "group":
            key: GroupKey = (row.group,)
        elif granularity == "topic":
            key = (row.group, row.topic)
        else:
            key = (row.group, row.topic, str(row.partition))
        t = totals.get(key)
        if t is None:
            t = totals[key] = GroupTotals()
        t.committed += row.committed
        if row.lag is not None:
            t.lag = row.lag if t.lag is None else t.lag + row.lag
        if row.seconds is not None:
            t.seconds = row.seconds if t.seconds is None else max(t.seconds, row.seconds)
    return totals


def topic_log_totals(partitions: Iterable[PartitionOffsets]) -> dict[str, LogTotals]:
    """Sums of the log start and log end offsets of each topic's observed partitions."""
    totals: dict[str, LogTotals] = {}
    for p in partitions:
        t = totals.get(p.topic)
        if t is None:
            t = totals[p.topic] = LogTotals()
        t.log_start += p.log_start
        t.log_end += p.log_end
    return totals
