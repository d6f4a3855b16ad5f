"""What a sweep (:mod:`alerts.sweep`) need not judge again: the group-partitions whose lag judgement
stands (:func:`alerts.lag_alerts.lag_judgements`), and what changed since the last judgement."""

from __future__ import annotations

from collections.abc import Mapping
from operator import attrgetter

from alerts.lag_alerts import lag_judgements
from alerts.model import Finding
from alerts.state import CommitKey, CommitPoint, PartitionKey, PartitionPoint, Swept
from alerts.thresholds import Thresholds
from alerts.view import View

Ranges = Mapping[PartitionKey, tuple[int | None, int | None]]


def lag_swept(
    last: Swept | None,
    view: View,
    now: float,
    thresholds: Thresholds,
    ranges: Ranges,
    by_partition: Mapping[PartitionKey, tuple[CommitKey, ...]],
) -> tuple[dict[CommitKey, tuple[Finding, ...]], Mapping[CommitKey, float]]:
    """Lag judged at a sweep: every group-partition but those still quiet (judged without a finding, by
    when none can be found not passed, their inputs unchanged since)."""
    if last is None or not last.lag_quiet or view.seen.blind_spans != last.blind_spans or now < last.at:
        return lag_judgements(view, now, thresholds)
    commits = view.replayed.commits
    kept = last.lag_quiet
    judge = set(last.unjudged)
    judge.update(moved_since(last, view))
    for pk in ranges_changed(last.ranges, ranges):
        judge.update(by_partition.get(pk, ()))
        judge.update(last.by_partition.get(pk, ()))
    judge.update([k for k, until in kept.items() if until <= now])  # a loop that builds nothing per key
    judge = {k for k in judge if k in commits}
    judge.update(commits.keys() - kept.keys())  # found something last time, or never judged
    gone = kept.keys() - commits.keys() if len(kept) > len(commits) - len(judge) else set()
    lag, fresh = lag_judgements(view, now, thresholds, judge)
    return lag, requieted(kept, judge | gone, fresh)


def moved_since(last: Swept, view: View) -> set[CommitKey]:
    """The group-partitions whose committed offset changed since ``last`` (this evaluation's replay)."""
    rp = view.replayed
    if last.commits is view.previous.commits:  # replay says what it changed
        return set(rp.changed)
    moved = changed_keys(last.commits, rp.commits)  # a state from elsewhere: compare
    moved.update(k for k in last.commits if k not in rp.commits)
    return moved


def ranges_of(
    partitions: Mapping[PartitionKey, PartitionPoint],
) -> dict[PartitionKey, tuple[int | None, int | None]]:
    """Each partition's log start and end."""
    return dict(zip(partitions.keys(), map(_RANGE, partitions.values()), strict=True))


_RANGE = attrgetter("log_start", "log_end")


def ranges_now(last: Swept, view: View) -> tuple[set[PartitionKey], Ranges]:
    """This evaluation's log ranges (:func:`ranges_of` ``view.partitions``) and those changed since
    ``last.ranges`` (:func:`ranges_changed`). Read off the partitions that moved (``view.moved``) when
    ``last.ranges`` were read off the very points the last offsets observation left, as many as now: every
    other partition has the range it had then."""
    base, moved, was, partitions = view.previous.ranged, view.moved, last.ranges, view.partitions
    if moved is None or base is None or last.ranges_of is not base.points or len(was) != len(partitions):
        now = ranges_of(partitions)
        return ranges_changed(was, now), now
    fresh = {}
    for pk in moved:
        if pk not in was:  # a partition new since (and another gone): compare them all
            now = ranges_of(partitions)
            return ranges_changed(was, now), now
        p = partitions[pk]
        fresh[pk] = (p.log_start, p.log_end)
    changed = {pk for pk, r in fresh.items() if was[pk] != r}
    out = dict(was) if type(was) is not dict else was.copy()
    out.update(fresh)
    return changed, out


def ranges_changed(was: Ranges, now: Ranges) -> set[PartitionKey]:
    """The partitions whose range changed, or that are gone or new. (A loop that builds nothing per
    partition: a set difference of the items builds a tuple for each, and at fleet scale the allocations
    alone start collections of the old generations.)"""
    get = was.get
    changed = {pk for pk, r in now.items() if get(pk) != r}
    # none gone when as many are ranged now as then and each changed one was ranged then (an unchanged one
    # was, with its range): the key sets are equal, told without hashing each of 20,000 keys again
    if len(was) != len(now) or any(pk not in was for pk in changed):
        changed.update(was.keys() - now.keys())
    return changed


def requieted(
    kept: Mapping[CommitKey, float], judged: set[CommitKey], fresh: Mapping[CommitKey, float]
) -> Mapping[CommitKey, float]:
    """``kept`` with the ``judged`` keys' entries replaced by ``fresh`` (``kept`` itself if none)."""
    if not judged:
        return kept
    # dict.copy, not dict(): the entries popped last time leave holes in the table, and dict() of a dict
    # with holes inserts every key again (hashing each: ~7 ms at 50,000) where copy() clones the table
    out = kept.copy() if type(kept) is dict else dict(kept)
    for k in judged:
        out.pop(k, None)
    out.update(fresh)
    return out


def changed_keys(
    judged: Mapping[CommitKey, CommitPoint], commits: Mapping[CommitKey, CommitPoint]
) -> set[CommitKey]:
    """The group-partitions committed now whose point is not the one last judged (new ones included)."""
    return {k for k, point in commits.items() if judged.get(k) is not point}
