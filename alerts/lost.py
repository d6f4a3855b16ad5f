"""``offsets_lost``: committed offsets vanished (tombstone, expiry, or gone from a poll).

Severity follows who could be consuming the offset's topic at that moment (:mod:`alerts.membership`);
the cause is the first that applies:

=======================  ===========================================================  ============
cause                    when                                                         severity
=======================  ===========================================================  ============
topic_deleted            the topic is gone from the metadata, or there under another  info
                         topic id (re-created): ``topic_deleted`` tells what the
                         group had not read (:mod:`alerts.topic_events`)
deleted_while_consuming  a member subscribes to / is assigned the topic; or, members  critical
                         unknown, the group has members or committed within
                         ``recent_commit_seconds``
expired                  its expiry was due: an Empty group ``offsets.retention``     info
                         after it became Empty, a standalone commit or a topic the
                         members do not subscribe to that long after its commit
group_deleted            DeleteGroups: a group tombstone (decided first: only a group  info
                         without members is deleted), or the group gone from a
                         complete listing
admin_offset_delete      OffsetDelete: no member consumes the topic (the broker       info
                         refuses it otherwise)
deleted                  members unknown and the group idle: what removed it cannot   warning
                         be told
=======================  ===========================================================  ============

``deleted_while_consuming`` is one finding per partition; the others, which no running consumer
notices, are one finding per group and cycle (``topic``/``partition`` None, cause ``mixed`` when they
differ, the highest severity). ``deleted`` warns: nobody can tell what removed it, and the group's next
consumer falls back to ``auto.offset.reset``. ``expired`` is Kafka doing what it is configured to do to a
group nobody consumed for ``offsets.retention.minutes`` (KIP-211: only Empty groups, standalone commits
and unsubscribed topics expire): routine for decommissioned consumers, so info; if the group comes back,
its reset is caught when it commits (``offset_skip`` / ``offset_rewind`` with the count). The deliberate
ones are info too.

A deleted topic's tombstones usually arrive before the next metadata poll shows the topic gone (or, a
consumer's auto-create having re-created it, under a new topic id), while the members still subscribe
to it: every loss is held in ``DetectionState.pending_losses`` until an observation after it shows
whether the topic exists, at most ``topic_confirm_seconds``: metadata (the topic listed under the id it
had before), or, where no topic id was known, a log range of the partition that did not go back.
Then it is reported with its cause, or as ``topic_deleted``; a loss whose topic is still unknown after
``topic_confirm_seconds`` keeps its cause (``deleted_while_consuming`` pages). Held, the offsets of a
deleted topic are still there for :mod:`alerts.topic_events` to count what each group had not read.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from alerts.commits import Removal
from alerts.expiry import expiry_at
from alerts.membership import DEAD, EMPTY, consuming, memberless
from alerts.model import OFFSETS_LOST, Finding, Severity
from alerts.state import CycleInputs, DetectionState, PartitionKey, PendingLoss
from alerts.thresholds import Thresholds
from alerts.view import View, view_of

WHILE_CONSUMING = "deleted_while_consuming"
TOPIC_DELETED = "topic_deleted"
SEVERITY: dict[str, Severity] = {
    "topic_deleted": "info",
    "group_deleted": "info",
    "admin_offset_delete": "info",
    "expired": "info",
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
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[Finding, ...]:
    return loss_outcomes(previous, inputs, now, thresholds, view)[0]


def loss_outcomes(
    previous: DetectionState,
    inputs: CycleInputs,
    now: float,
    thresholds: Thresholds,
    view: View | None = None,
) -> tuple[tuple[Finding, ...], tuple[PendingLoss, ...]]:
    """Findings for this cycle and the losses still waiting to see whether their topic exists."""
    v = view_of(view, previous, inputs, thresholds)
    rp = v.replayed
    retention = v.retention_seconds
    tombstoned = rp.deleted_groups
    deleted = set(tombstoned)
    if inputs.groups is not None and not inputs.groups.failures:
        deleted |= {r.key.group for r in rp.removals if r.key.group not in rp.groups}
    seen = _TopicCheck(v)
    findings: list[Finding] = []
    idle: dict[str, list[PendingLoss]] = {}
    pending: list[PendingLoss] = []
    new = (_loss(r, _cause(r, previous, deleted, tombstoned, retention, thresholds)) for r in rp.removals)
    for loss in (*previous.pending_losses, *new):
        exists = seen.exists(loss)
        if exists is False:
            loss = replace(loss, cause=TOPIC_DELETED)
        elif exists is None and now - loss.at < thresholds.topic_confirm_seconds:
            pending.append(loss)
            continue
        elif loss.cause == WHILE_CONSUMING:
            findings.append(_partition_finding(inputs.cluster, loss))
            continue
        idle.setdefault(loss.key.group, []).append(loss)
    for group, lost in sorted(idle.items()):
        findings.append(_group_finding(inputs.cluster, group, lost, retention))
    return tuple(findings), tuple(pending)


def _cause(
    r: Removal,
    previous: DetectionState,
    deleted: set[str],
    tombstoned: frozenset[str],
    retention: float,
    thresholds: Thresholds,
) -> str:
    """The cause as the group shows it (a deleted topic is told by :class:`_TopicCheck`).

    A group tombstone with the offsets' comes first: the coordinator deletes only a group without members
    (DeleteGroups answers NON_EMPTY_GROUP otherwise; expiry removes only an Empty group), whatever the last
    poll said. A KIP-848 group's members leave by member records the state does not follow, so its last
    known state was the poll's "Stable", and its DeleteGroups paged ``deleted_while_consuming`` (soak)."""
    if r.key.group in tombstoned:
        return "expired" if _expired(r, previous, retention) else "group_deleted"
    if _while_consuming(r, thresholds):
        return WHILE_CONSUMING
    if _expired(r, previous, retention):
        return "expired"
    if r.key.group in deleted:
        return "group_deleted"
    return "admin_offset_delete" if _who(r) is False else "deleted"


def _who(r: Removal) -> bool | None:
    """:func:`consuming` for the removal's group. A group the state never showed at all (no poll listed
    it, no record of the live tail described it) has no members: a group with members writes them to
    ``__consumer_offsets`` (classic GroupMetadata, KIP-848 member records), so only commits without a
    member made these offsets (an admin tool, a standalone ``assign()`` consumer), and the coordinator
    allows OffsetDelete of them at any time (the soak's tool-committed group paged critical). A group known
    only from a poll taken after the tombstone (``Removal.unknown``) is not known then: None."""
    if r.group is None and r.source == "tombstone" and r.tail_live and not r.unknown:
        return False
    return consuming(r.group, r.key.topic)


def _loss(r: Removal, cause: str) -> PendingLoss:
    topics = r.group.topics if r.group is not None else None
    return PendingLoss(r.key, r.old, r.at, r.group_state, r.source, cause, topics)


class _TopicCheck:
    """Whether a loss's topic still exists, from this cycle's metadata and log ranges (None: not known
    yet). The topic id known before the loss is compared with this cycle's: under another id the topic of
    the offsets is gone (deleted, and re-created by a consumer's auto-create before the metadata poll).
    Where an id was known, only metadata can confirm the topic: a log range says only that a partition of
    that name answered, and a broker that had not yet applied the deletion still answers with the old
    log's range (matrix: an aiokafka consumer's topic deleted, the old leader's range after the
    tombstones confirmed it and paged). A commit older than the partition's topic seen gone (deleted, or
    listed under another id: :mod:`alerts.recreation`) is the old topic's, whatever the id listed now: a
    topic re-created before the deletion's tombstones arrive is listed under its new id already, and
    never without it (matrix at 10 workers: a Java consumer's auto-create, faster than the metadata poll,
    paged). Without ids a log range that did not go back confirms it (one that went back may be a new
    topic, and waits for metadata, :mod:`alerts.topic_change`)."""

    def __init__(self, v: View) -> None:
        inputs = v.inputs
        meta = inputs.metadata
        ok = meta is not None and not meta.failures
        self.ids = {t.name: t.topic_id for t in meta.topics} if meta is not None else {}
        self.names = set(self.ids) if ok else None
        self.names_at = meta.observed_at if meta is not None else 0.0
        self.ranged_at = inputs.offsets.observed_at if inputs.offsets is not None else 0.0
        self.ranged = v.ranged  # the partitions with a log range this cycle
        self._before = v.previous.partitions
        self._gone = v.recreated

    def exists(self, loss: PendingLoss) -> bool | None:
        key = PartitionKey(loss.key.topic, loss.key.partition)
        gone = self._gone.get(key)
        if gone is not None and loss.old.at < gone.gone_at:
            return False  # committed on a topic seen gone since (deleted, or listed under a new id)
        before = self._before.get(key)
        if self.names_at >= loss.at and loss.key.topic in self.ids:  # seen after the offset vanished
            now_id = self.ids[loss.key.topic]
            if before is not None and before.topic_id is not None and now_id is not None:
                return before.topic_id == now_id
        if self.names is not None:
            if loss.key.topic not in self.names:
                return False
            if self.names_at >= loss.at:
                return True
        if before is not None and before.topic_id is not None:
            return None  # only metadata can tell this topic from a re-created one of the same name
        cur = self.ranged.get(key) if self.ranged_at >= loss.at else None
        if cur is None:
            return None
        if before is None or before.log_end is None or cur.log_end is None:
            return True
        return True if cur.log_end >= before.log_end else None


def _while_consuming(r: Removal, thresholds: Thresholds) -> bool:
    """A member consumes the topic; or, members unknown, the group has some or committed recently."""
    who = _who(r)
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


def _partition_finding(cluster: str, loss: PendingLoss) -> Finding:
    g, t, p = loss.key
    return Finding(
        kind=OFFSETS_LOST,
        severity="critical",
        cluster=cluster,
        group=g,
        topic=t,
        partition=p,
        summary=f"committed offset {loss.old.offset} of group {g} on {t}[{p}] vanished while the group was "
        f"consuming ({loss.group_state or 'state unknown'}); it will restart from auto.offset.reset",
        cause=WHILE_CONSUMING,
        magnitude={"offsets_lost": 1, "offset": loss.old.offset},
        evidence={
            "offset": loss.old.offset,
            "leader_epoch": loss.old.leader_epoch,
            "committed_at": loss.old.at,
            "removed_at": loss.at,
            "group_state": loss.group_state,
            "members_topics": loss.members_topics,
            "source": loss.source,
        },
    )


def _group_finding(cluster: str, group: str, lost: list[PendingLoss], retention: float) -> Finding:
    counts = Counter(loss.cause for loss in lost)
    causes = sorted(counts)
    severity = max((SEVERITY[c] for c in causes), key=RANK.__getitem__)
    if len(causes) == 1:
        cause, why = causes[0], PHRASE[causes[0]]
    else:
        cause, why = "mixed", "; ".join(f"{counts[c]} {PHRASE[c]}" for c in causes)
    topics = sorted({loss.key.topic for loss in lost})
    last = max(lost, key=lambda loss: loss.at)
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
            "offsets": tuple(f"{x.key.topic}[{x.key.partition}]={x.old.offset}" for x in lost),
            "causes": tuple(f"{c}={counts[c]}" for c in causes),
            "last_commit_at": max(x.old.at for x in lost),
            "removed_at": last.at,
            "group_state": last.group_state,
            "members_topics": last.members_topics,
            "retention_seconds": retention,
        },
    )
