"""The next :class:`DetectionState`: the previous one with this cycle's observations folded in (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from operator import itemgetter

from alerts.counters import counter_values, unclean_counter_seen_at
from alerts.current import observed_retention_seconds
from alerts.history import OffsetHistory, carried, fold_ranges, sampled_each
from alerts.recreation import pruned
from alerts.state import (
    CommitKey,
    DetectionState,
    OffsetSample,
    PartitionKey,
    PartitionsSeen,
    PendingLoss,
    PendingRewind,
    Ranged,
)
from alerts.sweep import sweeping
from alerts.thresholds import Thresholds
from alerts.topic_change import id_changed
from alerts.view import View

_TOPIC = itemgetter(0)  # a PartitionKey's topic


def advance(
    view: View,
    now: float,
    thresholds: Thresholds,
    pending: tuple[tuple[PendingRewind, ...], tuple[PendingLoss, ...]],
) -> DetectionState:
    """What the caller keeps for the next cycle. Anything not observed this cycle keeps its old value.
    ``pending``: the rewinds and losses still held (:func:`~alerts.rewind.rewind_outcomes`,
    :func:`~alerts.lost.loss_outcomes`)."""
    previous, inputs, rp = view.previous, view.inputs, view.replayed
    keep = thresholds.history_samples
    partitions = dict(previous.partitions)
    ranges = dict(previous.ranges)
    ranged = view.ranged
    partitions.update(ranged)
    seen = previous.seen
    at: float | None
    if inputs.offsets is not None:
        # every partition of the offsets observation observed now; the others (if any) when last observed
        at = inputs.offsets.observed_at
        other = (
            {k: seen.of(k) for k in partitions.keys() - ranged.keys()}
            if len(partitions) > len(ranged)
            else {}
        )
    else:
        at, other = seen.at, dict(seen.other)
    for key in view.unconfirmed:
        # a log end gone back, its topic not told yet (alerts.topic_change): the point from before stays
        # until metadata says whether it is a truncation or another topic
        partitions[key] = previous.partitions[key]
        other[key] = seen.of(key)
    if inputs.offsets is not None:
        # Every partition of the offsets observation has its log range, observed now: its range history
        # takes the sample, unless it only goes on with the run of its range (then the partition's point,
        # kept beside it, is the run's end: alerts.history.fold_ranges).
        fold_ranges(
            ranges,
            ranged,
            inputs.offsets.observed_at,
            previous.partitions,
            seen,
            keep,
            view.unconfirmed,
            _unsettled(view),
        )
    for key, cur in view.unranged.items():
        old = partitions.get(key)
        if old is not None and (old.log_end is not None or cur.leader is None) and not id_changed(old, cur):
            # Metadata only (or the partition offline): keep the leader and ISR observed with the last log
            # range, so a leader change is judged together with the log end it brings (the next offsets
            # observation), and an offline spell (no in-sync replica left: what precedes an unclean
            # election) does not erase who led and who was in sync before it. Under a new topic id the
            # partition is another one (a topic re-created): nothing of the old one is kept.
            cur, cur_at = old, seen.of(key)
        else:
            cur_at = view.observed_at(key)
        partitions[key] = cur
        other[key] = cur_at
        observed = inputs.offsets is not None and cur_at == inputs.offsets.observed_at
        if observed and cur.log_start is not None and cur.log_end is not None:
            before = previous.partitions.get(key)
            before_at = seen.of(key) if before is not None else cur_at
            ranges[key] = carried(ranges.get(key), before, before_at, cur, cur_at, keep)
    if inputs.metadata is not None and not inputs.metadata.failures:
        topics = {t.name for t in inputs.metadata.topics}
        # the topics of the partitions gathered in C first: a walk only when one is no longer listed
        gone = set(map(_TOPIC, partitions)) - topics
        for key in [k for k in partitions if k.topic in gone] if gone else ():
            del partitions[key]
            ranges.pop(key, None)
            other.pop(key, None)
    spacing = thresholds.history_spacing_seconds
    full = spacing <= 0 or sweeping(view, now, thresholds)
    if full:
        history = sampled_each(previous.commit_history, rp.commits, now, keep, spacing, _sampled)
    else:
        # Between sweeps only the group-partitions this cycle changed are sampled: an unmoved offset's
        # history is refreshed (its newest sample moved to now, once ``spacing`` old) at the next sweep.
        history = dict(previous.commit_history)
        for changed in rp.changed:
            moved = rp.commits.get(changed)
            if moved is None:
                history.pop(changed, None)
            else:
                kept = previous.commit_history.get(changed, ())
                history[changed] = (
                    kept.sampled(now, moved.offset, keep, spacing)  # what _sampled calls, one call fewer
                    if type(kept) is OffsetHistory
                    else _sampled(kept, now, moved.offset, keep, spacing)
                )
    sighting = view.seen
    seen = PartitionsSeen(at, other)
    recreated = pruned(
        view.recreated,
        inputs,
        partitions,
        seen,
        rp.commits if full else None,  # whether each group is back inside the log: judged when sweeping
        now,
        view.retention_seconds,
    )
    return DetectionState(
        partitions=partitions,
        seen=seen,
        ranges=ranges,
        commits=rp.commits,
        commit_history=history,
        groups=rp.groups,
        counters={**previous.counters, **counter_values(inputs.metrics)},
        pending_rewinds=pending[0],
        pending_losses=pending[1],
        tail_positions=rp.tail_positions,
        tombstoned=_unexpired(rp.tombstoned, inputs.committed.observed_at if inputs.committed else None),
        committed_polled_at=inputs.committed.observed_at
        if inputs.committed
        else previous.committed_polled_at,
        offsets_retention_seconds=observed_retention_seconds(inputs) or previous.offsets_retention_seconds,
        unclean_counter_seen_at=unclean_counter_seen_at(previous.unclean_counter_seen_at, inputs.metrics),
        offsets_seen_at=sighting.offsets_seen_at,
        blind_spans=sighting.blind_spans,
        recreated=recreated,
        polled=rp.polled,
        ranged=previous.ranged
        if inputs.offsets is None
        else Ranged(inputs.offsets.partitions, inputs.metadata, ranged, view.moved),
    )


def _unsettled(view: View) -> frozenset[PartitionKey] | None:
    """The partitions whose range history may not end in a run of their point's range, if known: those
    whose point moved now or at the last offsets observation (a history given a new range takes a second
    sample of it, a run, at the next observation), and the unconfirmed ones (always folded). Every other
    one's point and history are what the last observation left, a run of the same range."""
    last = view.previous.ranged
    if view.moved is None or last is None or last.moved is None:
        return None
    return view.moved | last.moved | view.unconfirmed


def _sampled(
    kept: Sequence[OffsetSample], now: float, offset: int, keep: int, spacing: float
) -> Sequence[OffsetSample]:
    """``kept`` with ``(now, offset)`` folded in: samples at least ``spacing`` apart, the newest kept.

    An offset that has not moved since a sample less than ``spacing`` old adds nothing (and costs no copy
    of the history): the caller's own current sample stands for it. A run of samples with the same offset
    keeps its first and last (as :meth:`~alerts.history.RangeHistory.ranged` does for log ranges): an
    idle group-partition's history stays two samples however long it is idle, and a rate over it is what
    it was with every sample kept. A sample less than ``spacing`` after the one before it is replaced by
    the next.
    """
    if isinstance(kept, OffsetHistory):
        return kept.sampled(now, offset, keep, spacing)  # the same, read in place
    if not kept:
        return OffsetHistory.of(()).appended(OffsetSample(now, offset), keep)
    last = kept[-1]
    if last.offset == offset:
        if spacing > 0 and now - last.at < spacing:
            return kept
        if len(kept) >= 2 and kept[-2].offset == offset:
            return OffsetHistory.of(kept).with_last(OffsetSample(now, offset))
    history = OffsetHistory.of(kept)
    if spacing > 0 and keep >= 3 and len(kept) >= 2 and last.at - kept[-2].at < spacing:
        # the newest is closer than ``spacing`` to the one before: the new sample takes its place (as
        # appending, trimming to ``keep`` and then dropping it would)
        return history.with_last(OffsetSample(now, offset)).trimmed(keep - 1)
    return history.appended(OffsetSample(now, offset), keep)


def _unexpired(tombstoned: Mapping[CommitKey, float], polled_at: float | None) -> Mapping[CommitKey, float]:
    """The tombstones a later poll could still contradict: none once a poll taken after them is applied
    (polls are applied in the order they were taken)."""
    if polled_at is None or not tombstoned:
        return tombstoned
    return {k: at for k, at in tombstoned.items() if at >= polled_at}
