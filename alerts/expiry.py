"""``offsets_expiry_risk``: an Empty group's committed offsets will expire (``offsets.retention.minutes``).

Info: only a group nobody consumed for that long expires (routine for decommissioned consumers); it
stays visible in the API and ``offsetguard_alerts_firing`` for whoever plans to restart the group.

KIP-211: a classic consumer group's offsets expire that long after the group became Empty; a standalone
group's (``assign()``, empty protocol type) and a KIP-848 consumer group's after each commit timestamp; a
v1 commit with an explicit expire timestamp then. A group that is not Empty keeps its offsets.
"""

from __future__ import annotations

from collections.abc import Iterable

from alerts.current import committed_of
from alerts.membership import EMPTY
from alerts.model import OFFSETS_EXPIRY_RISK, Finding
from alerts.state import CommitKey, CommitPoint, CycleInputs, DetectionState, GroupPoint
from alerts.thresholds import Thresholds
from alerts.view import View, view_of


def expiry_at(point: CommitPoint, group: GroupPoint | None, retention: float) -> tuple[float | None, str]:
    """When ``point`` expires and from what base; ``(None, "group_active")`` while it does not."""
    if point.expire_at is not None:
        return point.expire_at, "explicit_expire_timestamp"
    if group is not None and group.state != EMPTY and group.protocol_type != "":
        return None, "group_active"
    if group is not None and group.protocol_type and group.group_type in (None, "classic"):
        return group.since + retention, "empty_since"
    return point.at + retention, "commit_timestamp"


def detect_offsets_expiry_risk(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    found = expiry_findings(view_of(view, previous, inputs, thresholds), now, thresholds)
    return tuple(found[group] for group in sorted(found))


def expiry_findings(
    view: View, now: float, thresholds: Thresholds, keys: Iterable[CommitKey] | None = None
) -> dict[str, Finding]:
    """The finding of each group with offsets due, judged over ``keys`` (every committed group-partition
    if None; a caller passing keys passes all of each group's)."""
    inputs = view.inputs
    rp = view.replayed
    retention = view.retention_seconds
    commits = rp.commits
    pairs = committed_of(commits, keys)
    groups = rp.groups
    # the groups that keep their offsets (not Empty, a protocol type): most of a fleet, told once per
    # group so that an offset of theirs without an explicit expiry costs a set lookup (what expiry_at
    # would answer: "group_active"), not a limits lookup and a call
    active = {g for g, p in groups.items() if p.state != EMPTY and p.protocol_type != ""}
    due: dict[str, list[tuple[float, str, str, int]]] = {}
    for key, point in pairs:
        if point.expire_at is None and key.group in active:
            continue
        horizon = thresholds.limits(key.group, key.topic).expiry_risk_seconds
        at, base = expiry_at(point, groups.get(key.group), retention)
        if horizon is None or at is None or at - now > horizon:
            continue
        due.setdefault(key.group, []).append((at, base, key.topic, key.partition))
    findings: dict[str, Finding] = {}
    for group, items in due.items():
        items.sort()
        first, base, _, _ = items[0]
        g = rp.groups.get(group)
        findings[group] = Finding(
            kind=OFFSETS_EXPIRY_RISK,
            severity="info",
            cluster=inputs.cluster,
            group=group,
            topic=None,
            partition=None,
            summary=f"idle group {group}'s committed offsets ({len(items)} partitions) expire in "
            f"{max(0.0, first - now) / 3600:.1f} h (offsets.retention.minutes {retention / 60:g})",
            cause=base,
            magnitude={"seconds_to_expiry": first - now, "partitions_expiring": len(items)},
            evidence={
                "expires_at": first,
                "retention_seconds": retention,
                "group_state": g.state if g else None,
                "empty_since": g.since if g and g.state == EMPTY else None,
                "partitions": tuple(f"{t}[{p}]" for _, _, t, p in items),
            },
        )
    return findings
