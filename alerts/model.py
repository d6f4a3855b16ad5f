"""What the detectors produce (:class:`Finding`) and the plain-data inputs they take besides observations.

Times are epoch **seconds** (floats) everywhere except the fields named ``*_timestamp``, which keep the
milliseconds ``__consumer_offsets`` records carry. Nothing here does I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from collectors.fast_init import fast_init

Severity = Literal["info", "warning", "critical"]
Scalar = int | float | str | bool | None
EvidenceValue = Scalar | tuple[Scalar, ...]
Magnitude = Mapping[str, int | float | None]  # None = unknown, never a made-up 0
Evidence = Mapping[str, EvidenceValue]

OFFSET_REWIND = "offset_rewind"
OFFSET_SKIP = "offset_skip"
COMMITTED_BELOW_LOG_START = "committed_below_log_start"
COMMITTED_BEYOND_LOG_END = "committed_beyond_log_end"
LOG_TRUNCATION = "log_truncation"
UNCLEAN_LEADER_ELECTION = "unclean_leader_election"
OFFSETS_LOST = "offsets_lost"
EPOCH_DIVERGENCE = "epoch_divergence"
RETENTION_RISK = "retention_risk"
OFFSETS_EXPIRY_RISK = "offsets_expiry_risk"
LAG_HIGH = "lag_high"
CONSUMER_STALLED = "consumer_stalled"
OFFSETS_TOPIC_CLEANER_STALLED = "offsets_topic_cleaner_stalled"
OUT_OF_RANGE_FETCHES = "out_of_range_fetches"
CONFIG_RISK = "config_risk"
COLLECTOR_FAILURE = "collector_failure"
TOPIC_DELETED = "topic_deleted"

ALERT_KINDS = (
    OFFSET_REWIND,
    OFFSET_SKIP,
    COMMITTED_BELOW_LOG_START,
    COMMITTED_BEYOND_LOG_END,
    LOG_TRUNCATION,
    UNCLEAN_LEADER_ELECTION,
    OFFSETS_LOST,
    EPOCH_DIVERGENCE,
    RETENTION_RISK,
    OFFSETS_EXPIRY_RISK,
    LAG_HIGH,
    CONSUMER_STALLED,
    OFFSETS_TOPIC_CLEANER_STALLED,
    OUT_OF_RANGE_FETCHES,
    CONFIG_RISK,
    COLLECTOR_FAILURE,
    TOPIC_DELETED,
)


@dataclass(frozen=True)
class Finding:
    """One detected condition; ``fingerprint`` identifies it across cycles."""

    kind: str
    severity: Severity
    cluster: str
    group: str | None
    topic: str | None
    partition: int | None
    summary: str
    cause: str | None = None
    magnitude: Magnitude = field(default_factory=dict)
    evidence: Evidence = field(default_factory=dict)

    @property
    def fingerprint(self) -> tuple[str, str, str | None, str | None, int | None]:
        return (self.kind, self.cluster, self.group, self.topic, self.partition)


@fast_init
@dataclass(frozen=True, slots=True)
class CommitEvent:
    """One offset commit (or its tombstone, ``offset=None``) read from ``__consumer_offsets``.

    ``commit_timestamp`` is the commit's own timestamp, or the record timestamp for a tombstone (which has
    no value). Events of one group share a source partition and arrive in ``source_offset`` order.
    ``generation``/``member_id``/``member_epoch`` describe the committing member when the caller knows them
    (OffsetCommit records do not carry them).
    """

    cluster: str
    group: str
    topic: str
    partition: int
    offset: int | None
    leader_epoch: int | None
    commit_timestamp: int
    source_partition: int
    source_offset: int
    expire_timestamp: int | None = None
    generation: int | None = None
    member_id: str | None = None
    member_epoch: int | None = None


@dataclass(frozen=True, slots=True)
class GroupEvent:
    """A group-level record: classic GroupMetadata, KIP-848 group epoch, or a group tombstone.

    ``state`` is what the record implies: ``"Empty"`` for a classic group written without members,
    ``"Stable"`` for one with members, ``"Dead"`` for a tombstone, ``None`` when the record does not say
    (KIP-848 group epochs). ``topics`` are the topics its members subscribe to or are assigned when the
    record tells them all (``()`` without members), else None.
    """

    cluster: str
    group: str
    state: str | None
    generation: int | None
    protocol_type: str | None
    timestamp: int  # ms: current_state_timestamp when the record has it, else the record timestamp
    source_partition: int
    source_offset: int
    members: tuple[str, ...] = ()
    topics: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class EpochEnd:
    """An OffsetsForLeaderEpoch answer from the current leader: where ``requested_epoch`` ends there."""

    topic: str
    partition: int
    requested_epoch: int
    leader_epoch: int  # the largest epoch <= requested_epoch the leader knows (-1 if none)
    end_offset: int  # -1 = undefined


@dataclass(frozen=True, slots=True)
class CollectorStatus:
    """How one collector of the cluster is doing, as the scheduler sees it."""

    name: str
    ok: bool
    failing_since: float | None = None  # when it last started failing
    error: str = ""
    message: str = ""
    last_success: float | None = None
