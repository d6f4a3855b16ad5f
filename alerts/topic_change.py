"""Which topics were deleted or re-created between the previous state and this cycle, and which log ends
went back under a topic id not confirmed yet: the view :mod:`alerts.topic_events`, :mod:`alerts.lost`,
:mod:`alerts.truncation`, :mod:`alerts.unclean` and :mod:`alerts.advance` share.

A topic is **deleted** when a complete metadata observation no longer lists it, **re-created** when a
partition is observed under another topic id than the one it had (both known: metadata v10+). A log
range is joined with the latest metadata, which the service takes every 30 s while it takes log ranges
every 5 s: the first ranges of a topic re-created (a consumer's auto-create) after a deletion carry the
*old* id. A log end that went back is therefore judged only once a metadata observation taken at or
after the first range that showed it says which topic it belongs to (at most ``topic_confirm_seconds``),
or at once when the range's leader epoch is newer than the last one's (:func:`newer_epoch`); until then
the state keeps the partition's last point from before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter, itemgetter

from alerts.current import ranged_partitions, samples
from alerts.state import CycleInputs, DetectionState, PartitionKey, PartitionPoint
from alerts.thresholds import Thresholds

DELETED = "deleted"
RECREATED = "recreated"


@dataclass(frozen=True, slots=True)
class TopicChange:
    """A topic deleted or re-created; ``last`` holds its partitions as last observed before, ``last_at``
    when each was."""

    topic: str
    cause: str  # DELETED or RECREATED
    old_id: str | None
    new_id: str | None  # RECREATED only
    last: Mapping[int, PartitionPoint]
    last_at: Mapping[int, float]


def id_changed(old: PartitionPoint | None, cur: PartitionPoint | None) -> bool:
    """Both points carry a topic id, and they differ: not the same topic."""
    return (
        old is not None
        and cur is not None
        and old.topic_id is not None
        and cur.topic_id is not None
        and old.topic_id != cur.topic_id
    )


def asked_epoch(inputs: CycleInputs, key: PartitionKey) -> int | None:
    """The leader epoch the partition's leader answered the log range with (ListOffsets), not the
    metadata's: the range's own, however old the metadata it is handed with."""
    offsets = inputs.offsets
    if offsets is None:
        return None
    return next(
        (o.leader_epoch for o in offsets.partitions if o.topic == key.topic and o.partition == key.partition),
        None,
    )


def newer_epoch(old: PartitionPoint, epoch: int | None) -> bool:
    """The range comes from a later leader epoch of the same partition: a log end that went back with it is
    a truncation by that leader (an unclean election), told at once, without waiting for metadata (which
    may fail for a while when brokers are down: a truncation judged late is judged after the consumers
    reset, and names no group beyond the log end). A re-created topic's epochs start at 0 again, so a
    range of it under a higher epoch than the old topic's last is possible only after leader changes in
    the new topic faster than one metadata interval."""
    return old.leader_epoch is not None and epoch is not None and epoch > old.leader_epoch


def same_epoch_or_older(old: PartitionPoint, epoch: int | None) -> bool:
    """The range's leader epoch is known and not newer than the last one: a log end gone back under it is
    most likely another incarnation of the topic (re-created, epochs from 0 again; every leader change of
    the same topic starts a newer epoch). Metadata that still lists the old id then confirms nothing (a
    broker that has not applied the deletion yet answers with the old topic): the partition waits for
    metadata with the new id, at most ``topic_confirm_seconds``, and is then judged as it stands (the
    last point's epoch comes from metadata, which can run ahead of the range: never silenced for good)."""
    return old.leader_epoch is not None and epoch is not None and epoch <= old.leader_epoch


def topic_changes(
    previous: DetectionState, inputs: CycleInputs, current: Mapping[PartitionKey, PartitionPoint]
) -> tuple[TopicChange, ...]:
    """The topics deleted or re-created since the previous state, by name (``current``: this cycle's
    partitions, :func:`alerts.current.current_partitions`)."""
    meta = inputs.metadata
    listed = {t.name for t in meta.topics} if meta is not None and not meta.failures else None
    if not _may_change(previous.partitions, current, listed):
        return ()  # every evaluation but a topic's deletion or re-creation: no walk of every partition
    by_topic: dict[str, dict[int, PartitionPoint]] = {}
    for key, point in previous.partitions.items():
        by_topic.setdefault(key.topic, {})[key.partition] = point
    out = []
    seen = previous.seen.of
    for topic, last in sorted(by_topic.items()):
        last_at = {p: seen(PartitionKey(topic, p)) for p in last}
        old_ids = sorted({p.topic_id for p in last.values() if p.topic_id is not None})
        old_id = old_ids[0] if len(old_ids) == 1 else None
        if listed is not None and topic not in listed:
            out.append(TopicChange(topic, DELETED, old_id, None, last, last_at))
            continue
        new_ids = set()
        for p, old in last.items():
            cur = current.get(PartitionKey(topic, p))
            if cur is not None and cur.topic_id is not None and id_changed(old, cur):
                new_ids.add(cur.topic_id)
        if new_ids:
            out.append(TopicChange(topic, RECREATED, old_id, min(new_ids), last, last_at))
    return tuple(out)


def _may_change(
    previous: Mapping[PartitionKey, PartitionPoint],
    current: Mapping[PartitionKey, PartitionPoint],
    listed: set[str] | None,
) -> bool:
    """False when no topic of ``previous`` can be deleted (every one ``listed``, or nothing listed) or
    re-created (no topic has one id in ``previous`` and another in ``current``): the (topic, topic id)
    pairs of both, a few hundred, built in C instead of a Python step per partition."""
    if listed is None and not current:
        return False  # nothing listed, nothing observed (an evaluation of commits only)
    was = _topic_ids(previous)
    if listed is not None and not {topic for topic, _ in was} <= listed:
        return True
    now: dict[str, set[str]] = {}
    for topic, topic_id in _topic_ids(current):
        if topic_id is not None:
            now.setdefault(topic, set()).add(topic_id)
    return any(topic_id is not None and now.get(topic, {topic_id}) != {topic_id} for topic, topic_id in was)


_TOPIC = itemgetter(0)
_TOPIC_ID = attrgetter("topic_id")


def _topic_ids(partitions: Mapping[PartitionKey, PartitionPoint]) -> set[tuple[str, str | None]]:
    return set(zip(map(_TOPIC, partitions.keys()), map(_TOPIC_ID, partitions.values()), strict=True))


def unconfirmed_resets(
    previous: DetectionState,
    inputs: CycleInputs,
    thresholds: Thresholds,
    ranged: Mapping[PartitionKey, PartitionPoint] | None = None,
    shifted: Iterable[PartitionKey] | None = None,
) -> frozenset[PartitionKey]:
    """Partitions whose log end went back under a topic id no metadata confirmed since (a topic
    re-created, or truncated: not told yet). Judged later; at most ``topic_confirm_seconds`` after the
    first range that showed it, they are judged with what is known then. ``ranged``: this cycle's
    :func:`~alerts.current.ranged_partitions`, if already built; ``shifted``: the partitions whose log end
    went back (among others) since ``previous``, if known (:func:`~alerts.current.shifted_partitions`)."""
    out = set()
    meta = inputs.metadata
    if ranged is None:
        ranged = ranged_partitions(inputs)
    pairs = ranged.items() if shifted is None else [(k, ranged[k]) for k in shifted if k in ranged]
    for key, cur in pairs:
        assert inputs.offsets is not None  # ``ranged`` is of it
        cur_at = inputs.offsets.observed_at
        old = previous.partitions.get(key)
        if old is None or old.log_end is None or cur.log_end is None or cur.log_end >= old.log_end:
            continue
        if old.topic_id is None or id_changed(old, cur):
            continue  # no id to tell it by; or confirmed: another topic
        if newer_epoch(old, asked_epoch(inputs, key)):
            continue  # the same topic: a new topic's leader epochs start again at 0
        old_at = previous.seen.of(key)
        first = next(
            (s.at for s in samples(previous, key, cur, cur_at) if s.at > old_at and s.log_end < old.log_end),
            cur_at,
        )
        if (
            meta is not None
            and meta.observed_at >= first
            and not same_epoch_or_older(old, asked_epoch(inputs, key))
        ):
            continue  # metadata taken since the range went back: its id is the range's
        if cur_at - first >= thresholds.topic_confirm_seconds:
            continue
        out.add(key)
    return frozenset(out)
