"""``topic_deleted``: a topic was deleted, or deleted and re-created (a new topic id), as
:mod:`alerts.topic_change` tells it.

One finding per topic (``group``/``partition`` None, cause ``deleted`` or ``recreated``, info: deleting a
topic is a deliberate act, and every group's offsets go with it): the old and new topic ids, each
partition's last observed log range, ``messages_deleted`` (what those ranges held) and each group that
had committed offsets on it with what it had not read. That replaces the ``log_truncation`` a re-created
topic's log end going back to 0 used to raise, and the ``offsets_lost`` its offsets' tombstones used to
page (they are ``offsets_lost`` cause ``topic_deleted``, info: :mod:`alerts.lost`).

Then one finding per group that had not read all of it (``group`` and ``topic`` set, warning): the
messages it had not consumed are gone for good, ``messages_deleted_unread`` = the sum over the partitions
of (last observed log end - max(committed, last observed log start)). Exact up to what was produced
between the last observation and the deletion, which nobody observed (not counted). A group that had read
everything loses nothing unread: it is only listed on the topic's finding.

The committed offsets are the group's last before the deletion: those the deletion's tombstones removed
(held in ``pending_losses`` until the topic is known gone, or removed this cycle), else those still
known; for a re-created topic only those committed before its last observation under the old id (a
later commit may be on the new topic).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from alerts.commits import Removal
from alerts.model import TOPIC_DELETED, Finding
from alerts.state import CommitKey, CycleInputs, DetectionState, PartitionPoint, PendingLoss
from alerts.thresholds import Thresholds
from alerts.topic_change import RECREATED, TopicChange
from alerts.view import View, view_of


def detect_topic_events(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    v = view_of(view, previous, inputs, thresholds)
    changes = v.changes
    if not changes:
        return ()
    removals = v.replayed.removals
    findings = []
    for change in changes:
        committed = committed_before(previous, removals, change)
        groups: dict[str, dict[int, int]] = {}
        for key, offset in sorted(committed.items()):
            groups.setdefault(key.group, {})[key.partition] = offset
        unread = {g: _unread(change.last, parts) for g, parts in groups.items()}
        findings.append(_topic_finding(inputs.cluster, change, unread))
        for group, parts in groups.items():
            known = [u for u in unread[group].values() if u is not None]
            if sum(known) > 0:
                findings.append(_group_finding(inputs.cluster, change, group, parts, unread[group]))
    return tuple(findings)


def committed_before(
    previous: DetectionState, removals: Iterable[Removal], change: TopicChange
) -> dict[CommitKey, int]:
    """Each group-partition's last committed offset on ``change.topic`` before it was deleted."""
    out: dict[CommitKey, int] = {}
    for key, point in previous.commits.items():
        if key.topic != change.topic:
            continue
        last = change.last_at.get(key.partition)
        if change.cause == RECREATED and (last is None or point.at > last):
            continue  # maybe a commit on the new topic
        out[key] = point.offset
    gone: list[Removal | PendingLoss] = [*removals, *previous.pending_losses]  # held ones are the older
    for loss in gone:
        if loss.key.topic == change.topic:
            out[loss.key] = loss.old.offset
    return out


def _unread(last: Mapping[int, PartitionPoint], parts: Mapping[int, int]) -> dict[int, int | None]:
    """Per partition: last observed log end - max(committed, log start), at least 0 (None: no range)."""
    out: dict[int, int | None] = {}
    for p, offset in parts.items():
        point = last.get(p)
        if point is None or point.log_end is None or point.log_start is None:
            out[p] = None
        else:
            out[p] = max(0, point.log_end - max(offset, point.log_start))
    return out


def _total(values: Iterable[int | None]) -> int | None:
    known = list(values)
    return None if any(v is None for v in known) else sum(v for v in known if v is not None)


def _what(change: TopicChange) -> str:
    if change.cause == RECREATED:
        return f"was deleted and re-created (topic id {change.old_id} -> {change.new_id})"
    return "was deleted"


def _ranges(change: TopicChange) -> dict[str, tuple[str, ...] | float]:
    parts = sorted(change.last.items())
    return {
        "last_log_ends": tuple(f"{change.topic}[{p}]={x.log_end}" for p, x in parts),
        "last_log_starts": tuple(f"{change.topic}[{p}]={x.log_start}" for p, x in parts),
        "last_observed_at": max(change.last_at.values()),
    }


def _topic_finding(
    cluster: str, change: TopicChange, unread: Mapping[str, Mapping[int, int | None]]
) -> Finding:
    held = _total(
        None if x.log_end is None or x.log_start is None else x.log_end - x.log_start
        for x in change.last.values()
    )
    totals = {g: _total(u.values()) for g, u in unread.items()}
    behind = sorted(g for g, u in unread.items() if sum(v for v in u.values() if v is not None) > 0)
    held_text = f"; it held {held} message(s)" if held is not None else ""
    behind_text = f"; not read by {', '.join(behind)}" if behind else "; no group had unread messages on it"
    return Finding(
        kind=TOPIC_DELETED,
        severity="info",
        cluster=cluster,
        group=None,
        topic=change.topic,
        partition=None,
        summary=f"topic {change.topic} {_what(change)}{held_text}{behind_text}",
        cause=change.cause,
        magnitude={"messages_deleted": held, "groups_with_unread": len(behind)},
        evidence={
            "old_topic_id": change.old_id,
            "new_topic_id": change.new_id,
            **_ranges(change),
            "groups": tuple(f"{g}={'unknown' if n is None else n}" for g, n in sorted(totals.items())),
        },
    )


def _group_finding(
    cluster: str,
    change: TopicChange,
    group: str,
    parts: Mapping[int, int],
    unread: Mapping[int, int | None],
) -> Finding:
    t = change.topic
    total = _total(unread.values())
    shown = total if total is not None else sum(v for v in unread.values() if v is not None)
    at_least = "" if total is not None else "at least "
    return Finding(
        kind=TOPIC_DELETED,
        severity="warning",
        cluster=cluster,
        group=group,
        topic=t,
        partition=None,
        summary=f"group {group} had not read {at_least}{shown} message(s) of topic {t} when it "
        f"{_what(change)}: they are gone",
        cause=change.cause,
        magnitude={"messages_deleted_unread": total},
        evidence={
            "old_topic_id": change.old_id,
            "new_topic_id": change.new_id,
            "committed": tuple(f"{t}[{p}]={o}" for p, o in sorted(parts.items())),
            "unread": tuple(f"{t}[{p}]={'unknown' if u is None else u}" for p, u in sorted(unread.items())),
            **_ranges(change),
        },
    )
