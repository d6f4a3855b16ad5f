"""Literal-data builders for detector inputs: one cluster ``c``, one topic ``t`` unless said otherwise."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from alerts.model import CommitEvent, Finding, GroupEvent
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds
from collectors.model import (
    BrokerMetrics,
    ClusterMetadata,
    CommittedObservation,
    CommittedOffset,
    GroupInfo,
    GroupMember,
    GroupsObservation,
    MetricSample,
    MetricsObservation,
    OffsetsObservation,
    PartitionInfo,
    PartitionOffsets,
    TopicInfo,
    TopicPartition,
)

C = "c"
T = "t"
TH = Thresholds()

Ranges = Mapping[tuple[str, int], tuple[int, int]]


def offsets(at: float, ranges: Ranges) -> OffsetsObservation:
    return OffsetsObservation(C, at, tuple(PartitionOffsets(t, p, s, e) for (t, p), (s, e) in ranges.items()))


def committed(
    at: float, values: Mapping[tuple[str, str, int], int], groups: tuple[str, ...] = ()
) -> CommittedObservation:
    offs = tuple(CommittedOffset(g, t, p, o, None) for (g, t, p), o in values.items())
    return CommittedObservation(C, at, offs, tuple(sorted({g for g, _, _ in values} | set(groups))))


def groups(
    at: float,
    states: Mapping[str, str],
    protocol_type: str = "consumer",
    assigned: Mapping[str, tuple[tuple[str, int], ...]] | None = None,
) -> GroupsObservation:
    """Classic groups in ``states``; ``assigned[g]`` gives group ``g`` one member with those partitions."""
    assigned = assigned or {}

    def members(g: str) -> tuple[GroupMember, ...]:
        if g not in assigned:
            return ()
        return (
            GroupMember(
                f"{g}-1", "client", "/10.0.0.1", None, tuple(TopicPartition(*tp) for tp in assigned[g])
            ),
        )

    return GroupsObservation(
        C,
        at,
        tuple(GroupInfo(g, "classic", s, protocol_type, "range", members(g)) for g, s in states.items()),
    )


def metadata(
    at: float,
    parts: Mapping[tuple[str, int], tuple[int | None, int, tuple[int, ...]]],
    topic_id: str | None = None,
    replicas: tuple[int, ...] = (1, 2, 3),
) -> ClusterMetadata:
    topics: dict[str, list[PartitionInfo]] = {}
    for (t, p), (leader, epoch, isr) in parts.items():
        topics.setdefault(t, []).append(PartitionInfo(t, p, leader, epoch, replicas, isr))
    infos = tuple(TopicInfo(t, t.startswith("__"), tuple(ps), topic_id) for t, ps in topics.items())
    return ClusterMetadata(C, at, "id", 1, (), infos)


def metrics(
    at: float, per_broker: Mapping[int, Mapping[str, float]], labels: Mapping[str, str] | None = None
) -> MetricsObservation:
    lab = tuple(sorted((labels or {}).items()))
    brokers = tuple(
        BrokerMetrics(f"http://b{b}", b, tuple(MetricSample(n, lab, v) for n, v in values.items()))
        for b, values in per_broker.items()
    )
    return MetricsObservation(C, at, brokers)


def commit(
    offset: int | None,
    at: float,
    source_offset: int,
    group: str = "g",
    partition: int = 0,
    generation: int | None = None,
    member_epoch: int | None = None,
    leader_epoch: int | None = None,
) -> CommitEvent:
    return CommitEvent(
        C,
        group,
        T,
        partition,
        offset,
        leader_epoch,
        int(at * 1000),
        0,
        source_offset,
        generation=generation,
        member_epoch=member_epoch,
    )


def group_event(
    state: str | None,
    at: float,
    source_offset: int,
    group: str = "g",
    generation: int = 1,
    topics: tuple[str, ...] | None = None,
) -> GroupEvent:
    """A group record; ``topics``: what its members subscribe to (None: not decodable / not said)."""
    members = ("m-1",) if state not in (None, "Empty", "Dead") else ()
    return GroupEvent(
        C, group, state, generation, "consumer", int(at * 1000), 0, source_offset, members, topics
    )


def inputs(**kw: Any) -> CycleInputs:
    return CycleInputs(C, **kw)


def run(previous: DetectionState, inp: CycleInputs, now: float, th: Thresholds = TH) -> DetectionState:
    """Advance the state through one cycle, discarding findings (to set up a scenario)."""
    from alerts.engine import evaluate

    return evaluate(previous, inp, now, th)[1]


def kinds(findings: tuple[Finding, ...]) -> list[str]:
    return [f.kind for f in findings]
