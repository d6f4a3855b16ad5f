"""Which partitions belong to a re-created topic, and since when (``DetectionState.recreated``): what
:mod:`alerts.log_range` needs to tell a commit left over from a deleted topic from one a truncation passed.

A partition's topic is gone when a complete metadata observation no longer lists it, or when the
partition is observed under another topic id (:mod:`alerts.topic_change`). Whatever is observed of the
partition after that is another topic of the same name: a re-creation (a consumer's or producer's
auto-create, or an operator). Its id comes from metadata; ranges of a topic created since the last
metadata observation carry none, so it may be known only later. Kept per partition: the old and new ids,
when the old topic was seen gone and when the new one was first observed.

Bounded: a partition seen again is dropped once metadata taken since shows it gone again (a deletion
takes its place) or once every group committed on it is back inside its log; one never seen again is
dropped after the offsets retention period, and at most :data:`MAX_UNSEEN` of those are kept (the oldest
go first).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from alerts.state import (
    CommitKey,
    CommitPoint,
    CycleInputs,
    DetectionState,
    PartitionKey,
    PartitionPoint,
    PartitionsSeen,
    Recreation,
    partition_key,
)
from alerts.topic_change import DELETED, TopicChange, id_changed

MAX_UNSEEN = 10_000  # deleted partitions not seen again, kept at most


def recreations(
    previous: DetectionState,
    inputs: CycleInputs,
    changes: tuple[TopicChange, ...],
    current: Mapping[PartitionKey, PartitionPoint],
    observed_at: Callable[[PartitionKey], float],
) -> Mapping[PartitionKey, Recreation]:
    """``previous.recreated`` with this cycle's observations (its topic ``changes`` and ``current``
    partitions, each observed when ``observed_at`` says: :mod:`alerts.view`): topics seen gone,
    partitions seen again."""
    if not changes and not previous.recreated:
        return previous.recreated  # the common case
    out = dict(previous.recreated)
    for key, entry in previous.recreated.items():
        cur = current.get(key)
        if cur is None:
            continue
        at = observed_at(key)
        if entry.seen_at is None and at > entry.gone_at and _new(entry, cur):
            # observed after its topic was seen deleted: another topic, its id known or not yet
            out[key] = replace(entry, new_id=cur.topic_id, seen_at=at)
        elif entry.seen_at is not None and entry.new_id is None and _other(entry, cur):
            out[key] = replace(entry, new_id=cur.topic_id)  # its id, now that metadata lists it
    meta = inputs.metadata
    for change in changes:
        for p, old in change.last.items():
            key = PartitionKey(change.topic, p)
            if change.cause == DELETED:
                if meta is not None:
                    out[key] = Recreation(old.topic_id, None, meta.observed_at)
                continue
            cur = current.get(key)
            if cur is not None and id_changed(old, cur):
                # the point carries metadata's new id: seen under it since the earlier of the two
                at = min(meta.observed_at, observed_at(key)) if meta is not None else observed_at(key)
                out[key] = Recreation(old.topic_id, cur.topic_id, at, at)
    return out


def _other(entry: Recreation, cur: PartitionPoint) -> bool:
    """``cur`` is listed under a topic id, not the deleted one's."""
    return cur.topic_id is not None and cur.topic_id != entry.old_id


def _new(entry: Recreation, cur: PartitionPoint) -> bool:
    """``cur``, observed after the deletion, is not listed under the deleted topic's id (metadata taken
    since it does not list the topic, or lists it under another id)."""
    return cur.topic_id is None or _other(entry, cur)


def pruned(
    entries: Mapping[PartitionKey, Recreation],
    inputs: CycleInputs,
    partitions: Mapping[PartitionKey, PartitionPoint],
    seen: PartitionsSeen,
    commits: Mapping[CommitKey, CommitPoint] | None,
    now: float,
    keep_unseen_seconds: float,
) -> Mapping[PartitionKey, Recreation]:
    """The entries still worth keeping, given the next state's ``partitions`` (observed when ``seen``
    says) and ``commits`` (None: not
    judged this time, every entry seen again is kept): a partition seen again stays until a complete
    metadata observation taken since no longer lists its topic (its ranges may come before metadata lists
    it) or every group committed on it is inside its log (none committed yet: the stale commit may come);
    one never seen again stays ``keep_unseen_seconds``."""
    if not entries:
        return entries
    meta = inputs.metadata
    listed = {t.name for t in meta.topics} if meta is not None and not meta.failures else None
    out: dict[PartitionKey, Recreation] = {}
    unseen = []
    for key, entry in entries.items():
        if entry.seen_at is None:
            if now - entry.gone_at < keep_unseen_seconds:
                unseen.append((entry.gone_at, key))
        elif listed is None or meta is None or meta.observed_at <= entry.seen_at or key.topic in listed:
            out[key] = entry
    if commits is not None and out:
        inside: dict[PartitionKey, bool] = {}
        for ck, point in commits.items():
            pk = partition_key(ck)
            if pk in out and inside.get(pk, True):
                r = partitions.get(pk)
                inside[pk] = r is not None and _inside(point, r, seen.of(pk), out[pk])
        for pk, all_inside in inside.items():
            if all_inside:
                del out[pk]
    for _, key in sorted(unseen)[-MAX_UNSEEN:]:
        out[key] = entries[key]
    return out


def _inside(point: CommitPoint, r: PartitionPoint, r_at: float, entry: Recreation) -> bool:
    """``point`` is not beyond the log end of the re-created topic as observed (``r``, at ``r_at``) since
    it was seen."""
    seen = entry.seen_at is not None and r_at >= entry.seen_at
    return seen and r.log_end is not None and point.offset <= r.log_end
