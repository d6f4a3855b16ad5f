"""The current cycle's observations as detector-friendly maps, plus the range history helpers."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from itertools import compress, count
from operator import and_, is_, is_not, not_

from alerts.drafts import PartitionPointDraft
from alerts.history import RangeHistory, through
from alerts.memo import per_object
from alerts.state import (
    CommitKey,
    CommitPoint,
    CycleInputs,
    DetectionState,
    PartitionKey,
    PartitionPoint,
    Ranged,
    RangeSample,
)
from alerts.thresholds import Thresholds
from collectors.model import ClusterMetadata, CommittedOffset, GroupInfo, PartitionInfo, PartitionOffsets

RETENTION_KEY = "offsets.retention.minutes"


def current_partitions(inputs: CycleInputs) -> Mapping[PartitionKey, PartitionPoint]:
    """Log ranges from the offsets observation joined with leader/epoch/ISR from metadata; then the
    partitions only metadata has (no log range). An evaluation builds it once (:mod:`alerts.view`)."""
    ranged = ranged_partitions(inputs)
    return joined(ranged, unranged_partitions(inputs, ranged))


def joined(
    ranged: Mapping[PartitionKey, PartitionPoint], unranged: Mapping[PartitionKey, PartitionPoint]
) -> Mapping[PartitionKey, PartitionPoint]:
    """The current partitions: ``ranged`` then ``unranged`` (``ranged`` itself in the common case)."""
    return {**ranged, **unranged} if unranged else ranged


def ranged_partitions(
    inputs: CycleInputs, last: Ranged | None = None
) -> Mapping[PartitionKey, PartitionPoint]:
    """The partitions of the offsets observation (each with its log range), joined with metadata.

    ``last``: the last offsets observation folded in (:attr:`~alerts.state.DetectionState.ranged`). When
    this one lists as many partitions joined with the same topics (:func:`same_topics`), a partition
    the offsets collector hands as the same object again at the same place keeps its point of ``last``
    (built of nothing else); only the others are built. At 20,000 partitions with a few hundred moving,
    a walk in C and a few hundred points instead of 20,000 (a new metadata observation as well); nothing
    moved, ``last``'s very points."""
    offsets = inputs.offsets
    if offsets is None:
        return {}
    now = offsets.partitions
    if (
        last is None
        or not same_topics(last.metadata, inputs.metadata)
        or not len(now) == len(last.offsets) == len(last.points)
    ):
        return _built(inputs, now)
    changed = list(compress(count(), map(is_not, now, last.offsets)))
    if not changed:
        return last.points
    fresh = _built(inputs, [now[i] for i in changed])
    keys = list(last.points)
    if len(fresh) != len(changed) or any(keys[i] != key for i, key in zip(changed, fresh, strict=True)):
        return _built(inputs, now)  # another partition at a moved one's place: built afresh
    out = dict(last.points)
    out.update(fresh)
    return out


def _built(inputs: CycleInputs, offsets: Sequence[PartitionOffsets]) -> dict[PartitionKey, PartitionPoint]:
    """The points of ``offsets``, joined with metadata."""
    index, topic_ids = metadata_index(inputs.metadata) if inputs.metadata is not None else ({}, {})
    out: dict[PartitionKey, PartitionPoint] = {}
    get = index.get
    for o in offsets:
        found = get((o.topic, o.partition))
        if found is None:
            key = PartitionKey(o.topic, o.partition)
            draft = PartitionPointDraft(
                o.log_start, o.log_end, o.leader, o.leader_epoch, None, topic_ids.get(o.topic)
            )
        else:
            key, m, topic_id = found
            draft = PartitionPointDraft(o.log_start, o.log_end, m.leader, m.leader_epoch, m.isr, topic_id)
        draft.__class__ = PartitionPoint  # type: ignore[assignment]  # frozen from here on
        out[key] = draft  # type: ignore[assignment]
    return out


def unranged_partitions(
    inputs: CycleInputs, ranged: Mapping[PartitionKey, PartitionPoint]
) -> Mapping[PartitionKey, PartitionPoint]:
    """The partitions metadata lists and ``ranged`` (:func:`ranged_partitions`) does not (leader, epoch,
    ISR only), observed at the metadata's time."""
    if inputs.metadata is None:
        return {}
    if not metadata_keys(inputs.metadata).difference(ranged):
        return {}  # the common case: offsets observed every partition metadata lists (a set difference)
    index, _ = metadata_index(inputs.metadata)
    return {
        key: PartitionPoint(None, None, m.leader, m.leader_epoch, m.isr, topic_id)
        for key, m, topic_id in index.values()
        if key not in ranged
    }


def observed_at(
    inputs: CycleInputs, ranged: Mapping[PartitionKey, PartitionPoint], key: PartitionKey
) -> float:
    """When ``key``'s current point was observed: the offsets observation's time if it is of ``ranged``
    (:func:`ranged_partitions`), else the metadata's (:func:`unranged_partitions`)."""
    observed = inputs.offsets if key in ranged else inputs.metadata
    assert observed is not None, key
    return observed.observed_at


def moved_partitions(
    previous: DetectionState, inputs: CycleInputs, ranged: Mapping[PartitionKey, PartitionPoint]
) -> frozenset[PartitionKey] | None:
    """The partitions of ``ranged`` (this observation's points, :func:`ranged_partitions`) whose point
    may differ from ``previous``'s in more than its observation time; None if not known (then any may).

    Known when this observation lists as many partitions as the last one ``previous`` folded in
    (:class:`~alerts.state.Ranged`), joined with the same topics (:func:`same_topics`): a partition the
    offsets collector hands as the same object again at the same place, whose point in ``previous`` is
    the very one built of it last time, has the same point now but for the time
    (:func:`ranged_partitions` builds it of nothing else). Two identity tests a partition, in C: at
    20,000 partitions with a few hundred moving, what spares :func:`shifted_partitions` and
    :func:`alerts.history.fold_ranges` a walk of all."""
    last, offsets = previous.ranged, inputs.offsets
    if last is None or offsets is None or not same_topics(inputs.metadata, last.metadata):
        return None
    now, was = offsets.partitions, last.offsets
    if not len(now) == len(was) == len(ranged) == len(last.points):  # each key once, in the same places
        return None
    same_source = map(is_, now, was)
    same_point = map(is_, map(previous.partitions.get, ranged), last.points.values())
    return frozenset(compress(ranged, map(not_, map(and_, same_source, same_point))))


def shifted_partitions(
    previous: DetectionState,
    partitions: Mapping[PartitionKey, PartitionPoint],
    keys: Iterable[PartitionKey] | None = None,
) -> frozenset[PartitionKey]:
    """The partitions of ``partitions`` known before whose leader changed or whose log end went back:
    all that ``log_truncation``, ``unclean_leader_election`` and the unconfirmed resets
    (:mod:`alerts.topic_change`) look at, found in one walk for the three (a few of 20,000, if any).
    ``keys``: the only ones of ``partitions`` that may have (the others' points unchanged), if known."""
    get = previous.partitions.get
    out = []
    pairs = partitions.items() if keys is None else [(k, partitions[k]) for k in keys]
    for key, cur in pairs:
        old = get(key)
        if old is None:
            continue
        if old.leader != cur.leader:
            out.append(key)
            continue
        end, was = cur.log_end, old.log_end
        if end is not None and was is not None and end < was:
            out.append(key)
    return frozenset(out)


def same_topics(a: ClusterMetadata | None, b: ClusterMetadata | None) -> bool:
    """Whether two metadata observations hold the very same topics (the collector's, while none changed)."""
    return a is b or (a is not None and b is not None and a.topics is b.topics)


@per_object(slot=lambda metadata: metadata.cluster, by=lambda metadata: metadata.topics)
def metadata_index(
    metadata: ClusterMetadata,
) -> tuple[
    Mapping[tuple[str, int], tuple[PartitionKey, PartitionInfo, str | None]], Mapping[str, str | None]
]:
    """Each partition of ``metadata`` by (topic, partition): its key, its info and its topic's id; and
    the topic ids. Built once per topics tuple (a metadata observation's, handed again by the collector
    while no topic changes)."""
    topic_ids = {t.name: t.topic_id for t in metadata.topics}
    index = {
        (p.topic, p.partition): (PartitionKey(p.topic, p.partition), p, topic_ids[t.name])
        for t in metadata.topics
        for p in t.partitions
    }
    return index, topic_ids


@per_object(slot=lambda metadata: metadata.cluster, by=lambda metadata: metadata.topics)
def metadata_keys(metadata: ClusterMetadata) -> frozenset[PartitionKey]:
    """Every partition ``metadata`` lists (built once per topics tuple, as :func:`metadata_index`)."""
    return frozenset(key for key, _, _ in metadata_index(metadata)[0].values())


def committed_of(
    commits: Mapping[CommitKey, CommitPoint], keys: Iterable[CommitKey] | None
) -> Iterable[tuple[CommitKey, CommitPoint]]:
    """``commits``' items, or those of ``keys`` still committed (a rule judging only what changed; one
    lookup a key: at --churn 1 every rule asks it of ~12,500 keys an evaluation)."""
    if keys is None:
        return commits.items()
    get = commits.get
    return [(k, point) for k in keys if (point := get(k)) is not None]


def current_committed(inputs: CycleInputs) -> dict[CommitKey, CommittedOffset]:
    if inputs.committed is None:
        return {}
    return {CommitKey(c.group, c.topic, c.partition): c for c in inputs.committed.offsets}


def current_groups(inputs: CycleInputs) -> dict[str, GroupInfo]:
    return {} if inputs.groups is None else {g.group_id: g for g in inputs.groups.groups}


def observed_retention_seconds(inputs: CycleInputs) -> float | None:
    """``offsets.retention.minutes`` (in seconds) if this cycle's configs observation reports it."""
    if inputs.configs is not None:
        for name, value in inputs.configs.broker:
            if name == RETENTION_KEY:
                try:
                    return int(value) * 60.0
                except ValueError:
                    return None
    return None


def offsets_retention_seconds(previous: DetectionState, inputs: CycleInputs, thresholds: Thresholds) -> float:
    """``offsets.retention.minutes`` as the broker last reported it (this cycle or an earlier one: configs
    are polled rarely), else the configured fallback."""
    observed = observed_retention_seconds(inputs)
    if observed is not None:
        return observed
    if previous.offsets_retention_seconds is not None:
        return previous.offsets_retention_seconds
    return thresholds.offsets_retention_minutes * 60.0


def range_history(state: DetectionState, key: PartitionKey) -> RangeHistory:
    """The partition's range history in ``state``, its newest sample the partition's last observation
    (:attr:`~alerts.state.DetectionState.ranges` keeps an idle partition's run as it was when it began:
    :func:`alerts.history.fold_ranges`)."""
    point = state.partitions.get(key)
    return through(state.ranges.get(key), point, state.seen.of(key) if point is not None else 0.0)


def samples(
    previous: DetectionState, key: PartitionKey, now_point: PartitionPoint | None, now_at: float
) -> Sequence[RangeSample]:
    """The partition's range history, oldest first, ending with the current observation if any
    (``now_point``, observed at ``now_at``; a :class:`~alerts.history.RangeHistory`: the state's arrays,
    not a copy)."""
    out = range_history(previous, key)
    if now_point is not None and now_point.log_start is not None and now_point.log_end is not None:
        out = out.plus(RangeSample(now_at, now_point.log_start, now_point.log_end))
    return out


def out_of_range_reason(
    offset: int, committed_at: float, moved_after: float, history: Iterable[RangeSample]
) -> str | None:
    """Why ``offset`` (committed at ``committed_at``) was unfetchable before its move after ``moved_after``.

    Below the log start counts from any sample taken before the move (log start only grows, so a commit
    below it was already out of range); a later sample proves nothing, the group may have read on first.
    Beyond the log end counts only from samples taken after the commit: before it, a smaller log end is
    ordinary growth.
    """
    if isinstance(history, RangeHistory) and not history.may_be_out_of_range(
        offset, committed_at, moved_after
    ):
        return None  # the common case (a group reading on), answered without walking every sample
    for s in history:
        if s.at <= moved_after and offset < s.log_start:
            return "below_log_start"
        if s.at >= committed_at and offset > s.log_end:
            return "beyond_log_end"
    return None


def bracket(history: Sequence[RangeSample], at: float) -> tuple[RangeSample | None, RangeSample | None]:
    """The last sample before ``at`` and the first one at or after it."""
    before = [s for s in history if s.at < at]
    after = [s for s in history if s.at >= at]
    return (before[-1] if before else None, after[0] if after else None)


def near(value: int, a: int | None, b: int | None) -> bool:
    """``value`` lies between two observations of a growing quantity (either may be missing)."""
    known = [x for x in (a, b) if x is not None]
    return bool(known) and min(known) <= value <= max(known)
