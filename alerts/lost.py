"""``offsets_lost``: committed offsets vanished (tombstone, expiry, or gone from a poll).

``critical`` when the group was still consuming them (not Empty, or committed within
``recent_commit_seconds``); ``warning`` when all of an idle group's offsets went without a DeleteGroups
(expiry, or unexplained). Deliberate removals raise nothing: DeleteGroups (the group itself deleted
before its expiry was due), OffsetDelete of part of an idle group, deleting the topic.
"""

from __future__ import annotations

from alerts.commits import DEAD, EMPTY, Removal, replay
from alerts.current import offsets_retention_seconds
from alerts.expiry import expiry_at
from alerts.model import OFFSETS_LOST, Finding
from alerts.state import CycleInputs, DetectionState
from alerts.thresholds import Thresholds


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
            continue  # the topic was deleted: its offsets go with it
        active = (
            r.group_state not in (EMPTY, DEAD, None) or r.at - r.old.at <= thresholds.recent_commit_seconds
        )
        at, _ = expiry_at(r.old, previous.groups.get(r.key.group), retention)
        expired = at is not None and at <= r.at
        cause = "expired" if expired else ("group_deleted" if r.key.group in deleted else "deleted")
        if active and not (r.key.group in deleted and r.group_state in (EMPTY, DEAD)):
            findings.append(_partition_finding(inputs.cluster, r, cause + "_while_consuming"))
        elif expired or r.key.group not in deleted:
            idle.setdefault(r.key.group, []).append((r, cause))
    for group, lost in sorted(idle.items()):
        if any(k.group == group for k in rp.commits):
            continue  # part of an idle group: OffsetDelete or per-partition expiry of a standalone group
        causes = sorted({c for _, c in lost})
        findings.append(
            Finding(
                kind=OFFSETS_LOST,
                severity="warning",
                cluster=inputs.cluster,
                group=group,
                topic=None,
                partition=None,
                summary=f"all {len(lost)} committed offsets of idle group {group} are gone "
                f"({', '.join(causes)}); it will restart from auto.offset.reset",
                cause=causes[0] if len(causes) == 1 else "mixed",
                magnitude={"offsets_lost": len(lost)},
                evidence={
                    "offsets": tuple(f"{r.key.topic}[{r.key.partition}]={r.old.offset}" for r, _ in lost),
                    "last_commit_at": max(r.old.at for r, _ in lost),
                    "removed_at": max(r.at for r, _ in lost),
                    "retention_seconds": retention,
                },
            )
        )
    return tuple(findings)


def _existing_topics(inputs: CycleInputs) -> set[str] | None:
    if inputs.metadata is None or inputs.metadata.failures:
        return None
    return {t.name for t in inputs.metadata.topics}


def _partition_finding(cluster: str, r: Removal, cause: str) -> Finding:
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
        cause=cause,
        magnitude={"offsets_lost": 1, "offset": r.old.offset},
        evidence={
            "offset": r.old.offset,
            "leader_epoch": r.old.leader_epoch,
            "committed_at": r.old.at,
            "removed_at": r.at,
            "group_state": r.group_state,
            "source": r.source,
        },
    )
