"""Consumer groups: the list with lag summaries, one group in detail, its history and past offsets."""

from __future__ import annotations

from pydantic import BaseModel


class LagSummary(BaseModel):
    partitions: int  # committed partitions
    lag_unknown: int  # of them, how many have no known log range (lag never guessed as 0)
    total_lag: int | None  # sum of the known non-negative lags (null: none known)
    max_lag: int | None  # may be negative: committed beyond the log end
    max_lag_seconds: float | None


class AlertBrief(BaseModel):
    id: str
    kind: str
    severity: str
    summary: str
    started_at: float


class GroupSummary(BaseModel):
    group: str
    state: str | None  # as the broker reported it at the last groups poll; null if not seen
    type: str | None
    members: int | None
    lag: LagSummary
    worst_alert: AlertBrief | None  # the most severe firing alert of the group, newest first among equals
    firing_alerts: int


class GroupList(BaseModel):
    """Groups sorted by id; pass ``next_cursor`` as ``cursor`` for the next page (null: no more)."""

    cluster: str
    groups: list[GroupSummary]
    next_cursor: str | None


class TopicPartitionRef(BaseModel):
    topic: str
    partition: int


class MemberOut(BaseModel):
    member_id: str
    client_id: str
    host: str
    instance_id: str | None
    member_epoch: int | None
    assignment: list[TopicPartitionRef]


class PartitionState(BaseModel):
    """One committed partition of the group against its partition's current log range."""

    topic: str
    partition: int
    committed_offset: int
    leader_epoch: int | None  # the leader epoch committed with the offset
    metadata: str
    log_start: int | None
    log_end: int | None
    lag: int | None  # log_end - committed_offset; negative when committed beyond the log end
    lag_seconds: float | None  # age of the oldest unconsumed message (lower bound); null when unknown
    last_commit_at: float  # when the committed offset became this value
    confirmed_at: float  # the newest poll that saw it unchanged
    log_observed_at: float | None  # the newest poll that confirmed log_start/log_end
    member_id: str | None  # the member the partition is assigned to, if any


class GroupDetail(BaseModel):
    cluster: str
    group: str
    state: str | None
    type: str | None
    protocol_type: str | None
    protocol: str | None
    coordinator: int | None
    group_epoch: int | None
    observed_at: float | None  # when state and members were polled (null: not seen by the groups poll)
    members: list[MemberOut]
    partitions: list[PartitionState]
    lag: LagSummary
    # what the last polls could not see of this group: "groups: not authorized" (an ACL refused
    # DescribeGroups), "committed: KafkaTimeoutError", ...; its state or offsets are then not current
    unobserved: list[str] = []


class CommittedPointOut(BaseModel):
    at: float
    offset: int | None  # null: the committed offset was deleted
    leader_epoch: int | None


class LogPointOut(BaseModel):
    at: float
    log_start: int | None
    log_end: int | None
    leader: int | None
    leader_epoch: int | None


class PartitionHistory(BaseModel):
    """Changes only: each point holds until the next. The first point may be the state as of ``since``."""

    topic: str
    partition: int
    committed: list[CommittedPointOut]
    log: list[LogPointOut]


class GroupHistory(BaseModel):
    cluster: str
    group: str
    since: float | None
    until: float | None
    partitions: list[PartitionHistory]


class OffsetAt(BaseModel):
    topic: str
    partition: int
    offset: int
    leader_epoch: int | None
    committed_at: float  # when the group committed this value (the stored change)


class OffsetsAt(BaseModel):
    cluster: str
    group: str
    time: float
    offsets: list[OffsetAt]
