"""``offsets_lost``: committed offsets vanished (tombstone, expiry, or gone from a poll).

Severity follows who could be consuming the offset's topic at that moment (:mod:`alerts.membership`);
the cause is the first that applies:

=======================  ===========================================================  ============
cause                    when                                                         severity
=======================  ===========================================================  ============
topic_deleted            the topic is gone from this cycle's metadata                 info
deleted_while_consuming  a member subscribes to / is assigned the topic; or, members  critical
                         unknown, the group has members or committed within
                         ``recent_commit_seconds``
expired                  its expiry was due: an Empty group ``offsets.retention``     warning
                         after it became Empty, a standalone commit or a topic the
                         members do not subscribe to that long after its commit
group_deleted            DeleteGroups: a group tombstone, or the group gone from a    info
                         complete listing
admin_offset_delete      OffsetDelete: no member consumes the topic (the broker       info
                         refuses it otherwise)
deleted                  members unknown and the group idle: what removed it cannot   warning
                         be told
=======================  ===========================================================  ============

``deleted_while_consuming`` is one finding per partition; the others, which no running consumer
notices, are one finding per group and cycle (``topic``/``partition`` None, cause ``mixed`` when they
differ, the highest severity). ``expired`` and ``deleted`` warn: nobody decided it, and the group's
next consumer falls back to ``auto.offset.reset``. The deliberate ones are info.
"""

from __future__ import annotations

from collections import Counter

from alerts.commits import DEAD, EMPTY, Removal, replay
from alerts.current import offsets_retention_seconds
from alerts.expiry import expiry_at
from alerts.membership import consuming, memberless
from alerts.model import OFFSETS_LOST, Finding, Severity
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds

WHILE_CONSUMING = "deleted_while_consuming"
SEVERITY: dict[str, Severity] = {
    "topic_deleted": "info",
    "group_deleted": "info",
    "admin_offset_delete": "info",
    "expired": "warning",
    "deleted": "warning",
}
PHRASE = {
    "topic_deleted": "their topic was deleted",
    "group_deleted": "the group was deleted",
    "admin_offset_delete": "deleted (OffsetDelete) while no member consumed the topic",
    "expired": "expired (offsets.retention.minutes)",
    "deleted": "removed while the group was idle, by what cannot be told",
}
RANK = {"info": 0, "warning": 1, "critical": 2}


def detect_offsets_lost(
    previous: DetectionState, inputs: CycleInputs, now: float, thresholds: Thresholds
) -> tuple[Finding, ...]:
    rp = replay(previous, inputs)
    retention = offsets_retention_seconds(previous, inputs, thresholds)
    topics = _existing_topics(inputs)
    deleted = set(rp.deleted_groups)
    if inputs.groups is not None and not inputs.groups.failures:
        deleted |= {r.key.group for r in rp.removals if r.key.group not in rp.groups}
    findings: list[Finding] = []
    idle: dict[str, list[tuple[Removal, str]]] = {}
    for r in rp.removals:
        if topics is not None and r.key.topic not in topics:
            cause = "topic_deleted"
        elif _while_consuming(r, thresholds):
            findings.append(_partition_finding(inputs.cluster, r))
            continue
        elif _expired(r, previous, retention):
            cause = "expired"
        elif r.key.group in deleted:
            cause = "group_deleted"
        else:
            cause = "admin_offset_delete" if consuming(r.group, r.key.topic) is False else "deleted"
        idle.setdefault(r.key.group, []).append((r, cause))
    for group, lost in sorted(idle.items()):
        findings.append(_group_finding(inputs.cluster, group, lost, retention))
    return tuple(findings)


def _while_consuming(r: Removal, thresholds: Thresholds) -> bool:
    """A member consumes the topic; or, members unknown, the group has some or committed recently."""
    who = consuming(r.group, r.key.topic)
    if who is not None:
        return who
    return r.group_state not in (EMPTY, DEAD, None) or r.at - r.old.at <= thresholds.recent_commit_seconds


def _expired(r: Removal, previous: DetectionState, retention: float) -> bool:
    group = r.group
    if group is None or group.state == DEAD:  # gone by now: as it was before
        group = previous.groups.get(r.key.group)
    if group is not None and not memberless(group.state) and consuming(group, r.key.topic) is False:
        # KIP-211: in a group with members, offsets of topics it does not subscribe to expire by commit
        # timestamp (expiry_at, for the group as a whole, says an active group's offsets never expire).
        at: float | None = r.old.expire_at if r.old.expire_at is not None else r.old.at + retention
    else:
        at, _ = expiry_at(r.old, group, retention)
    return at is not None and at <= r.at


def _existing_topics(inputs: CycleInputs) -> set[str] | None:
    if inputs.metadata is None or inputs.metadata.failures:
        return None
    return {t.name for t in inputs.metadata.topics}


def _partition_finding(cluster: str, r: Removal) -> Finding:
    g, t, p = r.key
    return Finding(
        kind=OFFSETS_LOST,
        severity="critical",
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"committed offset {r.old.offset} of group {g} on {t}[{p}] vanished while the group was "
        f"consuming ({r.group_state or 'state unknown'}); it will restart from auto.offset.reset",
        cause=WHILE_CONSUMING,
        magnitude={"offsets_lost": 1, "offset": r.old.offset},
        evidence={
            "offset": r.old.offset,
            "leader_epoch": r.old.leader_epoch,
            "committed_at": r.old.at,
            "removed_at": r.at,
            "group_state": r.group_state,
            "members_topics": r.group.topics if r.group is not None else None,
            "source": r.source,
        },
    )


def _group_finding(cluster: str, group: str, lost: list[tuple[Removal, str]], retention: float) -> Finding:
    counts = Counter(c for _, c in lost)
    causes = sorted(counts)
    severity = max((SEVERITY[c] for c in causes), key=RANK.__getitem__)
    if len(causes) == 1:
        cause, why = causes[0], PHRASE[causes[0]]
    else:
        cause, why = "mixed", "; ".join(f"{counts[c]} {PHRASE[c]}" for c in causes)
    topics = sorted({r.key.topic for r, _ in lost})
    last = max(lost, key=lambda rc: rc[0].at)[0]
    return Finding(
        kind=OFFSETS_LOST,
        severity=severity,
        cluster=cluster,
        group=group,
        topic=None,
        partition=None,
        summary=f"{len(lost)} committed offset(s) of group {group} on {', '.join(topics)} are gone: {why}; "
        "a consumer that starts later falls back to auto.offset.reset",
        cause=cause,
        magnitude={"offsets_lost": len(lost)},
        evidence={
            "offsets": tuple(f"{r.key.topic}[{r.key.partition}]={r.old.offset}" for r, _ in lost),
            "causes": tuple(f"{c}={counts[c]}" for c in causes),
            "last_commit_at": max(r.old.at for r, _ in lost),
            "removed_at": last.at,
            "group_state": last.group_state,
            "members_topics": last.group.topics if last.group is not None else None,
            "retention_seconds": retention,
        },
    )
