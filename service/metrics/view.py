"""One scrape's view of a cluster: lag per committed group-partition, its age in seconds, its member.

Lag in seconds of a group-partition is the age of its oldest unconsumed message. The committed offset
``c`` is the next offset the group will read, so that message is offset ``c``; it exists from the moment
the log end first passed ``c`` (log end >= ``c + 1``) in the partition's current run (a truncation below
``c + 1`` starts a new run). Hence::

    lag_seconds = now - log_end_reached_at(c + 1)    when lag > 0 and the history knows that moment
    lag_seconds = 0                                  when lag == 0 (nothing is waiting)
    absent                                           when lag < 0, lag unknown or the moment unknown

The store only sees the log end at each offsets-collector run, so the moment is the first *observation*
at or after the crossing: the figure is a lower bound, short of the truth by at most one offsets
interval (or one thinning bucket for thinned history), or by more when the history starts after the
crossing. All store lookups of a scrape are one batched query per cluster.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from alerts.lag import PartitionLag, partition_lags
from collectors.errors import OffsetguardError
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
)
from service.metrics.sources import ClusterInputs, LogEndTimes, ScrapeInputs

log = logging.getLogger(__name__)

Wanted = tuple[str, int, int]  # (topic, partition, offset)


@dataclass(frozen=True, slots=True)
class GroupPartition:
    """A committed group-partition as the metrics show it."""

    lag: PartitionLag
    seconds: float | None  # lag in seconds (None: absent)
    member: GroupMember | None  # the member the partition is assigned to, if any


@dataclass(frozen=True, slots=True)
class ClusterView:
    cluster: str
    metadata: ClusterMetadata | None
    offsets: OffsetsObservation | None
    groups: GroupsObservation | None
    committed: CommittedObservation | None
    rows: tuple[GroupPartition, ...]


def wanted_offsets(lags: Iterable[PartitionLag]) -> set[Wanted]:
    """The (topic, partition, committed + 1) whose log-end crossing time the lagging rows need."""
    return {(x.topic, x.partition, x.committed + 1) for x in lags if x.lag is not None and x.lag > 0}


def lag_seconds(lag: PartitionLag, reached_at: Mapping[Wanted, float], now: float) -> float | None:
    """Age of the oldest unconsumed message (module docstring); None when it is absent."""
    if lag.lag is None or lag.lag < 0:
        return None
    if lag.lag == 0:
        return 0.0
    at = reached_at.get((lag.topic, lag.partition, lag.committed + 1))
    return None if at is None else max(0.0, now - at)


def assignments(groups: GroupsObservation | None) -> dict[tuple[str, str, int], GroupMember]:
    """(group, topic, partition) -> assigned member; the first member wins if two claim one partition."""
    found: dict[tuple[str, str, int], GroupMember] = {}
    for group in groups.groups if groups else ():
        for member in group.members:
            for tp in member.assignment:
                found.setdefault((group.group_id, tp.topic, tp.partition), member)
    return found


def cluster_view(inputs: ClusterInputs, store: LogEndTimes | None, now: float) -> ClusterView:
    """Lag, lag seconds and members of every committed group-partition of one cluster."""
    committed = inputs.committed.offsets if inputs.committed else ()
    # One row per key: a duplicate would make an invalid exposition (first one wins).
    unique = {(c.group, c.topic, c.partition): c for c in reversed(committed)}
    lags = partition_lags(unique.values(), inputs.offsets.partitions if inputs.offsets else ())
    reached = _reached_at(store, inputs.cluster, wanted_offsets(lags))
    members = assignments(inputs.groups)
    rows = tuple(
        GroupPartition(x, lag_seconds(x, reached, now), members.get((x.group, x.topic, x.partition)))
        for x in lags
    )
    return ClusterView(inputs.cluster, inputs.metadata, inputs.offsets, inputs.groups, inputs.committed, rows)


def cluster_views(inputs: ScrapeInputs, now: float) -> Sequence[ClusterView]:
    return [cluster_view(c, inputs.log_end_times, now) for c in inputs.clusters]


def _reached_at(store: LogEndTimes | None, cluster: str, wanted: set[Wanted]) -> Mapping[Wanted, float]:
    if store is None or not wanted:
        return {}
    try:
        return store.log_end_reached_at_many(cluster, wanted)
    except OffsetguardError as exc:  # a scrape without lag seconds beats a failed scrape
        log.warning("metrics: lag seconds of %s unavailable: %s", cluster, exc)
        return {}
