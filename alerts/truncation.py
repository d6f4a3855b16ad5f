"""``log_truncation`` (a partition's log end went backwards) and ``epoch_divergence`` (a committed
(offset, leader epoch) lies past the end of that epoch on the current leader, as KIP-320 consumers check).

``epoch_divergence`` is claimed only for a commit the partition's log range this evaluation shows inside
the log (at most its end): the offset is in the log, but its messages are not the ones the group read
(a consumer that does not check epochs resumes there and never reads the new leader's messages below it).
A commit beyond the log end is ``committed_beyond_log_end``'s (:mod:`alerts.log_range`), whose cause and
severity tell a truncation from a re-created topic; an epoch is asked about only once its partition's
leader epoch moved past it, so claiming it there too paged a second time for a standing commit at the
next leader change, and called a re-created topic's stale commit a truncation. Once the log grows past
such a commit, it is this rule's.

A clean leader change never lowers the reported high watermark: a new leader answers ListOffsets with
OFFSET_NOT_AVAILABLE until its high watermark reaches the start of its epoch.

A log end that went back under a new topic id is a topic deleted and re-created, not a truncation
(``topic_deleted``, :mod:`alerts.topic_events`); one that went back before any metadata since says which
topic it belongs to is judged once one does (:func:`alerts.topic_change.unconfirmed_resets`).
"""

from __future__ import annotations

from alerts.model import EPOCH_DIVERGENCE, LOG_TRUNCATION, Finding
from alerts.state import CycleInputs, DetectionState, PartitionKey
from alerts.thresholds import Thresholds
from alerts.topic_change import id_changed
from alerts.view import View, view_of


def detect_log_truncations(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    v = view_of(view, previous, inputs, thresholds)
    commits = v.replayed.commits
    waiting = v.unconfirmed
    findings = []
    partitions = v.partitions
    for key in v.shifted:  # the log ends gone back are among them; findings sorted at the end
        cur = partitions[key]
        old = previous.partitions.get(key)
        if old is None or old.log_end is None or cur.log_end is None or cur.log_end >= old.log_end:
            continue
        if id_changed(old, cur) or key in waiting:
            continue  # another topic (alerts.topic_events), or not told yet
        if cur.leader != old.leader and old.isr is not None and cur.leader not in old.isr:
            cause = "unclean_leader_election"
        else:
            cause = "unknown"
        truncated = old.log_end - cur.log_end
        beyond = sorted(
            k.group for k, p in commits.items() if (k.topic, k.partition) == key and p.offset > cur.log_end
        )
        findings.append(
            Finding(
                kind=LOG_TRUNCATION,
                severity="critical",
                cluster=inputs.cluster,
                group=None,
                topic=key.topic,
                partition=key.partition,
                summary=f"log end of {key.topic}[{key.partition}] went back from {old.log_end} to "
                f"{cur.log_end} ({truncated} messages, leader {old.leader}->{cur.leader}, {cause})",
                cause=cause,
                magnitude={"messages_truncated": truncated, "groups_beyond_log_end": len(beyond)},
                evidence={
                    "old_log_end": old.log_end,
                    "new_log_end": cur.log_end,
                    "old_leader": old.leader,
                    "new_leader": cur.leader,
                    "old_leader_epoch": old.leader_epoch,
                    "new_leader_epoch": cur.leader_epoch,
                    "old_isr": old.isr,
                    "old_observed_at": previous.seen.of(key),
                    "new_observed_at": v.observed_at(key),
                    "old_topic_id": old.topic_id,
                    "new_topic_id": cur.topic_id,
                    "groups_beyond_log_end": tuple(beyond),
                },
            )
        )
    return tuple(sorted(findings, key=lambda f: (f.topic, f.partition)))


def detect_epoch_divergence(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    ends = {(e.topic, e.partition, e.requested_epoch): e for e in inputs.epoch_ends}
    if not ends:
        return ()  # nothing asked of the leaders this cycle
    findings = []
    v = view_of(view, previous, inputs, thresholds)
    partitions = v.partitions
    for key, point in v.replayed.commits.items():  # findings sorted at the end
        if point.leader_epoch is None:
            continue
        e = ends.get((key.topic, key.partition, point.leader_epoch))
        if e is None or e.end_offset < 0 or e.leader_epoch < 0 or point.offset <= e.end_offset:
            continue
        r = partitions.get(PartitionKey(key.topic, key.partition))
        if r is None or r.log_end is None or point.offset > r.log_end:
            continue  # beyond the log end, or not known inside it: committed_beyond_log_end's to say
        diverged = point.offset - e.end_offset
        findings.append(
            Finding(
                kind=EPOCH_DIVERGENCE,
                severity="critical",
                cluster=inputs.cluster,
                group=key.group,
                topic=key.topic,
                partition=key.partition,
                summary=f"group {key.group}'s committed {point.offset} (epoch {point.leader_epoch}) on "
                f"{key.topic}[{key.partition}] is past where the leader's log for that epoch ends "
                f"({e.end_offset}, epoch {e.leader_epoch}): {diverged} committed messages are not in the log",
                cause="truncated_epoch",
                magnitude={"divergence_offset": e.end_offset, "messages_diverged": diverged},
                evidence={
                    "committed": point.offset,
                    "committed_leader_epoch": point.leader_epoch,
                    "epoch_end_offset": e.end_offset,
                    "epoch_end_leader_epoch": e.leader_epoch,
                    "committed_at": point.at,
                },
            )
        )
    return tuple(sorted(findings, key=lambda f: (f.group, f.topic, f.partition)))
