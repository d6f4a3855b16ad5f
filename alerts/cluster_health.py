"""Cluster-wide conditions, one finding per cluster each: ``offsets_topic_cleaner_stalled``,
``out_of_range_fetches`` and ``collector_failure``.

The log cleaner metrics cover every compacted log of a broker, ``__consumer_offsets`` included; they are
the closest broker-side signal that its compaction runs (LinkedIn's offset-rewind incidents began with a
stuck cleaner leaving stale offsets to be reloaded).
"""

from __future__ import annotations

from alerts.counters import (
    CLEANER_DEAD_THREADS,
    CLEANER_DIRTY_PERCENT,
    CLEANER_SINCE_LAST_RUN,
    CLEANER_UNCLEANABLE,
    FETCH_ERRORS,
    OUT_OF_RANGE,
    broker_name,
    counter_increases,
)
from alerts.model import (
    COLLECTOR_FAILURE,
    OFFSETS_TOPIC_CLEANER_STALLED,
    OUT_OF_RANGE_FETCHES,
    Finding,
    Severity,
)
from alerts.state import CycleInputs, DetectionState, partition_key
from alerts.thresholds import Thresholds
from alerts.view import View, view_of
from collectors.model import OFFSETS_TOPIC


def detect_cleaner_stalled(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    problems: list[str] = []
    critical = False
    for b in inputs.metrics.brokers if inputs.metrics else ():
        name = broker_name(b)
        since_ms = b.value(CLEANER_SINCE_LAST_RUN)
        dirty = b.value(CLEANER_DIRTY_PERCENT)
        uncleanable = b.value(CLEANER_UNCLEANABLE)
        dead = b.value(CLEANER_DEAD_THREADS)
        idle = since_ms is not None and since_ms / 1000 > thresholds.cleaner_stall_seconds
        if idle and since_ms is not None and dirty is not None and dirty >= thresholds.cleaner_dirty_percent:
            problems.append(f"broker {name}: no run for {since_ms / 1000:.0f} s at {dirty:g}% dirty")
            critical = True
        if uncleanable:
            problems.append(f"broker {name}: {uncleanable:g} uncleanable partitions")
        if dead:
            problems.append(f"broker {name}: {dead:g} dead cleaner threads")
            critical = True
    if not problems:
        return ()
    return (
        Finding(
            kind=OFFSETS_TOPIC_CLEANER_STALLED,
            severity="critical" if critical else "warning",
            cluster=inputs.cluster,
            group=None,
            topic=OFFSETS_TOPIC,
            partition=None,
            summary="log compaction of __consumer_offsets is not keeping up: " + "; ".join(problems),
            magnitude={"brokers_affected": len({p.split(":")[0] for p in problems})},
            evidence={"problems": tuple(problems)},
        ),
    )


def detect_out_of_range_fetches(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    rises = counter_increases(previous.counters, inputs.metrics, FETCH_ERRORS, OUT_OF_RANGE)
    if not rises:
        return ()
    v = view_of(view, previous, inputs, thresholds)
    partitions = v.partitions
    found = []
    for key, point in v.replayed.commits.items():
        r = partitions.get(partition_key(key))
        if r is None or r.log_start is None or r.log_end is None:
            continue
        # below the log start at any time is below it at the commit (it only grows); past a log end only
        # if committed by the time it was sampled (a commit newer than the sample is ahead of it by design)
        if point.offset < r.log_start or (
            point.offset > r.log_end and point.at <= v.observed_at(partition_key(key))
        ):
            found.append(
                (key, f"{key.group} {key.topic}[{key.partition}]={point.offset} ({r.log_start}..{r.log_end})")
            )
    outside = [text for _, text in sorted(found, key=lambda kt: kt[0])]
    total = sum(rises.values())
    return (
        Finding(
            kind=OUT_OF_RANGE_FETCHES,
            # the errors alone do not say whose: a follower after a truncation, a consumer that seeks, or
            # one whose reset is committed already (offset_skip / offset_rewind count it) — a page only
            # with a committed offset outside its log
            severity="warning" if outside else "info",
            cluster=inputs.cluster,
            group=None,
            topic=None,
            partition=None,
            summary=f"{total:g} Fetch requests failed OFFSET_OUT_OF_RANGE; "
            f"committed offsets outside their log: {len(outside)}",
            magnitude={
                "fetch_errors": total,
                "groups_outside_range": len({o.split(" ")[0] for o in outside}),
            },
            evidence={
                "errors_by_broker": tuple(f"{b}={v:g}" for b, v in sorted(rises.items())),
                "committed_outside_range": tuple(outside),
            },
        ),
    )


def detect_collector_failures(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    down = [c for c in inputs.collectors if not c.ok]
    partial = [
        f"{type(obs).__name__}: {f.scope} {f.key} {f.error}"
        for obs in (
            inputs.metadata,
            inputs.offsets,
            inputs.groups,
            inputs.committed,
            inputs.configs,
            inputs.metrics,
        )
        if obs is not None
        for f in obs.failures
    ]
    if not down and not partial:
        return ()
    since = [c.failing_since for c in down if c.failing_since is not None]
    severity: Severity = "critical" if down else "warning"
    what = ", ".join(f"{c.name} ({c.error or 'failing'})" for c in down) or "parts of the cluster"
    return (
        Finding(
            kind=COLLECTOR_FAILURE,
            severity=severity,
            cluster=inputs.cluster,
            group=None,
            topic=None,
            partition=None,
            summary=f"offsetguard cannot observe {what}; {len(partial)} partial failures",
            magnitude={
                "collectors_failing": len(down),
                "partial_failures": len(partial),
                "seconds_failing": now - min(since) if since else None,
            },
            evidence={
                "collectors": tuple(c.name for c in down),
                "failing_since": tuple(c.failing_since for c in down),
                "errors": tuple(f"{c.name}: {c.error}: {c.message}" for c in down),
                "partial": tuple(partial),
            },
        ),
    )
