"""What detection remembers between cycles (:class:`DetectionState`) and one cycle's input
(:class:`CycleInputs`).

The caller owns the state: it passes the previous :class:`DetectionState` to
:func:`alerts.engine.evaluate` and keeps the one it returns. Every detector reads the previous state and
the current inputs only; none of them changes anything.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from alerts.model import CollectorStatus, CommitEvent, EpochEnd, Finding, GroupEvent
from collectors.model import (
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    ConfigsObservation,
    GroupsObservation,
    MetricsObservation,
    OffsetsObservation,
    PartitionOffsets,
)

# (topic, partition, offset) -> epoch seconds at which the partition's log end first reached ``offset``
# in its current run (after the last time it was below), or None if unknown.
LogEndClock = Callable[[str, int, int], float | None]


class PartitionKey(NamedTuple):
    topic: str
    partition: int


class CommitKey(NamedTuple):
    group: str
    topic: str
    partition: int


def partition_key(key: CommitKey) -> PartitionKey:
    """``key``'s partition as a plain ``(topic, partition)`` tuple: it hashes and compares as the
    :class:`PartitionKey` it stands for (a lookup key; building the named tuple costs a Python call, and
    detection looks up 50,000 of these an evaluation)."""
    return key[1:]  # type: ignore[return-value]


class MetricKey(NamedTuple):
    broker: str  # broker id, or the scrape URL when the id is unknown
    name: str
    labels: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class PartitionPoint:
    """A partition as last observed: log range, leader, epoch, ISR. When it was observed is kept beside
    it (:class:`PartitionsSeen`): a partition that did not move keeps its very point from one
    observation to the next, so an evaluation and a save touch only the partitions that moved."""

    log_start: int | None
    log_end: int | None
    leader: int | None = None
    leader_epoch: int | None = None
    isr: tuple[int, ...] | None = None  # None = not observed
    topic_id: str | None = None


@dataclass(frozen=True, slots=True)
class PartitionsSeen:
    """When each partition of :attr:`DetectionState.partitions` was last observed: ``at`` (the time of the
    last offsets observation folded in) for every one, but those in ``other`` (a partition that
    observation did not list, or whose point from before it was kept): a few, if any."""

    at: float | None = None
    other: Mapping[PartitionKey, float] = field(default_factory=dict)

    def of(self, key: PartitionKey) -> float:
        """When ``key`` (a partition of the state's) was observed."""
        at = self.other.get(key, self.at)
        assert at is not None, key  # every partition is in ``other`` until an offsets observation
        return at


class RangeSample(NamedTuple):
    at: float
    log_start: int
    log_end: int


class OffsetSample(NamedTuple):
    at: float
    offset: int


class BlindSpan(NamedTuple):
    """No log range was observed between ``start`` (the last one seen) and ``end`` (the next one)."""

    start: float
    end: float


@dataclass(frozen=True, slots=True)
class CommitPoint:
    """The last known committed offset of one group-partition."""

    offset: int
    leader_epoch: int | None
    at: float  # commit time (tail) or the time offsetguard first saw this offset (poll)
    moved_at: float  # when the committed offset last changed (first seen, if never)
    source: str  # "tail" or "poll"
    group_state: str | None = None  # group state when it was committed
    generation: int | None = None
    member_epoch: int | None = None
    expire_at: float | None = None  # explicit expiry of a v1 commit


@dataclass(frozen=True, slots=True)
class GroupPoint:
    """A group's state as last known, and since when it is in that state."""

    state: str
    since: float
    group_type: str | None = None
    protocol_type: str | None = None
    generation: int | None = None
    # Topics its members subscribe to or are assigned, when known (``()`` without members; None: unknown).
    topics: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class PendingRewind:
    """A rewind with no cause yet, held for ``recommit_window_seconds`` in case a newer commit undoes it."""

    key: CommitKey
    old: CommitPoint
    new: CommitPoint
    group_state: str | None


@dataclass(frozen=True, slots=True)
class PendingLoss:
    """A vanished committed offset with its cause decided, held (``topic_confirm_seconds`` at most) until
    an observation after it shows whether its topic still exists: a deleted topic takes its offsets with
    it, and the tombstones usually arrive before the next metadata poll."""

    key: CommitKey
    old: CommitPoint
    at: float
    group_state: str | None
    source: str
    cause: str
    members_topics: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Recreation:
    """A partition whose topic was seen gone (deleted, or listed under another topic id): whatever is
    observed of it since ``seen_at`` is another topic, re-created under the same name (alerts.recreation)."""

    old_id: str | None  # the deleted topic's id
    new_id: str | None  # the re-created topic's id; None until metadata lists it
    gone_at: float  # when the old topic was first seen gone (metadata without it, or under another id)
    seen_at: float | None = None  # when the partition was first observed again since; None: not yet


@dataclass(frozen=True)
class Swept:
    """The slow rules' last judgements (:mod:`alerts.sweep`) and what they were judged on (kept in the
    detection state, never saved: a restart sweeps)."""

    at: float  # the last sweep
    blind_spans: tuple[BlindSpan, ...]  # what the last sweep measured by
    retention_seconds: float
    # the committed offsets of the last evaluation (the previous state's, when the caller passed back the
    # state it got), and the group-partitions changed since lag and the forecast last judged (with ranges)
    commits: Mapping[CommitKey, CommitPoint]
    unjudged: frozenset[CommitKey]
    ranges: Mapping[PartitionKey, tuple[int | None, int | None]]  # log start and end as last judged
    groups: Mapping[str, GroupPoint]
    by_partition: Mapping[PartitionKey, tuple[CommitKey, ...]]  # as of the last sweep
    by_group: Mapping[str, tuple[CommitKey, ...]]
    indexed: int  # the group-partitions in the indexes (gone ones included)
    lag: Mapping[CommitKey, tuple[Finding, ...]]
    retention: Mapping[CommitKey, Finding]
    expiry: Mapping[str, Finding]
    # committed offsets outside their log: the findings, and every group-partition outside by value
    # (flagged or not), judged again at every evaluation with log ranges
    outside: Mapping[CommitKey, Finding]
    outside_keys: frozenset[CommitKey]
    # group-partitions lag judged without a finding, and until when none can be while their inputs stay
    # (alerts.lag_alerts.lag_judgements): a sweep carries them over; the partitions ``ranges`` were read of
    lag_quiet: Mapping[CommitKey, float] = field(default_factory=dict)
    ranges_of: Mapping[PartitionKey, PartitionPoint] | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True, slots=True)
class Polled:
    """The offsets of the last committed observation (the tail-fed view hands the same tuple again while
    nothing moved), their keys (the view's key set from its first observation, else built once the same
    tuple is handed twice), and the committed offsets they were last found all in (the state's own, or
    None): what spares a replay looking each of them up again (alerts.commits)."""

    offsets: tuple[CommittedOffset, ...]
    keys: frozenset[tuple[str, str, int]] | None = None
    found_in: Mapping[CommitKey, CommitPoint] | None = None


@dataclass(frozen=True, slots=True)
class Ranged:
    """The last offsets observation folded in, its metadata, the points built of it (in its order) and
    which of them moved (None: not known): :func:`alerts.current.moved_partitions`."""

    offsets: tuple[PartitionOffsets, ...]
    metadata: ClusterMetadata | None
    points: Mapping[PartitionKey, PartitionPoint]
    moved: frozenset[PartitionKey] | None


@dataclass(frozen=True)
class DetectionState:
    """Everything the detectors compare against. Empty on the first cycle."""

    partitions: Mapping[PartitionKey, PartitionPoint] = field(default_factory=dict)
    seen: PartitionsSeen = field(default_factory=PartitionsSeen)  # when each of ``partitions`` was observed
    # histories, oldest first: alerts.history's compact kinds once advanced (tuples compare equal to them).
    # A partition's range history whose two newest samples have its point's range ends, in truth, at its
    # last observation (``seen``: a run goes on without a new history each cycle): read it with
    # alerts.current.range_history (alerts.history.through), never as it is.
    ranges: Mapping[PartitionKey, Sequence[RangeSample]] = field(default_factory=dict)
    commits: Mapping[CommitKey, CommitPoint] = field(default_factory=dict)
    commit_history: Mapping[CommitKey, Sequence[OffsetSample]] = field(default_factory=dict)
    groups: Mapping[str, GroupPoint] = field(default_factory=dict)
    counters: Mapping[MetricKey, float] = field(default_factory=dict)
    pending_rewinds: tuple[PendingRewind, ...] = ()
    pending_losses: tuple[PendingLoss, ...] = ()
    tail_positions: Mapping[int, int] = field(default_factory=dict)  # source partition -> last offset seen
    committed_polled_at: float | None = None  # observed_at of the last committed-offsets poll
    offsets_retention_seconds: float | None = None  # the broker's offsets.retention.minutes, last observed
    unclean_counter_seen_at: float | None = None  # last scrape that reported the unclean-election counter
    offsets_seen_at: float | None = None  # observed_at of the last offsets observation with a log range
    blind_spans: tuple[BlindSpan, ...] = ()  # the last blind spells, oldest first (alerts.blind)
    # group-partitions a tail tombstone removed, and when: a committed-offsets poll taken before that must
    # not bring them back (kept until a poll taken after it has been applied)
    tombstoned: Mapping[CommitKey, float] = field(default_factory=dict)
    # partitions of a topic deleted or re-created, until their groups commit inside the new log again (a
    # commit beyond its end is then a stale one of the deleted topic, not a truncation: alerts.log_range)
    recreated: Mapping[PartitionKey, Recreation] = field(default_factory=dict)
    # the slow rules' last judgements (alerts.sweep; None when ``Thresholds.sweep_seconds`` is 0). Never
    # saved: a restored state sweeps.
    swept: Swept | None = None
    # what the last replay learnt of the polled offsets (alerts.commits), and of the offsets observation
    # (alerts.current.moved_partitions): never saved, not compared (a state without them gives the same)
    polled: Polled | None = field(default=None, compare=False, repr=False)
    ranged: Ranged | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class CycleInputs:
    """One cycle's observations of one cluster; any of them may be missing (``None``) or partial.

    ``tail_live`` says the commit events are complete: committed-offset moves and deletions are then
    taken from ``commit_events`` only, and the polled offsets only seed group-partitions never seen.
    """

    cluster: str
    metadata: ClusterMetadata | None = None
    offsets: OffsetsObservation | None = None
    groups: GroupsObservation | None = None
    committed: CommittedObservation | None = None
    configs: ConfigsObservation | None = None
    metrics: MetricsObservation | None = None
    commit_events: tuple[CommitEvent, ...] = ()
    group_events: tuple[GroupEvent, ...] = ()
    tail_live: bool = False
    epoch_ends: tuple[EpochEnd, ...] = ()
    collectors: tuple[CollectorStatus, ...] = ()
    log_end_reached_at: LogEndClock | None = None


def metric_key(broker_id: int | None, url: str, name: str, labels: tuple[tuple[str, str], ...]) -> MetricKey:
    return MetricKey(str(broker_id) if broker_id is not None else url, name, labels)
