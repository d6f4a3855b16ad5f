"""``committed_below_log_start`` and ``committed_beyond_log_end``: a committed offset outside its log.

Below the log start, retention deleted messages the group never read (``messages_lost``). Beyond the log
end (strictly: equal is a caught-up group), the log was truncated or the topic re-created under the
group. A committed offset newer than the range observation is not compared with it: the log may have grown
since (re-commits of the same offset do not make it newer).
"""

from __future__ import annotations

from collections.abc import Iterable

from alerts.commits import EMPTY, replay
from alerts.current import committed_of, current_partitions
from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, Finding, Severity
from alerts.state import CommitKey, CycleInputs, DetectionState, partition_key
from alerts.thresholds import Thresholds


def detect_committed_outside_log(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[Finding, ...]:
    found, _ = outside_findings(previous, inputs)
    return tuple(found[key] for key in sorted(found))


def outside_findings(
    previous: DetectionState, inputs: CycleInputs, keys: Iterable[CommitKey] | None = None
) -> tuple[dict[CommitKey, Finding], set[CommitKey]]:
    """The finding of each group-partition of ``keys`` (every committed one if None) outside its log, and
    every one of them outside its log by value, flagged or not (a commit beyond the log end is flagged
    only once a range observed after it shows it: until then it must be judged again each evaluation).
    Empty when the cycle has no log range."""
    if inputs.offsets is None:
        return {}, set()
    partitions = current_partitions(inputs)
    rp = replay(previous, inputs)
    findings: dict[CommitKey, Finding] = {}
    outside: set[CommitKey] = set()
    for key, point in committed_of(rp.commits, keys):
        r = partitions.get(partition_key(key))
        if r is None or r.log_start is None or r.log_end is None:
            continue
        if r.log_start <= point.offset <= r.log_end:
            continue  # inside the log: the common case, nothing to build
        outside.add(key)
        g = rp.groups.get(key.group)
        evidence = {
            "committed": point.offset,
            "committed_leader_epoch": point.leader_epoch,
            "committed_at": point.at,
            "log_start": r.log_start,
            "log_end": r.log_end,
            "leader": r.leader,
            "leader_epoch": r.leader_epoch,
            "observed_at": r.observed_at,
            "group_state": g.state if g else None,
        }
        if point.offset < r.log_start:
            lost = r.log_start - point.offset
            severity: Severity = "warning" if g is not None and g.state == EMPTY else "critical"
            findings[key] = Finding(
                kind=COMMITTED_BELOW_LOG_START,
                severity=severity,
                cluster=inputs.cluster,
                group=key.group,
                topic=key.topic,
                partition=key.partition,
                summary=f"log start {r.log_start} of {key.topic}[{key.partition}] passed group "
                f"{key.group}'s committed {point.offset}: {lost} unread messages deleted",
                cause="retention",
                magnitude={"messages_lost": lost},
                evidence=evidence,
            )
        elif point.offset > r.log_end and point.moved_at <= r.observed_at:
            beyond = point.offset - r.log_end
            findings[key] = Finding(
                kind=COMMITTED_BEYOND_LOG_END,
                severity="critical",
                cluster=inputs.cluster,
                group=key.group,
                topic=key.topic,
                partition=key.partition,
                summary=f"group {key.group}'s committed {point.offset} is {beyond} past the log end "
                f"{r.log_end} of {key.topic}[{key.partition}] (truncated or re-created)",
                magnitude={"beyond": beyond},
                evidence=evidence,
            )
    return findings, outside
