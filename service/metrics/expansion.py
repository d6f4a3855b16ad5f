"""The render worker's side of :mod:`service.metrics.snapshot`: a compact snapshot back into inputs.

:func:`expand` rebuilds the model objects and stand-ins for the store, statuses, tails and alert counts
that answer exactly what the collector reads, so the worker's exposition is byte for byte the in-process
one. Committed offsets stay plain rows (:class:`CompactCommitted`) unless a family reads them as objects.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

from collectors.model import (
    Broker,
    ClusterMetadata,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
    TopicPartition,
)
from service.metrics.snapshot import Compact
from service.metrics.sources import ClusterInputs, ScrapeInputs
from service.metrics.view import Wanted


@dataclass(frozen=True, slots=True)
class FrozenStatus:
    name: str
    cluster: str
    runs: int
    failures: int
    last_success_at: float | None
    last_duration: float | None
    is_stale: bool

    def stale(self, now: float, stale_after_intervals: float) -> bool:
        return self.is_stale


@dataclass(frozen=True, slots=True)
class FrozenTail:
    cluster: str
    caught_up: bool
    records_per_second: float
    lag: Mapping[int, int]
    records_total: int
    unknown_records: int
    decode_errors: int
    fetch_errors: int


@dataclass(frozen=True, slots=True)
class FrozenAlerts:
    firing: Mapping[tuple[str, str, str], int]
    incidents: Mapping[tuple[str, str], int]
    magnitudes: Mapping[tuple[str, str], int]

    def firing_counts(self) -> Mapping[tuple[str, str, str], int]:
        return self.firing

    def incident_totals(self) -> Mapping[tuple[str, str], int]:
        return self.incidents

    def magnitude_totals(self) -> Mapping[tuple[str, str], int]:
        return self.magnitudes


@dataclass(frozen=True, slots=True)
class FrozenLogEndTimes:
    """The answers :func:`~service.metrics.snapshot.compact` already got from the store, by cluster."""

    by_cluster: Mapping[str, Mapping[Wanted, float]]

    def log_end_reached_at_many(self, cluster: str, wanted: Iterable[Wanted]) -> Mapping[Wanted, float]:
        return self.by_cluster.get(cluster, {})


class CompactCommitted:
    """A :class:`CommittedObservation` as :func:`~service.metrics.snapshot.compact` carried it: its
    offsets stay rows of plain values, read straight by :meth:`keyed_offsets` (the lag of every row is all
    a default scrape needs), and become :class:`CommittedOffset` objects only if ``offsets`` is read."""

    __slots__ = ("_offsets", "_rows", "cluster", "groups", "observed_at")

    def __init__(
        self, cluster: str, observed_at: float, rows: Sequence[Sequence[Any]], groups: tuple[str, ...]
    ) -> None:
        self.cluster = cluster
        self.observed_at = observed_at
        self.groups = groups
        self._rows = rows  # (group, topic, partition, offset, leader_epoch, metadata)
        self._offsets: tuple[CommittedOffset, ...] | None = None

    @property
    def offsets(self) -> tuple[CommittedOffset, ...]:
        if self._offsets is None:
            self._offsets = tuple(CommittedOffset(*x) for x in self._rows)
        return self._offsets

    def keyed_offsets(self) -> Iterator[tuple[tuple[str, str, int], int]]:
        return zip(map(_KEY, self._rows), map(_OFFSET, self._rows), strict=True)


_KEY = itemgetter(0, 1, 2)
_OFFSET = itemgetter(3)


def expand(snapshot: Compact) -> tuple[ScrapeInputs, float]:
    """The :class:`ScrapeInputs` and ``now`` that ``compact`` was given (as far as rendering reads)."""
    now, clusters, statuses, stale_after, tails, alerts, reached, evaluations, reconciles = snapshot
    names = [c[0] for c in clusters]
    inputs = ScrapeInputs(
        clusters=[
            ClusterInputs(
                name,
                _metadata_of(_unpack(m)),
                _offsets_of(_unpack(o)),
                _groups_of(_unpack(g)),
                _committed_of(_unpack(c)),
            )
            for name, m, o, g, c in clusters
        ],
        statuses=[FrozenStatus(*s) for s in statuses],
        stale_after_intervals=stale_after,
        tails=[FrozenTail(c, u, r, dict(lag), *rest) for c, u, r, lag, *rest in tails],
        evaluations=evaluations,
        reconciles=reconciles,
        alerts=None if alerts is None else FrozenAlerts(*(dict(x) for x in alerts)),
        log_end_times=FrozenLogEndTimes(dict(zip(names, reached, strict=True))),
    )
    return inputs, now


def _unpack(part: bytes | None) -> Any:
    return None if part is None else pickle.loads(part)


def _metadata_of(m: Sequence[Any] | None) -> ClusterMetadata | None:
    if m is None:
        return None
    cluster, observed_at, cluster_id, controller_id, brokers, topics = m
    return ClusterMetadata(
        cluster,
        observed_at,
        cluster_id,
        controller_id,
        tuple(Broker(*b) for b in brokers),
        tuple(
            TopicInfo(name, internal, tuple(PartitionInfo(*p) for p in partitions), topic_id)
            for name, internal, partitions, topic_id in topics
        ),
    )


def _offsets_of(o: Sequence[Any] | None) -> OffsetsObservation | None:
    if o is None:
        return None
    return OffsetsObservation(o[0], o[1], tuple(PartitionOffsets(*p) for p in o[2]))


def _groups_of(g: Sequence[Any] | None) -> GroupsObservation | None:
    if g is None:
        return None
    return GroupsObservation(
        g[0],
        g[1],
        tuple(
            GroupInfo(
                gid,
                gtype,
                state,
                ptype,
                protocol,
                tuple(
                    GroupMember(
                        mid, client, host, instance, tuple(TopicPartition(*tp) for tp in assignment), epoch
                    )
                    for mid, client, host, instance, assignment, epoch in members
                ),
                coordinator,
                epoch,
            )
            for gid, gtype, state, ptype, protocol, members, coordinator, epoch in g[2]
        ),
    )


def _committed_of(c: Sequence[Any] | None) -> CompactCommitted | None:
    return None if c is None else CompactCommitted(c[0], c[1], c[2], c[3])
