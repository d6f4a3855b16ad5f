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
from dataclasses import dataclass, field
from typing import NamedTuple

from collectors.errors import OffsetguardError
from collectors.model import (
    ClusterMetadata,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
)
from service.metrics.sources import ClusterInputs, CommittedLike, LogEndTimes, ScrapeInputs

log = logging.getLogger(__name__)

Wanted = tuple[str, int, int]  # (topic, partition, offset)
LagRow = tuple[tuple[str, str, int], int, int | None]  # ((group, topic, partition), committed, lag)


class GroupPartition(NamedTuple):
    """A committed group-partition as the metrics show it.

    A named tuple, flat: a scrape builds one per committed group-partition (50,000 at fleet scale), and
    a frozen dataclass (or one nested in another) costs several times more to build than a tuple.
    """

    group: str
    topic: str
    partition: int
    committed: int
    lag: int | None  # log end - committed (negative beyond the log end); None: log range unknown
    seconds: float | None  # lag in seconds (None: absent)


@dataclass(slots=True, eq=False)
class ClusterView:
    """One cluster's observations and the lag of each committed group-partition (:attr:`lags`, sorted by
    key, with the crossing times their lag seconds need in :attr:`reached`, asked of the store once).
    :attr:`rows` are the same as :class:`GroupPartition` tuples, built only when a family reads them."""

    cluster: str
    metadata: ClusterMetadata | None
    offsets: OffsetsObservation | None
    groups: GroupsObservation | None
    committed: CommittedLike | None
    lags: Sequence[LagRow]
    reached: Mapping[Wanted, float]
    now: float
    _rows: tuple[GroupPartition, ...] | None = field(default=None, init=False, repr=False)

    @property
    def rows(self) -> tuple[GroupPartition, ...]:
        if self._rows is None:
            reached, now = self.reached, self.now
            self._rows = tuple(
                GroupPartition(*row[0], row[1], row[2], lag_seconds(row, reached, now)) for row in self.lags
            )
        return self._rows


def lag_rows(committed: CommittedLike | None, offsets: OffsetsObservation | None) -> list[LagRow]:
    """``(key, committed, lag)`` of every committed group-partition, unsorted: one per key (the first of
    duplicates wins: a duplicate would make an invalid exposition), ``lag`` None when the log range is
    unknown."""
    unique = _unique(committed)
    ends = offsets.log_ends() if offsets else {}
    rows = []
    for key, offset in unique.items():
        end = ends.get(key[1:])
        rows.append((key, offset, None if end is None else end - offset))
    return rows


def wanted_offsets(rows: Iterable[LagRow]) -> set[Wanted]:
    """The (topic, partition, committed + 1) whose log-end crossing time the lagging rows need."""
    return {(t, p, offset + 1) for (_, t, p), offset, lag in rows if lag is not None and lag > 0}


def wanted_of(committed: CommittedLike | None, ends: Mapping[tuple[str, int], int]) -> set[Wanted]:
    """``wanted_offsets(lag_rows(committed, offsets))`` for ``ends = offsets.log_ends()``, without
    building a row per group-partition (most lag nothing)."""
    get = ends.get
    return {
        (t, p, offset + 1)
        for (_, t, p), offset in _unique(committed).items()
        if (end := get((t, p))) is not None and end > offset
    }


def _unique(committed: CommittedLike | None) -> dict[tuple[str, str, int], int]:
    """Each group-partition's committed offset, the first of duplicates winning."""
    return dict(reversed(list(committed.keyed_offsets()))) if committed else {}


def lag_seconds(row: LagRow, reached_at: Mapping[Wanted, float], now: float) -> float | None:
    """Age of the oldest unconsumed message (module docstring); None when it is absent."""
    (_, topic, partition), committed, lag = row
    if lag is None or lag < 0:
        return None
    if lag == 0:
        return 0.0
    at = reached_at.get((topic, partition, committed + 1))
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
    """Lag and lag seconds of every committed group-partition of one cluster, sorted by group, topic and
    partition (the member a partition is assigned to: :func:`assignments`, for the families that need
    it)."""
    lags = lag_rows(inputs.committed, inputs.offsets)
    lags.sort()  # by key: keys are unique
    reached = _reached_at(store, inputs.cluster, wanted_offsets(lags))
    c = inputs
    return ClusterView(c.cluster, c.metadata, c.offsets, c.groups, c.committed, lags, reached, now)


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
