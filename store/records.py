"""Frozen values the store hands back. Times are epoch seconds, as in :mod:`collectors.model`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class CommittedPoint:
    """One stored change of a group-partition's committed offset; ``offset`` None records a deletion."""

    cluster: str
    group: str
    topic: str
    partition: int
    observed_at: float
    offset: int | None
    leader_epoch: int | None
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class LatestCommitted:
    """The newest committed value of a group-partition.

    ``changed_at`` is when it became this value; ``last_seen_at`` is the newest observation of the group
    that confirmed it (still present and unchanged, or still absent when ``offset`` is None).
    """

    cluster: str
    group: str
    topic: str
    partition: int
    offset: int | None
    leader_epoch: int | None
    metadata: str
    changed_at: float
    last_seen_at: float


@dataclass(frozen=True, slots=True)
class PartitionPoint:
    """One stored change of a partition's log bounds or leadership (None = not known / no leader)."""

    cluster: str
    topic: str
    partition: int
    observed_at: float
    log_start: int | None
    log_end: int | None
    leader: int | None
    leader_epoch: int | None


@dataclass(frozen=True, slots=True)
class LatestPartition:
    """The newest state of a partition, when it became so and when it was last confirmed."""

    cluster: str
    topic: str
    partition: int
    log_start: int | None
    log_end: int | None
    leader: int | None
    leader_epoch: int | None
    changed_at: float
    last_seen_at: float


@dataclass(frozen=True, slots=True)
class TailPosition:
    """Where tailing of one ``__consumer_offsets`` partition resumes."""

    cluster: str
    partition: int
    next_offset: int
    updated_at: float


@dataclass(frozen=True, slots=True)
class WriteCounts:
    """What one ``record_*`` call wrote."""

    history_rows: int  # changed values (deletions included) appended to history
    new_keys: int  # keys seen for the first time
    deletions: int = 0  # committed offsets that vanished from a fetched group


@dataclass(frozen=True, slots=True)
class ThinCounts:
    """History rows removed by one :meth:`Store.thin` pass."""

    committed_thinned: int
    committed_expired: int
    partitions_thinned: int
    partitions_expired: int

    @property
    def total(self) -> int:
        return (
            self.committed_thinned
            + self.committed_expired
            + self.partitions_thinned
            + self.partitions_expired
        )
