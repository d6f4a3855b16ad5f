"""The slow rules judged by what changed (``Thresholds.sweep_seconds``): lag and stall, the retention
forecast, offsets expiry.

Their limits are minutes to hours (lag 10 min, a stall 15 min, a forecast 6 h, an expiry 24 h), yet judged
in full they cost more than every other rule together: each looks at every committed group-partition,
every evaluation. With ``sweep_seconds`` > 0 they judge every group-partition (a *sweep*) at most that
often; in between, only the group-partitions whose inputs changed since they were last judged:

- their committed offset (any new :class:`~alerts.state.CommitPoint`: a commit, a re-commit, a seed);
- their partition's log range (log start, log end; a partition gone from this cycle's observation too);
- for expiry, their group (state, type, since when), judged over all the group's offsets.

Every other group-partition keeps the findings of its last judgement. What changes with time alone (lag
seconds growing past their limit, a stall, a forecast's sliding window, an expiry drawing near) is seen
at the next sweep, at most ``sweep_seconds`` late (plus the wait for an evaluation with log ranges, where
a sweep is done: see :func:`_due`); a change of what every rule measures by (a blind
spell, the broker's ``offsets.retention.minutes``) sweeps at once. ``sweep_seconds`` = 0 judges everything
every evaluation.

A sweep judges lag and stall again only where they could have changed: a group-partition whose last
judgement found nothing, and by when something could be found while its inputs stay
(:func:`alerts.lag_alerts.lag_judgements`), keeps that judgement until then if its committed offset, its
partition's log range and the blind spells are what they were (most of a fleet: idle, or lagging far
below the limits).

Committed offsets outside their log (``alerts.log_range``) are no slow rule, but judged the same way they
cost a walk of every group-partition at every evaluation with log ranges. So between sweeps they judge
the group-partitions whose commit or range changed, plus every one that was outside its log by value at
its last judgement (flagged or not): its evidence and its group's state move on, and a commit beyond the
log end is flagged once a range observed after it shows it. Every other one was inside its log and still
is; what they find is the full judgement's, with no delay.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from itertools import chain, repeat
from operator import is_
from typing import TypeVar

from alerts.expiry import expiry_findings
from alerts.lag_alerts import lag_judgements
from alerts.log_range import outside_findings
from alerts.model import Finding
from alerts.quiet import lag_swept, moved_since, ranges_now, ranges_of, requieted
from alerts.retention import retention_findings
from alerts.state import (
    CommitKey,
    CommitPoint,
    CycleInputs,
    PartitionKey,
    Swept,
    partition_key,
)
from alerts.thresholds import Thresholds
from alerts.view import View

V = TypeVar("V")


@dataclass(frozen=True)
class SlowFindings:
    lag: tuple[Finding, ...]
    retention: tuple[Finding, ...]
    expiry: tuple[Finding, ...]
    outside: tuple[Finding, ...]
    swept: Swept | None


def judge_slow(view: View, now: float, thresholds: Thresholds) -> SlowFindings:
    """This evaluation's slow-rule findings (each rule's in its own order) and what to keep for the next."""
    last = view.previous.swept
    if last is None or sweeping(view, now, thresholds):
        return _emit(_sweep(view, now, thresholds), view.inputs, keep=thresholds.sweep_seconds > 0)
    return _emit(_changed(last, view, now, thresholds), view.inputs, keep=True)


def sweeping(view: View, now: float, thresholds: Thresholds) -> bool:
    """This evaluation judges everything: no sweeping configured, none yet, the last one
    ``sweep_seconds`` ago, or what every rule measures by changed."""
    last = view.previous.swept
    return (
        thresholds.sweep_seconds <= 0
        or last is None
        or _due(now - last.at, thresholds.sweep_seconds, ranged=view.inputs.offsets is not None)
        or now < last.at
        or view.seen.blind_spans != last.blind_spans
        or view.retention_seconds != last.retention_seconds
    )


def _due(since: float, every: float, *, ranged: bool) -> bool:
    """A sweep is due ``every`` seconds, in an evaluation with log ranges. Lag, the forecast and the
    outside-the-log rule judge only with them: swept without, they would judge nothing and leave every
    group-partition to be judged again, one by one, at the next evaluation with log ranges (a second
    sweep's work, and a slower one). Without log ranges for twice as long (the offsets collector failing),
    it sweeps anyway: expiry judges without them."""
    return since >= every if ranged else since >= 2 * every


def _sweep(view: View, now: float, thresholds: Thresholds) -> Swept:
    rp = view.replayed
    last = view.previous.swept
    by_partition, by_group = _index(last, rp.commits)
    offsets_seen = view.inputs.offsets is not None
    outside, outside_keys = outside_findings(view)
    ranges = ranges_of(view.partitions) if offsets_seen else {}
    lag, quiet = lag_swept(last, view, now, thresholds, ranges, by_partition) if offsets_seen else ({}, {})
    return Swept(
        at=now,
        blind_spans=view.seen.blind_spans,
        retention_seconds=view.retention_seconds,
        commits=rp.commits,
        unjudged=frozenset(),
        ranges=ranges,
        groups=rp.groups,
        by_partition=by_partition,
        by_group=by_group,
        indexed=len(rp.commits),
        lag=lag,
        retention=retention_findings(view, now, thresholds) if offsets_seen else {},
        expiry=expiry_findings(view, now, thresholds),
        outside=outside,
        outside_keys=frozenset(outside_keys),
        lag_quiet=quiet,
        ranges_of=view.partitions if offsets_seen else None,
    )


def _changed(last: Swept, view: View, now: float, thresholds: Thresholds) -> Swept:
    """``last`` with the group-partitions (and groups) whose inputs changed judged again."""
    rp = view.replayed
    commits = rp.commits
    moved = moved_since(last, view)
    # in C, walking ``moved`` only (``moved - keys()`` would walk every key of the dict): at --churn 1
    # all 12,500 moved and none is new
    fresh = moved.difference(last.commits)
    by_partition, by_group, added = _indexed(
        last, [k for k in moved if k in fresh and k in commits] if fresh else []
    )
    lag, retention, ranges = last.lag, last.retention, last.ranges
    outside, outside_keys = last.outside, last.outside_keys
    quiet = last.lag_quiet
    unjudged = last.unjudged | moved
    if view.inputs.offsets is not None:  # lag and the forecast need this cycle's log ranges
        changed, now_ranges = ranges_now(last, view)
        # each changed partition's group-partitions, gathered in C (every partition, at --churn 1), then
        # the rest: a set keeps the first of equal keys, and the index holds the commits' own key objects
        # (a replay's are new ones), so the rules' lookups of them compare by identity
        keys = set(chain.from_iterable(map(by_partition.get, changed, repeat(()))))
        keys.update(unjudged)
        found_lag, fresh_quiet = lag_judgements(view, now, thresholds, keys)
        lag = _merged(last.lag, keys, found_lag, commits)
        quiet = requieted(quiet, keys, fresh_quiet)
        retention = _merged(last.retention, keys, retention_findings(view, now, thresholds, keys), commits)
        # Outside its log: what changed, and whatever was outside by value last time (its evidence and
        # the group's state move on; a commit beyond the log end is flagged once a newer range shows it).
        keys.update(outside_keys)
        found, now_outside = outside_findings(view, keys)
        outside = _merged(last.outside, keys, found, commits)
        outside_keys = frozenset(now_outside)
        ranges, unjudged = now_ranges, frozenset()
    groups = {k.group for k in moved}
    groups.update(g for g, point in rp.groups.items() if last.groups.get(g) != point)
    groups.update(g for g in last.groups if g not in rp.groups)
    for g in groups:
        moved.update(by_group.get(g, ()))
    expiry = {g: f for g, f in last.expiry.items() if g not in groups}
    expiry.update(expiry_findings(view, now, thresholds, moved))
    return Swept(
        at=last.at,
        blind_spans=last.blind_spans,
        retention_seconds=last.retention_seconds,
        commits=commits,
        unjudged=unjudged,
        ranges=ranges,
        groups=rp.groups,
        by_partition=by_partition,
        by_group=by_group,
        indexed=last.indexed + added,
        lag=lag,
        retention=retention,
        expiry=expiry,
        outside=outside,
        outside_keys=outside_keys,
        lag_quiet=quiet,
        ranges_of=view.partitions if view.inputs.offsets is not None else last.ranges_of,
    )


def _merged(
    kept: Mapping[CommitKey, V],
    judged: set[CommitKey],
    fresh: Mapping[CommitKey, V],
    commits: Mapping[CommitKey, CommitPoint],
) -> Mapping[CommitKey, V]:
    """``kept`` with the ``judged`` keys' findings replaced by ``fresh`` and keys no longer committed
    dropped; ``kept`` itself when nothing changed."""
    if not judged and not fresh and all(k in commits for k in kept):
        return kept
    out = {k: v for k, v in kept.items() if k not in judged and k in commits}
    out.update(fresh)
    return out


def _index(
    last: Swept | None, commits: Mapping[CommitKey, CommitPoint]
) -> tuple[Mapping[PartitionKey, tuple[CommitKey, ...]], Mapping[str, tuple[CommitKey, ...]]]:
    """The group-partitions of ``commits`` by partition and by group: ``last``'s indexes when they hold
    exactly these (no key gone since they were built, none added since the last evaluation: a set
    comparison in C, where the rebuild walked every group-partition twice), else built afresh."""
    if last is not None and last.indexed == len(last.commits) and last.commits.keys() == commits.keys():
        return last.by_partition, last.by_group
    by_partition: dict[PartitionKey, list[CommitKey]] = {}
    by_group: dict[str, list[CommitKey]] = {}
    for key in commits:
        by_partition.setdefault(partition_key(key), []).append(key)
        by_group.setdefault(key.group, []).append(key)
    return (
        {pk: tuple(keys) for pk, keys in by_partition.items()},
        {g: tuple(keys) for g, keys in by_group.items()},
    )


def _indexed(
    last: Swept, added: list[CommitKey]
) -> tuple[Mapping[PartitionKey, tuple[CommitKey, ...]], Mapping[str, tuple[CommitKey, ...]], int]:
    """``last``'s indexes with the group-partitions ``added`` since, and how many were new to them (gone
    ones stay: readers skip keys no longer committed; the next sweep rebuilds them)."""
    if not added:
        return last.by_partition, last.by_group, 0
    by_partition = dict(last.by_partition)
    by_group = dict(last.by_group)
    new = 0
    for k in added:
        pk = partition_key(k)
        if k not in by_partition.get(pk, ()):
            by_partition[pk] = (*by_partition.get(pk, ()), k)
            new += 1
        if k not in by_group.get(k.group, ()):
            by_group[k.group] = (*by_group.get(k.group, ()), k)
    return by_partition, by_group, new


def _emit(swept: Swept, inputs: CycleInputs, *, keep: bool) -> SlowFindings:
    offsets_seen = inputs.offsets is not None
    lag = swept.lag
    order = sorted(lag)
    if keep and lag and not all(map(is_, lag, order)):
        # kept in the order emitted: the next evaluation's lag keeps it for the group-partitions it does not
        # judge again and adds the judged ones after them, and the sort (adaptive) finds the long sorted
        # run in one pass: ~2 ms for a fleet's 28,000 firing lag alerts, where 25 ms sorted them from
        # scratch at every evaluation
        swept = replace(swept, lag={k: lag[k] for k in order})
        lag = swept.lag
    return SlowFindings(
        lag=tuple(chain.from_iterable(map(lag.__getitem__, order))) if offsets_seen else (),
        retention=tuple(swept.retention[k] for k in sorted(swept.retention)) if offsets_seen else (),
        expiry=tuple(swept.expiry[g] for g in sorted(swept.expiry)),
        outside=tuple(swept.outside[k] for k in sorted(swept.outside)) if offsets_seen else (),
        swept=swept if keep else None,
    )
