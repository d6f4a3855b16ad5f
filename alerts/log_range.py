"""``committed_below_log_start`` and ``committed_beyond_log_end``: a committed offset outside its log.

Below the log start, retention deleted messages the group never read (``messages_lost``). Beyond the log
end (strictly: equal is a caught-up group), the log was truncated or the topic re-created under the
group. A committed offset newer than the range observation is not compared with it: the log may have grown
since (re-commits of the same offset do not make it newer).

Beyond the log end of a re-created topic (:mod:`alerts.recreation`) that no range observed since held, the
commit is the deleted topic's: made on it, or its stale position committed into the new one by a consumer
that kept it. Nothing was truncated: cause ``topic_recreated``, a warning (the consumer resets by its
``auto.offset.reset`` when it fetches). A commit the new log held once is judged as any other: critical.
A log end gone back under a topic id no metadata confirmed yet (:func:`alerts.topic_change.
unconfirmed_resets`) is judged once it is told, as ``log_truncation`` is: a re-creation's first ranges
carry the old id.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from alerts.current import committed_of, samples
from alerts.membership import EMPTY
from alerts.model import COMMITTED_BELOW_LOG_START, COMMITTED_BEYOND_LOG_END, Finding, Severity
from alerts.state import (
    CommitKey,
    CommitPoint,
    CycleInputs,
    DetectionState,
    PartitionKey,
    PartitionPoint,
    Recreation,
    partition_key,
)
from alerts.thresholds import Thresholds
from alerts.view import View, view_of

TOPIC_RECREATED = "topic_recreated"


def detect_committed_outside_log(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    found, _ = outside_findings(view_of(view, previous, inputs, thresholds))
    return tuple(found[key] for key in sorted(found))


def outside_findings(
    view: View, keys: Iterable[CommitKey] | None = None
) -> tuple[dict[CommitKey, Finding], set[CommitKey]]:
    """The finding of each group-partition of ``keys`` (every committed one if None) outside its log, and
    every one of them outside its log by value, flagged or not (a commit beyond the log end is flagged
    only once a range observed after it shows it: until then it must be judged again each evaluation).
    Empty when the cycle has no log range."""
    previous, inputs = view.previous, view.inputs
    if inputs.offsets is None:
        return {}, set()
    partitions = view.partitions
    rp = view.replayed
    recreated = view.recreated
    untold = view.unconfirmed
    findings: dict[CommitKey, Finding] = {}
    outside: set[CommitKey] = set()
    for key, point in committed_of(rp.commits, keys):
        r = partitions.get(partition_key(key))
        if r is None or r.log_start is None or r.log_end is None:
            continue
        if r.log_start <= point.offset <= r.log_end:
            continue  # inside the log: the common case, nothing to build
        outside.add(key)
        r_at = view.observed_at(partition_key(key))
        g = rp.groups.get(key.group)
        evidence = {
            "committed": point.offset,
            "committed_leader_epoch": point.leader_epoch,
            "committed_at": point.at,
            "log_start": r.log_start,
            "log_end": r.log_end,
            "leader": r.leader,
            "leader_epoch": r.leader_epoch,
            "observed_at": r_at,
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
        elif point.offset > r.log_end and point.moved_at <= r_at:
            pk = partition_key(key)
            if pk in untold:
                continue  # truncated or another topic: judged once metadata tells (still outside)
            beyond = point.offset - r.log_end
            entry = recreated.get(pk)
            if entry is not None and _stale(previous, pk, r, r_at, point, entry):
                findings[key] = _recreated(inputs.cluster, key, point, beyond, r, entry, evidence)
                continue
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


def _stale(
    previous: DetectionState,
    pk: PartitionKey,
    r: PartitionPoint,
    r_at: float,
    point: CommitPoint,
    entry: Recreation,
) -> bool:
    """``r`` (observed at ``r_at``) is of the re-created topic, and no range of it observed since held
    ``point``'s offset: the offset cannot be a position in the new log that a truncation took away."""
    since = entry.seen_at
    if since is None or r_at < since:
        return False
    return not any(s.at >= since and s.log_end >= point.offset for s in samples(previous, pk, r, r_at))


def _recreated(
    cluster: str,
    key: CommitKey,
    point: CommitPoint,
    beyond: int,
    r: PartitionPoint,
    entry: Recreation,
    evidence: dict[str, Any],
) -> Finding:
    where = f"{key.topic}[{key.partition}]"
    ids = f"topic id {entry.old_id} -> {entry.new_id or 'not listed yet'}"
    if point.at <= entry.gone_at:
        # committed before the deletion was seen: on the old topic, or (between the deletion and its
        # sighting) its position committed into the new one; either way an offset of the deleted topic
        what = f"group {key.group}'s committed {point.offset} on {where} belongs to the deleted topic"
    else:
        what = f"group {key.group} committed {point.offset} on {where} after its topic was re-created: a "
        what += "stale position of the deleted topic"
    return Finding(
        kind=COMMITTED_BEYOND_LOG_END,
        severity="warning",
        cluster=cluster,
        group=key.group,
        topic=key.topic,
        partition=key.partition,
        summary=f"{what} ({ids}), {beyond} past the re-created topic's log end {r.log_end}; nothing was "
        "truncated: the consumer resets by its auto.offset.reset when it fetches, unless the new topic "
        f"reaches {point.offset} first (it then resumes there, past what the new topic holds below it)",
        cause=TOPIC_RECREATED,
        magnitude={"beyond": beyond},
        evidence={
            **evidence,
            "old_topic_id": entry.old_id,
            "new_topic_id": entry.new_id,
            "old_topic_gone_at": entry.gone_at,
            "new_topic_seen_at": entry.seen_at,
        },
    )
